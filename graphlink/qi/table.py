"""A quasi-identifier table encoded once (the speed of every QI algorithm comes from here).

:func:`encode` turns the QI columns of a DataFrame into integer codes, one int32 per cell (the row of the
value in its attribute's :class:`~graphlink.qi.hierarchy.Hierarchy`). A generalization of a column to level
``l`` is then a gather, ``hierarchy.ancestors[l][codes]``, and an equivalence class is one integer: the cells'
level codes packed into an int64 key. The distinct ground combinations and their counts (the *frequency
table*, SW-A's ``freq``) are computed once; every lattice node is evaluated on it by a gather and one
``bincount``/hash group-by, never by regrouping strings or copying the table.

Missing cells (empty in a CSV, NaN in a DataFrame) are the value ``NA``: a hierarchy that should accept them
lists ``NA``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.qi.hierarchy import Hierarchy, flat

MISSING = "NA"
_DENSE_LIMIT = 1 << 24       # group with a dense bincount when the packed key space is at most this big
_PACK_LIMIT = 1 << 62


def as_labels(series: pd.Series) -> pd.Series:
    """A column as the string labels hierarchies use: integral floats print as integers, NaN as ``NA``."""
    s = series
    if pd.api.types.is_float_dtype(s) and bool(np.all(np.isnan(s) | (s == np.round(s)))):
        s = s.astype("Int64")
    out = s.astype("string").fillna(MISSING)
    return out.astype(object)


SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}


def sniff_separator(path: str | Path) -> str:
    """The field separator of a CSV file: whichever of ``,``, ``;`` and tab occurs most often outside quotes
    on its first non-blank line (the header); ``,`` on a tie or when none occurs. ARX's sample tables use
    ``;``. Reads at most 64 KiB. O(1)."""
    from graphlink.fileio import check_input

    with open(check_input(path), "rb") as fh:
        head = fh.read(1 << 16).decode("utf-8", errors="replace").lstrip("\ufeff")
    line = next((x for x in head.splitlines() if x.strip()), "")
    outside, quoted = [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted:
            outside.append(ch)
    counts = {sep: outside.count(sep) for sep in SEPARATORS}
    best = max(counts.values())
    return "," if best == 0 or counts[","] == best else max(counts, key=counts.__getitem__)


def _read_delimited(p: Path, sep: str) -> pd.DataFrame:
    """A ``;``- or tab-separated table: header row, every cell text, values stripped, blank rows skipped, a
    row with more fields than the header refused (its line named)."""
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReleaseError(f"byte {exc.start} is not UTF-8; expected UTF-8 text (save it as CSV UTF-8)",
                           file=str(p)) from None
    name = SEPARATORS[sep]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    header: list[str] | None = None
    rows: list[list[str]] = []
    try:
        for fields in reader:
            fields = [f.strip() for f in fields]
            if not any(fields):
                continue                                  # a blank row
            if header is None:
                header = fields
                if len(set(header)) != len(header):
                    raise ReleaseError(f"a column name appears twice in the header ({name}-separated)",
                                       file=str(p), row=reader.line_num)
                continue
            if len(fields) > len(header):
                raise ReleaseError(f"this row has {len(fields)} {name}-separated fields but the header has "
                                   f"{len(header)}", file=str(p), row=reader.line_num)
            rows.append(fields + [""] * (len(header) - len(fields)))
    except csv.Error as exc:
        raise ReleaseError(f"cannot read it as {name}-separated text: {exc}", file=str(p),
                           row=reader.line_num) from None
    if header is None:
        raise ReleaseError("the file is empty (expected a header row naming the columns)", file=str(p))
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(header)
    frame = pd.DataFrame({i: pd.Series(list(c), dtype=object).astype(str) for i, c in enumerate(cols)})
    frame.columns = header
    return frame.replace("", np.nan)


def read_table(path: str | Path) -> pd.DataFrame:
    """A CSV (every cell read as text, so ``02138`` keeps its zero; only empty cells are missing) or Parquet
    table; ReleaseError if unreadable.

    The separator is sniffed from the header line (:func:`sniff_separator`): a comma-separated file is read
    by :func:`graphlink.core.tabular.read_table` (the file rules every graphlink reader shares: UTF-8, rows with
    more fields than the header refused, values stripped, blank rows skipped, errors naming the line); a
    ``;``- or tab-separated one (ARX's samples) with the same rules by pandas. A header name given twice is
    refused. The separator found is kept in ``frame.attrs["separator"]`` for messages.

    Examples
    --------
    SW-K Figure 4's private table, shipped with the library; every cell is read as text:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> frame = read_table(SWEENEY / "fig4_pt.csv")
    >>> frame.shape, list(frame.columns)
    ((12, 5), ['Race', 'BirthDate', 'Gender', 'ZIP', 'Problem'])
    >>> frame.loc[0, "ZIP"]
    '02141'
    """
    from graphlink.core import tabular
    from graphlink.fileio import check_input

    p = check_input(path)        # a FIFO or a device is refused before it is opened
    if not p.is_file():
        raise ReleaseError("no such file", file=str(p))
    if p.suffix.lower() not in (".parquet", ".pq"):
        sep = sniff_separator(p)
        if sep != ",":
            frame = _read_delimited(p, sep)
            frame.attrs["separator"] = sep
            return frame
        t = tabular.read_table(p, expected="a header row naming the columns")
        for name in t.names:
            if name:
                t.index_of(name)                 # refuses a repeated name
        frame = pd.DataFrame({i: t.column_at(i).reset_index(drop=True).astype(str) for i in range(len(t.names))})
        frame.columns = t.names
        frame = frame.replace("", np.nan)
        frame.attrs["separator"] = ","
        return frame
    try:
        return pd.read_parquet(p)
    except Exception as exc:  # pyarrow raises many types for malformed files
        raise ReleaseError(f"cannot read table ({exc.__class__.__name__}: {str(exc).splitlines()[0][:160]})",
                           file=str(p)) from None


def check_columns(frame: pd.DataFrame, columns: Sequence[str], source: str | None, role: str = "quasi-identifier"
                  ) -> None:
    """ReleaseError naming the first column that is not in the table, the columns that are, and the separator
    the header was read with (a file with another separator reads as one column)."""
    for c in columns:
        if c not in frame.columns:
            sep = frame.attrs.get("separator")
            how = f" (read as {SEPARATORS[sep]}-separated)" if sep in SEPARATORS else ""
            raise ReleaseError(f"no such {role} column; the table{how} has {', '.join(map(str, frame.columns))}",
                               file=source, column=c)
    if len(set(columns)) != len(columns):
        raise ReleaseError(f"{role} columns repeat: {', '.join(columns)}", file=source)


@dataclass(frozen=True)
class Groups:
    """The equivalence classes of a full-domain node: one row per class, its QI codes at ``levels`` and its size.

    What a lattice search carries from node to node: a node above ``levels`` is grouped from these rows
    (roll-up) instead of from the table.
    """

    levels: tuple[int, ...]
    columns: np.ndarray     # (m, g) int32: per QI, each class's code (attribute-major: gathers stay contiguous)
    counts: np.ndarray      # (g,) int64

    def __len__(self) -> int:
        return len(self.counts)


@dataclass(eq=False)
class QITable:
    """The QI columns of a table as integer codes, with their hierarchies (see module docstring).

    ``codes[:, i]`` is each row's ground code for QI ``qi[i]``; ``freq_codes``/``freq_counts`` are the
    distinct ground combinations and their multiplicities, ``row_freq`` maps each row to its combination.

    Examples
    --------
    Built by :func:`encode`; a QI without a hierarchy gets a flat one (the value or ``*``).  Each row's class
    size with zip kept, then with zip suppressed (``row_freq`` takes a row to its distinct combination):

    >>> import pandas as pd
    >>> from graphlink.qi.table import encode
    >>> table = encode(pd.DataFrame({"sex": ["m", "f", "m"], "zip": ["02138", "02138", "02139"]}), ["sex", "zip"])
    >>> table.heights
    (1, 1)
    >>> [table.class_sizes(node)[table.row_freq].tolist() for node in [(0, 0), (0, 1)]]
    [[1, 1, 1], [2, 1, 2]]
    """

    frame: pd.DataFrame
    qi: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    codes: np.ndarray
    source: str | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ shape
    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    @property
    def m(self) -> int:
        return len(self.qi)

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(h.height for h in self.hierarchies)

    def hierarchy(self, attr: str) -> Hierarchy:
        return self.hierarchies[self.qi.index(attr)]

    # ------------------------------------------------------------------ frequency table (SW-A's freq)
    @cached_property
    def _freq(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keys, _ = pack([self.codes[:, i] for i in range(self.m)], [len(h.values) for h in self.hierarchies])
        uniq, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        return self.codes[first], counts.astype(np.int64), inverse.astype(np.int64), first.astype(np.int64)

    @property
    def freq_codes(self) -> np.ndarray:
        """(d, m) int32: the distinct ground QI combinations."""
        return self._freq[0]

    @property
    def freq_counts(self) -> np.ndarray:
        """(d,) int64: how many rows have each combination."""
        return self._freq[1]

    @property
    def row_freq(self) -> np.ndarray:
        """(n,) int64: each row's combination."""
        return self._freq[2]

    @property
    def freq_first(self) -> np.ndarray:
        """(d,) int64: the first row holding each combination."""
        return self._freq[3]

    # ------------------------------------------------------------------ generalization by gathers
    def column_codes(self, attr: str, level: int) -> np.ndarray:
        """Per row, the integer code of column ``attr`` generalized to ``level`` (a gather; O(n)).

        Codes of one level are dense (``0 .. cardinality-1``); equal codes mean equal generalized labels.
        This is the reusable encoding for attribute linkage sets: two tables encoded with the same hierarchy
        share the code spaces.
        """
        i = self.qi.index(attr)
        h = self.hierarchies[i]
        if not 0 <= level <= h.height:
            raise ValueError(f"level {level} outside 0..{h.height} for {attr}")
        return h.ancestors[level][self.codes[:, i]]

    def cardinalities(self, levels: Sequence[int]) -> list[int]:
        return [h.cardinality(lv) for h, lv in zip(self.hierarchies, levels, strict=True)]

    def freq_keys(self, levels: Sequence[int]) -> tuple[np.ndarray, int]:
        """Packed int64 class keys of the frequency-table rows at a full-domain node, and the key-space bound."""
        fc = self.bottom.columns
        cols = [fc[i] if lv == 0 else h.ancestors[lv][fc[i]]
                for i, (h, lv) in enumerate(zip(self.hierarchies, levels, strict=True))]
        return pack(cols, self.cardinalities(levels))

    def class_sizes(self, levels: Sequence[int]) -> np.ndarray:
        """Per frequency-table row, the size of its equivalence class at the full-domain node ``levels``.

        One gather per QI and one group-by (dense ``bincount`` when the key space is small, else a hash
        factorization): O(d) for d distinct combinations.
        """
        keys, bound = self.freq_keys(levels)
        counts = self.freq_counts
        if bound <= max(_DENSE_LIMIT, 4 * len(keys)):
            sizes = np.bincount(keys, weights=counts, minlength=bound).astype(np.int64)
            return sizes[keys]
        ids, uniq = pd.factorize(keys)
        return np.bincount(ids, weights=counts).astype(np.int64)[ids]

    def level_map(self, i: int, a: int, b: int) -> np.ndarray:
        """For QI ``i``, the level-``b`` code of every level-``a`` code (``b >= a``; cached)."""
        key = ("level_map", i, a, b)
        if key not in self._cache:
            h = self.hierarchies[i]
            first = np.unique(h.ancestors[a], return_index=True)[1]   # a ground row under each level-a code
            self._cache[key] = h.ancestors[b][first].astype(np.int32)
        return self._cache[key]

    @property
    def bottom(self) -> Groups:
        """The frequency table as the classes of the bottom node (every QI at level 0)."""
        if "bottom" not in self._cache:
            self._cache["bottom"] = Groups((0,) * self.m, np.ascontiguousarray(self.freq_codes.T), self.freq_counts)
        return self._cache["bottom"]

    def groups(self, levels: Sequence[int], base: Groups | None = None) -> Groups:
        """The classes of the full-domain node ``levels``, rolled up from ``base`` (a node at or below it;
        default the frequency table): one gather per QI on ``base``'s rows, one hash group-by. O(|base|·m)."""
        base = base or self.bottom
        levels = tuple(int(x) for x in levels)
        cols = [col if a == b else self.level_map(i, a, b)[col]
                for i, (col, a, b) in enumerate(zip(base.columns, base.levels, levels, strict=True))]
        cards = self.cardinalities(levels)
        keys, bound = pack(cols, cards)
        if bound <= max(4 * len(keys), 1 << 16) and bound == int(np.prod(cards, dtype=np.float64)):
            sizes = np.bincount(keys, weights=base.counts, minlength=bound)    # dense: no hashing, no overflow
            present = np.flatnonzero(sizes)
            columns = np.stack(np.unravel_index(present, cards)).astype(np.int32)
            return Groups(levels, columns, sizes[present].astype(np.int64))
        ids, uniq = pd.factorize(keys)
        first = np.empty(len(uniq), dtype=np.int64)
        first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)          # first row of every class
        columns = np.stack([c[first] for c in cols]) if cols else np.zeros((0, len(uniq)), dtype=np.int32)
        return Groups(levels, columns, np.bincount(ids, weights=base.counts).astype(np.int64))

    def cell_ids(self, cell_levels: np.ndarray) -> np.ndarray:
        """Per row and QI, one integer for the generalized label (level, code) of a cell-level generalization."""
        out = np.empty(cell_levels.shape, dtype=np.int64)
        for i, h in enumerate(self.hierarchies):
            offs = np.cumsum([0] + [h.cardinality(lv) for lv in range(h.height)])
            stacked = np.stack(h.ancestors)   # (levels, values)
            lv = cell_levels[:, i]
            out[:, i] = offs[lv] + stacked[lv, self.codes[:, i]]
        return out

    def label_space(self, i: int) -> int:
        """Number of (level, label) pairs of QI ``i`` (the bound of :meth:`cell_ids`)."""
        h = self.hierarchies[i]
        return sum(h.cardinality(lv) for lv in range(h.height + 1))

    def generalized_frame(self, cell_levels: np.ndarray, keep: np.ndarray | None = None) -> pd.DataFrame:
        """The table with each QI cell replaced by its label at ``cell_levels`` (``(m,)`` or ``(n, m)``);
        rows where ``keep`` is False are removed. Other columns are unchanged."""
        lv = np.broadcast_to(np.asarray(cell_levels, dtype=np.int64), (self.n, self.m))
        rows = np.arange(self.n) if keep is None else np.flatnonzero(keep)
        out = self.frame.iloc[rows].copy()
        for i, (col, h) in enumerate(zip(self.qi, self.hierarchies, strict=True)):
            stacked = np.stack([lab[anc] for lab, anc in zip(h.labels, h.ancestors, strict=True)])
            out[col] = stacked[lv[rows, i], self.codes[rows, i]]
        return out.reset_index(drop=True)


