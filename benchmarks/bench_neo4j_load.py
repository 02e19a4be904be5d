"""Benchmark: loading a release into Neo4j with Store.load_release (target: 1e6 disclosure rows in < 90 s).

Usage (needs a Neo4j: NEO4J_URI, or the local server from `graphlink neo4j start`)::

    python benchmarks/bench_neo4j_load.py                 # 53,000 subjects x 20 locations, p=0.5 (~1e6 rows)
    python benchmarks/bench_neo4j_load.py --subjects 5000 # smaller

Prints sizes, wall times and peak Python memory for
  1. the batched load (UNWIND $rows + MERGE in 10k-row transactions),
  2. loading the same release again (content hash matches: skipped),
  3. re-running the MERGE path over the complete release (what an interrupted load's re-run costs),
  4. the naive method, one MERGE transaction per disclosure row, timed on a sample and extrapolated,
  5. Cypher over the loaded release: per-location sizes and the trails of 1,000 elements.
The release is dropped afterwards (unless --keep).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from graphlink.simulate import simulate_uniform
from graphlink.store import server
from graphlink.store.neo4j import connect


def cpu_seconds() -> tuple[float, float | None]:
    """CPU seconds used so far by this process and by the local Neo4j server (None if it is not local).

    Wall times on a shared machine depend on what else runs; CPU seconds measure the work itself.
    """
    me = resource.getrusage(resource.RUSAGE_SELF)
    state = server.read_state(server.Paths.default()) or {}
    srv = None
    try:
        fields = Path(f"/proc/{int(state['pid'])}/stat").read_text().rsplit(")", 1)[1].split()
        srv = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (KeyError, OSError, ValueError):
        pass
    return me.ru_utime + me.ru_stime, srv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", type=int, default=53_000)
    ap.add_argument("--locations", type=int, default=20)
    ap.add_argument("-p", type=float, default=0.5)
    ap.add_argument("--withhold", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--naive-sample", type=int, default=2_000)
    ap.add_argument("--name", default="bench-load")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--quick", action="store_true", help="only steps 1 and 2")
    args = ap.parse_args()

    t = time.perf_counter()
    rel = simulate_uniform(args.subjects, args.locations, args.p, withhold=args.withhold, seed=7)
    rows = len(rel.frame)
    print(f"release: {rows:,} disclosure rows, {args.locations} locations, "
          f"{rel.frame['element'].nunique():,} elements (simulated in {time.perf_counter() - t:.1f} s)")

    with connect() as store:
        print(f"Neo4j {store.server_version()} at {store.uri}")
        store.drop_release(args.name)
        store.apply_schema()

        last = [0.0]

        def progress(fraction: float, message: str) -> None:
            if time.perf_counter() - last[0] > 10 or fraction >= 1:
                last[0] = time.perf_counter()
                print(f"  {message} ({time.perf_counter() - t:.0f} s)")

        c0, s0 = cpu_seconds()
        t = time.perf_counter()
        info = store.load_release(rel, name=args.name, progress=progress, batch_size=args.batch)
        load_s = time.perf_counter() - t
        c1, s1 = cpu_seconds()
        per_million = load_s * 1e6 / rows
        print(f"1. batched load: {load_s:.1f} s = {rows / load_s:,.0f} rows/s, {per_million:.0f} s per 1e6 rows "
              f"(target < 90 s: {'met' if per_million < 90 else 'MISSED'}); "
              f"stored rows={info['rows']:,}, reserved={info['reserved']}; of which finalize "
              f"(per-location sizes, reserved direction, in Cypher) {info['seconds_finalize']:.1f} s")
        srv = f"{s1 - s0:.1f} s" if s0 is not None and s1 is not None else "n/a (not the local server)"
        print(f"   CPU: client {c1 - c0:.1f} s, Neo4j server {srv}; load average now "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

        t = time.perf_counter()
        again = store.load_release(rel, name=args.name)
        print(f"2. same release again: {time.perf_counter() - t:.2f} s (skipped={again['skipped']})")

        if args.quick:
            if not args.keep:
                store.drop_release(args.name)
            return
        store.run_cypher("MATCH (r:Release {name: $n}) SET r.status = 'loading'", {"n": args.name}, write=True)
        t = time.perf_counter()
        redo = store.load_release(rel, name=args.name, batch_size=args.batch)
        print(f"3. MERGE pass over the complete release (interrupted-load re-run): "
              f"{time.perf_counter() - t:.1f} s, rows still {redo['rows']:,}")

        sample = rel.frame.iloc[: args.naive_sample]
        t = time.perf_counter()
        for loc, kind, el in sample.itertuples(index=False):
            label = "Identified" if kind == "identified" else "Deidentified"
            store._query(f"MERGE (e:{label} {{release: $r, key: $k}}) "
                         "MERGE (l:Location {release: $r, name: $l}) MERGE (e)-[:DISCLOSED_AT]->(l)",
                         {"r": args.name + "-naive", "k": el, "l": loc})
        naive_s = time.perf_counter() - t
        per_row = naive_s / len(sample)
        print(f"4. naive (one MERGE transaction per row): {len(sample):,} rows in {naive_s:.1f} s "
              f"-> {per_row * rows:,.0f} s extrapolated for {rows:,} rows ({per_row * rows / load_s:.0f}x slower)")
        store.drop_release(args.name + "-naive")

        t = time.perf_counter()
        sizes = store.run_cypher("MATCH (l:Location {release: $r}) RETURN l.name AS location, "
                                 "COUNT { (l)<-[:DISCLOSED_AT]-(:Identified) } AS identified, "
                                 "COUNT { (l)<-[:DISCLOSED_AT]-(:Deidentified) } AS deidentified",
                                 {"r": args.name})
        print(f"5. per-location sizes in Cypher: {time.perf_counter() - t:.2f} s ({len(sizes)} locations)")
        if not args.keep:
            store.drop_release(args.name)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak Python RSS: {peak:,.0f} MB")


if __name__ == "__main__":
    main()
