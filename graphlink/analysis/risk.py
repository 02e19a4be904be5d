"""How likely each re-identification is: pair probabilities over the consistent assignments (docs/risk.md).

Malin 2006 (§6, eq. 6.6) treats every candidate of a record in the union of all maximum matchings as equally
likely, 1/|E_y|.  Under the model the release is read with, every consistent assignment (a maximum matching of
the link graph with its §4.2.4 null-trail padding) is equally likely a priori, so the posterior of a pair is the
share of consistent assignments that contain it.  Three records y1 ~ {x1, x2}, y2 ~ {x1, x2, x3},
y3 ~ {x2, x3} have three assignments and y1-x1 lies in two of them: 2/3, where the thesis says 1/2.

How it is computed (docs/risk.md#blocks):

1. :func:`graphlink.analysis.matching.classify_edges` marks the allowed edges (in some maximum matching); every
   other edge has probability 0.
2. The connected components of the allowed twin-class graph are independent: a maximum matching is any
   combination of one maximum matching per component, and each component's maximum matchings cover its smaller
   side (the Dulmage–Mendelsohn parts: perfect blocks, and the parts where one side has elements that can stay
   unmatched, i.e. go to a null trail).  Twins (identical trails) always share a component.
3. Per component, the side with more elements is the *rows* side (its surplus stays unmatched), the other the
   *columns* side (all covered).  Exact when the DP of :func:`graphlink.kernels.permanent.block_marginals` fits
   its budget (its states are the used members per column twin class, so twins are counted, not expanded);
   otherwise estimated by ``CHAINS`` independent runs of the Markov chain of
   :func:`graphlink.kernels.permanent.block_chain` (the first from the classification's matching, the others
   from random perfect matchings), each probability with a 95 % half-width: the largest of Student's t times the
   batch-means standard error (inflated for correlated batches), Student's t times the standard error from the
   spread between the chains (Gelman and Rubin 1992's between-chain variance), and the drift between the run's
   halves (valid if the chains have mixed; the coverage is measured against the exact DP:
   docs/risk.md#estimates).

Two readings.  ``uniform`` (default): every consistent assignment equally likely.  ``weighted``: each assignment
weighted by the likelihood of the withholding it implies under the simulator's model (each record of location c
on the reserved side withheld independently with rate w_c, estimated as 1 − |R_c| / |S_c| from the table sizes;
a person matched to a null trail had everything withheld).  The weight of a pair factorises into a factor of
the complete-side element times a factor of the reserved-side element, and in every assignment each element of
both sides appears exactly once, so the two readings give the same probabilities wherever the model holds
(docs/risk.md#readings); ``weighted`` runs the weighted engines to show it and differs only in parts where the
model is broken (Hall's condition fails).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from graphlink.analysis.matching import EdgeClasses, classify_edges
from graphlink.analysis.results import RiskSummary
from graphlink.core.linkgraph import LinkGraph

if TYPE_CHECKING:
    import pandas as pd

    from graphlink.diagnostics import Diagnostic

Reading = Literal["uniform", "weighted"]
READINGS: tuple[str, ...] = ("uniform", "weighted")

#: exact DP budget: (slack + 1) · Π (b_c + 1) states (two float64 tables of that size) ...
MAX_EXACT_STATES = 1 << 18
#: ... and states × (1 + mean degree) steps (about a quarter of a second on one core)
MAX_EXACT_STEPS = 1 << 23
#: Markov chain defaults: sweeps at least (20 batches, after a burn-in of a quarter as many), the 95 % half-width
#: aimed at, and the seconds an estimated block may take
CHAIN_SWEEPS = 400
CHAIN_TARGET = 0.02
CHAIN_BUDGET = 1.0
#: rows above which a block is not sampled at all, per second of budget (a sweep costs about 2-20 µs a row)
ROWS_PER_BUDGET_SECOND = 50_000
WALKS = 1
#: sweeps per block row at least (measured: 400 sweeps under-cover blocks of 20-80 elements, benchmarks/bench_risk.py
#: --only coverage; a chain's memory grows with the block)
SWEEPS_PER_ROW = 50
#: independent chains per estimated block (the first from the classification's matching, the others from random
#: perfect matchings); their spread enters the stated error
CHAINS = 4


@dataclass(frozen=True)
class BlockStats:
    """How the blocks (components of the allowed twin-class graph) were computed.

    Attributes
    ----------
    exact, estimated : int
        Blocks computed exactly / estimated by the Markov chain (singleton class pairs are counted as exact).
    largest_exact, largest_estimated : int
        Elements (both sides) of the largest block of each kind (0 if none).
    seconds_exact, seconds_estimated : float
        Wall time spent in each kind.
    """

    exact: int = 0
    estimated: int = 0
    largest_exact: int = 0
    largest_estimated: int = 0
    seconds_exact: float = 0.0
    seconds_estimated: float = 0.0


@dataclass(frozen=True)
class RiskResult:
    """Pair probabilities of a one-to-one release (:func:`pair_probabilities`).

    Attributes
    ----------
    classes : EdgeClasses
        The edge classification the blocks come from (its ``graph`` is the link graph).
    reading : {"uniform", "weighted"}
    class_probability : numpy.ndarray
        Per class edge of ``graph``: the probability of each member pair (an identified member of the identified
        class with a de-identified member of the de-identified class).  0 for edges in no maximum matching.
    class_error : numpy.ndarray
        Per class edge: half-width of the 95 % interval (0 where exact).
    class_exact : numpy.ndarray
        Per class edge: computed exactly (up to floating-point rounding).
    none_identified, none_deidentified : numpy.ndarray
        Per twin class of each side: the probability that a member has no released partner (matched to a null
        trail, or left unmatched where the model is broken).
    none_error_identified, none_error_deidentified : numpy.ndarray
        Their 95 % half-widths (0 where exact).
    blocks : BlockStats
    seconds : float
        Wall time of the whole computation (classification included).
    chain_edges : numpy.ndarray
        The class edges of the blocks the Markov chains sampled (empty when every block is exact).
    chain_probability : numpy.ndarray
        ``CHAINS`` × ``len(chain_edges)``: each chain's own estimate of those edges' probabilities (their mean is
        ``class_probability``); the attacker's expected right guesses are cross-fitted over them
        (:meth:`summary`).
    chain_block : numpy.ndarray
        Per entry of ``chain_edges``: the sampled block it belongs to (numbered from 0).

    Examples
    --------
    >>> import graphlink as gl
    >>> risk = gl.pair_probabilities(gl.build_linkgraph(gl.build_trails(gl.thesis_example())))
    >>> risk.people()[["identified", "deidentified", "probability", "exact"]].head(2)
      identified deidentified  probability  exact
    0        Ali         actg          1.0   True
    1        Bob         ctga          1.0   True
    """

    classes: EdgeClasses
    reading: str
    class_probability: np.ndarray
    class_error: np.ndarray
    class_exact: np.ndarray
    none_identified: np.ndarray
    none_deidentified: np.ndarray
    none_error_identified: np.ndarray
    none_error_deidentified: np.ndarray
    blocks: BlockStats = field(default_factory=BlockStats)
    seconds: float = 0.0
    chain_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    chain_probability: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    chain_block: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def graph(self) -> LinkGraph:
        return self.classes.graph

    @property
    def exact(self) -> bool:
        return bool(self.class_exact.all())

    @cached_property
    def thesis_class_probability(self) -> np.ndarray:
        """Per class edge: Malin 2006 eq. 6.6's 1/|E_y| (|E_y|: the de-identified record's candidates in the union
        of all maximum matchings, null trails included); 0 off the union."""
        g = self.graph
        deg = self.classes.union_degree_total("deidentified")
        first = np.full(len(g.de_class_size), -1, np.int64)
        first[g.de_class[::-1]] = np.arange(len(g.de_class))[::-1]
        d = deg[first[g.class_ej]].astype(float)
        out = np.zeros(len(g.class_ei))
        ok = self.classes.class_allowed & (d > 0)
        out[ok] = 1.0 / d[ok]
        return out

    def _best(self, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per identified class: (class edge of its most likely record or -1, that probability).  O(E_class)."""
        g = self.graph
        n_ic = len(g.id_class_size)
        best_p = np.zeros(n_ic)
        best_e = np.full(n_ic, -1, np.int64)
        if len(g.class_ei) == 0:
            return best_e, best_p
        order = np.lexsort((-prob, g.class_ei))            # per identified class, highest probability first
        ci = g.class_ei[order]
        head = np.r_[True, ci[1:] != ci[:-1]]
        e = order[head]
        keep = prob[e] > 0
        best_e[ci[head][keep]] = e[keep]
        best_p[ci[head][keep]] = prob[e[keep]]
        return best_e, best_p

    @cached_property
    def _best_uniform(self) -> tuple[np.ndarray, np.ndarray]:
        return self._best(self.class_probability)

    def cross_fitted_best(self) -> tuple[float, float]:
        """The expected number of people an attacker gets right by naming each person's most likely record,
        cross-fitted over the chains where the probabilities are estimated, and the 95 % half-width of that figure.

        Σ_person max_record p̂ overstates what those guesses are worth when p̂ is noisy: the maximum of noisy
        estimates is biased upward, and the record named is the one the noise favoured (the winner's curse).  So
        in the blocks the Markov chains sampled, the chains are split into two halves; each half chooses every
        person's most likely record (the mean of its chains) and each chain of the other half values those
        choices with its own estimate, which is independent of them (the chains are independent runs).  The
        figure is the mean of those ``CHAINS`` values: unbiased for the mean worth of the two halves' choices, if
        the chains have mixed (docs/risk.md#figures).  Exact blocks count their exact maximum, as before.  The
        half-width: per sampled block, the standard error of the mean of its ``CHAINS`` values from their spread,
        summed in variance over the blocks, times Student's t at the Welch-Satterthwaite degrees of freedom
        (``CHAINS`` − 1 per block); plus, for people whose block was too large to sample (their candidates shown as
        equally likely), the most their count can be off.  O(chains · E_class log E_class)
        for the classes with sampled edges, O(E_class) otherwise.
        """
        g = self.graph
        size_i = g.id_class_size.astype(float)
        best_e, best_p = self._best_uniform
        worth = best_p * size_i                       # per identified class: exact, or the plain maximum for now
        has = best_e >= 0
        unknown = np.zeros(len(size_i), bool)
        if len(self.class_exact):
            # estimated but not sampled (the block was beyond the budget): its worth lies anywhere in [0, size]
            unknown[has] = ~self.class_exact[best_e[has]]
            sampled = np.zeros(len(self.class_exact), bool)
            sampled[self.chain_edges] = True
            unknown[has] &= ~sampled[best_e[has]]
        hard = float(np.dot(np.maximum(best_p, 1.0 - best_p)[unknown], size_i[unknown]))
        n_chains = self.chain_probability.shape[0]
        if len(self.chain_edges) == 0 or n_chains < 2:
            # nothing sampled, or one chain only (no independent half to value with): the plain maximum, with the
            # stated half-widths of the chosen records as a (loose) bound
            err = np.zeros(len(size_i))
            if len(self.class_error):
                err[has] = self.class_error[best_e[has]]
            err[unknown] = 0.0
            return float(worth.sum()), hard + float(np.dot(err, size_i))
        touched = np.zeros(len(size_i), bool)
        touched[g.class_ei[self.chain_edges]] = True
        cls_block = np.full(len(size_i), -1, np.int64)
        cls_block[g.class_ei[self.chain_edges]] = self.chain_block
        sub = np.flatnonzero(touched[g.class_ei])     # every class edge of the classes with sampled edges
        at = np.full(len(g.class_ei), -1, np.int64)
        at[sub] = np.arange(len(sub))
        pos = at[self.chain_edges]
        ci = g.class_ei[sub]
        half = n_chains // 2
        halves = (self.chain_probability[:half].mean(axis=0), self.chain_probability[half:].mean(axis=0))
        n_blocks = int(self.chain_block.max()) + 1
        values = np.zeros((n_chains, n_blocks))
        for k in range(n_chains):
            choose = self.class_probability[sub].copy()
            value = choose.copy()
            choose[pos] = halves[1] if k < half else halves[0]      # the half chain k is not in
            value[pos] = self.chain_probability[k]
            order = np.lexsort((-choose, ci))         # per class, the highest of the other chains' mean first
            head = np.r_[True, ci[order][1:] != ci[order][:-1]]
            e = order[head]
            named = choose[e] > 0
            c = ci[e][named]
            np.add.at(values[k], cls_block[c], value[e][named] * size_i[c])
        worth[touched] = 0.0
        fitted = float(worth.sum() + values.sum(axis=1).mean())
        var_b = values.var(axis=0, ddof=1) / n_chains  # squared standard error of each block's mean
        se2 = float(var_b.sum())
        if se2 <= 0.0:
            return fitted, hard
        df = se2 * se2 / float(np.sum(var_b * var_b) / (n_chains - 1))
        return fitted, hard + _t975(max(n_chains - 1, int(df))) * float(np.sqrt(se2))

    def people(self) -> pd.DataFrame:
        """One row per identified person: ``identified``, ``deidentified`` (the most likely record, empty when no
        record is possible), ``probability``, ``exact``, ``error`` (95 % half-width), ``tied`` (records with that
        same probability: the members of its twin class), ``no_record`` (probability that none of the person's
        records was released or fits).  O(|M| + E_class)."""
        import pandas as pd

        g = self.graph
        tr = g.trails
        best_e, best_p = self._best_uniform
        e = best_e[g.id_class]
        has = e >= 0
        first_de = np.full(len(g.de_class_size), -1, np.int64)
        first_de[g.de_class[::-1]] = np.arange(len(g.de_class))[::-1]
        rec = np.full(len(e), None, dtype=object)
        rec[has] = tr.deidentified.keys[first_de[g.class_ej[e[has]]]]
        ee = np.where(has, e, 0)
        exact = np.where(has, self.class_exact[ee] if len(self.class_exact) else True, True)
        err = np.where(has, self.class_error[ee] if len(self.class_error) else 0.0, 0.0)
        tied = np.where(has, g.de_class_size[g.class_ej[ee]] if len(g.class_ej) else 0, 0)
        return pd.DataFrame({"identified": tr.identified.keys, "deidentified": rec,
                             "probability": np.where(has, best_p[g.id_class], 0.0), "exact": exact.astype(bool),
                             "error": err, "tied": tied.astype(np.int64),
                             "no_record": self.none_identified[g.id_class]})

    def pairs(self) -> pd.DataFrame:
        """One row per element-level link edge: ``identified``, ``deidentified``, ``probability``, ``exact``,
        ``error`` (95 % half-width, 0 when exact), ``thesis_probability`` (1/|E_y|).  Expands the class edges
        (refused beyond ``max_expanded_edges``).  O(E)."""
        import pandas as pd

        g = self.graph
        ec = self.classes._edge_class
        return pd.DataFrame({"identified": g.trails.identified.keys[g.ei],
                             "deidentified": g.trails.deidentified.keys[g.ej],
                             "probability": self.class_probability[ec], "exact": self.class_exact[ec],
                             "error": self.class_error[ec], "thesis_probability": self.thesis_class_probability[ec]})

    def summary(self, threshold: float = 0.5, truth: pd.DataFrame | None = None) -> RiskSummary:
        """The release's figures (:class:`graphlink.analysis.results.RiskSummary`), optionally against a truth
        table with columns ``identified``, ``deidentified``.  O(|M| + E_class)."""
        g = self.graph
        size_i = g.id_class_size
        size_e = (g.id_class_size[g.class_ei] * g.de_class_size[g.class_ej]).astype(float)

        def figures(prob: np.ndarray) -> dict:
            _, best_p = self._best(prob)
            per_person = best_p[g.id_class]
            return {"expected_correct_best": float(np.dot(best_p, size_i)),
                    "expected_correct_random": float(np.dot(prob * prob, size_e)),
                    "above_threshold": int((per_person >= threshold).sum()) if len(per_person) else 0,
                    "highest": float(per_person.max()) if len(per_person) else 0.0,
                    "average": float(per_person.mean()) if len(per_person) else 0.0}

        ours = figures(self.class_probability)
        # where the probabilities are estimated, the plain maximum overstates the guesses' worth: cross-fitted
        ours["expected_correct_best"], best_error = self.cross_fitted_best()
        thesis = figures(self.thesis_class_probability)
        # the thesis's best guesses, scored by the assignment probabilities (what they are worth)
        te, _ = self._best(self.thesis_class_probability)
        worth = 0.0
        if len(self.class_probability):  # a release with no possible pair has no guesses to score
            worth = float(np.dot(np.where(te >= 0, self.class_probability[np.maximum(te, 0)], 0.0), size_i))
        correct = thesis_correct = truth_people = fitted_correct = None
        if truth is not None:
            correct, thesis_correct, truth_people, fitted_correct = self._against(truth)
        return RiskSummary(reading=self.reading, people=g.n_identified, records=g.n_deidentified,
                           threshold=threshold, exact=self.exact, max_error=float(self.class_error.max())
                           if len(self.class_error) else 0.0, model_ok=bool(self.classes.hall_ok),
                           blocks_exact=self.blocks.exact, blocks_estimated=self.blocks.estimated,
                           largest_exact_block=self.blocks.largest_exact,
                           largest_estimated_block=self.blocks.largest_estimated, seconds=self.seconds,
                           **ours, **{f"thesis_{k}": v for k, v in thesis.items()},
                           thesis_guess_expected_correct=worth, expected_correct_best_error=best_error,
                           correct_best=correct,
                           thesis_correct_best=thesis_correct, truth_people=truth_people,
                           correct_best_cross_fitted=fitted_correct)

    def half_choices(self) -> list[tuple[np.ndarray, float]]:
        """The choices the cross-fitted figure values (:meth:`cross_fitted_best`): per half of the chains, the class
        probabilities with the sampled edges at that half's mean, and the share of the chains that value it (the
        other half's).  One entry (``class_probability``, 1.0) when nothing was sampled or there is one chain.
        O(chains · sampled edges + E_class)."""
        n_chains = self.chain_probability.shape[0]
        if len(self.chain_edges) == 0 or n_chains < 2:
            return [(self.class_probability, 1.0)]
        half = n_chains // 2
        out = []
        for rows, valued_by in ((slice(0, half), n_chains - half), (slice(half, n_chains), half)):
            p = self.class_probability.copy()
            p[self.chain_edges] = self.chain_probability[rows].mean(axis=0)
            out.append((p, valued_by / n_chains))
        return out

    def _against(self, truth: pd.DataFrame) -> tuple[int, int, int, float]:
        """(most-likely guesses right, thesis-reading guesses right, people of the truth in the release, the
        cross-fitted figure's choices right: the mean over the chains of the choices each values)."""
        g = self.graph
        keys_i = {str(k): i for i, k in enumerate(g.trails.identified.keys)}
        keys_d = {str(k): j for j, k in enumerate(g.trails.deidentified.keys)}
        ti, tj = [], []
        for a, b in zip(truth["identified"].astype(str), truth["deidentified"].astype(str), strict=True):
            if a in keys_i and b in keys_d:
                ti.append(keys_i[a])
                tj.append(keys_d[b])
        ti_a, tj_a = np.asarray(ti, np.int64), np.asarray(tj, np.int64)
        out = []
        halves = self.half_choices()
        for prob in (self.class_probability, self.thesis_class_probability, *(p for p, _ in halves)):
            best_e, _ = self._best(prob)
            e = best_e[g.id_class[ti_a]] if len(ti_a) else np.zeros(0, np.int64)
            # the guess names the first member of the most likely de-identified class
            first_de = np.full(len(g.de_class_size), -1, np.int64)
            first_de[g.de_class[::-1]] = np.arange(len(g.de_class))[::-1]
            guess = np.where(e >= 0, first_de[g.class_ej[np.maximum(e, 0)]] if len(g.class_ej) else -1, -1)
            out.append(int((guess == tj_a).sum()))
        fitted = float(sum(w * hits for (_, w), hits in zip(halves, out[2:], strict=True)))
        return out[0], out[1], len(ti_a), fitted


