"""Releases: the validated multi-location disclosures (thesis ch. 3, Definition 8 partitioned disclosure).

A *release* is what the locations published: for each location c an identified table γ_c (names,
demographics) and a de-identified table ω_c (DNA, IP addresses).  graphlink keeps it as one long table,
one row per disclosed element::

    location, kind, element          kind ∈ {identified, deidentified}

Readers accept that table as CSV or Parquet, a folder with one sub-folder per location holding
``identified.csv`` and ``deidentified.csv`` in their own schema (key columns named with ``id_key`` /
``deid_key``; a composite key is joined into one element key), or a pandas DataFrame.  Every validation
error is raised here, once, naming the file, row and column and what was expected.

How a file is read (encodings, quoting, blank rows, row numbers, Parquet column types) is the business of
:mod:`graphlink.core.tabular`.  On top of that, the release rules:

* the columns ``location``, ``kind``, ``element`` must each appear exactly once; other columns are ignored;
* values are stripped of surrounding whitespace (``str.strip``); an empty key is refused;
* ``kind`` is case-insensitive and ignores ``-`` and ``_`` (``De-Identified``, ``de_identified``); any
  other kind is refused;
* exact duplicate rows (after the normalisation above) are collapsed with a :class:`ReleaseWarning` that
  says how many and where the first repeat is; nothing else is dropped;
* a DataFrame's rows are named by their 0-based position.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphlink.core.ingest import COLUMNS, KINDS, kind_of
from graphlink.core.tabular import Table, names_list, parquet_parts, read_table, write_csv
from graphlink.errors import ReleaseError
from graphlink.fileio import check_input

if TYPE_CHECKING:          # pandas is imported where used: a small CSV release is read and summarised without it
    import pandas as pd

    from graphlink.core.ingest import CodedRelease

__all__ = ["COLUMNS", "KEY_SEPARATOR", "KINDS", "LocationSizes", "Release", "ReleaseWarning", "read_release",
           "read_truth"]

KEY_SEPARATOR = "|"


class ReleaseWarning(UserWarning):
    """Something was normalised (e.g. exact duplicate rows collapsed); the CLI prints these on stderr."""


def _warn_repeats(where: str, count: int, row: object, *, what: str = "row(s)", stacklevel: int = 3) -> None:
    """The :class:`ReleaseWarning` of every reader that collapsed exact repeats (``row``: the first repeat)."""
    warnings.warn(f"{where}: collapsed {count} exact duplicate {what} (first repeat at row {row})", ReleaseWarning,
                  stacklevel=stacklevel + 1)


def _is_frame(source: object) -> bool:
    """Is ``source`` a pandas DataFrame?  Asked without importing pandas: a DataFrame means pandas is loaded."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(source, pd.DataFrame)


@dataclass(frozen=True, eq=False)
class LocationSizes:
    """Per-location |γ_c| (identified) and |ω_c| (de-identified) counts of distinct elements, without pandas.

    ``identified[i]`` and ``deidentified[i]`` (int64) belong to ``locations[i]``.  What the data model is decided
    on (:mod:`graphlink.core.model`); :meth:`frame` is the DataFrame of :meth:`Release.sizes`.

    Examples
    --------
    Per location of Fig. 3.4, the identified and de-identified table sizes:

    >>> import graphlink as gl
    >>> sizes = gl.build_trails(gl.thesis_example()).location_sizes
    >>> sizes.locations, sizes.identified.tolist(), sizes.deidentified.tolist()
    (['H1', 'H2', 'H3', 'H4'], [3, 3, 3, 3], [2, 3, 3, 2])
    """

    locations: list[str]
    identified: np.ndarray
    deidentified: np.ndarray

    @classmethod
    def of(cls, sizes: pd.DataFrame | LocationSizes) -> LocationSizes:
        """``sizes`` as LocationSizes (a DataFrame indexed by location with columns identified, deidentified).
        O(|C|)."""
        if isinstance(sizes, LocationSizes):
            return sizes
        return cls(list(sizes.index), sizes["identified"].to_numpy(dtype=np.int64),
                   sizes["deidentified"].to_numpy(dtype=np.int64))

    def __len__(self) -> int:
        return len(self.locations)

    def frame(self) -> pd.DataFrame:
        """The DataFrame: index ``location``, int64 columns identified, deidentified.  O(|C|)."""
        import pandas as pd

        return pd.DataFrame({"identified": self.identified, "deidentified": self.deidentified},
                            index=pd.Index(self.locations, name="location")).astype("int64")

    def records(self) -> list[dict]:
        """One ``{"location", "identified", "deidentified"}`` dict (Python ints) per location.  O(|C|)."""
        return [{"location": c, "identified": int(g), "deidentified": int(w)}
                for c, g, w in zip(self.locations, self.identified, self.deidentified, strict=True)]


