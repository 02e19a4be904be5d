"""Quasi-identifiers page: k-anonymity of one table (Sweeney), class sizes, anonymization and loss comparison, and
trails naming the people the k-anonymous table protects (:mod:`graphlink.qi.qitrails`).

Every number comes from ``graphlink.qi``; the page only picks the data and formats it.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink.qi import datasets
from graphlink.qi import hierarchy as H
from graphlink.qi.algorithms import ALGORITHMS, anonymize
from graphlink.qi.checks import check
from graphlink.qi.metrics import LOSSES
from graphlink.qi.risk import RISK_BOUNDS, RiskSummary, risk
from graphlink.qi.table import QITable, encode
from graphlink_app import session
from graphlink_app.components import charts
from graphlink_app.components.labels import QI_ALGORITHM_LABELS, QI_LOSS_LABELS, label
from graphlink_app.components.qi_upload import Matrices, upload_table
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

UPLOAD = "Upload a CSV"
SOURCES = {datasets.SPECS[n].title: n for n in ("cps1988", "acs12", "sweeney")} | {UPLOAD: None}
LABELS = QI_ALGORITHM_LABELS
MINGEN_ROWS = 16
BUCKETS = [(1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None)]



@st.cache_data(max_entries=8, show_spinner="Loading the dataset…")
def load_dataset(name: str) -> tuple[pd.DataFrame, Matrices, tuple[str, ...], str | None]:
    ds = datasets.load(name)
    return ds.frame, {c: h.matrix.tolist() for c, h in ds.hierarchies.items()}, ds.qi, ds.sensitive


@st.cache_resource(max_entries=16, show_spinner="Encoding the quasi-identifier…")
def encoded(token: str, qi: tuple[str, ...], _frame: pd.DataFrame, _hier: Matrices) -> QITable:
    return encode(_frame, qi, {c: H.Hierarchy(c, m) for c, m in _hier.items() if c in qi})


@st.cache_data(max_entries=64, show_spinner=False)
def run(token: str, qi: tuple[str, ...], k: int, algorithm: str, sup: float, loss: str, _table: QITable) -> dict:
    res = anonymize(_table, k, algorithm, max_suppression=sup, loss=loss)
    return {"summary": res.summary(), "frame": res.frame()}


@st.cache_data(max_entries=32, show_spinner="Simulating trails and matching…")
def exposure(token: str, qi: tuple[str, ...], k: int, algorithm: str, sup: float, loss: str, locations: int,
             p: float, seed: int, _released: pd.DataFrame) -> dict:
    from graphlink.qi.qitrails import expose

    e = expose(_released, qi, locations=locations, p=p, seed=seed)
    return {**e.counts(), "wrong": sum(r.summary.wrong for r in (e.qi_only, e.trails_only, e.both))}


@st.cache_data(max_entries=32, show_spinner="Estimating the re-identification risk…")
def risk_summary(token: str, qi: tuple[str, ...], threshold: float, fraction: float | None,
                 _frame: pd.DataFrame) -> RiskSummary:
    return risk(_frame, qi, threshold=threshold, sampling_fraction=fraction)


def risk_chart(summary: RiskSummary) -> alt.Chart:
    """Records by their prosecutor risk (ARX's intervals), intervals above the threshold in vermillion."""
    lows = (0.0, *RISK_BOUNDS[:-1])
    rows = [{"risk": f"{lo:g}–{hi:g}", "records (%)": 100 * x, "order": i,
             "status": "at risk" if hi > summary.threshold else "below the threshold"}
            for i, (lo, (hi, x)) in enumerate(zip(lows, summary.distribution, strict=True)) if x > 0]
    colour = alt.Scale(domain=["at risk", "below the threshold"],
                       range=[charts.OKABE_ITO["vermillion"], charts.OKABE_ITO["blue"]])
    return alt.Chart(pd.DataFrame(rows)).mark_bar().encode(
        x=alt.X("risk:N", sort=alt.SortField("order"), title="chance that a record is picked out"),
        y=alt.Y("records (%):Q"), color=alt.Color("status:N", scale=colour, title=None),
        tooltip=["risk", "records (%)"]).properties(height=240)


def percent(x: float | None) -> str:
    return "no estimate" if x is None else f"{100 * x:.2f} %"


def histogram(sizes: np.ndarray, k: int) -> alt.Chart:
    """Records by the size of their equivalence class, bucketed; buckets below k in vermillion."""
    rows = []
    for lo, hi in BUCKETS:
        mask = (sizes >= lo) & ((sizes <= hi) if hi else True)
        label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi else f"{lo}+")
        rows.append({"class size": label, "records": int(sizes[mask].sum()), "order": lo,
                     "protection": f"below k={k}" if lo < k else f"at least k={k}"})
    df = pd.DataFrame(rows)
    colour = alt.Scale(domain=[f"below k={k}", f"at least k={k}"],
                       range=[charts.OKABE_ITO["vermillion"], charts.OKABE_ITO["blue"]])
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("class size:N", sort=alt.SortField("order"), title="size of the record's equivalence class"),
        y=alt.Y("records:Q", title="records"), color=alt.Color("protection:N", scale=colour, title=None),
        tooltip=["class size", "records"]).properties(height=260)


