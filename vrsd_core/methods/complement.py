"""``complement``: the project's recommended selection for retrieval-augmented generation.

1. **Anchor**: the most relevant candidate.
2. **Complement**: VRSD's own second step (Gao, Deng & Zhang), max cos(c_anchor +
   c_j, q), the candidate whose sum with the anchor points most nearly at the
   query: it covers the part of the query the anchor leaves out, which is what a
   multi-hop question's second passage does. The step is taken in the pool's
   **centred** geometry: the candidates and the query are seen from the point
   lambda * m, m the mean of the candidates and lambda = |m| / (their root-mean-square
   length), the pool's concentration in [0, 1], then scaled to unit length.
   Embedding models with a compressed cosine range (e5, BGE, GTE, OpenAI: every
   pair of texts at 0.7 to 0.9) share one large common direction; in raw cosines
   it dominates the sum and the step trades relevance for distance from the
   anchor. Such a pool is concentrated (lambda near 0.9) and is centred almost
   fully, so the step weighs what distinguishes the candidates; a pool spread over
   the sphere (MiniLM: lambda near 0.5) is centred half way, and one with no
   common direction (lambda = 0) keeps raw cosines. It is taken only if it raises
   the sum's cosine with the query in that geometry **and** VRSD's own step, in
   raw cosines, picks the same candidate: both geometries agree on the complement.
   Otherwise the step falls back to relevance. They disagree when the centred step
   reaches for a
   weakly relevant candidate far from the anchor, which is what it does on a pool
   whose centred query is mostly noise (e5 with its queries embedded like
   passages: at k = 2 on a plain corpus the ungated step cost 0.022 recall).
3. **Then relevance order.** Beyond one complement, VRSD keeps raising cos(sum, q)
   with weakly related passages that balance the sum; relevance order is what
   keeps the evidence when k grows.

**Restatements.** A candidate is a restatement of a pick when the two are much
closer to each other than the pool's candidates are to one another: their squared
distance is under ``duplicate_share`` (0.3) of the mean squared distance between two
candidates of the pool. For unit vectors that is cos > 1 - 0.3 (1 - m), m the pool's
mean pairwise cosine, so the threshold follows each model's own spread: about 0.75 on
all-MiniLM-L6-v2, whose candidates sit at cosines near 0.2 to 0.4 of one another, and
about 0.94 on multilingual-e5-small, whose candidates sit near 0.8. A pair is also a
restatement when its cosine exceeds cos^2(theta_1 / 2) = (1 + r_1) / 2, r_1 =
cos(theta_1) the best candidate's cosine to the query: two passages that much closer
to each other than the query is to its best match say the same thing (this is what
still holds a pool of near-copies, where m itself is close to 1).

**Close pairs the pool cannot tell apart.** A pair a little farther apart, under
``indistinct_share`` (0.5) of the pool's mean squared distance, is a restatement
when no other candidate tells the two apart. Seen from the pool's mean, each
candidate is a direction; the pair's difference is told apart when its root-mean-square
cosine with the other candidates' directions is at least ``indistinct_rms`` (1/3) of
the pool's own (the root-mean-square cosine between two of its directions). Two
distinct facts of one topic differ in content, and the pool's other passages carry
that content too; a paraphrase differs from its source in wording, which no other
candidate shares. On models with a compressed cosine range paraphrases and distinct
facts of one topic overlap in cosine (e5: 0.91 to 0.98 against up to 0.91), so no
cosine threshold separates them; their difference's direction does.

* In the first ``strict_head`` picks (5), restatements are skipped while other
  candidates remain: the head of the context, which a reader (and an LLM) weighs
  most, holds no two passages that say the same thing.
* After the head they are demoted, not dropped: a restatement competes with
  relevance lowered by sigma, the spread (standard deviation) of the pool's
  relevance. Corpora hold distinct passages as close as restatements (one
  article's yearly pages, a list and its entries); at depth, a demoted near-copy
  is still worth more than a candidate far down the pool, and measured on
  multi-hop questions this keeps recall at top-k's level at every k (the
  documentation's evaluation page has the tables).

Cost: one matrix-vector product per pick (the pick against every candidate), two
more at the start (the pool's sum, which gives the restatement threshold and the
step's mean, and the candidates against that mean) and O(n) arithmetic per pick;
a query with a candidate in a pick's close band also pays, once, for the pool's
directions (n x d) and their Gram product (n^2 d; d^2 n when n > d), after which a
test costs O(n) (one n x d product per candidate tested when n > d);
ties go to the lower index (the store's order). One query whose candidates are all
real runs on 1-D rows (``_complement_single``); the batched path serves the rest, and
the tests hold the two equal.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int, check_real
from .._kernels import TINY, argmax_first, argmax_first_1d
from .._prepare import Prepared
from ._common import (
    Picked,
    pick_counts,
    single_count,
    split_rows,
    start_constraints,
    step_active,
    taken_counts,
)


def complement(
    prep: Prepared,
    k: int,
    *,
    duplicate_cos: float | None = None,
    complement_steps: int = 1,
    strict_head: int = 5,
    centred: bool = True,
    duplicate_share: float = 0.3,
    indistinct_share: float = 0.5,
    indistinct_rms: float = 1 / 3,
) -> list[Picked]:
    """Anchor, gated sum-vector complement(s), then relevance; restatements held back.

    Args:
        duplicate_cos: a candidate whose cosine to an earlier pick is above this is
            a restatement. None (default): per query, the lower of (1 + r_1)/2, r_1
            the best candidate's cosine to the query, and the pool threshold of
            ``duplicate_share``; a number in (-1, 1] fixes it (1: no candidate is
            ever a restatement).
        complement_steps: how many picks after the anchor may be complement steps
            (default 1; 0 = relevance order with the restatement guard).
        strict_head: restatements are skipped in the first this many picks while
            other candidates remain, then demoted by the spread of the pool's
            relevance (default 5; 0 = demoted from the start).
        centred: the complement step in the pool's centred geometry, seen from
            the candidates' mean scaled by the pool's concentration, taken when
            VRSD's raw step picks the same candidate (default True; False: raw
            cosines, VRSD's step as the paper writes it).
        duplicate_share: a pair whose squared distance is under this share of the
            pool's mean squared pairwise distance is a restatement (default 0.3, in
            [0, 1]; 0: only the (1 + r_1)/2 rule). Ignored when ``duplicate_cos`` is set.
        indistinct_share: a pair closer than this share (default 0.5, in [0, 1]; at or
            below ``duplicate_share``: no such test) is a restatement when no other
            candidate tells the two apart (``indistinct_rms``). Ignored when
            ``duplicate_cos`` is set or ``duplicate_share`` is 0.
        indistinct_rms: the two are told apart when their difference's root-mean-square
            cosine with the pool's other centred candidates is at least this share
            (default 1/3, >= 0) of the pool's own: the root-mean-square cosine between
            two of its centred candidates, self-pairs included.

    ``gains``: the relevance of the anchor and of relevance picks; a taken
    complement step's cos(sum of the set so far, query) in the step's geometry.
    ``info``: ``duplicate_cos`` (the threshold; None for a query without
    candidates), ``indistinct_cos`` (the cosine above which the witness test runs;
    None without it), ``complement_at`` (positions where a complement was taken) and
    ``demotion`` (sigma, the relevance a restatement gives up after the head).
    """
    fixed = None if duplicate_cos is None else check_real(
        duplicate_cos, "duplicate_cos", low=-1.0, high=1.0, low_open=True)
    steps = check_int(complement_steps, "complement_steps", low=0)
    head = check_int(strict_head, "strict_head", low=0)
    share = check_real(duplicate_share, "duplicate_share", low=0.0, high=1.0)
    wide = check_real(indistinct_share, "indistinct_share", low=0.0, high=1.0)
    witness_rms = check_real(indistinct_rms, "indistinct_rms", low=0.0)
    if not isinstance(centred, (bool, np.bool_)):
        raise ValueError(f"centred: must be True or False, got {centred!r}")
    assert steps is not None and head is not None and share is not None
    assert wide is not None and witness_rms is not None
    rules = _Rules(fixed, share, wide, witness_rms)
    if prep.single and prep.cap is None and prep.n:
        return [_complement_single(prep, single_count(prep, k), rules, steps, head,
                                   bool(centred))]
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    valid = prep.valid
    has_candidates: list[bool] = (valid.sum(axis=1) > 0).tolist()
    rel = np.where(valid, prep.rel, -np.inf)
    threshold, band, witnesses, sigma, step = _setup(prep, rel, K, rules, steps, centred)
    cons = start_constraints(prep)
    avail = valid.copy() if cons is None else cons.open.copy()
    restated = np.zeros((B, n), dtype=bool)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    taken = np.zeros((B, K), dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(K):
            if t < head:
                eligible = avail & ~restated
                eligible |= avail & ~eligible.any(axis=1, keepdims=True)  # only restatements
                score = np.where(eligible, rel, -np.inf)
            else:
                eligible = avail
                score = np.where(avail, rel - sigma[:, None] * restated, -np.inf)
            p = argmax_first(score, prep.tie_rtol)
            gain = rel[rows, p]
            if step is not None and 1 <= t <= steps:
                pair, now = step.pair_scores(eligible)
                v = argmax_first(pair, prep.tie_rtol)
                take = (pair[rows, v] > now) & step.raw_agrees(eligible, v, prep.tie_rtol)
                p = np.where(take, v, p)
                gain = np.where(take, pair[rows, v], gain)
                taken[:, t] = take
            active = step_active(t, counts, cons)
            picks[:, t] = p
            gains[:, t] = gain
            avail[rows, p] = False
            if cons is not None and (blocked := cons.add(p, active)) is not None:
                avail &= ~blocked  # a full group's, or too long for the tokens left
            if t < K - 1:
                sims = prep.sims_to(p)
                over = sims > threshold[:, None]
                if witnesses is not None:  # the close band: restated unless told apart
                    near = (sims > band[:, None]) & ~over & avail & ~restated
                    near &= active[:, None]
                    for b in np.flatnonzero(near.any(axis=1)).tolist():
                        js = np.flatnonzero(near[b])
                        over[b, js] = witnesses.indistinct(b, int(p[b]), js)
                restated |= over
                if step is not None and t < steps:
                    step.add(p, sims, active)
    counts = taken_counts(counts, cons)
    out = split_rows(picks, gains, counts)
    for b, picked in enumerate(out):
        # None for a query without candidates
        picked.info["duplicate_cos"] = float(threshold[b]) if has_candidates[b] else None
        picked.info["indistinct_cos"] = float(band[b]) if np.isfinite(band[b]) else None
        picked.info["complement_at"] = np.flatnonzero(taken[b, : counts[b]]).tolist()
        picked.info["demotion"] = float(sigma[b]) if has_candidates[b] else None
    return out


def _relevance_spread(rel: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(B,) sigma: the standard deviation of each query's real candidates' relevance."""
    live = np.where(valid, rel, 0.0)
    size = np.maximum(valid.sum(axis=1), 1)
    mean_rel = live.sum(axis=1) / size
    return np.sqrt(np.maximum(
        np.where(valid, (rel - mean_rel[:, None]) ** 2, 0.0).sum(axis=1) / size, 0.0))


