"""Sidebar: Neo4j connection status, the current release, and a link to the documentation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from graphlink.config import get_config
from graphlink.errors import GraphlinkError, MissingExtraError
from graphlink.store import neo4j as neo4j_store
from graphlink_app import navigation, session
from graphlink_app.components.labels import MULTIPLICITY_LABELS, SIDE_LABELS, label
from graphlink_app.components.text import md


@dataclass(frozen=True)
class EngineStatus:
    """Where queries run: a live Neo4j server, or the library's in-process engine."""

    connected: bool
    uri: str | None
    version: str | None
    detail: str


@st.cache_resource(ttl=60, show_spinner=False)
def _store(target: str) -> tuple[Any | None, EngineStatus]:
    """Connect once a minute per connection target (NEO4J_URI/NEO4J_AUTH); failures mean in-process."""
    try:
        store = neo4j_store.connect()
        version = str(store.server_version())
        uri = getattr(store, "uri", None) or getattr(getattr(store, "config", None), "uri", None)
        return store, EngineStatus(True, str(uri) if uri else None, version, "connected")
    except GraphlinkError as exc:  # StoreError (no server, refused credentials, a bad URI), no driver: in-process
        return None, EngineStatus(False, None, None, _why_not(exc))


def _why_not(exc: GraphlinkError) -> str:
    """Why there is no connection, in words (the store's one-line error names URIs and settings a person reading
    the sidebar need not know)."""
    text = str(exc).lower()
    if isinstance(exc, MissingExtraError):
        return "the Neo4j driver is not installed"
    if "password" in text or "credential" in text:
        return "a server answered but refused the credentials"
    if "not running" in text or "cannot reach" in text:
        return "no server is running or reachable"
    return "the server could not be reached"


def engine() -> tuple[Any | None, EngineStatus]:
    """The connected store (or None) and its status, cached for a minute."""
    cfg = get_config()
    target = "|".join(str(v or "") for v in (cfg.neo4j_uri, cfg.neo4j_auth, cfg.neo4j_user, cfg.neo4j_password,
                                              cfg.neo4j_database))
    return _store(target)


def render() -> None:
    with st.sidebar:
        _, status = engine()
        st.markdown("#### Engine")
        if status.connected:
            st.success(f"Neo4j {status.version}\n\n`{status.uri or 'configured URI'}`",
                       icon=":material/hub:")
        else:
            st.info(f"**In-process engine** (graphlink library).\n\nNeo4j: {status.detail}.",
                    icon=":material/memory:")
        st.markdown("#### Current release")
        loaded = session.current()
        if loaded is None:
            st.caption("None loaded: pick a demo on the Data page.")
        else:
            rel = loaded.release
            st.markdown(f"**{md(loaded.label)}**  \n{len(rel.locations):,} locations · "
                        f"{len(rel.elements('identified')):,} identified · "
                        f"{len(rel.elements('deidentified')):,} de-identified")
            r, m = session.model_of(session.reserved_choice())
            st.caption(f"side that may withhold: {md(label(r, SIDE_LABELS))} · multiplicity: "
                       f"{md(label(m, MULTIPLICITY_LABELS))}")
        st.markdown("#### Help")
        st.page_link(navigation.path("docs"), label="Documentation", icon=":material/menu_book:")
