"""One query's inputs to the selection: the query, what the pool's words say, and what is
read from each candidate.

* the query: its text (``check_query_text``) and vector (``check_query_vector``);
* the pool's signals (``pool_signals``): what the candidates' words say beyond their
  vectors, read once per query, for a method that reads them
  (``vrsd_core.METHOD_INFO[method].reads_words``: the one place that decides): each
  candidate's BM25 score in the pool (fused with its cosine in pool units,
  ``vrsd_core.pool_units``), its word profile (the method's similarity reads it) and the
  links between candidates (``vrsd_kit.lexical.PoolLinks``, for a method that takes
  ``links``). A new signal read from the pool's words is a field of
  ``vrsd_kit.lexical.PoolRelevance``, a row of its ``signals`` or a keyword of
  ``select_keywords``, and its part of each pick's entry (``parts``);
* per candidate (``candidate_keywords``): a quality prior, an outside relevance, a group
  label (a metadata field or a callable, through the adapter's item view) and token counts.

numpy only, no framework imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from vrsd_core import METHOD_INFO

from .lexical import PoolRelevance, pool_relevance
from .tokens import count_tokens

if TYPE_CHECKING:
    from .settings import Settings


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
                 texts: Sequence[str]) -> PoolRelevance | None:
    """What the pool's words say (``vrsd_kit.lexical.PoolRelevance``), read once for this
    query; None for vectors the core will refuse, so that its error names them (a cosine
    of them would blame the relevance instead)."""
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2 or vectors.shape[1:] != (
            query_vector.shape) or len(vectors) != len(texts) or not np.isfinite(vectors).all():
        return None
    return pool_relevance(query, texts, query_vector, vectors)


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
