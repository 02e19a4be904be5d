"""Core hot paths, each against the naive formulation in the same run.

    python benchmarks/bench_core.py [--scale 1.0] [--only reidit_c,links,matching,reidit_i,low_entropy,twins,scaling]

Targets (2 cores / 24 GB): REIDIT-C 1e6×1e6×200 locations < 20 s; link edges reserved
1e5×1e5×200 locations, 30 % '*' < 30 s; true loves + union-degrees 1e6+1e6 vertices, 1e7 edges < 60 s and
4 GB; REIDIT-I queue vs the thesis's REIDIT-I-Precomp at 1e4×1e4 (ratio).

``low_entropy``: the thesis's §5.4 setting as a user runs it — 1e5 and 1e6 subjects over 24 sites
(visit probability 0.5·r^-0.6 for the site of rank r, identified side withholds half), every CLI command timed
as a subprocess with its peak RSS, plus the element-vs-class edge counts that make the expansion impossible.

``scaling``: the scaling experiment's populations (1e6 subjects × 48 and 72 locations, half the identified
records withheld): link graph, REIDIT-I and true loves with peak RSS; goal < 12 GB at 72 locations, < 120 s and
< 8 GB each at 48.

``twins``: true loves on a low-entropy Zipf release (1e5 and 1e6 subjects × 24 locations) with
the numba twin-class engine against scipy's Dinic on the same class graph; goal < 10 s at 1e5 on 2 idle cores.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))     # tests.reference: the thesis's naive formulations
from _measure import measure, run_command  # noqa: E402

from graphlink.analysis.matching import dm_classify  # noqa: E402
from graphlink.analysis.reidit import reidit_c, reidit_i  # noqa: E402
from graphlink.core.linkgraph import build_linkgraph  # noqa: E402
from graphlink.core.trails import Trails, TrailSide, full_mask, pack_columns  # noqa: E402
from graphlink.kernels.links import class_links  # noqa: E402
from tests.reference import dense_link_matrix, reidit_i_precomp  # noqa: E402


def random_packed(n: int, c: int, p: float, rng: np.random.Generator) -> np.ndarray:
    r, col = np.nonzero(rng.random((n, c), dtype=np.float32) < p)
    return pack_columns(r, col, n, c)


def make_trails(nm: int, nn: int, c: int, star: float, seed: int, reserved: str) -> Trails:
    rng = np.random.default_rng(seed)
    ones_m = random_packed(nm, c, 0.5, rng)
    pick = rng.permutation(nm)[:nn]
    ones_n = ones_m[pick]
    full = full_mask(nn, c)
    if star > 0:
        known_n = full & ~random_packed(nn, c, star, rng)
        ones_n = ones_n & known_n
    else:
        known_n = full
    M = TrailSide(np.array([f"p{i}" for i in range(nm)], dtype=object), full_mask(nm, c), ones_m, c)
    N = TrailSide(np.array([f"s{i}" for i in range(nn)], dtype=object), known_n, ones_n, c)
    sizes = pd.DataFrame({"identified": np.zeros(c, int), "deidentified": np.zeros(c, int)})
    return Trails([f"L{i}" for i in range(c)], M, N, reserved, "benchmark", sizes)


def naive_c_pairs_per_sec(tr: Trails, n: int) -> float:
    """Naive REIDIT-C (Alg. 2): for each m, scan all n. Timed on an n×n sample, returns pair checks/s."""
    import time

    M = tr.identified.ones[:n]
    N = tr.deidentified.ones[:n]
    t0 = time.perf_counter()
    for i in range(n):
        np.flatnonzero(np.all(M[i] == N, axis=1))
    return n * n / (time.perf_counter() - t0)


def bench_reidit_c(scale: float) -> None:
    n = int(1_000_000 * scale)
    print(f"REIDIT-C: {n:,} identified × {n:,} de-identified trails, 200 locations (unreserved)")
    tr = make_trails(n, n, 200, 0.0, 1, "none")
    measure("graphlink reidit_c (hash/sort, O(n log n))", lambda: f"{len(reidit_c(tr)):,} pairs")
    rate = naive_c_pairs_per_sec(tr, 3000)
    print(f"  {'naive Alg. 2 (scan N for every m), extrapolated':<58} {n * n / rate:9.0f} s   "
          f"({rate / 1e6:.1f} M pair checks/s measured on 3,000×3,000)")


def bench_links(scale: float) -> None:
    n = int(100_000 * scale)
    print(f"Link edges: {n:,} × {n:,} trails, 200 locations, 30% '*' (reserved, per-entry '*')")
    tr = make_trails(n, n, 200, 0.3, 2, "deidentified")
    measure("graphlink build_linkgraph (twins + posting-list join)",
            lambda: f"{build_linkgraph(tr).n_expanded_edges:,} edges")
    measure("graphlink build_linkgraph (twins + numba brute force)",
            lambda: f"{build_linkgraph(tr, method='bruteforce').n_expanded_edges:,} edges")
    sample = make_trails(3000, 3000, 200, 0.3, 3, "deidentified")
    import time

    t0 = time.perf_counter()
    dense_link_matrix(sample)
    rate = 9e6 / (time.perf_counter() - t0)
    print(f"  {'naive dense link matrix (numpy), extrapolated':<58} {n * n / rate:9.0f} s   "
          f"({rate / 1e6:.1f} M pair checks/s on 3,000×3,000; needs {n * n / 8 / 2**30:.1f} GiB as bits)")


def bench_links_masks(scale: float) -> None:
    n = int(100_000 * scale)
    print(f"Link edges: {n:,} × {n:,} trails, 200 locations, '*' from 50 withholding patterns (whole locations)")
    rng = np.random.default_rng(6)
    tr = make_trails(n, n, 200, 0.0, 7, "deidentified")
    patterns = full_mask(50, 200) & ~random_packed(50, 200, 0.3, rng)
    known = patterns[rng.integers(0, 50, n)]
    N = TrailSide(tr.deidentified.keys, known, tr.deidentified.ones & known, 200)
    tr = Trails(tr.locations, tr.identified, N, "deidentified", "benchmark", tr.sizes)
    R, S = tr.deidentified, tr.identified
    measure("graphlink class_links grouped by '*' pattern",
            lambda: f"{len(class_links(R.known, R.ones, S.ones, method='mask')[0]):,} edges")
    measure("graphlink class_links numba brute force",
            lambda: f"{len(class_links(R.known, R.ones, S.ones, method='bruteforce')[0]):,} edges")


def bench_scaling(scale: float) -> None:
    """The scaling experiment's populations (docs/experiments.md, Figure 5.9): 24-site profile copied 2 or 3
    times, half of the identified records withheld, so the identified side knows only where a person is named.
    Link graph, REIDIT-I and true loves, each in its own process with its peak RSS; the brute-force link join in
    the same run up to 2e5 subjects (beyond, it takes minutes: 634 s at 1e6 × 72 before the join)."""
    from graphlink.analysis.reidit import true_loves
    from graphlink.simulation.experiments.common import population_trails, task_seed
    from graphlink.simulation.experiments.scaling import SITE_PROFILE, WITHHOLD
    from graphlink.simulation.simulate import draw_population

    n = int(1_000_000 * scale)
    for copies in (2, 3):
        print(f"Scaling populations: {n:,} subjects × {24 * copies} locations, half the identified records "
              f"withheld (load {os.getloadavg()[0]:.1f})")

        def trails(n: int = n, copies: int = copies) -> Trails:
            pop = draw_population(n, np.tile(SITE_PROFILE, copies), withhold=WITHHOLD, reserved="identified",
                                  seed=task_seed(0, n, copies, 0))
            return population_trails(pop)

        def wrong(res: Any) -> int:
            p = res.pairs
            return int((p["identified"].str[1:] != p["deidentified"].str[1:]).sum())

        measure("trails + link graph (posting-list join)",
                lambda t=trails: f"{len(build_linkgraph(t()).class_ei):,} class edges")
        if n <= 200_000:
            measure("trails + link graph (numba brute force over class pairs)",
                    lambda t=trails: f"{len(build_linkgraph(t(), method='bruteforce').class_ei):,} class edges")
        for name, algorithm in (("REIDIT-I", reidit_i), ("true loves", lambda g: true_loves(g, explain=False))):
            def run(t: Callable[[], Trails] = trails, algorithm: Callable = algorithm) -> str:
                res = algorithm(build_linkgraph(t()))
                return f"{len(res):,} pairs, {wrong(res)} wrong"
            measure(f"trails + link graph + {name}", run)


def planted_graph(n: int, extra: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    el = np.concatenate([np.arange(n), rng.integers(0, n, extra)])
    er = np.concatenate([perm, rng.integers(0, n, extra)])
    return el, er


def bench_matching(scale: float) -> None:
    n = int(1_000_000 * scale)
    e = int(10_000_000 * scale)
    print(f"True loves + union-degrees: {n:,} + {n:,} vertices, {e:,} edges (planted perfect matching + noise)")
    el, er = planted_graph(n, e - n, 4)

    def ours() -> str:
        r = dm_classify(n, n, el, er)
        np.bincount(el[r["allowed"]], minlength=n)
        np.bincount(er[r["allowed"]], minlength=n)
        return f"ν={r['nu']:,}, true loves={int(r['vital'].sum()):,}"

    def scipy_ref() -> str:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

        B = sp.csr_matrix((np.ones(len(el), np.int8), (el, er)), shape=(n, n))
        mate = maximum_bipartite_matching(B, perm_type="column")
        matched = mate[el] == er
        src = np.concatenate([el[~matched], n + er[matched]])
        dst = np.concatenate([n + er[~matched], el[matched]])
        D = sp.csr_matrix((np.ones(len(src), np.int8), (src, dst)), shape=(2 * n, 2 * n))
        _, scc = connected_components(D, directed=True, connection="strong")
        vital = matched & (scc[el] != scc[n + er])
        return f"ν={int((mate >= 0).sum()):,}, true loves={int(vital.sum()):,}"

    measure("graphlink dm_classify (numba HK + SCC)", ours)
    measure("scipy maximum_bipartite_matching + SCC (perfect case)", scipy_ref)


def bench_reidit_i(scale: float) -> None:
    n = int(10_000 * scale)
    print(f"REIDIT-I: {n:,} × {n:,} trails, 14 locations, 40% '*' (queue vs thesis REIDIT-I-Precomp)")
    tr = make_trails(n, n, 14, 0.4, 5, "deidentified")
    g = build_linkgraph(tr)
    t_q, _, a = measure("graphlink reidit_i (queue, O(|M|+|N|+E))", lambda: f"{len(reidit_i(g)):,} pairs")
    t_p, _, b = measure("thesis REIDIT-I-Precomp (dense D and W, Alg. 5+6)",
                        lambda: f"{len(reidit_i_precomp(tr)):,} pairs")
    print(f"  ratio Precomp/queue: {t_p / t_q:.0f}×  (same pairs: {a == b})")


def _run_cli(args: list[str]) -> tuple[float, float, int]:
    """Run ``graphlink ARGS`` as a user would; (wall seconds, peak RSS MiB of the process, exit code)."""
    dt, rss, code, err = run_command([sys.executable, "-m", "graphlink.cli", *args])
    if code:
        print(f"    exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}")
    return dt, rss, code


def bench_low_entropy(scale: float) -> None:
    import tempfile

    from graphlink.simulation.simulate import simulate_probabilities

    profile = [0.5 * r ** -0.6 for r in range(1, 25)]
    for subjects in (int(100_000 * scale), int(1_000_000 * scale)):
        with tempfile.TemporaryDirectory(prefix="graphlink-bench-") as tmp:
            path, truth = f"{tmp}/low.parquet", f"{tmp}/truth.csv"
            rel = simulate_probabilities(subjects, profile, withhold=0.5, reserved="identified", seed=5)
            rel.frame.to_parquet(path)
            rel.truth.to_csv(truth, index=False)
            g = build_linkgraph(__import__("graphlink.core.trails", fromlist=["build_trails"]).build_trails(
                rel, multiplicity="one-to-one"))
            print(f"low entropy: {subjects:,} subjects × 24 sites, {len(rel.frame):,} rows; "
                  f"{g.n_expanded_edges:,} element edges, {len(g.class_ei):,} class edges")
            del g, rel
            cmds = [["trails", path], ["trails", path, "--format", "parquet", "--out", f"{tmp}/trails.parquet"],
                    *[["reidentify", path, "--method", m, "--truth", truth, "--format", "csv"]
                      for m in ("complete", "incomplete", "multiple", "true-loves")],
                    ["reidentify", path, "--method", "incomplete-k", "--k", "2", "--format", "csv"],
                    ["audit", path, "--k", "2", "--format", "json"]]
            for args in cmds:       # one-to-one data with identified withholding: state the multiplicity
                dt, rss, code = _run_cli([*args, "--multiplicity", "one-to-one"])
                label = " ".join(a if not a.startswith(tmp) else Path(a).name for a in args)
                print(f"  graphlink {label:<60} {dt:8.2f} s   peak RSS {rss:7.0f} MiB   exit {code}", flush=True)


def _rss_mib() -> float:
    """Current resident set size of this process, MiB (Linux; elsewhere the peak so far, an upper bound)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _grown(fn: Callable[[], object], q: Any) -> None:
    """Forked child of :func:`_measure_growth`."""
    import resource
    import time

    start = _rss_mib()
    t0 = time.perf_counter()
    info = fn()
    dt = time.perf_counter() - t0
    q.put((dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, start, info))


