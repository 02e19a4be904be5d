"""Atomic file output (graphlink/fileio.py) and the CLI commands that write files: an interrupted write (an
exception, or the process killed mid-write) never leaves a half-written file under the real name, and the
previous file, if any, stays byte-for-byte as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from graphlink import fileio
from tests import cli_runner
from tests.fixtures import fig34
from tests.processes import stop

OLD = b"location,kind,element\nH1,identified,old\n"


class Boom(RuntimeError):
    pass


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ---------------------------------------------------------------------------------------------- the helper
def test_complete_write_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_bytes(OLD)
    target.chmod(0o640)
    with fileio.atomic_open(target, "w") as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o640
    assert _leftovers(tmp_path) == []


def test_new_file_gets_the_umask_mode_and_missing_folders(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        target = fileio.write_text(tmp_path / "a" / "b" / "new.json", "{}")
    finally:
        os.umask(umask)
    assert target.read_text() == "{}" and target.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("existed", [True, False])
def test_exception_mid_write_leaves_the_previous_file(tmp_path: Path, existed: bool) -> None:
    target = tmp_path / "out.csv"
    if existed:
        target.write_bytes(OLD)
    with pytest.raises(Boom), fileio.atomic_open(target, "wb") as fh:
        fh.write(b"location,kind,element\n" + b"H1,identified,x\n" * 1000)
        raise Boom
    assert (target.read_bytes() == OLD) if existed else not target.exists()
    assert _leftovers(tmp_path) == []


def test_writer_that_writes_nothing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        fileio.write_with(tmp_path / "x.csv", lambda p: None)
    assert not (tmp_path / "x.csv").exists()


def test_secret_is_never_readable_by_others(tmp_path: Path) -> None:
    target = tmp_path / "password"
    with fileio.atomic_open(target, "w", mode=0o600) as fh:
        (tmp,) = [tmp_path / name for name in _leftovers(tmp_path)]
        assert tmp.name.startswith(".password.")
        assert tmp.stat().st_mode & 0o077 == 0    # created private, before any byte is written
        fh.write("s3cret\n")
    assert target.stat().st_mode & 0o777 == 0o600


def test_format_follows_the_final_name(tmp_path: Path) -> None:
    """The temporary name ends in .tmp: Parquet and PNG must still come out as Parquet and PNG."""
    from matplotlib.figure import Figure

    frame = fig34()
    fileio.write_frame(frame, tmp_path / "r.parquet")
    assert (tmp_path / "r.parquet").read_bytes()[:4] == b"PAR1"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "r.parquet"), frame)
    fileio.write_frame(frame, tmp_path / "r.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "r.csv"), frame)
    fig = Figure()
    fig.add_subplot().plot([0, 1], [1, 0])
    fileio.save_figure(fig, tmp_path / "f.png", dpi=50)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _leftovers(tmp_path) == []


def test_killed_mid_write_leaves_the_previous_file(tmp_path: Path) -> None:
    """A real process SIGKILLed while it writes: the target is the old file; the partial data sits only in a
    hidden ``.out.csv.<random>.tmp`` that no reader of ``*.csv`` picks up."""
    target = tmp_path / "out.csv"
    target.write_bytes(OLD)
    script = textwrap.dedent(f"""
        import sys, time
        from graphlink.fileio import atomic_open
        with atomic_open({str(target)!r}, "w") as fh:
            fh.write("location,kind,element\\n")
            for i in range(100000):
                fh.write(f"H1,identified,e{{i}}\\n")
                fh.flush()
                if i == 50:
                    print("half", flush=True)
                time.sleep(0.001)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "half"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        stop(proc)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == OLD
    partial = _leftovers(tmp_path)
    assert len(partial) == 1 and partial[0].startswith(".out.csv.")
    assert [p.name for p in tmp_path.glob("*.csv")] == ["out.csv"]