st.title("Quasi-identifiers")
st.caption("Records can be re-identified by *what they say*: a combination of quasi-identifier values (age, "
           "ZIP, sex, …) that is rare in a table can be joined to an identified register. A table is "
           "**k-anonymous** when every combination occurs at least k times (Sweeney 2002); "
           "the guide explains each measure.")

source = st.selectbox("Data", list(SOURCES), key="qi_source")
if SOURCES[source] is None:
    frame, hier, token = upload_table("qi")
    default_qi: tuple[str, ...] = tuple(frame.columns[:3])
    default_sensitive: str | None = None
else:
    frame, hier, default_qi, default_sensitive = load_dataset(SOURCES[source])
    token = SOURCES[source]
    st.caption(f"{len(frame):,} records; hierarchies shipped for: {md(', '.join(sorted(hier)))}.")

c1, c2 = st.columns([3, 1])
qi = tuple(c1.multiselect("Quasi-identifier", list(frame.columns), default=list(default_qi), key=f"qi_cols_{token}"))
others = ["(none)"] + [c for c in frame.columns if c not in qi]
sensitive = c2.selectbox("Sensitive column", others, key=f"qi_sensitive_{token}",
                         index=others.index(default_sensitive) if default_sensitive in others else 0)
sensitive = None if sensitive == "(none)" else sensitive
if not qi:
    st.info("Pick at least one quasi-identifier column.")
    st.stop()
try:
    table = encoded(token, qi, frame, hier)
    report = check(frame, qi, sensitive=sensitive)
except GraphlinkError as exc:  # ReleaseError: value missing from a hierarchy (names row, column, value)
    st.error(one_line(exc))
    st.stop()

st.subheader("The table as it is")
sizes = report.classes.sizes
m = st.columns(5 if report.diversity else 4)
m[0].metric("Records", f"{len(frame):,}")
m[1].metric("k (smallest class)", f"{report.k:,}")
m[2].metric("Equivalence classes", f"{len(sizes):,}")
m[3].metric("Records unique on the QI", f"{int((sizes == 1).sum()):,}")
if report.diversity:
    m[4].metric("Distinct ℓ-diversity", report.diversity.distinct,
                help=f"entropy ℓ = {report.diversity.entropy:.2f}; t-closeness = {report.diversity.t_closeness:.3f}")

k = int(st.number_input("k", min_value=1, max_value=len(frame), value=min(5, len(frame)) if len(frame) > 20 else 2,
                        key=f"qi_k_{token}"))
st.altair_chart(histogram(sizes, k), use_container_width=True)
with st.expander("Smallest equivalence classes (who is in them: row numbers)"):
    st.dataframe(pd.DataFrame([{**c["values"], "size": c["size"], "rows": ", ".join(map(str, c["rows"][:20]))}
                               for c in report.classes.smallest(20)]), hide_index=True)

st.subheader("Re-identification risk")
st.caption("How likely someone who knows a person's quasi-identifier values picks out that person's record. "
           "Three attackers (El Emam & Dankar 2008): the **prosecutor** knows the person is in the table; the "
           "**journalist** only knows the person is in the population the table was drawn from; the **marketer** "
           "tries to re-identify as many records as possible.")
q1, q2 = st.columns(2)
threshold = q1.slider("Risk threshold", 0.01, 1.0, 0.2, 0.01, key="qi_risk_threshold",
                      help="A record is at risk when the chance of picking it out is above this; 0.2 means "
                           "classes of fewer than 5 records.")
fraction_pct = q2.number_input("Share of the population in this table (%)", 0.0, 100.0, 0.0, 0.5,
                               key="qi_risk_fraction",
                               help="0 means unknown: the population is taken to be the table itself and "
                                    "population uniqueness is not estimated.")
