"""The table of selection methods: one ``MethodInfo`` record per method.

Everything the core (and the adapters) need to know about a method lives here and
only here: which function runs it, its options (declared as data beside the method,
``own_options``; ``MethodInfo.options`` adds the prior's and the profiles'), its
capabilities (an outside ``relevance``, a quality ``prior``, ``profiles``, the words,
a ``seed``), whether its default run is deterministic, whether it enumerates subsets,
and a one-line summary. What applies to a method is read from these flags, never from
its name.
``METHOD_INFO`` is the table (name -> record, in the README's order). A new
method is one module in ``vrsd_core.methods`` (see its contract) and one
``MethodInfo`` row here; the shared contract test then covers it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from ._prepare import did_you_mean
from .methods import cluster, complement, dpp, mmr, threshold, top_m, top_p, vrsd, vrsd_exact
from .methods._common import Picked
from .methods.similarity import similarity
from .options import PRIOR_OPTIONS, PROFILES_OPTION, OptionSpec

MethodFn = Callable[..., list[Picked]]

MethodName = Literal[
    "complement", "similarity", "vrsd", "vrsd_exact", "mmr", "dpp",
    "threshold", "top_m", "top_p", "cluster",
]
"""A registered method's name, for type checkers: ``METHOD_INFO``'s keys in its order
(tests/unit_tests/core/test_registry.py holds the two equal). ``method_info(name).name``
turns a name as a user wrote it (any ``str``) into one, or refuses it."""


@dataclass(frozen=True, kw_only=True)
class MethodInfo:
    """What a selection method takes and promises.

    Attributes:
        name: the ``method=`` string.
        fn: ``fn(prepared, k, **options) -> list[Picked]`` (see ``vrsd_core.methods``).
        takes_relevance: accepts an outside ``relevance=`` (False for the methods
            whose objective is the geometry itself: ``vrsd``, ``vrsd_exact``).
        takes_prior: accepts the quality prior options ``prior``/``prior_weight``.
        takes_profiles: accepts ``profiles``, a second description of each candidate
            its similarity reads (``vrsd_core._prepare.with_word_profiles``).
        reads_words: the adapters give it what the candidates' words say (their
            relevance fused with the cosine in pool units, their word profiles): the
            one place that decides where the words apply.
        seeded: takes a ``seed`` option (sampling and clustering methods).
        deterministic: the same input and default options give the same result
            (a seeded method is deterministic only if its default seed is fixed).
        exhaustive: enumerates subsets, so it refuses problems past a size limit
            (leave it out of runs over realistic candidate counts).
        summary: one line for tables and help texts.
        own_options: the options of the method itself, declared beside it (its
            module's ``OPTIONS``); ``options`` adds the prior's and the profiles'.
    """

    name: MethodName
    fn: MethodFn
    summary: str
    takes_relevance: bool = False
    takes_prior: bool = False
    takes_profiles: bool = False
    reads_words: bool = False
    seeded: bool = False
    deterministic: bool = False
    exhaustive: bool = False
    own_options: tuple[OptionSpec, ...] = ()

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        """Every option the method takes: its own, then the prior's and the profiles'
        when it takes them (``vrsd_core.options``)."""
        return (self.own_options + (PRIOR_OPTIONS if self.takes_prior else ())
                + ((PROFILES_OPTION,) if self.takes_profiles else ()))


_TABLE = (
    MethodInfo(
        name="complement", fn=complement.complement, own_options=complement.OPTIONS,
        takes_relevance=True, takes_prior=True, takes_profiles=True, reads_words=True,
        deterministic=True,
        summary="recommended for RAG: a determinantal selection on relevance in pool units "
        "(the adapters: pool_units of the cosine and the words' BM25, and the words' "
        "profiles in its similarity); restatements held back"),
    MethodInfo(
        name="similarity", fn=similarity, takes_relevance=True, takes_prior=True,
        deterministic=True, summary="plain top-k by relevance (cosine to the query)"),
    MethodInfo(
        name="vrsd", fn=vrsd.vrsd, own_options=vrsd.OPTIONS, deterministic=True,
        summary="greedy: each pick maximises cos(sum of the set, query); refine='swap' adds "
        "1-swap local search"),
    MethodInfo(
        name="vrsd_exact", fn=vrsd_exact.vrsd_exact, own_options=vrsd_exact.OPTIONS,
        deterministic=True, exhaustive=True,
        summary="exact optimum of the vrsd objective by enumeration (small problems only)"),
    MethodInfo(
        name="mmr", fn=mmr.mmr, own_options=mmr.OPTIONS, takes_relevance=True,
        takes_prior=True, deterministic=True,
        summary="Maximal Marginal Relevance: lambda*relevance - (1-lambda)*max similarity "
        "to the picks"),
    MethodInfo(
        name="dpp", fn=dpp.dpp, own_options=dpp.OPTIONS, takes_relevance=True,
        takes_prior=True, deterministic=True,
        summary="greedy MAP of a k-DPP, weights exp(theta/(2(1-theta)) * relevance) on the "
        "relevance's own scale (complement: the same loop, weights in pool units)"),
    MethodInfo(
        name="threshold", fn=threshold.threshold, own_options=threshold.OPTIONS,
        takes_relevance=True, seeded=True,
        summary="random draws from the top m, kept if below a similarity threshold to "
        "every kept item"),
    MethodInfo(
        name="top_m", fn=top_m.top_m, own_options=top_m.OPTIONS, takes_relevance=True,
        seeded=True,
        summary="k sampled from the m most relevant, softmax(relevance / temperature)"),
    MethodInfo(
        name="top_p", fn=top_p.top_p, own_options=top_p.OPTIONS, takes_relevance=True,
        seeded=True,
        summary="k sampled from the nucleus of probability mass p"),
    MethodInfo(
        name="cluster", fn=cluster.cluster, own_options=cluster.OPTIONS, takes_relevance=True,
        seeded=True, deterministic=True,
        summary="k-means into k clusters, the most relevant member of each"),
)

METHOD_INFO: Mapping[str, MethodInfo] = MappingProxyType({m.name: m for m in _TABLE})
"""name -> ``MethodInfo`` for every selection method (read only)."""

DEFAULT_METHOD: Final[MethodName] = "complement"
"""The project's recommendation: what the adapters (``DiverseRetriever()``,
``DiversePostprocessor()``, ``as_retriever(search_type="complement")``) and the command line
run when no method is named, chosen by evidence coverage on multi-hop questions
(docs/evaluation.md). ``"vrsd"`` is the paper's algorithm, everywhere."""


