"""Benchmark: the secure STRANON protocol (thesis Alg. 11 over SCAMD, App. C) at 1e5 de-identified records
and 20 locations.

Runs every party as its own process over 127.0.0.1 TCP (the locations work in parallel on all cores, the
parallelism App. C.3.2 assumes), and — as the naive baseline in the same run — the same protocol with all
parties as objects in one process (sequential, one core) on a smaller instance, extrapolated per record.
Prints sizes, wall time, crypto operations per second, bytes moved, the sTTP's DEDUP time and peak memory.

    python benchmarks/bench_secure.py                       # 1e5 records × 20 locations
    python benchmarks/bench_secure.py --records 20000 --baseline-records 5000
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from graphlink.secure.dedup_secure import run_secure_dedup
from graphlink.secure.protocol import run_stranon


def make_data(records: int, locations: int, p: float, seed: int):
    """Uniform population sized so that Σ|ω_c| ≈ records (reserved, 30% of visits withhold ω)."""
    rng = np.random.default_rng(seed)
    withhold = 0.3
    subjects = int(round(records / (locations * p * (1 - withhold))))
    visits = rng.random((subjects, locations)) < p
    keep = visits & (rng.random((subjects, locations)) >= withhold)
    data = {}
    for c in range(locations):
        ids = np.flatnonzero(visits[:, c])
        de = np.flatnonzero(keep[:, c])
        data[f"L{c + 1:02d}"] = ([f"p{i:07d}" for i in ids], [f"s{i:07d}" for i in de])
    return data, subjects


def summarise(tag: str, res, data) -> dict:
    recs = sum(len(o) for _, o in data.values())
    ops = sum(c["element_ops"] for c in res.costs.values())
    hashes = sum(c["hash_ops"] for c in res.costs.values())
    byts = sum(c["bytes_sent"] for c in res.costs.values())
    cpu = sum(c["cpu_seconds"] for c in res.costs.values())
    out = {"run": tag, "records": recs, "locations": len(data), "wall_s": round(res.wall_seconds, 2),
           "scalar_mults": ops, "hash_to_group": hashes, "mults_per_s": round(ops / res.wall_seconds),
           "records_per_s": round(recs / res.wall_seconds), "cpu_s": round(cpu, 1),
           "mults_per_cpu_s": round(ops / cpu), "bytes_moved": byts,
           "disclosed": sum(len(v) for v in res.disclosed.values()), "aborted": res.aborted}
    print("  ".join(f"{k}={v}" for k, v in out.items()), flush=True)
    return out


def _authentication_seconds(total_bytes: int, frame: int = 8 << 20) -> float:
    """Seconds to tag and check (two HMAC-SHA256 passes, as sender and reader do) ``total_bytes`` in frames of
    ``frame`` bytes: the transport's authentication cost, timed on this machine now."""
    import hashlib
    import hmac
    import os

    key, data = os.urandom(32), os.urandom(frame)
    t = time.perf_counter()
    done = 0
    while done < total_bytes:
        hmac.new(key, data, hashlib.sha256).digest()
        done += frame
    return 2 * (time.perf_counter() - t) * total_bytes / max(done, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--locations", type=int, default=20)
    ap.add_argument("--p", type=float, default=0.3)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--method", default="force-dedup-secure")
    ap.add_argument("--alpha", type=int, default=1)
    ap.add_argument("--beta", type=int, default=4)
    ap.add_argument("--dc", type=int, default=16)
    ap.add_argument("--baseline-records", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    data, subjects = make_data(args.records, args.locations, args.p, args.seed)
    print(f"instance: {subjects} subjects, {args.locations} locations, "
          f"{sum(len(o) for _, o in data.values())} de-identified records, "
          f"{sum(len(g) for g, _ in data.values())} identified records; k={args.k}, {args.method}, "
          f"alpha={args.alpha}, beta={args.beta}, |D_C|={args.dc}", flush=True)

    gamma = {c: set(g) for c, (g, _) in data.items()}
    omega = {c: set(o) for c, (_, o) in data.items()}
    t = time.perf_counter()
    dd = run_secure_dedup(args.method, gamma, omega, args.k, args.seed)
    print(f"sTTP DEDUP alone ({args.method}, on plaintext-equivalent sets): {time.perf_counter() - t:.2f} s, "
          f"{dd.disclosed()} returned", flush=True)

    # --seed seeds the instance only: the protocol's randomness is the OS CSPRNG (docs/secure.md, "Randomness")
    common = dict(k=args.k, method=args.method, alpha=args.alpha, beta=args.beta,
                  integrity=True, locking=True, dc_size=args.dc, certify=False)
    # naive baseline: all parties in one process, sequential
    bdata, _ = make_data(args.baseline_records, args.locations, args.p, args.seed)
    base = summarise("in-process (1 core, naive)", run_stranon(bdata, **common), bdata)
    # separate processes over loopback
    res = run_stranon(data, processes=True, **common)
    full = summarise("processes over 127.0.0.1", res, data)
    extrap = full["records"] / base["records_per_s"]
    print(f"naive extrapolated to {full['records']} records: {extrap:.1f} s; speed-up of the multi-process run: "
          f"{extrap / full['wall_s']:.2f}x", flush=True)
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    auth_s = _authentication_seconds(full["bytes_moved"])
    print(f"frame authentication (HMAC-SHA256 over the {full['bytes_moved']:,} bytes moved, measured here): "
          f"{auth_s:.2f} s = {100 * auth_s / full['cpu_s']:.2f}% of the parties' {full['cpu_s']} CPU-s", flush=True)
    print(f"sTTP CPU: {res.costs['sTTP']['cpu_seconds']:.1f} s; busiest location CPU: "
          f"{max(c['cpu_seconds'] for n, c in res.costs.items() if n != 'sTTP'):.1f} s")
    import os

    print(f"machine load average at the end: {os.getloadavg()}")
    print(f"peak RSS: launcher {peak_self:.0f} MB, largest party process {peak_child:.0f} MB")


if __name__ == "__main__":
    main()
