"""Are the pair probabilities calibrated?  A reliability table of predictions against the truth (docs/risk.md).

A probability is calibrated when, among the pairs it gives about p, a share of about p is right.  The table
groups the pairs by predicted probability into equal-width bins (deciles by default; probability 1 goes into the
last bin), and gives per bin the count, the mean prediction, the observed share right and two 95 % intervals for
that share:

* **Wilson** (Wilson 1927): the score interval of a binomial proportion.  It treats the pairs as independent,
  which they are not: the pairs of one release share its blocks (a record is right for at most one person, a
  person has at most one right record), so it is too narrow when pairs are positively dependent.
* **cluster bootstrap** (Davison and Hinkley 1997, §3.8): the releases (``group``) are resampled with
  replacement and the bin's share recomputed, so whatever dependence there is inside a release is carried along;
  releases drawn independently are the independent units.  Its percentile interval is the one the verdict
  ``within`` uses.  It needs several releases; with a single one it collapses to the point.
* **family-wise** (Bonferroni; Dunn 1961): a study tests many bins at once, and m intervals at 95 % each all
  cover together far less often than 95 % (0.95^40 ≈ 0.13 for 40 independent ones), so a verdict "every bin
  within" needs intervals that cover *together*.  Each bin gets a two-sided interval at 1 − 0.05/m, m the number
  of non-empty bins tested in the study (``family``); whatever the dependence between the bins, all m cover
  together with probability at least 95 %.  The interval is the observed share ± t·SE: SE the standard deviation
  of the cluster-bootstrap shares times √(G/(G − 1)) (the bootstrap's plug-in variance is (G − 1)/G of the
  unbiased one, G releases), t Student's quantile of 1 − 0.05/(2m) for G − 1 degrees of freedom (the SE is
  itself estimated from G releases, which fattens the far tails that Bonferroni reads); Wilson's interval at the
  normal quantile without groups.  The percentile interval would need its 0.05/(2m) tail read off the resamples:
  at m = 40 that is 1 resample in 1,600, a dozen among 20,000, so the approximation on the bootstrap's standard
  error (which 2,000 resamples estimate to about 2 %) is both steadier and cheaper.  It assumes the release
  totals behind a bin are not dominated by a few releases (docs/experiments.md#calibration measures when it
  holds).  It is the verdict ``within_family``.

Also :func:`pair_outcomes`: the pairs of a :class:`~graphlink.analysis.risk.RiskResult` with their two
predictions (assignment share, the thesis's 1/|E_y|) and whether a truth table has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from graphlink.analysis.risk import RiskResult

#: the normal quantile of a two-sided 95 % interval
Z95 = 1.959963984540054


def family_z(family: int, level: float = 0.95, df: int | None = None) -> float:
    """The quantile of a two-sided interval at 1 − (1 − ``level``)/``family`` (Bonferroni; Dunn 1961): the
    normal one, or Student's t with ``df`` degrees of freedom.

    ``family`` intervals of this width cover their targets all together with probability at least ``level``,
    whatever the dependence between them.  O(1).

    Examples
    --------
    >>> round(family_z(1), 4), round(family_z(40), 4), round(family_z(40, df=99), 4)
    (1.96, 3.2272, 3.3227)
    """
    if family < 1:
        raise ValueError(f"family: expected at least 1 interval, got {family}")
    q = 1 - (1 - level) / (2 * family)
    if df is None:
        from statistics import NormalDist

        return NormalDist().inv_cdf(q)
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def chance_misses(misses: int, tested: int, level: float = 0.95) -> float:
    """The probability of at least ``misses`` of ``tested`` intervals at ``level`` missing by chance alone.

    The binomial tail P(X ≥ misses), X ~ Binomial(tested, 1 − level): what exact probabilities give if the
    intervals are independent (bins that share pairs make it a rough guide).  O(tested).

    Examples
    --------
    >>> round(chance_misses(0, 40), 3), round(chance_misses(4, 40), 3)
    (1.0, 0.138)
    """
    from math import comb

    q = 1 - level
    return float(min(1.0, sum(comb(tested, i) * q**i * level ** (tested - i) for i in range(misses, tested + 1))))


def wilson_interval(hits: np.ndarray | int, n: np.ndarray | int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for ``hits`` successes in ``n`` trials (vectorised; NaN where ``n`` is 0).

    (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), Wilson 1927.  Assumes independent trials of one success
    probability.  O(len).

    Examples
    --------
    >>> lo, hi = wilson_interval(0, 10)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.0, 0.2775)
    """
    k = np.asarray(hits, float)
    m = np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        denom = 1 + z * z / m
        centre = (p + z * z / (2 * m)) / denom
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def bin_of(predicted: np.ndarray, bins: int = 10) -> np.ndarray:
    """The bin of each prediction: k for [k/bins, (k+1)/bins), probability 1 in the last bin.  O(len)."""
    p = np.asarray(predicted, float)
    b = np.floor(p * bins).astype(np.int64)
    # p · bins rounds: a p an ulp below k / bins can land on k; compare with the edges themselves
    b -= (b / bins > p).astype(np.int64)
    b += ((b + 1) / bins <= p).astype(np.int64)
    return np.clip(b, 0, bins - 1)


