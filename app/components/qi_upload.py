"""Uploading a QI table with its ARX hierarchy files (shared by pages that work on one table's quasi-identifiers).

Used by the Quasi-identifiers and Fingerprinting pages.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink_app.components.text import md, one_line

Matrices = dict[str, list[list[str]]]


@st.cache_data(max_entries=8, show_spinner=False)
def read_upload(data: bytes, name: str = "the upload") -> pd.DataFrame:
    """A CSV read by ``graphlink.qi.table.read_table`` (text cells, so ``02138`` keeps its zero; only empty cells
    are missing; the file rules every graphlink reader shares: UTF-8, ragged rows refused).  A ReleaseError
    names ``name`` (the uploaded file's name), never the temporary copy."""
    from graphlink.qi.table import read_table

    with tempfile.TemporaryDirectory(prefix="graphlink-upload-") as d:
        p = Path(d) / "upload.csv"
        p.write_bytes(data)
        try:
            return read_table(p)
        except ReleaseError as exc:
            raise ReleaseError(exc.detail, file=name, row=exc.row, column=exc.column) from None


def read_or_stop(data: bytes, name: str) -> pd.DataFrame:
    """:func:`read_upload`, or stop the page with a one-line error naming the upload."""
    try:
        return read_upload(data, name)
    except (ReleaseError, OSError) as exc:  # ReleaseError names file, row and column; OSError: no room to copy
        st.error(f"Could not read {md(name)}: {one_line(exc)}")
        st.stop()


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
    frame = read_or_stop(up.getvalue(), up.name)
    hier: Matrices = {}
    try:
        for f in hup or []:
            col = Path(f.name).stem
            try:
                text = f.getvalue().decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise ReleaseError(f"byte 0x{f.getvalue()[exc.start]:02x} is not UTF-8; expected UTF-8 ARX CSV text",
                                   file=f.name) from None
            hier[col] = H.parse_csv(text, col, f.name).matrix.tolist()
    except ReleaseError as exc:  # names file, row and column
        st.error("Invalid hierarchy: " + one_line(exc))
        st.stop()
    token = hashlib.sha256(up.getvalue() + repr(sorted(hier.items())).encode()).hexdigest()[:16]
    return frame, hier, token
