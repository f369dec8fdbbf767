"""The one judge of "is a copy": which candidates restate a kept one, read from the words.

The default keeps no passage that repeats one it keeps, and its entries say which held-back
passage restates which kept one; both ask this module's ``Judge``, built once per query on
the fetched pool's texts, so what is kept and what the entries say cannot disagree.

A candidate's content is its **word pairs** (consecutive words, as
``vrsd_kit.lexical.tokenize`` reads them: in a script without spaces, consecutive
character bigrams). Each pair weighs ``1 / (how many of the pool's candidates hold it)``:
a pair that only this candidate holds counts fully, a disclaimer or licence header that
ten candidates repeat counts a tenth. The **share** of candidate a's content in b is the
weight of a's pairs found in b over the weight of all of a's pairs. Then:

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


@lru_cache(maxsize=_CACHED_TEXTS)
def word_pairs(text: str) -> frozenset[Pair]:
    """The text's word pairs (a one-word text: that word; no words: none), cached per
    text."""
    words = tokenize(text)
    if len(words) < 2:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(zip(words, words[1:], strict=False))


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
        self._held_by = Counter(chain.from_iterable(self.pairs))
        self._totals: dict[int, float] = {}

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
            for relation, share in (("restates", self.share(i, j)),
                                    ("contains", self.share(j, i))):
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


def keep_distinct(selection: Selection, judge: Judge, longer: Callable[[int], Selection],
                  k: int, *, fill: bool = False,
                  objective: Callable[[NDArray[np.int64]], float] | None = None) -> Selection:
    """``selection`` (the default's picks) with every copy of a kept pick skipped: the
    method's own order, read further when a pick is skipped, keeps each candidate that is
    not a copy (``Judge.copy_of``) of one kept before it, until ``k`` are kept.

    ``longer(K)`` runs the same selection for K picks (a greedy order: its first picks are
    ``selection``'s). When only copies remain, fewer than ``k`` come back and
    ``info["stopped"] == "restatements"``; with ``fill``, the skipped copies make up
    ``k``, in the method's order, each listed in ``info["copy_of"]`` ({candidate:
    (the kept candidate, relation, share)}). ``info["held_back"]`` is recomputed for what
    is kept (what plain top-k, ``info["top_k"]``, had and the result does not);
    ``info["copies_skipped"]`` counts the copies passed over. ``objective(indices)``
    gives the kept set's objective (read lazily, as the core's; None: 0.0).
    """
    picks = selection.indices.tolist()
    if not any(judge.copy_of(c, picks[:t]) for t, c in enumerate(picks)):
        return selection
    total = len(judge.pairs)
    for count in dict.fromkeys((min(total, 4 * k + 4), total)):
        run = longer(count)
        order = run.indices.tolist()
        kept: list[int] = []  # positions in ``order``
        copies: list[tuple[int, Copy]] = []
        for position, candidate in enumerate(order):
            if len(kept) == k:
                break
            found = judge.copy_of(candidate, [order[p] for p in kept])
            if found is None:
                kept.append(position)
            else:
                copies.append((position, found))
        if len(kept) == k or len(order) < count:
            break
    info = {key: value for key, value in selection.info.items()
            if key not in ("tokens_used", "stopped")}
    short = len(kept) < k and bool(copies)
    if short and fill:
        added = copies[:k - len(kept)]
        info["copy_of"] = {order[p]: (order[kept[c.of]], c.relation, c.share) for p, c in added}
        kept += [p for p, _ in added]
    elif short:
        info["stopped"] = "restatements"
    elif run.info.get("stopped"):
        info["stopped"] = run.info["stopped"]
    final = [order[p] for p in kept]
    if run.info.get("prior") is not None:
        info["prior"] = [run.info["prior"][p] for p in kept]
    fills = int(run.info.get("filled_by_relevance", 0))
    info["filled_by_relevance"] = sum(p >= len(order) - fills for p in kept)
    info["held_back"] = [c for c in selection.info.get("top_k", []) if c not in set(final)]
    info["copies_skipped"] = len(copies) - len(info.get("copy_of", ()))
    positions = np.asarray(kept, dtype=np.int64)
    indices = np.asarray(final, dtype=np.int64)
    return Selection(
        indices=indices, gains=run.gains[positions], relevance=run.relevance[positions],
        objective=0.0 if objective is None else functools.partial(  # type: ignore[arg-type]
            objective, indices),  # read when asked, as the core's
        method=selection.method, params=dict(selection.params), info=info)
