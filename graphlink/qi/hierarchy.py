"""Generalization hierarchies (Sweeney, SW-A §3.1: domain and value generalization hierarchies, DGH/VGH).

A :class:`Hierarchy` is a matrix of labels: one row per ground value, one column per level, from the value
itself (level 0) to the single most general label (level ``height``). This is exactly ARX's hierarchy CSV
format (``;``-separated, no header), the de facto standard users already have, so :func:`read_csv` and
:meth:`Hierarchy.to_csv` round-trip ARX files.

Conventions (SW-A §3.1):

* **Suppression is the top level.** Sweeney adds a new maximal element, the suppressed value, above every
  hierarchy. A file or builder whose last level holds one label already has its singleton top (ARX writes
  ``*``); when the last level holds several labels, a ``*`` level is appended.
* **Functional generalization sequence.** Each label of a level has exactly one parent at the next level
  (a label shared by two ground values must generalize the same way); anything else is refused with the file,
  row and column.

Builders: :func:`digits` (ZIP masking), :func:`dates` (day → month → year → year ranges), :func:`intervals`
(nested numeric ranges), :func:`categorical` (a tree given as nested mappings), :func:`flat` (value → ``*``)
and :func:`iupac` (nucleotides for DNA "binning", thesis App. B.4, Fig. B.4). Reading, validating and
building cost O(values × levels).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError

SUPPRESSED = "*"
DELIMITER = ";"


class Hierarchy:
    """A DGH/VGH over one attribute: ``matrix[r, l]`` is ground value ``r`` generalized to level ``l``.

    ``codes`` give every level its own integer code space (labels numbered in order of first appearance, so
    numeric builders keep numeric order): ``ancestors[l][r]`` is the level-``l`` code of ground value ``r``.
    Building costs O(values × levels); lookups are O(1).

    Examples
    --------
    Each row is a ground value and its labels level by level; a last level that is not one label gets ``*`` added:

    >>> from graphlink.qi.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", [["02138", "0213*"], ["02139", "0213*"], ["02141", "0214*"]])
    >>> h.height, h.values, h.generalize("02141", 1), h.generalize("02141", 2)
    (2, ['02138', '02139', '02141'], '0214*', '*')
    """

    def __init__(self, name: str, matrix: Sequence[Sequence[str]] | np.ndarray, *, source: str | None = None) -> None:
        self.name = str(name)
        self.source = source
        rows = [[str(c) for c in row] for row in matrix]
        _validate(rows, source or f"hierarchy '{self.name}'")
        if len({r[-1] for r in rows}) > 1:
            rows = [[*r, SUPPRESSED] for r in rows]   # SW-A: suppression is a new maximal element
        self.matrix = np.array(rows, dtype=object).reshape(len(rows), len(rows[0]))

    # ------------------------------------------------------------------ shape and lookups
    @property
    def height(self) -> int:
        """Number of generalization steps above the ground domain (|DGH| in SW-A, suppression included)."""
        return self.matrix.shape[1] - 1

    @property
    def values(self) -> list[str]:
        """The ground domain (level 0), in file order."""
        return list(self.matrix[:, 0])

    @cached_property
    def index(self) -> dict[str, int]:
        """Ground value → row."""
        return {v: i for i, v in enumerate(self.matrix[:, 0])}

    @cached_property
    def _coded(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        ancestors, labels = [], []
        for level in range(self.height + 1):
            codes, uniques = pd.factorize(pd.Series(self.matrix[:, level], dtype=object), sort=False)
            ancestors.append(codes.astype(np.int32))
            labels.append(np.asarray(uniques, dtype=object))
        return ancestors, labels

    @property
    def ancestors(self) -> list[np.ndarray]:
        """Per level, an int32 array mapping a ground row to its code at that level."""
        return self._coded[0]

    @property
    def labels(self) -> list[np.ndarray]:
        """Per level, the labels of that level's codes."""
        return self._coded[1]

    def cardinality(self, level: int) -> int:
        """Number of distinct labels at ``level``."""
        return len(self.labels[level])

    def generalize(self, value: str, level: int) -> str:
        """``value`` generalized to ``level`` (KeyError if the value is not in the ground domain)."""
        return str(self.matrix[self.index[str(value)], level])

    @cached_property
    def covers(self) -> dict[str, frozenset[int]]:
        """Label → the ground rows it stands for (the union over every level where the label occurs)."""
        out: dict[str, set[int]] = {}
        for level in range(self.height + 1):
            for r, lab in enumerate(self.matrix[:, level]):
                out.setdefault(lab, set()).add(r)
        return {lab: frozenset(rs) for lab, rs in out.items()}

    def level_of(self, label: str) -> int:
        """Lowest level at which ``label`` occurs (KeyError if it occurs nowhere)."""
        for level in range(self.height + 1):
            if label in set(self.matrix[:, level]):
                return level
        raise KeyError(label)

    def lca_level(self, rows: np.ndarray) -> int:
        """Lowest level at which all the given ground rows share one label (their least common ancestor)."""
        rows = np.asarray(rows)
        for level, anc in enumerate(self.ancestors):
            a = anc[rows]
            if (a == a[0]).all():
                return level
        return self.height  # unreachable: the top is a singleton

    def meet(self, a: str, b: str) -> str | None:
        """The more specific of two compatible labels (one covers a subset of the other), else ``None``.

        Used by the linking attacks (SW-K §4): a value reported as ``1964`` in one release and ``1960-69``
        in another is ``1964``; ``0213*`` and ``02141`` are incompatible.
        """
        ca, cb = self.covers.get(a), self.covers.get(b)
        if ca is None or cb is None:
            return None
        if ca <= cb:
            return a
        if cb <= ca:
            return b
        return None

    # ------------------------------------------------------------------ I/O
    def to_frame(self) -> pd.DataFrame:
        """The matrix as a DataFrame with columns ``level0..levelH``."""
        return pd.DataFrame(self.matrix, columns=[f"level{i}" for i in range(self.height + 1)])

    def to_csv(self, path: str | Path | None = None) -> str:
        """Write (and return) the ARX CSV text: ``;``-separated, one row per ground value, no header."""
        buf = io.StringIO()
        csv.writer(buf, delimiter=DELIMITER, lineterminator="\n").writerows(self.matrix.tolist())
        text = buf.getvalue()
        if path is not None:
            from graphlink.fileio import write_text

            write_text(path, text)
        return text

    def __repr__(self) -> str:
        return f"Hierarchy({self.name!r}, values={len(self.matrix)}, height={self.height})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hierarchy) and self.name == other.name and np.array_equal(self.matrix, other.matrix)

    __hash__ = None  # type: ignore[assignment]


