"""The one rerank body: every entry point of every adapter chooses its k items here.

An adapter fetches the candidates and their vectors its own way, then calls
``rerank(view, items, query=..., query_vector=..., vectors=..., settings=...)``:

1. each candidate's text as the words should read it (``view.text``);
2. what the pool's words say, for a method that reads them (``pool_signals``): the
   relevance of each candidate, its profile, and the links between candidates;
3. what is read from each candidate: a prior, an outside relevance, group labels, token
   counts (``candidate_keywords``, through ``view.values`` and ``view.scorer``);
4. the selection (``vrsd_core.select``, with the keywords ``pool_keywords`` builds, as
   the evaluation's rows do); for a method that holds back what repeats a pick (the
   default), no copy of a kept pick is kept: the one judge of copies (``lexical.Judge``,
   that the entries' explanation asks too) hands the core its verdicts as a boolean
   matrix (``complement``'s ``closes``), and ``lexical.without_copies`` says what
   became of the copies (fewer than k, or ``fill_with_copies``);
5. one entry per pick (``entries``; a pick a link brought in says which pick it
   links to and by which words), put on a copy of each picked item
   (``view.annotated``), in selection order.

An ``ItemView`` is how the body reads one framework's candidates: id, text, metadata,
vector, and a copy carrying the entry. numpy only, no framework imports.

This module also holds what the body reads and writes: **the per-query inputs**
(below) and **the entries** it puts on results (below that). The adapters import them from here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vrsd_core import METHOD_INFO, Links, Selection, select
from vrsd_core.callers import user_stacklevel
from vrsd_core.metrics import sum_vector_similarity

from .lexical import (
    Background,
    Judge,
    PoolRelevance,
    cosines,
    pool_relevance,
    without_copies,
)
from .settings import Settings
from .tokens import count_tokens

Item = TypeVar("Item")


class ItemView(Generic[Item]):
    """How the rerank body reads one framework's candidates (e.g. LangChain's
    ``Document``); an adapter subclasses it and writes ``text``, ``metadata`` and
    ``annotated`` (the others have defaults)."""

    def id(self, item: Item) -> Any:
        """The item's id (named by the held-back entries), or None."""
        return None

    def text(self, item: Item) -> str:
        """The item's own text (not the metadata a framework prints before it): the words,
        the profiles, the judge of copies and the excerpts read it."""
        raise NotImplementedError

    def prompt_text(self, item: Item) -> str:
        """The text the LLM will read (a token budget counts its tokens): ``text`` unless
        the framework puts more into the prompt (LlamaIndex's metadata lines)."""
        return self.text(item)

    def metadata(self, item: Item) -> Mapping[str, Any]:
        """The item's metadata (per-candidate fields are read from it)."""
        raise NotImplementedError

    def vector(self, item: Item) -> Sequence[float] | None:
        """The vector the item carries, or None (the adapter gets one another way)."""
        return None

    def subject(self, item: Item) -> Any:
        """What the user's callables are given for this item (the item itself by default)."""
        return item

    def annotated(self, item: Item, metadata: dict[str, Any], entry: dict[str, Any]) -> Item:
        """A copy of ``item`` whose metadata is ``metadata`` (a copy of its own, with
        ``entry`` under the settings' key); the original is not changed."""
        raise NotImplementedError

    def scorer(self, items: Sequence[Item], query: str | None
               ) -> Callable[[Callable[..., Any]], Any] | None:
        """How an outside relevance callable ``fn`` is asked for ``items``' scores:
        ``fn(query, subjects)``; None without a query text (the callable is then refused,
        naming the setting). A framework whose callable scores one item overrides it."""
        if not query:
            return None
        subjects = [self.subject(item) for item in items]
        return lambda fn: fn(query, subjects)

    def values(self, items: Sequence[Item], spec: Any, name: str) -> list[Any]:
        """One value per item: its metadata field ``spec``, or ``spec(subject(item))``."""
        return item_values(spec, items, name, metadata_of=self.metadata,
                           describe=self._describe, subject=self.subject)

    def _describe(self, item: Item) -> str:
        found = self.id(item)
        return str(found) if found is not None else self.text(item)[:40]


