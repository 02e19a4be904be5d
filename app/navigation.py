"""The app's pages: one table of file, title, icon and section, and the path of each page's script.

Streamlit resolves a page given as a relative path against the folder of the script it was started with, which is
the repository's ``streamlit_app.py`` in a checkout and ``graphlink_app/main.py`` in an installed package. The paths
here are absolute (the ``pages`` folder next to this module), so the same table serves both, and links between pages
(``st.page_link``) name a page by its file, never by a path that holds only in one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: the folder of the page scripts (``app/pages`` in the repository, ``graphlink_app/pages`` once installed)
PAGES_DIR = Path(__file__).resolve().parent / "pages"


@dataclass(frozen=True)
class PageEntry:
    """One page of the navigation: its script's file name (without ``.py``), title and Material icon."""

    name: str
    title: str
    icon: str
    default: bool = False
    hidden: bool = False


#: section heading -> its pages, in the order the navigation shows them
SECTIONS: dict[str, tuple[PageEntry, ...]] = {
    "Analyse": (
        PageEntry("data", "Data", ":material/database:", default=True),
        PageEntry("trails", "Trails", ":material/grid_on:"),
        PageEntry("linkgraph", "Link graph", ":material/hub:"),
        PageEntry("reidentification", "Re-identification", ":material/person_search:"),
        PageEntry("qi", "Quasi-identifiers", ":material/badge:"),
    ),
    "Protect and query": (
        PageEntry("protect", "Protect", ":material/shield:"),
        PageEntry("report", "Risk report", ":material/summarize:"),
        PageEntry("fingerprint", "Fingerprinting", ":material/fingerprint:"),
        PageEntry("secure", "Secure protocol", ":material/lock:"),
        PageEntry("cypher", "Cypher", ":material/terminal:"),
        PageEntry("experiments", "Experiments", ":material/science:"),
    ),
    "Help": (PageEntry("docs", "Documentation", ":material/menu_book:", hidden=True),),
}


def path(name: str) -> Path:
    """The absolute path of page ``name``'s script (``path("data")`` is the Data page), for ``st.Page`` and
    ``st.page_link``.  O(number of pages).

    Raises
    ------
    KeyError
        When no page of :data:`SECTIONS` has that name (a typo in a link would otherwise surface as Streamlit's
        "page not found" only when the link is drawn).
    """
    if not any(entry.name == name for entries in SECTIONS.values() for entry in entries):
        raise KeyError(name)
    return PAGES_DIR / f"{name}.py"
