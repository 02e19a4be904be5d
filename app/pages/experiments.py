"""Experiments page: run the registered simulation experiments on small settings and show their outputs."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink.simulation.experiments import registry
from graphlink_app import session
from graphlink_app.components import charts
from graphlink_app.components.labels import EXPERIMENT_LABELS, label
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

st.title("Experiments")
st.caption("The thesis's simulation experiments (Malin 2006, chapter 5, and the protection experiments of chapter "
           "9), from the registry the command line uses too. Here they run at a small size, so they finish in "
           "seconds; the page opens on a first result with one run per setting.")


@dataclass(frozen=True)
class Plot:
    """How the app draws an experiment's table: ``x`` against the mean of each ``series`` column over the runs,
    one line per series (or per ``colour`` value), one panel per ``facet`` value."""

    x: str
    x_title: str
    series: dict[str, str]
    y_title: str
    colour: str | None = None
    facet: str | None = None
    facet_title: str = ""
    colour_title: str | None = None
    integer_x: bool = True
    scale: float = 1.0
    log_x: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


#: experiments the app draws itself (legend beside the plot, whole numbers on count axes); the others show the
#: figure the experiment writes
PLOTS = {
    "als-gain": Plot("locations", "Locations", {"true_loves": "certain, trails alone",
                                                 "true_loves_with_als": "certain, trails + quasi-identifiers",
                                                 "reidit_i_with_als": "REIDIT-I, trails + quasi-identifiers",
                                                 "als_only": "quasi-identifiers alone"},
                     "Certain re-identifications"),
    "k-reidentification": Plot("k", "k", {"fraction": "k-re-identified by REIDIT-I-K"},
                               "Samples k-re-identified (%)", scale=100),
    "popularity": Plot("locations_added", "Locations added", {"reidentified": "re-identified (REIDIT-C)"},
                       "Re-identified people", colour="order", facet="population", facet_title="Population",
                       colour_title="Locations added"),
    "households": Plot("websites", "Websites (most to least visited)",
                       {"individuals": "people re-identified", "households_hit": "households hit"},
                       "Count", facet="withhold", facet_title="Share of purchases not recorded"),
    "withholding": Plot("locations", "Locations (most to least visited)", {"reidentified": "re-identified"},
                        "Re-identified people (REIDIT-I)", colour="miss", colour_title="Share withheld"),
    "dedup": Plot("k", "k", {"withheld": "records withheld"}, "Records withheld", colour="method",
                 colour_title="Method"),
    "auc": Plot("locations", "Locations", {"auc": "area under the curve"},
                "Area under the mean re-identification curve", colour="algorithm", facet="distribution",
                facet_title="Popularity", integer_x=True),
    "shift-shape": Plot("locations", "Locations", {"shift": "shift", "shape": "shape"}, "Value",
                        colour="algorithm", facet="distribution", facet_title="Popularity"),
    "scaling": Plot("subjects", "People in the population", {"fraction": "re-identified"},
                    "Re-identified (%)", colour="algorithm", facet="locations", facet_title="Locations", scale=100,
                    log_x=True, integer_x=False),
}


def chart(frame: pd.DataFrame, plot: Plot) -> alt.Chart | None:
    """The experiment's table as lines of means over the runs; None when the table lacks the columns."""
    need = [plot.x, *plot.series, *(c for c in (plot.colour, plot.facet) if c)]
    if not all(c in frame.columns for c in need):
        return None
    keys = [plot.x, *(c for c in (plot.colour, plot.facet) if c)]
    g = frame.groupby(keys, as_index=False)[list(plot.series)].mean()
    long = g.melt(id_vars=keys, value_vars=list(plot.series), var_name="measure", value_name="value")
    long["value"] = long["value"] * plot.scale
    long["series"] = long["measure"].map(plot.series)
    if plot.colour:
        long["series"] = (long[plot.colour].astype(str) if len(plot.series) == 1
                          else long[plot.colour].astype(str) + ", " + long["series"])
    long = charts.merge_equal_series(long, [plot.x, *(c for c in (plot.facet,) if c)])
    domain = list(dict.fromkeys(long["series"]))
    x_axis = alt.Axis(tickMinStep=1, format=",d") if plot.integer_x else alt.Axis()
    x_scale = alt.Scale(type="log") if plot.log_x else alt.Scale(zero=False)
    base = alt.Chart(long).mark_line(point=True).encode(
        x=alt.X(f"{plot.x}:Q", title=plot.x_title, axis=x_axis, scale=x_scale),
        y=alt.Y("value:Q", title=plot.y_title),
        color=alt.Color("series:N", scale=charts.category_scale(domain[:8]) if len(domain) <= 8 else alt.Undefined,
                        # a long entry (series drawn as one line) goes below the plot, where it has the width
                        legend=alt.Legend(title=plot.colour_title, labelLimit=900, direction="vertical",
                                          orient="bottom" if max(map(len, domain)) > 44 and not plot.facet
                                          else "right")),
        strokeDash=alt.StrokeDash("series:N", legend=None),
        tooltip=[*keys, "series", alt.Tooltip("value:Q", format=",.3~f")]).properties(height=320)
    if plot.facet:   # panels side by side, the legend to their right: it never lies over a line
        return base.properties(width=300, height=280).facet(
            column=alt.Column(f"{plot.facet}:N", title=plot.facet_title or plot.facet)).resolve_scale(x="independent")
    return base


