"""Tables shown by the app pages: one call, so every table looks the same.

Summary tables mix methods and runs that report different fields (REIDIT-I-K has ``k``, a run with a truth
file has ``recall``, a failed sweep step has no counts), so some cells are legitimately missing. Streamlit
draws a missing cell as the word "None"; here it stays empty, the way a printed table leaves it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

#: what a missing value (None, NaN, NaT, pd.NA) looks like in a table: nothing
MISSING = ""


def show_table(data: Any, *, where: Any = st, hide_index: bool = True, width: Any = "stretch", **kwargs: Any) -> Any:
    """``st.dataframe`` (on ``where``: ``st``, a column or a container) with missing cells left empty, the row
    index hidden and the full width used unless told otherwise; other keyword arguments pass through."""
    return where.dataframe(data, hide_index=hide_index, width=width, placeholder=MISSING, **kwargs)
