"""``calibration`` — are the pair probabilities (docs/risk.md) right as often as they say?  Our addition.

Simulated populations with known truth, uniform visits (thesis §5.6) and Zipf visits (eq. 5.1), the de-identified
side withholding each record with probability ``withhold``.  Per population: FillTrails (Alg. 1), the link graph,
:func:`graphlink.analysis.risk.pair_probabilities` (exact blocks, and the Markov chain with a fixed number of
sweeps for the large ones, so the same seed gives the same numbers), and every pair of the union of all maximum
matchings scored against the truth.  Pooled per profile into a reliability table by decile
(:func:`graphlink.analysis.calibration.reliability_table`, cluster bootstrap over the populations) for the
assignment shares and, beside it, for the thesis's 1/|E_y| (Malin 2006 eq. 6.6); and the attacker who names each
person's most likely record: expected right against right.  O(populations · (n·|C| + E + chain sweeps · block)).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from graphlink.fileio import write_frame
from graphlink.simulation.experiments.common import (
    ExperimentResult,
    RunSettings,
    parallel_map,
    population_trails,
    task_seed,
    with_presets,
)
from graphlink.simulation.experiments.figures import figure, label, save
from graphlink.simulation.experiments.registry import experiment

FULL = {"subjects": 200, "locations": 10, "p": 0.3, "alpha": 0.6, "withhold": 0.3, "runs": 100, "sweeps": 2000,
        "resamples": 2000}
SMALL = {"subjects": 100, "locations": 8, "p": 0.3, "alpha": 0.6, "withhold": 0.3, "runs": 3, "sweeps": 400,
         "resamples": 1000}
PROFILES = ("uniform", "zipf")
#: the two readings scored: the column of :func:`graphlink.analysis.calibration.pair_outcomes` for each
READINGS = {"assignments": "probability", "thesis": "thesis_probability"}
#: the two tables: every pair of the union, and each person's most likely record (what an attacker names)
LEVELS = {"pairs": "every pair", "people": "each person's most likely record"}
PER = {"pairs": "per pair", "people": "per person's most likely record"}


def population(profile: str, cfg: dict, seed: int, run: int):
    """The run's population of one profile (its seed depends on the profile, the run and ``seed`` only)."""
    from graphlink.simulation.simulate import uniform_population, zipf_population

    s = task_seed(seed, PROFILES.index(profile), run)
    if profile == "uniform":
        return uniform_population(cfg["subjects"], cfg["locations"], cfg["p"], withhold=cfg["withhold"],
                                  reserved="deidentified", seed=s)
    return zipf_population(cfg["subjects"], cfg["locations"], cfg["alpha"], withhold=cfg["withhold"],
                           reserved="deidentified", seed=s)


def measure(task: tuple) -> dict[str, Any]:
    """One population: its scored pairs (a frame) and the attacker's figures (a dict)."""
    import time

    from graphlink.analysis.calibration import pair_outcomes
    from graphlink.analysis.risk import pair_probabilities
    from graphlink.core.linkgraph import build_linkgraph

    profile, cfg, seed, run = task
    pop = population(profile, cfg, seed, run)
    truth = pop.truth_frame()
    t0 = time.perf_counter()
    risk = pair_probabilities(build_linkgraph(population_trails(pop)), budget=None, sweeps=cfg["sweeps"],
                              seed=int(seed) * 100_003 + run)
    seconds = time.perf_counter() - t0
    every = risk.pairs()
    outside = every[every["thesis_probability"].to_numpy() == 0]
    true = set(zip(truth["identified"], truth["deidentified"], strict=True))
    pairs = pair_outcomes(risk, truth)
    pairs.insert(0, "run", run)
    pairs.insert(0, "profile", profile)
    s = risk.summary(truth=truth)
    figures = {"profile": profile, "run": run, "people": s.people, "records": s.records,
               "pairs": len(pairs), "estimated_pairs": int((~pairs["exact"]).sum()),
               "outside_union": len(outside),
               "outside_union_right": int(sum((a, b) in true for a, b in
                                              zip(outside["identified"], outside["deidentified"], strict=True))),
               "expected_right": s.expected_correct_best, "expected_right_error": s.expected_correct_best_error,
               "right": s.correct_best, "right_halves": s.correct_best_cross_fitted,
               "thesis_expected_right": s.thesis_expected_correct_best, "thesis_right": s.thesis_correct_best,
               "seconds": seconds}
    cols = ["profile", "run", "probability", "thesis_probability", "exact", "correct"]
    # per person and reading: the most likely record (ties: the first), as the attacker names it
    people = {}
    for reading, column in READINGS.items():
        best = pairs.sort_values(["identified", column], ascending=[True, False], kind="stable") \
            .drop_duplicates("identified")
        people[reading] = best[cols].assign(reading=reading)
    return {"pairs": pairs[cols], "people": pd.concat(people.values(), ignore_index=True), "figures": figures}


