"""Releases: the validated multi-location disclosures (thesis ch. 3, Definition 8 partitioned disclosure).

A *release* is what the locations published: for each location c an identified table γ_c (names,
demographics) and a de-identified table ω_c (DNA, IP addresses).  graphlink keeps it as one long table,
one row per disclosed element::

    location, kind, element          kind ∈ {identified, deidentified}

Readers accept that table as CSV or Parquet, a folder with one sub-folder per location holding
``identified.csv`` and ``deidentified.csv`` in their own schema (key columns named with ``id_key`` /
``deid_key``; a composite key is joined into one element key), or a pandas DataFrame.  Every validation
error is raised here, once, naming the file, row and column and what was expected.  Exact duplicate rows
are collapsed with a warning; nothing else is dropped.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError

COLUMNS = ("location", "kind", "element")
KINDS = ("identified", "deidentified")
KEY_SEPARATOR = "|"


class ReleaseWarning(UserWarning):
    """Something was normalised (e.g. exact duplicate rows collapsed); the CLI prints these on stderr."""


@dataclass(frozen=True)
class Release:
    """A validated multi-location release (see the module docstring for the format)."""

    frame: pd.DataFrame
    name: str = "release"
    source: str | None = None
    truth: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def locations(self) -> list[str]:
        """Locations in order of first appearance (this is the column order of the trail matrices)."""
        return list(pd.unique(self.frame["location"]))

    def elements(self, kind: str) -> pd.Index:
        """Distinct element keys of ``kind`` in order of first appearance."""
        _check_kind_name(kind)
        return pd.Index(pd.unique(self.frame.loc[self.frame["kind"] == kind, "element"]), dtype=object)

    def sizes(self) -> pd.DataFrame:
        """Per-location |γ_c| (identified) and |ω_c| (de-identified) counts of distinct elements."""
        counts = (self.frame.groupby(["location", "kind"], sort=False).size().unstack("kind", fill_value=0)
                  .reindex(columns=list(KINDS), fill_value=0).reindex(self.locations, fill_value=0))
        counts.index.name = "location"
        counts.columns.name = None
        return counts.astype("int64")

    def with_frame(self, frame: pd.DataFrame) -> Release:
        """The same release (name, truth) with another long table, validated like any input."""
        return Release(_validate_long(frame, source=self.source or "<frame>"), name=self.name,
                       source=self.source, truth=self.truth)

    def select(self, rows: pd.Series | np.ndarray) -> Release:
        """The release restricted to ``rows`` (a boolean mask over ``frame``): suppression keeps a subset of
        already validated rows, so nothing is re-validated.  O(rows)."""
        mask = np.asarray(rows, dtype=bool)
        if mask.shape != (len(self.frame),):
            raise ValueError("select() needs one boolean per row of the release")
        return Release(self.frame.loc[mask].reset_index(drop=True), name=self.name, source=self.source,
                       truth=self.truth)

    def to_csv(self, path: str | Path) -> None:
        self.frame.to_csv(path, index=False)

    def to_parquet(self, path: str | Path) -> None:
        self.frame.to_parquet(path, index=False)

    def __len__(self) -> int:
        return len(self.frame)


def _check_kind_name(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")


def read_release(source: str | Path | pd.DataFrame, *, id_key: Sequence[str] | None = None,
                 deid_key: Sequence[str] | None = None, name: str | None = None,
                 truth: str | Path | pd.DataFrame | None = None) -> Release:
    """Read and validate a release from a long CSV/Parquet file, a per-location folder or a DataFrame.

    Complexity O(rows) plus pandas parsing.  Raises :class:`ReleaseError` naming the file, row and
    column on bad input (missing columns, unknown ``kind``, empty keys, empty release, unreadable file).
    """
    if isinstance(source, pd.DataFrame):
        frame = _validate_long(source, source="<DataFrame>")
        label, src = name or "release", None
    else:
        path = Path(source)
        if not path.exists():
            raise ReleaseError("no such file or folder", file=str(path))
        if path.is_dir():
            frame = _read_folder(path, id_key=id_key, deid_key=deid_key)
        else:
            frame = _validate_long(_read_table(path), source=str(path), file_rows=True)
        label, src = name or path.stem, str(path)
    truth_frame = read_truth(truth) if truth is not None else None
    return Release(frame, name=label, source=src, truth=truth_frame)


def _read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
            return df.astype({c: "string" for c in df.columns if c in COLUMNS})
        return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError as exc:
        raise ReleaseError("the file is empty (expected a header row: location,kind,element)",
                           file=str(path)) from exc
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        what = "Parquet" if suffix in (".parquet", ".pq") else "CSV"
        raise ReleaseError(f"cannot read it as {what}: {exc}", file=str(path)) from exc


def _blank(values: pd.Series) -> pd.Series:
    s = values.astype("string")
    return s.isna() | (s.str.strip() == "")


def _first_bad_row(mask: pd.Series, file_rows: bool) -> int:
    """1-based line number in the file (header is line 1) when reading a file, else the 0-based index."""
    pos = int(mask.to_numpy().nonzero()[0][0])
    return pos + 2 if file_rows else pos


def _validate_long(df: pd.DataFrame, *, source: str, file_rows: bool = False) -> pd.DataFrame:
    """Check columns, kinds and keys; collapse exact duplicates with a warning.  O(rows)."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ReleaseError(f"missing column(s) {', '.join(repr(c) for c in missing)}; expected columns "
                           f"location, kind, element (found: {', '.join(map(str, df.columns)) or 'none'})",
                           file=source)
    if len(df) == 0:
        raise ReleaseError("the release is empty: no disclosed elements", file=source)
    out = pd.DataFrame({c: df[c] for c in COLUMNS}).reset_index(drop=True)
    for col in ("location", "element", "kind"):
        blank = _blank(out[col])
        if blank.any():
            n = int(blank.sum())
            raise ReleaseError(f"empty value where a {col} key was expected ({n} row(s) like this)",
                               file=source, row=_first_bad_row(blank, file_rows), column=col)
    for col in COLUMNS:
        out[col] = out[col].astype(str).str.strip()
    kind = out["kind"].str.lower().str.replace("-", "", regex=False).str.replace("_", "", regex=False)
    kind = kind.replace({"deidentified": "deidentified", "identified": "identified"})
    bad = ~kind.isin(KINDS)
    if bad.any():
        row = _first_bad_row(bad, file_rows)
        raise ReleaseError(f"unknown kind {out['kind'][bad].iloc[0]!r}; expected 'identified' or "
                           f"'deidentified' ({int(bad.sum())} row(s) like this)", file=source, row=row,
                           column="kind")
    out["kind"] = kind
    dup = out.duplicated()
    if dup.any():
        n = int(dup.sum())
        warnings.warn(f"{source}: collapsed {n} exact duplicate row(s) (first at row "
                      f"{_first_bad_row(dup, file_rows)})", ReleaseWarning, stacklevel=3)
        out = out[~dup].reset_index(drop=True)
    return out.astype({c: object for c in COLUMNS})