def rerank(view: ItemView[Item], items: Sequence[Item], *, query: str | None,
           query_vector: ArrayLike, vectors: ArrayLike, settings: Settings) -> list[Item]:
    """The ``settings.k`` picks of ``items`` (the candidates, in the store's order, row i
    of ``vectors`` belonging to item i), as annotated copies in selection order.

    ``query``: the query text (None for a search by vector: no words are read, and a
    relevance callable is refused); ``query_vector``: checked by the adapter
    (``inputs.check_query_vector``).

    Raises:
        ValueError: naming the setting or the candidate at fault (a per-candidate value),
            or, from the core, the vectors.
    """
    if not items:
        return []
    query_array = np.asarray(query_vector, dtype=np.float64)
    matrix = _as_matrix(vectors)
    texts = [view.text(item) for item in items]
    signals = pool_signals(query or "", query_array, matrix, texts, settings.language,
                           settings.background) if reads_words(
        settings.method, lexical=settings.lexical, relevance=settings.relevance,
        query=query) else None
    prompts = texts if settings.max_tokens is None else [view.prompt_text(i) for i in items]
    keywords = candidate_keywords(settings, lambda spec, name: view.values(items, spec, name),
                                  len(items), view.scorer(items, query), prompts)
    words, judge = pool_keywords(settings.method, signals, texts, settings.language)
    keywords.update(words)
    selection = select(query_array, matrix, settings.k, method=settings.method, **keywords)
    cosine = cosines(query_array, matrix) if signals is None else signals.cosine
    if judge is not None and selection.info.get("closed"):
        selection = without_copies(
            selection, judge, settings.k, fill=settings.fill_with_copies,
            relevance=keywords.get("relevance", cosine),
            objective=lambda picked: sum_vector_similarity(query_array, matrix[picked]))
    found = entries(selection, [view.id(item) for item in items], signals, texts,
                    [source_of(view.metadata(item)) for item in items], judge=judge,
                    cosine=cosine)
    key = settings.metadata_key
    out = []
    for index, entry in zip(selection.indices.tolist(), found, strict=True):
        item = items[index]
        metadata, _ = with_entry(view.metadata(item), entry, key)
        out.append(view.annotated(item, metadata, entry))
    return out


def pool_keywords(method: str, signals: PoolRelevance | None, texts: Sequence[str],
                  language: str | None = None) -> tuple[dict[str, Any], Judge | None]:
    """``select``'s keywords from the pool's texts, and the judge of copies (None for a
    method that keeps copies): what the words say (``signals``, read for a method that
    reads them: the fused relevance, the profiles, the links for a method that takes
    them) and, for a method that keeps no copy of a pick (the default), the judge's
    verdicts (``closes``), reading ``texts`` in ``language`` (None: no stemming); two
    candidates of which one continues the other (``Judge.continued``) make no link. The
    rerank body and the evaluation's rows build them here."""
    info = METHOD_INFO[method]
    options = info.own_options
    keywords = {} if signals is None else signals.select_keywords(options)
    if not info.takes_profiles:
        keywords.pop("profiles", None)
    judge = None
    if any(spec.name == "closes" for spec in options):
        judge = Judge(texts, language)
        keywords["closes"] = judge.copies()
        links = keywords.get("links")
        if links is not None:  # a text continued by another is no hop: no link
            continued = judge.continued()
            keywords["links"] = Links(np.where(continued, 0.0, links.cosine),
                                      links.beyond_chance & ~continued, links.spread)
    return keywords, judge