def _complement_single(prep: Prepared, K: int, rules: _Rules, steps: int, head: int,
                       centred: bool) -> Picked:
    """The same selection for one query whose candidates are all real, on 1-D rows.

    ``open_rel`` is the relevance with picks at -inf; ``fresh_rel`` also has the
    restatements at -inf. In the head a pick is the best of ``fresh_rel`` while it has
    a finite entry (else of ``open_rel``); after it, of ``open_rel - sigma * restated``.
    The method-contract and batch tests hold this path equal to the batched one.
    """
    rel = prep.rel[0].astype(np.float64)
    thresholds, bands, witnesses, sigmas, step = _setup(prep, rel[None, :], K, rules, steps,
                                                         centred)
    threshold, sigma = float(thresholds[0]), float(sigmas[0])
    band = float(bands[0])
    info: dict = {"duplicate_cos": threshold,
                  "indistinct_cos": band if np.isfinite(band) else None,
                  "complement_at": [], "demotion": sigma}
    if K == 0:
        return Picked(np.zeros(0, dtype=np.int64), np.zeros(0), info)
    n, rtol = prep.n, prep.tie_rtol
    open_rel = rel.copy()
    fresh_rel = rel.copy()
    restated = np.zeros(n, dtype=bool)
    fresh = n  # candidates neither picked nor restated
    sims = np.empty(n)
    scale = prep.scale[0] if prep.normalize else None
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    for t in range(K):
        if t < head:
            pool = fresh_rel if fresh else open_rel
        else:
            pool = open_rel - sigma * restated
        p = argmax_first_1d(pool, rtol)
        gain = float(rel[p])
        if step is not None and 1 <= t <= steps:
            eligible = (pool != -np.inf)[None, :]
            pair, now = step.pair_scores(eligible)
            v = argmax_first_1d(pair[0], rtol)
            if pair[0, v] > now[0] and step.raw_agrees(eligible, np.array([v]), rtol)[0]:
                p, gain = v, float(pair[0, v])
                info["complement_at"].append(t)
        picks[t], gains[t] = p, gain
        if fresh_rel[p] != -np.inf:
            fresh -= 1
        open_rel[p] = fresh_rel[p] = -np.inf
        if t < K - 1:
            prep.products_into(p, 1.0, sims, scale)
            over = sims > threshold
            if witnesses is not None:  # the close band: restated unless told apart
                near = (sims > band) & ~over & ~restated & (open_rel != -np.inf)
                if near.any():
                    js = np.flatnonzero(near)
                    over[js] = witnesses.indistinct(0, int(p), js)
            restated |= over
            if t + 1 < head:  # fresh_rel is read only in the head
                new = over & (fresh_rel != -np.inf)
                fresh -= int(np.count_nonzero(new))
                fresh_rel[new] = -np.inf
            if step is not None and t < steps:
                step.add(np.array([p]), sims[None, :], np.array([True]))
    return Picked(picks, gains, info)


