"""The Spark engine (graphlink.engines.spark) at scale, against the local engine where it fits.

    python benchmarks/bench_spark.py [--subjects 1e5,1e6,1e7] [--locations 200] [--p 0.03] [--withhold 0]
        [--master local[2]] [--local-max 1e6] [--engines local,spark] [--dir DIR] [--json FILE]

Each size is a uniform release (thesis §5.6: every subject visits every location with probability ``p``; the
de-identified record of a visit is withheld with probability ``withhold``), generated in chunks of subjects
straight to a folder of Parquet parts (dictionary-encoded keys; never held in memory whole) and cached in
``--dir`` (default: a temporary folder).  De-identified keys are a bijective scramble of the subject number, so
key order says nothing about the pairs.

Per size and engine, in a fresh process each: read + validate + FillTrails + twin classes (``trails``), REIDIT-C
written by the executors to Parquet (``complete_written``, Spark only: ``reidentify --engine spark --out DIR``; on
the component split also ``true-loves_written``), REIDIT-C collected (``complete``) and the exact true loves
(``true-loves``), wall seconds per step, and the peak memory of the driver — the Python process (``ru_maxrss``) and,
for Spark, the JVM that holds the driver and the ``local[N]`` executors (``VmHWM`` of the gateway process; its heap
is capped by ``GRAPHLINK_SPARK_MEMORY``) — and Spark's shuffle bytes written and read (from its event log). The
local engine runs only up to ``--local-max`` subjects. Spill and shuffle files go to ``DIR/spark-local``.

``--startup N``: first, the 22-row audit as a user runs it, ``graphlink audit graphlink/data/thesis_fig3_4.csv
--k 2 --engine spark`` in a process of its own, N times alternating with the same command started as before the
small-input tuning (``GRAPHLINK_SPARK_SMALL_BYTES=0``: C2 JIT, G1, 4 × cores shuffle partitions); wall seconds
and the lines it printed on stderr other than graphlink's own (the model note).

``--withhold 0`` (default) gives unreserved releases: every location has as many identified as de-identified
elements, links are trail equality, and every Spark stage is a group-by or an equi-join, linear in the rows.
With withholding the de-identified side is reserved and the class links are a containment join
(:mod:`graphlink.engines.spark.links`) whose candidate volume grows with |R|·|S|·p: see docs/scale.md before running
that above 1e5 subjects.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import measure  # noqa: E402

CHUNK = 250_000
SCRAMBLE = 0x9E3779B97F4A7C15 & ((1 << 40) - 1) | 1      # odd: a bijection on 40-bit numbers
MASK40 = (1 << 40) - 1


def generate(path: Path, subjects: int, locations: int, p: float, withhold: float, seed: int) -> int:
    """Write the release as Parquet parts of ``CHUNK`` subjects each; returns the number of rows.  O(n·|C|) time,
    O(CHUNK·|C|) memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = path / "_COMPLETE"
    if done.exists():
        return int(done.read_text())
    path.mkdir(parents=True, exist_ok=True)
    loc_names = pa.array([f"L{c:03d}" for c in range(locations)])
    kinds = pa.array(["identified", "deidentified"])
    rows = 0
    for part, lo in enumerate(range(0, subjects, CHUNK)):
        hi = min(lo + CHUNK, subjects)
        rng = np.random.default_rng([seed, part])
        subj, loc = np.nonzero(rng.random((hi - lo, locations), dtype=np.float32) < p)
        kept = rng.random(len(subj)) >= withhold
        ids = np.arange(lo, hi, dtype=np.int64)
        id_keys = pa.array([f"p{i:09d}" for i in ids])
        de_keys = pa.array([f"s{(int(i) * SCRAMBLE) & MASK40:010x}" for i in ids])
        n_id, n_de = len(subj), int(kept.sum())
        table = pa.table({
            "location": pa.DictionaryArray.from_arrays(pa.array(np.concatenate([loc, loc[kept]]), pa.int32()),
                                                       loc_names),
            "kind": pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.int8([0, 1]), [n_id, n_de])), kinds),
            "element": pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array(subj, pa.int32()), id_keys),
                                         pa.DictionaryArray.from_arrays(pa.array(subj[kept], pa.int32()),
                                                                        de_keys)]),
        })
        pq.write_table(table, path / f"part-{part:05d}.parquet")
        rows += table.num_rows
    done.write_text(str(rows))
    return rows


