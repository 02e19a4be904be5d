"""The CLI contract (README, "Command line"): formats, exit codes, one-line errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_runner import run_cli
from tests.fixtures import FIG34_TRUTH, fig34


def run(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("cli")
    fig34().to_csv(d / "fig34.csv", index=False)
    FIG34_TRUTH.to_csv(d / "truth.csv", index=False)
    return d / "fig34.csv", d / "truth.csv"


def test_reidentify_csv_header_and_rows(files) -> None:
    rel, _ = files
    out = run("reidentify", str(rel), "--method", "incomplete", "--format", "csv")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "identified,deidentified"
    assert set(lines[1:]) == {"Ali,actg", "Charlie,tgac", "Dan,gatc", "Bob,ctga"}


def test_reidentify_json_with_truth(files) -> None:
    rel, truth = files
    out = run("reidentify", str(rel), "--method", "true-loves", "--truth", str(truth), "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["method"] == "true-loves"
    assert {p["deidentified"]: p["identified"] for p in data["pairs"]} == {
        "actg": "Ali", "tgac": "Charlie", "gatc": "Dan", "ctga": "Bob"}
    assert all(p["reason"] for p in data["pairs"])
    assert data["summary"]["correct"] == 4 and data["summary"]["wrong"] == 0 and data["summary"]["recall"] == 1.0


def test_incomplete_k_one_row_per_candidate(files) -> None:
    rel, _ = files
    out = run("reidentify", str(rel), "--method", "incomplete-k", "--k", "2", "--format", "csv")
    assert out.returncode == 0
    assert len(out.stdout.strip().splitlines()) == 1 + 4
    assert run("reidentify", str(rel), "--method", "incomplete-k").returncode == 2     # --k is required


def test_audit_json_contract(files) -> None:
    rel, _ = files
    data = json.loads(run("audit", str(rel), "--k", "2", "--format", "json").stdout)
    assert data["k"] == 2 and data["k_unlinkable"] is False
    assert data["true_loves"] == 4 and data["maximum_matching_size"] == 4
    assert {v["side"] for v in data["violations"]} == {"identified", "deidentified"}
    assert all(v["union_degree"] == 1 for v in data["violations"])


def test_trails_json(files) -> None:
    rel, _ = files
    data = json.loads(run("trails", str(rel), "--format", "json").stdout)
    assert data["reserved"] == "deidentified" and data["locations"] == ["H1", "H2", "H3", "H4"]


@pytest.mark.parametrize("content, needle", [
    ("location,kind\nA,identified\n", "missing column(s) 'element'"),
    ("location,kind,element\nA,nope,x\n", "row 2, column 'kind'"),
    ("location,kind,element\n", "empty"),
])
def test_bad_input_exit_2_without_traceback(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(content)
    out = run("audit", str(p), "--k", "2")
    assert out.returncode == 2
    assert needle in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_inconsistent_release_diagnostic(tmp_path: Path) -> None:
    # sizes differ both ways and y = {B, C} lies inside no de-identified trail ({A, B}, {A, C}): no model fits
    df = pd.DataFrame([("A", "identified", "x"), ("A", "deidentified", "1"), ("A", "deidentified", "2"),
                       ("B", "identified", "x"), ("B", "identified", "y"), ("B", "deidentified", "1"),
                       ("C", "identified", "y"), ("C", "deidentified", "2")],
                      columns=["location", "kind", "element"])
    p = tmp_path / "mixed.csv"
    df.to_csv(p, index=False)
    out = run("reidentify", str(p), "--method", "true-loves")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "A (1 identified, 2 de-identified records)" in out.stderr and "--reserved" in out.stderr


def test_usage_error_is_exit_2_not_traceback() -> None:
    out = run("load")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "Missing argument" in out.stderr


def test_simulate_then_reidentify_no_wrong(tmp_path: Path) -> None:
    rel, truth = tmp_path / "sim.csv", tmp_path / "truth.csv"
    out = run("simulate", "--subjects", "400", "--locations", "10", "--p", "0.4", "--withhold", "0.3",
              "--seed", "5", "--out", str(rel), "--truth", str(truth))
    assert out.returncode == 0, out.stderr
    for method in ("complete", "incomplete", "true-loves"):
        data = json.loads(run("reidentify", str(rel), "--method", method, "--truth", str(truth),
                              "--format", "json").stdout)
        assert data["summary"]["wrong"] == 0
    again = tmp_path / "sim2.csv"
    run("simulate", "--subjects", "400", "--locations", "10", "--p", "0.4", "--withhold", "0.3", "--seed", "5",
        "--out", str(again))
    assert rel.read_text() == again.read_text()          # deterministic for a seed
