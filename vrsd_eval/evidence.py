"""``vrsd eval --protocol evidence``: does the top-k hold the passages the answer needs?

The paper's Sim. is VRSD's own objective; this protocol measures what a RAG
user needs instead. HotpotQA multi-hop questions each need two gold passages
from two different articles (``data/datasets/hotpotqa_dev500``).

* Corpus **plain**: every paragraph of every question pooled into one corpus
  (``title + "\\n" + paragraph_text``, de-duplicated on (title, text)).
* Corpus **redundant**: the plain corpus plus, for every paragraph, an
  overlapping chunk of it: the same text with its first sentence dropped
  (sentences are separated by two spaces in the data; a one-sentence paragraph's
  chunk is the paragraph again). Real corpora repeat themselves like this; a
  gold passage counts as found when either copy is returned.
* Corpus **chunked**: every paragraph split as users split documents:
  LangChain's ``RecursiveCharacterTextSplitter`` (250 characters, 50 overlap) over
  the paragraph text, each chunk headed by its title line (as a loader keeps a
  document's title with its chunks). A gold passage counts as found when any of
  its chunks is returned.
* For each question, ``fetch_k`` candidates are over-fetched by cosine from a
  LangChain FAISS store; every row selects ``k`` of them.
* Evidence recall@k: the share of the question's gold passages among the k;
  all-evidence rate@k: the share of questions with every gold passage among them.

Rows: the project's methods, each a ``VRSDRetriever`` (the real adapter path),
and the peers a user would pick instead, computed on the *same* candidates
(the store's top ``fetch_k`` with their stored vectors): LangChain's
``EmbeddingsRedundantFilter`` at its default threshold over the ranked list,
LangChain's ``maximal_marginal_relevance`` at lambda 0.5/0.7/0.9, and
pyversity's strategies at their defaults (relevance = cosine to the query).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, methods_where, metrics

from .datasets import default_data_dir, read_jsonl
from .methods import MethodSpec, parse_method
from .report import DEFAULT_STYLE, markdown_table, plot_panels, results_json, write_outputs

DATASET = "hotpotqa_dev500"
EVIDENCE_KS = (2, 4, 6, 10, 20)
EVIDENCE_FETCH_K = 50
VARIANTS = ("plain", "redundant", "chunked")
# The chunked corpus: LangChain's RecursiveCharacterTextSplitter over each paragraph's
# text at a size that gives 2 to 4 chunks to most paragraphs (median 3; 72% in 2..4,
# 15% are short enough for one), with 20% overlap, as users chunk documents.
CHUNK_SIZE = 250
CHUNK_OVERLAP = 50
PEER_MMR_LAMBDAS = (0.5, 0.7, 0.9)
PYVERSITY_STRATEGIES = ("mmr", "msd", "cover", "dpp", "ssd")
# Methods shown in more than one setting (method tokens, see methods.parse_method).
ROW_SETTINGS = {
    "vrsd": ("vrsd", "vrsd:refine=swap"),
    "mmr": tuple(f"mmr:lambda_mult={lam}" for lam in PEER_MMR_LAMBDAS),
}
# The project's rows: "default" is VRSDRetriever() with no method given (the
# recommendation users get), then every registered method in table order but the
# default itself and the exhaustive ones (they refuse realistic candidate counts).
DEFAULT_ROWS = ("default", *(
    token
    for name in methods_where(exhaustive=False) if name != DEFAULT_METHOD
    for token in ROW_SETTINGS.get(name, (name,))
))
SENTENCE_SEP = "  "


@dataclass(frozen=True)
class EvidenceCorpus:
    """One corpus variant with its questions and gold passages.

    Attributes:
        texts: the indexed texts.
        passage_of: for each text, the paragraph it comes from (a chunk and its
            paragraph share one id): evidence is counted in paragraphs.
        questions: the queries.
        gold: for each question, the ids of its gold paragraphs.
    """

    name: str
    texts: list[str]
    passage_of: list[int]
    questions: list[str]
    gold: list[tuple[int, ...]]


def drop_first_sentence(paragraph: str) -> str:
    """The paragraph without its first sentence; a one-sentence paragraph as it is
    (its overlapping chunk is a copy of it)."""
    head, sep, rest = paragraph.partition(SENTENCE_SEP)
    rest = rest.strip()
    return rest if sep and rest else paragraph


def load_evidence_corpora(
    data_dir: str | Path | None = None, limit: int | None = None
) -> list[EvidenceCorpus]:
    """The plain, redundant and chunked corpora of the first ``limit`` questions
    (None: all 500); only those questions' paragraphs are pooled."""
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    path = base / DATASET / "dev_subsampled.jsonl"
    records = list(read_jsonl(path))[:limit]
    if not records:
        raise ValueError(f"data_dir: no questions in {path}")
    key_to_id: dict[tuple[str, str], int] = {}
    paragraphs: list[tuple[str, str]] = []
    questions, gold = [], []
    for rec in records:
        ids = []
        for ctx in rec["contexts"]:
            key = (ctx["title"], ctx["paragraph_text"])
            if key not in key_to_id:
                key_to_id[key] = len(paragraphs)
                paragraphs.append(key)
            if ctx["is_supporting"]:
                ids.append(key_to_id[key])
        questions.append(rec["question_text"])
        gold.append(tuple(dict.fromkeys(ids)))
    plain_texts = [f"{title}\n{text}" for title, text in paragraphs]
    plain = EvidenceCorpus("plain", plain_texts, list(range(len(paragraphs))), questions, gold)
    texts, owner = list(plain_texts), list(range(len(paragraphs)))
    for pid, (title, text) in enumerate(paragraphs):
        texts.append(f"{title}\n{drop_first_sentence(text)}")
        owner.append(pid)
    redundant = EvidenceCorpus("redundant", texts, owner, questions, gold)
    return [plain, redundant, chunk_corpus(paragraphs, questions, gold)]


