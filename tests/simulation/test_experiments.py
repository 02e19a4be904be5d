"""Experiments (graphlink.simulation.experiments.*): simulated REIDIT-C against the exact closed form, the fast matrix
paths against the core's pipeline, and every registered experiment on small settings.

Statistical tolerance for a mean of R independent runs: 4·sd/√R with sd the exact standard deviation of one
run (docs/algorithms.md#random-trails); a false failure has probability ≈ 6e-5 per check.
"""

from __future__ import annotations

import subprocess
from math import sqrt

import numpy as np
import pandas as pd
import pytest

from graphlink.simulation import simulate as sim
from graphlink.simulation import theory
from graphlink.simulation.experiments import registry
from graphlink.simulation.experiments.common import parallel_map, population_trails, reidit_c_matrix
from graphlink.simulation.experiments.uniqueness_grid import reidit_i_count, zero_star_trails
from tests.cli_runner import run_cli

N = 1000


@pytest.mark.parametrize("C,p,R", [(10, 0.5, 40), (10, 0.1, 40), (15, 0.3, 30), (20, 0.1, 30)])
def test_reidit_c_uniqueness_matches_closed_form(C, p, R):
    fr = []
    for r in range(R):
        pop = sim.uniform_population(N, C, p, seed=[C, int(100 * p), r])
        k, ok = reidit_c_matrix(pop.visits, pop.visits)
        assert k == ok  # no wrong re-identifications under the model
        fr.append(k / N)
    # REIDIT-C on a release can only re-identify subjects with a non-empty trail
    exact = theory.p_unique(C, p, N, exclude_empty=True)
    sd = theory.sd_unique_fraction(C, p, N)
    assert abs(np.mean(fr) - exact) <= 4 * sd / sqrt(R)


def test_thesis_cell_c10_p05_values():
    # the closed form's values (docs/algorithms.md#random-trails), which the simulation test above relies on
    assert theory.p_unique(10, 0.5, N) == pytest.approx(0.3768, abs=5e-5)
    assert theory.sd_unique_fraction(10, 0.5, N) == pytest.approx(0.0154, abs=5e-5)


def test_core_reidit_c_on_simulated_release_matches_closed_form():
    from graphlink.analysis.reidit import reidentify

    R, C, p = 12, 10, 0.5
    fr = []
    for r in range(R):
        rel = sim.simulate_uniform(N, C, p, seed=1000 + r)
        res = reidentify(rel, "complete", reserved="none")
        assert res.summary.wrong == 0
        pop = sim.uniform_population(N, C, p, seed=1000 + r)
        assert len(res.pairs) == reidit_c_matrix(pop.visits, pop.visits)[0]
        fr.append(len(res.pairs) / N)
    exact = theory.p_unique(C, p, N, exclude_empty=True)
    assert abs(np.mean(fr) - exact) <= 4 * theory.sd_unique_fraction(C, p, N) / sqrt(R)


def test_zipf_reidit_c_matches_exact_enumeration():
    R, C, alpha = 30, 10, 0.4
    probs = sim.zipf_probabilities(C, alpha)
    fr = [reidit_c_matrix(v := sim.zipf_population(N, C, alpha, seed=[7, r]).visits, v)[0] / N for r in range(R)]
    exact = theory.p_unique_heterogeneous(probs, N, exclude_empty=True)
    # sd of one run is bounded by sqrt(P(1-P)/n)·sqrt(1 + n·max cov) — use the empirical sd with a 1.5 margin
    assert abs(np.mean(fr) - exact) <= 4 * 1.5 * np.std(fr, ddof=1) / sqrt(R)


def test_reidit_i_zero_star_at_least_first_round_bound():
    C, p, R = 15, 0.3, 10
    bound = theory.p_reidit_i_round1(C, p, N)
    fr = []
    for r in range(R):
        pop = sim.uniform_population(N, C, p, seed=[3, r])
        k, ok = reidit_i_count(pop.visits)
        assert k == ok
        fr.append(k / N)
    # REIDIT-I finds at least the first-round links; binomial sd of one run bounds the noise
    assert np.mean(fr) >= bound - 4 * sqrt(bound * (1 - bound) / N) / sqrt(R)


def test_zero_star_trails_shape():
    pop = sim.uniform_population(50, 6, 0.4, seed=1)
    t = zero_star_trails(pop.visits)
    dm, dn = t.identified.dense(), t.deidentified.dense()
    present = pop.visits.any(axis=1)
    assert (dm == pop.visits[present].astype(int)).all()
    assert ((dn == 1) == pop.visits[present]).all() and ((dn == -1) == ~pop.visits[present]).all()


