"""Data page: pick a bundled demo, upload a release, or simulate one; summary of the loaded release."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink_app import caches, demos, session, upload
from graphlink_app.components import charts, labels, words
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

st.title("Data")
st.caption("A release is a set of locations, each disclosing identified elements (e.g. names) and "
           "de-identified elements (e.g. DNA). Long format: one row per `location,kind,element`.")

demo_tab, upload_tab, sim_tab = st.tabs(["Bundled demo", "Upload", "Simulate"])

with demo_tab:
    choice = st.radio("Demo release", list(demos.DEMOS), key="demo_choice")
    st.caption(demos.DEMOS[choice])
    if st.button("Load demo", type="primary", key="load_demo"):
        try:
            session.set_release(demos.load_demo(choice), choice)
        except (GraphlinkError, OSError) as exc:  # a bundled file missing or unreadable: say so, no traceback
            st.error("Could not load the demo: " + one_line(exc))
        else:
            st.rerun()  # so the sidebar (drawn before the page) shows the new release

with upload_tab:
    up = st.file_uploader("Release file (CSV, Parquet, or a zip of per-location folders)",
                          type=["csv", "parquet", "zip"], key="upload_release")
    truth_up = st.file_uploader("Optional ground truth CSV (columns identified, deidentified)",
                                type=["csv"], key="upload_truth")
    if up is not None:
        token = (up.name, up.size, getattr(truth_up, "name", None), getattr(truth_up, "size", None))
        if st.session_state.get(session.UPLOAD_TOKEN) != token:
            st.session_state[session.UPLOAD_TOKEN] = token
            st.session_state.pop(session.UPLOAD_ERROR, None)
            release = None
            try:
                truth = (truth_up.name, truth_up.getvalue()) if truth_up is not None else None
                release = upload.read_upload(up.name, up.getvalue(), truth)
            except (GraphlinkError, OSError) as exc:  # ReleaseError names file/row/column; OSError: no room
                kind = "Invalid release" if isinstance(exc, GraphlinkError) else "Could not read the file"
                st.session_state[session.UPLOAD_ERROR] = f"{kind}: {one_line(exc)}"
            if release is not None:
                session.set_release(release, f"Upload: {up.name}")
                st.rerun()  # so the sidebar (drawn before the page) shows the new release
        if session.UPLOAD_ERROR in st.session_state:
            st.error(st.session_state[session.UPLOAD_ERROR], icon=":material/error:")
        else:
            st.success(f"Loaded {md(up.name)}.")
    st.caption("CSV/Parquet columns: `location`, `kind` (`identified` or `deidentified`), `element`. "
               "A zip holds one folder per location, each with its identified and its de-identified table.")

with sim_tab:
    model = st.radio("Location popularity", ["uniform", "Zipf"], horizontal=True, key="sim_model",
                     help="uniform: every location is visited with probability p; Zipf: popularity falls "
                          "with rank (a Zipf law, Malin 2006, chapter 5).")
    c1, c2 = st.columns(2)
    subjects = c1.slider("Subjects", 10, 20000, 2000, step=10, key="sim_subjects")
    locations = c1.slider("Locations", 2, 30, 8, key="sim_locations")
    if model == "uniform":
        p = c2.slider("Visit probability p", 0.05, 0.95, 0.3, step=0.05, key="sim_p")
    else:
        p = c2.slider("Zipf exponent (how steeply popularity falls)", 0.0, 3.0, 1.0, step=0.1, key="sim_alpha")
    withhold = c2.slider("Share of de-identified records withheld", 0.0, 0.9, 0.2, step=0.05,
                         key="sim_withhold")
    seed = st.number_input("Seed", 0, 2**31 - 1, 6, key="sim_seed")
    if st.button("Simulate release", key="sim_run"):
        try:
            with st.spinner("Simulating…"):
                release = demos.simulate(subjects, locations, p, withhold, int(seed), model=model)
            what = f"visit probability {p}" if model == "uniform" else f"Zipf exponent {p}"
            session.set_release(release, f"Simulated: {subjects:,} subjects, {locations} locations, {what}")
        except GraphlinkError as exc:   # ReleaseError: settings the simulator refuses
            st.error("Simulation failed: " + one_line(exc))
        else:
            st.rerun()

loaded = session.current()
st.divider()
if loaded is None:
    if session.AUTOLOAD_ERROR in st.session_state:
        st.error("The demo release could not be loaded when the app started: "
                 + one_line(st.session_state[session.AUTOLOAD_ERROR]), icon=":material/error:")
    st.info("No release loaded yet.")
    st.stop()

release = loaded.release
st.subheader(f"Summary — {md(loaded.label)}")
options = ["auto", "deidentified", "identified", "none"]
current_reserved, current_mult = session.model_of(session.reserved_choice())
m1, m2 = st.columns(2)
chosen_reserved = m1.selectbox("Reserved side (which side may withhold records)", options,
                               index=options.index(current_reserved),
                               format_func=lambda s: labels.label(s, labels.SIDE_LABELS),
                               help="decided from the data: from the per-location sizes and, where they cannot "
                                    "tell one-to-one from one-to-many data, from the links.")
mult_options = ["auto", "one-to-one", "one-to-many"]
chosen_mult = m2.selectbox("Multiplicity", mult_options, index=mult_options.index(current_mult),
                           format_func=lambda s: labels.label(s, labels.MULTIPLICITY_LABELS),
                           help="one-to-many: one de-identified element (e.g. a household's IP address) may stand "
                                "for several identified people (Malin 2006, Appendix A). Decided from the data: "
                                "one-to-many on evidence "
                                "of sharing (fewer de-identified elements, links), and when the identified side "
                                "withholds, where both fit: its certain pairs hold under either reading. "
                                "Choose one-to-one if each de-identified element stands for one person.")
session.set_model(chosen_reserved, chosen_mult)
reserved = session.reserved_choice()

try:
    tr = caches.trails(loaded.key, reserved, release)
except GraphlinkError as exc:   # ModelAssumptionError: the data breaks the chosen model
    st.error("Could not build trails: " + one_line(words.say(exc)))
    st.stop()

sizes = tr.sizes
c1, c2, c3, c4 = st.columns(4)
c1.metric("Locations", len(tr.locations))
c2.metric("Identified elements", f"{len(tr.identified.keys):,}")
c3.metric("De-identified elements", f"{len(tr.deidentified.keys):,}")
c4.metric("Side that may withhold", labels.label(tr.reserved, labels.SIDE_LABELS))
st.markdown("**Model:** " + md(tr.model.reading))
with st.expander("How the data model was decided"):
    st.markdown(f"{md(words.model_label(tr.model))}, decided {md(tr.model.how)}:")
    st.markdown("\n".join(f"- {md(line)}" for line in words.evidence_lines(tr.model)))
if tr.one_to_many:
    st.info("One-to-many release: REIDIT-C and REIDIT-I assume one-to-one data and are not run (thesis Table "
            "A.1); REIDIT-M and the exact certain pairs apply.")
if release.truth is not None:
    st.caption(f"Ground truth available: {len(release.truth):,} identified/de-identified pairs.")

st.markdown("**Records per location**")
table = sizes.reset_index().rename(columns={"index": "location"})
table.columns = ["location", *(labels.label(c, labels.SIDE_LABELS) for c in table.columns[1:])]
left, right = st.columns([1, 2])
show_table(table, where=left)
long = table.melt(id_vars="location", var_name="kind", value_name="records")
long["kind"] = long["kind"].map(lambda s: labels.label(s, labels.SIDE_LABELS))
chart = (alt.Chart(long).mark_bar().encode(
    x=alt.X("location:N", sort=list(tr.locations), title="Location"),
    xOffset="kind:N",
    y=alt.Y("records:Q", title="Distinct elements disclosed"),
    color=alt.Color("kind:N", scale=charts.kind_scale(), legend=alt.Legend(title="Kind", orient="top")),
    tooltip=["location", "kind", "records"]).properties(height=260))
right.altair_chart(chart, width="stretch")

with st.expander("Preview the first rows"):
    show_table(pd.DataFrame(release.frame.head(200)))
