"""Protect page: k-unlinkability by suppression (thesis ch. 7-8), before/after, download, k sweep."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from graphlink_app import caches, method_choices, navigation, session
from graphlink_app.components import charts, words
from graphlink_app.components.labels import number
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import one_line

st.title("Protect")
loaded = session.require_release()

st.caption("Each location withholds some of its de-identified records until every person has at least k "
           "possible partners, so no one can be re-identified with fewer than k candidates (k-unlinkability, "
           "Malin 2006, chapter 7). The output is checked by the exact audit; records that check withholds too "
           "are reported.")

multiplicity = session.model_of(session.reserved_choice())[1]
refusal = words.protect_refusal(caches.protect_refusal(loaded.key, multiplicity, loaded.release))
one_to_many = refusal is not None      # the same refusal as the Secure protocol page's
if refusal is not None:
    st.info(refusal, icon=":material/info:")
    st.page_link(navigation.path("data"), label="Data page: Multiplicity", icon=":material/database:")

methods = method_choices.protect_methods()
c1, c2, c3, c4 = st.columns([1, 2, 1, 1])
k = int(c1.number_input("k", 1, 50, 2, key="protect_k"))
method = c2.selectbox("Method", methods, index=methods.index("force-dedup") if "force-dedup" in methods else 0,
                      format_func=method_choices.method_title, key="protect_method")
secure_words = " and ".join(method_choices.method_title(m) for m in method_choices.secure_methods())
secure = c3.toggle("Secure (encrypted)", key="protect_secure",
                   help="Run the locations and a semi-trusted third party over encrypted data (Malin 2006, "
                        f"chapter 8); {secure_words} only.")
seed = int(c4.number_input("Seed", 0, 10_000, 0, key="protect_seed"))
if secure and not method_choices.method_spec(method).secure:
    st.warning(f"The secure protocol supports {secure_words} only.")
    st.stop()

if st.button("Protect release", type="primary", key="protect_run") and not one_to_many:
    st.session_state[session.PROTECT_RAN] = (loaded.key, k, method, secure, seed, multiplicity)
if one_to_many:   # the note above says why and where to change the reading
    st.stop()
if st.session_state.get(session.PROTECT_RAN) != (loaded.key, k, method, secure, seed, multiplicity):
    st.info("Choose k and a method, then press **Protect release**.")
    st.stop()

try:
    res = caches.protect(loaded.key, k, method, secure, seed, loaded.release, multiplicity)
except caches.PROTECTION_ERRORS as exc:  # ModelAssumptionError / ReleaseError: readable message
    st.error("Protection failed: " + one_line(exc))
    st.stop()

m, before, after = res.metrics, res.before, res.after
st.subheader("Before and after")
left, right = st.columns(2)
with left:
    st.markdown("**Original release**")
    st.metric("Certain re-identifications (true loves)", number(before.get("true_loves")))
    st.metric(f"{k}-unlinkable", "yes" if before.get("k_unlinkable") else "no")
    st.metric("De-identified records disclosed", f"{m['rows_disclosed'] + m['rows_withheld']:,}")
    st.metric("Locations disclosing", f"{m['locations']:,}")
with right:
    st.markdown(f"**Protected release** — {method_choices.method_title(method)}{' (secure)' if secure else ''}")
    st.metric("Certain re-identifications (true loves)", number(after.get("true_loves")),
              delta=number(after.get("true_loves", 0) - before.get("true_loves", 0)) if before else None,
              delta_color="inverse")
    st.metric(f"{k}-unlinkable", "yes (certified)" if res.certified else "no")
    st.metric("De-identified records disclosed", f"{m['rows_disclosed']:,}",
              delta=number(-m["rows_withheld"]), delta_color="off")
    st.metric("Locations disclosing", f"{m['locations_disclosing']:,}",
              delta=number(-m["locations_empty"]), delta_color="off")
withheld_note = words.withholding_note(m["rows_withheld"], m["rows_disclosed"] + m["rows_withheld"])
if withheld_note:
    st.warning(withheld_note, icon=":material/warning:")
if getattr(res, "time_budget_hit", False) or getattr(res, "result_of", None) not in (None, res.method):
    # keep-most returned someone else's certified suppression (or ran out of time): say whose, in words
    why = res.result_why or ""
    st.info(f"Returned: {why[:1].upper()}{why[1:]}.", icon=":material/info:")
if res.repair_withheld:
    st.caption(f"The exact audit withheld {len(res.repair_withheld):,} more record(s) in "
               f"{res.repair_rounds:,} repair round(s) to certify the output.")
with st.expander("Every figure of this run"):
    show_table(words.figures_table(res.summary().as_dict()))

st.download_button("Download protected release (CSV)", res.release.frame.to_csv(index=False).encode(),
                   file_name=f"{loaded.release.name}_k{k}_{method}.csv", mime="text/csv",
                   key="protect_download")

st.subheader("Utility versus k")
kmax = int(st.number_input("Largest k in the sweep", 2, 30, 6, key="protect_kmax"))
if st.button("Run k sweep", key="protect_sweep"):
    st.session_state[session.PROTECT_SWEEP_RAN] = (loaded.key, method, secure, seed, kmax)
if st.session_state.get(session.PROTECT_SWEEP_RAN) == (loaded.key, method, secure, seed, kmax):
    rows = []
    bar = st.progress(0.0, text="Sweeping k…")
    for i, kk in enumerate(range(1, kmax + 1)):
        try:
            r = caches.protect(loaded.key, kk, method, secure, seed, loaded.release, multiplicity)
            rows.append({"k": kk, "records still disclosed": r.metrics["rows_disclosed"],
                         "locations still disclosing": r.metrics["locations_disclosing"],
                         "certified": "yes" if r.certified else "no"})
        except caches.PROTECTION_ERRORS as exc:
            rows.append({"k": kk, "records still disclosed": None, "locations still disclosing": None,
                         "certified": "no", "error": words.say(exc)})
        bar.progress((i + 1) / kmax)
    bar.empty()
    sweep = pd.DataFrame(rows)
    long = sweep.melt(id_vars=["k"], value_vars=["records still disclosed", "locations still disclosing"],
                      var_name="utility measure", value_name="count").dropna()
    domain = ["records still disclosed", "locations still disclosing"]
    chart = alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("k:Q", title="k", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("count:Q", title="Count"),
        color=alt.Color("utility measure:N", scale=charts.category_scale(domain),
                        legend=alt.Legend(title="Utility", orient="top")),
        strokeDash=alt.StrokeDash("utility measure:N", legend=None),
        tooltip=["k", "utility measure", "count"]).properties(height=300)
    st.altair_chart(chart, width="stretch")
    show_table(sweep)