def _key_series(df: pd.DataFrame, cols: Sequence[str] | None, *, file: Path, role: str) -> pd.Series:
    if cols is None:
        if "element" in df.columns:
            cols = ["element"]
        elif len(df.columns) == 1:
            cols = [df.columns[0]]
        else:
            flag = "--id-key" if role == "identified" else "--deid-key"
            raise ReleaseError(f"cannot tell which column(s) hold the {role} key; name them with {flag} "
                               f"(columns: {', '.join(map(str, df.columns))})", file=str(file))
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ReleaseError(f"missing key column(s) {', '.join(map(repr, missing))} "
                           f"(columns: {', '.join(map(str, df.columns))})", file=str(file), column=missing[0])
    for c in cols:
        blank = _blank(df[c])
        if blank.any():
            raise ReleaseError(f"empty value in key column ({int(blank.sum())} row(s) like this)",
                               file=str(file), row=_first_bad_row(blank, True), column=c)
    parts = [df[c].astype(str).str.strip() for c in cols]
    key = parts[0]
    for p in parts[1:]:
        key = key + KEY_SEPARATOR + p
    return key


def _read_folder(path: Path, *, id_key: Sequence[str] | None, deid_key: Sequence[str] | None) -> pd.DataFrame:
    """Per-location folders: ``<path>/<location>/{identified,deidentified}.csv`` in their own schema."""
    subdirs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not subdirs:
        raise ReleaseError("expected one sub-folder per location holding identified.csv and "
                           "deidentified.csv", file=str(path))
    frames = []
    for loc in subdirs:
        for kind, cols in (("identified", id_key), ("deidentified", deid_key)):
            f = loc / f"{kind}.csv"
            if not f.exists():
                raise ReleaseError(f"location '{loc.name}' has no {kind}.csv (write an empty file with a "
                                   f"header if nothing was disclosed)", file=str(f))
            df = _read_table(f)
            if len(df) == 0:
                continue
            frames.append(pd.DataFrame({"location": loc.name, "kind": kind,
                                        "element": _key_series(df, cols, file=f, role=kind)}))
    if not frames:
        raise ReleaseError("the release is empty: no location disclosed anything", file=str(path))
    return _validate_long(pd.concat(frames, ignore_index=True), source=str(path))


def read_truth(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Ground truth pairs: columns ``identified``, ``deidentified`` (CSV path or DataFrame)."""
    label = "<DataFrame>" if isinstance(source, pd.DataFrame) else str(source)
    if isinstance(source, pd.DataFrame):
        df = source
    else:
        if not Path(source).exists():
            raise ReleaseError("no such truth file", file=label)
        df = _read_table(Path(source))
    missing = [c for c in ("identified", "deidentified") if c not in df.columns]
    if missing:
        raise ReleaseError(f"truth file is missing column(s) {', '.join(map(repr, missing))}; expected "
                           "identified,deidentified", file=label)
    out = df[["identified", "deidentified"]].astype(str).apply(lambda s: s.str.strip())
    for col in out.columns:
        blank = out[col] == ""
        if blank.any():
            raise ReleaseError("empty key in truth file", file=label, row=_first_bad_row(blank, True),
                               column=col)
    return out.drop_duplicates().reset_index(drop=True)