def _measure_growth(label: str, fn: Callable[[], object]) -> tuple[float, float, object]:
    """Like ``measure`` (forked child, wall time, peak RSS), plus the growth of the peak over the RSS the child
    starts with (the class graph it inherits from this process): the engine's own memory."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_grown, args=(fn, q))
    p.start()
    dt, peak, start, info = q.get()
    p.join()
    print(f"  {label:<58} {dt:9.2f} s   peak RSS {peak:8.0f} MiB (+{peak - start:,.0f})   {info}", flush=True)
    return dt, peak - start, info


def bench_twins(scale: float) -> None:
    """True loves on a low-entropy Zipf release via twin classes, numba engine vs scipy's Dinic.

    Each engine runs in its own forked child on the same class graph; "peak RSS" includes the graph the child
    inherits, "(+N)" is the growth over it."""
    from graphlink.analysis.matching import classify_edges, twin_classify
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_zipf

    twin_classify(np.ones(2, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))  # JIT
    for subjects in (int(100_000 * scale), int(1_000_000 * scale)):
        rel = simulate_zipf(subjects, 24, 0.6, withhold=0.5, reserved="deidentified", seed=5)
        g = build_linkgraph(build_trails(rel, "deidentified"))
        del rel
        n_ic, n_dc, n_e = len(g.id_class_size), len(g.de_class_size), len(g.class_ei)
        print(f"true loves, Zipf α=0.6: {subjects:,} subjects × 24 locations, de-identified side withholds half; "
              f"{g.n_expanded_edges:,} element edges -> {n_ic:,} + {n_dc:,} classes, {n_e:,} class edges", flush=True)
        args = (g.id_class_size, g.de_class_size, g.class_ei, g.class_ej)

        def run(method: str, args: tuple = args) -> str:
            r = twin_classify(*args, method=method)
            return (f"ν={r['nu']:,}, allowed={int(r['allowed'].sum()):,}, true loves={int(r['vital'].sum()):,}, "
                    f"d_left={int(r['d_left'].sum()):,}")

        def end_to_end(g: object = g) -> str:
            c = classify_edges(g, engine="twins")
            return f"ν={c.nu:,}, true loves={len(c.true_love_pairs[0]):,}, hall_ok={c.hall_ok}"

        t_n, _, a = _measure_growth("twin_classify numba (capacitated HK + Tarjan)", lambda: run("numba"))
        _measure_growth("classify_edges(engine='twins'), numba engine, end to end", end_to_end)
        # scipy's path needs ≈ 125 bytes per class edge (measured at 1e5): skip it when that cannot fit
        need = n_e * 125 / 2**30
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
        if need > 0.8 * avail:
            print(f"  {'twin_classify scipy (Dinic maximum_flow + sparse SCC)':<58} skipped: needs ≈{need:.0f} GiB, "
                  f"{avail:.0f} GiB free")
            continue
        t_s, _, b = _measure_growth("twin_classify scipy (Dinic maximum_flow + sparse SCC)", lambda: run("scipy"))
        print(f"  ratio scipy/numba: {t_s / t_n:.1f}×  (same answers: {a == b})", flush=True)
        del g, args


CASES = {"reidit_c": bench_reidit_c, "links": bench_links, "links_masks": bench_links_masks,
         "matching": bench_matching, "reidit_i": bench_reidit_i, "low_entropy": bench_low_entropy,
         "twins": bench_twins, "scaling": bench_scaling}

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (e.g. 0.01 for a smoke run)")
    ap.add_argument("--only", default=",".join(CASES))
    args = ap.parse_args()
    for name in args.only.split(","):
        CASES[name](args.scale)
