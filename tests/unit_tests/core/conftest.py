"""Reference implementations and random cases for the selection-core tests.

The references are deliberately plain: direct formulas, Python loops over the
candidates, float64 throughout. They share no code with ``vrsd_core``. They
apply the core's documented tie rule: a score within a relative 1e-10 of the
best (float64) counts as a tie, and ties go to the lowest candidate index.

pytest runs with ``--import-mode=importlib``, so test modules cannot import
this file; the references and the case generator reach them as the session
fixtures ``ref`` and ``make_cases``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

TIE_RTOL = 1e-10  # the core's float64 tie tolerance (vrsd_core._prepare.TIE_RTOL)
TINY = 1e-12  # a sum vector with squared length at most this has no direction: cos = 0
RANK_EPS = 1e-9  # dpp: a gain below this share of the largest diagonal is numerical zero


# --------------------------------------------------------------------------- helpers


def first_best(scores: list[float]) -> int:
    """Lowest index whose score is within TIE_RTOL (relative) of the best; -inf = unavailable."""
    best = max(scores)
    tol = TIE_RTOL * max(1.0, abs(best))
    for i, s in enumerate(scores):
        if s >= best - tol:
            return i
    raise AssertionError("no score")


def dot(u: np.ndarray, v: np.ndarray) -> float:
    return float(sum(float(a) * float(b) for a, b in zip(u, v, strict=True)))


def cosine(t: np.ndarray, q: np.ndarray) -> float:
    """cos(t, q), and 0 for a vector t of (near) zero length."""
    tt = dot(t, t)
    if tt <= TINY:
        return 0.0
    return dot(t, q) / (math.sqrt(tt) * math.sqrt(dot(q, q)))


def working(query, candidates, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
    """float64 copies, each row (and the query) scaled to unit length if normalising."""
    q = np.array(query, dtype=np.float64)
    C = np.array(candidates, dtype=np.float64).reshape(-1, q.shape[0])
    if normalize:
        q = q / math.sqrt(dot(q, q))
        C = np.array([row / math.sqrt(dot(row, row)) for row in C]).reshape(C.shape)
    return q, C


class Cap:
    """The per-source cap and the token budget in their plainest form: a pick
    count per label, and the tokens spent so far."""

    def __init__(self, groups, max_per_group, token_counts=None, max_tokens=None):
        self.groups = None if groups is None else list(groups)
        self.limit = max_per_group
        self.count: dict = {}
        self.tokens = None if token_counts is None else [int(t) for t in token_counts]
        self.budget = max_tokens
        self.spent = 0

    def allows(self, i: int) -> bool:
        if self.tokens is not None and self.spent + self.tokens[i] > self.budget:
            return False
        if self.groups is None or self.limit is None:
            return True
        return self.count.get(self.groups[i], 0) < self.limit

    def take(self, i: int) -> None:
        if self.groups is not None:
            self.count[self.groups[i]] = self.count.get(self.groups[i], 0) + 1
        if self.tokens is not None:
            self.spent += self.tokens[i]

    def feasible(self, idx) -> bool:
        """Whether the set idx keeps every label at most max_per_group times and
        its tokens within the budget."""
        if self.tokens is not None and sum(self.tokens[i] for i in idx) > self.budget:
            return False
        if self.groups is None or self.limit is None:
            return True
        labels = [self.groups[i] for i in idx]
        return all(labels.count(g) <= self.limit for g in labels)


def relevance_of(q: np.ndarray, C: np.ndarray, relevance) -> list[float]:
    if relevance is not None:
        return [float(r) for r in relevance]
    return [dot(c, q) for c in C]


@dataclass
class Ref:
    """What a reference picked."""

    indices: list[int]
    gains: list[float]
    objective: float
    info: dict = field(default_factory=dict)


def sum_cos(q: np.ndarray, C: np.ndarray, idx) -> float:
    """cos(sum of C[idx], q), the VRSD objective (0 for an empty set)."""
    if len(idx) == 0:
        return 0.0
    return cosine(np.sum([C[i] for i in idx], axis=0), q)


# --------------------------------------------------------------------------- references


def ref_similarity(query, candidates, k, *, relevance=None, normalize=True, groups=None,
                   max_per_group=None, token_counts=None, max_tokens=None) -> Ref:
    """Top-k by relevance, repeatedly taking the first best remaining candidate
    (of a label that has not reached max_per_group)."""
    q, C = working(query, candidates, normalize)
    rel = relevance_of(q, C, relevance)
    cap = Cap(groups, max_per_group, token_counts, max_tokens)
    left = list(range(len(C)))
    picks, gains = [], []
    for _ in range(min(max(k, 0), len(C))):
        left = [i for i in left if cap.allows(i)]
        if not left:
            break
        j = left[first_best([rel[i] for i in left])]
        picks.append(j)
        gains.append(rel[j])
        left.remove(j)
        cap.take(j)
    return Ref(picks, gains, sum_cos(q, C, picks))


def ref_vrsd(query, candidates, k, *, normalize=True, groups=None, max_per_group=None,
             token_counts=None, max_tokens=None) -> Ref:
    """The paper's Algorithm 1, literally: add the v in R maximising cos(sum(S) + v, q)
    (R: the candidates left whose label has not reached max_per_group)."""
    q, C = working(query, candidates, normalize)
    cap = Cap(groups, max_per_group, token_counts, max_tokens)
    R = list(range(len(C)))
    S: list[int] = []
    gains = []
    for _ in range(min(max(k, 0), len(C))):
        R = [v for v in R if cap.allows(v)]
        if not R:
            break
        s = np.sum([C[i] for i in S], axis=0) if S else np.zeros_like(q)
        cos_values = [cosine(s + C[v], q) for v in R]  # line 6-12 of Algorithm 1
        p = R[first_best(cos_values)]
        gains.append(max(cos_values))
        S.append(p)
        R.remove(p)
        cap.take(p)
    return Ref(S, gains, sum_cos(q, C, S))


def ref_vrsd_exact(query, candidates, k, *, normalize=True, groups=None,
                   max_per_group=None, token_counts=None, max_tokens=None) -> Ref:
    """Brute force over itertools.combinations (those keeping every label at most
    max_per_group times); the lexicographically first best set, listed in the
    order the greedy would pick it."""
    q, C = working(query, candidates, normalize)
    n = len(C)
    cap = Cap(groups, max_per_group, token_counts, max_tokens)
    kk = min(max(k, 0), n)
    while kk and not any(cap.feasible(s) for s in itertools.combinations(range(n), kk)):
        kk -= 1
    if kk == 0:
        return Ref([], [], 0.0)
    subsets = [s for s in itertools.combinations(range(n), kk) if cap.feasible(s)]
    values = [sum_cos(q, C, s) for s in subsets]
    best = list(subsets[first_best(values)])
    inner = ref_vrsd(q, C[best], kk, normalize=False)
    order = [best[i] for i in inner.indices]
    return Ref(order, inner.gains, sum_cos(q, C, order), {"subsets": len(subsets)})


def ref_mmr(query, candidates, k, *, lambda_mult=0.5, relevance=None, normalize=True,
            groups=None, max_per_group=None, token_counts=None, max_tokens=None) -> Ref:
    """MMR (Carbonell & Goldstein, the paper's Eq. 1) with the max over ALL selected.

    The first pick is the most relevant candidate (gain lambda * rel).
    """
    q, C = working(query, candidates, normalize)
    rel = relevance_of(q, C, relevance)
    lam = lambda_mult
    cap = Cap(groups, max_per_group, token_counts, max_tokens)
    left = list(range(len(C)))
    S: list[int] = []
    gains = []
    for t in range(min(max(k, 0), len(C))):
        left = [i for i in left if cap.allows(i)]
        if not left:
            break
        if t == 0:
            j = left[first_best([rel[i] for i in left])]
            gain = lam * rel[j]
        else:
            scores = [lam * rel[i] - (1 - lam) * max(dot(C[i], C[s]) for s in S) for i in left]
            pos = first_best(scores)
            j, gain = left[pos], scores[pos]
        S.append(j)
        gains.append(gain)
        left.remove(j)
        cap.take(j)
    return Ref(S, gains, sum_cos(q, C, S))


def dpp_weights(rel: list[float], theta: float) -> list[float]:
    """w_i = exp(alpha * rel_i), alpha = theta / (2 (1 - theta)), shifted by the best
    relevance (a constant factor on every det ratio; keeps exp finite)."""
    alpha = theta / (2.0 * (1.0 - theta))
    top = max(rel)
    return [math.exp(alpha * (r - top)) for r in rel]


def ref_dpp(query, candidates, k, *, theta=0.5, relevance=None, normalize=True, groups=None,
            max_per_group=None, token_counts=None, max_tokens=None) -> Ref:
    """Fast greedy MAP for a k-DPP (Chen, Zhang & Zhou 2018, Algorithm 1) in Python loops.

    Kernel L = diag(w) S diag(w). Each step takes the candidate with the largest
    d_j^2 = det(L_{Y+j}) / det(L_Y); once the best remaining d_j^2 is at most
    RANK_EPS * max_i L_ii, the rest are filled by relevance with gain 0.
    """
    q, C = working(query, candidates, normalize)
    n = len(C)
    K = min(max(k, 0), n)
    if K == 0:
        return Ref([], [], 0.0, {"filled_by_relevance": 0})
    rel = relevance_of(q, C, relevance)
    w = dpp_weights(rel, theta)

    def L(i: int, j: int) -> float:
        return w[i] * w[j] * dot(C[i], C[j])

    d2 = [L(j, j) for j in range(n)]
    floor = RANK_EPS * max(d2)
    chol: list[list[float]] = [[] for _ in range(n)]  # c_j of the paper
    cap = Cap(groups, max_per_group, token_counts, max_tokens)
    left = list(range(n))
    picks, gains = [], []
    exhausted = False
    filled = 0
    for _ in range(K):
        # candidates of a full label are out (their Cholesky rows are no longer needed)
        left = [j for j in left if cap.allows(j)]
        if not left:
            break
        if not exhausted and max(d2[j] for j in left) <= floor:
            exhausted = True
        if exhausted:
            p = left[first_best([rel[j] for j in left])]
            gains.append(0.0)
            filled += 1
        else:
            p = left[first_best([d2[j] for j in left])]
            gains.append(d2[p])
            d_p = math.sqrt(d2[p])
            for j in left:
                if j == p:
                    continue
                e = (L(p, j) - sum(a * b for a, b in zip(chol[p], chol[j], strict=True))) / d_p
                chol[j].append(e)
                d2[j] -= e * e
        picks.append(p)
        left.remove(p)
        cap.take(p)
    return Ref(picks, gains, sum_cos(q, C, picks), {"filled_by_relevance": filled})


def det_ratio(query, candidates, chosen: list[int], j: int, *, theta=0.5, normalize=True):
    """det(L_{Y+j}) / det(L_Y) by two determinants (the direct form of a dpp gain)."""
    q, C = working(query, candidates, normalize)
    w = np.array(dpp_weights(relevance_of(q, C, None), theta))

    def det(idx):
        if not idx:
            return 1.0
        sub = C[idx]
        return float(np.linalg.det(np.outer(w[idx], w[idx]) * (sub @ sub.T)))

    return det(chosen + [j]) / det(chosen)


REFERENCES = {
    "similarity": ref_similarity,
    "vrsd": ref_vrsd,
    "vrsd_exact": ref_vrsd_exact,
    "mmr": ref_mmr,
    "dpp": ref_dpp,
}


# --------------------------------------------------------------------------- random cases


@dataclass
class Case:
    """One random selection problem."""

    kind: str
    query: np.ndarray
    candidates: np.ndarray
    k: int
    normalize: bool = True
    relevance: np.ndarray | None = None

    def __repr__(self) -> str:  # short ids in failure output
        n, d = self.candidates.shape
        return f"Case({self.kind}, n={n}, d={d}, k={self.k}, normalize={self.normalize})"


KINDS = ("gaussian", "clustered", "duplicates", "lattice", "mirror")


def _nonzero_rows(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    zero = ~np.any(X != 0, axis=1)
    X[zero, rng.integers(0, X.shape[1])] = 1.0
    return X


def random_case(rng: np.random.Generator, kind: str, *, max_n: int = 24) -> Case:
    """A case of the given kind (see KINDS); every kind has exact ties or near-twins
    except ``gaussian``."""
    n = int(rng.integers(1, max_n + 1))
    d = int(rng.integers(1, 9))
    if kind == "gaussian":
        X = rng.standard_normal((n, d))
        q = rng.standard_normal(d)
    elif kind == "clustered":
        centers = rng.standard_normal((int(rng.integers(1, 4)), d))
        spread = float(rng.choice([0.02, 0.1, 0.3]))
        X = centers[rng.integers(0, len(centers), n)] + spread * rng.standard_normal((n, d))
        q = centers[0] + rng.standard_normal(d) * 0.5
    elif kind == "duplicates":
        base = rng.standard_normal((max(1, n // 2), d))
        X = base[rng.integers(0, len(base), n)]
        # Positive powers of two keep a copy an exact duplicate after normalising.
        X = X * rng.choice([0.5, 1.0, 2.0, 4.0], size=(n, 1))
        q = rng.standard_normal(d)
    elif kind == "lattice":
        # Small integers: many exactly equal scores, exact duplicates, antipodal pairs.
        X = rng.integers(-2, 3, size=(n, d)).astype(np.float64)
        q = rng.integers(-2, 3, size=d).astype(np.float64)
    elif kind == "mirror":
        # Pairs mirrored about the query: equal relevance, sums exactly along q.
        d = max(d, 2)
        q = np.zeros(d)
        q[0] = 1.0
        half = rng.integers(-2, 3, size=((n + 1) // 2, d)).astype(np.float64)
        half[:, 0] = np.abs(half[:, 0]) + 1
        mirrored = half.copy()
        mirrored[:, 1:] *= -1
        X = np.empty((2 * len(half), d))
        X[0::2], X[1::2] = half, mirrored
        X = X[:n]
    else:
        raise ValueError(kind)
    X = _nonzero_rows(rng, np.asarray(X, dtype=np.float64))
    if not np.any(q != 0):
        q[0] = 1.0
    k = int(rng.integers(0, n + 3))
    normalize = bool(rng.random() < 0.85)
    return Case(kind, np.asarray(q, dtype=np.float64), X, k, normalize)


def make_cases(seed: int, count: int, *, max_n: int = 24, with_relevance: bool = False):
    """``count`` cases cycling through every kind, from one seed (deterministic)."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        case = random_case(rng, KINDS[i % len(KINDS)], max_n=max_n)
        if with_relevance and rng.random() < 0.3:
            n = len(case.candidates)
            # Outside relevance scores, with ties from rounding to one decimal.
            case.relevance = np.round(rng.uniform(-1, 1, n), 1)
        cases.append(case)
    return cases


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """The reference implementations and their helpers."""
    return SimpleNamespace(
        similarity=ref_similarity,
        vrsd=ref_vrsd,
        vrsd_exact=ref_vrsd_exact,
        mmr=ref_mmr,
        dpp=ref_dpp,
        det_ratio=det_ratio,
        sum_cos=sum_cos,
        cosine=cosine,
        working=working,
        first_best=first_best,
        by_name=REFERENCES,
    )


@pytest.fixture(scope="session")
def cases_for():
    """``cases_for(seed, count, max_n=..., with_relevance=...)`` -> list of Case."""
    return make_cases