def _as_matrix(vectors: ArrayLike) -> Any:
    """The candidates' vectors as an array, in the store's own float type (the core works
    in float64 with the float64 query vector the adapters hand it); other numbers as
    float64; anything else as given: the core's checks name it."""
    try:
        matrix = np.asarray(vectors)
        if matrix.dtype.kind == "f":
            return matrix
        return np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        return vectors


# --- The per-query inputs --------------------------------------------------------------
#
# One query's inputs to the selection: the query, what the pool's words say, and what is
# read from each candidate.
#
# * the query: its text (``check_query_text``) and vector (``check_query_vector``);
# * the pool's signals (``pool_signals``): what the candidates' words say beyond their
#   vectors, read once per query, for a method that reads them
#   (``vrsd_core.METHOD_INFO[method].reads_words``: the one place that decides): each
#   candidate's BM25 score in the pool (fused with its cosine in pool units,
#   ``vrsd_core.pool_units``), its word profile (the method's similarity reads it) and the
#   links between candidates (``vrsd_kit.lexical.PoolLinks``, for a method that takes
#   ``links``). A new signal read from the pool's words is a field of
#   ``vrsd_kit.lexical.PoolRelevance``, a row of its ``signals`` or a keyword of
#   ``select_keywords``, and its part of each pick's entry (``parts``);
# * per candidate (``candidate_keywords``): a quality prior, an outside relevance, a group
#   label (a metadata field or a callable, through the adapter's item view) and token counts.
#
# numpy only, no framework imports.


def check_query_text(query: Any, name: str = "query") -> str:
    """``query`` if it is text an embedding model can encode, else ValueError naming ``name``.

    Refused: anything that is not a ``str`` (None, bytes, numbers); an empty or
    whitespace-only string (there is nothing to be relevant to: the store would
    return arbitrary passages, as the command line refuses too); and strings with
    an unpaired surrogate (e.g. undecodable bytes from a command line), which
    tokenizers reject with a TypeError from deep inside.
    """
    if not isinstance(query, str):
        raise ValueError(f"{name}: expected a string, got {type(query).__name__}")
    if not query.strip():
        raise ValueError(f"{name}: the query is empty or only whitespace; ask a question")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name}: not valid Unicode text (an unpaired surrogate at position {exc.start})"
        ) from None
    return query


def check_query_vector(vector: Any, name: str = "embeddings",
                       source: str = "embed_query returned") -> NDArray[np.float64]:
    """``vector`` as a float64 array, if it is a usable query vector: the one form the
    store search and the selection both take it in.

    Checked before it reaches the store, whose own errors for a NaN, empty or
    non-numeric vector come from deep inside it (a JSON error from a Chroma
    server, a TypeError, numpy's "NaN values found"). ``name`` and ``source`` word the
    message (``"query_embedding"``, ``"is"`` for a vector the caller passed).

    Raises:
        ValueError: naming ``name``, for anything but a non-empty 1-D vector of finite
            numbers that is not all zeros.
    """
    try:
        arr = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name}: {source} {type(vector).__name__}, not a vector of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name}: {source} an array of shape {arr.shape}, expected a non-empty 1-D vector")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: {source} NaN or infinite values")
    if not arr.any():
        raise ValueError(f"{name}: {source} a zero vector (cosine is undefined)")
    return arr


# --- what the pool's words say ----------------------------------------------------------------

def reads_words(method: str, *, lexical: bool, relevance: Any, query: str | None) -> bool:
    """Whether the pool's words are read: the method reads them (its declared capability,
    ``vrsd_core.METHOD_INFO[method].reads_words``: the one place this is decided),
    ``lexical`` is on, no outside ``relevance`` replaces them, and there is a query text
    (a search by vector has none)."""
    return METHOD_INFO[method].reads_words and lexical and relevance is None and bool(query)


