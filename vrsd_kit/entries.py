"""The entry every returned item carries: why it was picked, under ``metadata["vrsd"]``.

The one rerank body (``vrsd_kit.rerank``) builds one entry per pick (``entries``) and
puts it on a copy of the item's metadata (``with_entry``); the caller's metadata is never
changed, nor a value of its own replaced. numpy only, no framework imports.

What the default held back, and why, in words a reader can check (``held_back_entries``):
The default (``complement``) returns the k passages that are most relevant *together*;
plain top-k (by the same relevance) would have returned some others. Each of those is
*held back* for one of three reasons, and an entry says which, as the one judge of
copies (``vrsd_kit.copies.Judge``, the very judge the selection obeys) reads it:

* ``"restates"``: it adds almost nothing to a kept passage: at least 90 % of its word
  pairs, each weighed by how rare it is in the fetched pool, occur in that passage
  (``share`` says how much). A copy, an overlapping chunk that lies inside a kept one,
  the same paragraph under two titles; not two passages that share only a disclaimer.
* ``"contains"``: a kept passage's word pairs are in it (90 % or more, weighed the same
  way): a longer chunk around a kept one, which repeats it and adds some.
* ``"displaced"``: top-k would have returned it, and the default preferred a passage
  that adds more; it is attached to the pick that took its slot ("made room for"). A
  passage without words (emoji, punctuation, empty) is never a copy: its entry says
  ``"note": "no words to compare"``.

Why word pairs at 90 %: on the evaluation's labelled pairs (``vrsd_eval``'s HotpotQA
corpora), no two distinct evidence passages of one question share more than 47 % of
their word pairs, while templated pages that differ only in a year or a name (two
seasons of one team) reach 80-90 %; "restates" is right (the two are pieces of one
passage) for at least 98 % of the default's held-back passages on every embedding
geometry measured (docs/inspect.md has the figures and the command). The cosine alone
cannot say it: two siblings' biographies sit at cosine 0.96.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vrsd_core import Selection
from vrsd_core.callers import user_stacklevel

from .copies import RESTATES, Judge, restated_by, shared_pairs, word_pairs
from .lexical import PoolRelevance

METADATA_KEY = "vrsd"
"""The metadata entry every returned item gets (the default of each adapter's
``metadata_key``); see ``with_entry`` for a key the user's metadata already holds."""
SOURCE_KEYS = ("source", "file_path", "file_name", "url")
_ENTRY_FIELDS = frozenset({"rank", "relevance", "method"})
_warned_taken: set[str] = set()
EXCERPT = 120  # characters of a held-back passage shown in its entry
NO_WORDS = "no words to compare"
__all__ = ["EXCERPT", "METADATA_KEY", "NO_WORDS", "RESTATES", "SOURCE_KEYS", "entries",
           "entry_key", "excerpt", "held_back_entries", "is_entry", "restated_by",
           "shared_pairs", "source_of", "with_entry", "word_pairs"]


def is_entry(value: Any) -> bool:
    """True for an entry vrsd wrote (a dict with rank, relevance and method): a result
    passed through vrsd twice has its entry replaced, a user's own value never is."""
    return isinstance(value, dict) and _ENTRY_FIELDS <= value.keys()


def entry_key(metadata: Mapping[str, Any], key: str = METADATA_KEY) -> str:
    """Where vrsd's entry goes in ``metadata``: ``key``, unless the user's own value
    holds it; then ``key`` + ``"_"`` (``"vrsd_"``), + ``"__"``, ... the first one free
    (or holding a vrsd entry). Warns once per key (``UserWarning``) naming both keys."""
    chosen = key
    while chosen in metadata and not is_entry(metadata[chosen]):
        chosen += "_"
    if chosen != key and key not in _warned_taken:
        _warned_taken.add(key)
        warnings.warn(
            f"metadata_key: the metadata already has a key {key!r} of its own; it is kept, "
            f"and vrsd's entry is under {chosen!r} (pass metadata_key= to choose the key)",
            UserWarning, stacklevel=user_stacklevel())
    return chosen


def with_entry(metadata: Mapping[str, Any], entry: dict[str, Any],
               key: str = METADATA_KEY) -> tuple[dict[str, Any], str]:
    """(a new dict: ``metadata``'s items with ``entry`` added under ``entry_key(metadata,
    key)``, that key): the caller's metadata is never changed, nor a value of its own
    replaced. The values are the caller's own objects, not copies, as a store's own search
    returns them: a value that cannot be copied (a lock, a client) comes back as it is."""
    chosen = entry_key(metadata, key)
    out = dict(metadata)
    out[chosen] = entry
    return out, chosen


def source_of(metadata: Mapping[str, Any] | None) -> Any:
    """Where a document comes from, as its metadata says: the first of ``SOURCE_KEYS``
    it has (LangChain's loaders write ``source``, LlamaIndex's ``file_path`` and
    ``file_name``, Haystack's converters ``file_path``), or None."""
    if not metadata:
        return None
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if value is not None:
            return value
    return None