#: the experiments' descriptions in words where the registry's cite the thesis's numbering
EXPERIMENT_DESCRIPTIONS = {
    "als-gain": "Trails and quasi-identifiers in one graph: certain re-identifications when a pair must also agree "
                "on the generalized values (Malin 2002), against trails alone",
    "dedup": "Greedy against forced deduplication (and flow deduplication) on uniform populations (Malin 2006, "
             "chapter 9), checked by the exact audit, with the gap to the exact optimum",
    "calibration": "Are the probabilities of the re-identification risk page right as often as they say? Simulated "
                   "populations with a known truth, their probabilities compared with who really belongs to which "
                   "record, beside the thesis's reading (every candidate record equally likely)",
}

#: the calibration's words: what was predicted, and the two kinds of visits simulated
READING_WORDS = {"assignments": "graphlink: share of the possible assignments",
                 "thesis": "the thesis's reading: every candidate equally likely"}
PROFILE_WORDS = {"uniform": "Every location equally popular", "zipf": "A few locations much more popular"}
LEVEL_WORDS = {"people": "each person's most likely record (what an attacker would name)",
               "pairs": "every possible pair of a person and a record"}
#: experiments whose first result needs more than one run per setting (calibration compares over populations)
FIRST_RUNS = {"calibration": 5}


def calibration_chart(table: pd.DataFrame, profile: str) -> alt.LayerChart:
    """Predicted against observed for one kind of visits: a point per tenth of the probability scale, its 95 %
    range as a bar, the diagonal where a prediction is right as often as it says."""
    t = table[(table["profile"] == profile) & (table["count"] > 0)].copy()
    t["series"] = t["reading"].map(READING_WORDS)
    domain = list(READING_WORDS.values())
    colour = alt.Color("series:N", scale=charts.category_scale(domain),
                       legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=900))
    axis = alt.Scale(domain=[0, 1])
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]})).mark_line(
        strokeDash=[4, 4], color="gray").encode(x="x:Q", y="y:Q")
    ranges = alt.Chart(t).mark_rule().encode(x=alt.X("mean_predicted:Q", scale=axis), y=alt.Y("boot_low:Q"),
                                             y2="boot_high:Q", color=colour)
    points = alt.Chart(t).mark_line(point=True).encode(
        x=alt.X("mean_predicted:Q", title="Predicted probability (average over a tenth of the scale)", scale=axis),
        y=alt.Y("observed:Q", title="Share that was right", scale=axis), color=colour,
        tooltip=[alt.Tooltip("series:N", title="Reading"), alt.Tooltip("bin:N", title="Predicted between"),
                 alt.Tooltip("count:Q", title="Count", format=",d"),
                 alt.Tooltip("mean_predicted:Q", title="Predicted on average", format=".3f"),
                 alt.Tooltip("observed:Q", title="Share right", format=".3f")])
    return alt.layer(diagonal, ranges, points).properties(title=PROFILE_WORDS.get(profile, profile), height=300)


def show_calibration(table: pd.DataFrame, attacker: pd.DataFrame | None) -> None:
    """The calibration experiment in words: the reliability chart and table per kind of visits, and the attacker's
    expected against actual right guesses."""
    st.markdown("A probability is trustworthy when, among the pairs it gives about 30 %, about 30 % are really "
                "right. The points then lie on the dashed diagonal. Each bar is the 95 % range of the share right, "
                "from re-drawing the simulated populations; with the few populations of a quick run the ranges "
                "are rough.")
    level = st.radio("What is scored", list(LEVEL_WORDS), format_func=LEVEL_WORDS.get, key="exp_cal_level",
                     horizontal=True)
    t = table[table["level"] == level]
    cols = st.columns(2)
    for col, profile in zip(cols, [p for p in PROFILE_WORDS if p in set(t["profile"])], strict=False):
        col.altair_chart(calibration_chart(t, profile))
    unit = "People" if level == "people" else "Pairs"
    shown = pd.DataFrame({
        "Visits": t["profile"].map(PROFILE_WORDS), "Reading": t["reading"].map(READING_WORDS),
        "Predicted between": t["bin"], unit: t["count"], "Predicted on average": t["mean_predicted"].round(3),
        "Share right": t["observed"].round(3),
        "95 % range of the share right": [f"{a:.3f} to {b:.3f}" if n else "" for a, b, n in
                                          zip(t["boot_low"], t["boot_high"], t["count"], strict=True)],
        "Prediction inside the range": ["yes" if w else ("no" if n else "") for w, n in
                                        zip(t["within"], t["count"], strict=True)]})
    with st.expander("The table by tenth of the probability scale", expanded=False):
        show_table(shown[t["count"].to_numpy() > 0])
    if attacker is not None and len(attacker):
        st.markdown("**An attacker who names each person's most likely record:** how many guesses each reading "
                    "expects to be right, and how many were.")
        show_table(pd.DataFrame({
            "Visits": attacker["profile"].map(PROFILE_WORDS), "Reading": attacker["reading"].map(READING_WORDS),
            "People": attacker["people"], "Expected right": attacker["expected_right"].round(1),
            "Right": attacker["right"],
            "Difference within its 95 % range": attacker["within"].map({True: "yes", False: "no"})}))