def wrong_pairs(identified: Any, deidentified: Any) -> int:
    """How many (identified, de-identified) pairs are not the same subject, from the generator's keys: ``p`` + the
    subject number and ``s`` + its scramble in hex.  O(pairs) vectorised, so 1e7 pairs check in seconds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ident = pa.chunked_array([identified]) if not isinstance(identified, pa.ChunkedArray) else identified
    de = pa.chunked_array([deidentified]) if not isinstance(deidentified, pa.ChunkedArray) else deidentified
    if not len(ident):
        return 0
    subject = pc.cast(pc.utf8_slice_codeunits(ident, 1), pa.int64()).to_numpy().astype(np.uint64)
    expected = (subject * np.uint64(SCRAMBLE)) & np.uint64(MASK40)     # wraps mod 2^64: the low 40 bits hold
    text = pc.cast(de, pa.large_string()).combine_chunks()
    offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset:text.offset + len(text) + 1]
    if np.any(np.diff(offsets) != 11):
        raise SystemExit("a de-identified key is not the generator's s + 10 hex digits")
    digits = np.frombuffer(text.buffers()[2], np.uint8)[offsets[0]:offsets[-1]].reshape(-1, 11)[:, 1:]
    value = np.where(digits >= ord("a"), digits - (ord("a") - 10), digits - ord("0")).astype(np.uint64)
    got = np.zeros(len(value), np.uint64)
    for k in range(10):
        got = (got << np.uint64(4)) | value[:, k]
    return int(np.count_nonzero(got != expected))


def _frame_wrong(pairs: Any) -> int:
    """:func:`wrong_pairs` of a result's pairs frame."""
    import pyarrow as pa

    return wrong_pairs(pa.array(pairs["identified"].astype(str).tolist()),
                       pa.array(pairs["deidentified"].astype(str).tolist()))


def _jvm_peak_mib(spark: Any) -> float:
    """Peak resident memory (VmHWM) of the Spark gateway JVM; NaN where /proc does not tell."""
    try:
        pid = spark.sparkContext._gateway.proc.pid
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (AttributeError, OSError, ValueError):
        pass
    return float("nan")


def guarded(fn: Any) -> Any:
    """``fn`` for :func:`measure`'s child: an exception comes back as the result instead of hanging the parent."""
    def run() -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}

    return run


def run_local(path: Path) -> dict:
    from graphlink.analysis.reidit import reidentify
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails

    t: dict[str, Any] = {}
    t0 = time.perf_counter()
    tr = build_trails(read_release(path))          # the folder of parts, on the Arrow path
    t["trails"] = time.perf_counter() - t0
    for method in ("complete", "true-loves"):
        t0 = time.perf_counter()
        res = reidentify(tr, method)
        t[method] = time.perf_counter() - t0
        t[f"{method}_pairs"] = len(res.pairs)
        t[f"{method}_wrong"] = _frame_wrong(res.pairs)
    t["model"] = tr.reserved
    t["elements"] = len(tr.identified) + len(tr.deidentified)
    return t


def _shuffle_bytes(events: Path) -> dict[str, int]:
    """Shuffle bytes written and read, summed over the tasks of a Spark event log folder."""
    written = read = 0
    for log in (p for p in events.rglob("*") if p.is_file() and not p.name.startswith("appstatus")):
        with open(log, encoding="utf-8") as fh:
            for line in fh:
                if '"SparkListenerTaskEnd"' not in line:
                    continue
                m = json.loads(line).get("Task Metrics") or {}
                written += int((m.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0))
                r = m.get("Shuffle Read Metrics") or {}
                read += int(r.get("Remote Bytes Read", 0)) + int(r.get("Local Bytes Read", 0))
    return {"shuffle_written_mib": round(written / 2**20), "shuffle_read_mib": round(read / 2**20)}


def _written(method: str, writer: Any, st: Any, out: Path) -> dict:
    """Time ``writer`` (the executors write ``method``'s pairs to ``out``), then check every pair against the truth."""
    import pyarrow.parquet as pq

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    n = writer(st, str(out))["reidentified"]
    dt = time.perf_counter() - t0
    written = pq.read_table(out, columns=["identified", "deidentified"])
    wrong = wrong_pairs(written.column("identified"), written.column("deidentified"))
    shutil.rmtree(out, ignore_errors=True)
    return {f"{method}_written": dt, f"{method}_written_pairs": n, f"{method}_written_wrong": wrong}


def startup(repeat: int) -> None:
    """The ``--startup`` runs (module docstring)."""
    import subprocess

    data = Path(__file__).resolve().parent.parent / "graphlink" / "data" / "thesis_fig3_4.csv"
    cmd = [sys.executable, "-m", "graphlink.cli", "audit", str(data), "--k", "2", "--engine", "spark"]
    runs: dict[str, list[float]] = {"tuned": [], "as before": []}
    for _ in range(repeat):
        for label, env in (("as before", {"GRAPHLINK_SPARK_SMALL_BYTES": "0"}), ("tuned", {})):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
            dt = time.perf_counter() - t0
            noise = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("model:")]
            runs[label].append(dt)
            print(f"22-row audit --engine spark, {label:>9}: {dt:6.1f} s, exit {proc.returncode}, "
                  f"{len(noise)} other stderr line(s){': ' + noise[0][:100] if noise else ''} (load {load:.2f})",
                  flush=True)
    print("22-row audit, median: " + ", ".join(f"{k} {sorted(v)[len(v) // 2]:.1f} s" for k, v in runs.items()),
          flush=True)


