"""``graphlink unlink``'s table in people's words (records before / withheld / after per side, a warning when
nothing is left disclosed), ``--method`` checked as a choice before the release is read, and help text that
keeps ``[extras]`` and shows flags as flags."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from graphlink.core.release import read_release
from tests.cli_runner import run_cli
from tests.fixtures import fig34

ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}


def run(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, env=ENV)


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("unlink") / "fig34.csv"
    fig34().to_csv(path, index=False)
    return path


def row(stdout: str, label: str) -> list[int]:
    line = next(ln for ln in stdout.splitlines() if label in ln)
    return [int(x.replace(",", "")) for x in re.findall(r"│\s*([\d,]+)\s*(?=│)", line)]


def test_table_shows_records_before_withheld_after_per_side(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    proc = run("unlink", str(src), "--k", "2", "--method", "force-dedup", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    frame = fig34()
    written = read_release(out).frame
    n_id = int((frame["kind"] == "identified").sum())
    before = int((frame["kind"] == "deidentified").sum())
    after = int((written["kind"] == "deidentified").sum())
    assert row(proc.stdout, "identified records (location, person)") == [n_id, 0, n_id]
    assert row(proc.stdout, "de-identified records (location, record)") == [before, before - after, after]
    assert after > 0 and "nothing de-identified" not in proc.stderr


def test_warns_when_nothing_is_left_disclosed(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    proc = run("unlink", str(src), "--k", "5", "--out", str(out))      # 4 people: k = 5 withholds everything
    assert proc.returncode == 0, proc.stderr
    assert int((read_release(out).frame["kind"] == "deidentified").sum()) == 0
    assert row(proc.stdout, "de-identified records (location, record)")[2] == 0
    assert "nothing de-identified is left disclosed" in " ".join(proc.stderr.split())


def test_method_is_a_choice_checked_before_reading(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-release.csv"
    proc = run("unlink", str(missing), "--k", "2", "--method", "fastest", "--out", str(tmp_path / "o.csv"))
    assert proc.returncode == 2
    assert "--method" in proc.stderr and "no-such-release" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    help_text = run("unlink", "--help").stdout
    assert "greedy-dedup|force-dedup|flow-dedup" in help_text


def test_help_keeps_extras_and_shows_flags_as_flags() -> None:
    from graphlink.cli import app

    help_text = run("reidentify", "--help").stdout
    assert "graphlink[spark]" in help_text
    for info in app.registered_commands:
        name = info.name or info.callback.__name__
        text = run(name, "--help").stdout
        assert "<bool>" not in text, name