def _weights(graph: LinkGraph, reading: str) -> tuple[np.ndarray, np.ndarray]:
    """Log weights for the weighted reading: per class edge, and per complete-side class its null weight.

    Rates w_c = 1 − |R_c| / |S_c| (clipped to [0, 1]).  A pair (s, r) implies r's records were withheld where s
    was seen and r was not: Π_{c ∈ s \\ r} w_c · Π_{c ∈ r} (1 − w_c); a null partner: Π_{c ∈ s} w_c.  O(classes ·
    |C| + E_class)."""
    g = graph
    if reading == "uniform" or g.trails.reserved == "none":
        n_sc = len(g.de_class_size if g.trails.star_side == "identified" else g.id_class_size)
        return np.zeros(len(g.class_ei)), np.zeros(n_sc)
    from graphlink.core.trails import unpack

    tr = g.trails
    sizes = tr.location_sizes
    r_is_id = tr.star_side == "identified"
    r_n = np.asarray(sizes.identified if r_is_id else sizes.deidentified, float)
    s_n = np.asarray(sizes.deidentified if r_is_id else sizes.identified, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.clip(np.where(s_n > 0, 1.0 - r_n / np.maximum(s_n, 1), 0.0), 0.0, 1.0)
    n_loc = len(tr.locations)

    def rep_bits(side_class: np.ndarray, n_cls: int, ones: np.ndarray) -> np.ndarray:
        first = np.full(n_cls, -1, np.int64)
        first[side_class[::-1]] = np.arange(len(side_class))[::-1]
        return unpack(ones[first], n_loc)

    r_class, s_class = (g.id_class, g.de_class) if r_is_id else (g.de_class, g.id_class)
    r_side, s_side = (tr.identified, tr.deidentified) if r_is_id else (tr.deidentified, tr.identified)
    rb = rep_bits(r_class, int(r_class.max()) + 1 if len(r_class) else 0, r_side.ones).astype(float)
    sb = rep_bits(s_class, int(s_class.max()) + 1 if len(s_class) else 0, s_side.ones).astype(float)
    pos = w > 0
    lw = np.where(pos, np.log(np.where(pos, w, 1.0)), 0.0)
    l1 = np.where(w < 1, np.log(np.where(w < 1, 1.0 - w, 1.0)), 0.0)
    a = sb @ lw                                        # Σ_{c ∈ s} log w_c (finite part)
    zero_s = sb @ (~pos).astype(float)                 # locations of s with rate 0
    b = rb @ (l1 - lw)
    zero_r = rb @ (~pos).astype(float)
    one_r = rb @ (w >= 1).astype(float)
    ce_s, ce_r = (g.class_ej, g.class_ei) if r_is_id else (g.class_ei, g.class_ej)
    edge = a[ce_s] + b[ce_r]
    edge[(zero_s[ce_s] - zero_r[ce_r] > 0) | (one_r[ce_r] > 0)] = -np.inf
    null = np.where(zero_s > 0, -np.inf, a)
    return edge, null


def one_to_many_refusal() -> Diagnostic:
    """The ``risk-one-to-many`` refusal: pair probabilities are shares of maximum matchings, which describe
    one-to-one releases; a one-to-many release's assignments (several people per record) are not matchings.
    O(1).

    Examples
    --------
    >>> one_to_many_refusal().code
    'risk-one-to-many'
    """
    from graphlink.diagnostics import Diagnostic

    return Diagnostic("risk-one-to-many", "pair probabilities are not computed for one-to-many releases (several "
                      "people per record)", remedy="state the multiplicity as one-to-one if each record stands "
                      "for one person")


def pair_probabilities(graph: LinkGraph, *, reading: Reading = "uniform", classes: EdgeClasses | None = None,
                       sweeps: int = CHAIN_SWEEPS, target: float = CHAIN_TARGET,
                       budget: float | None = CHAIN_BUDGET,
                       seed: int = 0, max_exact_states: int = MAX_EXACT_STATES) -> RiskResult:
    """The probability of every link edge: its share of the consistent assignments (module docstring).

    Parameters
    ----------
    graph : LinkGraph
        A one-to-one link graph (:func:`graphlink.core.linkgraph.build_linkgraph`).
    reading : {"uniform", "weighted"}
        Every consistent assignment equally likely, or weighted by the likelihood of its withholding (the same
        numbers wherever the model holds: docs/risk.md#readings).
    classes : EdgeClasses, optional
        A classification of ``graph`` already computed.
    sweeps : int
        Markov-chain sweeps per estimated block at least (after a burn-in of a quarter as many), raised to
        ``SWEEPS_PER_ROW`` per row of the block.
    target : float
        An estimated block's chain runs on (doubling its batches) until every pair's 95 % half-width is at most
        ``target`` or the budget is spent.
    budget : float or None
        Seconds an estimated block may take (the batches are sized from a probe sweep, so the numbers depend on
        the machine's speed).  ``None``: a fixed number of sweeps (``sweeps``, or ``SWEEPS_PER_ROW`` per row if
        more) after a burn-in of a quarter as many, whatever the time: reproducible for a seed.
    seed : int
        Seed of the Markov chain (the estimates are reproducible).
    max_exact_states : int
        DP states above which a block is estimated (testing hook; default ``MAX_EXACT_STATES``).

    Returns
    -------
    RiskResult
        Per class edge the probability, whether exact and the 95 % half-width; per element the probability of no
        released partner; the block statistics.

    Raises
    ------
    ModelAssumptionError
        On a one-to-many release (not computed: the assignments there are not matchings).

    Notes
    -----
    Time: the classification (O(E·√V)), then per block the DP (O((slack + 1)·T·(1 + d)), T the product of the
    column classes' sizes + 1) or the chain (O(sweeps·rows·log d)).  Exact probabilities are exact up to
    floating-point rounding (relative ~1e-12).

    Examples
    --------
    Three records: y1 ~ {x1, x2}, y2 ~ {x1, x2, x3}, y3 ~ {x2, x3} (x1 seen at A, B; x2 at A, B, C;
    x3 at B, C; each record seen at one place).

    >>> import numpy as np
    >>> import graphlink as gl
    >>> from graphlink.core.trails import trails_from_dense
    >>> M = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    >>> N = np.array([[1, -1, -1], [-1, 1, -1], [-1, -1, 1]])
    >>> risk = gl.pair_probabilities(gl.build_linkgraph(trails_from_dense(M, N, reserved="deidentified")))
    >>> p = risk.pairs()
    >>> round(float(p[(p.identified == "m1") & (p.deidentified == "n1")].probability.iloc[0]), 4), risk.exact
    (0.6667, True)
    """
    from graphlink.kernels.permanent import block_chain, block_marginals

    t0 = time.perf_counter()
    classes = classes if classes is not None else classify_edges(graph)
    g = graph
    left_is_id = g.trails.star_side != "identified"          # complete side = left, as in matching.py
    a = g.id_class_size if left_is_id else g.de_class_size
    b = g.de_class_size if left_is_id else g.id_class_size
    ci = g.class_ei if left_is_id else g.class_ej
    cj = g.class_ej if left_is_id else g.class_ei
    n_l, n_r = len(a), len(b)
    edge_lw, null_lw = _weights(g, reading)
    allowed = np.flatnonzero(classes.class_allowed)
    prob = np.zeros(len(ci))
    err = np.zeros(len(ci))
    exact = np.ones(len(ci), bool)
    none_l = np.ones(n_l)                       # unmatched unless a block says otherwise
    none_r = np.ones(n_r)
    nerr_l = np.zeros(n_l)
    nerr_r = np.zeros(n_r)
    stats = {"exact": 0, "estimated": 0, "largest_exact": 0, "largest_estimated": 0, "seconds_exact": 0.0,
             "seconds_estimated": 0.0}
    chains_out: list = []
    if len(allowed):
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        ai, aj = ci[allowed], cj[allowed]
        adj = sp.coo_matrix((np.ones(len(allowed), np.int8), (ai, n_l + aj)), shape=(n_l + n_r, n_l + n_r))
        _, comp = connected_components(adj, directed=False)
        ecomp = comp[ai]
        # singleton blocks (one class each side): every member pair 1 / max(a, b), in one vectorised step
        n_edges_comp = np.bincount(ecomp, minlength=comp.max() + 1)
        single = n_edges_comp[ecomp] == 1
        if single.any():
            e = allowed[single]
            sa, sb = a[ci[e]], b[cj[e]]
            m = np.maximum(sa, sb).astype(float)
            prob[e] = 1.0 / m
            none_l[ci[e]] = 1.0 - sb / m
            none_r[cj[e]] = 1.0 - sa / m
            stats["exact"] += int(single.sum())
            stats["largest_exact"] = int((sa + sb).max())
        rest = allowed[~single]
        if len(rest):
            order = np.argsort(ecomp[~single], kind="stable")
            rest = rest[order]
            rc = ecomp[~single][order]
            cuts = np.flatnonzero(np.r_[True, rc[1:] != rc[:-1], True])
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                _block(rest[lo:hi], a, b, ci, cj, edge_lw, null_lw, prob, err, exact, none_l, none_r, nerr_l,
                       nerr_r, stats, classes, left_is_id, sweeps, seed, target, budget, max_exact_states,
                       block_marginals, block_chain, chains_out)
    # a true love (in every maximum matching) is certain whatever block it sits in
    vital = classes.class_vital
    prob[vital], err[vital], exact[vital] = 1.0, 0.0, True
    none_i, none_d = (none_l, none_r) if left_is_id else (none_r, none_l)
    ne_i, ne_d = (nerr_l, nerr_r) if left_is_id else (nerr_r, nerr_l)
    if chains_out:
        c_edges = np.concatenate([e for e, _ in chains_out])
        c_prob = np.concatenate([p for _, p in chains_out], axis=1)
        c_block = np.repeat(np.arange(len(chains_out), dtype=np.int64), [len(e) for e, _ in chains_out])
        c_prob[:, vital[c_edges]] = 1.0
    else:
        c_edges, c_prob, c_block = np.zeros(0, np.int64), np.zeros((0, 0)), np.zeros(0, np.int64)
    return RiskResult(classes, reading, prob, err, exact, none_i, none_d, ne_i, ne_d, BlockStats(**stats),
                      time.perf_counter() - t0, c_edges, c_prob, c_block)


def _block(edges: np.ndarray, a: np.ndarray, b: np.ndarray, ci: np.ndarray, cj: np.ndarray, edge_lw: np.ndarray,
           null_lw: np.ndarray, prob: np.ndarray, err: np.ndarray, exact: np.ndarray, none_l: np.ndarray,
           none_r: np.ndarray, nerr_l: np.ndarray, nerr_r: np.ndarray, stats: dict, classes: EdgeClasses,
           left_is_id: bool, sweeps: int, seed: int, target: float, budget: float | None, max_exact_states: int,
           block_marginals: Callable, block_chain: Callable, chains_out: list) -> None:
    """One component: orient it (rows = the side with more elements), then the DP or the chain; a sampled
    block appends (its class edges, each chain's estimate of them) to ``chains_out``."""
    t0 = time.perf_counter()
    lc, l_local = np.unique(ci[edges], return_inverse=True)
    rc, r_local = np.unique(cj[edges], return_inverse=True)
    nl, nr = int(a[lc].sum()), int(b[rc].sum())
    size = nl + nr
    # rows: the side whose surplus stays unmatched; on a perfect block, the side with more DP states as rows
    t_cols_if_right = float(np.exp(min(700.0, np.log(b[rc] + 1.0).sum())))     # DP states, capped (no overflow)
    t_cols_if_left = float(np.exp(min(700.0, np.log(a[lc] + 1.0).sum())))
    rows_left = nl > nr or (nl == nr and t_cols_if_right <= t_cols_if_left)
    if rows_left:
        row_cls, col_cls, row_size, col_size = lc, rc, a[lc], b[rc]
        row_of, col_of = l_local, r_local
        skip = null_lw[lc]
    else:
        row_cls, col_cls, row_size, col_size = rc, lc, b[rc], a[lc]
        row_of, col_of = r_local, l_local
        skip = np.zeros(len(rc))                       # reserved records unmatched: the model is broken here
    slack = int(row_size.sum() - col_size.sum())
    lw = edge_lw[edges]
    # row-wise normalisation (a constant per row cancels: every row is matched or skipped exactly once)
    top = np.full(len(row_cls), -np.inf)
    np.maximum.at(top, row_of, lw)
    top = np.maximum(top, skip if slack > 0 else -np.inf)
    top[~np.isfinite(top)] = 0.0
    lw = lw - top[row_of]
    skip = skip - top
    order = np.lexsort((col_of, row_of))
    rc_ptr = np.searchsorted(row_of[order], np.arange(len(row_cls) + 1)).astype(np.int64)
    rc_col = col_of[order].astype(np.int64)
    rc_lw = lw[order]
    states = (slack + 1) * t_cols_if_right if rows_left else (slack + 1) * t_cols_if_left
    mean_deg = len(edges) / max(1, len(row_cls))
    row_class = np.repeat(np.arange(len(row_cls), dtype=np.int64), row_size)
    if states <= max_exact_states and states * (1 + mean_deg) <= MAX_EXACT_STEPS:
        marg, skipm, ok = block_marginals(row_class, col_size.astype(np.int64), rc_ptr, rc_col, np.exp(rc_lw),
                                          np.exp(skip), slack)
        if not ok:                                     # no assignment of positive weight: leave the block at 0
            marg, skipm = np.zeros(len(rc_col)), row_size.astype(float)
        m_err = np.zeros(len(rc_col))
        s_err = np.zeros(len(row_cls))
        kind = "exact"
        per_chain = None
    else:
        kind = "estimated"
        est = _estimate(row_class, row_size, col_size, rc_ptr, rc_col, rc_lw, skip, slack, edges, order, classes,
                        rows_left, row_cls, col_cls, left_is_id, sweeps, seed, target, budget, block_chain)
        per_chain = None
        if est is None:
            # the budget does not buy a single batch of sweeps: every record's candidates equally likely (the
            # thesis reading, which keeps the sums), with a bound that covers [0, 1]
            col_deg = np.bincount(rc_col, row_size[np.repeat(np.arange(len(row_cls)), np.diff(rc_ptr))] * 1.0,
                                  len(col_cls))
            share = row_size[np.repeat(np.arange(len(row_cls)), np.diff(rc_ptr))] / col_deg[rc_col]
            marg = share * col_size[rc_col]
            skipm = row_size * (slack / row_size.sum())
            m_err = np.maximum(marg, row_size[np.repeat(np.arange(len(row_cls)), np.diff(rc_ptr))] * col_size[rc_col]
                               - marg)
            s_err = np.maximum(skipm, row_size - skipm)
        else:
            marg, m_err, skipm, s_err, per_chain = est
    # entry -> element-pair probability (members exchangeable)
    e_glob = edges[order]
    r_sz = row_size[row_of[order]].astype(float)
    c_sz = col_size[col_of[order]].astype(float)
    prob[e_glob] = marg / (r_sz * c_sz)
    err[e_glob] = m_err / (r_sz * c_sz)
    if per_chain is not None:
        chains_out.append((e_glob, per_chain / (r_sz * c_sz)))
    exact[e_glob] = kind == "exact"
    none_rows = skipm / row_size
    if rows_left:
        none_l[row_cls], nerr_l[row_cls] = none_rows, s_err / row_size
        none_r[col_cls] = 0.0
    else:
        none_r[row_cls], nerr_r[row_cls] = none_rows, s_err / row_size
        none_l[col_cls] = 0.0
    stats[kind] += 1
    stats[f"largest_{kind}"] = max(stats[f"largest_{kind}"], size)
    stats[f"seconds_{kind}"] += time.perf_counter() - t0


def _estimate(row_class: np.ndarray, row_size: np.ndarray, col_size: np.ndarray, rc_ptr: np.ndarray,
              rc_col: np.ndarray, rc_lw: np.ndarray, skip: np.ndarray, slack: int, edges: np.ndarray,
              order: np.ndarray, classes: EdgeClasses, rows_left: bool, row_cls: np.ndarray, col_cls: np.ndarray,
              left_is_id: bool, sweeps: int, seed: int, target: float, budget: float | None,
              block_chain: Callable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The Markov chains on one block: dummy columns for the slack, ``CHAINS`` independent chains, the first
    started from the classification's matching, the others from random perfect matchings; the estimate pools
    their batch means and its error includes the spread between the chains (docs/risk.md#estimates).  Returns the
    pooled entries' estimates and half-widths, the rows' skips and theirs, and each chain's own estimate of the
    entries (``CHAINS`` × entries, for the cross-fitted attacker figure)."""
    from graphlink.kernels.permanent import random_perfect_matching

    ncc = len(col_size)
    sizes = np.r_[col_size, slack].astype(np.int64) if slack else col_size.astype(np.int64)
    col_ptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    col_class = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    # adjacency with the dummy class appended to every row class (the skip)
    counts = np.diff(rc_ptr)
    extra = 1 if slack else 0
    new_ptr = np.r_[0, np.cumsum(counts + extra)].astype(np.int64)
    n_ent = int(new_ptr[-1])
    col = np.empty(n_ent, np.int64)
    lw = np.empty(n_ent)
    is_skip = np.zeros(n_ent, bool)
    pos = np.repeat(new_ptr[:-1], counts) + (np.arange(len(rc_col)) - np.repeat(rc_ptr[:-1], counts))
    col[pos] = rc_col
    lw[pos] = rc_lw
    if slack:
        last = new_ptr[1:] - 1
        col[last] = ncc
        lw[last] = skip
        is_skip[last] = True
    cum = np.empty(n_ent, np.int64)
    for r in range(len(counts)):                       # running sizes per row class (few classes per block)
        lo, hi = new_ptr[r], new_ptr[r + 1]
        cum[lo:hi] = np.cumsum(sizes[col[lo:hi]])
    base_seed = int(seed) * 1_000_003
    start = _start(row_cls, col_cls, row_size, col_size, slack, classes, rows_left, left_is_id, col_ptr, row_class)
    mates = [start]
    for k in range(1, CHAINS):
        # over-dispersed starts: a chain that has not forgotten where it began disagrees with the others
        m = random_perfect_matching(row_class, col_ptr, new_ptr, col, lw, base_seed + 7919 * k)
        mates.append(m if m.min() >= 0 else start.copy())
    # batches of a fixed length, pooled over calls that continue from each chain's last state, until the largest
    # 95 % half-width of a pair probability is at most `target` or the block's time budget is spent; a probe sweep
    # sizes the batches so that the first two rounds fit the budget
    walks = WALKS
    sweeps = max(int(sweeps), SWEEPS_PER_ROW * len(row_class))
    row_of_entry = np.repeat(np.arange(len(counts)), counts + extra)
    scale = np.where(is_skip, 1, sizes[col]) * row_size[row_of_entry].astype(float)   # class count -> one pair

    def run(k: int, per_batch: int, burn: int, batches: int, salt: int) -> tuple[np.ndarray, ...]:
        return block_chain(row_class, col_class, col_ptr, new_ptr, col, cum, lw, mates[k], per_batch, burn, batches,
                           walks, base_seed + salt + 104_729 * k)

    if budget is None:                                 # reproducible: the sweeps asked for, whatever the machine
        # the chains share the sweeps: each burns in for a quarter of its share (at least SWEEPS_PER_ROW / (4 ·
        # CHAINS) sweeps per row, so the burn-in grows with the block) and samples the rest
        burn = max(1, sweeps // (4 * CHAINS))
        per_batch, t_end = max(1, sweeps // (20 * CHAINS)), -np.inf
    else:
        if len(row_class) > ROWS_PER_BUDGET_SECOND * budget:
            return None                                # a sweep alone would take about the whole budget
        run(0, 1, 0, 1, 0)
        # the first call of a process also loads the compiled kernel (tens of milliseconds, or the compilation
        # itself): time a second sweep, or the batches come out far too short for the budget
        t_probe = time.perf_counter()
        run(0, 1, 0, 1, 0)
        per_sweep = max(1e-9, time.perf_counter() - t_probe)
        if per_sweep * 25 * CHAINS > 4 * budget:
            return None                                # not even 20 batches of one sweep per chain fit
        affordable = max(24, int(max(0.0, budget - per_sweep) / per_sweep / CHAINS))
        burn = int(min(max(1, sweeps // (4 * CHAINS)), affordable // 5))
        per_batch = int(max(1, min(max(1, sweeps // (20 * CHAINS)), (affordable - burn) // 20)))
        t_end = t_probe + budget
    # per chain: sums of its batch means, of their squares, of consecutive products, its first and last batch mean,
    # and the sum over its latest half of the batches (the drift check)
    acc = []
    for k in range(CHAINS):
        s1, s2, s12, first, last = run(k, per_batch, burn, 10, 1)
        b1, b2, b12, b_first, b_last = run(k, per_batch, 0, 10, 2)
        acc.append([s1 + b1, s2 + b2, s12 + b12 + last * b_first, first, b_last, b1])
    n_batches = 20
    while True:
        mean, half = _pooled(acc, n_batches)
        if (half / scale).max(initial=0.0) <= target or time.perf_counter() >= t_end:
            break
        for k in range(CHAINS):
            b1, b2, b12, b_first, b_last = run(k, per_batch, 0, n_batches, n_batches)
            a = acc[k]
            acc[k] = [a[0] + b1, a[1] + b2, a[2] + b12 + a[4] * b_first, a[3], b_last, b1]
        n_batches = 2 * n_batches
    marg, m_err = mean[pos], half[pos]
    per_chain = np.array([a[0] / n_batches for a in acc])[:, pos]     # each chain's own estimate (mean: marg)
    if slack:
        return marg, m_err, mean[new_ptr[1:] - 1], half[new_ptr[1:] - 1], per_chain
    return marg, m_err, np.zeros(len(row_cls)), np.zeros(len(row_cls)), per_chain


def _pooled(acc: list, n_batches: int) -> tuple[np.ndarray, np.ndarray]:
    """The pooled estimate of independent chains and its 95 % half-width, per adjacency entry.

    ``acc[k]``: chain k's sums of its ``n_batches`` batch means, of their squares, of consecutive products, its
    first and last batch mean, and the sum over its latest half.  The half-width is the largest of three figures:
    batch means within the chains (Student's t, the variance inflated by (1 + r) / (1 − r) for the lag-1
    autocorrelation r of the batch means: batches shorter than the chain's memory are positively correlated and
    their spread understates the error), the spread between the chains' means (Student's t for ``len(acc)`` − 1
    degrees of freedom: the between-chain variance of Gelman and Rubin 1992, which sees a chain that still
    remembers its start), and the drift between the earlier and the later half of the batches.  O(chains ·
    entries).
    """
    m = len(acc)
    nb = n_batches
    means = np.array([a[0] / nb for a in acc])
    mean = means.mean(axis=0)
    w_var = np.zeros_like(mean)
    cov1 = np.zeros_like(mean)
    for a, mu in zip(acc, means, strict=True):
        w_var += np.maximum(a[1] - nb * mu * mu, 0.0)
        cov1 += a[2] - mu * (2 * a[0] - a[3] - a[4]) + (nb - 1) * mu * mu
    w_var /= m * (nb - 1)
    cov1 /= m
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(w_var > 0, cov1 / np.maximum((nb - 1) * w_var, 1e-300), 0.0)
    r = np.clip(r, 0.0, 0.9)
    half = _t975(m * (nb - 1)) * np.sqrt(w_var * (1 + r) / (1 - r) / (m * nb))
    if m > 1:
        between = means.var(axis=0, ddof=1)
        half = np.maximum(half, _t975(m - 1) * np.sqrt(between / m))
    late = np.mean([a[5] for a in acc], axis=0) / (nb // 2)
    early = (mean * nb - late * (nb // 2)) / (nb - nb // 2)
    return mean, np.maximum(half, np.abs(late - early))


#: Student's t 0.975 quantiles for 1-18 degrees of freedom (the closed form below is used from 19 on)
_T975_SMALL = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010, 2.1788,
               2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009)


def _t975(df: int) -> float:
    """Student's t 0.975 quantile for ``df`` degrees of freedom, by the Cornish-Fisher expansion around the normal
    quantile (Abramowitz and Stegun 26.7.5): within 2e-5 of the exact value from 19 degrees of freedom on (2.093 at
    19), without importing scipy.stats, whose import alone takes a second of an estimated block's budget.  O(1)."""
    if df < 19:
        return _T975_SMALL[max(df, 1) - 1]
    z = 1.959963984540054
    v = float(df)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v * v)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))


