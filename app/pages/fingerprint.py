"""Fingerprinting page: plan one k-anonymous generalization per recipient, release a copy, drop in a leak and see
who leaked it (Schrittwieser et al., FP §3). Every number comes from ``graphlink.fingerprint``."""

from __future__ import annotations

import hashlib
import json

import altair as alt
import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink.fingerprint import EXAMPLES, LOSSES, Plan, attribute, make_plan, release_frame
from graphlink.fingerprint.release import table_fingerprint
from graphlink.qi import datasets
from graphlink.qi import hierarchy as H
from graphlink.qi.table import QITable, encode, read_table
from graphlink_app import session
from graphlink_app.components import charts
from graphlink_app.components.labels import FINGERPRINT_LOSS_LABELS, label
from graphlink_app.components.qi_upload import Matrices, read_or_stop, upload_table
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

FP1 = "FP Table 1: four patients (the paper's worked example)"
FP6 = "FP Table 6: four patients with a ZIP code"
UPLOAD = "Upload a CSV"
SOURCES = {FP1: "fp1", FP6: "fp6"} | {datasets.SPECS[n].title: n for n in ("cps1988", "acs12", "sweeney")} | \
    {UPLOAD: None}
# per source: QI, k, recipients, loss, l_min, l_max, discretisation, suppression (%)
DEFAULTS = {"fp1": (("sex", "birthdate"), 2, 2, "samarati", "1", "2", "exact", 0.0),
            "fp6": (("sex", "birthdate", "zip"), 1, 3, "samarati", "", "", "exact", 0.0),
            "cps1988": (None, 5, 20, "precision", "", "", "auto", 1.0),
            "acs12": (None, 5, 10, "precision", "", "", "auto", 1.0),
            "sweeney": (None, 2, 3, "precision", "", "", "auto", 0.0)}
DISC = ["auto", "exact", "round", "width"]


@st.cache_data(max_entries=8, show_spinner="Loading the dataset…")
def load_source(name: str) -> tuple[pd.DataFrame, Matrices, tuple[str, ...]]:
    if name in ("fp1", "fp6"):
        frame = read_table(EXAMPLES / ("table1.csv" if name == "fp1" else "table6.csv"))
        hs = H.read_dir(EXAMPLES / "hierarchies")
        return frame, {c: h.matrix.tolist() for c, h in hs.items() if c in frame.columns}, ()
    ds = datasets.load(name)
    return ds.frame, {c: h.matrix.tolist() for c, h in ds.hierarchies.items()}, ds.qi


@st.cache_resource(max_entries=16, show_spinner="Encoding the quasi-identifier…")
def encoded(token: str, qi: tuple[str, ...], _frame: pd.DataFrame, _hier: Matrices) -> QITable:
    return encode(_frame, qi, {c: H.Hierarchy(c, m) for c, m in _hier.items() if c in qi})


@st.cache_resource(max_entries=32, show_spinner="Planning the fingerprints…")
def planned(token: str, qi: tuple[str, ...], k: int, recipients: int | tuple[str, ...], loss: str,
            l_min: float | None, l_max: float | None, disc: str, sup: float, _table: QITable, _fp: str) -> Plan:
    who = recipients if isinstance(recipients, int) else list(recipients)
    return make_plan(_table, k, who, loss=loss, l_min=l_min, l_max=l_max, discretisation=disc, max_suppression=sup,
                     seed=int(hashlib.sha256(token.encode()).hexdigest()[:8], 16), frame_fingerprint=_fp)


