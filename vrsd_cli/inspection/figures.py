"""What ``inspect_store`` measures, from the candidates alone (numpy and the core only).

For one question: plain top-k (``similarity``, by cosine) and the default
(``vrsd_core.DEFAULT_METHOD``) on the same ``fetch_k`` candidates. The default's
``Selection.info["held_back"]`` lists every candidate top-k returns that the default
does not, each with the kept pick it is closest to: what it restates. That rule,
the one that holds a passage back in retrieval, is the only one counted here.

Definitions (docs/inspect.md says the same):

* a **held-back slot**: a top-k slot whose passage the default holds back;
* a **crowded question**: one with at least one held-back slot;
* the **crowding rate**: held-back slots / all top-k slots, over every question;
* **slots changed**: held-back slots per question (the default puts as many passages
  top-k did not have in their place);
* **distinct passages gained**: distinct texts in the default's list minus distinct
  texts in top-k (exact copies, whitespace aside, count once);
* **distinct sources gained**: the same for the passages' sources;
* **source concentration**: the share of a list taken by its most frequent source
  (1/k: every passage from another source; 1: one source), averaged over questions;
  only when the passages carry a source (a passage without one is its own source);
* the **verdict**: crowded when the crowding rate is at least ``CROWDED_RATE``
  (one top-k slot in five held back), else little to gain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from vrsd_core import DEFAULT_METHOD, select

CROWDED_RATE = 0.2
"""The verdict's threshold: top-k is called crowded when at least this share of its
slots are held back by the default (one slot in five)."""


@dataclass(frozen=True)
class Passage:
    """One passage of the store, as the report shows it.

    Attributes:
        id: the store's id for it (None when the store gives none).
        text: its text.
        source: the source it comes from (a metadata field), None when it has none.
        name: how the report names it, when not by its id (``vrsd index`` chunks: their
            file and position, their ids being content hashes).
    """

    id: str | None
    text: str
    source: str | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        """The name, else the id, else the start of the text."""
        if self.name or self.id:
            return self.name or self.id or ""
        text = " ".join(self.text.split())
        return text if len(text) <= 40 else text[:39] + "…"


@dataclass(frozen=True)
class Ranked:
    """A passage at its place in one list, with its relevance (cosine to the question)."""

    passage: Passage
    relevance: float


@dataclass(frozen=True, order=True)
class HeldBack:
    """A top-k slot the default holds back, and the kept passage it restates.

    Attributes:
        rank: its rank in top-k (1-based).
        restates: the rank (1-based) in the default's list of the kept passage it is
            closest to.
    """

    rank: int
    restates: int


@dataclass(frozen=True)
class QuestionFigures:
    """One question: top-k against the default on the same candidates."""

    question: str
    top_k: list[Ranked]
    default: list[Ranked]
    held_back: list[HeldBack] = field(default_factory=list)
    own: Passage | None = None
    """The passage the question was taken from (a sampled question), left out of its
    candidates; None for a question of the user's."""

    @property
    def crowded(self) -> bool:
        return bool(self.held_back)

    @property
    def slots_changed(self) -> int:
        return len(self.held_back)

    @property
    def passages_gained(self) -> int:
        return _distinct(r.passage.text for r in self.default) - _distinct(
            r.passage.text for r in self.top_k)

    @property
    def sources_gained(self) -> int:
        return len(_sources(self.default)) - len(_sources(self.top_k))

    def source_share(self, which: str = "top_k") -> float:
        """The share of ``which`` ("top_k" or "default") from its most frequent source."""
        items = self.top_k if which == "top_k" else self.default
        labels = _sources(items)
        return max(labels.values()) / len(items) if items else 0.0

    def restated(self, held: HeldBack) -> tuple[Ranked, Ranked]:
        """(the held-back passage, the kept passage it restates)."""
        return self.top_k[held.rank - 1], self.default[held.restates - 1]


def _distinct(texts: Iterable[str]) -> int:
    return len({" ".join(t.split()) for t in texts})


def _sources(items: Sequence[Ranked]) -> Counter[object]:
    """Source -> count; a passage without a source counts as its own."""
    return Counter(r.passage.source if r.passage.source is not None else id(r)
                   for r in items)