class Release:
    """A validated multi-location release (see the module docstring for the format).

    ``frame`` is the long table (location, kind, element).  A large file read by the Arrow fast path
    (:mod:`graphlink.core.ingest`) is kept on integer codes instead, and ``frame`` is made from them on first use;
    ``locations``, ``elements``, ``sizes`` and :func:`graphlink.core.trails.build_trails` never need it.
    Made by :func:`read_release` (files, folders, DataFrames), the examples and the simulators; immutable.

    Parameters
    ----------
    frame : pandas.DataFrame, optional
        The long table, already validated (use :func:`read_release` to validate one).
    name : str
        The release's name (store, reports).
    source : str, optional
        The file or folder it was read from.
    truth : pandas.DataFrame, optional
        Ground-truth pairs (``identified``, ``deidentified``) when known.
    notes : tuple of str
        What reading it noticed (e.g. collapsed duplicates).
    coded : CodedRelease, optional
        The integer-coded form instead of ``frame`` (exactly one of the two).

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()
    >>> release.locations, len(release.frame), len(release.truth)
    (['H1', 'H2', 'H3', 'H4'], 22, 4)
    >>> release.sizes().loc["H1"].tolist()
    [3, 2]
    """

    __slots__ = ("_frame", "coded", "name", "notes", "source", "truth")

    def __init__(self, frame: pd.DataFrame | None = None, name: str = "release", source: str | None = None,
                 truth: pd.DataFrame | None = None, notes: tuple[str, ...] = (), *,
                 coded: CodedRelease | None = None) -> None:
        if (frame is None) == (coded is None):
            raise ValueError("a Release needs exactly one of frame and coded")
        for attr, value in (("_frame", frame), ("coded", coded), ("name", name), ("source", source),
                            ("truth", truth), ("notes", tuple(notes))):
            object.__setattr__(self, attr, value)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"Release is immutable (cannot set {attr!r})")

    def __reduce__(self) -> tuple:
        return _restore, (self._frame, self.name, self.source, self.truth, self.notes, self.coded)

    def __repr__(self) -> str:
        return f"Release(name={self.name!r}, source={self.source!r}, rows={len(self)})"

    @property
    def frame(self) -> pd.DataFrame:
        """The long table, one row per disclosed element (object columns location, kind, element)."""
        if self._frame is None:
            object.__setattr__(self, "_frame", self.coded.frame())
        return self._frame

    @property
    def locations(self) -> list[str]:
        """Locations in order of first appearance (this is the column order of the trail matrices)."""
        if self.coded is not None:
            return list(self.coded.locations)
        import pandas as pd

        return list(pd.unique(self.frame["location"]))

    def elements(self, kind: str) -> pd.Index:
        """Distinct element keys of ``kind`` in order of first appearance."""
        import pandas as pd

        _check_kind_name(kind)
        if self.coded is not None:
            return pd.Index(self.coded.key_objects(KINDS.index(kind)), dtype=object)
        return pd.Index(pd.unique(self.frame.loc[self.frame["kind"] == kind, "element"]), dtype=object)

    def sizes(self) -> pd.DataFrame:
        """Per-location |γ_c| (identified) and |ω_c| (de-identified) counts of distinct elements."""
        if self.coded is not None:
            return self.location_sizes().frame()
        counts = (self.frame.groupby(["location", "kind"], sort=False).size().unstack("kind", fill_value=0)
                  .reindex(columns=list(KINDS), fill_value=0).reindex(self.locations, fill_value=0))
        counts.index.name = "location"
        counts.columns.name = None
        return counts.astype("int64")

    def location_sizes(self) -> LocationSizes:
        """:meth:`sizes` without pandas for a release on codes (what :func:`graphlink.core.trails.build_trails` uses).
        O(|C|), or O(rows) from the long table."""
        if self.coded is not None:
            sizes = np.asarray(self.coded.sizes, dtype=np.int64)
            return LocationSizes(list(self.coded.locations), sizes[:, 0], sizes[:, 1])
        return LocationSizes.of(self.sizes())

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
        """Write the long table as CSV that :func:`read_release` reads back row for row."""
        write_csv(self.frame, path)

    def to_parquet(self, path: str | Path) -> None:
        self.frame.to_parquet(path, index=False)

    def __len__(self) -> int:
        return len(self.coded) if self._frame is None else len(self._frame)