def method_info(method: object) -> MethodInfo:
    """The record of ``method`` (a registered name), or ValueError naming ``method`` for
    an unknown name, with the closest registered one.

    >>> info = method_info("mmr")
    >>> info.takes_relevance, info.takes_prior, info.seeded
    (True, True, False)
    >>> method_info("mmmr")
    Traceback (most recent call last):
    ValueError: method: unknown method 'mmmr'; choose from [...]; did you mean mmr?
    """
    if not isinstance(method, str) or method not in METHOD_INFO:
        raise ValueError(f"method: unknown method {method!r}; choose from "
                         f"{sorted(METHOD_INFO)}{method_hint(str(method))}")
    return METHOD_INFO[method]


def method_hint(name: str) -> str:
    """The hint for an unknown method name: the method in other letter case, a method
    and one of its choices joined (``vrsd_swap``, as the evaluation tables name the run
    ``method="vrsd", refine="swap"``), else the closest name."""
    lowered = name.casefold()
    if lowered in METHOD_INFO:
        return f"; did you mean {lowered}?"
    for method, info in METHOD_INFO.items():
        value = lowered.removeprefix(method + "_")
        for spec in info.options if value != lowered else ():
            if spec.kind == "choice" and value in spec.choices:
                return f"; did you mean method={method!r} with {spec.name}={value!r}?"
    return did_you_mean(name, METHOD_INFO)


FLAGS = frozenset(f.name for f in dataclasses.fields(MethodInfo) if f.type in (bool, "bool"))
"""The boolean ``MethodInfo`` fields ``methods_where`` filters on."""


def methods_where(**flags: bool) -> tuple[str, ...]:
    """Method names whose ``MethodInfo`` flags equal the given values, in table order.

    >>> methods_where(takes_prior=True)
    ('complement', 'similarity', 'mmr', 'dpp')
    >>> methods_where(takes_relevance=False)
    ('vrsd', 'vrsd_exact')
    """
    fields = FLAGS
    unknown = sorted(set(flags) - fields)
    if unknown:
        raise ValueError(f"{unknown[0]}: not a MethodInfo flag (flags: {sorted(fields)})")
    return tuple(
        m.name for m in _TABLE if all(getattr(m, key) == want for key, want in flags.items())
    )
