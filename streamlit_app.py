"""graphlink analyst app — entry point: ``streamlit run streamlit_app.py``.

Pages live in ``app/pages``; per-release computations are cached in ``app/state.py``. Every number the app
shows comes from the graphlink library.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # make `app` importable when streamlit runs from another directory
    sys.path.insert(0, str(ROOT))


from app import state  # noqa: E402
from app.components import sidebar  # noqa: E402
from graphlink.config import get_config  # noqa: E402

st.set_page_config(page_title="graphlink — trail re-identification analyst", page_icon=":material/hub:",
                   layout="wide")

PAGES = {
    "Analyse": [
        st.Page("app/pages/data.py", title="Data", icon=":material/database:", default=True),
        st.Page("app/pages/trails.py", title="Trails", icon=":material/grid_on:"),
        st.Page("app/pages/linkgraph.py", title="Link graph", icon=":material/hub:"),
        st.Page("app/pages/reidentification.py", title="Re-identification", icon=":material/person_search:"),
        st.Page("app/pages/qi.py", title="Quasi-identifiers", icon=":material/badge:"),
    ],
    "Protect and query": [
        st.Page("app/pages/protect.py", title="Protect", icon=":material/shield:"),
        st.Page("app/pages/report.py", title="Risk report", icon=":material/summarize:"),
        st.Page("app/pages/fingerprint.py", title="Fingerprinting", icon=":material/fingerprint:"),
        st.Page("app/pages/secure.py", title="Secure protocol", icon=":material/lock:"),
        st.Page("app/pages/cypher.py", title="Cypher", icon=":material/terminal:"),
        st.Page("app/pages/experiments.py", title="Experiments", icon=":material/science:"),
    ],
    "Help": [st.Page("app/pages/docs.py", title="Documentation", icon=":material/menu_book:",
                     visibility="hidden")],
}

state.warm_kernels()   # numba's start-up in the background, once per server process

# start on a demo release (GRAPHLINK_DEMO=thesis|simulated|households|none; default thesis) so the first screen has data
if "autoload_done" not in st.session_state:
    st.session_state["autoload_done"] = True
    demo = {"thesis": state.DEMO_THESIS, "simulated": state.DEMO_SIMULATED,
            "households": state.DEMO_HOUSEHOLDS}.get(
        get_config().demo)
    if demo is not None and state.current() is None:
        try:
            state.set_release(state.load_demo(demo), demo)
        except Exception as exc:  # the library is missing or broken: the Data page says so
            st.session_state["autoload_error"] = str(exc)

page = st.navigation(PAGES)
sidebar.render()
page.run()