summary = risk_summary(token, qi, threshold, fraction_pct / 100 if fraction_pct > 0 else None, frame)
rk = st.columns(5)
rk[0].metric("Records at risk", percent(summary.prosecutor.records_at_risk),
             help="Prosecutor: records whose chance of being picked out is above the threshold")
rk[1].metric("Highest risk", percent(summary.prosecutor.highest), help="Prosecutor: 1 / the smallest class")
rk[2].metric("Average risk (prosecutor)", percent(summary.prosecutor.average))
rk[3].metric("Average risk (journalist)", percent(summary.journalist.average))
rk[4].metric("Average risk (marketer)", percent(summary.marketer.average))
st.altair_chart(risk_chart(summary), use_container_width=True)
u = summary.uniqueness
if u is None:
    st.caption("Population uniqueness needs the share of the population in this table (above).")
else:
    st.markdown(f"**Estimated population uniqueness:** {percent(u.dankar)} of the population is unique on the "
                f"chosen columns (Dankar et al.'s rule picked the {u.dankar_model} estimate; "
                f"{percent(u.sample)} of this table's records are unique in it).")
    st.dataframe(pd.DataFrame({"estimate": ["unique in this table", "Zayatz", "Pitman", "SNB",
                                            "Dankar's rule"],
                               "share": [percent(x) for x in (u.sample, u.zayatz, u.pitman, u.snb, u.dankar)]}),
                 hide_index=True)
if summary.attribute_sets:
    with st.expander("Which columns single people out (distinction and separation of each column set)"):
        st.caption("Distinction: distinct value combinations per record (1 = every record unique). Separation: "
                   "the share of record pairs the columns tell apart.")
        st.dataframe(pd.DataFrame([{"columns": ", ".join(a.attributes), "distinction": round(a.distinction, 4),
                                    "separation": round(a.separation, 4)} for a in summary.attribute_sets]),
                     hide_index=True)

st.subheader("Anonymize")
a1, a2, a3 = st.columns([2, 1, 1])
algorithm = a1.selectbox("Algorithm", list(ALGORITHMS), format_func=LABELS.get, key="qi_algorithm")
sup = a2.slider("Max. suppressed rows (%)", 0.0, 20.0, 1.0, 0.5, key="qi_sup") / 100
loss = a3.selectbox("Loss to minimise", list(LOSSES), key="qi_loss", disabled=algorithm != "optimal",
                    format_func=lambda x: label(x, QI_LOSS_LABELS),
                    help="Precision: how far up its hierarchy each value climbed (Sweeney 2002); information "
                         "loss: ARX's default measure; discernibility: how many records share each value "
                         "combination (a removed row costs the table size), or without charging removed rows; "
                         "entropy: the information lost, in bits, with removed values counted as most general "
                         "in its last variant")
if algorithm == "mingen" and table.n > MINGEN_ROWS:
    st.warning(f"MinGen tries every generalization (Sweeney 2002) and is limited to {MINGEN_ROWS} rows; this "
               f"table has {table.n:,}.")
elif st.button("Anonymize", type="primary", key="qi_run"):
    st.session_state[session.QI_RAN] = (token, qi, k, algorithm, sup, loss)