def pool_signals(query: str, query_vector: NDArray[np.float64], vectors: Any,
                 texts: Sequence[str], language: str | None = None,
                 background: Background | Sequence[Background] | None = None
                 ) -> PoolRelevance | None:
    """What the pool's words say (``vrsd_kit.lexical.PoolRelevance``), read once for this
    query; None for vectors the core will refuse, so that its error names them (a cosine
    of them would blame the relevance instead)."""
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2 or vectors.shape[1:] != (
            query_vector.shape) or len(vectors) != len(texts) or not np.isfinite(vectors).all():
        return None
    return pool_relevance(query, texts, query_vector, vectors, language=language,
                          background=background)


# --- what is read from each candidate ---------------------------------------------------------

def check_prior_values(values: Sequence[Any], count: int, name: str = "prior"
                       ) -> NDArray[np.float64]:
    """One value per candidate, as a float64 (count,) array: a quality prior or an outside
    relevance read from the candidates; the error says which candidate's value is wrong.

    Raises:
        ValueError: naming ``name``, for a count other than ``count`` or a value
            that is not a finite real number (bools and strings included).
    """
    items = list(values)
    if len(items) != count:
        raise ValueError(f"{name}: expected {count} values (one per candidate), got {len(items)}")
    out = np.empty(count, dtype=np.float64)
    for i, value in enumerate(items):
        ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_)
        if ok:
            out[i] = float(value)
        if not ok or not np.isfinite(out[i]):
            raise ValueError(f"{name}: candidate {i} has {value!r}; expected a finite real number")
    return out


def item_values(
    spec: str | Callable[[Any], Any],
    items: Sequence[Any],
    name: str,
    *,
    metadata_of: Callable[[Any], Mapping[str, Any]],
    describe: Callable[[Any], str],
    subject: Callable[[Any], Any] = lambda item: item,
) -> list[Any]:
    """One value per item: its metadata field ``spec``, or ``spec(subject(item))``.

    ``metadata_of`` returns an item's metadata mapping, ``describe`` a short name for
    messages (an id or the start of the text), ``subject`` what a callable is given.

    Raises:
        ValueError: naming ``name``, for an item without the field.
    """
    if callable(spec):
        return [spec(subject(item)) for item in items]
    values = []
    for item in items:
        metadata = metadata_of(item)
        if spec not in metadata:
            raise ValueError(f"{name}: candidate {describe(item)!r} has no metadata field {spec!r}")
        values.append(metadata[spec])
    return values


Values = Callable[[Any, str], list[Any]]
"""``values(spec, name)``: one value per candidate for a metadata field or a callable."""


def candidate_keywords(settings: Settings, values: Values, count: int,
                       score: Callable[[Callable[..., Any]], Any] | None,
                       texts: Sequence[str]) -> dict[str, Any]:
    """``select``'s keywords read from the candidates: the method's options with a quality
    prior read per candidate, the outside relevance (a field, or ``score(fn)`` calling a
    callable the way the adapter presents it, None where there is no query text), the
    group labels and the token counts of ``texts`` for a budget."""
    out = dict(settings.options)
    if out.get("prior") is not None:
        out["prior"] = check_prior_values(values(out["prior"], "prior"), count)
    relevance = settings.relevance
    if relevance is not None:
        if callable(relevance):
            if score is None:
                raise ValueError(
                    f"{settings.name('relevance')}: a callable (query, items) -> scores needs "
                    "the query text, and this call has none; name a metadata field instead")
            raw = list(score(relevance))
        else:
            raw = values(relevance, settings.name("relevance"))
        out["relevance"] = check_prior_values(raw, count, settings.name("relevance"))
    if settings.group_by is not None:
        out["groups"] = values(settings.group_by, settings.name("group_by"))
        out["max_per_group"] = settings.max_per_group
    if settings.max_tokens is not None:
        out["max_tokens"] = settings.max_tokens
        out["token_counts"] = count_tokens(settings.token_counter, texts)
    return out


