"""Draws of the sampling methods' seeds: how many, and the p-value below which a
chi-square test says "not this distribution"."""

from __future__ import annotations

import numpy as np

from vrsd_core import select

DRAWS = 2400
# A p-value below this means "not this distribution". With fixed seeds a test
# either always passes or always fails; each uniformity test also shows that
# the same statistic rejects a clearly non-uniform case, so it has power.
P_REJECT = 1e-4


def first_picks(q: np.ndarray, X: np.ndarray, k: int, method: str, **options: object
                ) -> np.ndarray:
    """The first pick of ``select`` over seeds 0 .. DRAWS - 1."""
    return np.array(
        [select(q, X, k, method=method, seed=s, **options).indices[0] for s in range(DRAWS)]
    )


def unit(X: np.ndarray) -> np.ndarray:
    """Each row of ``X`` at unit length."""
    return X / np.linalg.norm(X, axis=-1, keepdims=True)


def query_and_pool(seed: int, n: int = 20, d: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A random query (d,) and pool (n, d) from ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=d), rng.normal(size=(n, d))