def pack(cols: Sequence[np.ndarray], cards: Sequence[int]) -> tuple[np.ndarray, int]:
    """Mixed-radix pack of integer columns into one int64 key per row; returns ``(keys, bound)``.

    When the product of cardinalities would overflow, the key built so far is re-densified first
    (``pd.factorize``), so any number of columns packs. O(rows × columns).
    """
    n = len(cols[0]) if cols else 0
    key = np.zeros(n, dtype=np.int64)
    bound = 1
    for col, card in zip(cols, cards, strict=True):
        card = max(int(card), 1)
        if bound * card >= _PACK_LIMIT:
            ids, uniq = pd.factorize(key)
            key, bound = ids.astype(np.int64), max(len(uniq), 1)
        key = key * card + col
        bound *= card
    return key, bound


def encode(frame: pd.DataFrame, qi: Sequence[str], hierarchies: Mapping[str, Hierarchy] | None = None, *,
           source: str | None = None) -> QITable:
    """Encode the QI columns of ``frame`` against their hierarchies (O(n·m) with hash lookups).

    A QI without a hierarchy gets :func:`~graphlink.qi.hierarchy.flat` (value or suppressed). Errors are
    one-line ReleaseErrors: a missing column (file and column), a value absent from its hierarchy (file,
    first row, column, value and the hierarchy file), an empty table. Rows are file line numbers (header =
    line 1) when ``source`` names a file, else 0-based positions.

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> table.n, table.m, table.heights
    (12, 4, (2, 5, 2, 3))
    """
    qi = tuple(str(c) for c in qi)
    if not qi:
        raise ReleaseError("no quasi-identifier given (name its columns, e.g. A,B,C)", file=source)
    check_columns(frame, qi, source)
    if len(frame) == 0:
        raise ReleaseError("the table has no rows", file=source)
    frame = frame.reset_index(drop=True)
    hs = dict(hierarchies or {})
    used: list[Hierarchy] = []
    codes = np.empty((len(frame), len(qi)), dtype=np.int32)
    for i, col in enumerate(qi):
        labels = as_labels(frame[col])
        h = hs.get(col) or flat(col, labels)
        idx = pd.Index(h.values)
        pos = idx.get_indexer(labels)
        if (pos < 0).any():
            r = int(np.flatnonzero(pos < 0)[0])
            where = f" ({h.source})" if h.source else ""
            raise ReleaseError(f"value '{labels.iloc[r]}' is not in the hierarchy for {col}{where}",
                               file=source, row=r + 2 if source else r, column=col)
        codes[:, i] = pos
        used.append(h)
    return QITable(frame, qi, tuple(used), codes, source)
