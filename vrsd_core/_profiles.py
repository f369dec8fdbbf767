"""``profiles``: a second description of each candidate, for the methods whose similarity
between candidates reads it (``MethodInfo.takes_profiles``: the default, ``complement``).

``profiles`` is (n, f) in ``select``, (B, n, f) in ``select_batch``: any real features,
one row per candidate (the adapters pass the profile of each candidate's words,
``vrsd_kit.lexical.word_profiles``). ``with_word_profiles`` gives the problem a
``similarity`` geometry (``Prepared.similarity``; ``Prepared.candidates`` stays the
vectors) on the vectors [x, p / |p|] / sqrt(2), whose inner products are

    S_ij = (cos(x_i, x_j) + cos(p_i, p_j)) / 2

(without ``normalize``: the vectors' inner product in place of their cosine; an all-zero
profile row shares nothing, so its own S_ii is 1/2). Only the similarity between
candidates reads it: the relevance, and everything the Selection reports but ``gains``
(``relevance``, the sum-vector ``objective``), stays on the vectors. ``params`` shows
``profiles`` as ``"given"``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ._checks import as_float_array, check_finite
from ._prepare import Geometry, Prepared


def with_word_profiles(prep: Prepared, profiles: Any, *, batched: bool) -> Prepared:
    """``prep`` whose ``similarity`` reads [x, p / |p|] / sqrt(2): inner products that are
    the mean of the vectors' (cosine, when normalising) and the profiles' cosine."""
    given = as_float_array(profiles, "profiles")
    B, n = prep.batch, prep.n
    want = (B, n) if batched else (n,)
    if given.ndim != len(want) + 1 or given.shape[:-1] != want:
        shape = f"({', '.join(map(str, want))}, f)"
        raise ValueError(f"profiles: expected shape {shape} (one row per candidate), got "
                         f"{given.shape}")
    P = given.astype(np.float64).reshape(B, n, given.shape[-1])
    check_finite(P, "profiles", prep.valid)
    lengths = np.sqrt(np.einsum("bnf,bnf->bn", P, P))
    unit_profiles = np.divide(P, lengths[..., None], out=np.zeros_like(P),
                              where=lengths[..., None] > 0)
    dtype = prep.X.dtype
    half = 1.0 / math.sqrt(2.0)
    unit_vectors = prep.X * (prep.scale[..., None] * half).astype(dtype) if prep.normalize \
        else prep.X * dtype.type(half)
    joined = np.concatenate([unit_vectors, (unit_profiles * half).astype(dtype)], axis=2)
    similarity = Geometry(joined, np.ones((B, n)), (prep.sq_norm + (lengths > 0)) / 2.0,
                          normalize=False)
    return dataclasses.replace(prep, similarity=similarity)