def bound(text: str, label: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        st.error(f"{label} must be a number, got {md(repr(text))}")
        st.stop()


def loss_chart(plan: Plan) -> alt.Chart:
    """Every k-anonymous node by loss: used by a recipient, usable, or out of the bounds."""
    sol = plan.solutions.copy()
    chosen = {tuple(r.levels) for r in plan.recipients}
    qi = list(plan.qi)
    sol["node"] = [plan.pattern(lv) for lv in sol[qi].itertuples(index=False)]
    sol["status"] = ["given to a recipient" if tuple(lv) in chosen else "usable" if u else "outside the bounds"
                     for lv, u in zip(sol[qi].itertuples(index=False), sol["usable"], strict=True)]
    colours = alt.Scale(domain=["given to a recipient", "usable", "outside the bounds"],
                        range=[charts.OKABE_ITO["vermillion"], charts.OKABE_ITO["blue"], charts.OKABE_ITO["grey"]])
    return alt.Chart(sol).mark_tick(thickness=2, size=26).encode(
        x=alt.X("loss:Q", title=f"loss ({label(plan.loss, FINGERPRINT_LOSS_LABELS).lower()})"),
        y=alt.Y("status:N", title=None),
        color=alt.Color("status:N", scale=colours, legend=None),
        tooltip=["node", "loss", "k", "suppressed_rows"]).properties(height=140)


st.title("Fingerprinting")
st.caption("Give every recipient of a table its **own k-anonymous generalization** of nearly equal information "
           "loss: the generalization pattern of a single leaked record then names the recipient who leaked it "
           "(Schrittwieser et al. 2011, *An Algorithm for k-anonymity-based Fingerprinting*).")

source = st.selectbox("Data", list(SOURCES), key="fp_source")
if SOURCES[source] is None:
    frame, hier, token = upload_table("fp")
    d_qi, d_k, d_r, d_loss, d_lo, d_hi, d_disc, d_sup = (tuple(frame.columns[:2]), 2, 2, "precision", "", "",
                                                         "auto", 0.0)
else:
    try:
        frame, hier, default_qi = load_source(SOURCES[source])
    except (GraphlinkError, OSError) as exc:  # MissingExtraError: the optional R datasets are not installed
        st.error(one_line(exc))
        st.stop()
    token = SOURCES[source]
    d_qi, d_k, d_r, d_loss, d_lo, d_hi, d_disc, d_sup = DEFAULTS[token]
    d_qi = d_qi or default_qi
    st.caption(f"{len(frame):,} records; hierarchies for: {md(', '.join(sorted(hier)))}.")

st.subheader("Plan")
qi = tuple(st.multiselect("Quasi-identifier", list(frame.columns), default=[c for c in d_qi if c in frame.columns],
                          key=f"fp_qi_{token}"))
if not qi:
    st.info("Pick at least one quasi-identifier column.")
    st.stop()
p1, p2, p3, p4 = st.columns(4)
k = int(p1.number_input("k", min_value=1, max_value=len(frame), value=min(d_k, len(frame)), key=f"fp_k_{token}"))
n_recipients = int(p2.number_input("Recipients", min_value=1, max_value=10_000, value=d_r, key=f"fp_n_{token}"))
loss = p3.selectbox("Loss", list(LOSSES), index=list(LOSSES).index(d_loss), key=f"fp_loss_{token}",
                    format_func=lambda x: label(x, FINGERPRINT_LOSS_LABELS),
                    help="precision: how far up its hierarchy each value climbed; generalization levels: the sum "
                         "of the levels; discernibility: the squared sizes of the groups of equal records; "
                         "entropy: the information lost, in bits")
sup = p4.slider("Max. suppressed rows (%)", 0.0, 20.0, d_sup, 0.5, key=f"fp_sup_{token}") / 100
q1, q2, q3, q4 = st.columns(4)
l_min = bound(q1.text_input("Lowest loss (optional)", d_lo, key=f"fp_lmin_{token}"), "The lowest loss")
l_max = bound(q2.text_input("Highest loss (optional)", d_hi, key=f"fp_lmax_{token}"), "The highest loss")
mode = q3.selectbox("Clusters by loss", DISC, index=DISC.index(d_disc), key=f"fp_disc_{token}",
                    help="auto: the narrowest loss interval holding every recipient; exact: equal loss; round: "
                         "losses rounded to D decimals; width: intervals of width W")
arg = q4.number_input("Decimals / width", min_value=0.0, value=1.0, step=0.5, key=f"fp_arg_{token}",
                      disabled=mode in ("auto", "exact"))
disc = mode if mode in ("auto", "exact") else f"{mode}:{int(arg) if mode == 'round' else arg}"
names_text = st.text_input("Recipient names (optional, comma-separated; default R1 … RN)", "", key=f"fp_names_{token}")
names = tuple(x.strip() for x in names_text.split(",") if x.strip())
who: int | tuple[str, ...] = names if names else n_recipients

params = (token, qi, k, who, loss, l_min, l_max, disc, sup)
if st.button("Plan the fingerprints", type="primary", key="fp_plan"):
    st.session_state[session.FINGERPRINT_PLANNED] = params
if st.session_state.get(session.FINGERPRINT_PLANNED) != params:
    st.stop()
try:
    table = encoded(token, qi, frame, hier)
    plan = planned(token, qi, k, who, loss, l_min, l_max, disc, sup, table, table_fingerprint(frame))
except GraphlinkError as exc:  # ReleaseError: too few nodes, value missing from a hierarchy, …
    st.error(one_line(exc))
    st.stop()

c, s = plan.capacity, plan.loss_spread
m = [*st.columns(3), *st.columns([1, 2])]   # two rows: five long labels do not fit side by side
m[0].metric("Fingerprint capacity (upper bound)", f"{c['upper_bound']:,}",
            help="the number of generalization patterns: the product of the levels of each quasi-identifier "
                 "column, the original included")
m[1].metric("k-anonymous nodes", f"{c['k_anonymous']:,}")
m[2].metric("Usable within the bounds", f"{c['usable']:,}",
            help="k-anonymous, loss within the bounds, and a release no other chosen pattern could be mistaken for")
m[3].metric("Loss spread", f"{s['spread']:.4g}",
            help=f"max − min loss of the recipients' releases: {100 * s['of_range']:.1f}% of the range of every "
                 "k-anonymous node")
m[4].metric("Pairs jointly below k", f"{plan.collusion['pairs_below_k']:,} of {plan.collusion['pairs']:,}",
            help="Two recipients who link their releases know the finer level of each QI (the meet of their "
                 "nodes); for these pairs that joint table is not k-anonymous")
st.altair_chart(loss_chart(plan), use_container_width=True)
st.markdown("**Pattern-list** (recipient → generalization level per QI)")
show_table(pd.DataFrame([{"recipient": r.name, **dict(zip(plan.qi, r.levels, strict=True)), "loss": r.loss,
                            "k": r.k, "rows suppressed": r.suppressed_rows, "precision": round(r.prec, 4),
                            "rows naming it alone": r.distinguishing_rows} for r in plan.recipients]))
st.caption(f"Search over the generalization patterns: {plan.search['tested']:,} of {plan.search['nodes']:,} nodes "
           f"tested, {plan.search['tagged']:,} decided by monotone tagging; {plan.search['seconds']:.3f} s.")
st.download_button("Download the plan (JSON)", (json.dumps(plan.to_dict(), indent=1) + "\n").encode(),
                   file_name=f"{token}_fingerprint_plan.json", mime="application/json", key="fp_plan_download")

st.subheader("Release")
r1, r2 = st.columns([1, 2])
target = r1.selectbox("Recipient", plan.names, key="fp_release_who")
others = [c for c in frame.columns if c not in plan.qi]
drop = r2.multiselect("Leave out (direct identifiers)", others, key=f"fp_drop_{token}",
                      default=[c for c in others if str(c).lower() in ("name", "id", "ssn")])
released = release_frame(plan, table, target, drop=drop)
show_table(released.head(200))
st.download_button(f"Download {md(target)}'s release (CSV)", released.to_csv(index=False).encode(),
                   file_name=f"{token}_{target}.csv", mime="text/csv", key="fp_release_download")

st.subheader("Who leaked it?")
st.caption("Drop in leaked rows (any columns; the quasi-identifiers carry the pattern), paste them, or simulate a "
           "leak from one or more recipients' releases.")
l1, l2 = st.columns(2)
leak_up = l1.file_uploader("Leaked rows (CSV)", type=["csv"], key="fp_leak_upload")
leak_text = l2.text_area("…or paste CSV (with a header)", "", key="fp_leak_text", height=120)
s1, s2, s3 = st.columns([2, 1, 1])
leakers = s1.multiselect("Simulate: rows from these recipients", plan.names, key="fp_sim_who")
per = int(s2.number_input("rows from each", min_value=1, max_value=1000, value=1, key="fp_sim_rows"))
if s3.button("Simulate a leak", key="fp_simulate"):
    parts = [release_frame(plan, table, x).head(per) for x in leakers]
    st.session_state[session.FINGERPRINT_LEAK] = pd.concat(parts).to_csv(index=False) if parts else ""
leak: pd.DataFrame | None = None
if leak_up is not None:
    leak = read_or_stop(leak_up.getvalue(), leak_up.name)
elif leak_text.strip():
    leak = read_or_stop(leak_text.encode(), "the pasted rows")
elif st.session_state.get(session.FINGERPRINT_LEAK):
    leak = read_or_stop(st.session_state[session.FINGERPRINT_LEAK].encode(), "the simulated leak")
if leak is None:
    st.stop()
try:
    res = attribute(plan, leak)
except GraphlinkError as exc:  # ReleaseError: a leaked label that fits no node of the plan
    st.error(one_line(exc))
    st.stop()
v = st.columns(3)
v[0].metric("Attributed to", md(", ".join(res.recipients)) if res.recipients else "nobody")
v[1].metric("Exact match", "yes" if res.exact else "no")
v[2].metric("Rows explained", f"{res.explained_rows:,} of {res.rows:,}")
if res.recipients:
    st.success(md(res.reason))
else:
    st.warning(md(res.reason))
st.markdown("**Finest level seen per QI:** " + ", ".join(
    f"{md(q)} = {'absent' if lv is None else lv}" for q, lv in res.pattern.items()))
if not res.recipients and res.candidates:
    show_table(pd.DataFrame({"candidate set": [", ".join(c) for c in res.candidates]}))
with st.expander("The leaked rows"):
    show_table(leak.head(200))
st.caption("Attribution reads the labels only: a recipient can generalize further but not invent finer "
           "values, so the smallest set of recipients holding every observed granularity is the suspect.")
