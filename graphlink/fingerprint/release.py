"""Releasing a recipient's copy (FP §3.1 step 9, "create similar microdata sets … and distribute them").

:func:`release_frame` encodes the table with the plan's hierarchies, refuses a table other than the planned one
(:func:`table_fingerprint`), generalizes every QI to the recipient's level, removes the rows of classes smaller
than k (the suppression the plan allowed) and shuffles the rows with a per-recipient permutation: releases that
share the row order could be joined row by row by colluders (SW-K §4's unsorted matching attack, whose remedy
is exactly this shuffle). Non-QI columns are released unchanged (``drop`` removes direct identifiers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.fileio import atomic_path
from graphlink.qi.table import QITable, as_labels, encode

if TYPE_CHECKING:
    from graphlink.fingerprint.plan import Plan


def table_fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's content, independent of row and column order: the sorted column names and the
    sorted rows, every cell as its label (``as_labels``: what a CSV round trip keeps). O(n log n · columns).

    Examples
    --------
    The same rows in another order, or the columns in another order, give the same fingerprint:

    >>> import pandas as pd
    >>> from graphlink.fingerprint import table_fingerprint
    >>> a = pd.DataFrame({"sex": ["m", "f"], "zip": ["1010", "1015"]})
    >>> table_fingerprint(a) == table_fingerprint(a.iloc[::-1][["zip", "sex"]])
    True
    >>> table_fingerprint(a) == table_fingerprint(a.head(1))
    False
    """
    cols = sorted(str(c) for c in frame.columns)
    h = hashlib.sha256(json.dumps(cols).encode())
    if len(frame):
        by_name = {str(c): c for c in frame.columns}
        cells = [_labels(frame[by_name[c]]) for c in cols]
        rows = sorted("\x1f".join(map(str, r)) for r in zip(*cells, strict=True))
        h.update("\x1e".join(rows).encode("utf-8"))
    return h.hexdigest()


def _labels(series: pd.Series) -> np.ndarray:
    """``as_labels`` as an object array, without the conversion when the column already holds only strings."""
    values = series.to_numpy(dtype=object)
    if series.dtype == object and all(type(v) is str for v in values):
        return values
    return as_labels(series).to_numpy(dtype=object)


def write_text(path: str | Path, text: str) -> None:
    """Write a text file atomically (``graphlink.fileio``: complete or not at all)."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def write_frame(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a released table as CSV or Parquet (by suffix), atomically."""
    with atomic_path(path) as tmp:
        if Path(path).suffix.lower() in (".parquet", ".pq"):
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)


def check_table(plan: Plan, frame: pd.DataFrame, source: str | None = None) -> None:
    """ReleaseError (one line) unless ``frame`` is the table the plan was made for."""
    got = table_fingerprint(frame)
    want = plan.table.get("fingerprint")
    if got != want:
        rows = plan.table.get("rows")
        raise ReleaseError(f"this plan was made for another table ({rows} rows, fingerprint {str(want)[:12]}…; this "
                           f"table has {len(frame)} rows, fingerprint {got[:12]}…)", file=source)


def encode_for_plan(plan: Plan, frame: pd.DataFrame, source: str | None = None) -> QITable:
    """The planned table encoded with the plan's hierarchies (after :func:`check_table`)."""
    check_table(plan, frame, source)
    return encode(frame, plan.qi, plan.hierarchies, source=source)


def release_frame(plan: Plan, frame: pd.DataFrame | QITable, recipient: str, *, shuffle: bool = True,
                  drop: Sequence[str] = (), source: str | None = None) -> pd.DataFrame:
    """The table as released to ``recipient``: every QI at the recipient's level, rows of classes smaller than
    k removed, other columns unchanged (minus ``drop``), rows in a per-recipient random order (seeded by the
    plan's seed and the recipient's position, so a release can be regenerated). O(n·m).

    Examples
    --------
    R2's copy of FP Table 1: sex kept, birth dates generalized to the year, names dropped:

    >>> from graphlink.fingerprint import EXAMPLES, make_plan
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> frame = read_table(EXAMPLES / "table1.csv")                     # FP Table 1
    >>> table = encode(frame, ["sex", "birthdate"], read_dir(EXAMPLES / "hierarchies"))
    >>> plan = make_plan(table, 2, 2, loss="samarati", l_min=1, l_max=2, discretisation="exact")
    >>> from graphlink.fingerprint import release_frame
    >>> copy = release_frame(plan, frame, "R2", drop=["name"])
    >>> sorted(copy.columns), sorted(copy["sex"]), sorted(set(copy["birthdate"]))
    (['birthdate', 'disease', 'sex'], ['f', 'f', 'm', 'm'], ['1970'])
    """
    r = plan.recipient(recipient)
    table = frame if isinstance(frame, QITable) else encode_for_plan(plan, frame, source)
    if isinstance(frame, QITable):
        check_table(plan, frame.frame, source)
    levels = np.asarray(r.levels, dtype=np.int64)
    sizes = table.class_sizes(levels)
    suppressed = (sizes < plan.k)[table.row_freq]
    out = table.generalized_frame(levels, keep=~suppressed)
    missing = [c for c in drop if c not in out.columns]
    if missing:
        raise ReleaseError(f"cannot drop column {missing[0]!r}: the table has {', '.join(map(str, out.columns))}",
                           file=source)
    if any(c in plan.qi for c in drop):
        raise ReleaseError("the quasi-identifiers carry the fingerprint and cannot be dropped", file=source)
    out = out.drop(columns=list(drop))
    if shuffle:
        rng = np.random.default_rng([plan.seed, plan.index(recipient)])
        out = out.iloc[rng.permutation(len(out))].reset_index(drop=True)
    return out
