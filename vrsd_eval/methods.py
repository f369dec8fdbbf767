"""Method tokens of the command line: ``vrsd eval --methods`` and ``vrsd search --method``.

A token is a core method name (its defaults), ``mmr`` (the paper's λ grid in
``eval``), or ``NAME:key=value,...`` with explicit options: greedy VRSD with its
1-swap refinement is ``vrsd:refine=swap``, as ``method="vrsd", refine="swap"`` in the
library (its table row is labelled ``vrsd_swap``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from vrsd_core import (
    METHOD_INFO,
    MethodName,
    check_options,
    method_defaults,
    methods_where,
)
from vrsd_kit.settings import did_you_mean

MMR_LAMBDAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
# Registered methods left out of the default run: the exhaustive ones (vrsd_exact
# enumerates all C(fetch_k, k) subsets, hopeless at fetch_k = 50).
EXCLUDED_BY_DEFAULT = frozenset(methods_where(exhaustive=True))
REFERENCE = "vrsd"  # the paper's greedy: the method whose win rates are reported
SWAP_LABEL = "vrsd_swap"  # the table row of vrsd:refine=swap (a label, not a method name)


@dataclass
class MethodSpec:
    """One column of the evaluation: a label, a core method and its options."""

    label: str
    method: MethodName | Literal[""]
    """The core method; empty for the adapters' default (``DEFAULT_METHOD`` with the
    options the adapters give it)."""
    options: dict[str, Any] = field(default_factory=dict)
    words: bool = False
    """Rank by the candidates' words and vectors (``vrsd_kit.lexical``: the fused
    relevance the adapters give the default) instead of the cosine."""
    links: bool = True
    """With ``words``: the links between candidates too, for a method that takes them
    (False: the default without links)."""
    feedback: bool = False
    """With ``words``: the lexical signal is BM25 of the question expanded by
    pseudo-relevance feedback (``vrsd_eval.prf``, RM3) instead of the question's own."""

    def options_text(self) -> str:
        """The options as ``key=value`` pairs: the method's defaults overridden by
        the ones given (unset priors and ``None`` defaults left out; for
        similarity and vrsd only the ones given)."""
        shown = dict(self.options)
        if self.method not in ("similarity", "vrsd"):
            defaults = {
                k: v for k, v in method_defaults(self.method).items()
                if v is not None and k not in ("prior", "prior_weight")
            }
            shown = {**defaults, **shown}
        return ", ".join(f"{k}={v}" for k, v in shown.items())


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None if text == "None" else text


def parse_method(
    token: str, *, expand_mmr: bool = True, name_of_argument: str = "methods"
) -> list[MethodSpec]:
    """Specs for one ``--methods`` token.

    ``similarity``, ``vrsd``, ``dpp``, any registered method (its defaults);
    ``vrsd:refine=swap`` (row label ``vrsd_swap``): greedy VRSD with 1-swap refinement;
    ``mmr``: MMR at lambda_mult 0.2, 0.3, ..., 0.9 (the paper's grid), or with
    ``expand_mmr=False`` one MMR at its default lambda;
    ``NAME:key=value,key=value``: one method with explicit options
    (e.g. ``mmr:lambda_mult=0.5``, ``dpp:theta=0.7``).

    Raises:
        ValueError: naming ``name_of_argument`` (``methods`` for ``vrsd eval``,
            ``method`` for ``vrsd search``), for an unknown method or option or an
            option value the method refuses.
    """
    name, _, opts = token.partition(":")
    name = name.strip().lower()
    options: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = pair.partition("=")
        if not eq:
            raise ValueError(f"{name_of_argument}: {token!r}: options are written key=value")
        options[key.strip()] = _parse_value(value.strip())
    if name == "vrsd" and options == {"refine": "swap"}:
        label = SWAP_LABEL
    elif name == "mmr" and not options and expand_mmr:
        return [MethodSpec(f"mmr({lam})", "mmr", {"lambda_mult": lam}) for lam in MMR_LAMBDAS]
    elif name == "mmr" and set(options) == {"lambda_mult"}:
        label = f"mmr({options['lambda_mult']})"
    else:
        label = token if options else name
    if name not in METHOD_INFO:
        choices = available_methods()
        raise ValueError(f"{name_of_argument}: unknown method {name!r}; choose from {choices}"
                         f"{did_you_mean(name, choices)}")
    method = METHOD_INFO[name].name  # the registered name, as its type says
    allowed = method_defaults(method)
    if METHOD_INFO[name].seeded and allowed["seed"] is None and "seed" not in options:
        options["seed"] = 0  # sampling methods: reproducible tables
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"{name_of_argument}: {unknown[0]!r} is not an option of {name!r} "
            f"(its options: {', '.join(sorted(allowed)) or 'none'})"
        )
    try:  # option values too, before any corpus is embedded (the retrievers are built last)
        check_options(name, options)
    except ValueError as exc:
        raise ValueError(f"{name_of_argument}: {token!r}: {exc}") from None
    return [MethodSpec(label, method, options)]


def available_methods() -> list[str]:
    """The names ``--methods`` accepts (besides ``NAME:key=value`` forms)."""
    return ["similarity", "vrsd", "vrsd:refine=swap", "mmr", *[
        m for m in METHOD_INFO if m not in ("similarity", "vrsd", "mmr")
    ]]


def default_method_tokens() -> list[str]:
    """The default run: similarity, vrsd, vrsd:refine=swap, mmr 0.2..0.9, dpp, then every
    other registered method except those in ``EXCLUDED_BY_DEFAULT``."""
    head = ["similarity", "vrsd", "vrsd:refine=swap", "mmr", "dpp"]
    rest = [m for m in METHOD_INFO if m not in head and m not in EXCLUDED_BY_DEFAULT]
    return head + rest


def parse_methods(tokens: Iterable[str] | None) -> list[MethodSpec]:
    """All specs for ``tokens`` (None: the default run), ``vrsd`` first if missing,
    duplicates dropped."""
    specs: list[MethodSpec] = []
    for token in tokens or default_method_tokens():
        for spec in parse_method(token):
            if spec.label not in {s.label for s in specs}:
                specs.append(spec)
    if REFERENCE not in {s.label for s in specs}:
        specs.insert(0, MethodSpec(REFERENCE, "vrsd"))
    return specs