def _validate(rows: list[list[str]], where: str) -> None:
    """SW-A's DGH conditions on a label matrix; one-line ReleaseError naming file, row and column."""
    if not rows:
        raise ReleaseError("hierarchy has no rows; expected one row per value, one column per level", file=where)
    width = len(rows[0])
    seen: dict[str, int] = {}
    parent: list[dict[str, tuple[str, int]]] = [{} for _ in range(width)]
    for r, row in enumerate(rows, start=1):
        if len(row) != width:
            raise ReleaseError(f"has {len(row)} levels but row 1 has {width}; every value needs the same number "
                               "of levels", file=where, row=r)
        for c, cell in enumerate(row):
            if cell == "":
                raise ReleaseError("empty label; expected a value or its generalization", file=where, row=r,
                                   column=f"level {c}")
        if row[0] in seen:
            raise ReleaseError(f"value '{row[0]}' is listed twice (rows {seen[row[0]]} and {r})", file=where,
                               row=r, column="level 0")
        seen[row[0]] = r
        for c in range(width - 1):
            prev = parent[c].setdefault(row[c], (row[c + 1], r))
            if prev[0] != row[c + 1]:
                raise ReleaseError(f"label '{row[c]}' generalizes to '{row[c + 1]}' here but to '{prev[0]}' in row "
                                   f"{prev[1]}; a label needs one parent per level", file=where, row=r,
                                   column=f"level {c + 1}")


#: the longest label a hierarchy file may hold (the csv module's default field limit, 128 KiB)
MAX_LABEL = 131_072


