"""Generators (graphlink.simulation.simulate) and closed forms (graphlink.simulation.theory).

Tolerances are derived from the sample sizes: a Binomial(n, q) count is checked within Z = 4.5 standard
deviations (two-sided tail ~7e-6 per check; every test here makes at most a few hundred checks, so a false
failure has probability < 1e-3). Closed forms are checked against brute-force enumeration on tiny cases.
"""

from __future__ import annotations

import itertools
from math import sqrt

import numpy as np
import pandas as pd
import pytest

from graphlink.errors import ReleaseError
from graphlink.simulation import simulate as sim
from graphlink.simulation import theory

Z = 4.5


def _binom_ok(count: float, n: float, q: float) -> bool:
    sd = sqrt(max(n * q * (1 - q), 1e-12))
    return abs(count - n * q) <= Z * sd + 1e-9


# ------------------------------------------------------------------------------------------------- generators


def test_uniform_visit_frequencies_and_keys():
    n, C, p = 4000, 12, 0.3
    pop = sim.uniform_population(n, C, p, seed=11)
    counts = pop.visits.sum(axis=0)
    assert all(_binom_ok(c, n, p) for c in counts)
    f = pop.frame()
    assert list(f.columns) == ["location", "kind", "element"]
    assert sorted(f["location"].unique()) == [f"L{i:02d}" for i in range(1, C + 1)]
    ids = f.loc[f.kind == "identified", "element"]
    assert ids.str.fullmatch(r"p\d{6}").all()
    assert f.loc[f.kind == "deidentified", "element"].str.fullmatch(r"s\d{6}").all()
    # without withholding both sides release the same records, and each visit is one row per side
    assert (f.kind == "identified").sum() == (f.kind == "deidentified").sum() == pop.visits.sum()
    truth = pop.truth_frame()
    assert (truth["identified"].str[1:] == truth["deidentified"].str[1:]).all()
    assert len(truth) == int(pop.visits.any(axis=1).sum())


def test_zipf_visit_frequencies_follow_eq_5_1():
    n, C, alpha = 5000, 20, 0.7
    pop = sim.zipf_population(n, C, alpha, seed=3)
    expected = np.arange(1, C + 1) ** -alpha
    assert np.allclose(pop.probabilities, expected)
    assert all(_binom_ok(c, n, q) for c, q in zip(pop.visits.sum(axis=0), expected, strict=True))


@pytest.mark.parametrize("reserved", ["deidentified", "identified"])
def test_withholding_rate_on_reserved_side_only(reserved):
    n, C, p, q = 3000, 8, 0.5, 0.3
    pop = sim.uniform_population(n, C, p, withhold=q, reserved=reserved, seed=5)
    f = pop.frame()
    per_kind = f.groupby(["location", "kind"]).size().unstack("kind")
    visits = pop.visits.sum(axis=0)
    other = "identified" if reserved == "deidentified" else "deidentified"
    assert (per_kind[other].to_numpy() == visits).all()
    withheld = visits - per_kind[reserved].to_numpy()
    assert all(_binom_ok(w, v, q) for w, v in zip(withheld, visits, strict=True))


def test_per_location_withholding_rates_and_none():
    n = 4000
    probs = [0.2, 0.5, 0.8, 0.6]
    rates = [0.0, 0.1, 0.5, 0.9]
    pop = sim.draw_population(n, probs, withhold=rates, reserved="deidentified", seed=9)
    visits = pop.visits.sum(axis=0)
    released = pop.released_deidentified().sum(axis=0)
    assert released[0] == visits[0]
    assert all(_binom_ok(v - r, v, q) for v, r, q in zip(visits, released, rates, strict=True))
    none = sim.draw_population(n, probs, withhold=rates, reserved="none", seed=9)
    assert (none.released_deidentified() == none.visits).all()
    assert (none.released_identified() == none.visits).all()
    # common random numbers: the visits do not depend on the withholding rates
    assert (none.visits == pop.visits).all()


def test_households_default_homenet_and_or_trails():
    pop = sim.household_population(None, 0.3, locations=10, seed=1)
    sizes = np.bincount(pop.household)
    assert np.bincount(sizes)[1:].tolist() == list(sim.HOMENET_HOUSEHOLD_SIZES)
    assert pop.n_deidentified == 86 and pop.n_identified == 147
    for h in range(pop.n_deidentified):
        assert (pop.deid_visits[h] == pop.visits[pop.household == h].any(axis=0)).all()
    truth = pop.truth_frame()
    # each present member maps to its household; households are shared by several members
    assert truth.groupby("deidentified").size().max() > 1


def test_household_sizes_sampled_from_weights():
    H = 5000
    weights = np.array(sim.HOMENET_HOUSEHOLD_SIZES, float)
    sizes = sim.household_sizes_from_weights(H, weights, seed=4)
    counts = np.bincount(sizes, minlength=7)[1:]
    q = weights / weights.sum()
    assert all(_binom_ok(c, H, qq) for c, qq in zip(counts, q, strict=True))


