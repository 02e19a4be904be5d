"""What the command line says to a new user who makes the usual mistakes: a misspelt choice, an Excel workbook, a
row in another separator, and --format csv with --truth (the summary on stderr, the pairs alone on stdout)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.fixtures import fig34


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "fig34.csv"
    fig34().to_csv(path, index=False)
    return path


def test_a_misspelt_method_is_named_with_the_closest_choice(release: Path) -> None:
    res = run_cli("reidentify", release, "--method", "true-love")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "'true-love' is not one of the choices (complete, incomplete, incomplete-k, multiple, true-loves)" \
        in res.stderr
    assert "did you mean 'true-loves'?" in res.stderr
    assert "Value error" not in res.stderr


@pytest.mark.parametrize(("magic", "what"), [(None, "Excel workbook (.xlsx)"),
                                             (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(64), "old Excel workbook")])
def test_a_spreadsheet_is_named_as_one(tmp_path: Path, magic: bytes | None, what: str) -> None:
    path = tmp_path / "release.xlsx"
    if magic is None:
        with zipfile.ZipFile(path, "w") as book:
            book.writestr("[Content_Types].xml", "<Types/>")
    else:
        path.write_bytes(magic)
    res = run_cli("trails", path)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert what in res.stderr and "save the sheet as CSV" in res.stderr
    assert "NUL" not in res.stderr


def test_a_row_in_another_separator_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text("location,kind,element\nA,identified,p1\nA,deidentified,s1\nB;identified;p1\n")
    res = run_cli("trails", path)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "row 4" in res.stderr and "semicolon-separated" in res.stderr


def test_csv_pairs_with_truth_keep_the_summary_on_stderr(release: Path, tmp_path: Path) -> None:
    truth = tmp_path / "truth.csv"
    truth.write_text("identified,deidentified\nAli,actg\nBob,ctga\nCharlie,tgac\nDan,gatc\n")
    res = run_cli("reidentify", release, "--method", "true-loves", "--format", "csv", "--truth", truth)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "identified,deidentified" and "Dan,gatc" in res.stdout
    assert "correct" not in res.stdout
    assert "Against the truth: 4 correct, 0 wrong" in " ".join(res.stderr.split())


@pytest.mark.parametrize(("signal_exc", "code", "line"), [(KeyboardInterrupt, 130, "graphlink: interrupted"),
                                                          ("terminated", 143, "graphlink: terminated")])
def test_a_signal_inside_a_compiled_kernel_is_an_interruption(release: Path, monkeypatch: pytest.MonkeyPatch,
                                                              signal_exc: object, code: int, line: str) -> None:
    """Ctrl-C while numba loads a kernel reaches the entry as a SystemError caused by the KeyboardInterrupt (seen on
    ``unlink --method keep-most``), and SIGTERM while the risk chain's kernel runs as one caused by the handler's
    Terminated (seen on ``graphlink experiment calibration``): exit 130 / 143 and the one line, not a traceback."""
    import graphlink.core.release as release_module
    from graphlink.cli import Terminated

    kind = Terminated if signal_exc == "terminated" else signal_exc

    def interrupted(*args: object, **kwargs: object) -> None:
        try:
            raise kind
        except kind as exc:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") from exc

    monkeypatch.setattr(release_module, "read_release", interrupted)
    res = run_cli("trails", release)
    assert res.returncode == code, res.stderr
    assert res.stderr.strip().splitlines() == [line]
