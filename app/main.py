"""The app's entry: the page navigation, the sidebar and the demo release a new session starts on.

``graphlink app`` runs this file with ``streamlit run`` from the installed package (``graphlink_app/main.py``); in a
checkout, ``streamlit run streamlit_app.py`` calls :func:`run`. Streamlit runs the entry script again on every
interaction, so everything happens inside :func:`run`, which the script calls each time.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from graphlink.config import get_config
from graphlink.errors import GraphlinkError
from graphlink_app import caches, demos, navigation, session
from graphlink_app.components import sidebar


def pages() -> dict[str, list[StreamlitPage]]:
    """The navigation's sections, each a list of ``st.Page`` built from :data:`graphlink_app.navigation.SECTIONS`."""
    return {section: [st.Page(navigation.path(e.name), title=e.title, icon=e.icon, default=e.default,
                              visibility="hidden" if e.hidden else "visible") for e in entries]
            for section, entries in navigation.SECTIONS.items()}


def autoload() -> None:
    """Once per session: load the demo release ``GRAPHLINK_DEMO`` names (``thesis`` unless set; ``none`` for none),
    so the first screen has data. A demo that cannot be loaded leaves its reason for the Data page to show."""
    if session.AUTOLOAD_DONE in st.session_state:
        return
    st.session_state[session.AUTOLOAD_DONE] = True
    demo = demos.by_setting(get_config().demo)
    if demo is not None and session.current() is None:
        try:
            session.set_release(demos.load_demo(demo), demo)
        except (GraphlinkError, OSError) as exc:     # a broken install or data folder: the Data page says so
            st.session_state[session.AUTOLOAD_ERROR] = str(exc)


def run() -> None:
    """Draw the app once: page set-up, navigation, sidebar, then the chosen page."""
    st.set_page_config(page_title="graphlink — trail re-identification analyst", page_icon=":material/hub:",
                       layout="wide")
    caches.warm_kernels()   # numba's start-up in the background, once per server process
    autoload()
    page = st.navigation(pages())
    sidebar.render()
    page.run()


if __name__ == "__main__":   # `streamlit run` executes this file as the main script
    run()
