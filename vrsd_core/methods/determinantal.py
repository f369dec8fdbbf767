"""The determinantal selection: ``complement`` (the default) and ``dpp``, one greedy loop.

Both take the k candidates most likely *together* under a determinantal point process
(Kulesza & Taskar; greedy MAP as in Chen, Zhang & Zhou, NeurIPS 2018) whose kernel is
L = diag(w) S diag(w): S the similarity between candidates (``Prepared.similarity``:
their cosines, or with profiles the mean of the vectors' and the profiles' cosines) and
w the quality weights. The two methods differ only in w.

**The loop** (``greedy_map``). Each step adds the open candidate j with the largest
determinant ratio

    d_j^2 = det(L_{Y+j}) / det(L_Y) = w_j^2 r_j,    r_j = S_jj - |c_j|^2,

c_j the candidate's row of the incremental Cholesky factor of the *unweighted* S_Y (the
weights of the picks cancel in the ratio). Adding pick p writes one factor row,

    e_j = (S_jp - <c_j, c_p>) / sqrt(r_p),    r_j <- r_j - e_j^2,

so a pick costs one matrix-vector product (S's row p) and O(k n) arithmetic, and the
weights may change after a pick at no extra product (the default's links,
``LinkChain`` below: the quality is then e^q, q updated per pick). When every
ratio left is numerically zero (below ``RANK_EPS`` of the largest quality: k above the
kernel's rank, or only copies left), the rest is filled by relevance, with gain 0,
counted in ``info["filled_by_relevance"]``. ``gains`` are the determinant ratios. Ties
go to the lower index (the store's order).

**``complement``**, the project's default for retrieval-augmented generation: the
weights read each candidate's relevance **in its pool's units**.

* *Quality.* z_i is the candidate's relevance standardised within its pool,
  (rel_i - mean) / std over the pool's candidates (several signals, e.g. the cosine
  and the words' BM25 the adapters add, are fused first by ``vrsd_core.pool_units``,
  whose result is already in these units: standardising it again changes nothing but
  rounding), and w_i = exp(z_i / 2). Then det L_Y = exp(sum of z over Y) * det S_Y:
  one standard deviation of relevance is worth one e-fold of the volume the set spans,
  whatever the embedding model's cosine range or the scale of an outside
  ``relevance=`` (a cross-encoder's logits). Each greedy step adds the candidate with
  the largest ``w_j^2 (1 - |projection of c_j on the picks|^2)``: relevance times what
  the candidate says that the picks do not. A restatement of a pick adds almost
  nothing and waits; a distinct passage of the same topic does not.
* *Links.* With ``links`` (``vrsd_core.Links``, the adapters read them from the
  words), after each pick a candidate whose link to the picks stands out among the
  pool's links is lifted: q = z(spread z + lift) (``LinkChain`` below), and
  ``info["linked_to"]`` says per pick which earlier pick (its position) a link brought
  it in by, -1 for none. A pool whose links are all incidental keeps the picks it has
  without them.
* *Held back.* ``info["top_k"]`` lists what plain top-k (by the same relevance, the
  same number of picks) would have returned, best first; ``info["held_back"]`` the
  ones of those this did not pick, in that order. Why each was passed over needs the
  texts: the adapters say which restate a kept passage (``vrsd_kit.rerank``). Under a
  cap or a budget, only candidates that were still allowed are listed as held back.
* *Profiles.* With ``profiles`` (a second description of each candidate; the adapters
  pass its words' profile), S is the mean of the vectors' and the profiles' cosines
  (``vrsd_core._prepare.with_word_profiles``): two passages that point the same way but
  say different things span more than two that say the same.

**``dpp``**: the weights read the relevance *as given*, with a trade-off ``theta``
(Chen, Zhang & Zhou's formulation): w_i = exp(alpha * rel_i) with
alpha = theta / (2 (1 - theta)), so that log det L_Y = theta/(1-theta) * sum_{i in Y}
rel_i + log det S_Y: ``theta`` trades relevance (1) against diversity (0). On a raw
cosine (unless ``relevance=`` is given) the same ``theta`` means a different balance on
another model. Use it to reproduce Chen et al.'s k-DPP or to tune ``theta`` on one
model and one relevance scale; use ``complement`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._prepare import LinkArrays, Prepared, argmax_first, row_dots, standardised
from ..options import OptionSpec
from ._common import (
    Picked,
    pick_counts,
    split_rows,
    start_constraints,
    step_active,
    stopped_short,
    taken_counts,
)

# A determinant ratio below this fraction of the largest quality is numerical zero.
RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}
_SMALLEST = float(np.finfo(np.float64).tiny)  # the least weight a score carries


Closes = Callable[[int, int, list[int]], bool]
"""``closes(row, candidate, picks)``: whether ``candidate``, the next pick of query ``row``
after ``picks`` (in selection order), is closed instead (the kit's judge of copies)."""


def greedy_map(prep: Prepared, k: int, quality: np.ndarray, chain: LinkChain | None = None,
               closes: Closes | None = None) -> tuple[list[Picked], np.ndarray]:
    """The greedy picks for quality weights ``quality`` (B, n; 0 at padding): per query a
    ``Picked`` (gains the determinant ratios, 0 for fills), and the (B, n) candidates
    still open after the run (real, not picked, not closed by a cap or budget).

    The loop carries the Cholesky factor of the *unweighted* likeness S and scores
    w_j^2 r_j (r_j the residual of j in S given the picks: det L_{Y+j} / det L_Y with
    L = diag(w) S diag(w), the weights of the picks cancel), so the quality may change
    after a pick at no extra product: ``chain`` (the default's links, ``LinkChain``)
    gives the new quality after each pick; without it the quality is fixed.

    A candidate that is closed (padding, picked, or shut out by a cap or budget) has
    residual -inf and relevance -inf, so neither score can choose it. ``closes``: each
    step's pick is first offered to it; a candidate it closes is never picked, and the
    step picks again among the others (``_judged``): the run is the one in which every
    candidate it closes was closed from the start (``info["closed"]`` lists them, in the
    order closed; a query with nothing open left stops short). The open mask returned
    counts them as open (not picked, not shut out)."""
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    similarity = prep.similarity
    weight = quality * quality  # w_j^2, what each residual is scored with
    residual = np.array(similarity.self_similarity, dtype=np.float64)  # r_j before any pick: S_jj
    numerical_zero = RANK_EPS[prep.X.dtype] * (weight * residual).max(axis=1, initial=0.0)
    without_candidates = numerical_zero == 0  # rows of padding only: no step length
    if not without_candidates.any():
        without_candidates = None
    weight = np.maximum(weight, _SMALLEST)  # so that a weight of 0 times a closed -inf is -inf
    plain_weight = weight
    cons = start_constraints(prep)
    open_at_start = prep.valid if cons is None else cons.open
    residual = np.where(open_at_start, residual, -np.inf)
    relevance = np.where(open_at_start, prep.rel, -np.inf)  # what fills rank by
    cholesky_rows = np.zeros((B, K, n))
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    judged = None if closes is None else _Judged(closes, B, n)
    for t in range(K):
        active = step_active(t, counts, cons)
        if not active.any():  # every query has its picks (or nothing open): done
            break
        score = weight * residual  # d_j^2 = w_j^2 r_j
        best = score.max(axis=1, initial=-np.inf)
        exhausted |= best <= numerical_zero
        any_exhausted = bool(exhausted.any())
        if any_exhausted:
            fill = relevance if chain is None else chain.fill_order(relevance)
            score = np.where(exhausted[:, None], fill, score)
            best = score.max(axis=1)
        pick = argmax_first(score, prep.tie_rtol, best)
        if judged is not None and judged.step(t, pick, active, picks[:, :t], counts, cons,
                                              prep.tie_rtol, weight, residual, relevance,
                                              numerical_zero, exhausted, chain):
            any_exhausted = bool(exhausted.any())  # a step picked again may fill
        if chain is not None and (via := chain.lifted_by(pick)) is not None:
            # a link may have brought it in: what the step scores without links
            chain.record(t, pick, via, np.where(exhausted[:, None], relevance,
                                                plain_weight * residual)
                         if any_exhausted else plain_weight * residual)
        pick_residual = residual[rows, pick]
        pick_weight = weight[rows, pick]
        picks[:, t] = pick
        gains[:, t] = pick_weight * pick_residual
        if any_exhausted:  # a fill gains nothing
            gains[exhausted, t] = 0.0
            filled += exhausted & active
        residual[rows, pick] = relevance[rows, pick] = -np.inf
        if cons is not None and (blocked := cons.add(pick, active)) is not None:
            # a full group's, or too long for the tokens left
            residual[blocked] = relevance[blocked] = -np.inf
        if t == K - 1 or any_exhausted and exhausted.all():
            continue
        kernel_column = similarity.to(pick)  # S[:, p]: the one product
        # sqrt(r_p), with the floor of d_p^2 = w_p^2 r_p at numerical zero
        with np.errstate(over="ignore"):  # a fill's weight may be tiny: it is not used
            pick_length = np.sqrt(np.maximum(pick_residual, numerical_zero / pick_weight))
        if without_candidates is not None:
            pick_length[without_candidates] = 1.0
        shared = np.einsum("bt,btn->bn", cholesky_rows[rows, :t, pick], cholesky_rows[:, :t, :])
        update_component = (kernel_column - shared) / pick_length[:, None]
        if any_exhausted:  # such a row fills by relevance: its factor is not read again
            update_component[exhausted] = 0.0
        cholesky_rows[:, t] = update_component
        residual -= update_component * update_component
        if chain is not None:  # the quality after this pick: exp(q), q within a few units
            lifted = chain.after_pick(t, pick, kernel_column)
            weight = plain_weight if lifted is None else np.exp(lifted) if chain.all_lifted \
                else np.where(chain.lifted[:, None], np.exp(lifted), plain_weight)
    result = split_rows(picks, gains, taken_counts(counts, cons))
    linked_to = None if chain is None else chain.linked(None if judged is None else judged.mask)
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
        if linked_to is not None:
            picked.info["linked_to"] = linked_to[b, : len(picked.indices)].tolist()
        if judged is not None:
            picked.info["closed"] = judged.order[b]
    open_ = relevance > -np.inf
    return result, open_ if judged is None else open_ | judged.mask


class _Judged:
    """The candidates ``closes`` closed in a greedy run (``mask``, (B, n); ``order``, per
    query in the order closed), and the step that asks it (``step``)."""

    def __init__(self, closes: Closes, batch: int, n: int) -> None:
        self.closes = closes
        self.mask = np.zeros((batch, n), dtype=bool)
        self.order: list[list[int]] = [[] for _ in range(batch)]

    def step(self, t: int, pick: np.ndarray, active: np.ndarray, before: np.ndarray,
             counts: np.ndarray, cons: Any, tie_rtol: float, weight: np.ndarray,
             residual: np.ndarray, relevance: np.ndarray, numerical_zero: np.ndarray,
             exhausted: np.ndarray, chain: LinkChain | None) -> bool:
        """Offer step t's picks (``pick``, after the picks ``before``) to ``closes``;
        while it closes a query's pick, close that candidate (never picked: residual and
        relevance -inf) and pick again as the step would have without it (``greedy_map``'s
        score, or its fill when the ratios left are numerically zero). A query with
        nothing open left stops (its count is t). Changes the arrays given in place; returns
        whether it closed a candidate."""
        closed = False
        for b in np.flatnonzero(active).tolist():
            picked = before[b].tolist()
            if relevance[b, pick[b]] == -np.inf:  # nothing open: this query stops here
                counts[b] = t
                active[b] = False
                continue
            while self.closes(b, candidate := int(pick[b]), picked):
                closed = True
                self.mask[b, candidate] = True
                self.order[b].append(candidate)
                residual[b, candidate] = relevance[b, candidate] = -np.inf
                if cons is not None:
                    cons.open[b, candidate] = False
                if relevance[b].max() == -np.inf:  # nothing open: this query stops here
                    counts[b] = t
                    active[b] = False
                    break
                score = weight[b] * residual[b]
                exhausted[b] |= score.max() <= numerical_zero[b]
                if exhausted[b]:
                    score = (relevance if chain is None else chain.fill_order(relevance))[b]
                pick[b] = argmax_first(score[None], tie_rtol)[0]
        return closed


def complement(prep: Prepared, k: int, *, links: LinkArrays | None = None,
               closes: Closes | None = None) -> list[Picked]:
    """The default selection; ``gains`` are determinant ratios (0 for fills). With
    ``links`` (``vrsd_core.Links``, checked by ``vrsd_core.api``), a candidate linked to a
    pick beyond the incidental is lifted (``LinkChain`` below) and ``info["linked_to"]``
    says, per pick, which earlier pick (its position) a link brought it in by, -1 for
    none. With ``closes`` (the kit's judge of copies), a pick it closes is never picked
    (``greedy_map``); ``info["top_k"]`` is then what plain top-k returns without it: as
    many as the run without the judge picks and, under a cap or a budget where the judge
    closed a candidate, read from that run (it spends the tokens and fills the groups its
    own way), whose ``info["top_k_stopped"]`` says what stopped it short
    (``stopped_short``: ``"max_tokens"``, ``"max_per_group"`` or None)."""
    if closes is not None and not callable(closes):
        CLOSES.check(closes)  # its ValueError, naming the option
    in_pool_units = standardised(prep.rel, None if prep.all_real else prep.valid)
    quality = np.where(prep.valid, np.exp(in_pool_units / 2.0), 0.0)
    counts = pick_counts(prep, k)

    def run(closes: Closes | None) -> tuple[list[Picked], np.ndarray]:
        chain = None if links is None else LinkChain(
            links, np.where(prep.valid, in_pool_units, 0.0), prep.valid,
            int(counts.max(initial=0)), prep.tie_rtol)
        return greedy_map(prep, k, quality, chain, closes)

    picked, open_ = run(closes)
    plain, plain_open = picked, open_  # the run plain top-k is read from
    if closes is not None and prep.constrained and any(p.info["closed"] for p in picked):
        plain, plain_open = run(None)
    all_open = prep.all_real and not prep.constrained  # every candidate open at the start
    for b, p in enumerate(picked):
        many = len(plain[b].indices) if closes is None or prep.constrained else int(counts[b])
        top_k = _top_k(prep.rel[b], plain_open[b], plain[b].indices, all_open, many)
        p.info["top_k"], p.info["held_back"] = top_k.tolist(), top_k[open_[b][top_k]].tolist()
        if plain is not picked and p.info["closed"]:
            p.info["top_k_stopped"] = stopped_short(prep, k, b, plain[b].indices)
    return picked


def _top_k(rel: np.ndarray, open_: np.ndarray, picked: np.ndarray, all_open: bool,
           many: int) -> np.ndarray:
    """Plain top-k by ``rel`` among a run's picks and the candidates it left open, ``many``
    of them, best first. ``all_open``: every candidate was open before the first pick."""
    if not many:
        return np.zeros(0, dtype=np.int64)
    if all_open:
        return (-rel).argsort(kind="stable")[:many]
    pool = open_.copy()
    pool[picked] = True
    return np.argsort(np.where(pool, -rel, np.inf), kind="stable")[:many]


THETA = OptionSpec("theta", "unit", 0.5, "relevance (near 1) against diversity (0), on the "
                   "relevance's own scale", high_open=True)
DPP_OPTIONS = (THETA,)
LINKS = OptionSpec("links", "per_candidate", None,
                   "links between candidates (vrsd_core.Links: their words' cosine outside "
                   "the question, the pairs beyond chance); the adapters read them from the words")
CLOSES = OptionSpec("closes", "callable", None,
                     "(row, candidate, picks) -> True to close the candidate instead of picking "
                     "it (the kit's judge of copies: no copy of a pick is kept)")
COMPLEMENT_OPTIONS = (LINKS, CLOSES)


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = THETA.check(theta)
    alpha = th / (2.0 * (1.0 - th))
    # Shift by each row's best relevance: scales det L by a constant, so the
    # argmax is unchanged, and exp cannot overflow.
    best = np.where(prep.valid, prep.rel, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
    best = np.where(np.isfinite(best), best, 0.0)
    quality = np.where(prep.valid, np.exp(alpha * (prep.rel - best)), 0.0)
    return greedy_map(prep, k, quality)[0]


# --- The links in the chain form (the default's ``links`` option) --------------------

LIFT_SD = 1.5
"""A link lifts a candidate only beyond this many standard deviations of the pool's links."""


class LinkChain:
    """The links of a greedy run in the chain form, for a batch of B pools: the loop asks
    ``lifted_by`` at each pick (and ``record``s a pick a link may have brought in) and
    calls ``after_pick`` after its kernel column is computed.

    ``z``: (B, n) the relevance in pool units (the quality's log before any link);
    ``valid``: (B, n) real candidates; ``steps``: the most picks of the run.

    Links between candidates: the default's third relation, beside "alike" and "unrelated".

    A multi-hop question needs a chain: the first passage answers the part the question
    names and, in doing so, names a bridge (a person, a film, a place) the question does not
    contain; the second passage is *about* that bridge, so its vector and its words are far
    from the question and every relevance signal ranks it low. What connects it is a
    **link**: it shares some of a picked passage's rarer words, words the question does not
    contain, without being a copy of it.

    ``Links`` carries one pool's links to ``complement`` (its ``links`` option; the adapters
    build it from the candidates' words, ``vrsd_kit.lexical``): per pair, how alike the two
    candidates' words outside the question are (``cosine``), and whether the words they share
    are more than chance (``beyond_chance``). ``LinkChain`` is what the greedy loop
    (``greedy_map`` above) reads after each pick, in the chain form: a candidate's
    link is to what has *already been picked*.

    After pick a, candidate j's link to it has the strength

        F_ja = G_ja (1 - G_ja) (1 - S_ja) exp(z_a - max z)

    G the words' cosine, S the selection's own likeness (the kernel column the loop has just
    computed), z the relevance in pool units. (1 - G) and (1 - S): a copy of a links to
    nothing, whether it repeats a's rare words or says what a says; exp(z_a - max z): a link
    from a weak pick is worth less. L_j is the strongest link to any pick so far, and Lg_j
    the strongest among the pairs beyond chance. The link lifts a candidate only beyond the
    incidental, in the pool's own units of links:

        lift_j = max(0, (Lg_j - mean L) / sd L - LIFT_SD)

    and the quality is z(spread * z + lift): the lift counts as one more relevance signal
    would, before the signals' sum is put in pool units (``spread`` is that sum's standard
    deviation, ``Links.spread``). A link never lowers a candidate, and a pool whose links all
    stay within ``LIFT_SD`` of their mean keeps its quality exactly: the picks are those
    without links. ``LIFT_SD`` = 1.5 is the one constant (chosen on half of one dev set's
    questions as the largest gain whose single-hop similarity stays within 0.005 of the
    default without links; docs/evaluation.md).

    A pick is *brought in by a link* when it was lifted, it has a link beyond chance, and the
    same step without links would have picked another candidate: ``info["linked_to"]`` gives,
    per pick, the position of the pick it links to (-1 for none).
    """

    def __init__(self, links: LinkArrays, z: np.ndarray, valid: np.ndarray, steps: int,
                 tie_rtol: float) -> None:
        pairs = valid[:, :, None] & valid[:, None, :]
        words = links.cosine
        # [b, p, :, j]: j's link to p before the likeness and the pick's relevance,
        # G (1 - G), every link and those beyond chance; read as rows (one pair per pick);
        # pairs with padding link nothing
        any_link = np.where(pairs, words * (1.0 - words), 0.0).transpose(0, 2, 1)
        self.link_rows = np.stack(
            [any_link, np.where(links.beyond_chance.transpose(0, 2, 1), any_link, 0.0)], axis=2)
        self.spread = links.spread[:, None]
        self.spread_z = self.spread * z  # the relevance as one signal of the lifted sum
        self.valid = valid
        self.mask = None if valid.all() else valid
        self.count = np.maximum(valid.sum(axis=1), 1)[:, None]
        self.z = z
        best = np.where(valid, z, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
        self.carry = np.where(valid, np.exp(z - np.where(np.isfinite(best), best, 0.0)), 0.0)
        # a pick whose quality is above this was raised by a link (beyond a tie)
        self.raised_above = z + tie_rtol * np.maximum(1.0, np.abs(z))
        B, n = z.shape
        self.rows = np.arange(B)
        self.strongest_links = np.zeros((B, 2, n))
        self.strongest = self.strongest_links[:, 0]  # L: every link, the pool's units
        self.gated = self.strongest_links[:, 1]  # Lg: the links beyond chance
        self.via = np.full((B, n), -1)  # the pick (its position) each candidate links to most
        self.quality = z  # log of the quality the next step scores by
        self.lifted = np.zeros(B, dtype=bool)  # rows whose quality a link changed
        self.any_lifted = self.all_lifted = False  # lifted.any(), lifted.all()
        self.linked_to = np.full((B, steps), -1)
        self.steps: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # ``record``'s
        self.tie_rtol = tie_rtol

    def fill_order(self, relevance: np.ndarray) -> np.ndarray:
        """What an exhausted row fills by: its relevance, or where a link lifted the row,
        the lifted quality (-inf where ``relevance`` is: closed)."""
        if not self.any_lifted:
            return relevance
        lifted = np.where(relevance > -np.inf, self.quality, -np.inf)
        return np.where(self.lifted[:, None], lifted, relevance)

    def lifted_by(self, pick: np.ndarray) -> np.ndarray | None:
        """(B,): per query, the earlier pick (its position) a link may have brought this
        step's ``pick`` in by (the pick was lifted above its relevance and has a link
        beyond chance), -1 for none; None when no query's pick may have been."""
        if not self.any_lifted:
            return None
        rows = self.rows
        via = self.via[rows, pick]
        brought = self.lifted & (via >= 0) & (
            self.quality[rows, pick] > self.raised_above[rows, pick])
        return np.where(brought, via, -1) if brought.any() else None

    def record(self, t: int, pick: np.ndarray, via: np.ndarray, scores: np.ndarray) -> None:
        """Step t picked ``pick``, which a link may have brought in (``lifted_by``: ``via``);
        ``scores`` (B, n) is what the step would have scored by without links. It was
        brought in by the link unless the plain score would have picked it too (read at
        the end, ``linked``)."""
        self.steps.append((t, scores[self.rows, pick], scores, via))

    def linked(self, closed: np.ndarray | None = None) -> np.ndarray:
        """(B, steps): per pick, the position of the pick a link brought it in by, -1 for
        none. ``closed`` (B, n): candidates a judge closed during the run, as if closed from
        the start: the plain score's best leaves them out at every step."""
        if closed is not None and not closed.any():
            closed = None
        with np.errstate(invalid="ignore"):  # rows with nothing open
            for t, own, scores, via in self.steps:
                if closed is not None:
                    scores = np.where(closed, -np.inf, scores)
                top = scores.max(axis=1)
                plain_also = own >= top - self.tie_rtol * np.maximum(1.0, np.abs(top))
                self.linked_to[:, t] = np.where(plain_also, -1, via)
        return self.linked_to

    def after_pick(self, t: int, pick: np.ndarray, column: np.ndarray) -> np.ndarray | None:
        """Pick t was ``pick``, ``column`` (B, n) its likeness to every candidate (S[:, p]).
        Returns the new log-quality (B, n) where a link lifts a row (None when none does:
        the quality is the relevance's, as without links)."""
        rows = self.rows
        # (1 - S): a copy links to nothing; the pick's relevance relative to the best
        factor = 1.0 - column
        np.minimum(np.maximum(factor, 0.0, out=factor), 1.0, out=factor)  # within [0, 1]
        factor *= self.carry[rows, pick][:, None]
        links = self.link_rows[rows, pick] * factor[:, None]  # every link, those beyond chance
        np.copyto(self.via, t, where=links[:, 1] > self.gated)
        np.maximum(self.strongest_links, links, out=self.strongest_links)
        # the strongest links in the pool's units of links (padding links 0: left out)
        mean = self.strongest.sum(axis=1, keepdims=True) / self.count
        deviation = self.strongest - mean if self.mask is None else np.where(
            self.valid, self.strongest - mean, 0.0)
        spread = np.sqrt(row_dots(deviation)[:, None] / self.count)
        # a link at 0 never lifts (mean >= 0); nor does any in a pool whose links do not vary
        lift = (self.gated - mean) / np.maximum(spread, 1e-300) - LIFT_SD
        np.maximum(lift, 0.0, out=lift)
        self.lifted = (lift.max(axis=1, initial=0.0) > 0) & (spread[:, 0] > 1e-12)
        self.any_lifted = bool(self.lifted.any())
        self.all_lifted = self.any_lifted and bool(self.lifted.all())
        if not self.any_lifted:
            self.quality = self.z
            return None
        lift += self.spread_z
        if self.mask is None:  # z of it over the pool (standardised, inline: every step)
            lift -= lift.sum(axis=1, keepdims=True) / self.count
            lift /= np.maximum(np.sqrt(row_dots(lift)[:, None] / self.count), 1e-300)
            fused = lift
        else:
            fused = standardised(lift, self.mask)
        self.quality = fused if self.all_lifted else np.where(self.lifted[:, None], fused,
                                                                self.z)
        return self.quality