def parse_csv(text: str, name: str, source: str | None = None) -> Hierarchy:
    """An ARX hierarchy from CSV text (``;``-separated, one row per value; blank lines ignored).  A label longer
    than ``MAX_LABEL`` characters or other malformed CSV is a one-line ReleaseError naming the line.

    Examples
    --------
    >>> from graphlink.qi.hierarchy import parse_csv
    >>> h = parse_csv("m;*\\nf;*\\n", "sex")
    >>> h.height, h.values, h.generalize("m", 1)
    (1, ['m', 'f'], '*')
    """
    reader = csv.reader(io.StringIO(text), delimiter=DELIMITER)
    rows = []
    too_long = f"a label is longer than {MAX_LABEL:,} characters; expected one ';'-separated row per value"
    try:
        for row in reader:
            if row and any(c.strip() for c in row):
                if any(len(c) > MAX_LABEL for c in row):     # the same bound whatever the csv module allows
                    raise ReleaseError(too_long, file=source or name, row=reader.line_num)
                rows.append([c.strip() for c in row])
    except csv.Error as exc:
        why = too_long if "field limit" in str(exc) else f"not ARX hierarchy CSV ({exc})"
        raise ReleaseError(why, file=source or name, row=reader.line_num) from None
    return Hierarchy(name, rows, source=source)


def read_csv(path: str | Path, name: str | None = None) -> Hierarchy:
    """Read an ARX hierarchy CSV (the attribute name defaults to the file stem).

    Examples
    --------
    SW-A's gender hierarchy, shipped with the library:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_csv
    >>> h = read_csv(SWEENEY / "hierarchies" / "Gender.csv")
    >>> h.name, h.values, h.height
    ('Gender', ['male', 'female'], 2)
    """
    from graphlink.fileio import check_input

    p = check_input(path)           # a FIFO or a device would block or never end: refused before it is opened
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"cannot read hierarchy ({exc.__class__.__name__}: {exc})", file=str(p)) from None
    return parse_csv(text, name or p.stem, str(p))


ARX_INFIX = "_hierarchy_"


def column_of(path: str | Path) -> str:
    """The column a hierarchy file is for: ``<column>.csv``, or ARX's ``<dataset>_hierarchy_<column>.csv``
    (``adult_hierarchy_marital-status.csv`` → ``marital-status``)."""
    stem = Path(path).stem
    return stem.split(ARX_INFIX, 1)[1] if ARX_INFIX in stem and stem.split(ARX_INFIX, 1)[1] else stem


def read_dir(directory: str | Path, columns: Iterable[str] | None = None) -> dict[str, Hierarchy]:
    """The hierarchies of a folder (``--hierarchies DIR``), one file per column named ``<column>.csv`` or
    ``<anything>_hierarchy_<column>.csv`` (ARX's sample names); only ``columns`` when given. Two files for
    one column are refused (naming both).

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> {column: h.height for column, h in sorted(read_dir(SWEENEY / "hierarchies").items())}
    {'BirthDate': 5, 'Gender': 2, 'Race': 2, 'ZIP': 3}
    """
    d = Path(directory)
    if not d.is_dir():
        raise ReleaseError("is not a folder of hierarchy files (<column>.csv or <dataset>_hierarchy_<column>.csv)",
                           file=str(d))
    wanted = None if columns is None else set(columns)
    found: dict[str, Path] = {}
    for p in sorted(d.glob("*.csv")):
        col = p.stem if wanted is not None and p.stem in wanted else column_of(p)
        if wanted is not None and col not in wanted:
            continue
        if col in found:
            raise ReleaseError(f"two hierarchy files for column {col!r}: {found[col].name} and {p.name}; keep one",
                               file=str(d))
        if not p.is_file():            # a FIFO or device would block the read: stat before opening
            raise ReleaseError("is not a regular file; expected an ARX hierarchy CSV", file=str(p))
        found[col] = p
    return {col: read_csv(p, col) for col, p in found.items()}


def write_dir(hierarchies: Mapping[str, Hierarchy], directory: str | Path) -> None:
    """Write one ARX CSV per hierarchy into ``directory`` as ``<column>.csv``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphlink.qi.hierarchy import flat, read_dir, write_dir
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_dir({"sex": flat("sex", ["m", "f"])}, folder)
    ...     print(sorted(p.name for p in Path(folder).iterdir()), read_dir(folder)["sex"].values)
    ['sex.csv'] ['m', 'f']
    """
    from graphlink.fileio import write_text

    d = Path(directory)
    for col, h in hierarchies.items():
        write_text(d / f"{col}.csv", h.to_csv())


