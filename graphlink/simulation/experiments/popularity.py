"""``popularity`` — thesis Figures 5.5 and 5.6 (§5.3): REIDIT-C re-identification as locations are added from
most to least visited, and the reverse, on a Zipf population (eq. 5.1).

For each population and each prefix of k locations (in popularity order or reverse), we count the subjects
*discovered* (non-empty trail over those k locations — the thesis's "theoretical" maximum) and those
re-identified by REIDIT-C (unique trail, Alg. 2/3, by sorting). O(runs · |C| · n log n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphlink.fileio import write_frame
from graphlink.simulation.experiments.common import (
    ExperimentResult,
    RunSettings,
    reidit_c_matrix,
    task_seed,
    with_presets,
)
from graphlink.simulation.experiments.figures import figure, label, save
from graphlink.simulation.experiments.registry import experiment
from graphlink.simulation.simulate import zipf_population

#: (subjects, locations): many subjects per location (like CF) and few (like Homenet, ratio -> 0)
FULL = {"populations": [(1000, 100), (100, 400)], "alpha": 1.0, "runs": 100}
SMALL = {"populations": [(200, 30), (50, 100)], "alpha": 1.0, "runs": 3}
ORDERS = ("most-to-least", "least-to-most")


def _measure(task: tuple) -> list[dict[str, Any]]:
    n, C, alpha, seed, run = task
    pop = zipf_population(n, C, alpha, seed=task_seed(seed, run))
    rows = []
    for order in ORDERS:
        cols = np.arange(C) if order == "most-to-least" else np.arange(C)[::-1]
        for k in range(1, C + 1):
            v = pop.visits[:, cols[:k]]
            hit, ok = reidit_c_matrix(v, v)
            rows.append({"population": f"{n} subjects x {C} locations", "order": order, "run": run,
                         "locations_added": k, "subjects": n, "locations": C,
                         "discovered": int(v.any(axis=1).sum()), "reidentified": hit, "correct": ok})
    return rows


@experiment("popularity", "Figures 5.5/5.6: REIDIT-C as Zipf locations are added most->least visited and "
            "the reverse")
@with_presets(SMALL, FULL)
def run(s: RunSettings) -> ExperimentResult:
    """Write ``popularity.csv`` (per run) and ``popularity.png`` (means ± sd, both orders)."""
    cfg, d = s.cfg, s.out
    tasks = [(n, C, cfg["alpha"], s.seed + 7919 * i, r) for i, (n, C) in enumerate(cfg["populations"])
             for r in range(cfg["runs"])]
    df = s.rows(_measure, tasks, "popularity")
    write_frame(df, d / "popularity.csv")
    g = df.groupby(["population", "subjects", "locations", "order", "locations_added"]).agg(
        discovered=("discovered", "mean"), reidentified=("reidentified", "mean"),
        sd=("reidentified", "std")).reset_index()
    g["sd"] = g["sd"].fillna(0.0)
    pops = list(dict.fromkeys(df["population"]))
    fig, axes = figure(len(pops), 2, size=(10, 3.8 * len(pops)), dpi=80)
    for r, pop in enumerate(pops):
        for ax, order, fig_no in zip(axes[r], ORDERS, ("5.5", "5.6"), strict=True):
            p = g[(g.population == pop) & (g.order == order)]
            ax.plot(p["locations_added"], p["discovered"], color="gray", label="discovered (theoretical max)")
            ax.errorbar(p["locations_added"], p["reidentified"], yerr=p["sd"], color="tab:blue", lw=1.2,
                        elinewidth=0.5, label="re-identified (REIDIT-C)")
            label(ax, title=f"Figure {fig_no} ({order.replace('-', ' ')}): {pop}", title_size=10,
                  xlabel="number of locations added (by popularity rank)", ylabel="subjects",
                  legend=ax is axes[0][0])
    save(fig, d / "popularity.png", suptitle=f"Zipf alpha = {cfg['alpha']}, {cfg['runs']} populations each")

    lines, summary = [], {}
    for pop in pops:
        part = []
        for order in ORDERS:
            p = g[(g.population == pop) & (g.order == order)]
            C = int(p["locations"].iloc[0])
            vals = []
            for f in (0.25, 0.5, 1.0):
                row = p[p.locations_added == max(1, int(round(f * C)))].iloc[0]
                share = row["reidentified"] / row["discovered"] if row["discovered"] else 0.0
                vals.append(share)
                summary[f"{pop} {order} {int(100 * f)}pct"] = float(share)
            part.append(f"{order}: {', '.join(f'{100 * v:.0f}%' for v in vals)}")
        lines.append(f"{pop} — re-identified/discovered after 25/50/100% of locations: " + "; ".join(part))
    lines.append("thesis: most->least is slow to approach the theoretical maximum; least->most re-identifies "
                 "almost every discovered subject early when few subjects share a location (rate exponential "
                 "when subjects per location is large, logarithmic when it tends to 0). "
                 f"Wrong re-identifications: {int((df.reidentified - df.correct).sum())}.")
    text = "\n".join(lines)
    return ExperimentResult("popularity", df, d / "popularity.csv", d / "popularity.png", text, summary)