class _Rules:
    """The restatement options, checked: a fixed cosine, or the pool's shares."""

    def __init__(self, fixed: float | None, share: float, wide: float, witness_rms: float):
        self.fixed, self.share, self.wide, self.witness_rms = fixed, share, wide, witness_rms

    @property
    def witnesses(self) -> bool:
        """Whether the close band's witness test runs."""
        return self.fixed is None and self.share > 0.0 and self.wide > self.share


def _setup(prep: Prepared, rel: np.ndarray, K: int, rules: _Rules, steps: int, centred: bool
           ) -> tuple[np.ndarray, np.ndarray, _Witnesses | None, np.ndarray,
                      _StepGeometry | None]:
    """Both paths' start: (B,) restatement thresholds, (B,) the close band's threshold
    (+inf without the test, or below two candidates) and its witnesses (None without
    the test), (B,) sigma, and the complement step's
    geometry (None without a step). ``rel`` is the relevance, -inf at padding.
    The pool's sum is taken once, for the thresholds and the step's mean alike."""
    pool = _PoolSum(prep) if rules.fixed is None or (steps and K > 1) else None
    band = np.full(prep.batch, np.inf)
    witnesses = None
    if rules.fixed is not None:
        threshold = np.full(prep.batch, rules.fixed)
    else:
        assert pool is not None
        threshold = pool.restatement_threshold(rel.max(axis=1, initial=-np.inf), rules.share)
        if rules.witnesses and K > 1:
            band = pool.share_threshold(rules.wide)
            witnesses = _Witnesses(prep, pool, rules.witness_rms)
    sigma = _relevance_spread(prep.rel, prep.valid)
    step = _StepGeometry(prep, centred, pool) if pool is not None and steps and K > 1 else None
    return threshold, band, witnesses, sigma, step


