"""The CLI as a separate process, as a user's shell runs it: the installed console script and ``python -m
graphlink.cli`` (exit codes, stdout and stderr apart), and the in-process runner the other CLI tests use
(tests/cli_runner.py) gives the same three things as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.processes import stop

ROOT = Path(__file__).resolve().parents[2]
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


# ------------------------------------------------------------------ Ctrl-C, SIGTERM and a closed stdout pipe
@pytest.fixture(scope="module")
def large_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release whose commands run for seconds (200,000 people at 24 locations, 69 MB of CSV), so that a signal
    lands while they work."""
    from graphlink.simulation.simulate import simulate_uniform

    path = tmp_path_factory.mktemp("large") / "release.csv"
    simulate_uniform(200_000, 24, 0.3, seed=1).frame.to_csv(path, index=False)
    return path


def _start(*args: str, cwd: Path) -> subprocess.Popen:
    # the console script, with SIGINT at its default as in a terminal (a shell's background job ignores it)
    return subprocess.Popen([str(SCRIPT), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for(proc: subprocess.Popen, ready: Callable[[], bool], what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            pytest.fail(f"the command ended (exit {proc.returncode}) before {what}: {proc.stderr.read()[-500:]}")
        time.sleep(0.005)


def _reading(proc: subprocess.Popen, path: Path) -> Callable[[], bool]:
    """Has the process ``path`` open (Linux /proc): the command is reading its input."""
    def check() -> bool:
        try:
            return any(os.path.realpath(f"/proc/{proc.pid}/fd/{fd}") == str(path.resolve())
                       for fd in os.listdir(f"/proc/{proc.pid}/fd"))
        except OSError:
            return False
    return check


def _temp_file(folder: Path, name: str) -> Callable[[], bool]:
    return lambda: any(p.name.startswith(f".{name}.") and p.name.endswith(".tmp") for p in folder.iterdir())


def _interrupted(proc: subprocess.Popen, sig: int = signal.SIGINT) -> tuple[int, str, str]:
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


pytestmark_linux = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc (Linux)")


@pytestmark_linux
@pytest.mark.parametrize("command", ["reidentify", "report", "trails"])
def test_ctrl_c_exits_130_with_one_line_and_no_output_file(large_release: Path, tmp_path: Path,
                                                           command: str) -> None:
    """Was: Ctrl-C during reidentify, report or trails ended with exit 0 and no message (typer returns 130
    instead of raising, and the entry dropped it), so a missing report looked like success.  Now: exit 130, the
    one line 'graphlink: interrupted', no --out file and no temporary file left."""
    out = tmp_path / ("report.html" if command == "report" else "out.csv")
    args = {"reidentify": ["reidentify", str(large_release), "--method", "complete"],
            "report": ["report", str(large_release), "--no-protection"],
            "trails": ["trails", str(large_release), "--format", "csv"]}[command]
    proc = _start(*args, "--out", str(out), cwd=tmp_path)
    _wait_for(proc, _reading(proc, large_release), "it read the release")
    code, stdout, stderr = _interrupted(proc)
    assert code == 130 and stderr.splitlines()[-1:] == ["graphlink: interrupted"], (code, stderr[-2000:])
    assert "Traceback" not in stderr and stderr.count("graphlink:") == 1 and stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytestmark_linux
def test_ctrl_c_while_writing_removes_the_temporary_file(large_release: Path, tmp_path: Path) -> None:
    """The signal lands while the trail matrices are written (their temporary file exists): it is removed, and a
    previous output stays as it was."""
    out = tmp_path / "trails.csv"
    out.write_bytes(OLD := b"previous,output\n")
    proc = _start("trails", str(large_release), "--format", "csv", "--out", str(out), cwd=tmp_path)
    _wait_for(proc, _temp_file(tmp_path, out.name), "it began to write")
    code, _, stderr = _interrupted(proc)
    assert code == 130 and stderr.splitlines()[-1] == "graphlink: interrupted", stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trails.csv"] and out.read_bytes() == OLD


@pytestmark_linux
def test_ctrl_c_while_stdout_is_full_is_not_a_result(large_release: Path, tmp_path: Path) -> None:
    """Was: pairs printed to a pipe that a script stopped reading (stdout cut at 64 KiB), then Ctrl-C: exit 0,
    so the cut list looked complete.  Now the cut list comes with exit 130."""
    proc = _start("reidentify", str(large_release), "--method", "complete", "--format", "csv", cwd=tmp_path)
    assert proc.stdout.readline() == "identified,deidentified\n"       # the pairs have begun; stop reading
    time.sleep(1.0)                                                     # the pipe fills; the writer waits
    code, stdout, stderr = _interrupted(proc)
    assert code == 130 and stderr.splitlines()[-1] == "graphlink: interrupted", (code, stderr[-2000:])
    assert "Traceback" not in stderr


@pytestmark_linux
def test_sigterm_exits_143_and_leaves_no_output(large_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "pairs.csv"
    proc = _start("reidentify", str(large_release), "--method", "complete", "--out", str(out), cwd=tmp_path)
    _wait_for(proc, _reading(proc, large_release), "it read the release")
    code, _, stderr = _interrupted(proc, signal.SIGTERM)
    assert code == 143 and stderr.splitlines()[-1] == "graphlink: terminated", (code, stderr[-2000:])
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_leaves_early_ends_the_command_quietly(large_release: Path, tmp_path: Path) -> None:
    """``graphlink reidentify ... --format csv | head -1``: no traceback and no error line, and exit 141 (128 +
    SIGPIPE, what a shell reports for a writer whose reader left; typer made it a silent 1)."""
    proc = subprocess.Popen([str(SCRIPT), "reidentify", str(large_release), "--method", "complete", "--format",
                             "csv"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "identified,deidentified\n"
    proc.stdout.close()                                                   # what head does after its line
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 141, err
    assert "Traceback" not in err and "graphlink:" not in err and "Exception ignored" not in err, err


def test_a_commands_own_exit_code_is_kept(tmp_path: Path) -> None:
    """typer returns (not raises) a command's ``typer.Exit`` code outside standalone mode; the entry used to drop it:
    ``graphlink neo4j status`` with no server exited 0 instead of its documented 3.  A folder with no server in
    it (GRAPHLINK_NEO4J_DIR) is the known state."""
    done = subprocess.run([str(SCRIPT), "neo4j", "status"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "GRAPHLINK_NEO4J_DIR": str(tmp_path / "none"), "NEO4J_URI": ""})
    assert done.returncode == 3 and "not running" in done.stdout, (done.returncode, done.stdout, done.stderr)
