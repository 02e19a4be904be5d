"""Secure protocol page: simulate STRANON (Malin 2006 ch. 8, App. C) and step through its messages.

The protocol runs the protection methods of the Protect page over encrypted data, so it refuses (in the same
words) every release protection by withholding refuses (``caches.protect_refusal``)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pandas as pd
import streamlit as st

from graphlink.secure import api, protocol
from graphlink.secure import parties as parties_mod
from graphlink_app import caches, navigation, session
from graphlink_app.components import words
from graphlink_app.components.labels import label, number, secure_labels
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md, one_line

st.title("Secure protocol")
loaded = session.require_release()

st.caption("Each location and a semi-trusted third party (sTTP) run as separate parties that exchange only "
           "encoded messages; de-identified data travel encrypted under keys that can be applied in any order, "
           "so the third party compares records it cannot read. Integrity checks catch a cheating location: a "
           "dummy record common to all locations, dummy records of each location, extra check rounds, and locked "
           "returns (Malin 2006, chapter 8).")

multiplicity = session.model_of(session.reserved_choice())[1]
refusal = words.protect_refusal(caches.protect_refusal(loaded.key, multiplicity, loaded.release), words.SECURE)
if refusal is not None:   # what the Protect page refuses, the protocol (the same methods, encrypted) refuses too
    st.info(refusal, icon=":material/info:")
    st.page_link(navigation.path("data"), label="Data page: Multiplicity", icon=":material/database:")
    st.stop()

c1, c2, c3 = st.columns(3)
k = int(c1.number_input("k", 1, 20, 2, key="sec_k"))
method = c1.selectbox("Method", ["greedy-dedup-secure", "force-dedup-secure"], key="sec_method",
                      format_func=lambda m: label(m, secure_labels()))
integrity = c2.toggle("Integrity checks", value=True, key="sec_integrity")
alpha = int(c2.number_input("Check rounds", 0, 5, 1, key="sec_alpha", disabled=not integrity))
beta = int(c2.number_input("Dummy records per location", 0, 10, 2, key="sec_beta", disabled=not integrity))
locking = c3.toggle("Locked returns", value=True, key="sec_locking")
BEHAVIOUR_LABELS = {"honest": "honest", "full-switch": "swaps all its records", "partial-switch":
                    "swaps some of its records", "refuse-decrypt": "refuses to decrypt", "grab-and-go":
                    "takes the result and leaves"}
kinds = ["honest", "full-switch", "partial-switch", "refuse-decrypt", "grab-and-go"]
cheat = c3.selectbox("Behaviour of the first location", kinds, key="sec_behaviour",
                     format_func=lambda b: BEHAVIOUR_LABELS.get(b, b),
                     help="Simulate a cheating location (Malin 2006, Appendix C) to see the integrity checks "
                          "fire.")

locs = list(loaded.release.locations)
if len(locs) < 2:
    st.warning("The protocol needs at least two locations.")
    st.stop()


@st.cache_resource(max_entries=16, show_spinner="Running the protocol…")
def run(key: str, k: int, method: str, integrity: bool, alpha: int, beta: int, locking: bool, cheat: str,
        _release: Any) -> Any:
    """One protocol run; its randomness (shuffles, dummies, keys) comes from the OS CSPRNG, never a seed."""
    names, gamma, omega = api.release_sets(_release)
    data = {c: (gamma[c], omega[c]) for c in names}
    behaviours = None
    if cheat != "honest":
        behaviours = {names[0]: parties_mod.Behaviour(kind=cheat, victim=names[1], f=1)}
    return protocol.run_stranon(data, k, method, alpha=alpha, beta=beta, integrity=integrity,
                                locking=locking, behaviours=behaviours, keep_messages=True)


def certification_text(cert: dict, k: int) -> str:
    """The sTTP's certification (its external and central checks, Malin 2006 Definitions 22 and 24) in words."""
    if not cert:
        return "the sTTP did not certify this run (it stopped before the check)."
    if not cert.get("checked"):
        size = (f" ({cert['pairs']:,} pairs of identified and de-identified elements to compare, above its limit "
                f"of {cert['limit']:,})") if "pairs" in cert and "limit" in cert else ""
        return f"the sTTP skipped its certification: the release is too large to check within its limit{size}."
    verdict = {True: "passed", False: "failed"}
    repairs = list(cert.get("repairs", []))
    text = (f"the sTTP's certification of {k}-unlinkability: outside observer's check "
            f"{verdict[bool(cert.get('external'))]}, sTTP's own check {verdict[bool(cert.get('central'))]}")
    if repairs:
        text += (f"; to pass it withheld every record of {md(', '.join(map(str, repairs)))} "
                 f"({len(repairs)} repair round{'s' if len(repairs) != 1 else ''})")
    return text + "."