class _PoolSum:
    """Each query's sum of real working vectors (one BLAS product), their count, and
    the sum of their squared lengths: enough for the pool's mean vector and for its
    mean pairwise inner product, sum_{i != j} c_i.c_j = |sum c|^2 - sum |c|^2."""

    def __init__(self, prep: Prepared) -> None:
        weights = np.where(prep.valid, prep.scale if prep.normalize else 1.0, 0.0)
        X = prep.X  # the product in the input's dtype, the result in float64
        self.total = (weights.astype(X.dtype)[:, None, :] @ X)[:, 0, :].astype(np.float64)
        self.count = prep.valid.sum(axis=1)
        self.self_sum = np.where(prep.valid, prep.sq_norm, 0.0).sum(axis=1)  # sum |c|^2
        self.total_sq = np.einsum("bd,bd->b", self.total, self.total)  # |sum c|^2

    def concentration(self) -> np.ndarray:
        """(B,) |mean c| / sqrt(mean |c|^2) = |sum c| / sqrt(n sum |c|^2), in [0, 1]: 1
        when the candidates coincide, 0 when they have no common direction (0 for a
        query without candidates)."""
        spread = self.count * self.self_sum
        return np.where(spread > TINY, np.sqrt(np.clip(
            self.total_sq / np.maximum(spread, TINY), 0.0, 1.0)), 0.0)

    def restatement_threshold(self, best: np.ndarray, share: float) -> np.ndarray:
        """(B,): the lower of (1 + best)/2 and the pool's own threshold
        (``share_threshold``; +inf below two candidates or at ``share`` 0)."""
        half = (1.0 + best) / 2.0
        if share == 0.0:
            return half
        return np.minimum(half, self.share_threshold(share))

    def share_threshold(self, share: float) -> np.ndarray:
        """(B,): the inner product at which a pair's squared distance is ``share`` of
        the pool's mean squared pairwise distance (+inf below two candidates)."""
        pairs = self.count * (self.count - 1.0)
        mean_self = self.self_sum / np.maximum(self.count, 1)
        mean_pair = (self.total_sq - self.self_sum) / np.maximum(pairs, 1.0)
        return np.where(pairs > 0, mean_self - share * (mean_self - mean_pair), np.inf)

    @property
    def mean(self) -> np.ndarray:
        """(B, d): the mean of each query's real working vectors (0 without any)."""
        return self.total / np.maximum(self.count, 1)[:, None]


