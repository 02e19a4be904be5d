"""Reliability tables (graphlink/analysis/calibration.py) and the calibration experiment (docs/experiments.md)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from graphlink.analysis.calibration import (
    bin_of,
    chance_misses,
    cluster_bootstrap_interval,
    family_z,
    reliability_table,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (3, 10), (81, 263), (1, 1), (500, 1000)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    """Wilson 1927's score interval, against scipy's own implementation."""
    lo, hi = wilson_interval(k, n)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert float(lo) == pytest.approx(ci.low, abs=1e-9) and float(hi) == pytest.approx(ci.high, abs=1e-9)


def test_wilson_known_values() -> None:
    """Closed forms: 0 of n gives [0, z²/(n + z²)], n of n gives [n/(n + z²), 1]; an empty bin gives NaN."""
    z2 = 1.959963984540054 ** 2
    lo, hi = wilson_interval(np.array([0, 10, 0]), np.array([10, 10, 0]))
    assert lo[0] == pytest.approx(0) and hi[0] == pytest.approx(z2 / (10 + z2))
    assert lo[1] == pytest.approx(10 / (10 + z2)) and hi[1] == pytest.approx(1)
    assert np.isnan(lo[2]) and np.isnan(hi[2])


@pytest.mark.parametrize(("family", "df"), [(1, None), (40, None), (40, 99), (2, 4), (400, 9)])
def test_family_quantile_against_scipy(family: int, df: int | None) -> None:
    """Bonferroni's two-sided quantile at 1 − 0.05/family: normal, or Student's t."""
    from scipy.stats import norm, t

    q = 1 - 0.05 / (2 * family)
    want = norm.ppf(q) if df is None else t.ppf(q, df)
    assert family_z(family, df=df) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize(("misses", "tested"), [(0, 40), (1, 40), (4, 40), (12, 40), (40, 40), (3, 10)])
def test_chance_misses_is_the_binomial_tail(misses: int, tested: int) -> None:
    from scipy.stats import binom

    assert chance_misses(misses, tested) == pytest.approx(binom.sf(misses - 1, tested, 0.05), rel=1e-9)


def _clustered_table(rng: np.random.Generator, rho: float, groups: int = 100,
                     per: int = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One table's pairs with a known truth: per group (release) ``per`` pairs, each predicted p ~ U(0, 1) and
    right when u < p, where u is the group's shared uniform with probability ``rho`` and the pair's own otherwise.
    Either way u is uniform, so P(right) = p exactly (the predictions are calibrated by construction), while the
    pairs of a group move together."""
    p = rng.uniform(0, 1, (groups, per))
    u = np.where(rng.uniform(0, 1, (groups, per)) < rho, rng.uniform(0, 1, (groups, 1)),
                 rng.uniform(0, 1, (groups, per)))
    return p.ravel(), (u < p).ravel(), np.repeat(np.arange(groups), per)


@pytest.mark.slow
def test_family_wise_intervals_cover_every_tenth_together() -> None:
    """The oracle is the definition: on tables whose truth is drawn as Bernoulli(p) per pair (clustered by
    release, _clustered_table), every tenth's mean prediction is the expected share right, so an interval misses
    only by chance.  A study of 4 tables × 10 tenths (as the calibration study: 40 tested) is repeated 300 times.

    Family-wise (Bonferroni, m = 40) the 40 intervals must all cover in at least 95 % of the studies: the test
    asserts the one-sided binomial test of "rate ≥ 0.95" does not reject at 1 % (measured: 286 of 300 studies,
    0.953).  Per tenth (95 % each) they all cover far less often: 0.95^40 ≈ 0.13 for independent tenths, and the
    one-sided 99 % upper bound of the measured rate (30 of 300) stays below 0.25."""
    rng = np.random.default_rng(2026)
    repeats, family_ok, tenth_ok = 300, 0, 0
    for r in range(repeats):
        fam = per = True
        for k in range(4):
            t = reliability_table(*_clustered_table(rng, 0.2), family=40, resamples=500, seed=4 * r + k)
            assert (t.count > 0).all() and t.family == 40
            fam &= bool(t.within_family.all())
            per &= bool(t.within.all())
        family_ok += fam
        tenth_ok += per
    assert binomtest(family_ok, repeats, 0.95, alternative="less").pvalue > 0.01, family_ok
    assert binomtest(tenth_ok, repeats, alternative="less").proportion_ci(0.99).high < 0.25, tenth_ok


