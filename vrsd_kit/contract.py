"""What every adapter promises its users, written once (numpy only, no framework imports).

The LangChain retriever and the LlamaIndex postprocessor both:

- annotate each returned item with one metadata entry under ``METADATA_KEY``,
  built by ``selection_metadata`` (rank, relevance, gain, method, and the
  quality prior when one was used);
- refuse query text an embedding model cannot encode (``check_query_text``);
- refuse a fetch count smaller than the selection count (``check_counts``);
- read a per-candidate quality prior through ``check_prior_values``;
- read per-candidate inputs (prior, outside relevance, group label) from each
  item's metadata or a callable (``item_values``, ``check_item_spec``,
  ``check_group_options``);
- count each candidate's tokens for a ``max_tokens`` budget with the user's
  ``token_counter`` or ``vrsd_kit.tokens.approx_token_count``
  (``check_budget_options``);
- refuse a keyword they do not know, naming the closest one they do
  (``check_model_keywords`` for pydantic models, ``keywords_checked`` for an
  ``__init__``; ``check_keywords`` underneath).
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from vrsd_core import (
    DEFAULT_METHOD,
    METHOD_ALIASES,
    METHOD_INFO,
    Selection,
    check_count,
    check_options,
    resolve_method,
)
from vrsd_core._checks import check_keywords
from vrsd_core._checks import did_you_mean as did_you_mean  # the one "did you mean" (re-exported)
from vrsd_core.callers import user_stacklevel

from .explain import held_back_entries
from .lexical import PoolRelevance, pool_relevance
from .tokens import TokenCounter, check_token_counter, count_tokens

METADATA_KEY = "vrsd"
"""The metadata entry every returned item gets (the default of each adapter's
``metadata_key``); see ``with_entry`` for a key the user's metadata already holds."""
_ENTRY_FIELDS = frozenset({"rank", "relevance", "method"})
_warned_taken: set[str] = set()


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
    """(a deep copy of ``metadata`` with ``entry`` added under ``entry_key(metadata, key)``,
    that key): the caller's metadata is never changed, nor a value of its own replaced."""
    chosen = entry_key(metadata, key)
    out = copy.deepcopy(dict(metadata))
    out[chosen] = entry
    return out, chosen


