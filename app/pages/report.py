"""Report page: the release report (graphlink.report) shown natively, and the same self-contained HTML file
for download (docs/report.md)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink_app import session
from graphlink_app.components import charts, words
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

st.title("Risk report")
loaded = session.require_release()
st.caption("One page a privacy officer can forward: who is certainly re-identifiable, who has fewer than k "
           "candidates, which locations expose people most, and what each protection method would withhold. "
           "The download is a single HTML file with no external content; it opens offline and prints to PDF.")


@st.cache_resource(max_entries=16, show_spinner="Computing the report (analysis, exposure, protection)…")
def _report(key: str, choice: str, k: int, seed: int, exposure: bool, protection: bool, _release: Any) -> Any:
    from graphlink.report import build_report

    reserved, multiplicity = session.model_of(choice)
    # no source path: an upload's is a temporary file on the server; the footer hashes the release table instead
    return build_report(_release, k, reserved=reserved, multiplicity=multiplicity, seed=seed,
                        options={"k": k, "reserved": reserved, "multiplicity": multiplicity, "seed": seed,
                                 "exposure": exposure, "protection": protection},
                        exposure=exposure, protection=protection)


@st.cache_data(max_entries=16, show_spinner=False)
def _html(key: str, choice: str, k: int, seed: int, exposure: bool, protection: bool, _report: Any) -> bytes:
    from graphlink.io.report_html import render_html

    return render_html(_report).encode("utf-8")


c1, c2, c3, c4 = st.columns([1, 1, 2, 2])
k = int(c1.number_input("k", 1, 50, 2, key="report_k", help="The protection level the verdict is for: every "
                        "person should have at least k candidate records."))
seed = int(c2.number_input("Seed", 0, 10_000, 0, key="report_seed",
                           help="Tie-breaking seed of the protection methods."))
exposure = c3.toggle("Exposure per location", True, key="report_exposure",
                     help="How many certain re-identifications disappear if one location withholds its "
                          "de-identified table (one run per location).")
protection = c4.toggle("Compare protection methods", True, key="report_protection",
                       help="Greedy-, Force- and Flow-Dedup at this k, each certified by the exact audit.")
choice = session.reserved_choice()
args = (loaded.key, choice, k, seed, exposure, protection)
if st.button("Build report", type="primary", key="report_run"):
    st.session_state[session.REPORT_RAN] = args
if st.session_state.get(session.REPORT_RAN) != args:
    st.info("Choose k, then press **Build report**.")
    st.stop()

try:
    report = _report(*args, loaded.release)
except GraphlinkError as exc:  # ModelAssumptionError / ReleaseError: one readable line, worded from its code and data
    st.error("The report cannot be computed: " + one_line(words.say(exc)))
    st.caption("The data model (reserved side, multiplicity) is chosen on the Data page.")
    st.stop()

st.download_button("Download the report (HTML)", _html(*args, report),
                   file_name=f"{loaded.release.name}-risk-report.html", mime="text/html", key="report_download",
                   type="primary", icon=":material/download:")

m1, m2, m3, m4 = st.columns(4)
m1.metric("People named", f"{report.people:,}")
m2.metric("Certainly re-identifiable", f"{report.certain:,}")
m3.metric(f"Fewer than {k} candidates", f"{report.below_k:,}")
m4.metric("Match no record", f"{report.no_candidate:,}")
(st.success if report.k_unlinkable else st.error)(md(report.verdict))
st.caption(md(report.k_meaning))
with st.container(border=True):
    st.markdown("**Recommendation**")
    st.markdown(md(report.recommendation))
with st.expander("Data model assumed", expanded=True):
    st.markdown(md(report.model.plain))
    st.markdown(md(report.model.would_change))
    st.caption(md(f"Reading of the data: {report.model.label}."))

st.subheader("People by number of candidates")
hist = pd.DataFrame({"candidates": [f"{b.candidates}+" if b.more else str(b.candidates) for b in report.histogram],
                     "people": [b.people for b in report.histogram]})
st.altair_chart(charts.candidate_histogram(hist), width="stretch")

st.subheader("Exposure per location")
if report.exposure_note:
    st.info(md(f"Not shown: {report.exposure_note}."))
else:
    exp = pd.DataFrame({"location": [e.location for e in report.exposure],
                        "identified records": [e.identified for e in report.exposure],
                        "de-identified records": [e.deidentified for e in report.exposure],
                        "certain if withheld": [e.certain_after for e in report.exposure],
                        "certain removed": [e.lost for e in report.exposure]})
    show_table(exp.sort_values(["certain removed", "location"], ascending=[False, True]),
               key="report_exposure_table")

st.subheader("Trail uniqueness by number of locations")
show_table(pd.DataFrame({"locations visited": [u.locations for u in report.uniqueness],
                           "people": [u.people for u in report.uniqueness],
                           "unique trail": [u.unique for u in report.uniqueness],
                           "certainly re-identified": [u.certain for u in report.uniqueness]}),
           key="report_uniqueness_table")

st.subheader(f"Protection options for k = {k}")
if report.protection_note:
    st.info(md(f"Not shown: {report.protection_note}."))
else:
    ranked = report.ranked_protection      # certified first, the fewest records withheld first
    show_table(pd.DataFrame({
        "option": [p.label for p in ranked],
        f"reaches k = {k}": ["yes" if p.certified else "no" for p in ranked],
        "records before": [p.records_before for p in ranked],
        "withheld": [f"{p.records_withheld:,} ({100 * p.share_withheld:.0f} %)" for p in ranked],
        "after": [p.records_after for p in ranked],
        "locations left with nothing": [p.locations_emptied for p in ranked],
        "certain after": [p.certain_after for p in ranked],
        f"people at 1 in {k}": ["—" if p.people_at_k is None else f"{p.people_at_k:,}" for p in ranked]}),
        key="report_protection_table")
    for p in ranked:
        if p.records_before and not p.records_after:
            st.warning(md(f"{p.label} leaves nothing disclosed: every de-identified record is withheld."))
        elif p.certified and p.share_withheld > 0.5:
            st.warning(md(f"{p.label} withholds more than half of the de-identified records "
                          f"({100 * p.share_withheld:.0f} %)."))
    st.caption("The Protect page produces each protected release for download.")
st.caption(md(f"graphlink {report.version}; SHA-256 of the input {report.sha256_of}: {report.sha256}"))