def run_spark(path: Path, master: str, split: str, events: Path) -> dict:
    from graphlink.engines import spark as gs

    shutil.rmtree(events, ignore_errors=True)
    events.mkdir(parents=True)
    os.environ["PYSPARK_SUBMIT_ARGS"] = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file:{events} "
                                         "--conf spark.eventLog.compress=false --conf spark.eventLog.rolling.enabled="
                                         "false pyspark-shell")
    from graphlink.engines.spark.runtime import get_session, input_bytes

    spark = get_session(master, size=input_bytes(path))    # as the CLI starts it for this input
    t: dict[str, Any] = {}
    t0 = time.perf_counter()
    st = gs.trails(str(path), spark=spark)
    counts = st.count_classes()
    t["trails"] = time.perf_counter() - t0
    from graphlink.engines.spark.components import write_true_loves
    from graphlink.engines.spark.engine import choose_split
    from graphlink.engines.spark.links import write_reidit_c

    out = events.parent / "written-pairs.parquet"
    t.update(_written("complete", write_reidit_c, st, out))
    if choose_split(st, split) == "components":          # true loves from the executors too (``--out DIR``)
        t.update(_written("true-loves", write_true_loves, st, out))
    for method in ("complete", "true-loves"):
        t0 = time.perf_counter()
        res = gs.reidentify(gs.parts(st, split=split), method)
        t[method] = time.perf_counter() - t0
        t[f"{method}_pairs"] = len(res.pairs)
        t[f"{method}_wrong"] = _frame_wrong(res.pairs)
        del res
    t["split"] = choose_split(st, split)
    t["model"] = st.model.reserved
    t["elements"] = st.n_identified + st.n_deidentified
    t["classes"] = sum(counts.values())
    t["jvm_peak_mib"] = round(_jvm_peak_mib(spark))
    spark.stop()
    t.update(_shuffle_bytes(events))
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", default="1e5,1e6")
    ap.add_argument("--locations", type=int, default=200)
    ap.add_argument("--p", type=float, default=0.03)
    ap.add_argument("--withhold", type=float, default=0.0)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--split", default="auto", choices=["auto", "driver", "components"])
    ap.add_argument("--local-max", type=float, default=1e6)
    ap.add_argument("--engines", default="local,spark", help="which engines to run (comma-separated)")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="append one JSON line per measurement")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--startup", type=int, default=0, help="first time the 22-row CLI audit this many times")
    a = ap.parse_args()
    base = a.dir or Path(tempfile.mkdtemp(prefix="graphlink-bench-spark-"))
    os.environ.setdefault("GRAPHLINK_SPARK_LOCAL_DIR", str(base / "spark-local"))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min), "
          f"{os.cpu_count()} cores; master {a.master}; data in {base}", flush=True)
    if a.startup:
        startup(a.startup)
    for n in (int(float(x)) for x in a.subjects.split(",") if x):   # --subjects "": only --startup
        path = base / f"uniform-n{n}-c{a.locations}-p{a.p}-w{a.withhold}-s{a.seed}.parquet"
        t0 = time.perf_counter()
        rows = generate(path, n, a.locations, a.p, a.withhold, a.seed)
        print(f"n={n:.0e}: {rows:,} rows in {path.name} (generated/cached in {time.perf_counter() - t0:.1f} s)",
              flush=True)
        engines = [("spark", functools.partial(run_spark, path, a.master, a.split, base / "spark-events"))]
        if n <= a.local_max:
            engines.insert(0, ("local", functools.partial(run_local, path)))
        engines = [(name, fn) for name, fn in engines if name in a.engines.split(",")]
        for engine, fn in engines:
            load = os.getloadavg()[0]
            dt, rss, info = measure(f"{engine} n={n:.0e}", guarded(fn))
            record = {"engine": engine, "subjects": n, "locations": a.locations, "p": a.p, "withhold": a.withhold,
                      "rows": rows, "master": a.master if engine == "spark" else None, "seconds": round(dt, 2),
                      "python_peak_mib": round(rss), "load_before": round(load, 2),
                      **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in dict(info).items()}}
            if a.json:
                with open(a.json, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")
    print(f"max RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