experiments = registry.load_all()

names = sorted(experiments)
name = st.selectbox("Experiment", names, key="exp_name", index=names.index("als-gain") if "als-gain" in names else 0,
                    format_func=lambda n: label(n, EXPERIMENT_LABELS))
st.markdown(f"**What it does:** {md(EXPERIMENT_DESCRIPTIONS.get(name, experiments[name].description))}.")
c1, c2 = st.columns(2)
runs = int(c1.number_input("Runs per setting", 1, 50, 3, key="exp_runs",
                           help="simulated populations per setting: more runs give smoother means"))
seed = int(c2.number_input("Seed", 0, 2**31 - 1, 1, key="exp_seed"))
#: the first result a visitor sees: one run per setting, computed once per server process
FIRST = (1, 1)


@st.cache_resource(max_entries=16, show_spinner=False)
def run_experiment(name: str, runs: int, seed: int) -> tuple[Any, Path]:
    """One small run, kept per server process (a cached function may not draw on the page: no progress bar)."""
    out = Path(tempfile.mkdtemp(prefix=f"graphlink-exp-{name}-"))
    result = experiments[name].run(runs=runs, seed=seed, out=out, small=True)
    return result, out


if st.button("Run experiment (small settings)", type="primary", key="exp_run"):
    st.session_state[session.EXPERIMENT_RAN] = (name, runs, seed)
if st.session_state.get(session.EXPERIMENT_RAN) != (name, runs, seed):
    runs, seed = FIRST_RUNS.get(name, FIRST[0]), FIRST[1]
    st.caption(f"Showing a first result: {runs} run(s) per setting, seed {seed}. Press **Run experiment** "
               "for the settings above.")

try:
    with st.spinner(f"Running {label(name, EXPERIMENT_LABELS)} ({runs:,} run(s) per setting)…"):
        result, out = run_experiment(name, runs, seed)
except (GraphlinkError, OSError) as exc:   # e.g. the figures' extra missing, or no room for the output files
    st.error("The experiment failed: " + one_line(exc))
    st.stop()

frame = getattr(result, "frame", None)
if frame is None and hasattr(result, "to_frame"):
    frame = result.to_frame()
images = sorted(out.rglob("*.png"))
tables = sorted(out.rglob("*.csv"))
drawn = chart(frame, PLOTS[name]) if isinstance(frame, pd.DataFrame) and name in PLOTS else None
calibrated = isinstance(frame, pd.DataFrame) and {"level", "reading", "mean_predicted", "boot_low"} <= set(frame)
if calibrated:
    attacker_csv = out / "calibration-attacker.csv"
    show_calibration(frame, pd.read_csv(attacker_csv) if attacker_csv.exists() else None)
    if images:
        with st.expander("The figures as the experiment writes them"):
            for img in images:
                st.image(str(img), caption=img.name)
elif drawn is not None:
    st.altair_chart(drawn)
    if images:
        with st.expander("The figures as the experiment writes them"):
            for img in images:
                st.image(str(img), caption=img.name)
else:
    for img in images:
        st.image(str(img), caption=img.name)
comparison = getattr(result, "comparison", None)
if comparison:   # the experiment's own note cites the thesis's numbering and symbols: for experts, folded away
    with st.expander("Comparison with the thesis (in its notation, for experts)"):
        st.text(str(comparison))
if isinstance(frame, pd.DataFrame) and not calibrated:   # the calibration's table is shown above, in words
    with st.expander("The results table (one row per run and setting)"):
        show_table(frame)
for t in tables:
    with st.expander("The table the experiment writes" + (f" ({len(tables)})" if len(tables) > 1 else "")):
        data = pd.read_csv(t)
        show_table(data)
        st.download_button("Download the table (CSV)", t.read_bytes(), file_name=t.name, mime="text/csv",
                           key=f"exp_dl_{t.name}")
if not images and not tables and frame is None:
    st.info("The experiment finished but wrote no plots or tables.")