# ---------------------------------------------------------------------------------------------- builders
def _distinct(values: Iterable[object]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def flat(name: str, values: Iterable[object]) -> Hierarchy:
    """Value → ``*``: the attribute can only be released as is or suppressed (height 1).

    Examples
    --------
    >>> from graphlink.qi.hierarchy import flat
    >>> h = flat("sex", ["m", "f", "m"])
    >>> h.height, h.values, h.generalize("f", 1)
    (1, ['m', 'f'], '*')
    """
    return Hierarchy(name, [[v, SUPPRESSED] for v in _distinct(values)])


def digits(name: str, values: Iterable[object], *, max_masked: int | None = None, mask: str = "*") -> Hierarchy:
    """Mask the right-most characters one per level (ZIP codes: ``02138 → 0213* → 021** → …``), then ``*``.

    ``max_masked`` caps how many characters are masked before the suppression level (Sweeney's Cambridge ZIP
    DGH is ``max_masked=2``: 02138 → 0213* → 021** → suppressed, height 3).

    Examples
    --------
    >>> from graphlink.qi.hierarchy import digits
    >>> h = digits("zip", ["02138", "02139", "02141"], max_masked=2)
    >>> [h.generalize("02138", level) for level in range(h.height + 1)]
    ['02138', '0213*', '021**', '*']
    """
    vals = _distinct(values)
    longest = max(len(v) for v in vals)
    steps = longest if max_masked is None else min(max_masked, longest)
    rows = []
    for v in vals:
        row = [v] + [v[:max(len(v) - j, 0)] + mask * min(j, len(v)) for j in range(1, steps + 1)]
        rows.append([*row, SUPPRESSED] if row[-1] != SUPPRESSED else row)
    return Hierarchy(name, rows)


def _range_label(lo: int, hi: int) -> str:
    """``1960-69`` within a century (SW-K Fig. 5 prints ``1960-69``), else ``1995-2004``."""
    return f"{lo}-{hi % 100:02d}" if lo // 100 == hi // 100 else f"{lo}-{hi}"


def dates(name: str, values: Iterable[object], *, fmt: str | None = None,
          steps: Sequence[str | int] = ("month", "year", 5, 10)) -> Hierarchy:
    """Birth dates and the like: day → ``YYYY-MM`` → ``YYYY`` → year ranges (``1960-64``, ``1960-69``) → ``*``.

    ``steps`` lists the levels above the value: ``"month"``, ``"year"`` and integers for year ranges aligned
    on multiples of the width (each width must divide the next). ``fmt`` is passed to ``pd.to_datetime``.

    Examples
    --------
    >>> from graphlink.qi.hierarchy import dates
    >>> h = dates("birth", ["1965-03-19", "1964-07-02"])
    >>> [h.generalize("1965-03-19", level) for level in range(h.height + 1)]
    ['1965-03-19', '1965-03', '1965', '1965-69', '1960-69', '*']
    """
    vals = _distinct(values)
    parsed = pd.to_datetime(pd.Series(vals), format=fmt, errors="coerce")
    bad = [v for v, d in zip(vals, parsed, strict=True) if pd.isna(d)]
    if bad:
        raise ReleaseError(f"'{bad[0]}' is not a date (expected format {fmt or 'parseable by pandas'})",
                           column=name)
    widths = [s for s in steps if isinstance(s, int)]
    if any(b % a for a, b in zip(widths, widths[1:], strict=False)):
        raise ReleaseError(f"year-range widths {widths} do not nest (each must divide the next)", column=name)
    order = np.argsort(parsed.to_numpy(), kind="stable")
    rows = []
    for i in order:
        d = parsed.iloc[i]
        row = [vals[i]]
        for s in steps:
            if s == "month":
                row.append(f"{d.year:04d}-{d.month:02d}")
            elif s == "year":
                row.append(f"{d.year:04d}")
            else:
                lo = d.year - d.year % int(s)
                row.append(_range_label(lo, lo + int(s) - 1))
        rows.append([*row, SUPPRESSED])
    return Hierarchy(name, rows)


def intervals(name: str, values: Iterable[object], *, widths: Sequence[float], start: float | None = None) -> Hierarchy:
    """Numbers → nested intervals of the given widths (each must divide the next) → ``*``.

    Integer data gets closed labels ``20-24`` (``[-5, -1]`` below zero); other numbers half-open ``[20, 25)``.
    Intervals are aligned on ``start`` (default: the minimum rounded down to a multiple of the widest width).

    Examples
    --------
    >>> from graphlink.qi.hierarchy import intervals
    >>> h = intervals("age", [23, 37, 41], widths=[10, 20])
    >>> [h.generalize("23", level) for level in range(h.height + 1)]
    ['23', '20-29', '20-39', '*']
    """
    vals = _distinct(values)
    try:
        nums = np.array([float(v) for v in vals])
    except ValueError:
        bad = next(v for v in vals if not _is_number(v))
        raise ReleaseError(f"'{bad}' is not a number; interval hierarchies need numeric values", column=name) from None
    if any(b % a for a, b in zip(widths, widths[1:], strict=False)) or any(w <= 0 for w in widths):
        raise ReleaseError(f"interval widths {list(widths)} must be positive and each divide the next", column=name)
    integral = bool(np.all(nums == np.round(nums))) and all(float(w).is_integer() for w in widths)
    origin = math.floor(nums.min() / widths[-1]) * widths[-1] if start is None else start
    rows = []
    for i in np.argsort(nums, kind="stable"):
        row = [vals[i]]
        for w in widths:
            lo = origin + math.floor((nums[i] - origin) / w) * w
            row.append(_interval_label(lo, w, integral))
        rows.append([*row, SUPPRESSED])
    return Hierarchy(name, rows)


def _interval_label(lo: float, width: float, integral: bool) -> str:
    """``20-24`` for integers (``[-5, -1]`` when negative, to stay readable), ``[2.5, 5)`` otherwise."""
    if not integral:
        return f"[{lo:g}, {lo + width:g})"
    hi = int(lo + width - 1)
    return f"{int(lo)}-{hi}" if lo >= 0 else f"[{int(lo)}, {hi}]"


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def categorical(name: str, tree: Mapping[str, object], *, suppress: bool = True) -> Hierarchy:
    """A value tree given as nested mappings, leaves as lists: ``{"person": ["asian", "black", "white"]}``.

    The mapping's single key is the most general label; ``suppress=True`` puts the suppressed value ``*`` on
    top of it (Sweeney's Race DGH: value → person → suppressed, height 2). Every leaf must sit at the same
    depth (a DGH is a linear sequence of domains).

    Examples
    --------
    >>> from graphlink.qi.hierarchy import categorical
    >>> h = categorical("race", {"person": ["asian", "black", "white"]})
    >>> h.values, [h.generalize("black", level) for level in range(h.height + 1)]
    (['asian', 'black', 'white'], ['black', 'person', '*'])
    """
    paths: list[list[str]] = []

    def walk(node: object, path: list[str]) -> None:
        if isinstance(node, Mapping):
            for label, child in node.items():
                walk(child, [str(label), *path])
        elif isinstance(node, str):
            paths.append([node, *path])
        else:
            for leaf in node:  # type: ignore[attr-defined]
                walk(leaf, path)

    walk(tree, [])
    depths = {len(p) for p in paths}
    if len(depths) != 1:
        raise ReleaseError(f"leaves sit at different depths {sorted(depths)}; every value needs the same levels",
                           column=name)
    return Hierarchy(name, [[*p, SUPPRESSED] if suppress and p[-1] != SUPPRESSED else p for p in paths])


def iupac(name: str = "base") -> Hierarchy:
    """Nucleotide hierarchy for k-anonymous DNA "binning" (thesis App. B.4, Fig. B.4), following IUPAC.

    A, G → R (purines); C, T → Y (pyrimidines); R, Y → N (any base, the suppressed value; height 2).
    The thesis text says generalizing C and G "one level" releases "R": under IUPAC R is the purines {A, G};
    C and G (IUPAC S) only meet at N, as do A and T. We follow IUPAC.

    Examples
    --------
    A and G are purines (R), any base is N:

    >>> from graphlink.qi.hierarchy import iupac
    >>> h = iupac()
    >>> h.values, [h.generalize("A", level) for level in range(h.height + 1)]
    (['A', 'G', 'C', 'T'], ['A', 'R', 'N'])
    """
    return Hierarchy(name, [["A", "R", "N"], ["G", "R", "N"], ["C", "Y", "N"], ["T", "Y", "N"]])
