"""The session's state: every key the app keeps in ``st.session_state`` (named here once), and the loaded release.

Widgets keep their own value under their ``key=``, which each page names where it draws the widget; the keys below
are the ones the app reads or writes itself, several of them from more than one module. A page keeps "has this run
already" markers under its own keys here too, so that two pages can never share one by accident.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from graphlink_app import navigation

# --------------------------------------------------------------------------------------------- the release
#: the :class:`Loaded` release every page works on
LOADED = "loaded"
#: the Data page's choice of the side that may withhold records (``auto``, ``deidentified``, ``identified``, ``none``)
RESERVED = "reserved"
#: the Data page's choice of multiplicity (``auto``, ``one-to-one``, ``one-to-many``)
MULTIPLICITY = "multiplicity"
#: the element the Link graph page shows (cleared when another release is loaded)
SELECTED_ELEMENT = "selected_element"
#: set once the session's start-up demo was loaded (or tried)
AUTOLOAD_DONE = "autoload_done"
#: why the start-up demo could not be loaded, for the Data page
AUTOLOAD_ERROR = "autoload_error"
#: the upload the Data page read last (name and size of release and truth), so a rerun does not read it again
UPLOAD_TOKEN = "upload_token"
#: why that upload was refused, shown until another file is chosen
UPLOAD_ERROR = "upload_error"

# ------------------------------------------------------------------------ what a page ran (its last inputs)
#: prefix of the Re-identification page's "ran" marker, per release (``reid_ran_<release key>``)
REIDENTIFICATION_RAN_PREFIX = "reid_ran_"
#: prefix of the Re-identification page's leave-one-location-out choice, per release (``loo_<release key>``)
LEAVE_ONE_OUT_PREFIX = "loo_"
PROTECT_RAN = "protect_ran"
PROTECT_SWEEP_RAN = "protect_sweep_ran"
REPORT_RAN = "report_ran"
SECURE_RAN = "sec_ran"
QI_RAN = "qi_ran"
QI_COMPARED = "qi_compared"
FINGERPRINT_PLANNED = "fp_planned"
#: the simulated leak of the Fingerprinting page, as CSV text
FINGERPRINT_LEAK = "fp_leak"
EXPERIMENT_RAN = "exp_ran"

# ------------------------------------------------------------------------------------------ the Cypher page
#: the release the console queries in Neo4j
NEO4J_RELEASE = "neo4j_release"
#: (release, fingerprint) of the release as stored in Neo4j, so the page asks the server once
CYPHER_FINGERPRINT = "cy_fingerprint"
#: the console was unlocked with its secret in this browser session
CYPHER_UNLOCKED = "cy_unlocked"
#: the last secret tried, so a rerun does not count it as another guess
CYPHER_TOKEN_TRIED = "cy_token_tried"
#: (example, release) the query box was last filled from
CYPHER_LOADED = "cy_loaded"
#: the query box and the parameters box (widget keys the page also fills from an example)
CYPHER_QUERY = "cy_query"
CYPHER_PARAMS = "cy_params"


@dataclass(frozen=True)
class Loaded:
    """The release the session works on, with its cache key and a human label."""

    key: str
    release: Any  # graphlink.core.release.Release
    label: str


def release_key(release: Any) -> str:
    """Content hash of a release (frame + truth), the cache key of every per-release computation.  O(rows)."""
    h = hashlib.sha1()
    h.update(pd.util.hash_pandas_object(release.frame, index=False).to_numpy().tobytes())
    h.update(",".join(map(str, release.frame.columns)).encode())
    if release.truth is not None:
        h.update(pd.util.hash_pandas_object(release.truth, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def set_release(release: Any, label: str) -> Loaded:
    """Make ``release`` the session's release under ``label`` (the element picked on another one is forgotten)."""
    loaded = Loaded(release_key(release), release, label)
    st.session_state[LOADED] = loaded
    st.session_state.pop(SELECTED_ELEMENT, None)
    return loaded


def current() -> Loaded | None:
    """The session's release, or None before one is loaded."""
    return st.session_state.get(LOADED)


def require_release() -> Loaded:
    """Return the loaded release or stop the page with a pointer to the Data page."""
    loaded = current()
    if loaded is None:
        st.info("No release is loaded yet. Open the **Data** page and pick a demo or upload a release.")
        st.page_link(navigation.path("data"), label="Go to Data", icon=":material/database:")
        st.stop()
    return loaded


def set_model(reserved: str, multiplicity: str) -> None:
    """Record the Data page's choice of the side that may withhold and of the multiplicity."""
    st.session_state[RESERVED] = reserved
    st.session_state[MULTIPLICITY] = multiplicity


def reserved_choice() -> str:
    """The data-model choice of the session as one cache key: ``"<reserved>|<multiplicity>"`` (see
    :func:`model_of`); every per-release cache of :mod:`graphlink_app.caches` is keyed by it."""
    return f"{st.session_state.get(RESERVED, 'auto')}|{st.session_state.get(MULTIPLICITY, 'auto')}"


def model_of(choice: str) -> tuple[str, str]:
    """(reserved, multiplicity) of a :func:`reserved_choice` key (a bare reserved side means auto multiplicity)."""
    reserved, _, multiplicity = choice.partition("|")
    return reserved or "auto", multiplicity or "auto"
