"""``select`` and ``select_batch``: one call shape for every method, and ``Selection``,
the result type every method returns."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._prepare import (
    Given,
    Prepared,
    check_int,
    check_k,
    checked_closes,
    checked_links,
    did_you_mean,
    prepare,
    with_word_profiles,
)
from ._prior import PRIOR_DEFAULTS, apply_prior, checked_prior_weight, refuse_prior
from .methods._common import Picked, cosine_from_parts, run_in_chunks, stopped_short
from .options import OptionSpec
from .registry import (
    DEFAULT_METHOD,
    METHOD_INFO,
    MethodInfo,
    MethodName,
    method_info,
)

# --- The result -----------------------------------------------------------------------

class _Computed:
    """A float field set to a value or to a zero-argument function that computes it on
    first read (then kept): a result can carry a figure most callers never read
    without paying for it on every call."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: object, objtype: type | None = None) -> float:
        if obj is None:
            raise AttributeError(self.key[1:])  # a required field: no default
        value = obj.__dict__[self.key]
        if callable(value):
            value = obj.__dict__[self.key] = float(value())
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: float | Callable[[], float]) -> None:
        obj.__dict__[self.key] = value


@dataclass(frozen=True)
class Selection:
    """What a method picked, in the order it picked it.

    Attributes:
        indices: candidate positions in selection order (the ranking users see).
        gains: per pick, the method's objective gain when that item was added
            (for ``vrsd``: the sum-vector cosine after the step).
        relevance: per pick, the item's relevance (cosine to the query unless
            ``relevance=`` was given), aligned with ``indices``.
        objective: sum-vector similarity cos(sum of selected, query) of the
            final set, whatever the method; 0.0 for an empty selection. Computed
            when first read (most callers never read it), from a copy of the
            picked vectors taken at selection: later changes to the caller's
            arrays do not reach it.
        method: the method name.
        params: the options the method ran with, defaults filled in.
        info: method-specific facts about the run (e.g. ``filled_by_relevance``
            for ``dpp``, ``swaps`` for ``vrsd`` with ``refine="swap"``). With a
            per-group cap (``groups`` + ``max_per_group``): ``max_per_group``,
            ``feasible`` (the most picks the cap allows) and, when the cap kept
            the selection below min(k, n), ``stopped == "max_per_group"``. With a
            token budget (``token_counts`` + ``max_tokens``): ``max_tokens``,
            ``tokens_used`` and, when the budget cut the selection short,
            ``stopped == "max_tokens"``.
    """

    indices: NDArray[np.int64]
    gains: NDArray[np.float64]
    relevance: NDArray[np.float64]
    if TYPE_CHECKING:  # what callers see: a float (the core may pass a function)
        objective: float
    else:  # a required float field, computed on first read when given as a function
        objective: _Computed = _Computed()
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (lists and floats), e.g. for JSON."""
        return {
            "indices": self.indices.tolist(),
            "gains": self.gains.tolist(),
            "relevance": self.relevance.tolist(),
            "objective": self.objective,
            "method": self.method,
            "params": dict(self.params),
            "info": dict(self.info),
        }


# --- The calls ------------------------------------------------------------------------

def method_options(method: str) -> tuple[OptionSpec, ...]:
    """The options a method takes, declared as data (name, kind, range or choices,
    default; ``vrsd_core.options.OptionSpec``): its own, then the prior's and the
    profiles' when it takes them."""
    return method_info(method).options


def method_defaults(method: str) -> dict[str, Any]:
    """The options a method accepts, with their defaults."""
    return dict(_option_defaults(method_info(method).name))


@functools.cache
def _option_defaults(method: str) -> dict[str, Any]:
    """A registered method's options and their defaults (callers copy before handing
    it out)."""
    return {spec.name: spec.default for spec in METHOD_INFO[method].options}


def _refuse_unknown(info: MethodInfo, options: Mapping[str, Any]) -> None:
    """ValueError naming the first option ``info``'s method does not take."""
    params = _option_defaults(info.name)
    unknown = sorted(set(options) - set(params))
    if unknown:
        refuse_prior(info, options)  # a prior given to a method without one: say so
        allowed = ", ".join(sorted(params)) or "none"
        raise ValueError(
            f"{unknown[0]}: not an option of method {info.name!r} (its options: {allowed})"
            f"{did_you_mean(unknown[0], params)}"
        )


