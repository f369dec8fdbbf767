"""``vrsd eval --protocol evidence --budget B1,B2,...``: evidence at equal token budgets.

An LLM's context is measured in tokens, not passages. This protocol hands every
row the same token budget instead of the same k and asks the evidence
protocol's question (``evidence``): how many of a HotpotQA question's gold
paragraphs reach the LLM.

* Corpora, questions, gold paragraphs and the store: as ``evidence`` (plain,
  redundant, and any further variant ``load_evidence_corpora`` returns).
* Tokens: each text's count by ``token_counter`` (default: the adapters' default,
  ``vrsd_core.tokens.approx_token_count``). Default budgets: 2, 4 and 8 typical
  passages (the plain corpus' median count times 2, 4, 8).
* Rows, all on the store's top ``fetch_k`` candidates, all at the same budget:
  - every method, each a ``VRSDRetriever(max_tokens=B, k=fetch_k)`` (the real
    adapter path; the budget, not k, binds): picks that do not fit are skipped
    for the next best that fits;
  - ``similarity`` is the ranked list *filled* while items fit;
  - ``ranked list cut``: the ranked list with passages dropped from the tail
    until it fits (what a context-window limit applied after retrieval does);
  - Haystack's ``LostInTheMiddleRanker(word_count_threshold=...)`` on the ranked
    list, the threshold being the budget in words at the corpus' words per token
    (it keeps the passage that crosses the threshold, so it may run over: its
    tokens column says by how much);
  - the evidence protocol's peers (LangChain's redundant filter and MMR,
    pyversity) ranking all ``fetch_k`` candidates, cut at the budget from the tail.
* Cells: evidence recall / all-evidence rate, and the mean tokens used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import metrics
from vrsd_core.tokens import TokenCounter, approx_token_count, count_tokens

from .evidence import EvidenceCorpus, peer_rows
from .methods import MethodSpec
from .report import DEFAULT_STYLE, markdown_table, plot_panels, results_json, write_outputs

BUDGET_PASSAGES = (2, 4, 8)
BUDGET_FETCH_K = 50
RANKED_FILLED = "similarity"  # the similarity row under a budget: the ranked list, filled
RANKED_CUT = "ranked list cut"
LOST_IN_THE_MIDDLE = "haystack lost-in-the-middle"


def passage_budgets(corpus: EvidenceCorpus, counter: TokenCounter = approx_token_count,
                    passages: Sequence[int] = BUDGET_PASSAGES) -> list[int]:
    """Budgets of ``passages`` typical passages: the corpus' median token count times each."""
    median = float(np.median(count_tokens(counter, corpus.texts)))
    return [int(round(m * median)) for m in passages]


def cut_at_budget(order: Sequence[int], counts: Sequence[int] | np.ndarray, budget: int
                  ) -> list[int]:
    """The longest prefix of ``order`` whose ``counts`` fit ``budget`` (drop from the tail)."""
    spent = np.cumsum([counts[i] for i in order])
    return list(order[: int(np.searchsorted(spent, budget, side="right"))])


def _retriever(cls: Any, store: Any, spec: MethodSpec, fetch_k: int,
               counter: TokenCounter) -> Any:
    """A ``VRSDRetriever`` for ``spec`` whose budget, not k, binds; ``default`` leaves the
    method unset (the recommendation users get)."""
    method: dict[str, Any] = {} if spec.label == "default" else {
        "method": spec.method, "method_kwargs": dict(spec.options)}
    return cls(vectorstore=store, k=fetch_k, fetch_k=fetch_k, token_counter=counter, **method)


def _lost_in_the_middle() -> Callable[[list[str], int], list[int]] | None:
    """Haystack's ranker as (ranked texts, word threshold) -> kept positions, or None
    when haystack-ai is not installed."""
    try:
        from haystack import Document
        from haystack.components.rankers import LostInTheMiddleRanker
    except ImportError:
        return None

    def keep(texts: list[str], words: int) -> list[int]:
        docs = [Document(id=str(i), content=t) for i, t in enumerate(texts)]
        out = LostInTheMiddleRanker(word_count_threshold=max(1, words)).run(documents=docs)
        return [int(d.id) for d in out["documents"]]

    return keep


