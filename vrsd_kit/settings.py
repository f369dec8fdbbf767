"""The settings of a rerank, declared once as data and checked once into a frozen object.

``SETTINGS`` lists every setting an adapter maps its fields onto (its default, how one
value is checked, what it means); ``build_settings`` checks a set of values against it,
then what ties them together (``fetch_k >= k``, the method's options, an outside
relevance only for a method that takes one, ``group_by`` with ``max_per_group``), and
returns a frozen ``Settings``. Every framework class builds its ``Settings`` when it is
constructed and again at every assignment to one of its fields (``SettingsFields``): a
bad value is a ValueError naming the adapter's own field at the assignment, and the
object keeps its previous, valid settings. Nothing is validated by running a method.

numpy only, no framework imports (the mixin below works on pydantic models and plain
classes alike without importing pydantic).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar

from vrsd_core import (
    DEFAULT_METHOD,
    METHOD_INFO,
    MethodName,
    check_count,
    check_options,
)
from vrsd_core._prepare import check_keywords
from vrsd_core._prepare import did_you_mean as did_you_mean  # the one "did you mean" (re-exported)
from vrsd_core.registry import method_hint

from .lexical import Background, check_background, check_language
from .stores import Reembed, check_reembed
from .tokens import TokenCounter, check_token_counter

METADATA_KEY = "vrsd"  # the default of ``metadata_key`` (vrsd_kit.rerank.METADATA_KEY)
DEFAULT_FETCH_K = 50
"""How many candidates every entry point fetches and chooses from when none is given (the
adapters, ``vrsd search``, ``vrsd inspect``, ``vrsd demo``): chosen by
``benchmarks/fetch_k.py`` (quality) and ``benchmarks/fetch_k_cost.py`` (cost), see
docs/evaluation.md."""

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


# --- one value, checked on its own --------------------------------------------------------

def check_flag(value: Any, name: str) -> bool:
    """``value`` if it is a bool, else a ValueError naming ``name`` (no 0/1 or "no")."""
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return value


def check_metadata_key(value: Any, name: str = "metadata_key") -> str:
    """``metadata_key`` as a non-empty str, or a ValueError naming it."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name}: expected a non-empty string, got {value!r}")
    return value


def check_item_spec(spec: Any, name: str, callable_form: str) -> Any:
    """``spec`` if it is None, a metadata field name or a callable, else a ValueError
    naming ``name`` (``callable_form`` says the callable's signature)."""
    if spec is None or isinstance(spec, str) or callable(spec):
        return spec
    raise ValueError(
        f"{name}: give the name of a metadata field or a callable {callable_form} "
        f"(the candidates are not known in advance), got {spec!r}"
    )


def _optional_count(value: Any, name: str) -> int | None:
    return None if value is None else check_count(value, name)


def _method(value: Any, name: str) -> str:
    if isinstance(value, str) and value in METHOD_INFO:
        return value
    raise ValueError(f"{name}: unknown method {value!r}; choose from {sorted(METHOD_INFO)}"
                     f"{method_hint(str(value))}")