def chunk_corpus(paragraphs: Sequence[tuple[str, str]], questions: list[str],
                 gold: list[tuple[int, ...]]) -> EvidenceCorpus:
    """The chunked corpus: each (title, text) paragraph split with overlap, every chunk
    as ``title + "\n" + chunk``, owned by its paragraph."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    texts, owner = [], []
    for pid, (title, text) in enumerate(paragraphs):
        for chunk in splitter.split_text(text):
            texts.append(f"{title}\n{chunk}")
            owner.append(pid)
    return EvidenceCorpus("chunked", texts, owner, questions, gold)


def load_user_corpus(corpus_path: str | Path, questions_path: str | Path) -> EvidenceCorpus:
    """Your own corpus and labelled questions, for ``--corpus`` and ``--questions``.

    ``corpus_path``: JSON lines ``{"id": ..., "text": ..., "doc": ...}``, one per
    indexed text; ``doc`` (optional) names the document a chunk belongs to, and
    evidence is counted in documents when it is given (as the chunked corpus counts
    paragraphs). ``questions_path``: JSON lines ``{"question": ..., "gold": [...]}``,
    ``gold`` the ids (or docs) that hold the answer's evidence.

    Raises:
        ValueError: naming ``--corpus`` or ``--questions`` and the line at fault.
    """
    texts: list[str] = []
    owner_key: list[str] = []
    keys: dict[str, int] = {}  # doc (or id) -> evidence unit
    ids: dict[str, str] = {}  # id -> its doc (or itself)
    for line_no, rec in _json_lines(corpus_path, "--corpus"):
        if not isinstance(rec.get("text"), str) or not rec["text"].strip() or "id" not in rec:
            raise ValueError(f"--corpus: line {line_no}: needs \"id\" and a non-empty \"text\"")
        key = str(rec.get("doc", rec["id"]))
        keys.setdefault(key, len(keys))
        ids[str(rec["id"])] = key
        texts.append(rec["text"])
        owner_key.append(key)
    if not texts:
        raise ValueError(f"--corpus: no passages in {corpus_path}")
    questions: list[str] = []
    gold: list[tuple[int, ...]] = []
    for line_no, rec in _json_lines(questions_path, "--questions"):
        q, g = rec.get("question"), rec.get("gold")
        if not isinstance(q, str) or not q.strip() or not isinstance(g, list) or not g:
            raise ValueError(f"--questions: line {line_no}: needs a \"question\" and a "
                             "non-empty \"gold\" list")
        unknown = [x for x in g if str(x) not in keys and str(x) not in ids]
        if unknown:
            raise ValueError(f"--questions: line {line_no}: gold {unknown[0]!r} is not an id "
                             "or doc of --corpus")
        questions.append(q)
        gold.append(tuple(dict.fromkeys(keys[ids.get(str(x), str(x))] for x in g)))
    if not questions:
        raise ValueError(f"--questions: no questions in {questions_path}")
    owner = [keys[key] for key in owner_key]
    return EvidenceCorpus(Path(corpus_path).stem, texts, owner, questions, gold)


def _json_lines(path: str | Path, flag: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"{flag}: cannot read {path}: {exc.strerror or exc}") from None
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{flag}: line {i}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise ValueError(f"{flag}: line {i}: expected a JSON object")
        out.append((i, rec))
    return out


# --- peers: functions (query vector, candidate vectors, k) -> picked positions ------------


def _langchain_redundant_filter(q: np.ndarray, cands: np.ndarray, k: int) -> list[int]:
    """LangChain's ``EmbeddingsRedundantFilter`` (default threshold) over the ranked list,
    then the first k survivors."""
    from langchain_community.document_transformers import EmbeddingsRedundantFilter
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings

    vectors = cands.tolist()

    class _Known(Embeddings):  # the candidates' stored vectors, looked up by text
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [vectors[int(t)] for t in texts]

        def embed_query(self, text: str) -> list[float]:  # pragma: no cover - unused
            raise NotImplementedError

    docs = [Document(page_content=str(i)) for i in range(len(vectors))]
    kept = EmbeddingsRedundantFilter(embeddings=_Known()).transform_documents(docs)
    return [int(d.page_content) for d in kept][:k]


def _langchain_mmr(lambda_mult: float) -> Callable[[np.ndarray, np.ndarray, int], list[int]]:
    def pick(q: np.ndarray, cands: np.ndarray, k: int) -> list[int]:
        from langchain_core.vectorstores.utils import maximal_marginal_relevance

        return list(maximal_marginal_relevance(q, cands.tolist(), lambda_mult=lambda_mult, k=k))

    return pick


def _pyversity(strategy: str) -> Callable[[np.ndarray, np.ndarray, int], list[int]]:
    def pick(q: np.ndarray, cands: np.ndarray, k: int) -> list[int]:
        from pyversity import diversify

        unit = cands / np.linalg.norm(cands, axis=1, keepdims=True)
        scores = unit @ (q / np.linalg.norm(q))
        return diversify(unit, scores, k, strategy=strategy).indices.tolist()

    return pick


def peer_rows() -> dict[str, Callable[[np.ndarray, np.ndarray, int], list[int]]]:
    """label -> picker, for every peer (LangChain and pyversity must be installed)."""
    rows: dict[str, Callable[[np.ndarray, np.ndarray, int], list[int]]] = {
        "langchain redundant filter (0.95)": _langchain_redundant_filter,
    }
    for lam in PEER_MMR_LAMBDAS:
        rows[f"langchain mmr({lam})"] = _langchain_mmr(lam)
    for strategy in PYVERSITY_STRATEGIES:
        rows[f"pyversity {strategy}"] = _pyversity(strategy)
    return rows


# --- the run -------------------------------------------------------------------------------


@dataclass
class EvidenceResult:
    """Per-question found-gold counts of every row at every k, for one corpus variant."""

    variant: str
    n_questions: int
    n_corpus: int
    fetch_k: int
    model: str
    ks: list[int]
    labels: list[str]
    peers: list[str]
    recall: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    complete: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    seconds: float = 0.0

    def cell(self, k: int, label: str) -> tuple[float, float]:
        """(evidence recall, all-evidence rate) of ``label`` at ``k``."""
        return float(self.recall[k][label].mean()), float(self.complete[k][label].mean())

    def mean_all_evidence(self, label: str) -> float:
        return float(np.mean([self.cell(k, label)[1] for k in self.ks]))


def evaluate_evidence(
    corpus: EvidenceCorpus,
    embeddings: Any,
    specs: Sequence[MethodSpec],
    ks: Sequence[int] = EVIDENCE_KS,
    fetch_k: int = EVIDENCE_FETCH_K,
    *,
    peers: bool = True,
    model: str = "",
    progress: bool = True,
) -> EvidenceResult:
    """Every spec (a ``VRSDRetriever`` each) and every peer at every k, for every question.

    ``specs`` with label ``"default"`` run ``VRSDRetriever`` without a method (its default).
    """
    from tqdm.auto import tqdm

    from vrsd_core.contract import check_query_vector
    from vrsd_langchain import EmbeddingCache, VRSDRetriever, fetch_candidates

    from .store import build_store

    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise ValueError(f"k: every k must be >= 1, got {ks}")
    if fetch_k < max(ks):
        raise ValueError(f"fetch_k: {fetch_k} is smaller than the largest k ({max(ks)})")
    start = time.perf_counter()
    vectors: list[list[float]] = []
    batch = 512
    with tqdm(total=len(corpus.texts), desc=f"evidence/{corpus.name}: corpus embeddings",
              disable=not progress, unit="text") as bar:
        for i in range(0, len(corpus.texts), batch):
            vectors += embeddings.embed_documents(corpus.texts[i : i + batch])
            bar.update(len(corpus.texts[i : i + batch]))
    store = build_store("faiss", corpus.texts, vectors, embeddings)
    owner = np.asarray(corpus.passage_of)
    retrievers = {
        s.label: VRSDRetriever(vectorstore=store, k=max(ks), fetch_k=fetch_k)
        if s.label == "default" else
        VRSDRetriever(vectorstore=store, k=max(ks), fetch_k=fetch_k, method=s.method,
                      method_kwargs=dict(s.options))
        for s in specs
    }
    pickers = peer_rows() if peers else {}
    labels = list(retrievers) + list(pickers)
    nq = len(corpus.questions)
    recall = {k: {lab: np.zeros(nq) for lab in labels} for k in ks}
    complete = {k: {lab: np.zeros(nq, dtype=bool) for lab in labels} for k in ks}
    cache = None
    for qi, question in enumerate(tqdm(corpus.questions, desc=f"evidence/{corpus.name}",
                                       disable=not progress, unit="question")):
        gold = set(corpus.gold[qi])

        def score(k: int, label: str, rows: Sequence[int], gold: set[int] = gold,
                  qi: int = qi) -> None:
            found = {int(owner[r]) for r in rows} & gold
            recall[k][label][qi] = metrics.evidence_recall(found, gold)
            complete[k][label][qi] = metrics.all_evidence(found, gold)

        for label, retriever in retrievers.items():
            for k in ks:
                docs = retriever.invoke(question, k=k)
                score(k, label, [int(d.metadata["row"]) for d in docs])
        if pickers:
            cache = cache or EmbeddingCache()
            qvec = check_query_vector(embeddings.embed_query(question))
            cands = fetch_candidates(store, question, qvec, fetch_k, {}, embeddings, cache)
            rows = [int(d.metadata["row"]) for d in cands.documents]
            cvecs = np.asarray(cands.vectors, dtype=np.float64)
            for label, pick in pickers.items():
                for k in ks:
                    score(k, label, [rows[i] for i in pick(qvec, cvecs, k)])
    return EvidenceResult(
        variant=corpus.name, n_questions=nq, n_corpus=len(corpus.texts), fetch_k=fetch_k,
        model=model, ks=ks, labels=labels, peers=list(pickers), recall=recall,
        complete=complete, seconds=time.perf_counter() - start,
    )


def evidence_specs(tokens: Sequence[str] | None = None) -> list[MethodSpec]:
    """The project's rows: ``tokens`` (method tokens) or ``DEFAULT_ROWS``; the token
    ``default`` is the retriever's default configuration."""
    specs: list[MethodSpec] = []
    for token in tokens or DEFAULT_ROWS:
        if token == "default":
            specs.append(MethodSpec("default", "", {}))
            continue
        for spec in parse_method(token, expand_mmr=False):
            if spec.label not in {s.label for s in specs}:
                specs.append(spec)
    return specs