def _resampled_shares(h: np.ndarray, m: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, bins): each bin's pooled share in each cluster resample; NaN where a resample has no pair."""
    clusters = m.shape[0]
    rng = np.random.default_rng(seed)
    w = rng.multinomial(clusters, np.full(clusters, 1.0 / clusters), size=resamples).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ h) / (w @ m)


def _percentile(share: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1 - confidence) / 2
    n_bins = share.shape[1]
    lo, hi = np.full(n_bins, np.nan), np.full(n_bins, np.nan)
    for b in range(n_bins):
        s = share[:, b]
        s = s[np.isfinite(s)]
        if len(s):
            lo[b], hi[b] = np.quantile(s, [alpha, 1 - alpha])
    return lo, hi


def _standard_error(share: np.ndarray) -> np.ndarray:
    se = np.full(share.shape[1], np.nan)
    for b in range(share.shape[1]):
        s = share[:, b]
        s = s[np.isfinite(s)]
        if len(s) > 1:
            se[b] = s.std(ddof=1)
    return se


def _effective_wilson(share: np.ndarray, count: np.ndarray, se: np.ndarray,
                      z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's interval at ``z`` for ``share`` with the effective sample size share·(1 − share)/se² (as Korn and
    Graubard 1998 use it with Clopper and Pearson's interval): the spread the clusters show, and Wilson's skew near
    0 and 1 that a symmetric share ± z·se lacks at Bonferroni's far tails.  A share of 0 or 1 says nothing about
    its spread: there the pairs count as independent.  A standard error of 0 (every cluster alike) gives the point."""
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = share * (1 - share) / se**2
        n_eff = np.where((share > 0) & (share < 1), n_eff, count)
        lo, hi = wilson_interval(share * n_eff, n_eff, z)
    point = (se == 0) & (count > 0)
    return np.where(point, share, lo), np.where(point, share, hi)


def cluster_bootstrap_interval(hits: np.ndarray, n: np.ndarray, *, resamples: int = 2000, confidence: float = 0.95,
                               seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the pooled share Σ hits / Σ n when the clusters (rows) are resampled with
    replacement.

    ``hits`` and ``n`` are (clusters, bins): per cluster and bin, the right pairs and all pairs.  Each resample
    draws as many clusters as there are, with replacement (multinomial counts), and recomputes every bin's share;
    a resample with no pair in a bin does not count for it.  NaN where no cluster has a pair in the bin.
    O(resamples · clusters · bins).  Assumes the clusters are independent and identically distributed.

    Examples
    --------
    Every cluster with the same share: the interval is that share.

    >>> lo, hi = cluster_bootstrap_interval(np.array([[1], [2]]), np.array([[2], [4]]))
    >>> float(lo[0]), float(hi[0])
    (0.5, 0.5)
    """
    h = np.atleast_2d(np.asarray(hits, float))
    m = np.atleast_2d(np.asarray(n, float))
    clusters, n_bins = m.shape
    if clusters == 0:
        return np.full(n_bins, np.nan), np.full(n_bins, np.nan)
    return _percentile(_resampled_shares(h, m, resamples, seed), confidence)


@dataclass(frozen=True)
class ReliabilityTable:
    """Predictions against outcomes, by bin of predicted probability (:func:`reliability_table`).

    Attributes
    ----------
    lower, upper : numpy.ndarray
        Each bin's edges [lower, upper) (the last bin includes 1).
    count, right : numpy.ndarray
        Pairs in the bin, and how many of them are right.
    mean_predicted, observed : numpy.ndarray
        Mean prediction and observed share right (NaN for an empty bin).
    wilson_low, wilson_high : numpy.ndarray
        Wilson 95 % interval of the observed share (pairs taken as independent).
    boot_low, boot_high : numpy.ndarray
        Cluster-bootstrap 95 % interval (releases resampled); equal to the Wilson interval when no groups were
        given.
    groups : int
        Independent units (releases) behind the table.
    family_low, family_high : numpy.ndarray
        The family-wise interval (module docstring): observed share ± t·(bootstrap standard error), t for
        1 − 0.05/``family`` two-sided; Wilson's interval at the normal quantile when no groups were given.
    family : int
        The number of bins tested together in the study (Bonferroni's m).
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    right: np.ndarray
    mean_predicted: np.ndarray
    observed: np.ndarray
    wilson_low: np.ndarray
    wilson_high: np.ndarray
    boot_low: np.ndarray
    boot_high: np.ndarray
    groups: int
    family_low: np.ndarray
    family_high: np.ndarray
    family: int

    @property
    def within(self) -> np.ndarray:
        """Per bin: the mean prediction lies in the bootstrap interval (False for an empty bin)."""
        with np.errstate(invalid="ignore"):
            return (self.count > 0) & (self.boot_low <= self.mean_predicted + 1e-12) \
                & (self.mean_predicted <= self.boot_high + 1e-12)

    @property
    def within_family(self) -> np.ndarray:
        """Per bin: the mean prediction lies in the family-wise interval (False for an empty bin)."""
        with np.errstate(invalid="ignore"):
            return (self.count > 0) & (self.family_low <= self.mean_predicted + 1e-12) \
                & (self.mean_predicted <= self.family_high + 1e-12)

    @property
    def expected_right(self) -> float:
        """Σ predictions: the right pairs the predictions expect."""
        return float(np.nansum(self.mean_predicted * self.count))

    def frame(self) -> pd.DataFrame:
        """One row per bin: ``bin`` ("0.0–0.1"), ``count``, ``right``, ``mean_predicted``, ``observed``,
        ``wilson_low``, ``wilson_high``, ``boot_low``, ``boot_high``, ``within``, ``family_low``,
        ``family_high``, ``within_family``, ``family``.  O(bins)."""
        import pandas as pd

        return pd.DataFrame({"bin": [f"{a:.1f}–{b:.1f}" for a, b in zip(self.lower, self.upper, strict=True)],
                             "count": self.count, "right": self.right, "mean_predicted": self.mean_predicted,
                             "observed": self.observed, "wilson_low": self.wilson_low,
                             "wilson_high": self.wilson_high, "boot_low": self.boot_low,
                             "boot_high": self.boot_high, "within": self.within,
                             "family_low": self.family_low, "family_high": self.family_high,
                             "within_family": self.within_family, "family": self.family})


def reliability_table(predicted: np.ndarray, correct: np.ndarray, group: np.ndarray | None = None, *,
                      bins: int = 10, resamples: int = 2000, seed: int = 0,
                      family: int | None = None) -> ReliabilityTable:
    """The reliability table of probabilities ``predicted`` for events ``correct`` (module docstring).

    Parameters
    ----------
    predicted : numpy.ndarray
        Probabilities in [0, 1], one per pair.
    correct : numpy.ndarray
        Whether each pair is right (bool or 0/1).
    group : numpy.ndarray, optional
        The independent unit (release) of each pair, for the cluster bootstrap; without it every pair is its own
        unit.
    bins : int
        Equal-width bins over [0, 1] (10: deciles of the probability scale).
    resamples, seed : int
        Bootstrap resamples and the generator's seed (the same inputs give the same table).
    family : int, optional
        How many bins the study tests together, across all its tables (Bonferroni's m: each family-wise interval
        is at 1 − 0.05/m); by default this table's non-empty bins.

    Returns
    -------
    ReliabilityTable

    Complexity O(pairs + resamples · groups · bins).  Assumes the groups are independent draws; inside a group
    any dependence is allowed.

    Examples
    --------
    >>> t = reliability_table(np.array([0.05, 0.05, 0.95, 1.0]), np.array([0, 0, 1, 1]), bins=2)
    >>> t.count.tolist(), t.right.tolist(), t.within.tolist(), t.within_family.tolist(), t.family
    ([2, 2], [0, 2], [True, True], [True, True], 2)
    """
    p = np.asarray(predicted, float)
    y = np.asarray(correct).astype(bool)
    if p.shape != y.shape:
        raise ValueError(f"predicted and correct differ in length: {p.shape} and {y.shape}")
    if len(p) and (np.nanmin(p) < 0 or np.nanmax(p) > 1 or np.isnan(p).any()):
        raise ValueError("predicted probabilities must lie in [0, 1]")
    b = bin_of(p, bins)
    count = np.bincount(b, minlength=bins)
    right = np.bincount(b, y.astype(float), minlength=bins).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(b, p, minlength=bins) / count
        observed = right / count
    w_lo, w_hi = wilson_interval(right, count)
    if family is None:
        family = max(1, int((count > 0).sum()))
    if group is None:
        z = family_z(family)
        b_lo, b_hi, groups = w_lo, w_hi, int(len(p))
        f_lo, f_hi = wilson_interval(right, count, z)
    else:
        _, g = np.unique(np.asarray(group), return_inverse=True)
        groups = int(g.max()) + 1 if len(g) else 0
        n_g = np.zeros((groups, bins))
        h_g = np.zeros((groups, bins))
        np.add.at(n_g, (g, b), 1.0)
        np.add.at(h_g, (g, b), y.astype(float))
        z = family_z(family, df=max(1, groups - 1))
        if groups:
            share = _resampled_shares(h_g, n_g, resamples, seed)
            b_lo, b_hi = _percentile(share, 0.95)
            # the bootstrap's variance is the plug-in one, (G − 1)/G of the unbiased; one cluster: every resample
            # is that cluster, and the share is exact as far as the data can tell
            se = _standard_error(share) * np.sqrt(groups / (groups - 1)) if groups > 1 \
                else np.where(count > 0, 0.0, np.nan)
        else:
            b_lo = b_hi = se = np.full(bins, np.nan)
        f_lo, f_hi = _effective_wilson(observed, count, se, z)
    edges = np.arange(bins + 1) / bins
    return ReliabilityTable(edges[:-1], edges[1:], count, right, mean, observed, w_lo, w_hi, b_lo, b_hi, groups,
                            f_lo, f_hi, int(family))


def pair_outcomes(risk: RiskResult, truth: pd.DataFrame) -> pd.DataFrame:
    """The pairs in the union of all maximum matchings with their predictions and the truth.

    Columns ``identified``, ``deidentified``, ``probability`` (share of the consistent assignments),
    ``thesis_probability`` (Malin 2006 eq. 6.6: 1/|E_y|), ``exact``, ``correct`` (the pair is in ``truth``,
    columns ``identified``, ``deidentified``).  Link edges outside the union have probability 0 in both readings
    and are left out.  O(E).
    """
    pairs = risk.pairs()
    pairs = pairs[pairs["thesis_probability"].to_numpy() > 0].reset_index(drop=True)
    true = set(zip(truth["identified"].astype(str), truth["deidentified"].astype(str), strict=True))
    pairs["correct"] = [(str(a), str(b)) in true for a, b in
                        zip(pairs["identified"], pairs["deidentified"], strict=True)]
    return pairs
