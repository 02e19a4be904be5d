"""Calibration of the pair probabilities (docs/experiments.md#calibration): predicted against observed on simulated
populations with known truth, beside the thesis's 1/|E_y| reading.

Runs ``graphlink.simulation.experiments.calibration.calibrate`` in a forked child on one core
(benchmarks/_measure.py) and prints the sizes, wall time, peak RSS, the reliability tables (every pair of the union
of all maximum matchings; each person's most likely record) with per-tenth and family-wise intervals, the attacker's
expected against actual hits, and the verdict (per-tenth misses against chance, the family-wise pass).

    python benchmarks/calibrate_risk.py                     # 100 uniform + 100 Zipf populations (about 8 minutes)
    python benchmarks/calibrate_risk.py --quick             # the app's small preset, 5 populations each (seconds)
    python benchmarks/calibrate_risk.py --populations 20 --seed 3 --markdown
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import measure  # noqa: E402


class Tables(dict):
    """The child's results (a dict), printed by the harness as one short line."""

    def __repr__(self) -> str:
        return f"{len(self['figures'])} populations"


READING_WORDS = {"assignments": "share of consistent assignments", "thesis": "thesis 1/|E_y|"}


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if x != x else f"{x:.{digits}f}"


def _yes(inside: bool, markdown: bool) -> str:
    return "yes" if inside else "**no**" if markdown else "NO"


def print_tables(table, markdown: bool) -> None:
    """Per level and profile: the two readings' deciles side by side."""
    from graphlink.simulation.experiments.calibration import LEVELS, PROFILES

    for level, words in LEVELS.items():
        for profile in PROFILES:
            print(f"\n{profile} visits, {words}:")
            a = table[(table.level == level) & (table.profile == profile) & (table.reading == "assignments")]
            t = table[(table.level == level) & (table.profile == profile) & (table.reading == "thesis")]
            unit = "pairs" if level == "pairs" else "people"
            head = ["decile", unit, "predicted", "right", "95 % (bootstrap)", "in?", "family-wise", "in?",
                    f"thesis: {unit}", "predicted", "right", "95 % (bootstrap)", "in?", "family-wise", "in?"]
            rows = []
            for (_, x), (_, y) in zip(a.iterrows(), t.iterrows(), strict=True):
                cells = [x["bin"]]
                for r in (x, y):
                    cells += [f"{int(r['count']):,}", _fmt(r["mean_predicted"]), _fmt(r["observed"]),
                              f"{_fmt(r['boot_low'])}–{_fmt(r['boot_high'])}" if r["count"] else "—",
                              _yes(r["within"], markdown) if r["count"] else "",
                              f"{_fmt(r['family_low'])}–{_fmt(r['family_high'])}" if r["count"] else "—",
                              _yes(r["within_family"], markdown) if r["count"] else ""]
                rows.append(cells)
            if markdown:
                print("| " + " | ".join(head) + " |")
                print("|" + "---|" * len(head))
                for cells in rows:
                    print("| " + " | ".join(cells) + " |")
            else:
                widths = [max(len(h), *(len(c[i]) for c in rows)) for i, h in enumerate(head)]
                print("  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)))
                for cells in rows:
                    print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--populations", type=int, default=None, help="populations per profile (default 100; 5 quick)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="the small preset (100 subjects × 8 locations)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args()
    if args.populations is not None and args.populations < 2:
        ap.error("--populations: expected at least 2 (the bootstrap resamples populations)")
    from graphlink.simulation.experiments import calibration as cal

    cfg = dict(cal.SMALL if args.quick else cal.FULL)
    cfg["runs"] = args.populations if args.populations is not None else (5 if args.quick else 100)
    print(f"calibration: {cfg['runs']} populations per profile (uniform p {cfg['p']}, Zipf alpha {cfg['alpha']}), "
          f"{cfg['subjects']} subjects × {cfg['locations']} locations, de-identified records withheld with "
          f"probability {cfg['withhold']}; chain at least {cfg['sweeps']} sweeps and 50 per row for blocks beyond the "
          f"exact budget; "
          f"{cfg['resamples']} bootstrap resamples; seed {args.seed}; one core", flush=True)

    def run() -> dict:
        res = cal.calibrate(cfg, args.seed, workers=1)
        f = res["figures"]
        return Tables(table=res["table"], attacker=res["attacker"], figures=f, verdict=res["verdict"])

    seconds, rss, out = measure("calibrate (simulate, link graph, probabilities, tables)", run)
    if out is None:
        sys.exit(1)
    f = out["figures"]
    print(f"\n{len(f)} populations: {int(f['people'].sum()):,} people, {int(f['records'].sum()):,} records, "
          f"{int(f['pairs'].sum()):,} pairs in the union of all maximum matchings "
          f"({int(f['estimated_pairs'].sum()):,} in blocks estimated by the chain), "
          f"{int(f['outside_union'].sum()):,} link edges outside it, of which right: "
          f"{int(f['outside_union_right'].sum())}; pair probabilities {f['seconds'].sum():.1f} s of the "
          f"{seconds:.1f} s (median {np.median(f['seconds']):.3f} s per population); peak RSS {rss:.0f} MiB")
    print_tables(out["table"], args.markdown)
    print("\nattacker naming each person's most likely record (95 %: the spread of right − expected over the "
          "populations; family-wise: both profiles' differences together, each at 97.5 %):")
    for r in out["attacker"].itertuples():
        print(f"  {r.profile:<8} {READING_WORDS[r.reading]:<32} expected right {r.expected_right:9.1f} "
              f"± {r.expected_right_error:5.1f} (chains)   "
              f"right {r.right:6,}   difference {r.difference:+8.1f} ± {r.difference_95:6.1f} "
              f"{'within' if r.within else 'OUTSIDE'}, ± {r.difference_family:6.1f} family-wise "
              f"{'within' if r.within_family else 'OUTSIDE'}")
        if r.reading == "assignments":
            print(f"  {'':<8} {'the choices it values (halves)':<32} right {r.right_halves:9.1f}   difference "
                  f"{r.difference_halves:+8.1f} ± {r.difference_halves_family:6.1f} family-wise "
                  f"{'within' if r.within_halves_family else 'OUTSIDE'}")
    print("\nshare of the consistent assignments:")
    for line in out["verdict"]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