# --- The entries put on results -------------------------------------------------------
#
# The entry every returned item carries: why it was picked, under ``metadata["vrsd"]``.
#
# The one rerank body (``vrsd_kit.rerank``) builds one entry per pick (``entries``) and
# puts it on a copy of the item's metadata (``with_entry``); the caller's metadata is never
# changed, nor a value of its own replaced. numpy only, no framework imports.
#
# What the default held back, and why, in words a reader can check (``held_back_entries``):
# The default (``complement``) returns the k passages that are most relevant *together*;
# plain top-k (by the same relevance) would have returned some others. Each of those is
# *held back* for one of three reasons, and an entry says which, as the one judge of
# copies (``vrsd_kit.lexical.Judge``, the very judge the selection obeys) reads it:
#
# * ``"restates"``: it adds almost nothing to a kept passage: at least 90 % of its word
#   pairs, each weighed by how rare it is in the fetched pool, occur in that passage
#   (``share`` says how much). A copy, an overlapping chunk that lies inside a kept one,
#   the same paragraph under two titles; not two passages that share only a disclaimer.
# * ``"contains"``: a kept passage's word pairs are in it (90 % or more, weighed the same
#   way): a longer chunk around a kept one, which repeats it and adds some.
# * ``"displaced"``: top-k would have returned it, and the default preferred a passage
#   that adds more; it is attached to the pick that took its slot ("made room for"). A
#   passage without words (emoji, punctuation, empty) is never a copy: its entry says
#   ``"note": "no words to compare"``.
#
# Why word pairs at 90 %: distinct evidence passages of one question share far fewer of
# their word pairs, and templated pages that differ only in a year or a name stay below
# it (docs/inspect.md has the figures and the command); the cosine alone cannot say it.


METADATA_KEY = "vrsd"
"""The metadata entry every returned item gets (the default of each adapter's
``metadata_key``); see ``with_entry`` for a key the user's metadata already holds."""
SOURCE_KEYS = ("source", "file_path", "file_name", "url")
_ENTRY_FIELDS = frozenset({"rank", "relevance", "method"})
_warned_taken: set[str] = set()
EXCERPT = 120  # characters of a held-back passage shown in its entry
NO_WORDS = "no words to compare"


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
    the one judge of copies the selection obeyed; not given, the default's judge of all
    of ``texts``): ``id`` (the item's id from ``ids``,
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
    on a pick that a link between candidates brought in (``vrsd_core.Links``,
    ``vrsd_core/methods/complement.py``): ``id``
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


def link_note(link: Any) -> str | None:
    """A pick's ``linked_to`` entry in words: ``"linked to #1 by: Tim Burton"`` (the
    earlier pick's 1-based place, the shared words); None for a pick no link brought in
    (no entry). Every command that shows the default's picks (``vrsd search``, ``vrsd
    demo``, ``vrsd inspect``) says it with this."""
    if not isinstance(link, Mapping) or not link.get("words"):
        return None
    return f"linked to #{link.get('rank', '?')} by: {', '.join(map(str, link['words']))}"


def _held_entries(selection: Selection, ids: Sequence[Any] | None,
                  texts: Sequence[str] | None, sources: Sequence[Any] | None,
                  judge: Judge | None) -> dict[int, list[dict[str, Any]]] | None:
    """{pick: its held-back entries}, or None for a method that holds nothing back.
    Without a ``judge``, texts are judged by the default's judge of them all (no stemming)."""
    held = selection.info.get("held_back")
    if held is None:
        return None
    if judge is None and texts is not None:
        judge = Judge(texts)
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
        judge: the pool's judge of copies (``vrsd_kit.lexical.Judge`` over every fetched
            candidate's text, indexed as ``picked`` and ``held``: the one the selection
            obeyed); None: no judge, every entry is "displaced".

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
    out: dict[int, list[dict[str, Any]]] = {}
    for slot, candidate in enumerate(held):
        entry: dict[str, Any] = {"id": name(candidate), "rank": rank[candidate]}
        found = None
        if judge is not None:
            found = judge.copy_of(candidate, picked)
            if not judge.words(candidate):
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