def entries(
    selection: Selection, ids: Sequence[Any] | None = None,
    signals: PoolRelevance | None = None, texts: Sequence[str] | None = None,
    sources: Sequence[Any] | None = None, *, judge: Judge | None = None,
    cosine: Sequence[float] | NDArray[np.float64] | None = None,
) -> list[dict[str, Any]]:
    """The ``METADATA_KEY`` entry of every pick of ``selection``, in selection order::

        {
            "rank": 0,            # position in the selection order (0-based)
            "relevance": 1.02,    # what the method ranked it by (see below)
            "cosine": 0.62,       # the cosine of its vector to the query's
            "lexical": 7.3,       # only when the words were read: its BM25 score in the pool
            "gain": 0.71,         # the method's score for it when it was picked
            "method": "vrsd",     # the selection method
            "prior": 0.9,         # only when a quality prior was given: its value
            "held_back": [...],   # only for the default (complement): what plain top-k
                                  # would have returned that it did not, see below
            "linked_to": {...},   # only for a pick a link brought in, see below
            "stopped": "restatements",  # only when fewer than k came back, and why
            "copy_of": {...},     # only for a copy that filled a slot (fill_with_copies)
        }

    ``relevance`` is what the method ranked the candidate by: for a method that reads
    the words (``vrsd_core.METHOD_INFO[method].reads_words``, with ``lexical`` on and a
    query text) it is the fused relevance ``vrsd_core.pool_units([cosine, lexical])`` =
    z(z(cosine) + z(lexical)), each z over the fetched pool: the sum of the two parts'
    z-scores standardised again (0 is the pool's mean, 1 one standard deviation above
    it); otherwise the caller's relevance scores when given, else the cosine to the
    query. ``cosine`` is always the cosine of the item's vector to the query vector
    (given as ``signals`` or ``cosine``, one per candidate; absent when neither is).

    ``gain`` is, for ``similarity`` the cosine; for ``vrsd`` the cosine of the sum of
    the picks so far with the query; for ``mmr`` the MMR score; for ``dpp`` and the
    default how much the pick widens the set, relevance-weighted (the determinant ratio:
    near 0 for a passage the picks already say, largest for a relevant passage unlike
    them); for the sampling and clustering methods their own score.

    ``held_back`` lists one dict per candidate plain top-k (by the same relevance)
    would have returned and the default did not (``held_back_entries``, with ``judge``
    the one judge of copies the selection obeyed): ``id`` (the item's id from ``ids``,
    else its 0-based rank among the fetched candidates), ``rank`` (1-based, in plain
    top-k), ``relation`` (``"restates"``: 90 % or more of its weighted word pairs are in
    this item; ``"contains"``: 90 % or more of this item's are in it; ``share`` says how
    much; ``"displaced"``: this item took its slot), ``note`` (``"no words to compare"``
    for a passage without words), ``source`` (when ``sources`` has one) and ``excerpt``
    (when ``texts`` are given; without texts every entry is ``"displaced"``).

    ``stopped`` (on every entry of a result shorter than k): ``"restatements"`` (only
    copies of the picks were left: ``fill_with_copies`` returns them), ``"max_tokens"``
    or ``"max_per_group"`` (the budget or the cap). ``copy_of`` (``fill_with_copies``):
    ``{"rank": the pick it repeats, "relation": "restates" | "contains", "share": ...}``.
    Values are plain Python ints, floats and strings (JSON-ready, no numpy scalars).

    ``linked_to`` (the default with the words read: ``selection.info["linked_to"]``) is
    on a pick that a link between candidates brought in (``vrsd_core.Links``, ``vrsd_core/methods/determinantal.py``): ``id``
    (the earlier pick it links to, named as in ``held_back``), ``rank`` (that pick's
    1-based place in the selection) and ``words`` (the words of both texts, not of the
    question, that make the link more than chance, adjacent ones joined as written:
    ``["Tim Burton"]``). A pick no link brought in has no ``linked_to``.
    """
    held = _held_entries(selection, ids, texts, sources, judge)
    picked = selection.indices.tolist()
    relevance = selection.relevance.tolist()
    gains = selection.gains.tolist()
    prior = selection.info.get("prior")
    linked = _linked_entries(selection, ids, signals, texts)
    stopped = selection.info.get("stopped")
    copies = selection.info.get("copy_of", {})
    rank_of = {index: rank for rank, index in enumerate(picked)}
    out = []
    for rank, index in enumerate(picked):
        entry: dict[str, Any] = {"rank": rank, "relevance": relevance[rank],
                                 "gain": gains[rank], "method": selection.method}
        if signals is not None:
            entry.update(signals.parts(index))
        elif cosine is not None:
            entry["cosine"] = float(cosine[index])
        if "cosine" in entry:  # after relevance: the entry reads relevance, cosine, ...
            entry = {**{key: entry[key] for key in ("rank", "relevance", "cosine")}, **entry}
        if prior is not None:
            entry["prior"] = float(prior[rank])
        if held is not None:
            entry["held_back"] = held.get(index, [])
        if rank in linked:
            entry["linked_to"] = linked[rank]
        if stopped is not None:
            entry["stopped"] = str(stopped)
        if index in copies:
            of, relation, share = copies[index]
            entry["copy_of"] = {"rank": rank_of[of], "relation": relation,
                                "share": round(float(share), 3)}
        out.append(entry)
    return out