def compare(question: str, query: np.ndarray, passages: Sequence[Passage],
            vectors: np.ndarray, k: int, own: Passage | None = None) -> QuestionFigures:
    """Top-k and the default for one question's candidates (``passages`` with their
    ``vectors``, in the store's order)."""
    if not len(passages):
        return QuestionFigures(question, [], [], [], own)
    top = select(query, vectors, k, method="similarity")
    chosen = select(query, vectors, k, method=DEFAULT_METHOD)
    rank_in_top = {int(c): i + 1 for i, c in enumerate(top.indices)}
    rank_in_default = {int(c): i + 1 for i, c in enumerate(chosen.indices)}
    held = sorted(
        # a candidate tied with top-k's last one may be the default's k-th: it is that slot
        HeldBack(rank_in_top.get(int(h), len(top)), rank_in_default[int(p)])
        for h, p in chosen.info["held_back"].items()
    )
    return QuestionFigures(
        question,
        [Ranked(passages[int(c)], float(r)) for c, r in zip(top.indices, top.relevance,
                                                            strict=True)],
        [Ranked(passages[int(c)], float(r)) for c, r in zip(chosen.indices, chosen.relevance,
                                                            strict=True)],
        held, own,
    )


@dataclass(frozen=True)
class Inspection:
    """What ``inspect_store`` found: every question's figures and the totals.

    Attributes:
        store: what was inspected, in words.
        asked: where the questions came from, in words.
        k, fetch_k: the selection size and the candidates it is chosen from.
        questions: one ``QuestionFigures`` per question, in the order asked.
        seconds: how long the inspection took.
    """

    store: str
    asked: str
    k: int
    fetch_k: int
    questions: list[QuestionFigures]
    seconds: float = 0.0
    method: str = DEFAULT_METHOD

    @property
    def slots(self) -> int:
        """Top-k slots over all questions (fewer than k per question when the store
        holds fewer candidates)."""
        return sum(len(q.top_k) for q in self.questions)

    @property
    def held_back(self) -> int:
        """Held-back slots over all questions."""
        return sum(q.slots_changed for q in self.questions)

    @property
    def crowding_rate(self) -> float:
        """Held-back slots / top-k slots."""
        return self.held_back / self.slots if self.slots else 0.0

    @property
    def crowded_share(self) -> float:
        """The share of questions with at least one held-back slot."""
        return _mean([q.crowded for q in self.questions])

    @property
    def slots_changed(self) -> float:
        """Held-back slots per question (the default replaces each)."""
        return _mean([q.slots_changed for q in self.questions])

    @property
    def passages_gained(self) -> float:
        """Distinct texts per question, the default's minus top-k's."""
        return _mean([q.passages_gained for q in self.questions])

    @property
    def has_sources(self) -> bool:
        """Whether any passage shown carries a source."""
        return any(r.passage.source is not None
                   for q in self.questions for r in (*q.top_k, *q.default))

    @property
    def sources_gained(self) -> float | None:
        """Distinct sources per question, the default's minus top-k's (None: no sources)."""
        if not self.has_sources:
            return None
        return _mean([q.sources_gained for q in self.questions])

    def source_concentration(self, which: str = "top_k") -> float | None:
        """The mean share of ``which`` ("top_k" or "default") from its most frequent
        source (None: the passages carry no source)."""
        if not self.has_sources:
            return None
        return _mean([q.source_share(which) for q in self.questions if q.top_k])

    @property
    def crowded(self) -> bool:
        """The verdict: the crowding rate is at least ``CROWDED_RATE``."""
        return self.crowding_rate >= CROWDED_RATE

    @property
    def verdict(self) -> str:
        """The verdict in one line."""
        changed = (f"the default changes {self.slots_changed:.1f} of {self.k} slots on "
                   f"average ({self.crowding_rate:.0%} of top-k's slots)")
        if self.crowded:
            return f"top-k is crowded on {self.crowded_share:.0%} of questions: {changed}"
        return (f"little to gain: {changed}; {self.crowded_share:.0%} of questions have a "
                "held-back slot")

    def most_crowded(self, count: int) -> list[QuestionFigures]:
        """The ``count`` questions with the most held-back slots (ties: the order asked)."""
        crowded = [q for q in self.questions if q.crowded]
        return sorted(crowded, key=lambda q: -q.slots_changed)[:count]

    def distribution(self) -> list[int]:
        """Questions with 0, 1, ..., k held-back slots."""
        counts = [0] * (self.k + 1)
        for q in self.questions:
            counts[q.slots_changed] += 1
        return counts


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0
