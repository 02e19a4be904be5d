"""Re-identification risk: El Emam's attacker models, ARX's risk distribution, the population-uniqueness
estimators with Dankar et al.'s decision rule, distinction and separation, and ``graphlink qi risk``.

The papers' own tables are not available offline, so the worked examples below are small hand computations
from the published definitions (each says which), and every estimator is cross-checked against a second
implementation written here independently: exact integer combinatorics for Zayatz, a loop-form likelihood
and another optimiser for Pitman, a direct sum over population class sizes for the SNB model, pair counting
for separation.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from graphlink.errors import ReleaseError
from graphlink.qi import risk as R
from tests.cli.test_qi_cli import run
from tests.qi_helpers import QI4, SWEENEY


def _table(sizes: list[int]) -> pd.DataFrame:
    """A one-QI table whose classes have the given sizes (class j has value v<j>)."""
    return pd.DataFrame({"q": [f"v{j}" for j, f in enumerate(sizes) for _ in range(f)]})


def test_attacker_models_worked_example() -> None:
    """Hand computation from El Emam & Dankar 2008's definitions. Classes of sizes 1, 2, 3, 4 (n = 10):
    prosecutor risks 1, 1/2, 1/3, 1/4; with threshold 0.3 the classes of sizes 1-3 (6 records) are at risk;
    highest 1, average J/n = 4/10. A population holding the classes 3, 2, 6 and 10 times: journalist risks
    1/3, 1/2, 1/6, 1/10, at risk above 0.3 the first two classes (3 records), highest 1/2, average
    max(4/21, (1/3 + 2/2 + 3/6 + 4/10)/10) = 0.22333…; marketer the same second term."""
    sample = _table([1, 2, 3, 4])
    population = _table([3, 2, 6, 10])
    r = R.risk(sample, ["q"], threshold=0.3, population=population)
    assert (r.prosecutor.records_at_risk, r.prosecutor.highest, r.prosecutor.average) == (0.6, 1.0, 0.4)
    assert r.journalist.records_at_risk == pytest.approx(0.3) and r.journalist.highest == 0.5
    assert r.journalist.average == pytest.approx((1 / 3 + 1 + 0.5 + 0.4) / 10)
    assert r.marketer.average == pytest.approx((1 / 3 + 1 + 0.5 + 0.4) / 10)
    assert r.uniqueness is not None and r.uniqueness.sampling_fraction == pytest.approx(10 / 21)
    alone = R.risk(sample, ["q"], threshold=0.3)       # no population: it is the table itself
    assert alone.journalist.average == alone.marketer.average == 0.4 and alone.uniqueness is None
    frac = R.risk(sample, ["q"], threshold=0.3, sampling_fraction=0.5)   # F = f/π: 2, 4, 6, 8
    assert frac.journalist.highest == 0.5 and frac.journalist.records_at_risk == pytest.approx(0.1)
    assert frac.marketer.average == pytest.approx(4 * 0.5 / 10)


def test_risk_distribution_uses_arx_intervals() -> None:
    """Risks 1, 1/2, 1/3, 1/4 fall in ARX's intervals (0.5, 1], (0.334, 0.5], (0.25, 0.334], (0.2, 0.25]."""
    dist = dict(R.risk(_table([1, 2, 3, 4]), ["q"]).distribution)
    assert dist[1.0] == pytest.approx(0.1) and dist[0.5] == pytest.approx(0.2)
    assert dist[0.334] == pytest.approx(0.3) and dist[0.25] == pytest.approx(0.4)
    assert sum(dist.values()) == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=12), st.floats(0.0, 1.0))
def test_attacker_models_match_per_record_definitions(sizes, threshold) -> None:
    """Per record: prosecutor risk 1/f; the table's figures are the fraction above the threshold, the maximum
    and the mean of the per-record risks (El Emam's average = J/n)."""
    r = R.risk(_table(sizes), ["q"], threshold=threshold, attributes=False)
    per_record = [1 / f for f in sizes for _ in range(f)]
    assert r.prosecutor.records_at_risk == pytest.approx(sum(x > threshold for x in per_record) / len(per_record))
    assert r.prosecutor.highest == pytest.approx(max(per_record))
    assert r.prosecutor.average == pytest.approx(sum(per_record) / len(per_record))


