"""Cypher page: a read-only console against the connected Neo4j, with the example queries from cypher/."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import state
from app.components import sidebar

st.title("Cypher console")
st.caption("Read-only: queries run through `Store.run_cypher(..., write=False)`, which refuses anything that "
           "would modify the database.")

CYPHER_DIR = state.REPO_DIR / "cypher"
examples = {p.stem: p.read_text(encoding="utf-8") for p in sorted(CYPHER_DIR.glob("*.cypher"))}

store, status = sidebar.engine()
module = state.optional_module("graphlink.store.neo4j")
if module is None:
    state.unavailable("The Cypher console", "graphlink.store.neo4j")
    st.stop()
if not status.connected:
    st.warning(f"No Neo4j server is connected ({status.detail}). The analyses on the other pages run on the "
               "in-process engine; set `NEO4J_URI` (and `NEO4J_USER`/`NEO4J_PASSWORD`) to use this console.",
               icon=":material/cloud_off:")

if examples:
    name = st.selectbox("Example query (from cypher/)", ["(none)", *examples], key="cy_example")
    if name != "(none)" and st.session_state.get("cy_loaded") != name:
        st.session_state["cy_loaded"] = name
        st.session_state["cy_query"] = examples[name]
else:
    st.caption("No example queries found in `cypher/`.")

query = st.text_area("Query", key="cy_query", height=180, placeholder="MATCH (n) RETURN count(n) AS nodes")
params_text = st.text_input("Parameters (JSON object, optional)", key="cy_params", placeholder='{"k": 2}')
loaded = state.current()
if status.connected and loaded is not None and hasattr(store, "load_release"):
    st.caption("Load the current release into Neo4j to query it "
               "(writes go through the loader, not the console).")
    if st.button(f"Load '{loaded.label}' into Neo4j", key="cy_load_release"):
        try:
            with st.spinner("Writing the release to Neo4j…"):
                store.load_release(loaded.release)
            st.success("Release loaded.")
        except Exception as exc:
            st.error(f"Could not load the release: {exc}")


def _to_frame(result: Any) -> pd.DataFrame:
    if isinstance(result, pd.DataFrame):
        return result
    if hasattr(result, "to_df"):
        return result.to_df()
    return pd.DataFrame(list(result))


if st.button("Run query", type="primary", key="cy_run"):
    import json

    try:
        params = json.loads(params_text) if params_text.strip() else {}
        if not isinstance(params, dict):
            raise ValueError("parameters must be a JSON object")
    except ValueError as exc:
        st.error(f"Invalid parameters: {exc}")
        st.stop()
    if not query.strip():
        st.warning("Enter a query first.")
        st.stop()
    checker = getattr(module, "is_write_query", None)
    if checker is not None and checker(query):
        st.error("Refused: this console is read-only and the query would write to the database "
                 "(CREATE/MERGE/SET/DELETE/REMOVE/LOAD CSV ...).", icon=":material/block:")
        st.stop()
    if store is None:
        st.error("Cannot run the query: no Neo4j server is connected.")
        st.stop()
    try:
        with st.spinner("Running…"):
            frame = _to_frame(store.run_cypher(query, params, write=False))
    except Exception as exc:  # StoreError for refused writes, Neo4j errors for bad syntax
        from graphlink.errors import StoreError

        prefix = "Refused" if isinstance(exc, StoreError) else "Query failed"
        st.error(f"{prefix}: {exc}", icon=":material/block:")
        st.stop()
    st.success(f"{len(frame):,} row(s).")
    st.dataframe(frame, hide_index=True, width="stretch")