def _start(row_cls: np.ndarray, col_cls: np.ndarray, row_size: np.ndarray, col_size: np.ndarray, slack: int,
           classes: EdgeClasses, rows_left: bool, left_is_id: bool, col_ptr: np.ndarray,
           row_class: np.ndarray) -> np.ndarray:
    """A perfect matching of the padded block (block-local element indices) from the classification's maximum
    matching: its pairs inside the block, unmatched rows onto the dummy columns."""
    g = classes.graph
    mate_id = classes.mate_identified
    rows_are_id = rows_left == left_is_id
    row_elem_class = g.id_class if rows_are_id else g.de_class
    col_elem_class = g.de_class if rows_are_id else g.id_class
    # block-local numbering: members of each class consecutively, in class order
    rpos = np.full(int(row_elem_class.max()) + 1, -1, np.int64)
    rpos[row_cls] = np.arange(len(row_cls))
    cpos = np.full(int(col_elem_class.max()) + 1, -1, np.int64)
    cpos[col_cls] = np.arange(len(col_cls))
    row_elems = np.flatnonzero(rpos[row_elem_class] >= 0)
    row_elems = row_elems[np.argsort(rpos[row_elem_class[row_elems]], kind="stable")]
    col_elems = np.flatnonzero(cpos[col_elem_class] >= 0)
    col_elems = col_elems[np.argsort(cpos[col_elem_class[col_elems]], kind="stable")]
    col_local = np.full(len(col_elem_class), -1, np.int64)
    col_local[col_elems] = np.arange(len(col_elems))
    partner = (mate_id if rows_are_id else classes.mate_deidentified)[row_elems]
    mate = np.where(partner >= 0, col_local[np.maximum(partner, 0)], -1)
    free = np.flatnonzero(mate < 0)
    dummies = np.arange(col_ptr[len(col_size)], col_ptr[len(col_size)] + slack)
    if len(free) != len(dummies):
        raise AssertionError("the block's maximum matching does not cover its columns")
    mate[free] = dummies
    return mate.astype(np.int64)
