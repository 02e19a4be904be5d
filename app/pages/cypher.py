"""Cypher page: a read-only console against the connected Neo4j, with the example queries from cypher/.

Off unless the app was started with ``GRAPHLINK_CYPHER_CONSOLE=1``, or with ``GRAPHLINK_CYPHER_CONSOLE_TOKEN`` set,
in which case the page asks for that secret once per browser session (app/components/exposure.py). Every query
goes through ``Store.run_cypher(..., write=False)``, the same code path as ``graphlink cypher``, and its locks
(docs/security.md): checked as the server will read it, planned by the server and checked against an allowlist of
read operations, run in a read-only session under a time limit.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st

from graphlink.errors import GraphlinkError, StoreError
from graphlink.store import cypherlib, guard
from graphlink.store import neo4j as neo4j_store
from graphlink_app import session
from graphlink_app.components import exposure, sidebar, words
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md


def _timeout() -> float | None:
    """The console's time limit per query (seconds), or None when GRAPHLINK_CYPHER_TIMEOUT is not a valid one (the
    store refuses each query then, with the reason)."""
    try:
        return float(neo4j_store.console_timeout())
    except StoreError:
        return None


#: the examples in the order a reader uses them: questions about the loaded release first, then those that need a
#: written analysis run or link graph, then the quasi-identifier and fingerprint tables; the loaders last
FIRST = ("trails", "reidit_c", "link_edges", "leave_one_location_out", "neighbourhood")
AFTER_A_RUN = ("reidentified_at_location", "locations_by_contribution", "k_unlinkability", "link_pairs",
               "most_likely_reidentified")
def writes(text: str) -> bool:
    """Whether a library statement changes the graph (a write clause or a schema command), as Neo4j's own parser
    reads it (``guard.read``). For ordering and labelling only: the console's own checks decide what runs; without
    the parser (no local Neo4j runtime) every example counts as a read."""
    try:
        return bool(guard.read(text).writes)
    except StoreError:  # labelling only: a missing or failing parser (QueryRefusedError) must not break the page
        return False


def example_rank(stem: str, text: str) -> tuple[int, int, str]:
    if writes(text):
        return 3, 0, stem
    if stem in FIRST:
        return 0, FIRST.index(stem), stem
    if stem in AFTER_A_RUN:
        return 1, AFTER_A_RUN.index(stem), stem
    return 2, 0, stem


def example_label(choice: tuple[str, str], library: dict[str, Any]) -> str:
    stem, name = choice
    label = stem if stem == name else f"{stem} · {name}"
    if writes(library[stem].statement(name).text):
        label += " (writes: refused by this read-only console)"
    return label


def release_label(info: Any, current: str | None) -> str:
    """A stored release (:class:`graphlink.store.reports.StoredRelease`) as the release picker shows it: its name,
    its size, and whether it holds exactly the release open in the app (same content fingerprint)."""
    name = str(info.name)
    rows = info.rows
    text = name + (f" ({rows:,} rows)" if isinstance(rows, int) else "")
    if current is not None and info.fingerprint == current:
        text += " · the release open in the app"
    return text


def _fingerprint(release: Any) -> str | None:
    """The content fingerprint the loader stores for ``release`` (None for a release the loader would refuse),
    computed once per release object in this session (O(rows log rows))."""
    cached = st.session_state.get(session.CYPHER_FINGERPRINT)
    if cached is not None and cached[0] is release:
        return cached[1]
    try:
        value: str | None = neo4j_store.release_fingerprint(release)
    except StoreError:
        value = None
    st.session_state[session.CYPHER_FINGERPRINT] = (release, value)
    return value


st.title("Cypher console")
allowed, why_not = exposure.cypher_console_allowed()
if not allowed:
    st.warning(why_not, icon=":material/lock:")
    st.stop()
if exposure.console_token() and not st.session_state.get(session.CYPHER_UNLOCKED):
    locked = ("The console is locked: the wrong secret was entered "
              f"{exposure.GUESSES} times since the app started. Start the app again to unlock it.")
    if exposure.console_locked():
        st.error(locked, icon=":material/lock:")
        st.stop()
    st.info("This console is protected by a secret: enter the one the app was started with.",
            icon=":material/key:")
    given = st.text_input("Console secret", type="password", key="cy_token")
    # a rerun keeps the typed text: each secret counts as one guess, not once per rerun (a digest is kept, not it)
    tried = hashlib.sha256(given.encode()).hexdigest() if given else None
    if tried and tried != st.session_state.get(session.CYPHER_TOKEN_TRIED):
        st.session_state[session.CYPHER_TOKEN_TRIED] = tried
        if exposure.token_matches(given):
            st.session_state[session.CYPHER_UNLOCKED] = True
            st.rerun()
    if given:
        st.error(locked if exposure.console_locked() else "That is not the console's secret.",
                 icon=":material/block:")
    st.stop()
limit = _timeout()
st.caption("Read-only: each query is checked as the server will read it, planned by the server and run only if "
           "every step of the plan reads the graph (no writes, no files or URLs, no server administration, no "
           "other sessions' queries), in a read-only session" + (f", stopped after {limit:g} s." if limit else "."))

store, status = sidebar.engine()
if not status.connected:
    st.warning(f"No Neo4j server is connected ({status.detail}). The analyses on the other pages run on the "
               "in-process engine; start one with `graphlink neo4j start` or set `NEO4J_URI` / `NEO4J_AUTH` "
               "to use this console.", icon=":material/cloud_off:")

loaded = session.current()
default_release = st.session_state.get(session.NEO4J_RELEASE) or (loaded.release.name if loaded else None)

# ------------------------------------------------------------------ the release the examples ask about
# The console never writes: it offers the releases already in Neo4j, it does not load, drop or replace any
# (anyone who may open this page could otherwise overwrite a stored release by name). `graphlink load` loads.
if status.connected and store is not None:
    try:
        stored = store.list_releases()
    except StoreError as exc:
        stored = []
        st.caption(f"Could not list the releases in Neo4j: {md(words.say(exc))}")
    current = _fingerprint(loaded.release) if loaded is not None else None
    names = [r.name for r in stored]
    if names:
        infos = {r.name: r for r in stored}
        match = next((n for n in names if current is not None and infos[n].fingerprint == current), None)
        # the stored copy of the app's release first; the picker keeps a reader's own choice until the list changes
        preferred = match or st.session_state.get(session.NEO4J_RELEASE) or default_release
        chosen = st.selectbox("Release in Neo4j (the example queries ask about it)", names,
                              index=names.index(preferred) if preferred in names else 0, key="cy_release",
                              format_func=lambda n: release_label(infos[n], current))
        st.session_state[session.NEO4J_RELEASE] = chosen
        default_release = chosen
    if loaded is not None and not any(current is not None and r.fingerprint == current for r in stored):
        st.info(f"The release open in the app ('{md(loaded.label)}') is not in Neo4j. This console only reads; "
                "load it from the command line, e.g. `graphlink load RELEASE_FILE --name NAME`.",
                icon=":material/info:")

# ------------------------------------------------------------------ examples
try:
    library = {cf.path.stem: cf for cf in cypherlib.library()}
except (GraphlinkError, OSError) as exc:  # a malformed or unreadable file must not break the console
    library = {}
    st.caption(f"Could not read the example queries: {md(exc)}")
choices = sorted(((stem, s.name) for stem, cf in library.items() for s in cf.statements),
                 key=lambda c: example_rank(c[0], library[c[0]].statement(c[1]).text))
if choices:
    pick = st.selectbox("Example query (from cypher/)", [None, *choices], key="cy_example",
                        format_func=lambda c: "(none)" if c is None else example_label(c, library))
    if pick is not None and st.session_state.get(session.CYPHER_LOADED) != (pick, default_release):
        cf = library[pick[0]]
        stmt = cf.statement(pick[1])
        params: dict[str, Any] = {k: v for k, (has, v, _) in cf.params.items() if has and k in stmt.parameters}
        if "release" in stmt.parameters and default_release:
            params["release"] = default_release
        st.session_state[session.CYPHER_LOADED] = (pick, default_release)
        st.session_state[session.CYPHER_QUERY] = stmt.text
        st.session_state[session.CYPHER_PARAMS] = json.dumps(params)
    if pick is not None:
        doc = library[pick[0]].doc
        if doc:
            st.caption(doc.replace("\n", " "))
else:
    st.caption("No example queries found in `cypher/`.")

query = st.text_area("Query", key=session.CYPHER_QUERY, height=200, placeholder="MATCH (n) RETURN count(n) AS nodes")
params_text = st.text_input("Parameters (JSON object, optional)", key=session.CYPHER_PARAMS, placeholder='{"k": 2}')

if st.button("Run query", type="primary", key="cy_run"):
    try:
        params = json.loads(params_text) if params_text.strip() else {}
        if not isinstance(params, dict):
            raise ValueError("parameters must be a JSON object")
    except ValueError as exc:
        st.error(f"Invalid parameters: {md(exc)}")
        st.stop()
    if not query.strip():
        st.warning("Enter a query first.")
        st.stop()
    if store is None:
        st.error("Cannot run the query: no Neo4j server is connected.")
        st.stop()
    try:
        with st.spinner("Running…"):
            frame = store.run_cypher(query, params, write=False)
    except StoreError as exc:  # QueryRefusedError for refused queries; StoreError for bad syntax, missing parameters
        if isinstance(exc, guard.QueryRefusedError):
            text = words.say(exc)   # "Refused (line 1, ...): ...", in the app's words
            st.error(md(text[:1].upper() + text[1:]), icon=":material/block:")
        else:
            st.error(f"Query failed: {md(words.say(exc))}", icon=":material/block:")
        st.stop()
    st.success(f"{len(frame):,} row(s).")
    show_table(frame)
