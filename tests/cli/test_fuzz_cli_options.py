"""Fuzzing the CLI's numeric and path options: ``graphlink simulate`` with bad numbers,
``graphlink experiment`` with bad options.  Each run exits 0, or 2 with one line on stderr; an accepted
``simulate`` writes a release that reads back; a bad ``experiment`` option is refused before any run starts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings

from graphlink.simulation.experiments.registry import load_all
from tests import fuzz_inputs as fi
from tests.fuzz_harness import CASES, check_contract, report_cases, run_cli

SETTINGS = settings(max_examples=fi.examples(100), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module", autouse=True)
def _cases(request: pytest.FixtureRequest):
    yield
    report_cases(request)


@SETTINGS
@given(args=fi.simulate_args())
def test_simulate_options(args: list[str]) -> None:
    from graphlink.core.release import read_release

    with tempfile.TemporaryDirectory() as d:
        out, truth = Path(d) / "sim.csv", Path(d) / "truth.csv"
        argv = ["simulate", *args, "--out", str(out), "--truth", str(truth)]
        outcome = run_cli(argv)
        CASES["simulate"] += 1
        event(f"exit {outcome.code}")
        check_contract(outcome, argv)
        if outcome.code == 0:
            assert len(read_release(out, truth=truth)) > 0
        else:
            assert not out.exists(), "a refused simulate must not leave a release behind"


@settings(SETTINGS, max_examples=fi.examples(60))
@given(args=fi.experiment_args(sorted(load_all())))
def test_experiment_bad_options(args: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        blocker = Path(d) / "a-file"
        blocker.write_text("not a folder")
        argv = ["experiment", *[a.replace("@FILE@", str(blocker)) for a in args]]
        if "--out" not in argv:
            argv += ["--out", str(Path(d) / "exp")]
        outcome = run_cli(argv)
        CASES["experiment"] += 1
        check_contract(outcome, argv)
        assert outcome.code == 2, f"{argv} was not refused: {outcome.stderr}"
        assert not (Path(d) / "exp").exists()