def _linked_entries(selection: Selection, ids: Sequence[Any] | None,
                    signals: PoolRelevance | None, texts: Sequence[str] | None,
                    ) -> dict[int, dict[str, Any]]:
    """{position of a pick a link brought in: its ``linked_to`` entry}."""
    via = selection.info.get("linked_to")
    if via is None or signals is None or signals.links is None or texts is None:
        return {}
    picked = selection.indices.tolist()
    out = {}
    for rank, earlier in enumerate(via):
        if earlier < 0:
            continue
        words = signals.links.words(texts[picked[rank]], texts[picked[earlier]])
        if words:
            out[rank] = {"id": _candidate_name(picked[earlier], ids), "rank": int(earlier) + 1,
                         "words": words}
    return out


def _held_entries(selection: Selection, ids: Sequence[Any] | None,
                  texts: Sequence[str] | None, sources: Sequence[Any] | None,
                  judge: Judge | None) -> dict[int, list[dict[str, Any]]] | None:
    """{pick: its held-back entries}, or None for a method that holds nothing back."""
    held = selection.info.get("held_back")
    if held is None:
        return None
    return held_back_entries(
        selection.indices.tolist(), selection.info["top_k"], held,
        None if texts is None else texts.__getitem__,
        lambda j: _candidate_name(j, ids),
        None if sources is None else sources.__getitem__,
        judge=judge,
    )


def _candidate_name(index: int, ids: Sequence[Any] | None) -> Any:
    """A candidate's id when it has one, else its rank among the fetched candidates."""
    name = None if ids is None else ids[index]
    return int(index) if name is None else name


# --- what the default held back, and why ---


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
    *,
    judge: Judge | None = None,
) -> dict[int, list[dict[str, Any]]]:
    """{pick: its held-back entries} for one selection.

    Args:
        picked: the selection's candidates, in selection order.
        top_k: what plain top-k would have returned, best first (``info["top_k"]``).
        held: the candidates of ``top_k`` the selection held back, in top-k order.
        texts: a candidate's text (None: no texts, every entry is "displaced").
        name: a candidate's id as the user knows it.
        source: a candidate's source (its document's ``source`` metadata), or None.
        judge: the pool's judge of copies (``vrsd_kit.copies.Judge`` over every fetched
            candidate's text, indexed as ``picked`` and ``held``: pass the one the
            selection used); None: one over the texts of ``picked`` and ``held``.

    Each entry: ``id``, ``rank`` (1-based, in plain top-k), ``relation``
    (``"restates"``, ``"contains"`` or ``"displaced"``), ``share`` (a copy only: the
    weighted share of the contained passage's word pairs found in the other), ``note``
    (``"no words to compare"`` for a passage without words), ``source`` (when there is
    one) and ``excerpt`` (when there are texts). A copy is attached to the pick it
    repeats; a displaced candidate to the pick that took its slot (the picks top-k would
    not have returned, in selection order, take the held-back slots in top-k order; a
    slot none took, as when fewer than k came back, goes to the last of them, else to
    the last pick).
    """
    rank = {c: r for r, c in enumerate(top_k, start=1)}
    in_top = set(top_k)
    newcomers = [p for p in picked if p not in in_top]
    local, where = judge, {c: c for c in [*picked, *held]}
    if judge is None and texts is not None:
        involved = list(dict.fromkeys([*picked, *held]))
        local, where = Judge([texts(c) for c in involved]), {c: i for i, c in enumerate(involved)}
    kept = [where[p] for p in picked]
    out: dict[int, list[dict[str, Any]]] = {}
    for slot, candidate in enumerate(held):
        entry: dict[str, Any] = {"id": name(candidate), "rank": rank[candidate]}
        found = None
        if local is not None:
            found = local.copy_of(where[candidate], kept)
            if not local.words(where[candidate]):
                entry["note"] = NO_WORDS
        if found is not None:
            owner = picked[found.of]
            entry.update(relation=found.relation, share=round(found.share, 3))
        else:
            owner = (newcomers[min(slot, len(newcomers) - 1)] if newcomers
                     else picked[-1])
            entry["relation"] = "displaced"
        if source is not None and (where_from := source(candidate)) is not None:
            entry["source"] = where_from
        if texts is not None:
            entry["excerpt"] = excerpt(texts(candidate))
        out.setdefault(owner, []).append(entry)
    return out