@dataclass
class BudgetResult:
    """Per-question evidence and tokens of every row at every budget, for one corpus."""

    variant: str
    n_questions: int
    n_corpus: int
    fetch_k: int
    model: str
    budgets: list[int]
    labels: list[str]
    peers: list[str]
    recall: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    complete: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    tokens: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    seconds: float = 0.0

    def cell(self, budget: int, label: str) -> tuple[float, float, float]:
        """(evidence recall, all-evidence rate, mean tokens used) of ``label`` at ``budget``."""
        return (float(self.recall[budget][label].mean()),
                float(self.complete[budget][label].mean()),
                float(self.tokens[budget][label].mean()))

    def mean_all_evidence(self, label: str) -> float:
        return float(np.mean([self.cell(b, label)[1] for b in self.budgets]))


def evaluate_budgets(
    corpus: EvidenceCorpus,
    embeddings: Any,
    specs: Sequence[MethodSpec],
    budgets: Sequence[int],
    fetch_k: int = BUDGET_FETCH_K,
    *,
    counter: TokenCounter = approx_token_count,
    peers: bool = True,
    model: str = "",
    progress: bool = True,
) -> BudgetResult:
    """Every spec (a budgeted ``VRSDRetriever`` each), the ranked-list baselines and
    the peers at every budget, for every question of ``corpus``."""
    from tqdm.auto import tqdm

    from vrsd_langchain import VRSDRetriever

    from .store import build_store

    budgets = [int(b) for b in budgets]
    if not budgets or min(budgets) < 0:
        raise ValueError(f"budget: every budget must be >= 0 tokens, got {budgets}")
    start = time.perf_counter()
    vectors = embeddings.embed_documents(corpus.texts)
    store = build_store("faiss", corpus.texts, vectors, embeddings)
    owner = np.asarray(corpus.passage_of)
    counts = count_tokens(counter, corpus.texts)
    words = np.array([len(t.split()) for t in corpus.texts])
    words_per_token = float(words.sum()) / max(1, int(counts.sum()))
    retrievers = {s.label: _retriever(VRSDRetriever, store, s, fetch_k, counter) for s in specs}
    # the store's ranked list of fetch_k candidates (similarity keeps the store's order)
    ranked = VRSDRetriever(vectorstore=store, k=fetch_k, fetch_k=fetch_k, method="similarity")
    matrix = np.asarray(vectors, dtype=np.float64)
    pickers = peer_rows() if peers else {}
    litm = _lost_in_the_middle() if peers else None
    baselines = [RANKED_CUT] + ([LOST_IN_THE_MIDDLE] if litm is not None else [])
    labels = list(retrievers) + baselines + list(pickers)
    nq = len(corpus.questions)
    recall = {b: {lab: np.zeros(nq) for lab in labels} for b in budgets}
    complete = {b: {lab: np.zeros(nq, dtype=bool) for lab in labels} for b in budgets}
    used = {b: {lab: np.zeros(nq) for lab in labels} for b in budgets}
    for qi, question in enumerate(tqdm(corpus.questions, desc=f"budget/{corpus.name}",
                                       disable=not progress, unit="question")):
        gold = set(corpus.gold[qi])

        def score(budget: int, label: str, rows: Sequence[int], gold: set[int] = gold,
                  qi: int = qi) -> None:
            found = {int(owner[r]) for r in rows} & gold
            recall[budget][label][qi] = metrics.evidence_recall(found, gold)
            complete[budget][label][qi] = metrics.all_evidence(found, gold)
            used[budget][label][qi] = float(counts[list(rows)].sum()) if len(rows) else 0.0

        for label, retriever in retrievers.items():
            for b in budgets:
                docs = retriever.invoke(question, max_tokens=b)
                score(b, label, [int(d.metadata["row"]) for d in docs])
        rows = [int(d.metadata["row"]) for d in ranked.invoke(question)]
        for b in budgets:
            score(b, RANKED_CUT, cut_at_budget(rows, counts, b))
            if litm is not None:
                kept = litm([corpus.texts[r] for r in rows], int(b * words_per_token))
                score(b, LOST_IN_THE_MIDDLE, [rows[i] for i in kept])
        if pickers:
            qvec = np.asarray(embeddings.embed_query(question), dtype=np.float64)
            cvecs = matrix[rows]
            for label, pick in pickers.items():
                order = [rows[i] for i in pick(qvec, cvecs, len(rows))]
                for b in budgets:
                    score(b, label, cut_at_budget(order, counts, b))
    return BudgetResult(
        variant=corpus.name, n_questions=nq, n_corpus=len(corpus.texts), fetch_k=fetch_k,
        model=model, budgets=budgets, labels=labels,
        peers=baselines[1:] + list(pickers), recall=recall, complete=complete, tokens=used,
        seconds=time.perf_counter() - start,
    )


