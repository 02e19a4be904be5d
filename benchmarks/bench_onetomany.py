"""One-to-many releases read with nothing withheld (``--reserved none``): the exact solver of
:mod:`graphlink.analysis.onetomany` — its search on twin classes (identical people counted, identical households in
lex-leader order) beside the same search on element-level pairs (the previous encoding), and the older global
Dulmage–Mendelsohn surjectivity (unsound: it ignores that cover is per location) — in the same run.

Run: ``python benchmarks/bench_onetomany.py [--populations 100] [--subjects 5000 --locations 30 --p 0.2]
[--lowentropy 10] [--large 100000]``.  Per population (the ``graphlink simulate --households`` release of one seed):
wall time and peak RSS of each method (the link graph is built once, outside the timings, and reported apart), the
pairs each names, how many the generator's truth contradicts, and the exact solver's verdict (consistent / refused
component with its size).  ``--lowentropy`` runs the ``graphlink experiment households`` populations (400
households, Zipf visits 0.5·r^−0.6 over 100 sites, the first 5–40 sites released: many identical trails).  The large
case (``--large`` households) runs twice: on ``--locations`` locations at ``--p`` and on 100 locations at
p = 0.05 (distinctive trails: small components).  The load average is printed with the figures: the machine is
shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))     # run as a script: its own folder's helpers
from _measure import measure  # noqa: E402


def old_certain(graph) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """The previous reading: certain iff the person fits one household or the pair is in every maximum matching
    of the fit graph (every household needs *some* distinct person, globally).  O(E·√V)."""
    from graphlink.analysis.matching import dm_classify

    ei, ej = graph.ei, graph.ej
    r = dm_classify(graph.n_identified, graph.n_deidentified, ei, ej)
    deg = np.bincount(ei, minlength=graph.n_identified)
    keep = (deg[ei] == 1) | r["vital"]
    return ei[keep], ej[keep]


def wrong(graph, m: np.ndarray, n: np.ndarray, truth: dict) -> int:  # noqa: ANN001
    km, kn = graph.trails.identified.keys, graph.trails.deidentified.keys
    return int(sum(truth.get(str(km[a])) != str(kn[b]) for a, b in zip(m.tolist(), n.tolist(), strict=True)))


def population(households: int, locations: int, p: float, seed: int):  # noqa: ANN201
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation import simulate as sim

    rel = sim.simulate_households(households, p, locations=locations, reserved="none", seed=seed)
    t = time.perf_counter()
    graph = build_linkgraph(build_trails(rel, "none", "one-to-many"))
    truth = dict(zip(rel.truth["identified"].astype(str), rel.truth["deidentified"].astype(str), strict=True))
    return graph, truth, time.perf_counter() - t


def exact_case(graph, truth: dict, symmetry: bool = True):  # noqa: ANN001, ANN201
    from graphlink.analysis.onetomany import SearchBudget, _Exact

    def run() -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mc = _Exact(graph, SearchBudget(), False, True, symmetry=symmetry).run()
        verdict = {True: "consistent", False: "refuted", None: "not checked"}[mc.consistent]
        sizes = "; ".join(f"refused {r.counts[1]:,} people / {r.counts[0]:,} households / {r.counts[2]:,} pairs"
                          for r in mc.unsolved)
        return (f"{mc.n_true_loves:,} pairs, {wrong(graph, mc.pair_m, mc.pair_n, truth)} wrong, {verdict}"
                + (f" ({sizes})" if sizes else ""))
    return run


def old_case(graph, truth: dict):  # noqa: ANN001, ANN201
    def run() -> str:
        if graph.n_expanded_edges > 50_000_000:        # a shared machine: its matching would need many GB
            return f"not run: {graph.n_expanded_edges:,} element-level pairs to match"
        m, n = old_certain(graph)
        return f"{len(m):,} pairs, {wrong(graph, m, n, truth)} wrong"
    return run


CASES = {"twins": ("exact solver, search on twin classes", exact_case),
         "elements": ("exact solver, search on element pairs (previous)",
                      lambda graph, truth: exact_case(graph, truth, symmetry=False)),
         "dm": ("global DM (older, unsound)", old_case)}


def low_entropy(runs: int) -> None:
    """The ``graphlink experiment households`` populations (many identical trails): every method per step."""
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.experiments.common import release_of, task_seed
    from graphlink.simulation.simulate import household_population

    probs = 0.5 * np.arange(1, 101, dtype=float) ** -0.6
    print(f"low entropy: {runs} runs of 400 households, Zipf visits over 100 sites, nothing withheld")
    totals = {name: 0.0 for name in CASES}
    for run in range(runs):
        pop = household_population(400, probs, reserved="none", seed=task_seed(0, run))
        for k in (5, 10, 20, 30, 40):
            rel = release_of(pop, range(k))
            graph = build_linkgraph(build_trails(rel, "none", "one-to-many"))
            truth = dict(zip(rel.truth["identified"].astype(str), rel.truth["deidentified"].astype(str),
                             strict=True))
            print(f" run {run}, {k} sites: {graph.n_identified:,} people in {len(graph.id_class_size):,} classes, "
                  f"{graph.n_deidentified:,} households in {len(graph.de_class_size):,} classes", flush=True)
            for name, (label, case) in CASES.items():
                dt, _, _ = measure(f"{name}: {label}", case(graph, truth))
                totals[name] += dt
    for name, t in totals.items():
        print(f"low entropy total {name}: {t:.1f} s")
    print(f"load average after the low-entropy populations: {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--populations", type=int, default=100)
    ap.add_argument("--subjects", type=int, default=5000, help="households per population (graphlink simulate "
                    "--households --subjects)")
    ap.add_argument("--locations", type=int, default=30)
    ap.add_argument("--p", type=float, default=0.2)
    ap.add_argument("--large", type=int, default=100_000, help="households of the large case (0: skip)")
    ap.add_argument("--lowentropy", type=int, default=10, help="runs of the low-entropy households populations")
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    if a.lowentropy:
        low_entropy(a.lowentropy)
    print(f"{a.populations} populations: {a.subjects:,} households x {a.locations} locations, p = {a.p}, nothing "
          "withheld")
    totals = {name: [0.0, 0.0] for name in CASES}
    for seed in range(a.populations):
        graph, truth, t_graph = population(a.subjects, a.locations, a.p, seed)
        print(f" seed {seed}: {graph.n_identified:,} people, {graph.n_deidentified:,} households, "
              f"{graph.n_expanded_edges:,} candidate pairs; link graph {t_graph:.2f} s", flush=True)
        for name, (label, case) in CASES.items():
            dt, rss, _ = measure(f"{name}: {label}", case(graph, truth))
            totals[name][0] += dt
            totals[name][1] = max(totals[name][1], rss)
    for name, (t, rss) in totals.items():
        print(f"total {name}: {t:.1f} s over {a.populations} populations, peak RSS {rss:.0f} MiB")
    print(f"load average after the populations: {os.getloadavg()}")
    if a.large:
        for locations, p in ((a.locations, a.p), (100, 0.05)):
            graph, truth, t_graph = population(a.large, locations, p, 0)
            print(f"large: {a.large:,} households x {locations} locations, p = {p}: {graph.n_identified:,} people, "
                  f"{graph.n_expanded_edges:,} candidate pairs; link graph {t_graph:.1f} s", flush=True)
            for name, (label, case) in CASES.items():
                measure(f"{name}: {label}", case(graph, truth))
        print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
