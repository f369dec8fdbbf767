"""The quality prior (RAGSys, Contal & McGoldrick 2024, Algorithm 1 "MMR with quality bias").

Options ``prior`` (b_i, one real number per candidate: shape (n,) in
``select``, (B, n) in ``select_batch``) and ``prior_weight`` (w in [0, 1],
default 0 = no prior; RAGSys's lambda_b is 1 - w) of the relevance-based
methods whose ``MethodInfo.takes_prior`` is set (``vrsd_core.registry``).
Before the method runs, its relevance becomes

    v_i = (1 - w) * rel_i + w * b_i

so no method repeats this. With ``mmr`` that is exactly Algorithm 1: the
first pick is argmax v, then lambda_mult * v_i - (1 - lambda_mult) * max_j
cos(e_i, e_j). In ``dpp`` v sets the kernel's quality weights; in
``similarity`` it is the ranking score.

A prior with ``prior_weight=0`` is checked but has no effect (so a caller can
pass a metadata field always and tune only the weight); ``prior_weight > 0``
without a prior is an error. ``vrsd``/``vrsd_exact`` refuse both options:
their objective, cos(sum of picks, query), has no place for a prior.

Reporting: ``Selection.relevance`` stays the plain relevance (cosine to the
query unless ``relevance=`` was given); ``params`` shows ``prior_weight`` and
``prior`` as ``"given"`` or None (not the array); ``info["prior"]`` lists the
picks' prior values, aligned with ``indices``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._prepare import Prepared, as_float_array, check_finite
from .options import PRIOR_OPTIONS
from .registry import MethodInfo, methods_where

PRIOR_DEFAULTS: dict[str, Any] = {spec.name: spec.default for spec in PRIOR_OPTIONS}


def refuse_prior(info: MethodInfo, options: Mapping[str, Any]) -> None:
    """ValueError naming ``prior``/``prior_weight`` for methods without a prior."""
    for name in PRIOR_DEFAULTS:
        if name in options and not info.takes_prior:
            raise ValueError(
                f"{name}: method {info.name!r} takes no quality prior; the methods that do "
                f"are {sorted(methods_where(takes_prior=True))}"
            )


def checked_prior_weight(options: Mapping[str, Any]) -> float:
    """``prior_weight`` checked against its declared range, and refused above 0 without
    a ``prior`` (the one rule between two options)."""
    weight: float = PRIOR_OPTIONS[1].check(options.get("prior_weight", 0.0))
    if weight > 0 and options.get("prior") is None:
        raise ValueError(f"prior_weight: {weight:g} > 0 needs a prior (one score per candidate)")
    return weight


def apply_prior(
    prep: Prepared, options: dict[str, Any], *, batched: bool
) -> tuple[Prepared, dict[str, Any], np.ndarray | None]:
    """Split the prior options off and blend the prior into the relevance.

    Returns the ``Prepared`` the method runs on (the input itself when there is
    no effective prior), the remaining options, and the checked (B, n) prior
    (None when none was given).
    """
    rest = {key: val for key, val in options.items() if key not in PRIOR_DEFAULTS}
    raw = options.get("prior")
    weight = checked_prior_weight(options)
    if raw is None:
        return prep, rest, None
    prior = as_float_array(raw, "prior").astype(np.float64)
    want = (prep.batch, prep.n) if batched else (prep.n,)
    if prior.shape != want:
        raise ValueError(f"prior: expected shape {want} (one score per candidate), got "
                         f"{prior.shape}")
    prior = np.where(prep.valid, prior.reshape(prep.batch, prep.n), 0.0)
    check_finite(prior, "prior", prep.valid)
    if weight == 0:
        return prep, rest, prior
    blended = np.where(prep.valid, (1.0 - weight) * prep.rel + weight * prior, 0.0)
    return dataclasses.replace(prep, rel=blended), rest, prior