class FrozenDict(dict[str, Any]):
    """A copy of keyword arguments that cannot be changed (the settings' options and
    search arguments); it pickles and copies as a dict does."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("settings are frozen: build new ones (vrsd_kit.settings.build_settings)")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"{name}: expected a dict of keyword arguments, got {value!r}")
    return FrozenDict(value)  # a copy the caller cannot change


def _counter(value: Any, name: str) -> TokenCounter:
    return check_token_counter(value)


def _reembed(value: Any, name: str) -> Reembed:
    return check_reembed(value)


@dataclass(frozen=True)
class Setting:
    """One setting: its name in ``Settings``, its default, how one value is checked
    (``check(value, name) -> value``, a ValueError naming ``name``), its meaning."""

    name: str
    default: Any
    check: Callable[[Any, str], Any]
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting("k", 4, check_count, "how many items to return (>= 1)"),
    Setting("fetch_k", DEFAULT_FETCH_K, _optional_count,
            "how many candidates to fetch and choose from (>= k); None for a reranker, "
            "whose candidates are given"),
    Setting("method", DEFAULT_METHOD, _method,
            "a vrsd_core.METHOD_INFO name"),
    Setting("options", FrozenDict(), _mapping,
            "the method's options (vrsd_core.method_defaults); prior may name a metadata "
            "field or be a callable (item) -> float"),
    Setting("relevance", None,
            lambda v, name: check_item_spec(v, name, "(query, items) -> scores"),
            "an outside relevance: a numeric metadata field or (query, items) -> scores; "
            "None: the cosine, or the words' fused relevance for a method that reads them"),
    Setting("group_by", None, lambda v, name: check_item_spec(v, name, "(item) -> label"),
            "each candidate's source for max_per_group: a metadata field or (item) -> label"),
    Setting("max_per_group", None, _optional_count, "at most this many picks per group_by label"),
    Setting("max_tokens", None, _optional_count,
            "a token budget: the picks' texts' token counts sum to at most this"),
    Setting("token_counter", None, _counter,
            "text -> int for max_tokens; None: vrsd_kit.tokens.approx_token_count"),
    Setting("lexical", True, check_flag,
            "a method that reads the words (METHOD_INFO[method].reads_words) reads them; "
            "False: the vectors only"),
    Setting("language", None, check_language,
            "the texts' language, whose Snowball stemmer the words read with (an ISO 639-1 "
            "code or its name: 'en', 'german'; vrsd_kit.lexical.LANGUAGES); None: the words "
            "as written"),
    Setting("background", None, check_background,
            "what is common outside the pool (vrsd_kit.lexical.Background, e.g. "
            "Background.of_texts(your documents), or a list of them; () for none); None: the "
            "language's common words (Background.of_language: wordfreq's list, extra "
            "background; with no language, the common words of ten languages, shipped)"),
    Setting("fill_with_copies", False, check_flag,
            "the default keeps no copy of a pick (vrsd_kit.lexical.Judge); when only copies are "
            "left it returns fewer than k (entry 'stopped': 'restatements'); True: the copies "
            "make up k (each entry 'copy_of' names the pick it repeats)"),
    Setting("metadata_key", METADATA_KEY, check_metadata_key,
            "the metadata key of the entry on each result"),
    Setting("reembed", "warn", _reembed,
            "when the store's vectors cannot be read: 'warn', 'allow' or 'refuse'"),
    Setting("search", FrozenDict(), _mapping,
            "the store's own search arguments (e.g. a filter), passed through"),
)
"""Every setting, in one table: the adapters, ``build_settings`` and the tests read it."""

DEFAULTS: Mapping[str, Any] = FrozenDict({s.name: s.default for s in SETTINGS})


@dataclass(frozen=True)
class Settings:
    """One rerank's settings, checked (``build_settings``); see ``SETTINGS`` for each.

    Frozen: a change is a new object (``build_settings`` again, or ``with_counts``).
    """

    k: int
    fetch_k: int | None
    method: MethodName
    options: Mapping[str, Any]
    relevance: str | RelevanceFn[Any] | None
    group_by: str | GroupKey[Any] | None
    max_per_group: int | None
    max_tokens: int | None
    token_counter: TokenCounter
    lexical: bool
    language: str | None
    background: Background | tuple[Background, ...] | None
    fill_with_copies: bool
    metadata_key: str
    reembed: Reembed
    search: Mapping[str, Any]
    names: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The adapter's field name of each setting it renames (``{"k": "top_n"}``), for
    messages."""

    def name(self, setting: str) -> str:
        """The adapter's name of ``setting``."""
        return self.names.get(setting, setting)

    def values(self) -> dict[str, Any]:
        """The settings as ``build_settings`` takes them."""
        return {s.name: getattr(self, s.name) for s in SETTINGS}

    def with_counts(self, k: Any = None, fetch_k: Any = None) -> Settings:
        """These settings with ``k`` and/or ``fetch_k`` replaced, checked (a call's
        override of the counts only: nothing else needs checking again)."""
        k_int = self.k if k is None else check_count(k, self.name("k"))
        fetch = self.fetch_k if fetch_k is None else check_count(fetch_k, self.name("fetch_k"))
        _check_fetch(k_int, fetch, self.name)
        return replace(self, k=k_int, fetch_k=fetch)


