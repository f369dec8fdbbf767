"""The one judge of "is a copy": which candidates restate a kept one, read from the words.

The default keeps no passage that repeats one it keeps, and its entries say which held-back
passage restates which kept one; both ask this module's ``Judge``, built once per query on
the fetched pool's texts, so what is kept and what the entries say cannot disagree.

A candidate's content is its **word pairs** (consecutive words within a sentence or a
line, as ``vrsd_kit.lexical.tokenize`` reads them: in a script without spaces,
consecutive character bigrams). Each pair weighs ``1 / (how many of the pool's
candidates hold it)``: a pair that only this candidate holds counts fully, a disclaimer
or licence header that ten candidates repeat counts a tenth. The **share** of candidate
a's content in b is the weight of a's pairs found in b over the weight of all of a's
pairs. Then:

* a **restates** b when the share of a in b is at least ``RESTATES`` (0.9): a copy, an
  overlapping chunk that lies inside b, the same paragraph under another title;
* a **contains** b when the share of b in a is at least ``RESTATES`` (a longer chunk
  around b): it repeats b and adds some;
* a passage without words (emoji, punctuation, empty) has no content to compare: it
  neither restates nor is contained (``words(i) == 0``).

The weights make a shared disclaimer count for little beside a fact of its own: two
passages that share a long boilerplate paragraph but state different facts do not
restate each other, while a copy (all of its pairs in b) has share 1 whatever the
weights. Measured on the evaluation's labelled HotpotQA pools (docs/inspect.md).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from vrsd_core import Selection

from .lexical import tokenize

RESTATES = 0.9  # the share of one passage's weighted word pairs found in another
_CACHED_TEXTS = 1 << 14

Pair = tuple[str, ...]


# where a word pair stops: the end of a sentence or a line (a chunk that starts at a
# sentence or under a heading has no pair its original lacks)
_BREAK = re.compile(r"[.!?;\n\u3002\uff01\uff1f\uff1b]+")


@lru_cache(maxsize=_CACHED_TEXTS)
def word_pairs(text: str) -> frozenset[Pair]:
    """The text's word pairs: consecutive words within a sentence or line (a one-word
    sentence: that word; no words: none), cached per text."""
    pairs: set[Pair] = set()
    for sentence in _BREAK.split(text):
        words = tokenize(sentence)
        if len(words) == 1:
            pairs.add((words[0],))
        pairs.update(zip(words, words[1:], strict=False))
    return frozenset(pairs)


@dataclass(frozen=True)
class Copy:
    """A candidate judged a copy of a kept one.

    Attributes:
        of: the position, in the kept list it was judged against, of the kept passage.
        relation: ``"restates"`` (its content is in the kept passage) or ``"contains"``
            (the kept passage's content is in it).
        share: the weighted share of the contained passage's word pairs found in the
            other (at least ``RESTATES``).
    """

    of: int
    relation: str
    share: float


class Judge:
    """One pool's judge of copies: ``texts`` are the fetched candidates (the pool whose
    pair frequencies weigh each pair); candidates are named by their index into it.

    >>> judge = Judge(["Caffeine has a half-life of five hours.",
    ...                "In adults, caffeine has a half-life of five hours.",
    ...                "Alcohol fragments sleep."])
    >>> judge.copy_of(0, [1])
    Copy(of=0, relation='restates', share=1.0)
    >>> judge.copy_of(1, [0]).relation, judge.copy_of(2, [0, 1])
    ('contains', None)
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self.pairs = [word_pairs(text) for text in texts]
        self._counted: Counter[Pair] | None = None  # counted when a weight is first needed
        self._totals: dict[int, float] = {}

    @property
    def _held_by(self) -> Counter[Pair]:
        """How many of the pool's candidates hold each pair."""
        if self._counted is None:
            self._counted = Counter(chain.from_iterable(self.pairs))
        return self._counted

    def _may_reach(self, i: int, j: int) -> bool:
        """Whether ``share(i, j)`` can reach ``RESTATES``, from the counts alone: a pair
        both hold weighs at most 1/2, any other at least 1/n, so a share under the bound
        ``(S/2) / (S/2 + U/n)`` (S pairs shared, U not) is never a copy's."""
        pairs = self.pairs[i]
        shared = len(pairs & self.pairs[j])
        unshared = len(pairs) - shared
        return shared > 0 and (1 - RESTATES) * shared * len(self.pairs) >= (
            2 * RESTATES * unshared)

    def words(self, i: int) -> int:
        """How many word pairs candidate ``i`` has (0: nothing to compare)."""
        return len(self.pairs[i])

    def _weight(self, pairs: frozenset[Pair]) -> float:
        held_by = self._held_by
        return sum(1.0 / max(held_by[pair], 1) for pair in pairs)

    def pair_share(self, pairs: frozenset[Pair], other: frozenset[Pair]) -> float:
        """The weighted share of ``pairs`` found in ``other`` (a pair the pool does not
        hold weighs 1); 0.0 for no pairs."""
        shared = pairs & other
        return self._weight(shared) / self._weight(pairs) if shared else 0.0

    def share(self, i: int, j: int) -> float:
        """The weighted share of candidate ``i``'s word pairs found in candidate ``j``
        (0.0 when ``i`` has none)."""
        pairs = self.pairs[i]
        if not pairs:
            return 0.0
        shared = pairs & self.pairs[j]
        if not shared:
            return 0.0
        total = self._totals.get(i)
        if total is None:
            total = self._totals[i] = self._weight(pairs)
        return self._weight(shared) / total

    def copy_of(self, i: int, kept: Sequence[int]) -> Copy | None:
        """Whether candidate ``i`` is a copy of one of ``kept`` (candidate indices): the
        kept passage it restates or contains with the largest share (restates first on a
        tie), or None."""
        best: Copy | None = None
        for position, j in enumerate(kept):
            for relation, a, b in (("restates", i, j), ("contains", j, i)):
                if not self._may_reach(a, b):
                    continue
                share = self.share(a, b)
                if share >= RESTATES and (best is None or share > best.share):
                    best = Copy(position, relation, share)
        return best


