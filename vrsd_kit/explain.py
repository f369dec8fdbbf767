"""What the default held back, and why, in words a reader can check.

The default (``complement``) returns the k passages that are most relevant *together*;
plain top-k (by the same relevance) would have returned some others. Each of those is
*held back* for one of two reasons, and an entry says which:

* ``"restates"``: it adds almost nothing to a kept passage: at least ``RESTATES``
  (90 %) of its word pairs (consecutive words, as ``vrsd_kit.lexical.tokenize`` reads
  them) occur in that passage (``share`` says how many). A copy, an overlapping chunk
  that lies inside a kept one, the same paragraph under two titles.
* ``"displaced"``: top-k would have returned it, and the default preferred a passage
  that adds more; it is attached to the pick that took its slot ("made room for").

Why word pairs at 90 %: on the evaluation's labelled pairs (``vrsd_eval``'s HotpotQA
corpora), no two distinct evidence passages of one question share more than 47 % of
their word pairs, while templated pages that differ only in a year or a name (two
seasons of one team) reach 80-90 %; at 90 %, "restates" is right (the two are pieces
of one passage) for at least 95 % of the default's held-back passages on every
embedding geometry measured (docs/inspect.md has the figures and the command). The
cosine alone cannot say it: two siblings' biographies sit at cosine 0.96.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .lexical import tokenize

RESTATES = 0.9  # share of a candidate's word pairs found in one kept passage
EXCERPT = 120  # characters of a held-back passage shown in its entry
_CACHED_TEXTS = 1 << 14


@lru_cache(maxsize=_CACHED_TEXTS)
def word_pairs(text: str) -> frozenset[tuple[str, ...]]:
    """The text's word pairs (a one-word text: that word), cached per text."""
    words = tokenize(text)
    if len(words) < 2:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(zip(words, words[1:], strict=False))


def shared_pairs(text: str, other: str) -> float:
    """The share of ``text``'s word pairs that occur in ``other`` (1.0 for an empty
    text: it adds nothing).

    >>> shared_pairs("caffeine has a half-life of five hours",
    ...              "In adults caffeine has a half-life of five hours.")
    1.0
    >>> round(shared_pairs("the 1987 team", "the 1988 team"), 2)
    0.0
    """
    pairs = word_pairs(text)
    return len(pairs & word_pairs(other)) / len(pairs) if pairs else 1.0


def restated_by(text: str, kept: Sequence[str]) -> tuple[int | None, float]:
    """(index into ``kept`` of the passage ``text`` restates, or None; the largest share
    of its word pairs found in one kept passage)."""
    shares = [shared_pairs(text, other) for other in kept]
    if not shares:
        return None, 0.0
    best = max(range(len(shares)), key=shares.__getitem__)
    return (best if shares[best] >= RESTATES else None), shares[best]


def excerpt(text: str, width: int = EXCERPT) -> str:
    """The text's start on one line, cut at a word with an ellipsis past ``width``."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[:width].rsplit(" ", 1)[0] or flat[:width]
    return cut + "…"


def held_back_entries(
    picked: Sequence[int],
    top_k: Sequence[int],
    held: Sequence[int],
    texts: Callable[[int], str] | None,
    name: Callable[[int], Any],
    source: Callable[[int], Any] | None = None,
) -> dict[int, list[dict[str, Any]]]:
    """{pick: its held-back entries} for one selection.

    Args:
        picked: the selection's candidates, in selection order.
        top_k: what plain top-k would have returned, best first (``info["top_k"]``).
        held: the candidates of ``top_k`` the selection held back, in top-k order.
        texts: a candidate's text (None: no texts, every entry is "displaced").
        name: a candidate's id as the user knows it.
        source: a candidate's source (its document's ``source`` metadata), or None.

    Each entry: ``id``, ``rank`` (1-based, in plain top-k), ``relation``
    (``"restates"`` or ``"displaced"``), ``share`` (restates only: the share of its word
    pairs found in the kept passage), ``source`` (when there is one) and ``excerpt``
    (when there are texts). A restatement is attached to the pick it restates; a
    displaced candidate to the pick that took its slot (the picks top-k would not have
    returned, in selection order, take the held-back slots in top-k order).
    """
    rank = {c: r for r, c in enumerate(top_k, start=1)}
    in_top = set(top_k)
    newcomers = [p for p in picked if p not in in_top]
    kept = [texts(p) for p in picked] if texts is not None else []
    out: dict[int, list[dict[str, Any]]] = {}
    for slot, candidate in enumerate(held):
        entry: dict[str, Any] = {"id": name(candidate), "rank": rank[candidate]}
        by, share = (None, 0.0)
        if texts is not None:
            by, share = restated_by(texts(candidate), kept)
        if by is not None:
            owner = picked[by]
            entry.update(relation="restates", share=round(share, 3))
        else:
            owner = newcomers[slot]  # as many newcomers as slots held back, or more
            entry["relation"] = "displaced"
        if source is not None and (where := source(candidate)) is not None:
            entry["source"] = where
        if texts is not None:
            entry["excerpt"] = excerpt(texts(candidate))
        out.setdefault(owner, []).append(entry)
    return out
