"""Uploading a QI table with its ARX hierarchy files (shared by pages that work on one table's quasi-identifiers).

Used by the Quasi-identifiers and Fingerprinting pages.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pandas as pd
import streamlit as st

from graphlink.qi import hierarchy as H

Matrices = dict[str, list[list[str]]]


@st.cache_data(max_entries=8, show_spinner=False)
def read_upload(data: bytes) -> pd.DataFrame:
    """A CSV as text cells (``02138`` keeps its zero; only empty cells are missing), like ``qi.table.read_table``."""
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[""])


def upload_table(prefix: str) -> tuple[pd.DataFrame, Matrices, str]:
    """File uploaders for a CSV table and its ``<column>.csv`` hierarchies; stops the page until a table is given
    or when a hierarchy is malformed (the error names file, row and column). Returns the table, the hierarchy
    matrices and a token identifying the content (for caches)."""
    up = st.file_uploader("Table (CSV)", type=["csv"], key=f"{prefix}_upload")
    hup = st.file_uploader("Hierarchies: ARX CSVs named <column>.csv (';'-separated, one row per value, one column "
                           "per level). A column without one can only be kept or suppressed.", type=["csv"],
                           accept_multiple_files=True, key=f"{prefix}_upload_hier")
    if up is None:
        st.info("Upload a CSV table, or pick one of the bundled datasets.")
        st.stop()
    frame = read_upload(up.getvalue())
    hier: Matrices = {}
    try:
        for f in hup or []:
            col = Path(f.name).stem
            hier[col] = H.parse_csv(f.getvalue().decode("utf-8-sig"), col, f.name).matrix.tolist()
    except Exception as exc:  # ReleaseError names file, row and column
        st.error(f"Invalid hierarchy: {exc}")
        st.stop()
    token = hashlib.sha256(up.getvalue() + repr(sorted(hier.items())).encode()).hexdigest()[:16]
    return frame, hier, token
