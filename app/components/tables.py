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


#: a text longer than this (characters) does not fit a column's width: its table wraps text over taller rows
LONG_TEXT = 48
#: rows tall enough for three lines: Streamlit's table wraps cell text only when rows are taller than 4rem
WRAPPED_ROW_HEIGHT = 72


def long_text_columns(data: Any) -> list[str]:
    """The text columns of a DataFrame holding a value longer than :data:`LONG_TEXT` (checked on the first
    1,000 rows: O(columns · 1,000))."""
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        return []
    head = data.head(1000)
    return [str(c) for c in head.columns
            if head[c].dtype == object and head[c].map(lambda v: len(str(v)) if v is not None else 0).max() > LONG_TEXT]


def show_table(data: Any, *, where: Any = st, hide_index: bool = True, width: Any = "stretch", **kwargs: Any) -> Any:
    """``st.dataframe`` (on ``where``: ``st``, a column or a container) with missing cells left empty, the row
    index hidden and the full width used unless told otherwise; other keyword arguments pass through.  Whole
    numbers show thousands separators.  A table with long texts (reasons, explanations) gets wide text columns
    and rows tall enough to wrap them, so no text is cut at the column's edge."""
    import pandas as pd

    config = dict(kwargs.get("column_config") or {})
    long = long_text_columns(data)
    if long and "row_height" not in kwargs:
        kwargs["row_height"] = WRAPPED_ROW_HEIGHT
        for c in long:
            config.setdefault(c, st.column_config.TextColumn(c, width="large"))
    if isinstance(data, pd.DataFrame):   # counts with thousands separators, as everywhere else in the app
        for c in data.columns:
            if pd.api.types.is_integer_dtype(data[c].dtype) and not pd.api.types.is_bool_dtype(data[c].dtype):
                config.setdefault(str(c), st.column_config.NumberColumn(str(c), format="localized"))
    if config:
        kwargs["column_config"] = config
    return where.dataframe(data, hide_index=hide_index, width=width, placeholder=MISSING, **kwargs)
