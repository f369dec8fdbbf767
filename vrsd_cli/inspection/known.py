"""Corpora whose answer is known, to check the report against (its tests and
``benchmarks/inspect_corpora.py``): which passages restate which is labelled.

* ``demo``: the built-in folder of ``vrsd demo``, each chunk labelled with the facts it
  states (a copy, an overlapping chunk, a quoted sentence: its facts are in another
  passage's). Crowded by construction. Source: the chunk's file. Questions: its own.
* ``paraphrases``: the paraphrase corpus (``vrsd_cli/data/demo_corpus.txt``); ids that
  differ only in their last letter state one fact (``coffee-02a``, ``coffee-02b``),
  which the words cannot see. Source: the fact.
* HotpotQA ``plain``: every paragraph of the vendored questions once. Clean: no two
  passages restate each other by the labels. Source: the article's title.
* HotpotQA ``redundant``: the same plus, per paragraph, an overlapping chunk of it (its
  first sentence dropped). Crowded: a paragraph and its chunk restate each other.
* HotpotQA ``chunked``: every paragraph split into overlapping chunks, each headed by
  its title (the evidence protocol's). Its chunks share their article as source.

The evaluation data comes through ``_eval`` (one module to change when it moves).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from vrsd_kit.inspection import Inspection

from ._eval import evidence_corpora


@dataclass(frozen=True)
class KnownCorpus:
    """Passages with what each states, and questions to ask.

    Attributes:
        ids, texts, sources: the passages (``sources[i]`` a metadata ``source``).
        states: for each id, the facts it states: a passage whose facts another's hold
            restates it.
        questions: questions to ask (the demo's ordinary ones; HotpotQA's own).
    """

    name: str
    ids: list[str]
    texts: list[str]
    sources: list[str]
    states: dict[str, frozenset[str]]
    questions: list[str]

    def restates(self, a: str | None, b: str | None) -> bool:
        """Passage ``a`` states nothing that ``b`` does not (ids), by the labels."""
        return a is not None and b is not None and self.states[a] <= self.states[b]

    def langchain_store(self, embeddings: Any, kind: str = "memory") -> Any:
        """The passages in a LangChain store (ids kept, metadata ``source``), embedded
        with ``embeddings``: ``"memory"``, an ``InMemoryVectorStore``; ``"faiss"``, FAISS
        with an exact inner-product index over unit vectors (cosine; much faster to
        search than the in-memory store past a few thousand passages)."""
        metadatas = [{"source": s} for s in self.sources]
        if kind == "faiss":
            from langchain_community.vectorstores import FAISS
            from langchain_community.vectorstores.utils import DistanceStrategy

            pairs = list(zip(self.texts, embeddings.embed_documents(self.texts), strict=True))
            with warnings.catch_warnings():  # "Normalizing L2 is not applicable": it is
                warnings.filterwarnings("ignore", message="Normalizing L2")
                return FAISS.from_embeddings(
                    pairs, embeddings, metadatas=metadatas, ids=self.ids, normalize_L2=True,
                    distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT)
        from langchain_core.vectorstores import InMemoryVectorStore

        store = InMemoryVectorStore(embeddings)
        store.add_texts(self.texts, ids=self.ids, metadatas=metadatas)
        return store


def demo_corpus() -> KnownCorpus:
    """The demo's built-in folder: its chunks labelled with their facts, their files as
    sources, its own questions."""
    from ..demo import load_folder, load_questions

    passages = load_folder()
    return KnownCorpus("demo", [p.id for p in passages], [p.text for p in passages],
                       [p.source or p.id for p in passages],
                       {p.id: p.states for p in passages},
                       [q.text for q in load_questions()])


def paraphrase_corpus() -> KnownCorpus:
    """The paraphrase corpus's 67 passages, labelled by their ids (a fact's paraphrases
    share their source), with its ordinary questions."""
    from ..demo import ORDINARY_QUESTIONS, fact_of, load_corpus

    passages = load_corpus()
    ids = [p.id for p in passages]
    return KnownCorpus("paraphrases", ids, [p.text for p in passages],
                       [fact_of(i) for i in ids], {i: frozenset({fact_of(i)}) for i in ids},
                       list(ORDINARY_QUESTIONS))


def hotpotqa_corpora(limit: int | None = None) -> tuple[KnownCorpus, ...]:
    """HotpotQA's plain, redundant and chunked corpora of the first ``limit`` questions
    (None: all 500), a passage's id its paragraph's (``p12``; then ``p12-chunk``,
    ``p12-chunk2`` ...), its source its title line."""
    out = []
    for corpus in evidence_corpora(limit):
        seen: dict[int, int] = {}
        ids = []
        for owner in corpus.passage_of:
            n = seen.get(owner, 0)
            ids.append(f"p{owner}" + ("" if n == 0 else "-chunk" if n == 1 else f"-chunk{n}"))
            seen[owner] = n + 1
        out.append(KnownCorpus(
            corpus.name, ids, list(corpus.texts), [t.split("\n", 1)[0] for t in corpus.texts],
            {i: frozenset({str(owner)}) for i, owner in zip(ids, corpus.passage_of,
                                                             strict=True)},
            list(corpus.questions)))
    return tuple(out)


@dataclass(frozen=True)
class Agreement:
    """How the report's held-back passages agree with a corpus's labels.

    Attributes:
        held_back: held-back slots the report says restate a kept passage, over all
            questions.
        restating: of those, how many the labels say restate the kept passage the
            report names.
        labelled: top-k slots whose passage restates a higher-ranked top-k passage by the
            labels (the crowding the labels see).
        caught: of those, how many the default holds back.
    """

    held_back: int
    restating: int
    labelled: int
    caught: int
    slots: int

    @property
    def precision(self) -> float:
        """The share of "restates" the labels confirm."""
        return self.restating / self.held_back if self.held_back else 1.0

    @property
    def recall(self) -> float:
        """The share of labelled restatements in top-k that the default holds back."""
        return self.caught / self.labelled if self.labelled else 1.0

    @property
    def labelled_rate(self) -> float:
        """Labelled restatements / top-k slots: the crowding rate the labels give."""
        return self.labelled / self.slots if self.slots else 0.0


def agreement(found: Inspection, corpus: KnownCorpus) -> Agreement:
    """The report's held-back passages against ``corpus``'s labels."""
    held = restating = labelled = caught = 0
    for q in found.questions:
        top = [r.passage.id for r in q.top_k]
        repeats = {rank for rank, pid in enumerate(top, 1)
                   if any(corpus.restates(pid, above) for above in top[:rank - 1])}
        held_ranks = {h.rank for h in q.held_back}
        for h in q.held_back:
            if h.relation != "restates":
                continue
            gone, kept = q.pair(h)
            held += 1
            restating += corpus.restates(gone.passage.id, kept.passage.id)
        labelled += len(repeats)
        caught += len(repeats & held_ranks)
    return Agreement(held, restating, labelled, caught, found.slots)
