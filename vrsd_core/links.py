"""Links between candidates: the default's third relation, beside "alike" and "unrelated".

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
(``determinantal.greedy_map``) reads after each pick, in the chain form: a candidate's
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

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import as_float_array, check_finite
from ._prepare import row_dots
from .relevance import standardised

LIFT_SD = 1.5
"""A link lifts a candidate only beyond this many standard deviations of the pool's links."""
ROUNDING = 1e-6  # a cosine this far outside [0, 1] is rounding, not an error


@dataclass(frozen=True)
class Links:
    """One pool's links between its candidates (``select``: arrays (n, n) and a number;
    ``select_batch``: (B, n, n) and (B,)), the default's ``links`` option.

    Attributes:
        cosine: [i, j] how alike candidates i's and j's words outside the question are,
            in [0, 1] (``vrsd_kit.lexical``: the cosine of their tf * idf over those
            words); the diagonal is not read.
        beyond_chance: [i, j] True when the words i and j share are more than chance
            (only such pairs may lift a candidate).
        spread: the standard deviation of the relevance signals' sum before it was put
            in pool units (``vrsd_core.pool_units``' last divisor; 1 for one signal):
            a lift counts as much as one signal's standard deviation.
    """

    cosine: Any
    beyond_chance: Any
    spread: Any = 1.0


@dataclass(frozen=True, slots=True)
class LinkArrays:
    """``Links`` checked, as (B, n, n) float64, (B, n, n) bool and (B,) float64."""

    cosine: np.ndarray
    beyond_chance: np.ndarray
    spread: np.ndarray

    def rows(self, cut: slice) -> LinkArrays:
        return LinkArrays(self.cosine[cut], self.beyond_chance[cut], self.spread[cut])


def checked_links(links: Any, batch: int, n: int, valid: np.ndarray, *, batched: bool
                  ) -> LinkArrays:
    """``links`` (a ``Links``) as ``LinkArrays`` for B = ``batch`` queries of n candidates,
    or a ValueError naming ``links``. Nothing given is written."""
    if not isinstance(links, Links):
        raise ValueError(f"links: expected vrsd_core.Links(cosine, beyond_chance, spread), "
                         f"got {type(links).__name__}")
    pair_shape = (batch, n, n) if batched else (n, n)
    cosine = as_float_array(links.cosine, "links.cosine").astype(np.float64)
    if cosine.shape != pair_shape:
        raise ValueError(f"links.cosine: expected shape {pair_shape} (one value per pair of "
                         f"candidates), got {cosine.shape}")
    cosine = cosine.reshape(batch, n, n)
    pairs = valid[:, :, None] & valid[:, None, :]
    check_finite(cosine, "links.cosine", pairs)
    if ((cosine < -ROUNDING) | (cosine > 1.0 + ROUNDING))[pairs].any():
        raise ValueError("links.cosine: expected values in [0, 1]")
    cosine = np.clip(cosine, 0.0, 1.0)  # a cosine of 1 + rounding is 1
    gate = np.asarray(links.beyond_chance)
    if gate.dtype != np.bool_ or gate.shape != pair_shape:
        raise ValueError(f"links.beyond_chance: expected booleans of shape {pair_shape}, got "
                         f"{gate.dtype} of shape {gate.shape}")
    spread = as_float_array(links.spread, "links.spread").astype(np.float64)
    if spread.shape != ((batch,) if batched else ()):
        raise ValueError(f"links.spread: expected {'shape (B,)' if batched else 'a number'}, "
                         f"got shape {spread.shape}")
    spread = spread.reshape(batch)
    check_finite(spread, "links.spread")
    if (spread < 0).any():
        raise ValueError("links.spread: expected a standard deviation (>= 0)")
    return LinkArrays(cosine, gate.reshape(batch, n, n), spread)


