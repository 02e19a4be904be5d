"""Benchmark: loading a release into Neo4j, bulk import vs batched UNWIND (goal: 1e6 rows in < 10 s).

Usage (needs the local runtime from ``bash scripts/setup-neo4j.sh``)::

    python benchmarks/bench_neo4j_load.py                 # 53,000 subjects x 20 locations, p=0.5 (~1e6 rows)
    python benchmarks/bench_neo4j_load.py --subjects 5300 # ~1e5 rows
    python benchmarks/bench_neo4j_load.py --quick         # only the two loads
    python benchmarks/bench_neo4j_load.py --bulk-only --repeat 3   # only the bulk load, best of 3

Starts a private local server (a temporary ``GRAPHLINK_NEO4J_DIR`` whose ``runtime/`` is the project's, a free
port, HTTP off; stopped and deleted at the end): the bulk path rebuilds the whole database, which it would refuse
to do on a server holding anything else. After a small UNWIND load that warms the server's JIT up (dropped
again), on the same release and each time into an empty database:

  A. ``load_release(bulk="never")``: batched UNWIND + CREATE/MERGE transactions (then the release is dropped),
  B. ``load_release(bulk="always")``: ``neo4j-admin database import`` of CSV files, swapped in by an in-JVM pause;
  B'. the same again (dropped first): the importer runs in the server's JVM, whose first import loads its classes.

Each load runs in a child process of its own, so that each gets its own peak-memory figures: the client's peak
RSS (Python), the importer JVM's peak RSS (B only) and the server's peak RSS during the load (``VmHWM``, reset
before it through ``/proc/<pid>/clear_refs``), with wall time and CPU seconds of client, importer and server.
Then, unless ``--quick``, on the bulk-loaded release:
  2. loading the same release again (content hash matches: skipped),
  3. the MERGE pass over the complete release (what an interrupted UNWIND load's re-run costs),
  4. the naive method, one MERGE transaction per disclosure row, timed on a sample and extrapolated,
  5. Cypher over the loaded release: per-location sizes.

``--results``: the write-back of results as a user runs it, ``graphlink audit low.parquet --k 2 --store neo4j`` on
a low-entropy release (``--subjects`` default 150,000 there, ``--locations`` 36, visit rates 0.5·r^-0.6, half of
the identified records withheld), each a process of its own against the private server:

  R0. ``graphlink audit`` without ``--store``: the audit alone (the floor);
  R1. with ``--store neo4j`` into the empty database: the release and its results in one bulk import;
  R2. the same again: the release is stored, so its link graph is replaced in UNWIND batches on
      ``GRAPHLINK_NEO4J_WRITERS`` sessions (default 3) and the audit is added (``--writers 1`` in the same
      run shows the one-session figure; ``--no-rerun`` skips R2).

``--populated`` (with ``--results``): the write-back into a database that already holds releases, the path every
user takes after their first one. R1 stores the release as ``low``; two more copies go in as ``other-a`` and
``other-b`` (three releases stored, each with its link graph and audit). Then, for the code of ``--before``
(default ``main``: its ``graphlink`` and ``cypher`` folders, unpacked with ``git archive`` and run from there)
and for this checkout, in the same run and against the same server:

  P1. ``graphlink audit ... --store neo4j`` under a new name (the release is loaded in UNWIND batches, then the
      link graph and the audit are written; the new release is dropped again afterwards, so that both versions
      meet the same three releases),
  P2. the same under ``low``, stored before (its link graph is replaced, the audit added).

``--writers N`` (not 3) adds a third pass of this checkout on N sessions; ``--after-first`` runs this checkout's
pass before ``main``'s (the load of a shared machine drifts during a run). When ``--before``'s ``pyproject.toml``
does not install the driver's compiled Bolt encoder (``neo4j-rust-ext``), its pass runs without it, as that code
would be installed.

Measured (docs/neo4j.md#where-the-time-goes-per-statement-and-what-changed has the per-statement profile):
``python benchmarks/bench_neo4j_load.py --results --populated --subjects 50000`` on the two-core machine (322,605
disclosure rows, 1,136,721 class LINKs; the 150,000-subject release took over four minutes per write-back at the
machine's load): run 1 (load 7.4 → 5.0) a new name 107.5 s before, 73.5 s after; a name stored before whose link
graph ``main`` wrote (replaced) 180.9 s before, 96.3 s after. Run 2 (``--after-first``, load 8.0 → 5.3): a new
name 98.5 s after, 72.7 s before (the load halved between the passes); a name stored before whose link graph this
code wrote (kept) 6.1 s after, 91.1 s before.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from graphlink.config import set_config
from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import server
from graphlink.store.neo4j import connect


def _release(args: argparse.Namespace):
    return simulate_uniform(args.subjects, args.locations, args.p, withhold=args.withhold, seed=7)


def _server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_peak_mb(pid: int) -> float | None:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def child(args: argparse.Namespace) -> None:
    """One load (``--child never|always``) against the running local server; prints one JSON line."""
    rel = _release(args)
    pid = int((server.read_state(server.Paths.default()) or {})["pid"])
    with contextlib.suppress(OSError):  # reset the server's peak RSS (VmHWM) to its current RSS
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    with connect() as store:
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        srv0 = _server_cpu(pid)
        t = time.perf_counter()
        info = store.load_release(rel, name=args.name, batch_size=args.batch, bulk=args.child)
        wall = time.perf_counter() - t
        me1 = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the importer JVM, if one ran (it was waited for)
        out = {"path": args.child, "method": info.method, "why": info.why, "rows": info.rows,
               "seconds": wall, "client_cpu": me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime,
               "server_cpu": _server_cpu(pid) - srv0, "importer_cpu": kids.ru_utime + kids.ru_stime,
               "client_peak_mb": me1.ru_maxrss / 1024, "importer_peak_mb": kids.ru_maxrss / 1024,
               "server_peak_mb": _server_peak_mb(pid), "reserved": info.reserved}
    print("RESULT " + json.dumps(out), flush=True)


def _run_child(args: argparse.Namespace, path: str) -> dict:
    cmd = [sys.executable, __file__, "--child", path, "--subjects", str(args.subjects), "--locations",
           str(args.locations), "-p", str(args.p), "--withhold", str(args.withhold), "--batch", str(args.batch),
           "--name", args.name]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"the {path} load failed (exit {proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _report(label: str, r: dict) -> None:
    per_million = r["seconds"] * 1e6 / r["rows"]
    importer = (f", importer {r['importer_cpu']:.1f} s" if r["importer_cpu"] else "")
    peak_imp = (f", importer JVM {r['importer_peak_mb']:,.0f} MB" if r["importer_peak_mb"] else "")
    print(f"{label}: {r['seconds']:.1f} s = {r['rows'] / r['seconds']:,.0f} rows/s, {per_million:.1f} s per 1e6 rows "
          f"(goal < 10 s: {'met' if per_million < 10 else 'missed'}); ran: {r['method']} ({r['why']})")
    print(f"   CPU: client {r['client_cpu']:.1f} s{importer}, Neo4j server {r['server_cpu']:.1f} s; "
          f"peak RSS: client {r['client_peak_mb']:,.0f} MB{peak_imp}, server {r['server_peak_mb'] or 0:,.0f} MB")


def _low_entropy(subjects: int, locations: int, path: Path) -> tuple[int, int]:
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_probabilities

    profile = [0.5 * r ** -0.6 for r in range(1, locations + 1)]
    rel = simulate_probabilities(subjects, profile, withhold=0.5, reserved="identified", seed=5)
    rel.frame.to_parquet(path)
    g = build_linkgraph(build_trails(rel, multiplicity="one-to-one"))
    return len(rel.frame), len(g.class_ei)


def _timed_cli(args: list[str], env: dict | None = None, cwd: str | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "graphlink.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)
    dt = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"graphlink {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    stored = [ln for ln in (proc.stderr + proc.stdout).splitlines() if "stored as run" in ln]
    return dt, " ".join(" ".join(stored).split())


def results(args: argparse.Namespace, tmp: Path) -> None:
    """The ``--results`` runs (module docstring)."""
    path = tmp / "low.parquet"
    rows, class_edges = _low_entropy(args.subjects, args.locations, path)
    print(f"low-entropy release: {args.subjects:,} subjects x {args.locations} locations, {rows:,} disclosure rows, "
          f"{class_edges:,} class LINKs")
    base = ["audit", str(path), "--k", "2", "--multiplicity", "one-to-one", "--format", "json"]
    load = lambda: " ".join(f"{x:.2f}" for x in os.getloadavg())  # noqa: E731
    dt, _ = _timed_cli(base)
    print(f"R0. audit alone:                          {dt:7.1f} s  (load {load()})")
    dt, how = _timed_cli([*base, "--store", "neo4j", "--name", "low"])
    print(f"R1. --store neo4j, empty database:         {dt:7.1f} s  (load {load()})\n    {how}")
    if args.populated:
        populated(args, tmp)
        return
    if args.no_rerun:
        return
    for writers in sorted({args.writers, 3}, reverse=True):
        dt, how = _timed_cli([*base, "--store", "neo4j", "--name", "low"], {"GRAPHLINK_NEO4J_WRITERS": str(writers)})
        print(f"R2. --store neo4j again, {writers} session(s):   {dt:7.1f} s  (load {load()})\n    {how}")


def _before_tree(ref: str, tmp: Path) -> Path:
    """The ``graphlink`` package and ``cypher`` library of git ``ref``, unpacked under ``tmp`` (the *before*)."""
    root = Path(__file__).resolve().parent.parent
    out = tmp / "before"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(root), "archive", ref, "graphlink", "cypher", "docker/local/pom.xml"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    # compiled now, not in the first timed process (which took 40-90 s longer for it at load 8-16)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(out / "graphlink")], check=True)
    if not _ref_has_rust_ext(ref):
        # the driver as the ref installs it: without its compiled Bolt encoder, which this virtualenv may hold
        # (a module of None in sys.modules makes its import fail, and the driver falls back to pure Python)
        (out / "sitecustomize.py").write_text("import sys\nsys.modules['neo4j._rust'] = None\n")
    return out


def _ref_has_rust_ext(ref: str) -> bool:
    """Whether the ``pyproject.toml`` of git ``ref`` installs the driver's compiled Bolt encoder."""
    root = Path(__file__).resolve().parent.parent
    text = subprocess.run(["git", "-C", str(root), "show", f"{ref}:pyproject.toml"], capture_output=True,
                          text=True).stdout
    return "neo4j-rust-ext" in text