@pytest.mark.parametrize("kind", ["deidentified", "identified", "households"])
def test_population_trails_equal_fill_trails(kind):
    from graphlink.core.trails import build_trails

    if kind == "households":
        pop = sim.household_population(60, 0.3, locations=7, withhold=0.2, seed=2)
    else:
        pop = sim.uniform_population(200, 9, 0.35, withhold=0.3, reserved=kind, seed=4)
    a = population_trails(pop)
    b = build_trails(pop.to_release(), pop.reserved, "auto" if kind == "households" else "one-to-one")
    assert a.locations == b.locations
    assert a.multiplicity == b.multiplicity == ("one-to-many" if kind == "households" else "one-to-one")
    for side in ("identified", "deidentified"):
        A, B = getattr(a, side), getattr(b, side)
        oa, ob = np.argsort(A.keys), np.argsort(B.keys)
        assert (A.keys[oa] == B.keys[ob]).all()
        assert (A.dense()[oa] == B.dense()[ob]).all()


def test_household_release_reidit_m_is_correct():
    from graphlink.analysis.reidit import reidentify

    rel = sim.simulate_households(None, 0.25, locations=30, seed=5)
    res = reidentify(rel, "multiple")            # the default decision reads it as one-to-many
    assert res.summary.multiplicity == "one-to-many" and res.summary.reserved == "identified"
    assert res.summary.wrong == 0 and len(res.pairs) > 0


def test_parallel_map_is_deterministic_across_workers():
    from graphlink.simulation.experiments.popularity import _measure

    tasks = [(60, 12, 1.0, 5, r) for r in range(4)]
    serial = parallel_map(_measure, tasks, workers=1, progress=False)
    pooled = parallel_map(_measure, tasks, workers=2, progress=False)
    assert serial == pooled


EXPERIMENTS = ["uniqueness-grid", "auc", "shift-shape", "popularity", "withholding", "scaling",
               "k-reidentification", "optimal-gap", "households", "als-gain", "calibration"]


def test_all_experiments_registered():
    assert set(EXPERIMENTS) <= set(registry.load_all())


@pytest.fixture(scope="module")
def grid_dir(tmp_path_factory):
    """uniqueness-grid, auc and shift-shape share one output folder, so the grid is computed once."""
    return tmp_path_factory.mktemp("grid")


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_runs_small(name, tmp_path, grid_dir):
    calls = []
    exp = registry.load_all()[name]
    out = grid_dir if name in ("uniqueness-grid", "auc", "shift-shape") else tmp_path
    res = exp.run(runs=2, seed=3, out=out, small=True, progress=lambda d, t: calls.append((d, t)))
    assert res.csv.exists() and res.png.exists()
    assert res.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    df = pd.read_csv(res.csv)
    assert len(df) > 0
    assert "thesis" in res.comparison
    if isinstance(res.summary, dict) and "wrong" in res.summary:
        assert res.summary["wrong"] == 0
    if name == "households":                      # the decided model; the one-to-one size reading names wrongly
        assert set(df["model"]) == {"one-to-many"} and res.summary["wrong_size_reading"] > 0
    if name == "uniqueness-grid" or out is tmp_path:
        assert calls and calls[-1][0] == calls[-1][1]   # progress reported (auc/shift-shape reuse the cache)


def test_experiment_csv_deterministic(tmp_path):
    exp = registry.load_all()["popularity"]
    a = exp.run(runs=2, seed=9, out=tmp_path / "a", small=True, progress=False)
    b = exp.run(runs=2, seed=9, out=tmp_path / "b", small=True, progress=False)
    assert a.csv.read_bytes() == b.csv.read_bytes()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args)


def test_cli_simulate_and_experiment(tmp_path):
    out, truth = tmp_path / "r.csv", tmp_path / "t.csv"
    r = _cli("simulate", "--subjects", "300", "--locations", "8", "--zipf", "0.5", "--withhold", "0.2",
             "--seed", "4", "--out", str(out), "--truth", str(truth))
    assert r.returncode == 0, r.stderr
    expected = sim.zipf_population(300, 8, 0.5, withhold=0.2, seed=4)
    pd.testing.assert_frame_equal(pd.read_csv(out), expected.frame(), check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_csv(truth), expected.truth_frame(), check_dtype=False)
    bad = _cli("simulate", "--subjects", "10", "--locations", "3", "--p", "2", "--out", str(out))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    lst = _cli("experiment", "--list")
    assert lst.returncode == 0 and "uniqueness-grid" in lst.stdout
    run = _cli("experiment", "popularity", "--small", "--runs", "1", "--out", str(tmp_path / "exp"))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "exp" / "popularity.png").exists()