def check_options(method: str, options: Mapping[str, Any]) -> None:
    """Raise now the ValueError that ``select(..., method=method, **options)`` would
    raise on any input: an unknown method, a name that is not one of the method's
    options (``select``'s own arguments such as ``relevance`` or ``normalize``
    included), or an option value outside its declared range or choices
    (``method_options``). Nothing runs: the values are checked against the
    declarations. A per-candidate option (``prior``, ``profiles``) is one row per
    candidate, so only its place is checked here (the method must take it); its
    values are checked against the candidates at query time.
    """
    info = method_info(method)
    _refuse_unknown(info, options)
    for spec in info.options:
        if spec.name in options:
            spec.check(options[spec.name])
    if info.takes_prior:
        checked_prior_weight(options)


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (bools, floats and strings refused), or a
    ValueError naming ``name``: the check adapters apply to k, fetch_k, top_n, top_k.

    The adapters' and the command line's one rule: a count below 1 is refused (asking
    a retriever for nothing is a mistake, not a query); ``select(k=0)`` itself returns
    an empty selection, as the core's semantics say."""
    return check_int(value, name, low=minimum)


def _setup(
    method: object, prep: Prepared, relevance: Any, options: dict[str, Any], batched: bool
) -> tuple[MethodInfo, Prepared, dict[str, Any], dict[str, Any], np.ndarray | None]:
    """Before a run: the method's record, the problem it runs on, the method's own
    options, the parameters the Selection shows, and the prior (None without one).

    Two per-candidate options act on the problem before the method runs, each in its
    named step, only when given: the quality prior blends into the relevance
    (``_prior.apply_prior``), and ``profiles`` give the similarity between candidates its
    own geometry (``_prepare.with_word_profiles``: ``Prepared.similarity``)."""
    info = METHOD_INFO.get(method) if isinstance(method, str) else None
    if info is None:  # an unknown name: method_info raises the ValueError naming method
        info = method_info(method)
    if options:
        _refuse_unknown(info, options)
    if relevance is not None and not info.takes_relevance:
        raise ValueError(
            f"relevance: method {info.name!r} scores candidates by their vectors against "
            "the query; it takes no outside relevance"
        )
    params = _option_defaults(info.name)
    if not options:
        return info, prep, options, params, None
    shown = _shown_params({**params, **options})
    run_prep, prior = prep, None
    if not options.keys().isdisjoint(PRIOR_DEFAULTS):
        # the method runs on the blended relevance; the Selection reports the plain one
        run_prep, options, prior = apply_prior(prep, options, batched=batched)
    profiles = options.get("profiles")
    if profiles is not None:
        run_prep = with_word_profiles(run_prep, profiles, batched=batched)
    own = {name: value for name, value in options.items() if name != "profiles"}
    if own.get("links") is not None:  # checked once; a batch run in chunks cuts them per query
        own["links"] = checked_links(own["links"], prep.batch, prep.n, prep.valid,
                                     batched=batched)
    if own.get("closes") is not None:
        own["closes"] = checked_closes(own["closes"], prep.batch, prep.n, batched=batched)
    return info, run_prep, own, shown, prior


# option arrays (and the judge's function) a Selection shows as "given"
_PER_CANDIDATE = ("prior", "profiles", "links", "closes")


