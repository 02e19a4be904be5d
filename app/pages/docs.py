"""Documentation page: renders the project's markdown docs (docs/*.md) inside the app."""

from __future__ import annotations

import streamlit as st

from app import state

st.title("Documentation")
docs = sorted(state.DOCS_DIR.glob("*.md"))
if not docs:
    st.warning(f"No documentation found in {state.DOCS_DIR}.")
    st.stop()
names = [d.name for d in docs]
default = names.index("app.md") if "app.md" in names else 0
name = st.selectbox("Document", names, index=default, key="docs_doc")
st.markdown((state.DOCS_DIR / name).read_text(encoding="utf-8"))
