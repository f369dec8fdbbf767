"""``complement``, the default: the DPP greedy MAP (``dpp.greedy_map``) with its weights
in the pool's units, links that re-weight after a pick, and copies it may not take.

* *Quality.* z_i is the candidate's relevance standardised within its pool (several
  signals, e.g. the cosine and the words' BM25, are fused first by
  ``vrsd_core.pool_units``), and w_i = exp(z_i / 2). Then det L_Y = exp(sum of z over Y)
  * det S_Y: one standard deviation of relevance is worth one e-fold of the volume the
  set spans, whatever the model's cosine range or the scale of an outside ``relevance=``.
  Each step adds the candidate with the largest w_j^2 (1 - |projection of c_j on the
  picks|^2): relevance times what it says that the picks do not.
* *Links* (``links``, ``vrsd_core.Links``; after a pick: re-weight). A multi-hop
  question's second passage is about a bridge its first passage names and the question
  does not: far from the question, it shares some of a pick's rarer words without being
  a copy of it. After pick a, candidate j's link to it has the strength

      F_ja = G_ja (1 - G_ja) (1 - S_ja) exp(z_a - max z)

  (G the words' cosine, S the selection's likeness: a copy links to nothing; a link from
  a weak pick is worth less). L_j is j's strongest link to any pick, Lg_j the strongest
  among the pairs beyond chance; lift_j = max(0, (Lg_j - mean L) / sd L - ``LIFT_SD``),
  and the quality becomes z(spread * z + lift), the lift counted as one more relevance
  signal (``Links.spread``). A pool whose links all stay within ``LIFT_SD`` of their mean
  keeps its picks. ``info["linked_to"]`` gives per pick the position of the pick a link
  brought it in by (lifted, beyond chance, and the step without links would have picked
  another), -1 for none.
* *Copies* (``closes``; before a pick: may it be taken). ``closes[c, p]`` True: c is a
  copy of p (the kit's judge of copies); offered after p was picked, c is closed
  instead (``info["closed"]``, in the order closed).
* *Held back.* ``info["top_k"]`` is what plain top-k by the same relevance returns (as
  many as the run without ``closes`` picks; under a cap or a budget where copies were
  closed, read from that run, whose ``info["top_k_stopped"]`` says what stopped it:
  ``stopped_short``); ``info["held_back"]`` the ones of those not picked and still
  allowed, in that order.
* *Profiles.* With ``profiles``, S is the mean of the vectors' and the profiles' cosines
  (``vrsd_core._prepare.with_word_profiles``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._prepare import LinkArrays, Prepared, row_dots, standardised
from ..options import OptionSpec
from ._common import Picked, per_query, pick_counts, stopped_short
from .dpp import MayTake, greedy_map

LIFT_SD = 1.5
"""A link lifts a candidate only beyond this many standard deviations of the pool's links."""

LINKS = OptionSpec("links", "per_candidate", None,
                   "links between candidates (vrsd_core.Links: their words' cosine outside "
                   "the question, the pairs beyond chance); the adapters read them from the words")
CLOSES = OptionSpec("closes", "per_candidate", None,
                    "(n, n) booleans: [c, p] True closes candidate c instead of picking it once "
                    "p is picked (the kit's judge of copies: no copy of a pick is kept)")
OPTIONS = (LINKS, CLOSES)


def complement(prep: Prepared, k: int, *, links: LinkArrays | None = None,
               closes: np.ndarray | None = None) -> list[Picked]:
    """The default selection; ``gains`` are determinant ratios (0 for fills)."""
    counts = pick_counts(prep, k)
    units = standardised(prep.rel, None if prep.all_real else prep.valid)

    def run(one: Prepared, b: int) -> Picked:
        z, quality = units[b], np.exp(units[b] / 2.0)
        if not one.all_real:  # padding: no quality
            z, quality = np.where(one.valid[0], z, 0.0), np.where(one.valid[0], quality, 0.0)
        count, copies = int(counts[b]), None if closes is None else closes[b]

        def greedy(copies: np.ndarray | None) -> tuple[Picked, np.ndarray, Lift | None]:
            lift = None if links is None else Lift(links.rows(slice(b, b + 1)), z, one)
            return (*greedy_map(one, count, quality, lift, _not_a_copy(copies)), lift)

        picked, open_, lift = greedy(copies)
        if lift is not None:
            picked.info["linked_to"] = lift.linked(picked.info.get("closed", []),
                                                   len(picked.indices))
        plain, plain_open = picked, open_  # the run plain top-k is read from
        if copies is not None and one.constrained and picked.info["closed"]:
            plain, plain_open = greedy(None)[:2]
        many = len(plain.indices) if copies is None or one.constrained else count
        top_k = _top_k(one.rel[0], plain_open, plain.indices, many)
        picked.info["top_k"] = top_k.tolist()
        picked.info["held_back"] = top_k[open_[top_k]].tolist()
        if plain is not picked:
            picked.info["top_k_stopped"] = stopped_short(one, k, 0, plain.indices)
        return picked

    return per_query(prep, run)


