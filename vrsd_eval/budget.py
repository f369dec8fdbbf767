"""``vrsd eval budget --budgets B1,B2,...``: evidence at equal token budgets.

An LLM's context is measured in tokens, not passages. This protocol hands every
row the same token budget instead of the same k and asks the evidence
protocol's question (``evidence``): how many of a HotpotQA question's gold
paragraphs reach the LLM.

* Corpora, questions, gold paragraphs, models and candidate pools: as ``evidence``.
* Tokens: each text's count by ``token_counter`` (default: the adapters' default,
  ``vrsd_kit.tokens.approx_token_count``). Default budgets: 2, 4 and 8 typical
  passages (the plain corpus' median count times 2, 4, 8).
* Rows, all on the store's top ``fetch_k`` candidates, all at the same budget:
  - every method, as ``DiverseRetriever(max_tokens=B, k=fetch_k)`` runs it
    (``select_batch`` with the budget and each candidate's token count; the
    budget, not k, binds): picks that do not fit are skipped for the next best
    that fits;
  - ``similarity`` is the ranked list *filled* while items fit;
  - ``ranked list cut``: the ranked list with passages dropped from the tail
    until it fits (what a context-window limit applied after retrieval does);
  - Haystack's ``LostInTheMiddleRanker(word_count_threshold=...)`` on the ranked
    list, the threshold being the budget in words at the corpus' words per token
    (it keeps the passage that crosses the threshold, so it may run over: its
    tokens column says by how much);
  - the evidence protocol's peers (LangChain's redundant filter and MMR,
    pyversity) ranking all ``fetch_k`` candidates, cut at the budget from the tail.
  - the hybrid search (``hybrid``): its fused list filled while items fit, and the
    default over it as ``DiverseCompressor(max_tokens=B)`` runs it.
* Cells: evidence recall / all-evidence rate, and the mean tokens used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from vrsd_kit.tokens import TokenCounter, approx_token_count, count_tokens

from .evidence import EvidenceCorpus, EvidenceResult, empty_scores, peer_rows
from .hybrid import DEFAULT_OVER_HYBRID, HYBRID, HYBRID_ROWS, HybridSearch
from .methods import MethodSpec
from .pools import Pools, pool_reach, score, select_rows
from .prf import with_feedback
from .report import ProtocolReport, progress

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


def fill_to_budget(order: Sequence[int], counts: Sequence[int] | np.ndarray, budget: int
                   ) -> list[int]:
    """``order`` filled while items fit ``budget``: an item that does not fit the tokens
    left is skipped for the next one that does (``similarity`` under ``max_tokens``)."""
    kept, left = [], budget
    for item in order:
        if counts[item] <= left:
            kept.append(item)
            left -= counts[item]
    return kept


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
class BudgetResult(EvidenceResult):
    """Per-question evidence and tokens used of every row at every token budget (the
    columns, ``ks``), for one corpus."""

    tokens: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)

    @property
    def budgets(self) -> list[int]:
        return self.ks

    def cell(self, budget: int, label: str) -> tuple[float, ...]:
        """(evidence recall, all-evidence rate, mean tokens used) of ``label`` at ``budget``."""
        return (*super().cell(budget, label), float(self.tokens[budget][label].mean()))


def evaluate_budgets(
    corpus: EvidenceCorpus,
    pools: Pools,
    specs: Sequence[MethodSpec],
    budgets: Sequence[int],
    *,
    counter: TokenCounter = approx_token_count,
    peers: bool = True,
    hybrid: HybridSearch | None = None,
    model: str = "",
    show: bool = True,
) -> BudgetResult:
    """Every spec (one budgeted ``select_batch`` call per budget, k = the pool size, so
    the budget binds), the ranked-list baselines and the peers at every budget, for
    every question of ``corpus``, on its ``pools`` (``hybrid``: the corpus'
    ``HybridSearch``, built here when not given)."""
    budgets = [int(b) for b in budgets]
    if not budgets or min(budgets) < 0:
        raise ValueError(f"budget: every budget must be >= 0 tokens, got {budgets}")
    start = time.perf_counter()
    owner = np.asarray(corpus.passage_of)
    counts = count_tokens(counter, corpus.texts)
    words = np.array([len(t.split()) for t in corpus.texts])
    words_per_token = float(words.sum()) / max(1, int(counts.sum()))
    fetch_k = pools.rows.shape[1]
    pickers = peer_rows() if peers else {}
    litm = _lost_in_the_middle() if peers else None
    baselines = [RANKED_CUT] + ([LOST_IN_THE_MIDDLE] if litm is not None else [])
    hybrid = (hybrid or HybridSearch(corpus.texts, pools)) if peers else None
    hybrid_labels = list(HYBRID_ROWS) if hybrid else []  # they read the words
    peer_labels = list(pickers) + hybrid_labels
    labels = [s.label for s in specs] + baselines + peer_labels
    nq = len(corpus.questions)
    recall, complete = empty_scores(budgets, labels, nq)
    used = {b: {lab: np.zeros(nq) for lab in labels} for b in budgets}

    def keep(budget: int, label: str, qi: int, rows: Sequence[int] | np.ndarray) -> None:
        recall[budget][label][qi], complete[budget][label][qi] = score(
            rows, owner, corpus.gold[qi])
        used[budget][label][qi] = float(counts[np.asarray(rows, dtype=np.int64)].sum())

    pool_counts = counts[pools.rows]
    fed = with_feedback(pools, corpus.questions) if any(s.feedback for s in specs) else pools
    for spec in specs:
        for b in budgets:
            picked = select_rows(fed if spec.feedback else pools, spec, fetch_k, max_tokens=b,
                                 token_counts=pool_counts)
            for qi, rows in enumerate(picked):
                keep(b, spec.label, qi, rows)
    # the ranked list: the pool by cosine to the question (what similarity returns)
    ranked = select_rows(pools, MethodSpec("similarity", "similarity"), fetch_k)
    for qi in progress(range(nq), desc=f"budget/{corpus.name}: baselines and peers",
                       unit="question", enabled=show):
        rows = ranked[qi].tolist()
        for b in budgets:
            keep(b, RANKED_CUT, qi, cut_at_budget(rows, counts, b))
            if litm is not None:
                kept = litm([corpus.texts[r] for r in rows], int(b * words_per_token))
                keep(b, LOST_IN_THE_MIDDLE, qi, [rows[i] for i in kept])
        if pickers:
            q, cands = pools.queries[qi], pools.vectors[qi].astype(np.float64)
            for label, pick in pickers.items():
                order = pools.rows[qi][pick(q, cands, fetch_k)].tolist()
                for b in budgets:
                    keep(b, label, qi, cut_at_budget(order, counts, b))
        if hybrid is not None:
            fused, diverse = hybrid.rows_at_budgets(corpus.questions[qi], budgets, counter)
            for b in budgets:
                keep(b, HYBRID, qi, fill_to_budget(fused, counts, b))
                keep(b, DEFAULT_OVER_HYBRID, qi, diverse[b])
    return BudgetResult(
        variant=corpus.name, n_questions=nq, n_corpus=len(corpus.texts), fetch_k=fetch_k,
        model=model, ks=budgets, labels=labels, peers=baselines[1:] + peer_labels,
        recall=recall, complete=complete, tokens=used, seconds=time.perf_counter() - start,
        words=[s.label for s in specs if s.words] + hybrid_labels,
        reach=pool_reach(pools, owner, corpus.gold),
    )


BUDGET_REPORT = ProtocolReport(
    stem="budget", axis="budget", keys=("recall", "all_evidence", "tokens_used"),
    column=lambda b: f"{b} tokens",
    cells="evidence recall / all-evidence rate (mean tokens used)",
    cell_format="{:.3f} / {:.3f} ({:.0f})",
    title="The default against the ranked list filled to the same token budget",
    baseline=RANKED_FILLED, baseline_name="filled list", ylabel="all-evidence rate", y_value=1,
    xlabel="token budget (approx_token_count)",
    emphasis={RANKED_FILLED: dict(color="tab:red", lw=1.8, zorder=2),
              RANKED_CUT: dict(color="tab:orange", lw=1.8, zorder=2)},
    not_compared=frozenset({LOST_IN_THE_MIDDLE}))  # it spends more than the budget


def parse_budgets(text: str | None) -> list[int] | None:
    """``"228,456,912"`` -> [228, 456, 912] (token budgets); None -> None (the defaults).

    Raises:
        ValueError: naming ``budgets``, for anything but integers >= 1.
    """
    if text is None:
        return None
    try:
        budgets = [int(part) for part in text.replace(" ", ",").split(",") if part]
    except ValueError:
        raise ValueError(
            f"budgets: expected token budgets such as 228,456,912, got {text!r}") from None
    if not budgets or min(budgets) < 1:
        raise ValueError(f"budgets: expected integers >= 1, got {text!r}")
    return budgets