#: the columns of the per-party tables, titled for a reader (the library's counters keep their short names)
SEEN_COLUMNS = {"kind": "message", "from": "from", "records": "records", "bytes": "bytes"}
COST_COLUMNS = {"dataset_ops": "set operations", "element_ops": "element operations", "hash_ops": "hash operations",
                "messages_sent": "messages sent", "messages_received": "messages received",
                "bytes_sent": "bytes sent", "bytes_received": "bytes received", "records_sent": "records sent",
                "records_received": "records received", "cpu_seconds": "CPU seconds"}


if st.button("Run protocol", type="primary", key="sec_run"):
    st.session_state[session.SECURE_RAN] = True
if not st.session_state.get(session.SECURE_RAN):
    st.info("Set the parameters and press **Run protocol**.")
    st.stop()
try:
    res = run(loaded.key, k, method, integrity, alpha if integrity else 0, beta if integrity else 0, locking,
              cheat, loaded.release)
except caches.PROTECTION_ERRORS as exc:
    st.error("The protocol could not run: " + one_line(exc))
    st.stop()

if res.aborted:
    st.error(f"**Aborted by the sTTP:** {md(res.aborted)}", icon=":material/gpp_bad:")
else:
    st.success(f"Completed: {sum(len(v) for v in res.disclosed.values()):,} de-identified record(s) disclosed "
               f"across {sum(1 for v in res.disclosed.values() if v):,} location(s).", icon=":material/verified:")
st.markdown("**Integrity checks and detections**")
if res.detections:
    for d in res.detections:
        st.markdown(f"- :red[detected] {md(d)}")
else:
    st.markdown("- no integrity check fired")
st.markdown(f"- {certification_text(res.certification, k)}")

log = list(res.log)
st.subheader(f"Messages ({len(log):,})")
log_df = pd.DataFrame(log, columns=["sender", "recipient", "message", "records", "bytes", "data owner"])
log_df.insert(0, "step", range(1, len(log) + 1))
# a select slider, so its ends are labelled with thousands separators like every other count
step = st.select_slider("Step", options=list(range(1, len(log) + 1)), value=1, format_func=lambda i: f"{i:,}",
                        key="sec_step") if log else 0


def _preview(value: Any) -> str:
    """One message field as a reader sees it: ciphertexts as shortened hex, lists as comma-separated items, no
    Python syntax (quotes, brackets, ``b'...'``)."""
    if isinstance(value, bytes):
        return value.hex()[:24] + "…"
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        if not items:
            return "(none)"
        if isinstance(items[0], bytes):
            head = ", ".join(v.hex()[:16] + "…" for v in items[:3])
            return f"{len(items)} ciphertext(s): {head}{' …' if len(items) > 3 else ''}"
        shown = ", ".join(_preview(v) for v in items[:8])
        return f"{shown} … ({len(items)} items)" if len(items) > 8 else shown
    if isinstance(value, dict):
        return "; ".join(f"{_preview(k)}: {_preview(v)}" for k, v in value.items()) or "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "(none)"
    return str(value)


if log:
    sender, recipient, kind, records, nbytes, owner = log[step - 1]
    st.markdown(f"**Step {step:,}: {md(sender)} → {md(recipient)}** · {md(kind.replace('_', ' '))} · "
                f"{records:,} record(s) · {nbytes:,} bytes"
                + (f" · data of {md(owner)}" if owner else ""))
    nth = sum(1 for e in log[: step - 1] if e[1] == recipient)
    party = res.parties.get(recipient)
    received = getattr(party, "received", []) if party is not None else []
    if nth < len(received):
        msg = received[nth]
        show_table(pd.DataFrame([{"field": f.name.replace("_", " "),
                                  "what the recipient sees": _preview(getattr(msg, f.name))} for f in fields(msg)]))
    with st.expander("All messages"):
        show_table(log_df)

st.subheader("What each party sees")
who = st.selectbox("Party", list(res.seen), key="sec_party")
seen = pd.DataFrame(res.seen[who])
show_table(seen.rename(columns=SEEN_COLUMNS))
st.markdown("**Costs per party** (the counters of Malin 2006, Appendix C)")
# one row per counter, one column per party: ten counters side by side do not fit the page's width
costs = pd.DataFrame(res.costs).rename(index=COST_COLUMNS)
shown = pd.DataFrame({party: [f"{float(v):.4f}" if name == "CPU seconds" else number(v)
                              for name, v in costs[party].items()] for party in costs.columns},
                     index=costs.index, dtype=object)
shown.insert(0, "counter", shown.index.astype(str))
show_table(shown)
st.markdown("**Disclosed per location**")
show_table(pd.DataFrame({"location": list(res.disclosed),
                         "disclosed records": [number(len(v)) for v in res.disclosed.values()]}))