def _shown_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` for the Selection: a per-candidate array (the prior, ``complement``'s
    profiles) is shown as ``"given"``."""
    arrays = [name for name in _PER_CANDIDATE if params.get(name) is not None]
    if arrays:
        return {**params, **dict.fromkeys(arrays, "given")}
    return params


def _finish(
    prep: Prepared, k: int, picked: list[Picked], info: MethodInfo, params: dict[str, Any],
    prior: np.ndarray | None,
) -> list[Selection]:
    """After a run: the prior, cap and budget reports, and one Selection per query."""
    if prior is not None:
        for b, p in enumerate(picked):
            p.info["prior"] = prior[b, p.indices].tolist()
    if prep.cap is not None:
        _report_cap(prep, k, picked)
    if prep.budget is not None:
        _report_budget(prep, k, picked)
    return [_to_selection(prep, b, p, info.name, params) for b, p in enumerate(picked)]


def _report_cap(prep: Prepared, k: int, picked: list[Picked]) -> None:
    """``info`` of a capped run: ``max_per_group``, ``feasible`` (how many picks the
    cap allows at most) and, when that is what kept the selection below
    min(k, n), ``stopped = "max_per_group"`` (``stopped_short``)."""
    if prep.feasible is None:
        raise RuntimeError("a capped run without its feasible counts")
    feasible = prep.feasible.tolist()
    for b, p in enumerate(picked):
        p.info["max_per_group"] = prep.cap
        p.info["feasible"] = int(feasible[b])
        if prep.budget is None and (stopped := stopped_short(prep, k, b, p.indices)):
            p.info["stopped"] = stopped


def _report_budget(prep: Prepared, k: int, picked: list[Picked]) -> None:
    """``info`` of a budgeted run: ``max_tokens``, ``tokens_used`` and, when the
    budget is what kept the selection below min(k, n) (and below what a cap
    allows), ``stopped = "max_tokens"``: fewer picks, and some candidate left
    out does not fit the tokens left; else, with a cap that allows fewer than min(k, n),
    ``stopped = "max_per_group"`` (``stopped_short``)."""
    if prep.tokens is None or prep.budget is None:
        raise RuntimeError("a budgeted run without its token counts")
    for b, p in enumerate(picked):
        p.info["max_tokens"] = prep.budget
        p.info["tokens_used"] = int(prep.tokens[b, p.indices].sum())
        if stopped := stopped_short(prep, k, b, p.indices):
            p.info["stopped"] = stopped


def _to_selection(
    prep: Prepared, b: int, picked: Picked, method: str, params: dict[str, Any]
) -> Selection:
    idx = picked.indices
    objective: float | functools.partial[float] = 0.0
    if picked.objective is not None:
        objective = picked.objective
    elif len(idx):
        # read when asked (see Selection.objective), from copies: the caller's arrays
        # may change after the call
        q = prep.q[b] if prep.normalize else prep.q[b].copy()  # normalised: our own
        objective = functools.partial(_objective, prep.X[b].take(idx, axis=0), idx,
                                      prep.scale[b] if prep.normalize else None,
                                      q, float(prep.q_norm[b]))
    return Selection(
        indices=idx,
        gains=picked.gains,
        relevance=prep.rel[b].take(idx),  # float64, a new array
        objective=objective,  # type: ignore[arg-type]  # a float or, lazily, its function
        method=method,
        params=dict(params),
        info=picked.info,
    )


def _objective(rows: np.ndarray, idx: np.ndarray, scale: np.ndarray | None, q: np.ndarray,
               q_norm: float) -> float:
    """cos(sum of the working vectors, query): ``rows`` the picked candidates as given
    (candidates ``idx``), ``scale`` every candidate's 1/length when normalising (None:
    as they are)."""
    v = rows.sum(axis=0, dtype=np.float64) if scale is None else scale.take(idx).dot(rows)
    return float(cosine_from_parts(v.dot(q), v.dot(v), q_norm))


def select(
    query: ArrayLike,
    candidates: ArrayLike,
    k: int,
    *,
    method: MethodName = DEFAULT_METHOD,
    relevance: ArrayLike | None = None,
    normalize: bool = True,
    groups: ArrayLike | Sequence[Hashable] | None = None,
    max_per_group: int | None = None,
    max_tokens: int | None = None,
    token_counts: ArrayLike | None = None,
    **options: Any,
) -> Selection:
    """Choose ``k`` of ``n`` candidate vectors for one query.

    Args:
        query: (d,) query vector.
        candidates: (n, d) candidate vectors, usually the store's top-n in its order.
        k: how many to choose. k >= n returns all n (in selection order);
            k <= 0 or no candidates returns an empty selection.
        method: one of ``METHOD_INFO`` (docs/methods.md); default ``DEFAULT_METHOD``, the
            project's recommendation, as in every adapter and the command line.
        relevance: optional (n,) relevance, one score per candidate, replacing
            cosine-to-query for relevance-based methods (not accepted by
            ``vrsd``/``vrsd_exact``). Several signals (the cosine and a lexical score,
            one row each) are fused first with ``vrsd_core.pool_units``; a relevance
            of several rows is refused.
        normalize: L2-normalise query and candidates first (cosine geometry).
        groups: optional (n,) hashable labels, one per candidate (e.g. the source
            document of each chunk; strings, ints, ...; not None).
        max_per_group: with ``groups``, at most this many picks share a label
            (an integer >= 1; None = no cap), for every method. When the cap
            leaves fewer than k candidates pickable, fewer come back and
            ``info["stopped"] == "max_per_group"``; a capped run's ``info`` also
            has ``max_per_group`` and ``feasible`` (the most picks the cap allows).
        max_tokens: a token budget (an integer >= 0; None = none), with
            ``token_counts``: the picks' counts sum to at most this, for every
            method. A pick that does not fit is skipped and the next best one
            that fits is taken; the selection stops at k picks or when nothing
            fits. ``info`` has ``max_tokens``, ``tokens_used`` and, when the
            budget cut the selection below min(k, n), ``stopped == "max_tokens"``.
            A budget that cannot bind changes nothing. Combines with the cap.
        token_counts: (n,) non-negative integers, each candidate's length in
            tokens (e.g. of the prompt's tokenizer); needs ``max_tokens``.
        **options: the method's options, e.g. ``lambda_mult=0.7`` for ``mmr``.
            The methods that take a quality prior (``methods_where(takes_prior=True)``:
            the default ``complement``, ``similarity``, ``mmr``, ``dpp``) also take
            ``prior`` ((n,) scores) and ``prior_weight`` (in [0, 1], default 0):
            relevance becomes (1 - w) rel + w prior (RAGSys; see ``_prior``).
            ``complement`` also takes ``profiles`` ((n, f): a second description of
            each candidate, e.g. its words' profile; its similarity becomes the mean
            of the vectors' cosine and the profiles' cosine), ``links``
            (``vrsd_core.Links``: links between candidates, read as
            ``vrsd_core/methods/complement.py`` says) and ``closes`` ((n, n) booleans:
            [c, p] True closes candidate c once p is picked).

    Returns:
        A ``Selection`` (indices in selection order, per-pick gains, relevance,
        the sum-vector objective of the set).

    Raises:
        ValueError: naming the argument, for NaN/inf, zero vectors, wrong shapes,
            an unknown method or option, or an option out of range.
    """
    prep = prepare(query, candidates, batched=False, normalize=normalize, given=Given(
        relevance, groups, max_per_group, token_counts, max_tokens))
    info, run_prep, options, params, prior = _setup(method, prep, relevance, options, False)
    k_int = check_k(k)
    return _finish(prep, k_int, info.fn(run_prep, k_int, **options), info, params, prior)[0]


def select_batch(
    queries: ArrayLike,
    candidates: ArrayLike,
    k: int,
    *,
    method: MethodName = DEFAULT_METHOD,
    mask: ArrayLike | None = None,
    relevance: ArrayLike | None = None,
    normalize: bool = True,
    groups: ArrayLike | Sequence[Sequence[Hashable]] | None = None,
    max_per_group: int | None = None,
    max_tokens: int | None = None,
    token_counts: ArrayLike | None = None,
    **options: Any,
) -> list[Selection]:
    """``select`` for B queries at once; the same results as B single calls.

    Args:
        queries: (B, d).
        candidates: (B, n, d); query b chooses among candidates[b].
        mask: optional (B, n) booleans, False marking padding rows (for queries
            with fewer than n candidates). Indices refer to positions in
            candidates[b], so padding may sit anywhere.
        relevance: optional (B, n); a ``prior`` option is (B, n) here too.
        groups: optional (B, n) labels (with ``max_per_group``, as in ``select``);
            padding positions may hold any label, None included.
        token_counts: optional (B, n) token counts (with ``max_tokens``, as in
            ``select``); padding positions are ignored.
    """
    prep = prepare(queries, candidates, batched=True, mask=mask, normalize=normalize,
                   given=Given(relevance, groups, max_per_group, token_counts, max_tokens))
    info, run_prep, options, params, prior = _setup(method, prep, relevance, options, True)
    k_int = check_k(k)
    picked = run_in_chunks(run_prep, info.fn, k_int, options)
    return _finish(prep, k_int, picked, info, params, prior)
