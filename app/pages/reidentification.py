"""Re-identification page: REIDIT-C / -I / -I-K / -M and exact true loves, compared; pairs with reasons."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink_app import caches, method_choices, navigation, session
from graphlink_app.components import charts, words
from graphlink_app.components.labels import method_labels, number
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, spreadsheet_csv

st.title("Re-identification")
loaded = session.require_release()
reserved = session.reserved_choice()
release = loaded.release


one_to_many = bool(caches.trails(loaded.key, reserved, release).one_to_many)
names_of = method_labels(one_to_many)    # the exact method's name under the reading of the release
methods = list(names_of)
st.caption("REIDIT-C matches complete trails exactly; REIDIT-I iteratively links unique subtrail/supertrail "
           "pairs; REIDIT-I-K stops at candidate sets of size k; REIDIT-M allows one-to-many; "
           + ("the certain pairs hold in every consistent assignment of people to de-identified elements (this "
              "release is read as one-to-many: there is no matching, and no true love)." if one_to_many else
              "true loves are the edges in every maximum matching of the link graph (certain "
              "re-identifications)."))
# one-to-one methods (thesis Table A.1, each spec's readings) are not run on a release read as one-to-many
applicable = [m for m in methods if method_choices.method_spec(m).applies(one_to_many)]
c1, c2 = st.columns([3, 1])
# keyed by release and data model: a new release or reading starts from the methods that apply to it
chosen = c1.multiselect("Methods", methods, default=applicable, format_func=names_of.get,
                        key=f"reid_methods_{loaded.key}_{reserved}")
k = int(c2.number_input("k for REIDIT-I-K", 1, 100, 2, key="reid_k"))
run_key = session.REIDENTIFICATION_RAN_PREFIX + loaded.key
if st.button("Run re-identification", type="primary", key="reid_run"):
    st.session_state[run_key] = True
if not st.session_state.get(run_key):
    st.info("Choose methods and press **Run re-identification**.")
    st.stop()
if not chosen:
    st.warning("Select at least one method.")
    st.stop()

refused = [m for m in chosen if m not in applicable]
if refused:
    names = ", ".join(names_of[m] for m in refused)
    st.info(f"**{names} {'is' if len(refused) == 1 else 'are'} not run on this release.** "
            f"{'It assumes' if len(refused) == 1 else 'They assume'} that each de-identified element stands for "
            "one person, but this release is read as one-to-many (one de-identified element, such as a "
            "household's IP address, may stand for several people), so a pair found that way would not be "
            f"certain. {' and '.join(names_of[m] for m in applicable)} apply to it. If each "
            "de-identified element does stand for one "
            "person, choose **one-to-one** under **Multiplicity** on the Data page.",
            icon=":material/info:")
    st.page_link(navigation.path("data"), label="Data page: Multiplicity", icon=":material/database:")
    chosen = [m for m in chosen if m in applicable]
    if not chosen:
        st.stop()

results = {}
errors = {}
for m in chosen:
    try:
        wants_k = any(p.name == "k" for p in method_choices.method_spec(m).parameters)
        results[m] = caches.reidentification(loaded.key, reserved, m, k if wants_k else None, release)
    except GraphlinkError as exc:  # e.g. ModelAssumptionError: show it for that method, keep the others
        errors[m] = words.say(exc)
        continue
    if results[m].summary.model_ok is False:   # no pair is certain: say why instead of listing guesses
        diagnostic = results.pop(m).summary.diagnostic
        errors[m] = words.say(diagnostic) if diagnostic is not None else "the data breaks the model"

cols = st.columns(max(len(chosen), 1))
for col, m in zip(cols, chosen, strict=False):
    if m in results:
        col.metric(names_of[m], number(caches.reid_count(results[m])), help="re-identified elements")
    else:
        col.metric(names_of[m], "n/a")
for m, msg in errors.items():
    st.error(f"{names_of[m]}: {md(msg)}")

summary = words.reidentify_table({names_of[m]: r.summary for m, r in results.items()})
counts = pd.DataFrame({"method": [names_of[m] for m in results],
                       "re-identified": [caches.reid_count(r) for r in results.values()]})
if len(counts):
    domain = list(counts["method"])
    chart = alt.Chart(counts).mark_bar().encode(
        x=alt.X("method:N", sort=domain, title="Method", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("re-identified:Q", title="Re-identified pairs", axis=alt.Axis(tickMinStep=1, format=",d")),
        color=alt.Color("method:N", scale=charts.category_scale(domain),
                        legend=alt.Legend(title="Method", orient="right")),
        tooltip=["method", "re-identified"]).properties(height=280)
    labels = chart.mark_text(dy=-8, fontSize=13).encode(text=alt.Text("re-identified:Q", format=","),
                                                            color=alt.value("black"))
    st.altair_chart(chart + labels, width="stretch")
    with st.expander("Summary per method", expanded=release.truth is not None):
        # one column per method: a dozen measures side by side would run past the page's right edge
        show_table(summary.set_index("Method").T.rename_axis("measure").reset_index())

if results:
    st.subheader("Re-identified pairs")
    listed = list(results)   # opens on true loves when it lists pairs, else on the method with the most
    shown = st.selectbox("Method", listed, index=listed.index(words.opening_method(results)),
                         format_func=names_of.get, key="reid_shown")
    pairs = results[shown].to_frame() if hasattr(results[shown], "to_frame") else results[shown].pairs
    show_table(pairs.rename(columns={"deidentified": "de-identified"}))
    st.download_button("Download pairs as CSV", spreadsheet_csv(pairs),
                       file_name=f"{release.name}_{shown}.csv", mime="text/csv", key="reid_download")

    st.subheader("How likely each re-identification is")
    risk = caches.risk(loaded.key, reserved, release)
    if risk is None:
        st.caption(words.PROBABILITY_NOT_COMPUTED)      # calm: the page's one note is about the methods
    else:
        figures = risk.summary()
        st.caption("Beyond the certain pairs, some records are far likelier than others. A pair's probability is "
                   "its share of all the ways of assigning people to records that fit the release (every way "
                   "equally likely); each person's most likely record is the attacker's best guess. Exact where "
                   "the people who could be confused are few, estimated by sampling (with a 95 % margin) "
                   "where they are many.")
        r1, r2, r3 = st.columns(3)
        r1.metric("Expected correct re-identifications", words.expected_correct_words(figures),
                  help="people an attacker who names each person's most likely record would get right, on "
                       f"average over the assignments that fit the release (of {figures.people:,} people)")
        r2.metric("People at 50 % or more", number(figures.above_threshold),
                  help="people whose most likely record has a probability of at least one half")
        r3.metric("Counting every candidate as equally likely", number(figures.thesis_expected_correct_best, 1),
                  help="the expected correct re-identifications if every candidate of a record were equally "
                       "likely (Malin 2006's reading), for comparison")
        if not figures.exact:
            st.caption(f"These figures are estimates: {figures.blocks_estimated:,} group(s) of people who could "
                       "be confused with each other "
                       f"(the largest: {figures.largest_estimated_block:,} people and records) were sampled in "
                       f"a limited time; the widest margin is ± {figures.max_error:.2f}. The other "
                       f"{figures.blocks_exact:,} groups are exact.")
        if not figures.model_ok:
            st.warning("No assignment covers every person and record, so this release does not fit the model "
                       "these probabilities assume; read them with care.")
        likely = caches.most_likely(loaded.key, reserved, release)
        st.markdown("**Each person's most likely record**, most likely first")
        show_table(likely, column_config={
            "probability": st.column_config.TextColumn("probability", width="medium"),
            "records as likely": st.column_config.NumberColumn(
                "records as likely", help="records with the same trail, each exactly as likely as the one shown")})
        st.download_button("Download as CSV", spreadsheet_csv(likely), file_name=f"{release.name}_most_likely.csv",
                           mime="text/csv", key="reid_risk_download")

    st.subheader("Leave-one-location-out sensitivity")
    st.caption("Re-runs the method with each location removed: locations whose removal lowers the count "
               "drive re-identification.")
    opts = list(results)
    loo_method = st.selectbox("Method for sensitivity", opts, format_func=names_of.get,
                              index=opts.index("true-loves") if "true-loves" in opts else 0, key="loo_method")
    if st.button("Run sensitivity", key="loo_run"):
        st.session_state[session.LEAVE_ONE_OUT_PREFIX + loaded.key] = loo_method
    if st.session_state.get(session.LEAVE_ONE_OUT_PREFIX + loaded.key) == loo_method:
        loo_k = k if any(p.name == "k" for p in method_choices.method_spec(loo_method).parameters) else None
        loo = caches.leave_one_out(loaded.key, reserved, loo_method, loo_k, release)
        chart = alt.Chart(loo.dropna(subset=["change"])).mark_bar().encode(
            x=alt.X("location removed:N", sort=list(release.locations), title="Location removed"),
            y=alt.Y("change:Q", title="Change in re-identified pairs"),
            color=alt.Color("direction:N", scale=alt.Scale(domain=["fewer", "same or more"],
                                                           range=[charts.OKABE_ITO["vermillion"],
                                                                  charts.OKABE_ITO["sky"]]),
                            legend=alt.Legend(title="Without this location")),
            tooltip=["location removed", "re-identified", "change"],
        ).transform_calculate(direction="datum.change < 0 ? 'fewer' : 'same or more'").properties(height=260)
        st.altair_chart(chart, width="stretch")
        show_table(loo)
