"""Trails page: the identified (M) and de-identified (N) trail matrices of FillTrails (thesis Alg. 1)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from app import state
from app.components import charts

st.title("Trails")
loaded = state.require_release()
reserved = state.reserved_choice()
tr = state.trails(loaded.key, reserved, loaded.release)

st.caption(f"FillTrails (thesis Algorithm 1): one row per element, one column per location; "
           f"1 = present, 0 = absent, * = ambiguous. Reserved side: **{tr.reserved}** — {tr.reason}")

stats = state.location_stats(tr)
bound = state.reidentification_bound(tr)
c1, c2, c3 = st.columns(3)
c1.metric("Locations |C|", len(tr.locations))
c2.metric("Subjects |S| (identified elements)", f"{len(tr.identified.keys):,}")
c3.metric("Bound on re-identifications", f"{bound:,}",
          help="min(|S|, 2^|C| − 1): at most one re-identification per distinct non-empty trail.")

st.subheader("Per-location popularity and entropy")
st.dataframe(stats, hide_index=True, width="stretch",
             column_config={"popularity": st.column_config.ProgressColumn(
                 "popularity", help="share of identified elements disclosed at the location",
                 min_value=0.0, max_value=1.0, format="%.3f"),
                 "entropy (bits)": st.column_config.NumberColumn(format="%.3f")})

st.subheader("Trail matrices")
f1, f2, f3, f4 = st.columns([2, 1, 1, 1])
shown_locs = f1.multiselect("Locations (columns)", tr.locations, default=tr.locations[:30],
                            key="trail_locs")
present_at = f2.selectbox("Only rows present (1) at", ["any location", *tr.locations], key="trail_filter")
order = f3.selectbox("Sort rows", ["by trail", "by element", "most ambiguous first"], key="trail_sort")
limit = f4.number_input("Rows shown per matrix", 5, 400, 60, step=5, key="trail_limit")
if not shown_locs:
    st.warning("Select at least one location.")
    st.stop()

col_idx = [tr.locations.index(c) for c in shown_locs]
label = {1: charts.TRAIL_DOMAIN[0], 0: charts.TRAIL_DOMAIN[1], -1: charts.TRAIL_DOMAIN[2]}


def heatmap(side: object, title: str) -> None:
    dense = side.dense()  # type: ignore[attr-defined]
    keys = np.asarray(side.keys, dtype=object)  # type: ignore[attr-defined]
    rows = np.arange(len(keys))
    if present_at != "any location":
        rows = rows[dense[:, tr.locations.index(present_at)] == 1]
    sub = dense[rows][:, col_idx]
    if order == "by trail":
        perm = np.lexsort(tuple(-sub[:, j] for j in reversed(range(sub.shape[1])))) if len(rows) else rows
    elif order == "by element":
        perm = np.argsort(keys[rows].astype(str), kind="stable")
    else:
        perm = np.argsort(-(sub == -1).sum(axis=1), kind="stable")
    rows, sub = rows[perm][: int(limit)], sub[perm][: int(limit)]
    st.markdown(f"**{title}** — {len(keys):,} rows, showing {len(rows):,}")
    if len(rows) == 0:
        st.info("No rows match the filter.")
        return
    df = pd.DataFrame(sub, columns=shown_locs)
    df.insert(0, "element", keys[rows].astype(str))
    long = df.melt(id_vars="element", var_name="location", value_name="v")
    long["value"] = long["v"].map(label)
    long["symbol"] = long["v"].map({1: "1", 0: "0", -1: "*"})
    base = alt.Chart(long).encode(
        x=alt.X("location:N", sort=shown_locs, title="Location", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("element:N", sort=list(df["element"]), title=None))
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("value:N", scale=alt.Scale(domain=charts.TRAIL_DOMAIN, range=charts.TRAIL_RANGE),
                        legend=alt.Legend(title="Trail value", orient="top", symbolStrokeColor="#555555",
                                          symbolStrokeWidth=1, symbolType="square", labelFontSize=12)),
        tooltip=["element", "location", "symbol"])
    text = base.mark_text(fontSize=13).encode(
        text="symbol:N",
        color=alt.condition(alt.datum.v == 1, alt.value("white"), alt.value("black")))
    # a step height (one band per row): fixed pixel heights get squeezed by the container autosize
    st.altair_chart((rect + text).properties(height=alt.Step(22)), width="stretch")


left, right = st.columns(2)
with left:
    heatmap(tr.identified, "Identified trails (M)")
with right:
    heatmap(tr.deidentified, "De-identified trails (N)")