def format_evidence_table(res: EvidenceResult) -> str:
    """One markdown table: a row per method, a column per k (recall / all-evidence),
    and the mean all-evidence rate over the k."""
    return markdown_table(
        f"**{res.variant}** corpus ({res.n_corpus} texts, {res.n_questions} questions, "
        f"fetch_k {res.fetch_k}, {res.model}); cells: evidence recall / all-evidence rate",
        [f"k={k}" for k in res.ks], res.labels,
        lambda label, i: "{:.3f} / {:.3f}".format(*res.cell(res.ks[i], label)),
        res.mean_all_evidence)


def format_evidence_report(results: Sequence[EvidenceResult]) -> str:
    """Every variant's table, plus how ``default`` compares with plain top-k."""
    parts = [format_evidence_table(r) for r in results]
    labels = results[0].labels if results else []
    if "default" in labels and "similarity" in labels:
        worst = min(
            (res.cell(k, "default")[0] - res.cell(k, "similarity")[0], res.variant, k)
            for res in results for k in res.ks
        )
        means = {
            lab: float(np.mean([r.mean_all_evidence(lab) for r in results])) for lab in labels
        }
        best = max(means, key=lambda lab: means[lab])
        parts.append(
            f"default against top-k (similarity): lowest recall difference {worst[0]:+.3f} "
            f"({worst[1]}, k={worst[2]}); mean all-evidence over all cells: default "
            f"{means['default']:.3f}, similarity {means['similarity']:.3f}; highest: "
            f"{best} {means[best]:.3f}."
        )
    return "\n\n".join(parts) + "\n"


def plot_evidence(results: Sequence[EvidenceResult], path: str | Path) -> Path:
    """PNG: evidence recall against k, one panel per variant, one line per row."""
    return plot_panels(
        results, path, xs=lambda res: res.ks, y=lambda res, k, label: res.cell(k, label)[0],
        xlabel="k (passages handed to the LLM)", ylabel="evidence recall",
        emphasis={"default": DEFAULT_STYLE,
                  "similarity": dict(color="tab:red", lw=1.8, zorder=2)})


def evidence_json(results: Sequence[EvidenceResult]) -> dict[str, Any]:
    return results_json(results, "k", lambda res: res.ks, ("recall", "all_evidence"))


def write_evidence_outputs(results: Sequence[EvidenceResult], out_dir: str | Path
                           ) -> dict[str, Path]:
    """``evidence.md``, ``evidence.json`` and ``evidence.png`` in ``out_dir``."""
    return write_outputs(out_dir, "evidence", format_evidence_report(results),
                         evidence_json(results), lambda path: plot_evidence(results, path))