def format_budget_table(res: BudgetResult) -> str:
    """One markdown table: a row per method or peer, a column per budget."""
    return markdown_table(
        f"**{res.variant}** corpus ({res.n_corpus} texts, {res.n_questions} questions, "
        f"fetch_k {res.fetch_k}, {res.model}); cells: evidence recall / all-evidence rate "
        "(mean tokens used)",
        [f"{b} tokens" for b in res.budgets], res.labels,
        lambda label, i: "{:.3f} / {:.3f} ({:.0f})".format(*res.cell(res.budgets[i], label)),
        res.mean_all_evidence)


def format_budget_report(results: Sequence[BudgetResult]) -> str:
    """Every corpus' table, plus how ``default`` compares with the ranked list filled."""
    parts = [format_budget_table(r) for r in results]
    labels = results[0].labels if results else []
    if "default" in labels and RANKED_FILLED in labels:
        worst = min(
            (res.cell(b, "default")[0] - res.cell(b, RANKED_FILLED)[0], res.variant, b)
            for res in results for b in res.budgets
        )
        means = {lab: float(np.mean([r.mean_all_evidence(lab) for r in results]))
                 for lab in labels}
        parts.append(
            f"default against the ranked list filled to the budget (similarity): lowest "
            f"recall difference {worst[0]:+.3f} ({worst[1]}, {worst[2]} tokens); mean "
            f"all-evidence over all cells: default {means['default']:.3f}, filled "
            f"{means[RANKED_FILLED]:.3f}, cut {means.get(RANKED_CUT, float('nan')):.3f}."
        )
    return "\n\n".join(parts) + "\n"


def plot_budgets(results: Sequence[BudgetResult], path: str | Path) -> Path:
    """PNG: all-evidence rate against budget, one panel per corpus, one line per row."""
    return plot_panels(
        results, path, xs=lambda res: res.budgets,
        y=lambda res, b, label: res.cell(b, label)[1],
        xlabel="token budget (approx_token_count)", ylabel="all-evidence rate",
        emphasis={"default": DEFAULT_STYLE,
                  RANKED_FILLED: dict(color="tab:red", lw=1.8, zorder=2),
                  RANKED_CUT: dict(color="tab:orange", lw=1.8, zorder=2)})


def budget_json(results: Sequence[BudgetResult]) -> dict[str, Any]:
    return results_json(results, "budget", lambda res: res.budgets,
                        ("recall", "all_evidence", "tokens_used"))


def write_budget_outputs(results: Sequence[BudgetResult], out_dir: str | Path
                         ) -> dict[str, Path]:
    """``budget.md``, ``budget.json`` and ``budget.png`` in ``out_dir``."""
    return write_outputs(out_dir, "budget", format_budget_report(results),
                         budget_json(results), lambda path: plot_budgets(results, path))


def parse_budgets(text: str | None) -> list[int] | None:
    """``"228,456,912"`` -> [228, 456, 912] (token budgets); None -> None (the defaults).

    Raises:
        ValueError: naming ``budget``, for anything but integers >= 0.
    """
    if text is None:
        return None
    try:
        budgets = [int(part) for part in text.replace(" ", ",").split(",") if part]
    except ValueError:
        raise ValueError(
            f"budget: expected token budgets such as 228,456,912, got {text!r}") from None
    if not budgets or min(budgets) < 0:
        raise ValueError(f"budget: expected integers >= 0, got {text!r}")
    return budgets


def run_budget_protocol(
    corpora: Sequence[EvidenceCorpus],
    embeddings: Any,
    specs: Sequence[MethodSpec],
    budgets: Sequence[int] | None,
    fetch_k: int = BUDGET_FETCH_K,
    *,
    out: str | Path = "results",
    model: str = "",
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> list[BudgetResult]:
    """The whole protocol for the command line: every corpus at ``budgets`` (None: 2, 4
    and 8 typical passages of the first corpus), the report on stdout, the outputs
    in ``out``; progress lines go to ``log``."""
    chosen = list(budgets) if budgets is not None else passage_budgets(corpora[0])
    results = []
    for corpus in corpora:
        res = evaluate_budgets(corpus, embeddings, specs, chosen, fetch_k, model=model,
                               progress=progress)
        log(f"budget/{corpus.name}: {res.n_questions} questions x {len(chosen)} budgets x "
            f"{len(res.labels)} rows, {res.seconds:.0f} s")
        results.append(res)
    print(format_budget_report(results))
    for what, path in write_budget_outputs(results, out).items():
        log(f"wrote {what}: {path}")
    return results