def build_settings(values: Mapping[str, Any], *, names: Mapping[str, str] | None = None,
                   ) -> Settings:
    """``values`` (settings by their ``SETTINGS`` name; the others take their defaults)
    checked into a frozen ``Settings``.

    ``names`` renames settings in messages to the adapter's fields (``{"k": "top_n",
    "options": "method_kwargs"}``).

    Raises:
        ValueError: naming the setting (by the adapter's name) at fault; for a name that
            is not a setting, the closest that is.
    """
    renamed = FrozenDict(names or {})

    def name(setting: str) -> str:
        return renamed.get(setting, setting)

    check_keywords(values, DEFAULTS, "the settings")
    checked = {s.name: s.check(values.get(s.name, s.default), name(s.name)) for s in SETTINGS}
    method = checked["method"]
    check_method_options(method, checked["options"], name("options"))
    if checked["relevance"] is not None and not METHOD_INFO[method].takes_relevance:
        raise ValueError(
            f"{name('relevance')}: method {method!r} scores candidates by their vectors "
            "against the query; it takes no outside relevance")
    if (checked["group_by"] is None) != (checked["max_per_group"] is None):
        missing = "max_per_group" if checked["max_per_group"] is None else "group_by"
        raise ValueError(
            f"{name(missing)}: group_by (a metadata field or a callable giving each "
            "candidate's source) and max_per_group (the most picks per source) go together")
    _check_fetch(checked["k"], checked["fetch_k"], name)
    return Settings(**checked, names=renamed)


def _check_fetch(k: int, fetch_k: int | None, name: Callable[[str], str]) -> None:
    if fetch_k is not None and fetch_k < k:
        raise ValueError(
            f"{name('fetch_k')}: must be >= {name('k')} (the number of candidates to choose "
            f"from), got {name('fetch_k')}={fetch_k} < {name('k')}={k}")


def check_method_options(method: str, options: Mapping[str, Any],
                         name: str = "method_kwargs") -> None:
    """A method's options: names and values (``vrsd_core.check_options``), and where a
    ``prior`` comes from (a metadata field name or a callable ``(item) -> float``, read
    per candidate at query time).

    Raises:
        ValueError: naming the method, the option or ``prior``.
    """
    for read in ("profiles", "links"):
        if read in options:
            raise ValueError(f"{name}: {read} are read per query from the candidates' words "
                             "(lexical=True), not a setting")
    if "closes" in options:
        raise ValueError(f"{name}: closes is the judge of copies the rerank body passes "
                         "(fill_with_copies says what becomes of copies), not a setting")
    check_options(method, options)
    check_item_spec(options.get("prior"), "prior", "(item) -> float")


def check_counts(k: Any, fetch_k: Any, *, k_name: str = "k",
                 fetch_k_name: str = "fetch_k") -> tuple[int, int]:
    """(k, fetch_k) as ints >= 1 with fetch_k >= k: how many to select, and how many
    candidates to fetch to select them from.

    Raises:
        ValueError: naming the argument at fault.

    >>> check_counts(4, 20)
    (4, 20)
    >>> check_counts(5, 3)
    Traceback (most recent call last):
    ValueError: fetch_k: must be >= k (the number of candidates to choose from), got fetch_k=3 < k=5
    """
    k_int, fetch = check_count(k, k_name), check_count(fetch_k, fetch_k_name)
    _check_fetch(k_int, fetch, {"k": k_name, "fetch_k": fetch_k_name}.__getitem__)
    return k_int, fetch


# --- keywords -------------------------------------------------------------------------------

def check_model_keywords(model: type, data: Any) -> None:
    """For an adapter's pydantic ``mode="before"`` validator: ValueError for a keyword
    that is not one of ``model``'s fields (or their aliases), naming the closest field.

    Pydantic's own ``extra="forbid"`` refuses it too, but without the suggestion.
    """
    if not isinstance(data, Mapping):
        return
    model_fields = getattr(model, "model_fields", {})
    valid = set(model_fields)
    for info in model_fields.values():
        valid.update(a for a in (info.alias, info.validation_alias) if isinstance(a, str))
    check_keywords(data, valid, model.__name__)


_Init = TypeVar("_Init", bound=Callable[..., None])