def populated(args: argparse.Namespace, tmp: Path) -> None:
    """The ``--populated`` runs (module docstring): before and after, in the same run."""
    path = tmp / "low.parquet"
    base = ["audit", str(path), "--k", "2", "--multiplicity", "one-to-one", "--format", "json"]
    load = lambda: " ".join(f"{x:.2f}" for x in os.getloadavg())  # noqa: E731
    for other in ("other-a", "other-b"):
        dt, _ = _timed_cli([*base, "--store", "neo4j", "--name", other])
        print(f"    stored {other}: {dt:.1f} s (load {load()})")
    before = _before_tree(args.before, tmp)
    figures: dict[str, list[float]] = {}
    passes = [(f"before ({args.before})", {"PYTHONPATH": str(before)}), ("after (this checkout)", {})]
    if args.after_first:    # the machine's load drifts: the reverse order shows how much of a gap is drift
        passes.reverse()
    if args.writers != 3:   # the sessions' share: the same code on --writers sessions instead of 3
        passes.append((f"after, {args.writers} session(s)", {"GRAPHLINK_NEO4J_WRITERS": str(args.writers)}))
    for label, env in passes:
        cwd = str(before) if "PYTHONPATH" in env else None
        dt_new, how = _timed_cli([*base, "--store", "neo4j", "--name", "fresh"], env, cwd=cwd)
        print(f"P1. {label}, a new name:         {dt_new:7.1f} s  (load {load()})\n    {how}")
        dt_old, how = _timed_cli([*base, "--store", "neo4j", "--name", "low"], env, cwd=cwd)
        print(f"P2. {label}, a name stored before: {dt_old:7.1f} s  (load {load()})\n    {how}")
        figures[label] = [dt_new, dt_old]
        with connect() as store:
            store.drop_release("fresh")
    (b_new, b_old), (a_new, a_old) = (figures[label] for label, _ in sorted(passes[:2], key=lambda p: "after" in p[0]))
    print(f"after / before: new name {a_new / b_new:.2f}, stored before {a_old / b_old:.2f} of the time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", type=int, default=53_000)
    ap.add_argument("--locations", type=int, default=20)
    ap.add_argument("-p", type=float, default=0.5)
    ap.add_argument("--withhold", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--naive-sample", type=int, default=2_000)
    ap.add_argument("--name", default="bench-load")
    ap.add_argument("--quick", action="store_true", help="only the two loads")
    ap.add_argument("--bulk-only", action="store_true", help="only the bulk load (B), --repeat times")
    ap.add_argument("--repeat", type=int, default=1, help="with --bulk-only: bulk loads in a row (best reported)")
    ap.add_argument("--results", action="store_true", help="the write-back of an audit's results (docstring)")
    ap.add_argument("--no-rerun", action="store_true", help="with --results: skip R2")
    ap.add_argument("--populated", action="store_true",
                    help="with --results: the write-back into a database holding three releases, before and after")
    ap.add_argument("--after-first", action="store_true", help="with --populated: this checkout's pass first")
    ap.add_argument("--before", default="main", help="with --populated: the git ref of the 'before' code")
    ap.add_argument("--writers", type=int, default=3, help="with --results: R2 also with this many sessions")
    ap.add_argument("--child", choices=["never", "always"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.results:
        if "--subjects" not in sys.argv:
            args.subjects = 150_000
        if "--locations" not in sys.argv:
            args.locations = 36
    if args.child:
        child(args)
        return

    real = server.Paths.default()
    if not server.runtime_version(real):
        raise SystemExit(f"no Neo4j runtime in {real.runtime}: run `bash scripts/setup-neo4j.sh`")
    tmp = Path(tempfile.mkdtemp(prefix="graphlink-bench-"))
    paths = server.Paths(tmp / "neo4j")
    paths.base.mkdir()
    (paths.base / "runtime").symlink_to(real.runtime, target_is_directory=True)
    for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_PASSWORD"):
        os.environ.pop(var, None)
    os.environ["GRAPHLINK_NEO4J_DIR"] = str(paths.base)  # what connect() and the children resolve
    set_config(neo4j_dir=str(paths.base))  # this process read its settings already (Paths.default above)
    try:
        st = server.start(port=server.free_port(), http_port=None, paths=paths, echo=lambda line: None)
        if args.results:
            print(f"private Neo4j {st.version} at {st.uri}; load average before: "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
            results(args, tmp)
            return
        rel = _release(args)
        rows = len(rel.frame)
        print(f"release: {rows:,} disclosure rows, {args.locations} locations, "
              f"{rel.frame['element'].nunique():,} elements; private Neo4j {st.version} at {st.uri}")
        with connect() as store:  # warm the server's JIT up on a small UNWIND load, as a server in use would be
            t = time.perf_counter()
            store.load_release(simulate_uniform(2_000, args.locations, args.p, seed=1), name="warm-up", bulk="never")
            store.drop_release("warm-up")
            print(f"warm-up: a {2_000 * args.locations * args.p * 2:,.0f}-row UNWIND load and drop in "
                  f"{time.perf_counter() - t:.1f} s")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")

        if args.bulk_only:
            runs = []
            for _ in range(args.repeat):
                runs.append(_run_child(args, "always"))
                with connect() as store:
                    store.drop_release(args.name)
            print("bulk loads: " + ", ".join(f"{r['seconds']:.1f}" for r in runs) + " s")
            _report("B. bulk import (best)", min(runs, key=lambda r: r["seconds"]))
            return
        unwind = _run_child(args, "never")
        _report("A. batched UNWIND", unwind)
        with connect() as store:
            store.drop_release(args.name)  # empty again (graphlink's schema stays: that is allowed)
        bulk = _run_child(args, "always")
        _report("B. bulk import   ", bulk)
        print(f"   bulk import / UNWIND: {bulk['seconds'] / unwind['seconds']:.2f} of the time "
              f"({unwind['seconds'] / bulk['seconds']:.1f}x faster)")
        with connect() as store:  # the importer runs in the server's JVM: its classes are loaded from now on
            store.drop_release(args.name)
        again = _run_child(args, "always")
        _report("B'. bulk import, the server's second", again)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.quick:
            return

        with connect() as store:
            t = time.perf_counter()
            again = store.load_release(rel, name=args.name)
            print(f"2. same release again: {time.perf_counter() - t:.2f} s (skipped={again.skipped})")

            store.run_cypher("MATCH (r:Release {name: $n}) SET r.status = 'loading', r.load_method = 'unwind'",
                             {"n": args.name}, write=True)
            t = time.perf_counter()
            redo = store.load_release(rel, name=args.name, batch_size=args.batch)
            print(f"3. MERGE pass over the complete release (interrupted-load re-run): "
                  f"{time.perf_counter() - t:.1f} s, rows still {redo.rows:,}")

            sample = rel.frame.iloc[: args.naive_sample]
            t = time.perf_counter()
            for loc, kind, el in sample.itertuples(index=False):
                label = "Identified" if kind == "identified" else "Deidentified"
                store.conn.query(f"MERGE (e:{label} {{release: $r, key: $k}}) "
                             "MERGE (l:Location {release: $r, name: $l}) MERGE (e)-[:DISCLOSED_AT]->(l)",
                             {"r": args.name + "-naive", "k": el, "l": loc})
            naive_s = time.perf_counter() - t
            per_row = naive_s / len(sample)
            print(f"4. naive (one MERGE transaction per row): {len(sample):,} rows in {naive_s:.1f} s "
                  f"-> {per_row * rows:,.0f} s extrapolated for {rows:,} rows "
                  f"({per_row * rows / bulk['seconds']:.0f}x the bulk import)")
            store.drop_release(args.name + "-naive")

            t = time.perf_counter()
            sizes = store.run_cypher("MATCH (l:Location {release: $r}) RETURN l.name AS location, "
                                     "COUNT { (l)<-[:DISCLOSED_AT]-(:Identified) } AS identified, "
                                     "COUNT { (l)<-[:DISCLOSED_AT]-(:Deidentified) } AS deidentified",
                                     {"r": args.name})
            print(f"5. per-location sizes in Cypher: {time.perf_counter() - t:.2f} s ({len(sizes)} locations)")
    finally:
        server.stop(paths, timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
