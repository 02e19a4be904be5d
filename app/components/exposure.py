"""Who can reach the app: loopback only (the default) or the network, and what is switched off when exposed.

``.streamlit/config.toml`` binds the server to 127.0.0.1. It is *exposed* when it listens anywhere else
(``--server.address 0.0.0.0``, which ``GRAPHLINK_EXPOSE=1 bash scripts/app.sh`` passes, or no address at all,
which Streamlit takes as every interface) or when ``GRAPHLINK_EXPOSE=1`` says so. An exposed app keeps its
Cypher console off unless ``GRAPHLINK_CYPHER_CONSOLE=1`` turns it on explicitly (docs/security.md).
"""

from __future__ import annotations

import ipaddress
import os

import streamlit as st

TRUE = {"1", "true", "yes", "on"}


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in TRUE


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; False for anything else, including no address."""
    if not address:
        return False
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def listen_address() -> str | None:
    """The address the Streamlit server binds (``server.address``; None means every interface)."""
    try:
        return st.get_option("server.address")
    except Exception:  # outside a Streamlit runtime the option may be unknown
        return None


def exposed() -> bool:
    """The app is reachable from other machines (or says it is, with ``GRAPHLINK_EXPOSE=1``)."""
    return _flag("GRAPHLINK_EXPOSE") or not is_loopback(listen_address())


def cypher_console_allowed() -> tuple[bool, str]:
    """Whether the Cypher page may run queries, and why not."""
    if not exposed():
        return True, ""
    if _flag("GRAPHLINK_CYPHER_CONSOLE"):
        return True, ""
    where = listen_address() or "every interface"
    return False, (f"The Cypher console is off because this app is exposed beyond this machine (it listens on "
                   f"`{where}`{' and GRAPHLINK_EXPOSE is set' if _flag('GRAPHLINK_EXPOSE') else ''}). "
                   "Run it on 127.0.0.1 (the default of `bash scripts/app.sh`), or start it with "
                   "`GRAPHLINK_CYPHER_CONSOLE=1` to allow the read-only console to everyone who can reach it.")