def test_zayatz_against_exact_combinatorics() -> None:
    """Zayatz 1991 with exact integers: N = 36, n = 9, classes of sizes 1, 1, 1, 1, 2, 3 (c1 = 4).
    H(1 | N, i, n) = i·C(N − i, n − 1)/C(N, n); P = c1·H(1|N,1,n) / Σ_i c_i·H(1|N,i,n); uniques c1·P/π."""
    big_n, n, hist = 36, 9, {1: 4, 2: 1, 3: 1}

    def h(i: int) -> float:
        return i * math.comb(big_n - i, n - 1) / math.comb(big_n, n)

    p = hist[1] * h(1) / sum(c * h(i) for i, c in hist.items())
    expected = hist[1] * p / (n / big_n) / big_n
    assert R.zayatz(hist, n, big_n) == pytest.approx(expected, rel=1e-12)


def _pitman_loglik_loops(theta: float, alpha: float, sizes: list[int]) -> float:
    """The Pitman sampling formula's log-likelihood written as its products (Hoshino 2001, eq. for the
    Ewens-Pitman partition probability without the constant): loops, no gamma functions."""
    u, n = len(sizes), sum(sizes)
    total = sum(math.log(theta + i * alpha) for i in range(1, u))
    total -= sum(math.log(theta + i) for i in range(1, n))
    total += sum(math.log(j - alpha) for f in sizes for j in range(1, f))
    return total


def test_pitman_likelihood_and_fit() -> None:
    """The closed form equals the loop form; the fitted (θ, α) maximise it (no better point from another
    optimiser started elsewhere); the uniques follow Γ(θ+1)/Γ(θ+α)·N^α."""
    sizes = [1] * 60 + [2] * 10 + [3] * 4 + [5, 8, 13, 20]     # many uniques, a long tail: α inside (0, 1)
    hist = R.size_histogram(np.array(sizes))
    n = sum(sizes)
    for theta, alpha in [(5.0, 0.3), (40.0, 0.7), (0.5, 0.05)]:
        assert R.pitman_loglik(theta, alpha, hist, n) == pytest.approx(_pitman_loglik_loops(theta, alpha, sizes))
    theta, alpha = R.pitman_fit(hist, n)
    best = _pitman_loglik_loops(theta, alpha, sizes)
    other = optimize.minimize(lambda x: -_pitman_loglik_loops(x[0], x[1], sizes), x0=[10.0, 0.5],
                              method="L-BFGS-B", bounds=[(1e-6, 1e4), (1e-6, 1 - 1e-6)])
    assert -other.fun <= best + 1e-7 * abs(best)
    assert 0.05 < alpha < 0.95 and other.x == pytest.approx([theta, alpha], rel=1e-2)
    big_n = n / 0.05
    want = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * big_n ** alpha / big_n
    assert R.pitman(hist, n, big_n) == pytest.approx(want, rel=1e-9)


def test_snb_expectations_by_direct_summation() -> None:
    """E[sample classes of size 1 and 2] under the shifted negative binomial, summed directly over the
    population class size F = 1 + G (G ~ NB(α, β)), each record kept with probability π."""
    alpha, beta, k, pi = 1.7, 0.35, 500.0, 0.2
    e1 = e2 = 0.0
    for size in range(1, 400):
        g = size - 1
        p_f = math.exp(math.lgamma(g + alpha) - math.lgamma(alpha) - math.lgamma(g + 1)) * beta ** alpha * (
            1 - beta) ** g
        e1 += p_f * size * pi * (1 - pi) ** (size - 1)
        e2 += p_f * math.comb(size, 2) * pi ** 2 * (1 - pi) ** (size - 2) if size >= 2 else 0.0
    got = R.snb_expected(alpha, beta, k, pi)
    assert got[0] == pytest.approx(k * e1, rel=1e-9) and got[1] == pytest.approx(k * e2, rel=1e-9)


def test_snb_fit_solves_its_equations_and_shlosser_by_hand() -> None:
    hist = {1: 120, 2: 40, 3: 15, 4: 6, 6: 2}
    pi = 0.3
    q = 1 - pi   # Shlosser: u + c1·Σ q^i c_i / Σ i·π·q^(i−1) c_i
    u = sum(hist.values())
    want_k = u + 120 * sum(q ** i * c for i, c in hist.items()) / sum(i * pi * q ** (i - 1) * c
                                                                       for i, c in hist.items())
    assert R.shlosser(hist, pi) == pytest.approx(want_k)
    k, alpha, beta = R.snb_fit(hist, pi)
    e1, e2 = R.snb_expected(alpha, beta, k, pi)
    assert e1 == pytest.approx(120, rel=1e-6) and e2 == pytest.approx(40, rel=1e-6)
    n = sum(i * c for i, c in hist.items())
    assert R.snb(hist, n, n / pi) == pytest.approx(k * beta ** alpha / (n / pi))