def shared_pairs(text: str, other: str) -> float:
    """The share of ``text``'s word pairs that occur in ``other``, each pair weighed by
    how rare it is in the two texts (``Judge``); 0.0 for a text without words (it has
    nothing to compare).

    >>> shared_pairs("caffeine has a half-life of five hours",
    ...              "In adults caffeine has a half-life of five hours.")
    1.0
    >>> round(shared_pairs("the 1987 team", "the 1988 team"), 2)
    0.0
    >>> shared_pairs("!!!", "Anything at all.")
    0.0
    """
    return Judge([text, other]).share(0, 1)


def restated_by(text: str, kept: Sequence[str], pool: Sequence[str] | None = None
                ) -> tuple[int | None, float]:
    """(index into ``kept`` of the passage ``text`` restates, or None; the largest share
    of its word pairs found in one kept passage). The pairs weigh by how many texts of
    ``pool`` hold them (the fetched candidates' texts, ``text`` and ``kept`` among them,
    as the rerank body's ``Judge`` weighs them; default: ``text`` and ``kept``)."""
    judge = Judge([text, *kept] if pool is None else pool)
    pairs = word_pairs(text)
    shares = [judge.pair_share(pairs, word_pairs(other)) for other in kept]
    if not shares:
        return None, 0.0
    best = max(range(len(shares)), key=shares.__getitem__)
    return (best if shares[best] >= RESTATES else None), shares[best]


# --- the selection keeps no copy of a pick ---------------------------------------------


def first_copy(picks: Sequence[int], judge: Judge) -> int | None:
    """The position of the first pick that is a copy of a pick before it, or None."""
    for position, candidate in enumerate(picks):
        if judge.copy_of(candidate, picks[:position]) is not None:
            return position
    return None


def without_copies(selection: Selection, run: Selection, closed: Sequence[int], judge: Judge,
                   k: int, *, fill: bool = False, relevance: NDArray[np.float64] | None = None,
                   objective: Callable[[NDArray[np.int64]], float] | None = None
                   ) -> Selection:
    """The default's result without copies: ``run`` is the selection (``selection``, the
    first run) made again with the ``closed`` candidates never picked, each closed when it
    was the first pick that copies one before it (``first_copy``). A greedy selection's
    picks before a closed one do not change, so each closed candidate is a copy of a pick
    that is kept.

    When only copies remain, fewer than ``k`` come back and ``info["stopped"] ==
    "restatements"``; with ``fill``, the closed copies make up ``k`` (in the order they
    were found), each in ``info["copy_of"]`` ({candidate: (the kept candidate, relation,
    share)}), gain 0 and ``relevance[c]`` (every candidate's relevance as the method reads
    it; None: 0.0). ``info["top_k"]`` stays ``selection``'s (what plain top-k returns);
    ``info["held_back"]`` is what of it the result does not keep; ``info["copies"]`` the
    closed candidates. ``objective(indices)`` gives the result's objective, read lazily
    (None: 0.0).
    """
    if not closed:
        return selection
    picks = run.indices.tolist()
    info = {key: value for key, value in run.info.items()
            if key not in ("top_k", "held_back", "max_tokens", "tokens_used", "stopped")}
    for key in ("max_tokens", "tokens_used", "stopped"):  # the caller's own budget or cap
        if key in selection.info and key in run.info:
            info[key] = run.info[key]
    gains, relevances = run.gains, run.relevance
    if len(picks) < k:
        if fill:
            added = closed[:k - len(picks)]
            found = [judge.copy_of(c, picks) for c in added]
            info["copy_of"] = {c: (picks[f.of], f.relation, f.share)
                               for c, f in zip(added, found, strict=True) if f is not None}
            if "linked_to" in info:  # a copy that fills a slot was brought in by no link
                info["linked_to"] = [*info["linked_to"], *([-1] * len(added))]
            picks = picks + added
            gains = np.concatenate([gains, np.zeros(len(added))])
            relevances = np.concatenate([relevances, np.zeros(len(added)) if relevance is None
                                         else np.asarray(relevance)[added]])
            info.pop("stopped", None)
        elif "stopped" not in info:
            info["stopped"] = "restatements"
    info["top_k"] = list(selection.info.get("top_k", []))
    info["held_back"] = [c for c in info["top_k"] if c not in set(picks)]
    info["copies"] = closed
    indices = np.asarray(picks, dtype=np.int64)
    return Selection(
        indices=indices, gains=np.asarray(gains, dtype=np.float64),
        relevance=np.asarray(relevances, dtype=np.float64),
        objective=0.0 if objective is None else functools.partial(  # type: ignore[arg-type]
            objective, indices),  # read when asked, as the core's
        method=selection.method, params=dict(selection.params), info=info)