def check_metadata_key(value: Any) -> str:
    """``metadata_key`` as a non-empty str, or a ValueError naming it."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"metadata_key: expected a non-empty string, got {value!r}")
    return value


def selection_metadata(
    selection: Selection, position: int, ids: Sequence[Any] | None = None,
    words: PoolRelevance | None = None, texts: Sequence[str] | None = None,
    sources: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """The ``METADATA_KEY`` entry of the item picked at ``position`` of ``selection``::

        {
            "rank": 0,            # position in the selection order (0-based)
            "relevance": 0.71,    # what the method ranked it by: the cosine to the
                                  # query, the caller's relevance scores, or, for the
                                  # default with the words on, z(cosine) + z(lexical)
            "cosine": 0.62,       # only with the words: the cosine to the query
            "lexical": 7.3,       # only with the words: its BM25 score in the pool
            "gain": 0.71,         # the method's score for it when it was picked
            "method": "vrsd",     # the selection method
            "prior": 0.9,         # only when a quality prior was given: its value
            "held_back": [...],   # only for the default (complement): what plain top-k
                                  # would have returned that it did not, see below
        }

    ``gain`` is, for ``similarity`` the cosine; for ``vrsd`` the cosine of the sum of
    the picks so far with the query; for ``mmr`` the MMR score; for ``dpp`` and the
    default how much the pick widens the set, relevance-weighted (the determinant ratio:
    near 0 for a passage the picks already say, largest for a relevant passage unlike
    them); for the sampling and clustering methods their own score.

    ``held_back`` lists one dict per candidate plain top-k (by the same relevance)
    would have returned and the default did not (``vrsd_kit.explain``): ``id`` (the
    document's or node's id from ``ids``, else its 0-based rank among the fetched
    candidates), ``rank`` (1-based, in plain top-k), ``relation`` (``"restates"``:
    90 % or more of its word pairs are in this item, ``share`` says how many;
    ``"displaced"``: this item took its slot), ``source`` (when ``sources`` has one) and ``excerpt``
    (when ``texts`` are given; without texts every entry is ``"displaced"``). Values
    are plain Python ints, floats and strings (JSON-ready, no numpy scalars).

    Raises:
        ValueError: naming ``position`` when it is not an index into the selection.
    """
    count = len(selection)
    if isinstance(position, bool) or not isinstance(position, int | np.integer):
        raise ValueError(f"position: expected an integer, got {position!r}")
    if not 0 <= position < count:
        raise ValueError(f"position: {position} is outside the selection (0 to {count - 1})")
    return _entry(selection, int(position), words,
                  _held_entries(selection, ids, texts, sources))


def _entry(selection: Selection, at: int, words: PoolRelevance | None,
           held: dict[int, list[dict[str, Any]]] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "rank": at,
        "relevance": float(selection.relevance[at]),
        "gain": float(selection.gains[at]),
        "method": selection.method,
    }
    index = int(selection.indices[at])
    if words is not None:
        entry["cosine"] = float(words.cosine[index])
        entry["lexical"] = float(words.lexical[index])
    prior = selection.info.get("prior")
    if prior is not None:
        entry["prior"] = float(prior[at])
    if held is not None:
        entry["held_back"] = held.get(index, [])
    return entry


def _held_entries(selection: Selection, ids: Sequence[Any] | None,
                  texts: Sequence[str] | None, sources: Sequence[Any] | None,
                  ) -> dict[int, list[dict[str, Any]]] | None:
    """{pick: its held-back entries}, or None for a method that holds nothing back."""
    held = selection.info.get("held_back")
    if held is None:
        return None
    return held_back_entries(
        selection.indices.tolist(), selection.info["top_k"], held,
        None if texts is None else texts.__getitem__,
        lambda j: _candidate_name(j, ids),
        None if sources is None else sources.__getitem__,
    )


def _candidate_name(index: int, ids: Sequence[Any] | None) -> Any:
    """A candidate's id when it has one, else its rank among the fetched candidates."""
    name = None if ids is None else ids[index]
    return int(index) if name is None else name


