"""Benchmark: pair probabilities (``graphlink risk``, docs/risk.md) beside the naive methods.

Prints sizes, wall time, peak RSS (each case in a forked child, benchmarks/_measure.py), the blocks computed
exactly and estimated, and next to them: the thesis's 1/|E_y| reading (one classification plus the union
degrees) and brute-force enumeration of every assignment where it can run.

    python benchmarks/bench_risk.py                  # README release + block sizes (about a minute)
    python benchmarks/bench_risk.py --only blocks    # exact DP / brute force / chain per block size
    python benchmarks/bench_risk.py --only low       # the low-entropy Zipf release, 1e5 subjects × 24 sites
    python benchmarks/bench_risk.py --only coverage  # are the chain's ± honest? (forced on exact blocks, ~1 min)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import measure  # noqa: E402


def _risk_case(make, budget: float) -> None:
    import graphlink as gl

    rel = make()
    g = gl.build_linkgraph(gl.build_trails(rel))
    print(f"  {g.n_identified:,} people, {g.n_deidentified:,} records, {len(g.class_ei):,} class edges, "
          f"{g.n_expanded_edges:,} link edges, {g.n_null} null trails", flush=True)

    def ours() -> str:
        r = gl.pair_probabilities(g, budget=budget)
        s = r.summary(truth=rel.truth)
        b = r.blocks
        return (f"exact blocks {b.exact:,} (largest {b.largest_exact:,} elements, {b.seconds_exact:.2f} s), "
                f"estimated {b.estimated:,} (largest {b.largest_estimated:,}, {b.seconds_estimated:.2f} s, "
                f"max ± {s.max_error:.3f}); expected correct {s.expected_correct_best:,.1f}, truth "
                f"{s.correct_best:,} of {s.truth_people:,}")

    def thesis() -> str:
        c = gl.classify_edges(g)
        deg = c.union_degree_total("deidentified")
        return f"1/|E_y| for {int(c.class_allowed.sum()):,} class edges, mean |E_y| {deg.mean():.2f}"

    measure("pair probabilities (blocks: DP, chain)", ours)
    measure("thesis 1/|E_y| (classification + union degrees)", thesis)


def bench_readme(budget: float) -> None:
    from graphlink.simulation.simulate import simulate_uniform

    print("README release: graphlink simulate --subjects 2000 --locations 20 --p 0.3 --withhold 0.3 --seed 7")
    _risk_case(lambda: simulate_uniform(2000, 20, 0.3, withhold=0.3, reserved="deidentified", seed=7), budget)


def bench_low(budget: float, subjects: int) -> None:
    from graphlink.simulation.simulate import simulate_zipf

    print(f"low entropy: Zipf 0.6, {subjects:,} subjects × 24 sites, withhold 0.5 (benchmarks/bench_core.py twins)")
    _risk_case(lambda: simulate_zipf(subjects, 24, 0.6, withhold=0.5, reserved="deidentified", seed=5), budget)


def _random_block(n: int, density: float, rng: np.random.Generator) -> np.ndarray:
    """An n × n 0/1 matrix with a planted perfect matching (the identity) plus random edges."""
    a = rng.random((n, n)) < density
    a[np.arange(n), np.arange(n)] = True
    return a


def _brute(a: np.ndarray) -> np.ndarray:
    n = len(a)
    marg = np.zeros(a.shape)
    z = 0
    for perm in itertools.permutations(range(n)):
        if all(a[i, perm[i]] for i in range(n)):
            z += 1
            marg[np.arange(n), list(perm)] += 1
    return marg / z


def bench_blocks(budget: float) -> None:
    from graphlink.kernels.permanent import block_chain, block_marginals

    rng = np.random.default_rng(1)
    print("one block of n people and n records, density 0.3 plus a planted assignment:")
    print(f"  {'n':>4} {'DP states':>12} {'exact DP':>10} {'brute force':>12} {'chain sweep':>12} "
          f"{'chain ± after budget':>22}")
    for n in (6, 8, 9, 12, 16, 18, 20, 50, 200, 1000, 3000):
        a = _random_block(n, 0.3 if n <= 200 else min(0.3, 30 / n), rng)
        rr, cc = np.nonzero(a)
        ptr = np.searchsorted(rr, np.arange(n + 1)).astype(np.int64)
        rows = np.arange(n, dtype=np.int64)
        ones = np.ones(n, np.int64)
        dp = bf = "-"
        if n <= 22:
            t0 = time.perf_counter()
            marg, _, _ = block_marginals(rows, ones, ptr, cc.astype(np.int64), np.ones(len(rr)), np.ones(n), 0)
            dp = f"{time.perf_counter() - t0:.3f} s"
            if n <= 9:
                t0 = time.perf_counter()
                want = _brute(a)
                bf = f"{time.perf_counter() - t0:.3f} s"
                assert np.allclose(marg, want[rr, cc])
        cum = np.ones(len(cc), np.int64)
        for r in range(n):
            cum[ptr[r]:ptr[r + 1]] = np.arange(1, ptr[r + 1] - ptr[r] + 1)
        t0 = time.perf_counter()
        block_chain(rows, rows, np.arange(n + 1, dtype=np.int64), ptr, cc.astype(np.int64), cum,
                    np.zeros(len(cc)), np.arange(n, dtype=np.int64), 1, 0, 1, 1, 0)
        sweep = time.perf_counter() - t0
        batches = max(2, int(budget / max(sweep, 1e-6)) // 20)
        s1, s2, *_ = block_chain(rows, rows, np.arange(n + 1, dtype=np.int64), ptr, cc.astype(np.int64), cum,
                             np.zeros(len(cc)), np.arange(n, dtype=np.int64), batches, 0, 20, 1, 1)
        mean = s1 / 20
        se = np.sqrt(np.maximum(s2 / 20 - mean * mean, 0) * 20 / 19 / 20)
        states = f"2^{n}"
        print(f"  {n:>4} {states:>12} {dp:>10} {bf:>12} {sweep * 1e3:>9.2f} ms {1.96 * se.max():>15.3f} "
              f"({20 * batches} sweeps)", flush=True)


SIZE_BINS = ((2, 10), (10, 20), (20, 40), (40, 80), (80, 10**9))


def _block_size(risk) -> np.ndarray:
    """Per class edge: elements (both sides) of its block, the connected component of the allowed class graph."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    g, c = risk.graph, risk.classes
    al = np.flatnonzero(c.class_allowed)
    nl, nr = len(g.id_class_size), len(g.de_class_size)
    adj = sp.coo_matrix((np.ones(len(al)), (g.class_ei[al], nl + g.class_ej[al])), shape=(nl + nr, nl + nr))
    _, comp = connected_components(adj, directed=False)
    size = np.bincount(comp, np.r_[g.id_class_size, g.de_class_size])
    out = np.zeros(len(g.class_ei), np.int64)
    out[al] = size[comp[g.class_ei[al]]]
    return out