# ---------------------------------------------------------------------------------------------- CLI writers
def _fail_half_way(monkeypatch: pytest.MonkeyPatch, fail_on: str | None = None) -> None:
    """``DataFrame.to_csv`` to a path writes half of the rows, then raises (a crash mid-write)."""
    real = pd.DataFrame.to_csv

    def half(self, path_or_buf=None, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if isinstance(path_or_buf, (str, Path)) and (fail_on is None or fail_on in Path(path_or_buf).name):
            real(self.head(max(1, len(self) // 2)), path_or_buf, *args, **kwargs)
            raise Boom(f"crash while writing {path_or_buf}")
        return real(self, path_or_buf, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", half)


def _invoke(*args: str):  # noqa: ANN202
    from typer.testing import CliRunner

    from graphlink.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("fail_on", ["out.csv", "truth.csv"])
def test_simulate_interrupted_keeps_release_and_truth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      fail_on: str) -> None:
    out, truth = tmp_path / "out.csv", tmp_path / "truth.csv"
    res = _invoke("simulate", "--out", str(out), "--truth", str(truth), "--subjects", "50", "--locations", "4",
                  "--p", "0.5", "--seed", "1")
    assert res.exit_code == 0, res.output
    before = out.read_bytes(), truth.read_bytes()
    _fail_half_way(monkeypatch, fail_on)
    res = _invoke("simulate", "--out", str(out), "--truth", str(truth), "--subjects", "80", "--locations", "5",
                  "--p", "0.5", "--seed", "2")
    assert isinstance(res.exception, Boom)
    assert (out.read_bytes(), truth.read_bytes()) == before   # both old: never a new release with old truth
    assert _leftovers(tmp_path) == []


def test_unlink_interrupted_keeps_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = tmp_path / "rel.csv"
    fig34().to_csv(rel, index=False)
    out = tmp_path / "protected.csv"
    out.write_bytes(OLD)
    _fail_half_way(monkeypatch)
    res = _invoke("unlink", str(rel), "--k", "2", "--out", str(out))
    assert isinstance(res.exception, Boom)
    assert out.read_bytes() == OLD and _leftovers(tmp_path) == []
    monkeypatch.undo()
    res = _invoke("unlink", str(rel), "--k", "2", "--out", str(out), "--format", "json")
    assert res.exit_code == 0, res.output
    assert set(pd.read_csv(out).columns) == {"location", "kind", "element"}


def test_experiment_interrupted_writes_nothing_under_its_names(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_half_way(monkeypatch)
    res = _invoke("experiment", "popularity", "--small", "--runs", "1", "--workers", "1", "--out", str(tmp_path))
    assert isinstance(res.exception, Boom)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in written if p.suffix == ".csv"], written
    assert not [p for p in written if p.name.endswith(".tmp")], written


@pytest.mark.slow
def test_simulate_killed_mid_write_keeps_the_previous_release(tmp_path: Path) -> None:
    """The CLI itself SIGKILLed while writing a large release: the previous file is intact."""
    out = tmp_path / "big.csv"
    out.write_bytes(OLD)
    proc = subprocess.Popen([sys.executable, "-m", "graphlink.cli", "simulate", "--out", str(out), "--subjects",
                             "400000", "--locations", "20", "--p", "0.5", "--seed", "3"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not _leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _leftovers(tmp_path), "the CLI finished or failed before it started writing"
        time.sleep(0.2)  # let it write part of the file
        assert proc.poll() is None, "the write finished within 0.2 s; enlarge the release"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        stop(proc)
    assert out.read_bytes() == OLD
    assert [p.name for p in tmp_path.glob("*.csv")] == ["big.csv"]


# ------------------------------------------------------------------ --out names only regular files or new paths
from tests.fuzz_harness import check_contract, run_cli  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "graphlink" / "data"
TABLE1 = str(DATA / "fingerprint" / "table1.csv")
FP_HIER = str(DATA / "fingerprint" / "hierarchies")


def _writers(folder: Path) -> dict[str, tuple[list[str], str]]:
    """Every command that writes a file with ``--out``: (arguments before --out, its main input)."""
    rel = folder / "release.csv"
    if not rel.exists():
        fig34().to_csv(rel, index=False)
        assert run_cli(["fingerprint", "plan", TABLE1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "2",
                        "--hierarchies", FP_HIER, "--out", str(folder / "plan.json")]).code == 0
    plan = str(folder / "plan.json")
    return {
        "unlink": (["unlink", str(rel), "--k", "1"], str(rel)),
        "trails": (["trails", str(rel), "--format", "csv"], str(rel)),
        "reidentify": (["reidentify", str(rel), "--method", "true-loves"], str(rel)),
        "simulate": (["simulate", "--subjects", "5", "--locations", "2", "--p", "0.5"], str(rel)),
        "qi hierarchy": (["qi", "hierarchy", TABLE1, "--column", "sex", "--kind", "flat"], TABLE1),
        "qi anonymize": (["qi", "anonymize", TABLE1, "--qi", "sex", "--k", "2", "--algorithm", "datafly"], TABLE1),
        "fingerprint plan": (["fingerprint", "plan", TABLE1, "--qi", "sex,birthdate", "--k", "2",
                              "--recipients", "2", "--hierarchies", FP_HIER], TABLE1),
        "fingerprint release": (["fingerprint", "release", plan, TABLE1, "--recipient", "R1"], plan),
    }


WRITERS = ["unlink", "trails", "reidentify", "simulate", "qi hierarchy", "qi anonymize", "fingerprint plan",
           "fingerprint release"]


def _refused(argv: list[str], why: str) -> None:
    """Exit 2 with one line holding one of the '|'-separated reasons in ``why``."""
    outcome = run_cli(argv)
    check_contract(outcome, argv)
    assert outcome.code == 2 and any(w in outcome.stderr for w in why.split("|")), (argv, outcome.stderr)


@pytest.mark.parametrize("command", WRITERS)
def test_out_refuses_what_is_not_a_file(tmp_path: Path, command: str) -> None:
    """Empty, '.', '/', a folder, a FIFO, /dev/null and a symbolic link to /dev/null: one line, exit 2, and
    nothing is replaced (the device stays a device, the FIFO a FIFO, the folder keeps its files)."""
    args, _ = _writers(tmp_path)[command]
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    link = tmp_path / "null.csv"
    link.symlink_to("/dev/null")
    before = sorted(p.name for p in tmp_path.iterdir())
    for target, why in [("", "names a folder|needs a file name"), (".", "names a folder"), ("/", "names a folder"),
                        (str(tmp_path), "is a folder"), (str(fifo), "is a FIFO"),
                        ("/dev/null", "is a character device"), (str(link), "is a character device")]:
        _refused([*args, "--out", target], why)
    assert Path("/dev/null").is_char_device() and fifo.is_fifo() and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("command", WRITERS)
def test_out_refuses_the_input(tmp_path: Path, command: str) -> None:
    """--out naming the command's input (or the same file through a link) is refused; the input is kept."""
    args, source = _writers(tmp_path)[command]
    if command == "simulate":                        # simulate's input is --probabilities
        source = str(tmp_path / "popularity.csv")
        Path(source).write_text("location,p\nA,0.5\nB,0.5\n")
        args = ["simulate", "--subjects", "5", "--probabilities", source]
    copy = tmp_path / "input-copy"
    copy.write_bytes(Path(source).read_bytes())
    moved = tmp_path / ("in" + Path(source).suffix)
    moved.write_bytes(Path(source).read_bytes())
    args = [str(moved) if a == source else a for a in args]
    alias = tmp_path / "alias.csv"
    alias.symlink_to(moved)
    for target in (moved, alias):
        _refused([*args, "--out", str(target)], "is the same file as")
        assert moved.read_bytes() == copy.read_bytes()


def test_simulate_truth_and_out_must_differ(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    _refused(["simulate", "--subjects", "5", "--locations", "2", "--p", "0.5", "--out", str(out), "--truth",
              str(out)], "is the same file as")
    assert not out.exists()


def test_out_inside_an_input_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "release"
    for loc in ("H1", "H2"):
        (folder / loc).mkdir(parents=True)
        (folder / loc / "identified.csv").write_text("name\nAli\n")
        (folder / loc / "deidentified.csv").write_text("dna\nactg\n")
    _refused(["unlink", str(folder), "--k", "1", "--out", str(folder / "H1" / "x.csv")], "inside the input folder")
    assert not (folder / "H1" / "x.csv").exists()


def test_library_writers_refuse_special_files_too(tmp_path: Path) -> None:
    """atomic_path itself refuses a non-regular target, so library callers are covered as well."""
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/null"), tmp_path):
        with pytest.raises(fileio.ReleaseError, match="only a regular file"):
            fileio.write_text(target, "x")
    assert fifo.is_fifo() and Path("/dev/null").is_char_device()


def test_write_errors_name_the_users_path_not_the_temporary_file(tmp_path: Path) -> None:
    """A folder that cannot be written: the error names --out's path (one line), never '.out.csv.<x>.tmp'."""
    if os.geteuid() == 0:
        locked = Path("/proc/self")                 # root may write anywhere a folder allows; /proc refuses
        target = locked / "graphlink-out.csv"
    else:
        locked = tmp_path / "ro"
        locked.mkdir()
        locked.chmod(0o500)
        target = locked / "out.csv"
    rel = tmp_path / "release.csv"
    fig34().to_csv(rel, index=False)
    argv = ["unlink", str(rel), "--k", "1", "--out", str(target)]
    outcome = run_cli(argv)
    check_contract(outcome, argv)
    assert outcome.code == 2 and str(target) in outcome.stderr and ".tmp" not in outcome.stderr, outcome.stderr


# ------------------------------------------------------------- inputs: FIFOs and devices, refused without opening
GENPHEN = DATA / "genphen"
FIFO, DEVICE = "a FIFO (named pipe)", "a character device"


def test_check_input_refuses_special_files_by_stat_alone(tmp_path: Path) -> None:
    """A FIFO (also behind a symbolic link), a device, a socket and a folder where a file is wanted: one
    ReleaseError naming the user's path and the kind of file.  Nothing is opened: no writer ever comes to the
    FIFO, so an ``open`` would block this test (the timeout of the CLI cases below is the real-process proof)."""
    import socket

    fifo, link, sock, regular = tmp_path / "f.csv", tmp_path / "l.csv", tmp_path / "s", tmp_path / "r.csv"
    os.mkfifo(fifo)
    link.symlink_to(fifo)
    regular.write_text("a\n1\n")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    try:
        for path, kind in [(fifo, FIFO), (link, FIFO), (Path("/dev/zero"), DEVICE),
                           (sock, "a socket"), (tmp_path, "a folder")]:
            with pytest.raises(fileio.ReleaseError) as err:
                fileio.check_input(path)
            assert str(err.value).startswith(f"{path}: is {kind}, not a regular file"), err.value
    finally:
        server.close()
    assert fileio.check_input(regular) == regular
    assert fileio.check_input(tmp_path, folder=True) == tmp_path
    assert fileio.check_input(tmp_path / "missing.csv") == tmp_path / "missing.csv"   # the reader says "no such file"


def _input_cases(folder: Path) -> dict[str, tuple[list[str], str, str]]:
    """Every entry point that used to block or fill memory: (arguments, the refused path, its kind)."""
    fifo = folder / "fifo.csv"
    os.mkfifo(fifo)
    yaml_fifo = folder / "links.yaml"
    os.mkfifo(yaml_fifo)
    rel, als = str(GENPHEN / "release.csv"), (GENPHEN / "als.yaml").read_text()
    (folder / "deid.csv").write_text("id,age\nx,1\n")
    for name, target in (("als_fifo.yaml", fifo), ("als_zero.yaml", "/dev/zero")):
        (folder / name).write_text(als + f"attributes: {{identified: {target}, deidentified: deid.csv, key: id}}\n")
    html = str(folder / "report.html")
    return {
        "trails": (["trails", str(fifo)], str(fifo), FIFO),
        "reidentify": (["reidentify", str(fifo), "--method", "true-loves"], str(fifo), FIFO),
        "report": (["report", str(fifo), "--out", html], str(fifo), FIFO),
        "load": (["load", str(fifo), "--name", "never"], str(fifo), FIFO),
        "truth": (["reidentify", rel, "--method", "true-loves", "--truth", str(fifo)], str(fifo), FIFO),
        "qi-links": (["reidentify", rel, "--method", "true-loves", "--qi-links", str(yaml_fifo)], str(yaml_fifo),
                     FIFO),
        "report qi-links": (["report", rel, "--qi-links", str(yaml_fifo), "--out", html], str(yaml_fifo), FIFO),
        "als attributes fifo": (["reidentify", rel, "--method", "true-loves", "--qi-links",
                                 str(folder / "als_fifo.yaml")], str(fifo), FIFO),
        "als attributes /dev/zero": (["reidentify", rel, "--method", "true-loves", "--qi-links",
                                      str(folder / "als_zero.yaml")], "/dev/zero", DEVICE),
        "release /dev/zero": (["trails", "/dev/zero"], "/dev/zero", DEVICE),
        "reidentify /dev/zero": (["reidentify", "/dev/zero", "--method", "complete"], "/dev/zero",
                                 DEVICE),
        "simulate probabilities": (["simulate", "--subjects", "5", "--probabilities", str(fifo), "--out",
                                    str(folder / "sim.csv")], str(fifo), FIFO),
        "qi table": (["qi", "hierarchy", str(fifo), "--column", "sex", "--kind", "flat", "--out",
                      str(folder / "h.csv")], str(fifo), FIFO),
        "cypher file": (["cypher", str(folder / "links.yaml")], str(yaml_fifo), FIFO),
    }


def _limit_memory() -> None:
    """The child may not grow past 4 GiB of address space: a reader of /dev/zero fails instead of filling the
    machine (it took 7.7 GB in 16 s)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_fifos_and_devices_as_input_are_refused_promptly(tmp_path: Path) -> None:
    """Was: a FIFO as release (trails, reidentify, report, load), as --qi-links or as an ALS 'attributes:' file
    blocked forever in open(); /dev/zero as a release filled memory.  Now each is one line naming the file and
    what it is, exit 2, before anything is opened.  All run at once, as real processes, each with a timeout;
    NEO4J_URI points at a closed port, so that load and cypher never reach a server."""
    env = {**os.environ, "NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_AUTH": "none"}
    cases = _input_cases(tmp_path)
    procs = {name: subprocess.Popen([sys.executable, "-m", "graphlink.cli", *argv], cwd=tmp_path, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    preexec_fn=_limit_memory)
             for name, (argv, _, _) in cases.items()}
    deadline, failures = time.monotonic() + 240, []
    for name, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            failures.append(f"{name}: still running (blocked on the input?)")
            continue
        _, path, kind = cases[name]
        want = f"graphlink: error: {path}: is {kind}, not a regular file"
        if proc.returncode != 2 or err.count("\n") != 1 or not err.startswith(want) or out:
            failures.append(f"{name}: exit {proc.returncode}, stderr {err[-300:]!r}")
    assert not failures, "\n".join(failures)
    assert (tmp_path / "fifo.csv").is_fifo() and not (tmp_path / "report.html").exists()


# ------------------------------------------------------------------------ outputs never replace an input
def test_cypher_csv_never_replaces_the_query_file(tmp_path: Path) -> None:
    """Was: ``cypher q.cypher --csv q.cypher`` ran the query and wrote its result over the query (exit 0).  Now
    refused before the query runs (so before connecting: NEO4J_URI names a closed port), also through a
    symbolic or a hard link, and for a library query named by its bare name."""
    from graphlink.store.cypherlib import cypher_dir

    query = tmp_path / "q.cypher"
    query.write_text("// one row\nRETURN 1 AS x;\n")
    (tmp_path / "sym.csv").symlink_to(query)
    os.link(query, tmp_path / "hard.csv")
    env = {"NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_AUTH": "none"}
    for target in ("q.cypher", "sym.csv", "hard.csv"):
        out = cli_runner.run_cli("cypher", "q.cypher", "--csv", target, env=env, cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith(f"graphlink: error: {target}: --csv is the same file as q.cypher"), out.stderr
    assert query.read_text() == "// one row\nRETURN 1 AS x;\n"
    library = cypher_dir() / "trails.cypher"
    before = library.read_bytes()
    out = cli_runner.run_cli("cypher", "trails", "--csv", str(library), env=env)
    assert out.returncode == 2 and "is the same file as" in out.stderr and library.read_bytes() == before


def test_outputs_never_replace_an_input_only_read_on_the_way(tmp_path: Path) -> None:
    """An input a command finds while it runs (an ALS's attribute file, named in the --qi-links file, not on the
    command line) is remembered when read (fileio.reading_inputs), and no output replaces it: reidentify --out
    and report --out naming it, directly or through a hard link, are refused and it stays as it was.  Was:
    overwritten with the pairs / the HTML report, exit 0."""
    frame = pd.read_csv(GENPHEN / "release.csv", dtype=str, keep_default_na=False)
    for kind, cols in (("identified", ["birthdate", "gender", "visit_date"]),
                       ("deidentified", ["age", "gender", "visit_date"])):
        frame.loc[frame["kind"] == kind, ["element", *cols]].drop_duplicates().rename(
            columns={"element": "id"}).to_csv(tmp_path / f"{kind}_attrs.csv", index=False)
    als = tmp_path / "als.yaml"
    als.write_text((GENPHEN / "als.yaml").read_text() + "attributes: {identified: identified_attrs.csv, "
                   "deidentified: deidentified_attrs.csv, key: id}\n")
    attrs = tmp_path / "deidentified_attrs.csv"
    os.link(attrs, tmp_path / "attrs-link.csv")
    before = attrs.read_bytes()
    rel = str(GENPHEN / "release.csv")
    for target in (attrs, tmp_path / "attrs-link.csv"):
        for argv in (["reidentify", rel, "--method", "true-loves", "--qi-links", str(als), "--out", str(target)],
                     ["report", rel, "--qi-links", str(als), "--out", str(target)]):
            out = run_cli(argv)
            check_contract(out, argv)
            assert out.code == 2 and "is the same file as" in out.stderr, (argv, out.stderr)
            assert attrs.read_bytes() == before and _leftovers(tmp_path) == []
    done = run_cli(["reidentify", rel, "--method", "true-loves", "--qi-links", str(als), "--out",
                    str(tmp_path / "pairs.csv")])
    assert done.code == 0 and (tmp_path / "pairs.csv").is_file(), done.stderr


def test_the_record_of_inputs_is_only_kept_while_a_command_runs(tmp_path: Path) -> None:
    """A library caller may read a file and write it back (no reading_inputs block); inside one, the same
    write is refused."""
    source = tmp_path / "t.csv"
    source.write_text("a\n1\n")
    fileio.check_input(source)
    fileio.write_text(source, "a\n2\n")
    with fileio.reading_inputs():
        fileio.check_input(source)
        with pytest.raises(fileio.ReleaseError, match="same file as"):
            fileio.write_text(source, "a\n3\n")
    assert source.read_text() == "a\n2\n"
