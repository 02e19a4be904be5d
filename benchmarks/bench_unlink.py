"""Benchmark: unlinking a large simulated release (default 1e5 subjects × 1000 locations).

Each method runs in a fresh process so its peak RSS is its own.  Reported per method: wall time of the
stages (simulate, index, allocate, write the suppressed release, exact audit), peak memory, and utility.

    python benchmarks/bench_unlink.py                       # 1e5 × 1000, p = 0.01, all methods
    python benchmarks/bench_unlink.py --subjects 20000 --locations 200 --p 0.05 --methods force-dedup
    python benchmarks/bench_unlink.py --no-audit            # heuristics only

The visit probability p sets the size: rows ≈ 2·subjects·locations·p (p = 0.01 → 2e6 rows).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def one(args: argparse.Namespace) -> dict:
    from graphlink.protect import Instance, allocate, apply_disclosure, audit_release, utility
    from graphlink.simulation.simulate import simulate_uniform

    t = {}
    t0 = time.perf_counter()
    release = simulate_uniform(args.subjects, args.locations, args.p, reserved="none", seed=args.seed)
    t["simulate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    inst = Instance.from_frame(release.frame)
    t["index_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    alloc = allocate(inst, args.k, args.method, args.seed)
    t["allocate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = apply_disclosure(release, alloc.disclosed)
    t["write_s"] = time.perf_counter() - t0
    cert = None
    if not args.no_audit:
        t0 = time.perf_counter()
        res, classes = audit_release(out, args.k)
        t["audit_s"] = time.perf_counter() - t0
        cert = {"k_unlinkable": bool(res.k_unlinkable), "violations": int(len(res.violations)),
                "engine": getattr(classes, "engine", None), "link_edges": res.counts.get("link_edges"),
                "true_loves": int(res.true_loves)}
    omega = {inst.locations[c]: inst.de_keys[inst.omega(c)].tolist() for c in range(inst.n_locations)}
    u = utility(omega, alloc.disclosed)
    return {"method": args.method, "k": args.k, "subjects": args.subjects, "locations": args.locations,
            "p": args.p, "rows": int(len(release.frame)), **{k: round(v, 3) for k, v in t.items()},
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "disclosed": u["disclosed"], "withheld": u["withheld"],
            "locations_disclosing": u["locations_disclosing"], "audit": cert}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subjects", type=int, default=100_000)
    ap.add_argument("--locations", type=int, default=1000)
    ap.add_argument("--p", type=float, default=0.01)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="greedy-dedup,force-dedup,flow-dedup")
    ap.add_argument("--method", help=argparse.SUPPRESS)
    ap.add_argument("--no-audit", action="store_true")
    args = ap.parse_args()
    if args.method:
        print(json.dumps(one(args)))
        return
    results = []
    for m in args.methods.split(","):
        cmd = [sys.executable, __file__, "--method", m, "--subjects", str(args.subjects), "--locations",
               str(args.locations), "--p", str(args.p), "--k", str(args.k), "--seed", str(args.seed)]
        if args.no_audit:
            cmd.append("--no-audit")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{m}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["process_wall_s"] = round(time.perf_counter() - t0, 2)
        results.append(r)
        print(json.dumps(r), flush=True)
    print("\nmethod          rows       allocate_s  audit_s   total_wall_s  peak_MB  disclosed  locations  certified")
    for r in results:
        a = r.get("audit") or {}
        print(f"{r['method']:<15} {r['rows']:<10,} {r['allocate_s']:<11} {r.get('audit_s', '-')!s:<9} "
              f"{r['process_wall_s']:<13} {r['peak_rss_mb']:<8} {r['disclosed']:<10} {r['locations_disclosing']:<10} "
              f"{a.get('k_unlinkable', '-')}")


if __name__ == "__main__":
    main()
