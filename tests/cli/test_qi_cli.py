"""``graphlink qi``: the JSON contract of docs/qi.md, outputs checked independently, bad input exits 2 on one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests import cli_runner
from tests.qi_helpers import QI4, SWEENEY, is_k_anonymous

QI = ",".join(QI4)
HIER = str(SWEENEY / "hierarchies")


def run(*args: str) -> subprocess.CompletedProcess:
    """``graphlink qi ARGS`` in this process through the console-script entry (same error mapping, no
    interpreter start-up per call)."""
    return run_cli("qi", *args)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``graphlink ARGS`` in this process."""
    return cli_runner.run_cli(*args)


def test_console_script_end_to_end(tmp_path: Path) -> None:
    """The installed entry point in a fresh interpreter: JSON on stdout, one line on stderr and exit 2."""
    exe = [sys.executable, "-m", "graphlink.cli", "qi"]
    done = subprocess.run([*exe, "check", str(SWEENEY / "fig2.csv"), "--qi", "Race,Birth,Gender,ZIP", "--format",
                           "json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["k"] == 2
    failed = subprocess.run([*exe, "check", str(SWEENEY / "fig2.csv"), "--qi", "Race,Age"], capture_output=True,
                            text=True, timeout=300)
    assert failed.returncode == 2 and len(failed.stderr.strip().splitlines()) == 1 and "column 'Age'" in failed.stderr


def ok_json(*args: str) -> dict:
    out = run(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def bad(*args: str) -> str:
    """Run expecting exit 2 with one line on stderr and no traceback; return that line."""
    out = run(*args)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = [x for x in out.stderr.splitlines() if x.strip() and "warning" not in x]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


def test_check_json_contract() -> None:
    d = ok_json("check", str(SWEENEY / "fig2.csv"), "--qi", "Race,Birth,Gender,ZIP", "--sensitive", "Problem")
    assert {"k", "classes", "smallest_classes", "l_diversity", "t_closeness"} <= set(d)
    assert d["k"] == 2 and d["classes"] == 5
    assert all(set(c) == {"values", "size"} for c in d["smallest_classes"])
    assert d["smallest_classes"][-1] == {"values": {"Race": "White", "Birth": "1964", "Gender": "m", "ZIP": "0213*"},
                                         "size": 3}
    assert d["l_diversity"]["distinct"] == 1
    plain = ok_json("check", str(SWEENEY / "fig4_pt.csv"), "--qi", QI)
    assert plain["k"] == 1 and plain["classes"] == 12 and "l_diversity" not in plain


@pytest.mark.parametrize("algorithm", ["optimal", "datafly", "mingen", "mu-argus", "mondrian"])
def test_anonymize_json_contract_and_output(tmp_path: Path, algorithm: str) -> None:
    out = tmp_path / "out.csv"
    d = ok_json("anonymize", str(SWEENEY / "fig4_pt.csv"), "--qi", QI, "--k", "2", "--algorithm", algorithm,
                "--hierarchies", HIER, "--out", str(out))
    assert {"k", "algorithm", "levels", "suppressed_rows", "prec", "dm_star", "seconds"} <= set(d)
    assert d["algorithm"] == algorithm and d["k"] >= 2
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(released.columns) == QI4 + ["Problem"]
    assert len(released) == 12 - d["suppressed_rows"]
    assert is_k_anonymous(released, QI4, 2)
    assert (d["levels"] is None) == (algorithm in ("mingen", "mu-argus", "mondrian"))
    # the release passes `qi check` with the k the summary reports
    assert ok_json("check", str(out), "--qi", QI)["k"] == d["k"]


def test_anonymize_optimal_with_suppression_and_loss(tmp_path: Path) -> None:
    d = ok_json("anonymize", str(SWEENEY / "fig4_pt.csv"), "--qi", QI, "--k", "2", "--hierarchies", HIER,
                "--max-suppression", "0.2", "--loss", "dm-star", "--out", str(tmp_path / "o.parquet"))
    assert d["suppressed_rows"] <= 2 and d["lattice"]["nodes"] == 3 * 6 * 3 * 4
    assert is_k_anonymous(pd.read_parquet(tmp_path / "o.parquet"), QI4, 2)
    fly = ok_json("anonymize", str(SWEENEY / "fig4_pt.csv"), "--qi", QI, "--k", "2", "--algorithm", "datafly",
                  "--hierarchies", HIER, "--out", str(tmp_path / "f.csv"))
    assert fly["levels"] == {"Race": 0, "BirthDate": 2, "Gender": 0, "ZIP": 0} and fly["suppressed_rows"] == 2
    table = run("anonymize", str(SWEENEY / "fig4_pt.csv"), "--qi", QI, "--k", "2", "--hierarchies", HIER,
                "--out", str(tmp_path / "t.csv"))
    assert table.returncode == 0 and "k of the release" in table.stdout


@pytest.mark.parametrize(("attack", "first", "second", "disclosed"), [
    ("unsorted", "fig3_gt1", "fig3_gt2", 12),
    ("complementary", "fig5_gt1", "fig5_gt3", 2),
    ("temporal", "fig5_gt1", "ex7_gt_t1", 2),
    ("temporal", "fig5_gt1", "ex7_remedy", 0),
])
def test_attack_json(attack: str, first: str, second: str, disclosed: int) -> None:
    fig3 = first.startswith("fig3")
    d = ok_json("attack", attack, str(SWEENEY / f"{first}.csv"), str(SWEENEY / f"{second}.csv"),
                "--qi", "Race,ZIP" if fig3 else QI,
                "--hierarchies", str(SWEENEY / ("fig3_hierarchies" if fig3 else "hierarchies")))
    assert d["attack"] == attack and len(d["disclosed"]) == disclosed and d["remedy"]
    if attack == "complementary":
        assert {tuple(x["values"].values()) for x in d["disclosed"]} == {
            ("white", "1964", "male", "02138"), ("white", "1965", "female", "02139")}


def test_hierarchy_builder_command(tmp_path: Path) -> None:
    out = run("hierarchy", str(SWEENEY / "fig4_pt.csv"), "--column", "ZIP", "--kind", "digits", "--max-masked", "2",
              "--out", str(tmp_path / "ZIP.csv"))
    assert out.returncode == 0, out.stderr
    rows = set((tmp_path / "ZIP.csv").read_text().splitlines())
    assert rows <= set((SWEENEY / "hierarchies" / "ZIP.csv").read_text().splitlines()) and len(rows) == 3


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    pt = str(SWEENEY / "fig4_pt.csv")
    line = bad("check", pt, "--qi", "Race,Age")
    assert "fig4_pt.csv" in line and "column 'Age'" in line
    line = bad("anonymize", pt, "--qi", QI, "--k", "13", "--hierarchies", HIER, "--out", str(tmp_path / "o.csv"))
    assert "k = 13 is larger than the table (12 rows)" in line
    hier = tmp_path / "h"
    shutil.copytree(SWEENEY / "hierarchies", hier)
    (hier / "ZIP.csv").write_text("02138;0213*;*\n02139;0213*;*\n")
    line = bad("anonymize", pt, "--qi", QI, "--k", "2", "--hierarchies", str(hier), "--out", str(tmp_path / "o.csv"))
    assert "value '02141' is not in the hierarchy for ZIP" in line and "column 'ZIP'" in line and "row 2" in line
    (hier / "ZIP.csv").write_text("02138;0213*;*\n02139;0214*\n")
    line = bad("anonymize", pt, "--qi", QI, "--k", "2", "--hierarchies", str(hier), "--out", str(tmp_path / "o.csv"))
    assert "ZIP.csv" in line and "row 2" in line and "levels" in line
    line = bad("anonymize", pt, "--qi", QI, "--k", "2", "--max-suppression", "1.5", "--out", str(tmp_path / "o.csv"))
    assert "between 0 and 1" in line
    assert "no such file" in bad("check", str(tmp_path / "nope.csv"), "--qi", "a")
    assert run("anonymize", pt, "--qi", QI, "--k", "2", "--algorithm", "incognito",
               "--out", str(tmp_path / "o.csv")).returncode == 2
    line = bad("attack", "unsorted", str(SWEENEY / "fig5_gt1.csv"), str(SWEENEY / "ex7_gt_t1.csv"), "--qi", QI,
               "--hierarchies", HIER)
    assert "by position" in line and "12 and 14 rows" in line
    line = bad("anonymize", pt, "--qi", QI, "--k", "2", "--algorithm", "mu-argus", "--identifying", "Race=9",
               "--out", str(tmp_path / "o.csv"))
    assert "--identifying" in line


def test_dataset_export_round_trip(tmp_path: Path) -> None:
    out = run("dataset", "acs12", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    d = ok_json("anonymize", str(tmp_path / "acs12.csv"), "--qi", "age,gender,race,edu", "--k", "10",
                "--hierarchies", str(tmp_path / "hierarchies"), "--max-suppression", "0.02",
                "--out", str(tmp_path / "a.csv"))
    released = pd.read_csv(tmp_path / "a.csv", dtype=str, keep_default_na=False)
    assert len(released) == 2000 - d["suppressed_rows"] and d["suppressed_rows"] <= 40
    assert is_k_anonymous(released, ["age", "gender", "race", "edu"], 10)
    assert "unknown dataset" in bad("dataset", "adult", "--out", str(tmp_path))