def tables(pairs: pd.DataFrame, people: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """The reliability tables: one block of rows per level (``pairs``: every pair of the union; ``people``: each
    person's most likely record), profile and reading.

    The family-wise intervals (:func:`graphlink.analysis.calibration.reliability_table`) hold all the non-empty
    tenths of the assignment shares' tables together (the study's claim: m of them, each at 1 − 0.05/m); the
    thesis's tables get intervals at the same level, for comparison."""
    from graphlink.analysis.calibration import bin_of, reliability_table

    chosen = []
    for level, frame in (("pairs", pairs), ("people", people)):
        for profile in PROFILES:
            for reading, column in READINGS.items():
                p = frame[frame["profile"] == profile]
                if level == "people":
                    p = p[p["reading"] == reading]
                if not p.empty:
                    chosen.append((level, profile, reading, column, p))
    family = max(1, sum(len(np.unique(bin_of(p[column].to_numpy()))) for _, _, reading, column, p in chosen
                        if reading == "assignments"))
    parts = []
    for level, profile, reading, column, p in chosen:
        t = reliability_table(p[column].to_numpy(), p["correct"].to_numpy(), p["run"].to_numpy(),
                              resamples=resamples, seed=seed, family=family).frame()
        t.insert(0, "reading", reading)
        t.insert(0, "profile", profile)
        t.insert(0, "level", level)
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def attacker(figures: pd.DataFrame) -> pd.DataFrame:
    """Per profile and reading: expected right (cross-fitted where the chain estimates: docs/risk.md#figures; with
    the chains' 95 % half-width, combined in quadrature over the populations) and right for the attacker who names
    each person's most likely record, with a 95 % interval for right − expected from the spread over the
    populations (normal, the populations independent; inside one population any dependence is allowed), and its
    family-wise counterpart:
    the study tests one such difference per profile for the assignment shares, so each gets 1 − 0.05/profiles
    (Bonferroni; 97.5 % for two)."""
    from graphlink.analysis.calibration import Z95, family_z

    z_family = family_z(max(1, figures["profile"].nunique()))
    rows = []
    for profile, f in figures.groupby("profile", sort=False):
        for reading, prefix in (("assignments", ""), ("thesis", "thesis_")):
            diff = (f[f"{prefix}right"] - f[f"{prefix}expected_right"]).to_numpy(float)
            spread = float(diff.std(ddof=1)) * np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
            half, half_family = Z95 * spread, z_family * spread
            # the chains' own 95 % half-widths of the expected figure, combined over the independent populations
            chains = float(np.sqrt(np.sum(f["expected_right_error"].to_numpy(float) ** 2))) if not prefix else 0.0
            # the same choices the cross-fitted figure values (each half of the chains' most likely records)
            halves = (f["right_halves"] - f["expected_right"]).to_numpy(float) if not prefix else diff
            h_spread = float(halves.std(ddof=1)) * np.sqrt(len(halves)) if len(halves) > 1 else float("nan")
            rows.append({"profile": profile, "reading": reading, "populations": len(f),
                         "people": int(f["people"].sum()), "expected_right": float(f[f"{prefix}expected_right"].sum()),
                         "expected_right_error": chains,
                         "right": int(f[f"{prefix}right"].sum()), "difference": float(diff.sum()),
                         "difference_95": half, "within": bool(abs(diff.sum()) <= half),
                         "difference_family": half_family, "within_family": bool(abs(diff.sum()) <= half_family),
                         "right_halves": float(f["right_halves" if not prefix else "thesis_right"].sum()),
                         "difference_halves": float(halves.sum()), "difference_halves_family": z_family * h_spread,
                         "within_halves_family": bool(abs(halves.sum()) <= z_family * h_spread)})
    return pd.DataFrame(rows)


def verdict(table: pd.DataFrame, att: pd.DataFrame) -> list[str]:
    """The study's pass criterion in words, for the assignment shares: per tenth (how many miss their 95 %
    interval, against the binomial chance of that many misses for exact probabilities, and which) and family-wise (every
    tenth, and every attacker difference, inside its family-wise interval).  O(rows)."""
    from graphlink.analysis.calibration import chance_misses

    t = table[(table.reading == "assignments") & (table["count"] > 0)]
    n = len(t)
    missed = int((~t["within"].astype(bool)).sum())
    fw_in = int(t["within_family"].astype(bool).sum())
    family = int(t["family"].iloc[0]) if n else 0
    a = att[att.reading == "assignments"]
    a_in = int(a["within_family"].astype(bool).sum())
    level = 100 * (1 - 0.05 / max(1, len(a)))

    def where(outside: pd.DataFrame) -> str:
        return "; ".join(f"{profile}, {LEVELS[level]}: " + ", ".join(g["bin"])
                         for (level, profile), g in outside.groupby(["level", "profile"], sort=False))

    per_tenth = where(t[~t["within"].astype(bool)])
    family_out = where(t[~t["within_family"].astype(bool)])
    return [
        f"per tenth: {missed} of {n} tenths outside their 95 % interval (about {0.05 * n:.1f} expected by chance "
        f"alone; {missed} or more with probability {chance_misses(missed, n):.2f})"
        + (f": {per_tenth}" if per_tenth else ""),
        f"family-wise (95 % for all {family} tenths together, each at {100 * (1 - 0.05 / max(1, family)):.3f} %): "
        f"{fw_in} of {n} within: " + ("passes" if fw_in == n else f"fails ({family_out})"),
        f"attacker, family-wise (95 % for the {len(a)} differences together, each at {level:.1f} %): {a_in} of "
        f"{len(a)} within: {'passes' if a_in == len(a) else 'fails'}",
    ]


def calibrate(cfg: dict, seed: int, *, workers: int | None = 1, progress: Any = False) -> dict[str, pd.DataFrame]:
    """Run the whole study on ``cfg`` (``runs`` populations per profile): ``pairs``, ``figures`` (per
    population), ``table`` (:func:`tables`) and ``attacker`` (:func:`attacker`)."""
    tasks = [(profile, cfg, seed, r) for profile in PROFILES for r in range(cfg["runs"])]
    out = parallel_map(measure, tasks, workers=workers, progress=progress, description="calibration")
    pairs = pd.concat([o["pairs"] for o in out], ignore_index=True)
    people = pd.concat([o["people"] for o in out], ignore_index=True)
    figures = pd.DataFrame([o["figures"] for o in out])
    table, att = tables(pairs, people, cfg["resamples"], seed), attacker(figures)
    return {"pairs": pairs, "people": people, "figures": figures, "table": table, "attacker": att,
            "verdict": verdict(table, att)}


@experiment("calibration", "Calibration of the pair probabilities: predicted against observed by decile, uniform "
            "and Zipf populations, beside the thesis's equal-candidates reading")
@with_presets(SMALL, FULL)
def run(s: RunSettings) -> ExperimentResult:
    """Write ``calibration.csv`` (the reliability tables), ``calibration-attacker.csv`` and ``calibration.png``."""
    cfg, d = s.cfg, s.out
    res = calibrate(cfg, s.seed, workers=1 if s.small else s.workers, progress=s.progress)
    table, att, fig_rows = res["table"], res["attacker"], res["figures"]
    write_frame(table, d / "calibration.csv")
    write_frame(att, d / "calibration-attacker.csv")
    fig, axes = figure(2, len(PROFILES), size=(10, 8), dpi=85, sharex=True, sharey=True)
    for row, level in enumerate(LEVELS):
        for i, profile in enumerate(PROFILES):
            ax = axes[row][i]
            ax.plot([0, 1], [0, 1], color="gray", lw=0.8, ls=":", label="perfect calibration")
            for reading, colour, name in (("assignments", "tab:blue", "share of consistent assignments"),
                                          ("thesis", "tab:orange", "thesis: every candidate equally likely")):
                t = table[(table.level == level) & (table.profile == profile) & (table.reading == reading)
                          & (table["count"] > 0)]
                lo = (t["observed"] - t["boot_low"]).clip(lower=0).fillna(0)
                hi = (t["boot_high"] - t["observed"]).clip(lower=0).fillna(0)
                ax.errorbar(t["mean_predicted"], t["observed"], yerr=[lo, hi], fmt="o-", ms=4, capsize=3,
                            color=colour, label=name)
            label(ax, title=f"{profile} visits: {LEVELS[level]}",
                  xlabel="predicted probability (mean per decile)" if row == 1 else None,
                  ylabel="share right" if i == 0 else None, legend=row == 0 and i == 0)
    save(fig, d / "calibration.png", suptitle=f"Calibration: {cfg['runs']} populations per profile, "
         f"{cfg['subjects']} subjects, {cfg['locations']} locations, withhold {cfg['withhold']}")
    outside = int(fig_rows["outside_union_right"].sum())
    lines = []
    summary: dict[str, Any] = {"outside_union_right": outside, "wrong": outside}
    for profile in PROFILES:
        for reading in READINGS:
            within = []
            for level in LEVELS:
                t = table[(table.level == level) & (table.profile == profile) & (table.reading == reading)
                          & (table["count"] > 0)]
                within.append(f"{int(t['within'].sum())} of {len(t)} deciles within their 95 % interval, "
                              f"{int(t['within_family'].sum())} within the family-wise one ({PER[level]})")
                summary[f"{profile}_{reading}_{level}_within"] = int(t["within"].sum())
                summary[f"{profile}_{reading}_{level}_within_family"] = int(t["within_family"].sum())
                summary[f"{profile}_{reading}_{level}_deciles"] = len(t)
            a = att[(att.profile == profile) & (att.reading == reading)].iloc[0]
            lines.append(f"{profile}, {reading}: " + ", ".join(within) + f"; most likely record: "
                         f"{a['expected_right']:.1f} expected right, {a['right']} right "
                         f"(difference {a['difference']:+.1f}; 95 %: ±{a['difference_95']:.1f}, family-wise: "
                         f"±{a['difference_family']:.1f})")
    text = "\n".join(lines + res["verdict"]) + (
        f"\npairs outside the union of all maximum matchings that are right: {outside} (the model says 0)"
        f"\npairs estimated by the chain: {int(fig_rows['estimated_pairs'].sum()):,} of "
        f"{int(fig_rows['pairs'].sum()):,}"
        "\nthesis (Malin 2006 eq. 6.6): every candidate of a record equally likely; graphlink: the share of the "
        "consistent assignments, the posterior under the simulator's model")
    return ExperimentResult("calibration", table, d / "calibration.csv", d / "calibration.png", text, summary,
                            extra_files=[d / "calibration-attacker.csv"])