def _restore(frame: pd.DataFrame | None, name: str, source: str | None, truth: pd.DataFrame | None,
             notes: tuple[str, ...], coded: CodedRelease | None) -> Release:
    """Unpickle a :class:`Release`."""
    return Release(frame, name, source, truth, notes, coded=coded)


def require_both_sides(identified: int, deidentified: int, source: str | Path | None = None) -> None:
    """Refuse (:class:`ReleaseError`, exit 2) a release with no identified people or no de-identified records.

    With one side empty no record can be linked to anyone, so every k-unlinkability verdict holds vacuously:
    saying "every person and every record has at least k candidates" of such a release would be untrue (there are
    no records, or no people). Audits, unlinking and reports call this before they compute anything. O(1).
    """
    if identified and deidentified:
        return
    if not identified and not deidentified:
        what = "has no rows of either kind"
    elif not deidentified:
        what = (f"holds {identified:,} identified {'person' if identified == 1 else 'people'} and no "
                "de-identified records")
    else:
        what = (f"holds {deidentified:,} de-identified record{'s' if deidentified != 1 else ''} and no "
                "identified people")
    raise ReleaseError(f"the release {what}, so nothing in it can be linked and there is no k-unlinkability to "
                       "judge; it needs identified and de-identified rows (kind 'identified' and 'deidentified')",
                       file=None if source is None else str(source))