class _StepGeometry:
    """The complement step's vectors w_j and query u, and the running sum s of the
    picks' w, kept as inner products: w_j.u, |w_j|^2, s.w_j, s.u, |s|^2.

    Centred: w_j = (c_j - m) / |c_j - m| and u = (q - m) / |q - m|, m = lambda * mean
    of the query's real candidates, lambda = |mean| / sqrt(mean |c|^2) their
    concentration; every product comes from the working products the run has anyway
    (c.q, |c|^2, and a pick's row c_p.c_j) plus c_j.m, one extra matrix-vector
    product. Raw: w_j = c_j and u = q / |q| (VRSD's own step).
    A (near) zero-length w or u contributes nothing and never raises a cosine.
    """

    def __init__(self, prep: Prepared, centred: bool, pool: _PoolSum) -> None:
        B = prep.batch
        self.valid = prep.valid
        self.centred = centred
        if centred:
            lam = pool.concentration()  # lambda: 1 for a tight pool, 0 if none
            mean = pool.mean * lam[:, None]
            X = prep.X  # the product in the input's dtype, the result in float64
            cm = (X @ mean.astype(X.dtype)[:, :, None])[:, :, 0].astype(np.float64)  # c_j . m
            self.cm = cm * prep.scale if prep.normalize else cm
            mm = np.einsum("bd,bd->b", mean, mean)
            self.mm = mm
            qm = np.einsum("bd,bd->b", prep.q.astype(np.float64), mean)
            wq = prep.qsim - self.cm - qm[:, None] + mm[:, None]  # (c_j - m).(q - m)
            wsq = prep.sq_norm - 2.0 * self.cm + mm[:, None]  # |c_j - m|^2
            qsq = prep.q_norm**2 - 2.0 * qm + mm
            self.len = np.sqrt(np.maximum(wsq, 0.0))
            self.inv = np.where(self.len > TINY, 1.0 / np.maximum(self.len, TINY), 0.0)
            q_len = np.sqrt(np.maximum(qsq, 0.0))
            q_inv = np.where(q_len > TINY, 1.0 / np.maximum(q_len, TINY), 0.0)
            self.wu = wq * self.inv * q_inv[:, None]
            self.wsq = (self.len > TINY).astype(np.float64)
        else:
            self.wu = prep.qsim / np.maximum(prep.q_norm, TINY)[:, None]
            self.wsq = prep.sq_norm.astype(np.float64, copy=True)
        self.s_w = np.zeros((B, prep.n))
        self.s_u = np.zeros(B)
        self.s_sq = np.zeros(B)
        # the paper's raw geometry, kept alongside a centred step for its gate
        self.raw = _StepGeometry(prep, False, pool) if centred else None

    def raw_agrees(self, eligible: np.ndarray, v: np.ndarray, tie_rtol: float) -> np.ndarray:
        """(B,): whether VRSD's own step, in raw cosines, picks the same candidate v
        (always True for a raw step, which is that step)."""
        if self.raw is None:
            return np.ones(len(v), dtype=bool)
        raw, _ = self.raw.pair_scores(eligible)
        return argmax_first(raw, tie_rtol) == v

    def pair_scores(self, eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """cos(s + w_j, u) for every eligible j (-inf elsewhere), and cos(s, u) now."""
        num = self.s_u[:, None] + self.wu
        den2 = self.s_sq[:, None] + 2.0 * self.s_w + self.wsq
        pair = np.where(den2 > TINY, num / np.sqrt(np.maximum(den2, TINY)), 0.0)
        now = np.where(self.s_sq > TINY, self.s_u / np.sqrt(np.maximum(self.s_sq, TINY)), 0.0)
        return np.where(eligible, pair, -np.inf), now

    def add(self, p: np.ndarray, sims: np.ndarray, active: np.ndarray) -> None:
        """Add pick p (per query, where active) to the sum; ``sims`` is its row c_p.c_j."""
        rows = np.arange(len(p))
        if self.centred:
            cross = sims - self.cm - self.cm[rows, p][:, None] + self.mm[:, None]
            w_w = cross * self.inv * self.inv[rows, p][:, None]  # w_p . w_j
        else:
            w_w = sims
        if self.raw is not None:
            self.raw.add(p, sims, active)
        on = active.astype(np.float64)
        self.s_sq += on * (self.wsq[rows, p] + 2.0 * self.s_w[rows, p])
        self.s_u += on * self.wu[rows, p]
        self.s_w += on[:, None] * np.where(self.valid, w_w, 0.0)


class _Witnesses:
    """The close band's test: do the pool's other candidates tell a pick p and a
    candidate j apart?

    Seen from the pool's mean, each real candidate i is a direction w_i (unit
    length). The difference e = (c_p - c_j) / |c_p - c_j| is told apart when its
    mean squared cosine with the other candidates' directions, mean_i (e . w_i)^2
    over i not p or j, is at least ``rms``^2 times the pool's own: mean_{i,l}
    (w_i . w_l)^2 over every pair, self-pairs included (1 / the participation
    ratio of the directions' spread). A restatement differs from its source in
    wording, which no other candidate shares; two distinct facts differ in content,
    which other candidates of the pool carry too.

    Built per query on first use. With n <= d (the usual pool) it keeps the
    directions' n x n Gram product, which gives the pool's own figure and, as
    c_p - c_j = l_p w_p - l_j w_j (l the lengths from the mean), every test without
    another product. A larger pool keeps the d x d product for its own figure and
    the directions themselves: one n x d product per candidate tested.
    """

    def __init__(self, prep: Prepared, pool: _PoolSum, rms: float) -> None:
        self.prep, self.pool, self.rms2 = prep, pool, rms * rms  # pool: its mean
        self._cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray | None, float]] = {}

    def _directions(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
        """Query b's lengths from the mean (n,), unit directions W (n, d), their Gram
        product (n, n; None when n > d) and the pool's own figure. Padding and
        zero-length directions are 0."""
        if b not in self._cache:
            prep = self.prep
            real = prep.valid[b]
            X = np.asarray(prep.X[b], dtype=np.float64)
            W = (X * prep.scale[b][:, None] if prep.normalize else X) - self.pool.mean[b]
            W[~real] = 0.0
            length = np.sqrt(np.einsum("nd,nd->n", W, W))
            W *= np.where(length > TINY, 1.0 / np.maximum(length, TINY), 0.0)[:, None]
            n, d = W.shape
            gram = W @ W.T if n <= d else None
            square = gram if gram is not None else W.T @ W  # same Frobenius norm
            own = float(np.einsum("ij,ij->", square, square)) / max(int(real.sum()), 1) ** 2
            self._cache[b] = (length * (length > TINY), W, gram, own)
        return self._cache[b]

    def indistinct(self, b: int, p: int, js: np.ndarray) -> np.ndarray:
        """(len(js),) bool: no other candidate tells pick p and candidate j apart."""
        length, W, gram, own = self._directions(b)
        others = int(self.prep.valid[b].sum()) - 2
        if others < 1 or own <= TINY:
            return np.zeros(len(js), dtype=bool)
        if gram is not None:  # w_i . (c_p - c_j) = l_p G_ip - l_j G_ij
            A = length[p] * gram[:, p][:, None] - length[js] * gram[:, js]
        else:
            A = W @ (length[p] * W[p][None, :] - length[js][:, None] * W[js]).T
        sq = (length[p] ** 2 + length[js] ** 2
              - 2.0 * length[p] * length[js] * (gram[p, js] if gram is not None
                                                 else W[js] @ W[p]))  # |c_p - c_j|^2
        A[p, :] = 0.0
        A[js, np.arange(len(js))] = 0.0
        energy = np.einsum("nm,nm->m", A, A) / np.maximum(sq, TINY) / others
        return (sq > TINY * TINY) & (energy < self.rms2 * own)
