"""What ``inspect_store`` measures, from the candidates alone (numpy, the core and the
kit only).

For one question: plain top-k (``similarity``, by cosine, what a store returns) and the
default (``vrsd_core.DEFAULT_METHOD`` with the words, as the adapters run it) on the
same ``fetch_k`` candidates.

Definitions (docs/inspect.md says the same, with the calibration):

* a **crowded slot**: a top-k slot whose passage restates a passage ranked above it in
  the same top-k (the kit's judge, ``vrsd_kit.lexical.restated_by``: the one the
  default's explanation uses). Measured on top-k's own list, whatever the default does,
  and free of the model's cosine range. Sharing a source is not crowding (consecutive
  chunks of one file are often where the answer is), unless the caller sets a
  per-source cap (``max_per_group``): then a slot past the cap of its source is crowded
  too (``"over the source cap"``), and the default runs with that cap;
* a **crowded question**: one with at least one crowded slot;
* the **crowding rate**: crowded slots / all top-k slots, over every question;
* the **verdict**: crowded when the crowding rate is at least ``CROWDED_RATE``;
* beside it, what the default changes: a **held-back slot** is a top-k slot whose
  passage the default does not return, either because it *restates* a passage the
  default keeps (the same word-pair rule) or because it was *displaced* (a passage
  that adds more took its slot); **slots changed** is held-back slots per question;
* **distinct passages gained**: distinct texts in the default's list minus distinct
  texts in top-k (exact copies, whitespace aside, count once);
* **distinct sources**: how many sources a list draws from, top-k's and the default's,
  averaged over questions (information beside the crowding, not part of it); only
  when the passages carry a source (a passage without one is its own source);
* **source concentration**: the share of a list taken by its most frequent source
  (1/k: every passage from another source; 1: one source), averaged over questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD

from ..lexical import Judge, restated_by
from ..rerank import ItemView, held_back_entries, link_note, rerank
from ..settings import build_settings

CROWDED_RATE = 0.1
"""The verdict's threshold: top-k is called crowded when at least this share of its
slots restate a passage ranked above them (or, with a per-source cap, exceed it).
Calibrated on the evidence protocol's corpora, the middle of the gap between the clean
ones (at most 0.2 %) and the crowded ones (at least 21 %): docs/inspect.md shows the run
(docs/results/crowding_calibration.json), tests/test_docs_figures.py holds it."""
RESTATES = "restates"
OVER_CAP = "over the source cap"


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
    link: str | None = None
    """In the default's list, for a pick a link between candidates brought in: what its
    entry says of it (``vrsd_kit.rerank.link_note``: "linked to #1 by: Tim Burton")."""


@dataclass(frozen=True, order=True)
class Crowded:
    """A crowded top-k slot and the passage above it that it repeats.

    Attributes:
        rank: its rank in top-k (1-based).
        by: the rank (1-based, smaller) of the passage it repeats: the one it restates,
            or the first one from its source (over the cap).
        relation: ``"restates"`` (the judge says it restates that passage) or ``"over
            the source cap"`` (only with a per-source cap: its source already fills the
            cap above it).
    """

    rank: int
    by: int
    relation: str


@dataclass(frozen=True, order=True)
class HeldBack:
    """A top-k slot the default does not return, and why.

    Attributes:
        rank: its rank in top-k (1-based).
        kept: the rank (1-based) in the default's list of the passage it restates
            (``relation == "restates"``), or of the passage that took its slot
            (``"displaced"``).
        relation: ``"restates"`` or ``"displaced"``.
    """

    rank: int
    kept: int
    relation: str = "displaced"


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
    crowded_slots: list[Crowded] = field(default_factory=list)

    @property
    def crowded(self) -> bool:
        return bool(self.crowded_slots)

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

    def distinct_sources(self, which: str = "top_k") -> int:
        """How many sources ``which`` ("top_k" or "default") draws from."""
        return len(_sources(self.top_k if which == "top_k" else self.default))

    def source_share(self, which: str = "top_k") -> float:
        """The share of ``which`` ("top_k" or "default") from its most frequent source."""
        items = self.top_k if which == "top_k" else self.default
        labels = _sources(items)
        return max(labels.values()) / len(items) if items else 0.0

    def pair(self, held: HeldBack) -> tuple[Ranked, Ranked]:
        """(the held-back passage, the kept passage it restates or that took its slot)."""
        return self.top_k[held.rank - 1], self.default[held.kept - 1]

    def repeats(self, slot: Crowded) -> tuple[Ranked, Ranked]:
        """(the crowded slot's passage, the one above it that it repeats)."""
        return self.top_k[slot.rank - 1], self.top_k[slot.by - 1]


def _distinct(texts: Iterable[str]) -> int:
    return len({" ".join(t.split()) for t in texts})


def _sources(items: Sequence[Ranked]) -> Counter[object]:
    """Source -> count; a passage without a source counts as its own."""
    return Counter(r.passage.source if r.passage.source is not None else id(r)
                   for r in items)


def crowded_slots(top_k: Sequence[Passage], max_per_group: int | None = None
                  ) -> list[Crowded]:
    """The crowded slots of one top-k list (best first): each slot whose passage
    restates one above it (the kit's judge, ``restated_by``), with that passage; with
    ``max_per_group``, also each slot whose source already has that many passages above
    it, with the first of them. A shared source alone is not crowding."""
    out = []
    for i, passage in enumerate(top_k):
        above = top_k[:i]
        by, _ = restated_by(passage.text, [p.text for p in above])
        if by is not None:
            out.append(Crowded(i + 1, by + 1, RESTATES))
            continue
        if max_per_group is None or passage.source is None:
            continue
        same = [j for j, p in enumerate(above) if p.source == passage.source]
        if len(same) >= max_per_group:
            out.append(Crowded(i + 1, same[0] + 1, OVER_CAP))
    return out


class _PassageView(ItemView[Any]):
    """How the rerank body reads a ``Passage``; a pick comes back as (passage, entry)."""

    def id(self, item: Passage) -> Any:
        return item.id

    def text(self, item: Passage) -> str:
        return item.text

    def metadata(self, item: Passage) -> Mapping[str, Any]:
        return {} if item.source is None else {"source": item.source}

    def annotated(self, item: Passage, metadata: dict[str, Any], entry: dict[str, Any]
                  ) -> tuple[Passage, dict[str, Any]]:
        return item, entry


_TOP_K = build_settings({"method": "similarity", "fetch_k": None})
_DEFAULT = build_settings({"method": DEFAULT_METHOD, "fetch_k": None})


def _source_of(passage: Passage) -> object:
    """A passage's group for a per-source cap: its source, else itself."""
    return passage.source if passage.source is not None else id(passage)


def default_settings(k: int, max_per_group: int | None = None, background: Any = None
                     ) -> Any:
    """The default as the inspection runs it: at ``k``, with a per-source cap when
    ``max_per_group`` is given (each passage's source as its group), and the store's
    ``background`` when it gives one."""
    if max_per_group is None and background is None:
        return _DEFAULT.with_counts(k=k)
    capped = {} if max_per_group is None else {"group_by": _source_of,
                                               "max_per_group": max_per_group}
    return build_settings({"method": DEFAULT_METHOD, "fetch_k": None, "k": k,
                           "background": background, **capped})


def compare(question: str, query: np.ndarray, passages: Sequence[Passage],
            vectors: np.ndarray, k: int, own: Passage | None = None,
            max_per_group: int | None = None, background: Any = None) -> QuestionFigures:
    """Top-k and the default for one question's candidates (``passages`` with their
    ``vectors``, in the store's order), both through the one rerank body
    (``vrsd_kit.rerank``) as every adapter runs them; with ``max_per_group``, the
    default keeps at most that many passages per source, and a top-k slot past the cap
    counts as crowded; ``background``: the default's (``Settings.background``), where the
    store knows its corpus."""
    if not len(passages):
        return QuestionFigures(question, [], [], [], own)
    view = _PassageView()
    top = rerank(view, passages, query=question, query_vector=query, vectors=vectors,
                 settings=_TOP_K.with_counts(k=k))
    settings = default_settings(k, max_per_group, background)
    chosen = rerank(view, passages, query=question, query_vector=query, vectors=vectors,
                    settings=settings)
    # held back from top-k by the cosine (what the store returns), not by the default's
    # own relevance (its entries' held_back)
    position = {id(p): i for i, p in enumerate(passages)}
    top_ids = [position[id(p)] for p, _ in top]
    picked = [position[id(p)] for p, _ in chosen]
    rank_in_default = {c: i + 1 for i, c in enumerate(picked)}
    # each held-back passage's relation as the judge the default obeyed reads it: the
    # whole pool's (its pairs weighed by every candidate), in the default's language
    judge = Judge([p.text for p in passages], settings.language)
    entries = held_back_entries(picked, top_ids, [c for c in top_ids if c not in picked],
                                lambda j: passages[j].text, lambda j: j, judge=judge)
    held = sorted(HeldBack(e["rank"], rank_in_default[pick], e["relation"])
                  for pick, listed in entries.items() for e in listed)
    top_passages = [p for p, _ in top]
    return QuestionFigures(
        question,
        [Ranked(p, entry["relevance"]) for p, entry in top],
        [Ranked(p, entry.get("cosine", entry["relevance"]), link_note(entry.get("linked_to")))
         for p, entry in chosen],
        held, own, crowded_slots(top_passages, max_per_group),
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
    max_per_group: int | None = None
    """The per-source cap the caller set (None: none; sharing a source is then not
    crowding)."""

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
    def crowded_slots(self) -> int:
        """Crowded top-k slots over all questions."""
        return sum(len(q.crowded_slots) for q in self.questions)

    @property
    def crowding_rate(self) -> float:
        """Crowded slots / top-k slots."""
        return self.crowded_slots / self.slots if self.slots else 0.0

    @property
    def restating(self) -> int:
        """Held-back slots whose passage restates one the default keeps."""
        return sum(h.relation == "restates" for q in self.questions for h in q.held_back)

    @property
    def crowded_share(self) -> float:
        """The share of questions with at least one crowded slot."""
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

    def distinct_sources(self, which: str = "top_k") -> float | None:
        """The mean number of sources ``which`` ("top_k" or "default") draws from, per
        question (None: the passages carry no source). Information, not crowding."""
        if not self.has_sources:
            return None
        return _mean([q.distinct_sources(which) for q in self.questions if q.top_k])

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
    def crowding_means(self) -> str:
        """What a crowded slot is, in this inspection's words."""
        if self.max_per_group is None:
            return "restate a passage ranked above them"
        return (f"restate a passage ranked above them or exceed {self.max_per_group} per "
                "source")

    @property
    def verdict(self) -> str:
        """The verdict in one line."""
        rate = f"{self.crowding_rate:.0%} of top-k's slots {self.crowding_means}"
        if self.crowded:
            return (f"top-k is crowded: {rate} (crowded from {CROWDED_RATE:.0%}, where the "
                    "default's diversity began to add evidence on labelled HotpotQA corpora)")
        return (f"top-k is not crowded: {rate} (below {CROWDED_RATE:.0%}, the default's "
                "diversity added no evidence on labelled HotpotQA corpora)")

    def most_crowded(self, count: int) -> list[QuestionFigures]:
        """The ``count`` questions with the most crowded slots (ties: the order asked)."""
        crowded = [q for q in self.questions if q.crowded]
        return sorted(crowded, key=lambda q: -len(q.crowded_slots))[:count]

    def distribution(self) -> list[int]:
        """Questions with 0, 1, ..., k - 1 crowded slots (the first slot has nothing above
        it, so at most k - 1 can be crowded)."""
        counts = [0] * self.k
        for q in self.questions:
            counts[len(q.crowded_slots)] += 1
        return counts


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0