if st.session_state.get(session.QI_RAN) == (token, qi, k, algorithm, sup, loss):
    try:
        out = run(token, qi, k, algorithm, sup, loss, table)
    except GraphlinkError as exc:   # ReleaseError: k larger than the table, a column without values, …
        st.error("Anonymization failed: " + one_line(exc))
        st.stop()
    s = out["summary"]
    r = st.columns(5)
    r[0].metric("k of the release", s["k"])
    if algorithm == "mu-argus":   # µ-Argus suppresses single values (cells); rows removed after it are reported below
        r[1].metric("Cells suppressed", f"{s.get('suppressed_cells', 0):,}",
                    help="µ-Argus blanks single values, not whole rows, so the row limit does not bound it")
    else:
        r[1].metric("Rows suppressed", f"{s['suppressed_rows']:,}")
    r[2].metric("Prec", f"{s['prec']:.4f}", help="Sweeney's precision: 1 = unchanged, 0 = everything suppressed")
    r[3].metric("DM*", f"{s['dm_star']:,}", help="Σ over equivalence classes of size² (El Emam et al. 2009)")
    r[4].metric("Seconds", f"{s['seconds']:.3f}")
    if s["levels"]:
        st.markdown("**Generalization levels:** " + ", ".join(f"{md(q)} = {lv}" for q, lv in s["levels"].items()))
    if "lattice" in s:
        st.caption(f"Lattice: {s['lattice']['evaluated']:,} of {s['lattice']['nodes']:,} nodes evaluated; the rest "
                   "were decided by predictive tagging or the loss bound.")
    if s.get("unprotected_rows"):
        st.warning(f"µ-Argus left {s['unprotected_rows']:,} row(s) in classes smaller than k (it never examines "
                   "combinations larger than those it tests); they were removed whole so that the release is "
                   f"{k}-anonymous, beyond the row limit above, which µ-Argus does not follow.")
    st.dataframe(out["frame"].head(200), hide_index=True)
    st.download_button("Download the release (CSV)", out["frame"].to_csv(index=False).encode(),
                       file_name=f"{token}_k{k}_{algorithm}.csv", mime="text/csv", key="qi_download")

    st.subheader("Trails behind the k-anonymous table")
    st.caption(f"Each released record hides among at least {s['k']} with the same values, so joining the table to "
               "a register names nobody. Suppose the same people's de-identified records (DNA, IP addresses) are "
               "also disclosed at several locations, as in the trail model: the trails name some of them with "
               "certainty, and the generalized values, as an attribute linkage set, shrink the link graph so that "
               "many more pairs are certain. Simulated: each person visits each location with probability p.")
    t1, t2, t3 = st.columns(3)
    n_loc = t1.slider("Locations", 2, 30, 8, key="qi_trail_locations")
    p_visit = t2.slider("Visit probability p", 0.05, 0.9, 0.3, 0.05, key="qi_trail_p")
    seed = int(t3.number_input("Seed", 0, 10_000, 1, key="qi_trail_seed"))
    e = exposure(token, qi, k, algorithm, sup, loss, n_loc, p_visit, seed, out["frame"])
    r = st.columns([0.8, 1.1, 1, 1.4])   # the last label is the longest: no column cuts its label short
    r[0].metric("Released people", f"{e['people']:,}")
    r[1].metric("Named by the k-anonymous table", f"{e['qi_only']:,}",
                help="a record whose generalized values match exactly one register entry (Malin 2002)")
    r[2].metric("Named by trails alone", f"{e['trails_only']:,}", help="True loves of the trail link graph")
    r[3].metric("Named by trails + generalized values", f"{e['both']:,}",
                help="true loves of the link graph when a pair must also agree on the generalized values (Malin 2002)")
    st.caption(f"Every name is certain under the trail model and checked against the simulation's truth: "
               f"{e['wrong']:,} wrong.")

st.subheader("Compare algorithms")
st.caption("Same k and suppression limit for every algorithm (MinGen and Mondrian never suppress rows; MinGen "
           f"runs on tables of at most {MINGEN_ROWS} rows). Higher Prec and lower DM* lose less.")
if st.button("Compare all algorithms", key="qi_compare"):
    st.session_state[session.QI_COMPARED] = (token, qi, k, sup)
if st.session_state.get(session.QI_COMPARED) == (token, qi, k, sup):
    rows = []
    for alg in ALGORITHMS:
        if alg == "mingen" and table.n > MINGEN_ROWS:
            continue
        s = run(token, qi, k, alg, sup, "prec", table)["summary"]
        cells = alg == "mu-argus"   # µ-Argus blanks cells; the rows it leaves below k are removed afterwards
        rows.append({"algorithm": LABELS[alg], "k": s["k"],
                     "rows suppressed": None if cells else s["suppressed_rows"],
                     "cells suppressed": s.get("suppressed_cells", 0) if cells else None,
                     "rows removed to reach k": s.get("suppressed_to_enforce_k", 0) if cells else None,
                     "Prec": s["prec"], "DM*": s["dm_star"], "entropy (bits)": s["entropy"], "seconds": s["seconds"]})
    comparison = pd.DataFrame(rows)
    show_table(comparison, width="content")
    st.caption("Rows suppressed: whole rows withheld within the limit. µ-Argus blanks single values (cells "
               "suppressed) and does not follow the row limit; the rows it leaves in classes smaller than k are "
               "removed afterwards (rows removed to reach k).")
    st.altair_chart(alt.Chart(comparison).mark_bar().encode(
        x=alt.X("Prec:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("algorithm:N", sort="-x", title=None),
        color=alt.Color("algorithm:N", scale=charts.category_scale(list(comparison["algorithm"])), legend=None),
        tooltip=list(comparison.columns)).properties(height=200), use_container_width=True)