def _not_a_copy(copies: np.ndarray | None) -> MayTake | None:
    """``may_take``: a candidate is not a copy of a pick (``copies[c, p]``)."""
    if copies is None:
        return None
    return lambda candidate, picks: not copies[candidate, picks].any()


def _top_k(rel: np.ndarray, open_: np.ndarray, picked: np.ndarray, many: int) -> np.ndarray:
    """Plain top-k by ``rel`` among a run's picks and the candidates it left open, ``many``
    of them, best first."""
    if not many:
        return np.zeros(0, dtype=np.int64)
    pool = open_.copy()
    pool[picked] = True
    return np.argsort(np.where(pool, -rel, np.inf), kind="stable")[:many]


class Lift:
    """The links' re-weighting of one query's greedy run (``dpp.Reweigh``): ``z`` the
    relevance in pool units (n,), ``one`` the query's problem."""

    def __init__(self, links: LinkArrays, z: np.ndarray, one: Prepared) -> None:
        valid = one.valid[0]
        words = links.cosine[0]
        # [p, :, j]: j's link to p before the likeness and the pick's relevance, G (1 - G),
        # every link and those beyond chance; pairs with padding link nothing
        any_link = np.where(valid[:, None] & valid[None, :], words * (1.0 - words), 0.0).T
        self.link_rows = np.stack([any_link, np.where(links.beyond_chance[0].T, any_link, 0.0)],
                                  axis=1)
        self.spread_z = float(links.spread[0]) * z  # the relevance, one signal of the sum
        self.mask = None if valid.all() else valid
        self.count = max(int(valid.sum()), 1)
        self.z = z
        best = float(np.where(valid, z, -np.inf).max(initial=-np.inf))
        self.carry = np.where(valid, np.exp(z - (best if math.isfinite(best) else 0.0)), 0.0)
        # a pick whose quality is above this was raised by a link (beyond a tie)
        self.raised_above = z + one.tie_rtol * np.maximum(1.0, np.abs(z))
        self.tie_rtol = one.tie_rtol
        self.strongest = np.zeros((2, len(z)))  # L (every link), Lg (beyond chance)
        self.via = np.full(len(z), -1)  # the pick (its position) each candidate links to most
        self.quality = z  # the log-quality the next step scores by
        self.noted: list[tuple[int, float, np.ndarray, int]] = []

    def after_pick(self, t: int, pick: int, column: np.ndarray) -> np.ndarray | None:
        """The log-quality after pick t (``pick``, ``column`` its likeness to every
        candidate); None while no link stands out."""
        factor = np.minimum(np.maximum(1.0 - column, 0.0), 1.0) * self.carry[pick]
        links = self.link_rows[pick] * factor  # every link, those beyond chance
        np.copyto(self.via, t, where=links[1] > self.strongest[1])
        np.maximum(self.strongest, links, out=self.strongest)
        every, gated = self.strongest
        mean = every.sum() / self.count  # padding links 0: left out
        deviation = every - mean if self.mask is None else np.where(self.mask, every - mean, 0.0)
        spread = math.sqrt(row_dots(deviation) / self.count)
        unit = max(spread, 1e-300)
        # the lift grows with the link: none stands out unless the strongest one does
        if not ((float(gated.max(initial=0.0)) - mean) / unit - LIFT_SD > 0 and spread > 1e-12):
            self.quality = self.z
            return None
        lift = np.maximum((gated - mean) / unit - LIFT_SD, 0.0)
        self.quality = standardised(lift + self.spread_z, self.mask)
        return self.quality

    def note(self, t: int, pick: int, plain: np.ndarray) -> None:
        """Pick t under raised weights; ``plain`` what the step scores without links."""
        via = int(self.via[pick])
        if via >= 0 and self.quality[pick] > self.raised_above[pick]:
            self.noted.append((t, float(plain[pick]), plain, via))

    def linked(self, closed: Sequence[int], count: int) -> list[int]:
        """Per pick, the position of the pick a link brought it in by, -1 for none: noted,
        and the plain score (``closed`` left out from the start) picks another."""
        out = [-1] * count
        for t, own, plain, via in self.noted:
            if len(closed):
                plain = plain.copy()
                plain[list(closed)] = -np.inf
            top = float(plain.max())
            if own < top - self.tie_rtol * max(1.0, abs(top)):
                out[t] = via
        return out