class LinkChain:
    """The links of a greedy run in the chain form, for a batch of B pools: the loop calls
    ``record`` at each pick and ``after_pick`` after its kernel column is computed.

    ``z``: (B, n) the relevance in pool units (the quality's log before any link);
    ``valid``: (B, n) real candidates; ``steps``: the most picks of the run."""

    def __init__(self, links: LinkArrays, z: np.ndarray, valid: np.ndarray, steps: int,
                 tie_rtol: float) -> None:
        pairs = valid[:, :, None] & valid[:, None, :]
        words = links.cosine
        # [b, p, j]: j's link to p before the likeness and the pick's relevance, G (1 - G);
        # read as rows (one per pick); pairs with padding link nothing
        self.any_link = np.where(pairs, words * (1.0 - words), 0.0).transpose(0, 2, 1).copy()
        self.gated_link = np.where(links.beyond_chance.transpose(0, 2, 1), self.any_link, 0.0)
        self.spread = links.spread[:, None]
        self.valid = valid
        self.mask = None if valid.all() else valid
        self.count = np.maximum(valid.sum(axis=1), 1)[:, None]
        self.z = z
        best = np.where(valid, z, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
        self.carry = np.where(valid, np.exp(z - np.where(np.isfinite(best), best, 0.0)), 0.0)
        B, n = z.shape
        self.rows = np.arange(B)
        self.strongest = np.zeros((B, n))  # L: every link, the pool's units
        self.gated = np.zeros((B, n))  # Lg: the links beyond chance
        self.via = np.full((B, n), -1)  # the pick (its position) each candidate links to most
        self.quality = z  # log of the quality the next step scores by
        self.lifted = np.zeros(B, dtype=bool)  # rows whose quality a link changed
        self.linked_to = np.full((B, steps), -1)
        self.tie_rtol = tie_rtol

    def fill_order(self, relevance: np.ndarray) -> np.ndarray:
        """What an exhausted row fills by: its relevance, or where a link lifted the row,
        the lifted quality (-inf where ``relevance`` is: closed)."""
        if not self.lifted.any():
            return relevance
        lifted = np.where(relevance > -np.inf, self.quality, -np.inf)
        return np.where(self.lifted[:, None], lifted, relevance)

    def record(self, t: int, pick: np.ndarray, scores: np.ndarray) -> None:
        """Step t picked ``pick``; ``scores`` (B, n) is what the step would have scored by
        without links (the loop asks only when ``lifted.any()``). A pick is brought in by
        a link when it was lifted, has a link beyond chance and is not what the plain
        score would have picked."""
        rows = self.rows
        top = scores.max(axis=1)
        with np.errstate(invalid="ignore"):  # rows with nothing open
            plain_also = scores[rows, pick] >= top - self.tie_rtol * np.maximum(1.0, np.abs(top))
        via = self.via[rows, pick]
        before = self.z[rows, pick]
        raised = self.quality[rows, pick] > before + self.tie_rtol * np.maximum(1.0, np.abs(before))
        self.linked_to[:, t] = np.where(self.lifted & raised & (via >= 0) & ~plain_also, via, -1)

    def after_pick(self, t: int, pick: np.ndarray, column: np.ndarray) -> np.ndarray | None:
        """Pick t was ``pick``, ``column`` (B, n) its likeness to every candidate (S[:, p]).
        Returns the new log-quality (B, n) where a link lifts a row (None when none does:
        the quality is the relevance's, as without links)."""
        rows = self.rows
        # (1 - S): a copy links to nothing; the pick's relevance relative to the best
        factor = 1.0 - column
        np.minimum(np.maximum(factor, 0.0, out=factor), 1.0, out=factor)  # np.clip, faster
        factor *= self.carry[rows, pick][:, None]
        strength = self.any_link[rows, pick] * factor
        gated = self.gated_link[rows, pick] * factor
        np.maximum(self.strongest, strength, out=self.strongest)
        np.copyto(self.via, t, where=gated > self.gated)
        np.maximum(self.gated, gated, out=self.gated)
        # the strongest links in the pool's units of links (padding links 0: left out)
        mean = self.strongest.sum(axis=1, keepdims=True) / self.count
        if not (self.gated > mean).any():  # nothing above the mean link: nothing lifts
            self.lifted[:] = False
            self.quality = self.z
            return None
        deviation = self.strongest - mean if self.mask is None else np.where(
            self.valid, self.strongest - mean, 0.0)
        spread = np.sqrt(row_dots(deviation)[:, None] / self.count)
        # a link at 0 never lifts (mean >= 0); nor does any in a pool whose links do not vary
        lift = (self.gated - mean) / np.maximum(spread, 1e-300) - LIFT_SD
        lift[(spread <= 1e-12)[:, 0]] = 0.0
        np.maximum(lift, 0.0, out=lift)
        self.lifted = lift.max(axis=1, initial=0.0) > 0
        if not self.lifted.any():
            self.quality = self.z
            return None
        lift += self.spread * self.z
        if self.mask is None:  # z of it over the pool (standardised, inline: every step)
            lift -= lift.sum(axis=1, keepdims=True) / self.count
            lift /= np.maximum(np.sqrt(row_dots(lift)[:, None] / self.count), 1e-300)
            fused = lift
        else:
            fused = standardised(lift, self.mask)
        self.quality = fused if self.lifted.all() else np.where(self.lifted[:, None], fused,
                                                                self.z)
        return self.quality