def selection_metadata_all(
    selection: Selection, ids: Sequence[Any] | None = None,
    words: PoolRelevance | None = None, texts: Sequence[str] | None = None,
    sources: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """``selection_metadata`` for every pick, in selection order (``ids``, ``texts``,
    ``sources``: one per candidate, naming and explaining what the default held back;
    ``words``: the relevance's parts when the words were used, from
    ``words_relevance``)."""
    held = _held_entries(selection, ids, texts, sources)
    return [_entry(selection, i, words, held) for i in range(len(selection))]


SOURCE_KEYS = ("source", "file_path", "file_name", "url")


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


def words_relevance(
    method: str,
    lexical: bool,
    relevance: Any,
    query: str | None,
    texts: Callable[[], Sequence[str]],
    query_vector: Any,
    vectors: Any,
) -> PoolRelevance | None:
    """The candidates' relevance from their vectors *and* their words
    (``vrsd_kit.lexical.pool_relevance``), when it applies: ``lexical`` on, the default
    method (the other methods keep their documented relevance, the cosine), no outside
    ``relevance`` (a reranker's scores replace both parts), and a query text (a search
    by vector has no words). Else None: the method ranks by the cosine (also for vectors
    the core will refuse, so that its error names them)."""
    if not lexical or relevance is not None or method != DEFAULT_METHOD or not query:
        return None
    try:
        q = np.asarray(query_vector, dtype=np.float64)
        x = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        return None  # ragged or not numbers: the core's checks name the argument
    if q.ndim != 1 or x.ndim != 2 or x.shape[1:] != q.shape or not (
            np.isfinite(q).all() and np.isfinite(x).all()):
        return None  # likewise (a cosine of them would blame the relevance instead)
    found = texts()
    if len(found) != len(x):
        return None
    return pool_relevance(query, found, q, x)


def resolve_method_fields(
    data: Any, method_field: str = "method", options_field: str = "method_kwargs"
) -> Any:
    """For an adapter's pydantic ``mode="before"`` validator: the constructor's arguments
    with a deprecated method alias (``"vrsd_swap"``) replaced by its method and options
    (``vrsd_core.resolve_method``, which warns), so the adapter stores and reports the
    registered name. Anything else is returned as it is, for the adapter's own checks.
    """
    if not isinstance(data, dict):
        return data
    method = data.get(method_field)
    options = data.get(options_field) or {}
    if not (isinstance(method, str) and method in METHOD_ALIASES and isinstance(options, Mapping)):
        return data
    name, merged = resolve_method(method, options)
    return {**data, method_field: name, options_field: merged}


def check_model_keywords(model: type, data: Any) -> None:
    """For an adapter's pydantic ``mode="before"`` validator: ValueError for a keyword
    that is not one of ``model``'s fields (or their aliases), naming the closest field.

    Pydantic's own ``extra="forbid"`` refuses it too, but without the suggestion.
    """
    if not isinstance(data, Mapping):
        return
    fields = getattr(model, "model_fields", {})
    valid = set(fields)
    for info in fields.values():
        valid.update(a for a in (info.alias, info.validation_alias) if isinstance(a, str))
    check_keywords(data, valid, model.__name__)


_Init = TypeVar("_Init", bound=Callable[..., None])


def keywords_checked(init: _Init) -> _Init:
    """Decorate an adapter's ``__init__`` so that a misspelt keyword is a ValueError
    naming the closest parameter (``check_keywords``), not Python's TypeError."""
    params = inspect.signature(init).parameters.values()
    names = [p.name for p in params if p.name != "self" and p.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    qualname = init.__qualname__.split(".")  # [..., "VRSDRanker", "__init__"]
    owner = qualname[-2] if len(qualname) > 1 else qualname[0]

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        check_keywords(kwargs, names, owner)
        init(self, *args, **kwargs)

    return checked  # type: ignore[return-value]


def check_flag(value: Any, name: str) -> bool:
    """``value`` if it is a bool, else a ValueError naming ``name`` (no 0/1 or "no")."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


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


def check_query_vector(vector: Any) -> NDArray[np.float64]:
    """``vector`` (what ``embed_query`` returned) as a float64 array, if it is a usable
    query vector: the one form the store search and the selection both take it in.

    Checked before it reaches the store, whose own errors for a NaN, empty or
    non-numeric vector come from deep inside it (a JSON error from a Chroma
    server, a TypeError, numpy's "NaN values found").

    Raises:
        ValueError: naming ``embeddings``, for anything but a non-empty 1-D vector
            of finite numbers that is not all zeros.
    """
    try:
        arr = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"embeddings: embed_query returned {type(vector).__name__}, not a vector of numbers"
        ) from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"embeddings: embed_query returned an array of shape {arr.shape}, "
            "expected a non-empty 1-D vector"
        )
    if not np.isfinite(arr).all():
        raise ValueError("embeddings: embed_query returned NaN or infinite values")
    if not arr.any():
        raise ValueError("embeddings: embed_query returned a zero vector (cosine is undefined)")
    return arr


def check_counts(
    k: Any,
    fetch_k: Any,
    *,
    minimum: int = 1,
    k_name: str = "k",
    fetch_k_name: str = "fetch_k",
) -> tuple[int, int]:
    """(k, fetch_k) as ints >= ``minimum`` (1: the adapters' rule, see
    ``vrsd_core.check_count``) with fetch_k >= k: how many to select, and how many
    candidates to fetch to select them from.

    Bools, floats and strings are refused like in ``vrsd_core.check_count``. The
    names in the messages are ``k_name``/``fetch_k_name`` (e.g. ``top_n`` in LlamaIndex).

    Raises:
        ValueError: naming the argument at fault.

    >>> check_counts(4, 20)
    (4, 20)
    >>> check_counts(5, 3)
    Traceback (most recent call last):
    ValueError: fetch_k: must be >= k (the number of candidates to choose from), got fetch_k=3 < k=5
    >>> check_counts(2, 10, k_name="top_n")  # LlamaIndex's name
    (2, 10)
    """
    k_int = check_count(k, k_name, minimum)
    fetch_int = check_count(fetch_k, fetch_k_name, minimum)
    if fetch_int < k_int:
        raise ValueError(
            f"{fetch_k_name}: must be >= {k_name} (the number of candidates to choose "
            f"from), got {fetch_k_name}={fetch_int} < {k_name}={k_int}"
        )
    return k_int, fetch_int


def check_prior_values(values: Sequence[Any], count: int, name: str = "prior"
                       ) -> NDArray[np.float64]:
    """One quality-prior value per candidate, as a float64 (count,) array.

    For adapters that read the prior from each candidate (a metadata field, a
    callable): the error says which candidate's value is wrong, which the core's
    array-level check (``select(..., prior=...)``) cannot.

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
            value, bool | np.bool_
        )
        if ok:
            out[i] = float(value)
        if not ok or not np.isfinite(out[i]):
            raise ValueError(
                f"{name}: candidate {i} has {value!r}; expected a finite real number"
            )
    return out


# --- per-candidate inputs the adapters read from each item ----------------------------------
# A quality prior, an outside relevance and a group label all come from the candidates
# themselves, which are not known until a query: the user names a metadata field or
# gives a callable, and the adapter reads one value per candidate at query time.

Item = TypeVar("Item")
"""A candidate as an adapter gives it to the user's callables: a LangChain or Haystack
``Document``, a LlamaIndex node."""

ItemScore = Callable[[Item], float]
"""A score read from one candidate, ``(item) -> float``: a quality prior (every adapter),
the outside relevance of the Haystack ranker."""

GroupKey = Callable[[Item], Hashable]
"""The source of one candidate for ``max_per_group``, ``(item) -> label``."""

RelevanceFn = Callable[[str, list[Item]], Iterable[float]]
"""An outside relevance for one query, ``(query, items) -> scores``, one score per item
in their order (e.g. a cross-encoder's)."""


def check_item_spec(spec: Any, name: str, callable_form: str) -> None:
    """ValueError naming ``name`` unless ``spec`` is None, a metadata field name or a
    callable (``callable_form`` says its signature in the message)."""
    if spec is None or isinstance(spec, str) or callable(spec):
        return
    raise ValueError(
        f"{name}: give the name of a metadata field or a callable {callable_form} "
        f"(the candidates are not known in advance), got {spec!r}"
    )


def item_values(
    spec: str | Callable[[Any], Any],
    items: Sequence[Any],
    name: str,
    *,
    metadata_of: Callable[[Any], Mapping[str, Any]],
    describe: Callable[[Any], str],
) -> list[Any]:
    """One value per item: its metadata field ``spec``, or ``spec(item)``.

    ``metadata_of`` returns an item's metadata mapping, ``describe`` a short name
    for messages (an id or the start of the text).

    Raises:
        ValueError: naming ``name``, for an item without the field.
    """
    if callable(spec):
        return [spec(item) for item in items]
    values = []
    for item in items:
        metadata = metadata_of(item)
        if spec not in metadata:
            raise ValueError(
                f"{name}: candidate {describe(item)!r} has no metadata field {spec!r}"
            )
        values.append(metadata[spec])
    return values


def selection_inputs(
    options: Mapping[str, Any],
    count: int,
    values: Callable[[Any, str], list[Any]],
    *,
    relevance: Any = None,
    score: Callable[[Callable[..., Any]], Any] | None = None,
    words: PoolRelevance | None = None,
    group_by: Any = None,
    max_per_group: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    texts: Callable[[], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """``select``'s keyword arguments for one query's ``count`` candidates: the method's
    ``options`` with a quality prior read per candidate, plus the outside relevance,
    the group labels and the token budget when given.

    With ``max_tokens``, ``texts()`` gives the candidates' texts (what the LLM will
    read) and ``token_counter`` (default ``approx_token_count``) counts each.

    ``values(spec, name)`` gives one value per candidate for a metadata field name or a
    per-item callable (``item_values`` in the adapter's terms); ``score(fn)`` calls a
    relevance callable the way the adapter presents it, e.g. ``fn(query, documents)``.
    Prior and relevance values are checked by ``check_prior_values``. ``words``
    (``words_relevance``): its two signals are the relevance, fused by the core, and
    its word profiles the candidates' ``profiles`` (the default's similarity reads them).
    """
    out = dict(options)
    if words is not None:
        out["relevance"] = words.signals
        out["profiles"] = words.profiles
    if out.get("prior") is not None:
        out["prior"] = check_prior_values(values(out["prior"], "prior"), count)
    if relevance is not None:
        if callable(relevance):
            if score is None:
                raise ValueError("relevance: this call has no query to give the callable")
            raw = list(score(relevance))
        else:
            raw = values(relevance, "relevance")
        out["relevance"] = check_prior_values(raw, count, "relevance")
    if group_by is not None:
        out["groups"] = values(group_by, "group_by")
        out["max_per_group"] = max_per_group
    if max_tokens is not None:
        if texts is None:
            raise ValueError("max_tokens: this call has no candidate texts to count")
        out["max_tokens"] = max_tokens
        out["token_counts"] = count_tokens(check_token_counter(token_counter), texts())
    return out


def check_method_options(method: Any, options: Mapping[str, Any], item_form: str) -> None:
    """An adapter's method settings, checked once (``vrsd_core.check_options``, cached)
    plus where a ``prior`` comes from: a metadata field name or a callable
    ``item_form`` (e.g. ``"(Document) -> float"``), read per candidate at query time.

    Raises:
        ValueError: naming the method, the option or ``prior``.
    """
    if "profiles" in options:
        raise ValueError("profiles: built per query from the candidates' words (lexical=True), "
                         "not a setting")
    check_options(method, options)
    check_item_spec(options.get("prior"), "prior", item_form)


def check_relevance_spec(method: str, relevance: Any, callable_form: str) -> None:
    """ValueError for an outside ``relevance`` that is not a metadata field name or a
    callable (``callable_form`` says its signature), or given to a method that takes
    none (``vrsd``, ``vrsd_exact``: their objective is the geometry itself)."""
    check_item_spec(relevance, "relevance", callable_form)
    if relevance is not None and not METHOD_INFO[method].takes_relevance:
        raise ValueError(
            f"relevance: method {method!r} scores candidates by their vectors against the "
            "query; it takes no outside relevance"
        )


def check_group_options(group_by: Any, max_per_group: Any) -> int | None:
    """``max_per_group`` as an int >= 1, or None when there is no cap; both or neither
    must be given (a label without a cap, or a cap without labels, does nothing).

    Raises:
        ValueError: naming the argument at fault.
    """
    check_item_spec(group_by, "group_by", "(item) -> label")
    cap = _optional_count(max_per_group, "max_per_group", 1)
    if (group_by is None) != (cap is None):
        missing = "max_per_group" if cap is None else "group_by"
        raise ValueError(
            f"{missing}: group_by (a metadata field or a callable giving each candidate's "
            "source) and max_per_group (the most picks per source) go together"
        )
    return cap


def check_budget_options(max_tokens: Any, token_counter: Any) -> tuple[int | None, TokenCounter]:
    """(``max_tokens`` as an int >= 1 or None for no budget (a budget below one token
    is refused like ``k=0``: it could only return nothing), the counter to use:
    ``token_counter`` or, for None, ``vrsd_kit.tokens.approx_token_count``).

    A counter without a budget is accepted (a call may set ``max_tokens`` later).

    Raises:
        ValueError: naming the argument at fault.
    """
    budget = _optional_count(max_tokens, "max_tokens", 1)
    return budget, check_token_counter(token_counter)


def _optional_count(value: Any, name: str, minimum: int) -> int | None:
    """None for None, else ``vrsd_core.check_count``."""
    return None if value is None else check_count(value, name, minimum)
