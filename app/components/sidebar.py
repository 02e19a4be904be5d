"""Sidebar: Neo4j connection status, the current release, and a link to the documentation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from app import state
from app.components.labels import MULTIPLICITY_LABELS, SIDE_LABELS, label
from app.components.text import md
from graphlink.config import get_config


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
    module = state.optional_module("graphlink.store.neo4j")
    if module is None:
        return None, EngineStatus(False, None, None, "the Neo4j store module is not installed")
    try:
        store = module.connect()
        version = str(store.server_version())
        uri = getattr(store, "uri", None) or getattr(getattr(store, "config", None), "uri", None)
        return store, EngineStatus(True, str(uri) if uri else None, version, "connected")
    except Exception as exc:  # any failure to reach a server means: run in-process
        return None, EngineStatus(False, None, None, _why_not(exc))


def _why_not(exc: BaseException) -> str:
    """Why there is no connection, in words (the exception's class name means nothing to the person reading)."""
    name = type(exc).__name__
    if name in {"AuthError", "Unauthorized"} or "password" in str(exc).lower() or "credential" in str(exc).lower():
        return "a server answered but refused the credentials"
    if "not running" in str(exc) or name in {"ServiceUnavailable", "ConnectionRefusedError"}:
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
        loaded = state.current()
        if loaded is None:
            st.caption("None loaded: pick a demo on the Data page.")
        else:
            rel = loaded.release
            st.markdown(f"**{md(loaded.label)}**  \n{len(rel.locations):,} locations · "
                        f"{len(rel.elements('identified')):,} identified · "
                        f"{len(rel.elements('deidentified')):,} de-identified")
            r, m = state.model_of(state.reserved_choice())
            st.caption(f"side that may withhold: {md(label(r, SIDE_LABELS))} · multiplicity: "
                       f"{md(label(m, MULTIPLICITY_LABELS))}")
        st.markdown("#### Help")
        st.page_link("app/pages/docs.py", label="Documentation", icon=":material/menu_book:")
