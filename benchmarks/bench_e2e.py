"""End to end as a user runs it: graphlink's CLI against the SQL a user would write, on the same file, in one run.

    python benchmarks/bench_e2e.py [--subjects 1000000] [--locations 200] [--p 0.02] [--keep DIR] [--repeat N]

Case: 1e6 subjects × 200 locations, unreserved, ~8.0 M rows of Parquet.  graphlink runs
``graphlink reidentify big.parquet --method complete --reserved none --format csv`` (REIDIT-C, thesis Alg. 2/3);
the user's alternative is one DuckDB query (trail = ``string_agg(location ORDER BY location)`` per element,
``GROUP BY`` trail, keep trails unique on both sides).  Both run as separate processes writing a CSV; the
benchmark prints wall time, CPU time (user + system, steadier than wall time on a shared machine) and peak RSS of
each, checks that the pairs are the same, and prints the ratio of the medians (with ``--repeat``, alternating).
It also times cold starts: ``graphlink --help`` and ``graphlink trails`` on the thesis example.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DUCKDB_QUERY = """
WITH t AS (SELECT kind, element, string_agg(location, ',' ORDER BY location) AS trail
           FROM read_parquet('{path}') GROUP BY kind, element),
     u AS (SELECT trail FROM t GROUP BY trail
           HAVING count(*) FILTER (WHERE kind = 'identified') = 1
              AND count(*) FILTER (WHERE kind = 'deidentified') = 1)
SELECT max(CASE WHEN kind = 'identified' THEN element END) AS identified,
       max(CASE WHEN kind = 'deidentified' THEN element END) AS deidentified
FROM t JOIN u USING (trail) GROUP BY trail
"""


def generate(path: Path, subjects: int, locations: int, p: float, seed: int = 12) -> int:
    """An unreserved uniform release written in chunks of 100,000 subjects (never one big frame)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    locs = np.array([f"L{c:03d}" for c in range(locations)], dtype=object)
    writer = None
    rows = 0
    for lo in range(0, subjects, 100_000):
        m = rng.random((min(100_000, subjects - lo), locations), dtype=np.float32) < p
        r, c = np.nonzero(m)
        for kind, prefix in (("identified", "p"), ("deidentified", "s")):
            el = np.char.add(prefix, np.char.zfill((r + lo + 1).astype(str), 7))
            tbl = pa.table({"location": pa.array(locs[c]), "kind": pa.array([kind] * len(r)),
                            "element": pa.array(el)})
            writer = writer or pq.ParquetWriter(str(path), tbl.schema)
            writer.write_table(tbl)
            rows += len(r)
    if writer is not None:
        writer.close()
    return rows


def run(cmd: list[str], stdout_path: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of a child process; raises if it fails."""
    t0 = time.perf_counter()
    with open(stdout_path, "w") if stdout_path else open(os.devnull, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{cmd[:4]} failed: {proc.stderr.read().decode()[-800:] if proc.stderr else ''}")
    return dt, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def pairs(path: Path) -> set[tuple[str, str]]:
    import pandas as pd

    df = pd.read_csv(path, dtype=str)
    return set(zip(df["identified"], df["deidentified"], strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", type=int, default=1_000_000)
    ap.add_argument("--locations", type=int, default=200)
    ap.add_argument("--p", type=float, default=0.02)
    ap.add_argument("--keep", type=Path, help="keep the generated release in this folder")
    ap.add_argument("--repeat", type=int, default=1, help="run both N times, alternating; report the medians")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="graphlink-e2e-"))
    where = args.keep or tmp
    where.mkdir(parents=True, exist_ok=True)
    big = where / "big.parquet"
    if not big.exists():   # in a child process: a child forked from a big parent would report its peak RSS
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; import bench_e2e as b; "
                "print(b.generate(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])))")
        made = subprocess.run([sys.executable, "-c", code, str(Path(__file__).resolve().parent), str(big),
                               str(args.subjects), str(args.locations), str(args.p)], check=True,
                              capture_output=True, text=True)
        rows = int(made.stdout.strip())
        print(f"generated {big.name}: {rows:,} rows, {args.subjects:,} subjects × {args.locations} locations")
    py = sys.executable
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'case':<70} {'seconds':>8} {'peak RSS':>10}")
    dt, rss, _ = run([py, "-m", "graphlink.cli", "--help"])
    print(f"{'graphlink --help (cold start)':<70} {dt:8.2f} {rss:8.0f} MiB")
    dt, rss, _ = run([py, "-m", "graphlink.cli", "trails", str(ROOT / "graphlink/data/thesis_fig3_4.csv")])
    print(f"{'graphlink trails thesis_fig3_4.csv (small file)':<70} {dt:8.2f} {rss:8.0f} MiB")
    ours, duck = where / "graphlink_pairs.csv", where / "duckdb_pairs.csv"
    graphlink_cmd = [py, "-m", "graphlink.cli", "reidentify", str(big), "--method", "complete", "--reserved", "none",
                     "--format", "csv"]
    code = ("import duckdb, sys; duckdb.sql(\"COPY (\" + sys.argv[1] + \") TO '\" + sys.argv[2] + \"' (HEADER)\")")
    duck_cmd = [py, "-c", code, DUCKDB_QUERY.format(path=big), str(duck)]
    runs_g, runs_d = [], []
    for _ in range(args.repeat):                     # alternate, so both see the same load on a shared machine
        runs_g.append(run(graphlink_cmd, ours))
        runs_d.append(run(duck_cmd))
    t_g, rss_g, cpu_g = (statistics.median(r[i] for r in runs_g) for i in range(3))
    t_d, rss_d, cpu_d = (statistics.median(r[i] for r in runs_d) for i in range(3))
    label = f" (median of {args.repeat})" if args.repeat > 1 else ""
    print(f"{'graphlink reidentify big.parquet --method complete --reserved none':<70} {t_g:8.2f} {rss_g:8.0f} MiB"
          f"  CPU {cpu_g:.2f} s{label}")
    print(f"{'DuckDB: string_agg trails, GROUP BY trail, unique on both sides':<70} {t_d:8.2f} {rss_d:8.0f} MiB"
          f"  CPU {cpu_d:.2f} s{label}")
    if args.repeat > 1:
        def listed(runs: list[tuple[float, float, float]], i: int) -> str:
            return ", ".join(f"{r[i]:.2f}" for r in runs)
        print(f"all runs, wall: graphlink {listed(runs_g, 0)}; DuckDB {listed(runs_d, 0)} s")
        print(f"all runs, CPU:  graphlink {listed(runs_g, 2)}; DuckDB {listed(runs_d, 2)} s")
    a, b = pairs(ours), pairs(duck)
    print(f"pairs: graphlink {len(a):,}, DuckDB {len(b):,}, identical: {a == b}")
    print(f"graphlink is {t_d / t_g:.2f}× the DuckDB query's speed (goal ≥ 2×; {cpu_d / cpu_g:.2f}× in CPU time); "
          f"peak {rss_g / 1024:.2f} GB (goal < 2)")
    print("load average (1, 5, 15 min) after: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
