"""Benchmark: the release report (graphlink.report) on simulated releases, and the exposure per location
against the naive leave-one-location-out (rebuild the reduced release from its rows, every location).

Each case runs in a forked child (benchmarks/_measure.py): wall time and peak RSS are its own.  The load
average is printed with the figures (the machine may be shared).

    python benchmarks/bench_report.py                              # 1e5 subjects × 20 locations, naive at 1e4
    python benchmarks/bench_report.py --subjects 20000 --locations 10 --naive-subjects 5000
    python benchmarks/bench_report.py --p 0.1 --withhold 0.1 --no-protection
    python benchmarks/bench_report.py --stages --subjects 20000 --locations 1000 --p 0.01   # per stage

``--stages`` times the report's own stages on one release instead (the trails with the data-model decision,
the link graph, the exact classification, and the exposure's link graph + classification for a few locations,
of which the exposure runs one per location that discloses de-identified records); the other cases are skipped.

The release is uniform (thesis §5.6): each subject visits each location with probability p; a visited
location withholds the de-identified record with probability ``withhold``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure  # noqa: E402


def warmed(case, args: argparse.Namespace, subjects: int):  # noqa: ANN001, ANN201
    """``case`` run once on a tiny release first (numba compiles there; numba's OpenMP layer rules out compiling
    in the parent before the fork), then timed on the real one: the time printed after ``timed=`` is that run's."""
    def run() -> str:
        case(args, 300)
        t0 = time.perf_counter()
        info = case(args, subjects)
        return f"timed={time.perf_counter() - t0:.2f} s {info}"
    return run


def release(args: argparse.Namespace, subjects: int):  # noqa: ANN201
    from graphlink.simulation.simulate import simulate_uniform

    return simulate_uniform(subjects, args.locations, args.p, withhold=args.withhold, seed=args.seed)


def full_report(args: argparse.Namespace, subjects: int) -> str:
    from graphlink.io.report_html import render_html
    from graphlink.report import build_report

    rel = release(args, subjects)
    report = build_report(rel, args.k, seed=args.seed, protection=not args.no_protection)
    page = render_html(report)
    return (f"rows={len(rel.frame):,} certain={report.certain:,} below_k={report.below_k:,} html={len(page):,} B "
            f"stages={dict(report.timings)}")


def exposure_fast(args: argparse.Namespace, subjects: int) -> str:
    from graphlink.core.trails import build_trails
    from graphlink.report.exposure import certain_count, location_exposure

    tr = build_trails(release(args, subjects))
    certain, hall = certain_count(tr)
    rows = location_exposure(tr, certain, hall)
    return f"certain={certain:,} lost={[r.lost for r in rows]}"


def exposure_naive(args: argparse.Namespace, subjects: int) -> str:
    """Per location: drop its de-identified rows from the long table, re-read, re-fill, link, classify."""
    from graphlink.core.trails import build_trails
    from graphlink.report.exposure import certain_count

    rel = release(args, subjects)
    certain, _ = certain_count(build_trails(rel))
    frame = rel.frame
    deid = (frame["kind"] == "deidentified").to_numpy()
    lost = []
    for loc in rel.locations:
        reduced = rel.select(~(deid & (frame["location"] == loc).to_numpy()))
        lost.append(certain - certain_count(build_trails(reduced, "deidentified", "one-to-one"))[0])
    return f"certain={certain:,} lost={lost}"


def stages(args: argparse.Namespace, subjects: int) -> str:
    """The report's stages one by one (seconds each), on one simulated release."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.report.exposure import without_location

    out = {}
    t0 = time.perf_counter()
    rel = release(args, subjects)
    out["simulate"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = build_trails(rel)                          # the report's reading: the model decided from the data
    out["trails"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = build_linkgraph(tr)
    out["linkgraph"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    classes = classify_edges(graph)
    out["classify"] = time.perf_counter() - t0
    sample = [c for c in range(len(tr.locations)) if tr.location_sizes.deidentified[c]][:args.sample]
    t0 = time.perf_counter()
    for c in sample:
        classify_edges(build_linkgraph(without_location(tr, c)))
    per = (time.perf_counter() - t0) / max(len(sample), 1)
    out["exposure_per_location"] = per
    n_exposed = int((tr.location_sizes.deidentified > 0).sum())
    return (f"rows={len(rel.frame):,} certain={classes.n_true_loves:,} "
            f"stages={ {k: round(v, 3) for k, v in out.items()} } exposure_locations={n_exposed} "
            f"exposure_estimate={per * n_exposed:.1f} s")


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages (the machine may be shared: they go beside every figure)."""
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subjects", type=int, default=100_000)
    ap.add_argument("--naive-subjects", type=int, default=10_000, help="size of the naive-vs-fast comparison")
    ap.add_argument("--locations", type=int, default=20)
    ap.add_argument("--p", type=float, default=0.1)
    ap.add_argument("--withhold", type=float, default=0.1)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-protection", action="store_true")
    ap.add_argument("--stages", action="store_true", help="time the report's stages one by one (module docstring)")
    ap.add_argument("--sample", type=int, default=5, help="locations the --stages exposure figure is timed on")
    args = ap.parse_args()
    print(f"uniform release: locations={args.locations} p={args.p} withhold={args.withhold} k={args.k}; "
          f"load average {loadavg()}")
    if args.stages:
        measure(f"report stages (n={args.subjects:,})", warmed(stages, args, args.subjects))
        print(f"load average after: {loadavg()}")
        return
    n = args.naive_subjects
    print(f"exposure per location at {n:,} subjects (same release, same answer expected):")
    _, _, fast = measure(f"trail-level leave-one-location-out (n={n:,})", warmed(exposure_fast, args, n))
    _, _, naive = measure(f"naive: rebuild each reduced release (n={n:,})", warmed(exposure_naive, args, n))
    print(f"  same answer: {fast.split(' s ', 1)[1] == naive.split(' s ', 1)[1]}")
    print(f"whole report at {args.subjects:,} subjects (analysis, exposure, protection, HTML):")
    measure(f"graphlink report (n={args.subjects:,})", warmed(full_report, args, args.subjects))
    print(f"load average after: {loadavg()}")


if __name__ == "__main__":
    main()
