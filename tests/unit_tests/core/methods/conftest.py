"""References and data builders for the quality-prior and RAG_diversity tests.

pytest runs with ``--import-mode=importlib``, so test modules cannot import
this file; what they share reaches them as session fixtures.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest


def ragsys_algorithm1(Q, E, b, k, lambda_d, lambda_b):
    """RAGSys Algorithm 1 ("MMR with quality bias"), line by line, plain Python loops.

    Q: (d,) query embedding, E: (n, d) example embeddings, b: (n,) quality bias.
    Returns the picked indices C_1..C_k and each pick's score (v for C_1 times
    lambda_d, the core's gain convention; w for the later picks).
    """
    n = len(E)
    Q = np.asarray(Q, dtype=np.float64)
    Q = Q / math.sqrt(float(Q @ Q))
    E = [np.asarray(e, dtype=np.float64) / math.sqrt(float(np.dot(e, e))) for e in E]
    v = [lambda_b * float(Q @ E[i]) + (1.0 - lambda_b) * float(b[i]) for i in range(n)]
    C = [max(range(n), key=lambda i: (v[i], -i))]
    scores = [lambda_d * v[C[0]]]
    for _s in range(2, k + 1):
        m = [max(float(E[i] @ E[c]) for c in C) for i in range(n)]
        w = [lambda_d * v[i] - (1.0 - lambda_d) * m[i] for i in range(n)]
        left = [i for i in range(n) if i not in C]
        best = max(left, key=lambda i: (w[i], -i))
        C.append(best)
        scores.append(w[best])
    return C, scores


def blobs(rng: np.random.Generator, n_blobs: int, per_blob: int, d: int, spread: float):
    """Points around ``n_blobs`` orthonormal directions; (vectors, blob label per row)."""
    basis = np.linalg.qr(rng.normal(size=(d, n_blobs)))[0].T  # (n_blobs, d), orthonormal
    labels = np.repeat(np.arange(n_blobs), per_blob)
    X = basis[labels] + spread * rng.normal(size=(len(labels), d))
    perm = rng.permutation(len(labels))
    return X[perm], labels[perm]


@pytest.fixture(scope="session")
def helpers() -> SimpleNamespace:
    return SimpleNamespace(ragsys_algorithm1=ragsys_algorithm1, blobs=blobs)