def _check_kind_name(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")


def read_release(source: str | Path | pd.DataFrame, *, id_key: Sequence[str] | None = None,
                 deid_key: Sequence[str] | None = None, name: str | None = None,
                 truth: str | Path | pd.DataFrame | None = None) -> Release:
    """Read and validate a release from a long CSV/Parquet file, a per-location folder or a DataFrame.

    The file rules (encodings, quoting, blank rows, row numbers, Parquet types) are those of
    :mod:`graphlink.core.tabular`; the release rules are in the module docstring.  Complexity O(rows) plus
    parsing.  Raises :class:`ReleaseError` naming the file, row and column on bad input (missing or
    repeated columns, unknown ``kind``, empty keys, empty release, unreadable file).

    Parameters
    ----------
    source : path or DataFrame
        A long table (``location, kind, element``) as a CSV or Parquet file or a Parquet folder (part files, as
        Spark writes one: :func:`graphlink.core.tabular.parquet_parts`), a folder with one sub-folder per location
        holding ``identified.csv`` and ``deidentified.csv``, or a DataFrame of the long table.
    id_key, deid_key : list of str, optional
        Key columns of a folder's identified / de-identified tables (joined with ``|``).
    name : str, optional
        The release's name (default: the file or folder name).
    truth : path or DataFrame, optional
        Ground-truth pairs (``identified, deidentified``) for evaluation.

    Returns
    -------
    Release

    Examples
    --------
    >>> import pandas as pd
    >>> import graphlink as gl
    >>> frame = pd.DataFrame({"location": ["H1", "H1", "H2", "H2"],
    ...                       "kind": ["identified", "deidentified", "identified", "deidentified"],
    ...                       "element": ["Ann", "actg", "Ann", "actg"]})
    >>> release = gl.read_release(frame, name="two hospitals")
    >>> release.locations
    ['H1', 'H2']
    >>> gl.read_release(frame.drop(columns="kind"))
    Traceback (most recent call last):
    ...
    graphlink.errors.ReleaseError: <DataFrame>: missing column(s) 'kind'; expected columns ...
    """
    if _is_frame(source):
        frame = _validate_long(source, source="<DataFrame>")
        label, src = name or "release", None
    else:
        path = Path(source)
        if not path.exists():
            what = "broken symbolic link" if path.is_symlink() else "no such file or folder"
            raise ReleaseError(what, file=str(path))
        check_input(path, folder=True)      # a FIFO or a device (/dev/zero) is refused before it is opened
        coded = None
        if path.is_dir() and parquet_parts(path) is None:
            frame = _read_folder(path, id_key=id_key, deid_key=deid_key)
        elif (coded := _read_fast(path)) is None:
            table = read_table(path, expected=",".join(COLUMNS))
            table.require(COLUMNS, expected=", ".join(COLUMNS))
            frame = _validate_columns({c: table.column(c) for c in COLUMNS}, table.n_rows, source=table.file,
                                      row_of=table.row_of)
        label, src = name or path.stem, str(path)
        if coded is not None:
            truth_frame = read_truth(truth) if truth is not None else None
            return Release(name=label, source=src, truth=truth_frame, coded=coded)
    truth_frame = read_truth(truth) if truth is not None else None
    return Release(frame, name=label, source=src, truth=truth_frame)


def _read_fast(path: Path) -> CodedRelease | None:
    """A long file through a fast path of :mod:`graphlink.core.ingest` (Arrow for large files, plain Python for small
    CSV files), or None: the detailed reader then reads it and words any problem.  Warns about collapsed repeats
    exactly as the detailed reader."""
    from graphlink.core.ingest import read_coded

    coded = read_coded(path)
    if coded is not None and coded.repeats is not None:
        _warn_repeats(str(path), *coded.repeats)
    return coded


def _other_separator(cols: Mapping[str, pd.Series], at: int, missing: str) -> str:
    """Why a row lacks a field when that is plainly a separator mix-up: one of its fields holds another separator
    (``L01;identified;p1`` in a comma file reads as one location and no element).  Empty otherwise."""
    for name, sep in (("semicolon", ";"), ("tab", "\t"), ("comma", ","), ("'|'", "|")):
        for col, values in cols.items():
            if col != missing and sep in str(values.iloc[at]):
                return (f"; its {col} holds a {name}: this row looks {name}-separated, while the file's other rows "
                        "are not")
    return ""


def _stripped(values: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Values as stripped text (``str.strip``) and the mask of empty/missing ones."""
    import pandas as pd

    s = (values if isinstance(values.dtype, pd.StringDtype) else values.astype("str")).str.strip()
    blank = (s.isna() | (s == "")).to_numpy(dtype=bool)
    return s, blank


def _validate_long(df: pd.DataFrame, *, source: str) -> pd.DataFrame:
    """Validate a long DataFrame (rows named by 0-based position).  O(rows)."""
    names = [str(c) for c in df.columns]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ReleaseError(f"missing column(s) {', '.join(repr(c) for c in missing)}; expected columns "
                           f"location, kind, element (found: {names_list(names)})", file=source)
    for c in COLUMNS:
        if names.count(c) > 1:
            raise ReleaseError(f"column {c!r} appears {names.count(c)} times; expected it once", file=source,
                               column=c)
    cols = {c: df.iloc[:, names.index(c)] for c in COLUMNS}
    return _validate_columns(cols, len(df), source=source, row_of=lambda pos: pos)


def _validate_columns(cols: dict[str, pd.Series], n_rows: int, *, source: str,
                      row_of: Callable[[int], int]) -> pd.DataFrame:
    """Strip, check keys and kinds, collapse exact duplicates with a warning.  O(rows)."""
    import pandas as pd

    if n_rows == 0:
        raise ReleaseError("the release is empty: no disclosed elements", file=source)
    out = {}
    for col in ("location", "element", "kind"):
        values, blank = _stripped(cols[col].reset_index(drop=True))
        if blank.any():
            at = int(blank.argmax())
            raise ReleaseError(f"empty or missing {col}; expected a non-empty key ({int(blank.sum())} "
                               f"row(s) like this){_other_separator(cols, at, col)}", file=source, row=row_of(at),
                               column=col)
        out[col] = values
    # few distinct spellings: normalise each once, with Python's (not Arrow's) lower-casing
    spelling = {k: kind_of(k) for k in pd.unique(out["kind"])}
    kind = out["kind"].map(spelling)
    bad = kind.isna().to_numpy(dtype=bool)
    if bad.any():
        first = int(bad.argmax())
        raise ReleaseError(f"unknown kind {out['kind'].iloc[first]!r}; expected 'identified' or 'deidentified' "
                           f"({int(bad.sum())} row(s) like this)", file=source, row=row_of(first), column="kind")
    out["kind"] = kind
    frame = pd.DataFrame({c: out[c] for c in COLUMNS})
    dup = frame.duplicated().to_numpy(dtype=bool)
    if dup.any():
        _warn_repeats(source, int(dup.sum()), row_of(int(dup.argmax())))
        frame = frame[~dup].reset_index(drop=True)
    return frame.astype({c: object for c in COLUMNS})


def _key_columns(table: Table, cols: Sequence[str] | None, *, role: str) -> list[str]:
    """The key column(s) of a per-location table: as named, else ``element``, else its only column."""
    if cols is None:
        if "element" in table.names:
            return ["element"]
        if len(table.names) == 1:
            return list(table.names)
        from graphlink.diagnostics import Diagnostic

        raise ReleaseError(f"cannot tell which column(s) hold the {role} key; name them as the {role} key column(s) "
                           f"(columns: {names_list(table.names)})", file=table.file,
                           diagnostic=Diagnostic("folder-key-missing", f"cannot tell which column(s) hold the {role} "
                                                 "key", {"side": role, "columns": list(table.names)[:20]}))
    missing = [c for c in cols if c not in table.names]
    if missing:
        raise ReleaseError(f"missing key column(s) {', '.join(map(repr, missing))} "
                           f"(columns: {names_list(table.names)})", file=table.file, column=missing[0])
    return list(cols)


def _key_series(table: Table, cols: list[str]) -> pd.Series:
    """The element key of every row: the key columns stripped and joined with ``|``.  A composite key
    whose part contains ``|`` is refused, since two different keys could then join to the same text."""
    parts = []
    for c in cols:
        values, blank = _stripped(table.column(c).reset_index(drop=True))
        if blank.any():
            raise ReleaseError(f"empty or missing value in key column ({int(blank.sum())} row(s) like this)",
                               file=table.file, row=table.row_of(int(blank.argmax())), column=c)
        if len(cols) > 1:
            sep = values.str.contains(KEY_SEPARATOR, regex=False).to_numpy(dtype=bool)
            if sep.any():
                raise ReleaseError(f"value {values.iloc[int(sep.argmax())]!r} contains {KEY_SEPARATOR!r}, which "
                                   "joins the parts of a composite key; the key would be ambiguous",
                                   file=table.file, row=table.row_of(int(sep.argmax())), column=c)
        parts.append(values)
    key = parts[0]
    for p in parts[1:]:
        key = key + KEY_SEPARATOR + p
    return key.astype(object)


def _read_folder(path: Path, *, id_key: Sequence[str] | None, deid_key: Sequence[str] | None) -> pd.DataFrame:
    """Per-location folders: ``<path>/<location>/{identified,deidentified}.csv`` in their own schema.

    Entries whose name starts with ``.`` are skipped; symbolic links are followed, and a broken or looping
    one is refused; other files are skipped with a warning.  A location is named by its folder (stripped);
    two folders with the same stripped name are refused.  Exact duplicate keys within a table are collapsed
    with one warning for the release.
    """
    import pandas as pd

    try:
        entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise ReleaseError(f"cannot list the folder ({exc.strerror or exc})", file=str(path)) from None
    subdirs, seen = [], {}
    for p in entries:
        if p.is_symlink() and not p.exists():
            raise ReleaseError("broken or looping symbolic link", file=str(p))
        if not p.is_dir():
            warnings.warn(f"{p}: skipped (not a location folder)", ReleaseWarning, stacklevel=3)
            continue
        loc = p.name.strip()
        if not loc:
            raise ReleaseError("a location folder name is blank", file=str(p))
        if loc in seen:
            raise ReleaseError(f"two location folders are both named {loc!r}: {seen[loc].name!r} and "
                               f"{p.name!r}", file=str(path))
        seen[loc] = p
        subdirs.append((loc, p))
    if not subdirs:
        raise ReleaseError("expected one sub-folder per location holding identified.csv and "
                           "deidentified.csv", file=str(path))
    frames, n_dup, first_dup = [], 0, None
    for loc, folder in subdirs:
        for kind, cols in (("identified", id_key), ("deidentified", deid_key)):
            f = folder / f"{kind}.csv"
            if f.is_symlink() and not f.exists():
                raise ReleaseError("broken or looping symbolic link", file=str(f))
            if f.exists() and not f.is_file():     # a FIFO or device would block the read
                raise ReleaseError(f"location '{loc}': {kind}.csv is not a regular file", file=str(f))
            check_input(f)
            if not f.is_file():
                raise ReleaseError(f"location '{loc}' has no {kind}.csv (write an empty file with a "
                                   f"header if nothing was disclosed)", file=str(f))
            table = read_table(f, expected=f"the {kind} key column(s)")
            if table.n_rows == 0:
                continue
            key = _key_series(table, _key_columns(table, cols, role=kind))
            dup = key.duplicated().to_numpy(dtype=bool)
            if dup.any():
                n_dup += int(dup.sum())
                first_dup = first_dup or f"{f} row {table.row_of(int(dup.argmax()))}"
                key = key[~dup]
            frames.append(pd.DataFrame({"location": loc, "kind": kind, "element": key.to_numpy(dtype=object)}))
    if n_dup:
        warnings.warn(f"{path}: collapsed {n_dup} exact duplicate row(s) (first repeat: {first_dup})",
                      ReleaseWarning, stacklevel=3)
    if not frames:
        raise ReleaseError("the release is empty: no location disclosed anything", file=str(path))
    return pd.concat(frames, ignore_index=True).astype({c: object for c in COLUMNS})


def read_truth(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Ground truth pairs: columns ``identified``, ``deidentified`` (CSV/Parquet path or DataFrame).

    Same file rules as releases (:mod:`graphlink.core.tabular`); keys are stripped, an empty key is refused
    naming its row, exact duplicate pairs are collapsed with a :class:`ReleaseWarning`.  O(rows).

    Parameters
    ----------
    source : str, Path or pandas.DataFrame
        A CSV or Parquet file, or a DataFrame, with columns ``identified`` and ``deidentified``.

    Returns
    -------
    pandas.DataFrame
        The pairs, keys as strings (what :func:`graphlink.analysis.reidit.evaluate` compares against).

    Examples
    --------
    >>> import pandas as pd
    >>> import graphlink as gl
    >>> gl.read_truth(pd.DataFrame({"identified": [" Ali", "Bob"], "deidentified": ["actg", "ctga"]}))
      identified deidentified
    0        Ali         actg
    1        Bob         ctga
    """
    import pandas as pd

    wanted = ("identified", "deidentified")
    if _is_frame(source):
        label = "<DataFrame>"
        names = [str(c) for c in source.columns]
        missing = [c for c in wanted if c not in names]
        if missing:
            raise ReleaseError(f"truth is missing column(s) {', '.join(map(repr, missing))}; expected "
                               "identified,deidentified", file=label)
        cols = {c: source.iloc[:, names.index(c)] for c in wanted}
        row_of: Callable[[int], int] = lambda pos: pos  # noqa: E731
    else:
        label = str(source)
        check_input(source)                 # a FIFO or a device is refused by name, not taken for a missing file
        if not Path(source).is_file():
            raise ReleaseError("no such truth file", file=label)
        table = read_table(Path(source), expected="identified,deidentified")
        missing = [c for c in wanted if c not in table.names]
        if missing:
            raise ReleaseError(f"truth file is missing column(s) {', '.join(map(repr, missing))}; expected "
                               f"identified,deidentified (found: {names_list(table.names)})", file=label)
        cols = {c: table.column(c) for c in wanted}
        row_of = table.row_of
    out = {}
    for col in wanted:
        values, blank = _stripped(cols[col].reset_index(drop=True))
        if blank.any():
            raise ReleaseError("empty or missing key in truth file", file=label, row=row_of(int(blank.argmax())),
                               column=col)
        out[col] = values
    frame = pd.DataFrame(out)
    dup = frame.duplicated().to_numpy(dtype=bool)
    if dup.any():
        _warn_repeats(label, int(dup.sum()), row_of(int(dup.argmax())), what="truth pair(s)", stacklevel=2)
        frame = frame[~dup]
    return frame.reset_index(drop=True).astype(object)