def keywords_checked(init: _Init) -> _Init:
    """Decorate an adapter's ``__init__`` so that a misspelt keyword is a ValueError
    naming the closest parameter (``check_keywords``), not Python's TypeError."""
    params = inspect.signature(init).parameters.values()
    names = [p.name for p in params if p.name != "self" and p.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    qualname = init.__qualname__.split(".")  # [..., "DiverseRanker", "__init__"]
    owner = qualname[-2] if len(qualname) > 1 else qualname[0]

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        check_keywords(kwargs, names, owner)
        init(self, *args, **kwargs)

    return checked  # type: ignore[return-value]


# --- a framework class whose fields are settings --------------------------------------------

_KEPT = "_vrsd_settings"  # where the checked settings live (the instance's __dict__)


@dataclass(frozen=True)
class _Kept:
    settings: Any
    dicts: tuple[tuple[str, dict[str, Any]], ...]
    """A copy of each dict-valued field as checked: a dict changed in place (LangChain's
    ``retriever.search_kwargs["filter"] = ...``) is seen, and checked, at the next call."""


class SettingsFields:
    """Mixin: a framework class whose fields (``SETTING_FIELDS``) are checked into one
    frozen settings object when it is built and at every assignment.

    The class writes ``_checked_settings(fields) -> its settings`` (the mapping of its
    fields onto ``build_settings``, plus what it checks of its own, e.g. the store) and
    calls ``_keep_settings()`` once constructed (a pydantic ``model_validator(mode=
    "after")``, or the end of ``__init__``). Then ``obj.k = 0`` runs
    ``_checked_settings`` on the fields as they would be, and only if it succeeds stores
    the value and the new settings: a ValueError names the field, and the object keeps
    its previous value and settings. ``settings()`` gives the kept settings to a call.
    """

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset()

    def _checked_settings(self, fields: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def _field_values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.SETTING_FIELDS}

    def _keep(self, values: Mapping[str, Any]) -> _Kept:
        checked = self._checked_settings(values)
        dicts = tuple((name, dict(value)) for name, value in values.items()
                      if isinstance(value, dict))
        return _Kept(checked, dicts)

    def _keep_settings(self) -> None:
        """Check the fields as they are and keep the settings (at construction)."""
        vars(self)[_KEPT] = self._keep(self._field_values())

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.SETTING_FIELDS and _KEPT in vars(self):
            kept = self._keep({**self._field_values(), name: value})  # raises: nothing changes
            super().__setattr__(name, value)
            vars(self)[_KEPT] = kept
            return
        super().__setattr__(name, value)

    def settings(self) -> Any:
        """The settings of the fields as they are (checked when they were set): what
        ``_checked_settings`` returned (the adapter's own type)."""
        kept: _Kept | None = vars(self).get(_KEPT)
        if kept is None:
            owner = type(self).__name__
            raise RuntimeError(f"{owner}: its settings were never checked (built without its "
                               f"validators, e.g. by pydantic's model_construct); build it "
                               f"with {owner}(...)")
        if any(_changed(getattr(self, name), seen) for name, seen in kept.dicts):
            kept = self._keep(self._field_values())  # a dict field changed in place
            vars(self)[_KEPT] = kept
        return kept.settings


def _changed(value: Any, seen: dict[str, Any]) -> bool:
    """``value`` differs from ``seen``; a value that cannot say (an array in a filter)
    counts as changed, and is checked again."""
    try:
        return bool(value != seen)
    except (TypeError, ValueError):
        return True


class SettingsModel(SettingsFields):
    """``SettingsFields`` for a pydantic model: ``model_copy(update=...)`` goes through the
    same check as an assignment (pydantic would store the values unchecked)."""

    def __setattr__(self, name: str, value: Any) -> None:
        known = type(self).model_fields  # type: ignore[attr-defined]
        if not name.startswith("_") and name not in known:  # pydantic's error has no hint
            raise ValueError(f"{name}: not a field of {type(self).__name__}"
                             f"{did_you_mean(name, known)}")
        super().__setattr__(name, value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False
                   ) -> Any:
        copied = super().model_copy(deep=deep)  # type: ignore[misc]
        for name, value in (update or {}).items():
            setattr(copied, name, value)
        return copied