def test_determinism_for_a_seed(tmp_path):
    a = sim.zipf_population(500, 9, 0.4, withhold=0.2, seed=42)
    b = sim.zipf_population(500, 9, 0.4, withhold=0.2, seed=42)
    c = sim.zipf_population(500, 9, 0.4, withhold=0.2, seed=43)
    pd.testing.assert_frame_equal(a.frame(), b.frame())
    assert not a.frame().equals(c.frame())
    a.write(tmp_path / "r.csv", tmp_path / "t.csv")
    b.write(tmp_path / "r2.csv", tmp_path / "t2.csv")
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "r2.csv").read_bytes()
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "t2.csv").read_bytes()
    h1 = sim.household_population(300, 0.2, locations=6, seed=7).frame()
    h2 = sim.household_population(300, 0.2, locations=6, seed=7).frame()
    pd.testing.assert_frame_equal(h1, h2)


def test_read_popularities(tmp_path):
    p = tmp_path / "pop.csv"
    p.write_text("location,visitors,purchasers\namazon,50,10\nebay,20,20\nzappos,5,0\n")
    df = sim.read_popularities(p, population=100)
    assert df["location"].tolist() == ["amazon", "ebay", "zappos"]
    assert np.allclose(df["p"], [0.5, 0.2, 0.05])
    assert np.allclose(df["withhold"], [0.8, 0.0, 1.0])
    with pytest.raises(ReleaseError, match="population"):
        sim.read_popularities(p)
    bad = tmp_path / "bad.csv"
    bad.write_text("location,p\na,0.5\nb,1.5\n")
    with pytest.raises(ReleaseError, match="row 3"):
        sim.read_popularities(bad)


def test_bad_arguments():
    with pytest.raises(ReleaseError):
        sim.uniform_population(10, 5, 1.5)
    with pytest.raises(ReleaseError):
        sim.uniform_population(10, 5, 0.5, reserved="both")
    with pytest.raises(ReleaseError):
        sim.draw_population(10, [0.5, 0.5], withhold=[0.1])
    with pytest.raises(ReleaseError):
        sim.zipf_population(10, 5, -1)


# ------------------------------------------------------------------------------------------------- theory


def _brute_unique(C: int, p: float, n: int):
    """Exact mean and variance of the unique-trail count by enumerating all (2^C)^n populations."""
    pats = list(itertools.product([0, 1], repeat=C))
    probs = [p ** sum(x) * (1 - p) ** (C - sum(x)) for x in pats]
    m1 = m2 = r1 = 0.0
    for combo in itertools.product(range(len(pats)), repeat=n):
        w = np.prod([probs[i] for i in combo])
        counts = np.bincount(combo, minlength=len(pats))
        u = sum(1 for i in combo if counts[i] == 1)
        # first-round REIDIT-I (0 -> *): subject linked iff non-empty and no other trail is a superset
        r = 0
        for a, i in enumerate(combo):
            if sum(pats[i]) == 0:
                continue
            sup = [b for b, j in enumerate(combo) if b != a and all(pj >= pi for pi, pj in
                                                                   zip(pats[i], pats[j], strict=True))]
            r += not sup
        m1 += w * u
        m2 += w * u * u
        r1 += w * r
    return m1, m2 - m1 * m1, r1


@pytest.mark.parametrize("C,p,n", [(2, 0.3, 3), (3, 0.5, 3), (2, 0.8, 4)])
def test_closed_forms_match_enumeration(C, p, n):
    mean, var, r1 = _brute_unique(C, p, n)
    assert theory.p_unique(C, p, n) * n == pytest.approx(mean, rel=1e-9, abs=1e-12)
    assert theory.var_unique_count(C, p, n) == pytest.approx(var, rel=1e-9, abs=1e-12)
    assert theory.p_reidit_i_round1(C, p, n) * n == pytest.approx(r1, rel=1e-9, abs=1e-12)
    assert theory.p_unique_heterogeneous([p] * C, n) == pytest.approx(theory.p_unique(C, p, n))
    assert theory.p_reidit_i_round1_heterogeneous([p] * C, n) == pytest.approx(
        theory.p_reidit_i_round1(C, p, n))


def test_entropy_and_curve_metrics():
    assert theory.binary_entropy(0.5) == pytest.approx(1.0)
    assert theory.binary_entropy(0.0) == 0.0
    m = np.zeros((4, 3), bool)
    m[:2, :] = True
    assert theory.system_entropy(m) == pytest.approx(3.0)
    x = np.linspace(0.1, 1.0, 10)
    assert theory.auc(x, np.ones(10)) == pytest.approx(0.9)
    E = np.array([1, 2, 3, 2, 1.0])
    R = np.array([0, 1, 2, 4, 0.0])
    assert theory.shift(np.arange(5), E, R) == 1.0
    assert theory.shape(E, R) == pytest.approx(sum(abs(E * 4 / 3 - R)))
