"""Who can reach the app: loopback only (the default) or the network, and what is switched off when exposed.

``.streamlit/config.toml`` binds the server to 127.0.0.1. It is *exposed* when it listens anywhere else
(``--server.address 0.0.0.0``, which ``GRAPHLINK_EXPOSE=1 bash scripts/app.sh`` passes, or no address at all,
which Streamlit takes as every interface) or when ``GRAPHLINK_EXPOSE=1`` says so.

The Cypher console is off unless asked for, on loopback too: the app has no login, so whoever can open it (any
local account, on a shared machine) would query Neo4j with the analyst's credentials. ``GRAPHLINK_CYPHER_CONSOLE=1``
turns it on for everyone who can open the app; ``GRAPHLINK_CYPHER_CONSOLE_TOKEN=<secret>`` turns it on behind that
secret, which the page asks for once per browser session (docs/security.md). A secret shorter than
:data:`TOKEN_MIN_CHARS` keeps the console off, and after :data:`GUESSES` wrong secrets (all sessions together) the
console stays locked until the app is started again.
"""

from __future__ import annotations

import hmac
import ipaddress
import threading

import streamlit as st

from graphlink.config import get_config


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
    except RuntimeError:  # Streamlit's answer for an option it does not define
        return None


def exposed() -> bool:
    """The app is reachable from other machines (or says it is, with ``GRAPHLINK_EXPOSE=1``)."""
    return get_config().expose or not is_loopback(listen_address())


#: shortest console secret the app accepts, and wrong secrets it takes (all sessions together) before it locks
TOKEN_MIN_CHARS = 16
GUESSES = 5
_guesses = {"wrong": 0}
_guess_lock = threading.Lock()


def console_token() -> str | None:
    """The secret that unlocks the Cypher console (``GRAPHLINK_CYPHER_CONSOLE_TOKEN``), if one is set."""
    return get_config().cypher_console_token


def token_too_short() -> str:
    """Why the console's secret is refused (too short to resist guessing), or "" when it is fine or unset."""
    token = console_token()
    if token is None or len(token) >= TOKEN_MIN_CHARS:
        return ""
    return (f"The Cypher console is off: its secret (`GRAPHLINK_CYPHER_CONSOLE_TOKEN`) has {len(token)} "
            f"characters, and it needs at least {TOKEN_MIN_CHARS} so that it cannot be guessed. Start the app "
            "again with a longer secret (for example 32 random letters and digits; see docs/security.md).")


def console_locked() -> bool:
    """True once :data:`GUESSES` wrong secrets were entered in this app process (every browser session counts)."""
    with _guess_lock:
        return _guesses["wrong"] >= GUESSES


def token_matches(given: str) -> bool:
    """``given`` is the console's secret, compared in constant time. Every wrong secret counts against this app
    process; after :data:`GUESSES` of them nothing matches any more (:func:`console_locked`) until the app is
    started again, so the secret cannot be found by trying. A right secret clears the count."""
    token = console_token()
    if token is None or token_too_short():
        return False
    with _guess_lock:
        if _guesses["wrong"] >= GUESSES:
            return False
        right = hmac.compare_digest(given.strip().encode(), token.encode())
        _guesses["wrong"] = 0 if right else _guesses["wrong"] + 1
        return right


def reset_guesses() -> None:
    """Forget the wrong secrets counted so far (what a restart of the app does; tests use it)."""
    with _guess_lock:
        _guesses["wrong"] = 0


def cypher_console_allowed() -> tuple[bool, str]:
    """Whether the Cypher page may offer the console (a token may still be asked for), and why not."""
    if token_too_short():
        return False, token_too_short()
    if get_config().cypher_console or console_token():
        return True, ""
    where = ("This app is reachable from other machines" if exposed() else
             "This app has no login, so anyone who can open it on this machine could use it")
    return False, (f"The Cypher console is off. {where}: the console would let them query the Neo4j database "
                   "with the analyst's password. To turn it on, start the app with the environment variable "
                   "`GRAPHLINK_CYPHER_CONSOLE=1`, or with `GRAPHLINK_CYPHER_CONSOLE_TOKEN` set to a secret that "
                   "this page then asks for (see docs/security.md).")