def bench_coverage(populations: int, sweeps: tuple[int, ...]) -> None:
    """Coverage of the chain's 95 % half-widths: blocks the exact DP can do, forced onto the chain.

    Populations of 40 subjects at 6 and at 10 locations (p 0.3, withhold 0.3); the oracle is the exact DP with a
    raised state budget (2^22), the estimate ``pair_probabilities(max_exact_states=0, budget=None, sweeps=N)``.
    A pair is covered when its exact probability lies within p ± error.  The pairs of one block are dependent (a
    block's chain misses together), so the per-block-size counts say how many blocks stand behind each share.
    """
    import graphlink as gl
    import graphlink.analysis.risk as risk_mod
    from graphlink.simulation.simulate import simulate_uniform

    risk_mod.MAX_EXACT_STEPS = 1 << 27                  # the oracle: exact on every block of these sizes
    cases = []
    for loc in (6, 10):
        for run in range(populations):
            rel = simulate_uniform(40, loc, 0.3, withhold=0.3, reserved="deidentified", seed=run)
            g = gl.build_linkgraph(gl.build_trails(rel, reserved="deidentified"))
            exact = gl.pair_probabilities(g, budget=None, max_exact_states=1 << 22)
            if exact.exact:
                cases.append((g, exact, _block_size(exact)))
    print(f"coverage of the chain's 95 % error: {len(cases)} populations of 40 subjects (6 and 10 locations) whose "
          "blocks are all exact, every non-trivial block forced onto the chain")
    print(f"  {'sweeps':>7} {'block elements':>15} {'blocks':>7} {'pairs':>6} {'covered':>8} {'mean ±':>7} "
          f"{'chain s/block':>14}")
    for n in sweeps:
        size, hit, err, blk, secs = [], [], [], [], []
        for k, (g, exact, bsize) in enumerate(cases):
            est = gl.pair_probabilities(g, classes=exact.classes, max_exact_states=0, budget=None, sweeps=n,
                                        seed=k)
            m = ~est.class_exact
            size.append(bsize[m])
            hit.append(np.abs(est.class_probability - exact.class_probability)[m] <= est.class_error[m] + 1e-12)
            err.append(est.class_error[m])
            blk.append(np.unique(bsize[m] * 1_000_000 + k))
            secs.append((est.blocks.seconds_estimated, est.blocks.estimated))
        size_a, hit_a, err_a = np.concatenate(size), np.concatenate(hit), np.concatenate(err)
        blk_a = np.concatenate(blk) // 1_000_000
        per_block = sum(s for s, _ in secs) / max(1, sum(b for _, b in secs))
        for lo, hi in SIZE_BINS:
            k = (size_a >= lo) & (size_a < hi)
            nb = int(((blk_a >= lo) & (blk_a < hi)).sum())
            if k.any():
                label = f"{lo}–{hi - 1}" if hi < 10**9 else f"{lo}+"
                print(f"  {n:>7} {label:>15} {nb:>7} {int(k.sum()):>6} {hit_a[k].mean():>8.3f} "
                      f"{err_a[k].mean():>7.3f}")
        print(f"  {n:>7} {'all':>15} {len(blk_a):>7} {len(size_a):>6} {hit_a.mean():>8.3f} {err_a.mean():>7.3f} "
              f"{per_block * 1e3:>11.1f} ms", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["readme", "blocks", "low", "coverage"], default=None)
    ap.add_argument("--populations", type=int, default=120, help="coverage: populations per number of locations")
    ap.add_argument("--sweeps", type=str, default="400,2000", help="coverage: sweeps to try (comma list)")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per estimated block (as graphlink risk)")
    ap.add_argument("--subjects", type=int, default=100_000, help="low-entropy case: subjects")
    args = ap.parse_args()
    if args.only in (None, "readme"):
        bench_readme(args.budget)
    if args.only in (None, "blocks"):
        bench_blocks(args.budget)
    if args.only == "coverage":
        try:
            sweeps = tuple(int(x) for x in args.sweeps.split(","))
        except ValueError:
            ap.error("--sweeps: expected whole numbers separated by commas, such as 400,2000")
        bench_coverage(args.populations, sweeps)
    if args.only == "low":
        bench_low(args.budget, args.subjects)


if __name__ == "__main__":
    main()
