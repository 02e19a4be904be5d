"""Documentation page: the user guide (docs/guide.md), written for the people who decide about a release.

The repository's other documents (algorithms, benchmarks, tests, security) are for developers and are not shown
here; the guide's last section, which names their files for readers of the repository, is left out of the page
(the app speaks words, not file paths).
"""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

import graphlink_app

#: the app's folder: ``app/`` in a checkout, ``graphlink_app/`` once installed
APP_DIR = Path(graphlink_app.__file__).resolve().parent
#: the user guide: the copy an installed package carries (setup.py puts docs/guide.md there), else the checkout's
GUIDE = next((p for p in (APP_DIR / "guide.md", APP_DIR.parent / "docs" / "guide.md") if p.is_file()),
             APP_DIR / "guide.md")
#: the guide's section for readers of the repository (file names), not shown in the app
REPOSITORY_SECTION = "Where to read more"

if not GUIDE.is_file():
    st.title("Documentation")
    st.warning("The user guide is missing from this installation.")
    st.stop()
text = GUIDE.read_text(encoding="utf-8")
# one section per "## " heading: a contents list on the left, the chosen section on the right
parts = re.split(r"(?m)^## ", text)
intro, sections = parts[0], {p.splitlines()[0].strip(): p for p in parts[1:]}
sections.pop(REPOSITORY_SECTION, None)
st.markdown(intro)
contents, body = st.columns([1, 3])
with contents:
    chosen = st.radio("Contents", ["All of it", *sections], key="docs_section")
with body:
    for title, section in sections.items():
        if chosen in ("All of it", title):
            st.markdown("## " + section)
