"""The CLI as a separate process, as a user's shell runs it: the installed console script and ``python -m
graphlink.cli`` (exit codes, stdout and stderr apart), and the in-process runner the other CLI tests use
(tests/cli_runner.py) gives the same three things as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
FIG34 = ROOT / "graphlink" / "data" / "thesis_fig3_4.csv"
SCRIPT = Path(sys.executable).parent / "graphlink"          # the console script pip installed beside the interpreter


def _process(*args: str, entry: str = "module") -> subprocess.CompletedProcess:
    exe = [str(SCRIPT)] if entry == "script" else [sys.executable, "-m", "graphlink.cli"]
    return subprocess.run([*exe, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_console_script_results_on_stdout_notes_on_stderr() -> None:
    assert SCRIPT.is_file(), f"no console script at {SCRIPT}: install the package (pip install -e .)"
    done = _process("reidentify", str(FIG34), "--method", "true-loves", "--format", "csv", entry="script")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["identified,deidentified", "Ali,actg", "Charlie,tgac", "Bob,ctga", "Dan,gatc"]
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["Model"]


def test_module_entry_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("location,kind,element\nH1,somebody,Ali\n")
    done = _process("audit", str(bad), "--k", "2")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("graphlink: error: "), done.stderr


@pytest.mark.parametrize("args", [
    ("audit", str(FIG34), "--k", "2", "--format", "json"),              # results on stdout, the model note on stderr
    ("trails", str(FIG34)),                                              # rich tables: the same width
    ("audit", str(FIG34), "--k", "0"),                                   # a usage error
    (),                                                                  # no command: the help, exit 2
], ids=["audit-json", "trails-table", "usage-error", "no-command"])
def test_the_in_process_runner_matches_a_real_process(args: tuple[str, ...]) -> None:
    real, here = _process(*args, entry="script"), run_cli(*args, cwd=ROOT)
    assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr)
    if args and args[-1] == "json":
        assert json.loads(here.stdout)["k"] == 2


ENTRY = """
import atexit, sys, threading, time
from pathlib import Path
marks = Path(sys.argv[1])
atexit.register(lambda: (marks / "atexit").write_text("ran"))
if sys.argv[2] == "thread":           # a non-daemon thread still working when the command ends
    threading.Thread(target=lambda: (time.sleep(0.5), (marks / "thread").write_text("done"))).start()
sys.argv = ["graphlink", *sys.argv[3:]]
from graphlink.cli import run
run()
"""


@pytest.mark.parametrize("thread", ["none", "thread"])
def test_the_process_entry_ends_after_flushing_and_the_exit_handlers(tmp_path: Path, thread: str) -> None:
    """``run`` ends the process without the interpreter's teardown, but only after everything a normal exit does
    that a user could see: the whole output flushed, the exit handlers run, the exit code kept, and a non-daemon
    thread still running waited for (then it exits the usual way)."""
    args = ["reidentify", str(FIG34), "--method", "true-loves", "--format", "csv"]
    done = subprocess.run([sys.executable, "-c", ENTRY, str(tmp_path), thread, *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["identified,deidentified", "Ali,actg", "Charlie,tgac", "Bob,ctga", "Dan,gatc"]
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").exists() == (thread == "thread")
    failed = subprocess.run([sys.executable, "-c", ENTRY, str(tmp_path), thread, "audit", str(FIG34), "--k", "0"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert failed.returncode == 2 and failed.stderr.startswith("graphlink: error: "), failed.stderr
