"""``vrsd eval evidence``: does the top-k hold the passages the answer needs?

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
  LangChain FAISS store, with their stored vectors (``pools``); every row selects
  ``k`` of them.
* Evidence recall@k: the share of the question's gold passages among the k;
  all-evidence rate@k: the share of questions with every gold passage among them.
* ``--half even|odd``: only the questions at even (odd) positions are scored, the
  corpus unchanged, so a constant chosen on one half is reported on the other.

Rows: the project's methods (``default`` is ``DiverseRetriever()`` as it comes), each
run by ``vrsd_core.select_batch`` on the candidates a ``DiverseRetriever`` over the same
store gets (the tests hold the two paths equal), and the peers a user would pick
instead, on the *same* candidates: LangChain's ``EmbeddingsRedundantFilter`` at its
default threshold over the ranked list, LangChain's ``maximal_marginal_relevance`` at
lambda 0.5/0.7/0.9, and pyversity's strategies at their defaults (relevance = cosine
to the query); beside them, the hybrid search a user would build instead (BM25 over the
whole corpus + the dense store, reciprocal rank fusion) and the default over it
(``hybrid``); and the query expansion a search engineer tries first: the default without
links, its lexical relevance BM25 of the question expanded by pseudo-relevance feedback
(``prf``: RM3 on the pool's top passages). Every embedding geometry of ``geometries``
gets its own tables.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, methods_where

from .datasets import default_data_dir, read_jsonl
from .hybrid import HYBRID_ROWS, HybridSearch
from .methods import MethodSpec, parse_method
from .pools import Pools, pool_reach, score, select_rows
from .prf import with_feedback
from .report import ProtocolReport, progress

DATASET = "hotpotqa_dev500"
EVIDENCE_KS = (2, 4, 6, 10, 20)
EVIDENCE_FETCH_K = 50
VARIANTS = ("plain", "redundant", "chunked")
HALVES = ("even", "odd")  # --half: by position, uncorrelated with anything in the data
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
# Rows by the words (vrsd_kit.lexical), by their --methods token: "default" is
# DiverseRetriever() as it comes (the recommendation users get: words and vectors);
# "default-vectors" the same with lexical=False; "default-nolinks" the default with the
# words but without the links between candidates; "default-nolinks-prf" that row with
# the question expanded by pseudo-relevance feedback (vrsd_eval.prf: RM3), what a search
# engineer tries first, against what the links buy; "top-k-words" ranks by the fused
# relevance, no diversity.
WORDS_ROWS = {
    "default": MethodSpec("default", "", {}, words=True),
    "default-vectors": MethodSpec("default, vectors only", "", {}),
    "default-nolinks": MethodSpec("default without links", "", {}, words=True, links=False),
    "default-nolinks-prf": MethodSpec("default without links + PRF", "", {}, words=True,
                                      links=False, feedback=True),
    "top-k-words": MethodSpec("top-k by words and vectors", "similarity", {}, words=True),
}
# The project's rows: the rows by the words, then every registered method in table order
# but the default itself and the exhaustive ones (they refuse realistic candidate counts).
DEFAULT_ROWS = (*WORDS_ROWS, *(
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


def question_half(corpus: EvidenceCorpus, half: str) -> EvidenceCorpus:
    """``corpus`` with only its questions at even (``half="even"``) or odd positions;
    the texts stay (every question's distractors are still there)."""
    if half not in HALVES:
        raise ValueError(f"half: expected one of {HALVES}, got {half!r}")
    keep = slice(HALVES.index(half), None, 2)
    return replace(corpus, questions=corpus.questions[keep], gold=corpus.gold[keep])


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


REDUNDANT_FILTER = "langchain redundant filter (0.95)"
# Peers whose first k picks do not depend on k (a greedy loop that stops at k; a filter
# then a cut): run once per question at the largest k, each k a prefix (a test holds it).
PREFIX_PEERS = frozenset({REDUNDANT_FILTER, *(f"langchain mmr({lam})" for lam in PEER_MMR_LAMBDAS)})


def peer_rows() -> dict[str, Callable[[np.ndarray, np.ndarray, int], list[int]]]:
    """label -> picker, for every peer (LangChain and pyversity must be installed); a
    warning a peer raises names it (``named_warnings``)."""
    rows: dict[str, Callable[[np.ndarray, np.ndarray, int], list[int]]] = {
        REDUNDANT_FILTER: _langchain_redundant_filter,
    }
    for lam in PEER_MMR_LAMBDAS:
        rows[f"langchain mmr({lam})"] = _langchain_mmr(lam)
    for strategy in PYVERSITY_STRATEGIES:
        rows[f"pyversity {strategy}"] = _pyversity(strategy)
    return {label: named_warnings(label, pick) for label, pick in rows.items()}


def named_warnings(label: str, pick: Callable[[np.ndarray, np.ndarray, int], list[int]]
                   ) -> Callable[[np.ndarray, np.ndarray, int], list[int]]:
    """``pick`` whose warnings say which peer raised them (``"pyversity dpp, a peer:
    overflow encountered in multiply"``), not as if the protocol's own code had."""

    def named(q: np.ndarray, cands: np.ndarray, k: int) -> list[int]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            picked = pick(q, cands, k)
        for found in caught:
            warnings.warn(f"{label}, a peer: {found.message}", found.category, stacklevel=2)
        return picked

    return named


# --- the run -------------------------------------------------------------------------------


@dataclass
class EvidenceResult:
    """Per-question evidence of every row at every column (k here; token budgets in
    ``budget.BudgetResult``), for one corpus variant and one model."""

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
    words: list[str] = field(default_factory=list)
    """The rows that read the candidates' words (the rest rank by vectors only)."""
    reach: tuple[float, float] | None = None
    """(evidence recall, all-evidence rate) of all ``fetch_k`` fetched candidates together
    (``pools.pool_reach``): the most a row that reranks them can find."""

    def cell(self, k: int, label: str) -> tuple[float, ...]:
        """(evidence recall, all-evidence rate) of ``label`` at ``k``."""
        return float(self.recall[k][label].mean()), float(self.complete[k][label].mean())

    def mean_all_evidence(self, label: str) -> float:
        return float(np.mean([self.cell(k, label)[1] for k in self.ks]))


def empty_scores(columns: Sequence[int], labels: Sequence[str], n: int
                 ) -> tuple[dict[int, dict[str, np.ndarray]], dict[int, dict[str, np.ndarray]]]:
    """Zeroed per-question (recall, all-evidence) arrays for every column and row."""
    return ({c: {lab: np.zeros(n) for lab in labels} for c in columns},
            {c: {lab: np.zeros(n, dtype=bool) for lab in labels} for c in columns})


def evaluate_evidence(
    corpus: EvidenceCorpus,
    pools: Pools,
    specs: Sequence[MethodSpec],
    ks: Sequence[int] = EVIDENCE_KS,
    *,
    peers: bool = True,
    hybrid: HybridSearch | None = None,
    model: str = "",
    show: bool = True,
) -> EvidenceResult:
    """Every spec and every peer at every k, for every question of ``corpus``, on its
    ``pools`` (``pools.build_pools``): the specs in one ``select_batch`` call per k
    (``default``: the adapters' default method), the peers question by question, with
    the hybrid search's rows (``hybrid``: the corpus' ``HybridSearch``, built here when
    not given)."""
    ks = [int(k) for k in ks]
    fetch_k = pools.rows.shape[1]
    if not ks or min(ks) < 1:
        raise ValueError(f"k: every k must be >= 1, got {ks}")
    if fetch_k < max(ks) and fetch_k < len(corpus.texts):
        raise ValueError(f"fetch_k: {fetch_k} is smaller than the largest k ({max(ks)})")
    start = time.perf_counter()
    owner = np.asarray(corpus.passage_of)
    pickers = peer_rows() if peers else {}
    hybrid = (hybrid or HybridSearch(corpus.texts, pools)) if peers else None
    hybrid_labels = list(HYBRID_ROWS) if hybrid else []  # they read the words
    peer_labels = list(pickers) + hybrid_labels
    labels = [s.label for s in specs] + peer_labels
    recall, complete = empty_scores(ks, labels, len(corpus.questions))
    fed = with_feedback(pools, corpus.questions) if any(s.feedback for s in specs) else pools
    for spec in specs:
        for k in ks:
            for qi, rows in enumerate(select_rows(fed if spec.feedback else pools, spec, k)):
                recall[k][spec.label][qi], complete[k][spec.label][qi] = score(
                    rows, owner, corpus.gold[qi])
    if pickers:
        for qi in progress(range(len(corpus.questions)), desc=f"evidence/{corpus.name}: peers",
                           unit="question", enabled=show):
            # the peers' own dtype, as they get the store's vectors from LangChain
            q, rows = pools.queries[qi], pools.rows[qi]
            cands = pools.vectors[qi].astype(np.float64)
            for label, pick in pickers.items():
                longest = pick(q, cands, max(ks)) if label in PREFIX_PEERS else None
                for k in ks:
                    picked = longest[:k] if longest is not None else pick(q, cands, k)
                    recall[k][label][qi], complete[k][label][qi] = score(
                        rows[picked], owner, corpus.gold[qi])
    if hybrid is not None:
        for qi in progress(range(len(corpus.questions)),
                           desc=f"evidence/{corpus.name}: hybrid search", unit="question",
                           enabled=show):
            for label, by_k in hybrid.rows_at_k(corpus.questions[qi], ks).items():
                for k, found in by_k.items():
                    recall[k][label][qi], complete[k][label][qi] = score(
                        found, owner, corpus.gold[qi])
    return EvidenceResult(
        variant=corpus.name, n_questions=len(corpus.questions), n_corpus=len(corpus.texts),
        fetch_k=fetch_k, model=model, ks=ks, labels=labels, peers=peer_labels,
        recall=recall, complete=complete, seconds=time.perf_counter() - start,
        words=[s.label for s in specs if s.words] + hybrid_labels,
        reach=pool_reach(pools, owner, corpus.gold),
    )


def evidence_specs(tokens: Sequence[str] | None = None) -> list[MethodSpec]:
    """The project's rows: ``tokens`` (method tokens) or ``DEFAULT_ROWS``; the token
    ``default`` is the retriever's default configuration, the other ``WORDS_ROWS``
    labels its variants."""
    specs: list[MethodSpec] = []
    for token in tokens or DEFAULT_ROWS:
        if token in WORDS_ROWS:
            specs.append(WORDS_ROWS[token])
            continue
        for spec in parse_method(token, expand_mmr=False):
            if spec.label not in {s.label for s in specs}:
                specs.append(spec)
    return specs


EVIDENCE_REPORT = ProtocolReport(
    stem="evidence", axis="k", keys=("recall", "all_evidence"), column=lambda k: f"k={k}",
    cells="evidence recall / all-evidence rate", cell_format="{:.3f} / {:.3f}",
    title="The default against top-k at fixed k", baseline="similarity", baseline_name="top-k",
    ylabel="evidence recall", y_value=0, xlabel="k (passages handed to the LLM)",
    emphasis={"similarity": dict(color="tab:red", lw=1.8, zorder=2)})