def test_dankar_decision_rule() -> None:
    """Dankar et al. 2012: π ≤ 0.1 → Pitman; otherwise the smaller of Zayatz and SNB; no unique → 0."""
    rng = np.random.default_rng(5)
    pop = pd.DataFrame({"a": rng.integers(0, 60, 40000).astype(str), "b": rng.zipf(1.7, 40000).astype(str)})
    for pi in (0.05, 0.1, 0.3, 0.6):
        sample = pop.sample(frac=pi, random_state=1)
        u = R.risk(sample, ["a", "b"], sampling_fraction=pi, attributes=False).uniqueness
        if pi <= 0.1:
            assert u.dankar_model == "pitman" and u.dankar == u.pitman
        else:
            assert u.dankar == min(u.zayatz, u.snb) and u.dankar_model in ("zayatz", "snb")
        assert 0 <= u.dankar <= 1
    none = R.uniqueness(np.array([2, 3, 5]), 0.2)
    assert (none.dankar, none.dankar_model, none.pitman) == (0.0, "none", 0.0)


def test_estimators_land_near_the_truth_on_a_known_population() -> None:
    """A population with known uniques: at π = 5 % Pitman (Dankar's choice) is within 25 % of the truth."""
    rng = np.random.default_rng(11)
    n_pop = 200_000
    pop = pd.DataFrame({"a": rng.integers(0, 80, n_pop).astype(str), "b": rng.choice(["f", "m"], n_pop),
                        "c": rng.zipf(1.6, n_pop).clip(max=3000).astype(str)})
    truth = (pop.groupby(["a", "b", "c"]).size() == 1).sum() / n_pop
    u = R.risk(pop.sample(frac=0.05, random_state=2), ["a", "b", "c"], sampling_fraction=0.05,
               attributes=False).uniqueness
    assert u.dankar_model == "pitman" and abs(u.dankar - truth) / truth < 0.25


def test_distinction_and_separation_by_pair_counting() -> None:
    frame = pd.DataFrame({"a": ["x", "x", "y", "z", "x"], "b": ["1", "2", "1", "1", "1"]})
    sets = {s.attributes: s for s in R.attribute_sets(frame, ["a", "b"])}
    assert list(sets) == [("a",), ("b",), ("a", "b")]
    for attrs, s in sets.items():
        rows = [tuple(frame.loc[i, list(attrs)]) for i in range(len(frame))]
        pairs = list(itertools.combinations(rows, 2))
        assert s.separation == pytest.approx(sum(p != q for p, q in pairs) / len(pairs))
        assert s.distinction == pytest.approx(len(set(rows)) / len(rows))
    assert sets[("a",)].distinction == 0.6 and sets[("a",)].separation == pytest.approx(0.7)


def test_bad_input() -> None:
    sample = _table([1, 2])
    with pytest.raises(ReleaseError, match="must be a sample of the population"):
        R.risk(sample, ["q"], population=_table([1, 1]))
    with pytest.raises(ReleaseError, match="not both"):
        R.risk(sample, ["q"], population=sample, sampling_fraction=0.5)
    with pytest.raises(ReleaseError, match="sampling fraction"):
        R.risk(sample, ["q"], sampling_fraction=0.0)


def test_cli_risk(tmp_path: Path) -> None:
    table = str(SWEENEY / "fig4_pt.csv")
    out = run("risk", table, "--qi", ",".join(QI4), "--sampling-fraction", "0.1", "--format", "json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["rows"] == 12 and d["prosecutor"]["highest"] == 1.0 and d["population"] == "sampling fraction"
    assert d["uniqueness"]["dankar_model"] in ("pitman", "zayatz") and len(d["attribute_sets"]) == 15
    text = run("risk", table, "--qi", "Race,Gender")
    assert text.returncode == 0 and "prosecutor" in text.stdout and "--population" in text.stdout
    pop = tmp_path / "pop.csv"
    frame = pd.read_csv(table, dtype=str)
    pd.concat([frame] * 3).to_csv(pop, index=False)
    smallest = int(frame.groupby(["Race", "Gender"]).size().min())
    d = json.loads(run("risk", table, "--qi", "Race,Gender", "--population", str(pop), "--format", "json").stdout)
    assert d["journalist"]["highest"] == pytest.approx(1 / (3 * smallest))
    assert d["prosecutor"]["highest"] == pytest.approx(1 / smallest)
    assert d["uniqueness"]["sampling_fraction"] == pytest.approx(1 / 3)
    bad = run("risk", table, "--qi", "Race,Gender", "--population", str(pop), "--sampling-fraction", "0.5")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