def test_family_wise_interval_contains_the_per_tenth_one() -> None:
    """At m = 40 each family-wise interval is wider than its 95 % one on both sides (t at 0.99875 ≈ 3.3 against
    the percentile at 0.975), centred on the observed share; with no groups it is Wilson's at the normal
    quantile for 0.99875."""
    rng = np.random.default_rng(3)
    p, y, g = _clustered_table(rng, 0.2)
    t = reliability_table(p, y, g, family=40)
    assert (t.family_low <= t.boot_low + 1e-12).all() and (t.boot_high <= t.family_high + 1e-12).all()
    assert ((t.family_low <= t.observed) & (t.observed <= t.family_high)).all()
    u = reliability_table(p, y, family=40)
    lo, hi = wilson_interval(u.right, u.count, family_z(40))
    assert u.family_low == pytest.approx(lo) and u.family_high == pytest.approx(hi)
    assert reliability_table(p, y).family == 10          # by default: this table's non-empty tenths


def test_bins_are_deciles_with_one_in_the_last() -> None:
    assert bin_of(np.array([0.0, 0.0999, 0.1, 0.55, 0.9, 0.99, 1.0])).tolist() == [0, 0, 1, 5, 9, 9, 9]
    # the float just below 0.9 times 10 rounds to 9.0: it still belongs below the edge
    below = np.nextafter(np.arange(1, 10) / 10, 0)
    assert bin_of(below).tolist() == list(range(9))
    assert bin_of(np.arange(10) / 10).tolist() == list(range(10))


def test_table_by_hand() -> None:
    """Five pairs computed by hand: bin 0 holds 0.05 (wrong), bin 1 holds 0.15 (right) and 0.15 (wrong), bin 9
    holds 0.95 and 1.0 (both right)."""
    t = reliability_table(np.array([0.05, 0.15, 0.15, 0.95, 1.0]), np.array([0, 1, 0, 1, 1]))
    assert t.count.tolist() == [1, 1 + 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert t.right.tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert t.mean_predicted[[0, 1, 9]] == pytest.approx([0.05, 0.15, 0.975])
    assert t.observed[[0, 1, 9]] == pytest.approx([0.0, 0.5, 1.0])
    assert np.isnan(t.mean_predicted[2]) and not t.within[2]
    lo, hi = wilson_interval(1, 2)
    assert t.wilson_low[1] == pytest.approx(float(lo)) and t.wilson_high[1] == pytest.approx(float(hi))
    assert t.within[[0, 1, 9]].all()                   # each mean lies inside its (wide) interval
    assert t.expected_right == pytest.approx(0.05 + 0.3 + 1.95)
    frame = t.frame()
    assert frame["bin"].iloc[9] == "0.9–1.0" and frame["count"].sum() == 5


def test_table_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        reliability_table(np.array([0.5]), np.array([1, 0]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reliability_table(np.array([1.5]), np.array([1]))


def test_bootstrap_known_values() -> None:
    """Two clusters, A: 1 of 1 right, B: 0 of 3.  Resampling two of two gives AA (share 1) and BB (share 0) with
    probability 1/4 each, AB/BA (1/4) with 1/2: the 2.5 % and 97.5 % points are 0 and 1.  Clusters of one share
    give that share, whatever the resample."""
    lo, hi = cluster_bootstrap_interval(np.array([[1.0], [0.0]]), np.array([[1.0], [3.0]]), resamples=4000)
    assert (lo[0], hi[0]) == (0.0, 1.0)
    lo, hi = cluster_bootstrap_interval(np.array([[3.0, 0.0]] * 5), np.array([[4.0, 0.0]] * 5))
    assert (lo[0], hi[0]) == (0.75, 0.75) and np.isnan(lo[1]) and np.isnan(hi[1])


def test_bootstrap_matches_the_cluster_robust_standard_error() -> None:
    """Many clusters: the percentile interval's half-width is close to 1.96 times the linearised standard error
    of a ratio estimator, √Σ(h_i − r·n_i)² / Σn_i (Davison and Hinkley 1997, §3.8); within 15 %."""
    rng = np.random.default_rng(4)
    n = rng.integers(5, 40, 200).astype(float)
    h = rng.binomial(n.astype(int), rng.uniform(0.1, 0.6, 200)).astype(float)
    lo, hi = cluster_bootstrap_interval(h[:, None], n[:, None], resamples=4000, seed=1)
    r = h.sum() / n.sum()
    se = np.sqrt(((h - r * n) ** 2).sum()) / n.sum()
    assert (hi[0] - lo[0]) / 2 == pytest.approx(1.96 * se, rel=0.15)


def test_bootstrap_is_wider_than_wilson_for_dependent_pairs() -> None:
    """20 releases of 50 pairs each, every release all right or all wrong: the pairs are as dependent as can be.
    Wilson takes 1,000 independent pairs (half-width about 0.03); the cluster bootstrap sees 20 units (about 0.2)."""
    correct = np.repeat(np.arange(20) % 2 == 0, 50)
    t = reliability_table(np.full(1000, 0.55), correct, np.repeat(np.arange(20), 50))
    assert t.wilson_high[5] - t.wilson_low[5] < 0.07
    assert t.boot_high[5] - t.boot_low[5] > 0.3
    assert t.groups == 20 and t.observed[5] == 0.5


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.integers(0, 4)), min_size=1, max_size=60))
def test_table_counts_against_brute_force(rows: list[tuple[float, bool, int]]) -> None:
    """Per bin, the counts, right pairs and mean prediction equal a direct count over the pairs (bin k holds
    k/10 ≤ p < (k+1)/10, and p = 1 in bin 9); every interval contains its observed share."""
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    g = np.array([r[2] for r in rows])
    t = reliability_table(p, y, g, resamples=200)
    for k in range(10):
        inside = [(pi, yi) for pi, yi in zip(p, y, strict=True) if k / 10 <= pi < (k + 1) / 10 or (k == 9 and pi == 1)]
        assert t.count[k] == len(inside) and t.right[k] == sum(yi for _, yi in inside)
        if inside:
            assert t.mean_predicted[k] == pytest.approx(np.mean([pi for pi, _ in inside]))
            assert t.wilson_low[k] - 1e-9 <= t.observed[k] <= t.wilson_high[k] + 1e-9
            assert t.boot_low[k] - 1e-9 <= t.observed[k] <= t.boot_high[k] + 1e-9


