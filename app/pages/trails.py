"""Trails page: the identified (M) and de-identified (N) trail matrices of FillTrails (thesis Alg. 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from graphlink.core.trails import location_stats, reidentification_bound
from graphlink_app import caches, session
from graphlink_app.components import charts
from graphlink_app.components.text import md

st.title("Trails")
loaded = session.require_release()
reserved = session.reserved_choice()
tr = caches.trails(loaded.key, reserved, loaded.release)

st.caption(f"One row per person or record, one column per location: 1 = disclosed there, 0 = not disclosed, "
           f"* = cannot tell (the location may have withheld it). {md(tr.model.sentence.rstrip('.'))} — the Data page "
           "says why, and lets you change it.")

stats = location_stats(tr)
bound = reidentification_bound(tr)
c1, c2, c3 = st.columns(3)
c1.metric("Locations", f"{len(tr.locations):,}")
c2.metric("People (identified elements)", f"{len(tr.identified.keys):,}")
c3.metric("Bound on re-identifications", f"{bound:,}",
          help="at most one re-identification per distinct non-empty trail: the smaller of the number of "
               "people and the number of distinct non-empty trails the locations allow.")

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


def heatmap(side_name: str, title: str) -> None:
    side = tr.identified if side_name == "identified" else tr.deidentified
    dense = caches.dense(loaded.key, reserved, side_name, loaded.release)
    keys = np.asarray(side.keys, dtype=object)
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
    # a raw Vega-Lite spec (Altair's schema validation costs ~0.3 s per chart on large pages)
    row_order = list(df["element"])
    enc = {"x": {"field": "location", "type": "nominal", "sort": shown_locs, "title": "Location",
                 "axis": {"labelAngle": 0}},
           "y": {"field": "element", "type": "nominal", "sort": row_order, "title": None}}
    spec = {
        "height": {"step": 22},
        "layer": [
            {"mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5},
             "encoding": {**enc, "color": {
                 "field": "value", "type": "nominal",
                 "scale": {"domain": charts.TRAIL_DOMAIN, "range": charts.TRAIL_RANGE},
                 "legend": {"title": "Trail value", "orient": "top", "symbolStrokeColor": "#555555",
                            "symbolStrokeWidth": 1, "symbolType": "square", "labelFontSize": 12}},
                 "tooltip": [{"field": "element"}, {"field": "location"}, {"field": "symbol"}]}},
            {"mark": {"type": "text", "fontSize": 13},
             "encoding": {**enc, "text": {"field": "symbol", "type": "nominal"},
                          "color": {"condition": {"test": "datum.v == 1", "value": "white"},
                                    "value": "black"}}},
        ],
    }
    # a step height (one band per row): fixed pixel heights get squeezed by the container autosize
    st.vega_lite_chart(long, spec, width="stretch")


left, right = st.columns(2)
with left:
    heatmap("identified", "Identified trails (M)")
with right:
    heatmap("deidentified", "De-identified trails (N)")