def _block_variance_bound(risk, best_p: np.ndarray) -> float:
    """Σ over blocks of (Σ over the block's people of √(p(1−p)))²: an upper bound of the variance of the number
    of right best guesses, given the release (blocks independent; inside a block Cauchy–Schwarz)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    g = risk.graph
    ok = risk.classes.class_allowed
    ni, nd = len(g.id_class_size), len(g.de_class_size)
    adj = sp.coo_matrix((np.ones(int(ok.sum())), (g.class_ei[ok], ni + g.class_ej[ok])), shape=(ni + nd, ni + nd))
    _, comp = connected_components(adj, directed=False)
    sd = np.sqrt(best_p * (1 - best_p))
    per_block = np.bincount(comp[g.id_class], sd, minlength=comp.max() + 1)
    return float((per_block ** 2).sum())


def test_exact_probabilities_predict_the_attackers_hits() -> None:
    """40 seeded uniform populations (24 subjects, 8 locations, visit probability 0.3, 30 % of the de-identified
    records withheld), small enough that every block is computed exactly.  The attacker names each person's most
    likely record; the truth says how many of those guesses are right.

    Bound: given a release, each guess is right with its probability p (the probabilities are the posterior under
    the simulator's model, docs/risk.md#readings), so right − expected has mean 0.  Its variance is at most
    V = Σ_blocks (Σ_people-in-block √(p(1−p)))²: the blocks are independent given the release, and inside a block
    the variance of a sum is at most the square of the sum of the standard deviations (Cauchy–Schwarz).  The
    populations are independent, so the variances add.  The test asserts |right − expected| ≤ 5·√V: by Chebyshev's
    inequality a calibrated computation fails it with probability at most 1/25 for any seed (about 6e-7 if the
    sum is normal).

    That bound is safe but loose, so the test also uses the spread over the populations: the per-population
    differences d_k = right_k − expected_k are independent with mean 0, and t = Σd_k / (s_d·√40) is Student's t with
    39 degrees of freedom when the d_k are about normal (each is a sum over many people).  |t| ≤ 4 for our
    probabilities (a calibrated computation fails that with probability below 0.001), and |t| > 4 for the thesis's
    reading (every candidate of a record equally likely): the check can tell a wrong probability from a right
    one."""
    from graphlink.analysis.risk import pair_probabilities
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.simulation.experiments.common import population_trails
    from graphlink.simulation.simulate import uniform_population

    bound_var = 0.0
    uncertain = 0
    ours, thesis = [], []
    for s in range(40):
        pop = uniform_population(24, 8, 0.3, withhold=0.3, reserved="deidentified", seed=[11, s])
        risk = pair_probabilities(build_linkgraph(population_trails(pop)))
        assert risk.exact
        people = risk.people()
        truth = dict(zip(pop.truth_frame()["identified"], pop.truth_frame()["deidentified"], strict=True))
        best = people["probability"].to_numpy()
        right = sum(truth.get(a) == b for a, b in zip(people["identified"], people["deidentified"], strict=True))
        ours.append(right - best.sum())
        # the thesis reading's own guesses, right as often as the truth says (RiskSummary._against's count)
        summary = risk.summary(truth=pop.truth_frame())
        thesis.append(summary.thesis_correct_best - summary.thesis_expected_correct_best)
        bound_var += _block_variance_bound(risk, best)
        uncertain += int(((best > 0) & (best < 1)).sum())
    bound = 5 * np.sqrt(bound_var)
    assert uncertain > 100                                 # enough uncertain guesses for the check to mean much
    assert abs(sum(ours)) <= bound, (sum(ours), bound)

    def t(d: list[float]) -> float:
        return float(np.sum(d) / (np.std(d, ddof=1) * np.sqrt(len(d))))

    assert abs(t(ours)) <= 4, ours
    assert abs(t(thesis)) > 4, thesis


def test_experiment_writes_its_tables(tmp_path) -> None:
    """The registered experiment on its quick preset: both levels, profiles and readings, the attacker table,
    no right pair outside the union of all maximum matchings, and the thesis reading per pair calibrated by
    construction: all candidates of a record share one bin (each has 1/|E_y|) and exactly one of them, the
    record's own person, is right, so every bin's share right equals its mean prediction."""
    import pandas as pd

    from graphlink.simulation.experiments.registry import load_all

    res = load_all()["calibration"].run(runs=2, seed=3, out=tmp_path, small=True, progress=False)
    table = pd.read_csv(res.csv)
    assert set(table["level"]) == {"pairs", "people"} and set(table["profile"]) == {"uniform", "zipf"}
    assert set(table["reading"]) == {"assignments", "thesis"} and len(table) == 2 * 2 * 2 * 10
    assert res.summary["outside_union_right"] == 0
    att = pd.read_csv(tmp_path / "calibration-attacker.csv")
    assert len(att) == 4 and (att["right"] <= att["people"]).all()
    thesis = table[(table.level == "pairs") & (table.reading == "thesis") & (table["count"] > 0)]
    assert thesis["observed"].to_numpy() == pytest.approx(thesis["mean_predicted"].to_numpy())
    # the family: every non-empty tenth of the assignment shares' four tables, tested together
    ours = table[(table.reading == "assignments") & (table["count"] > 0)]
    assert (table["family"] == len(ours)).all()
    # the attacker's family-wise bound: Bonferroni over the two profiles, 97.5 % each
    from graphlink.analysis.calibration import Z95
    from graphlink.simulation.experiments.calibration import LEVELS

    assert att["difference_family"].to_numpy() == pytest.approx(att["difference_95"].to_numpy() * family_z(2) / Z95)
    missed = int((~ours["within"].astype(bool)).sum())
    assert f"per tenth: {missed} of {len(ours)} tenths outside" in res.comparison
    verdict = "passes" if ours["within_family"].all() else "fails"
    assert f"family-wise (95 % for all {len(ours)} tenths together, each at" in res.comparison
    assert f"{int(ours['within_family'].sum())} of {len(ours)} within: {verdict}" in res.comparison
    for _, row in ours[~ours["within"].astype(bool)].iterrows():      # each per-tenth miss is named
        assert f"{row['profile']}, {LEVELS[row['level']]}: " in res.comparison and row["bin"] in res.comparison


def test_attacker_combines_the_chains_errors_over_populations() -> None:
    """The expected right guesses' own 95 % half-width (the chains', cross-fitted: docs/risk.md#figures) adds in
    quadrature over the independent populations; the thesis reading has no chain and no such error."""
    import pandas as pd

    from graphlink.simulation.experiments.calibration import attacker

    f = pd.DataFrame({"profile": ["uniform", "uniform"], "people": [10, 10], "expected_right": [4.0, 5.0],
                      "expected_right_error": [3.0, 4.0], "right": [5, 5], "thesis_expected_right": [2.0, 2.0],
                      "thesis_right": [4, 4], "right_halves": [4.5, 5.0]})
    att = attacker(f).set_index("reading")
    assert att.loc["assignments", "expected_right_error"] == pytest.approx(5.0)
    assert att.loc["thesis", "expected_right_error"] == 0.0
    assert att.loc["assignments", "expected_right"] == pytest.approx(9.0)
    assert att.loc["assignments", "difference_halves"] == pytest.approx(0.5)
