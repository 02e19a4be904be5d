"""The fast paths of :func:`graphlink.core.release.read_release` for long-format files: Arrow for large files, plain
Python for small CSV files.

A long release (``location, kind, element``) of millions of rows is read with pyarrow and kept as integer codes:
every column is reduced to its distinct values straight from the Arrow buffers (Parquet dictionary pages are
used as they are), the release rules of :mod:`graphlink.core.release` are checked on those distinct values only,
and the rows become (location, kind, element) codes that are bit-packed into trail words in the same pass that
finds exact repeats.  No Python string is made per row; element keys become Python strings only when a caller
asks for them.

The fast path never words an error.  It only *detects*, with vectorised checks, that everything is well formed;
on anything unusual (a missing or repeated column, a null or blank value, an unknown kind, a type it does not
read, a quoted or ragged CSV, a file too small to be worth it) it returns None and the caller runs the detailed
reader of :mod:`graphlink.core.tabular` / :mod:`graphlink.core.release`, which raises the exact message or reads
the file the slow way.  ``tests/core/test_ingest.py`` runs the reader tests through both paths.

Cost: O(rows + total bytes of the distinct values) expected (hashing, numba), plus the Arrow read.  numba is used
here although loading it costs about half a second per process: on millions of rows its hash tables need well
under half the CPU time (and a fifth of the system time) of Arrow's ``dictionary_encode``.  Small files never
take this path, so the commands on them start without numba.

Small CSV files (under ``PLAIN_MAX_BYTES``) take the *plain* path (:func:`plain_release`) under the same
contract: the standard library splits a file whose every record is one line (no quote character, header on
the first line, every row as wide as the header) and the same rules are checked with Python dicts, so
``graphlink trails`` on a small release starts without pandas, pyarrow or numba (a third of a second of
imports; tests/cli/test_cold_start.py).  Cost O(file size) in Python: for files under 2 MiB no slower than pandas'
parser plus its import.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: Parquet files with fewer rows, and CSV files with fewer bytes, do not take the Arrow path (cheaper to start)
FAST_MIN_ROWS = 100_000
FAST_MIN_BYTES = 2 << 20
#: CSV files with fewer bytes (and fewer than ``FAST_MIN_BYTES``) take the plain path; the others below
#: ``FAST_MIN_BYTES`` and every Parquet file under ``FAST_MIN_ROWS`` rows take the detailed reader
PLAIN_MAX_BYTES = FAST_MIN_BYTES
#: refuse the fast path when the packed trail words would exceed this many bytes per input row (a release over
#: very many locations with few rows per element): the detailed reader is then leaner
MAX_PACKED_BYTES_PER_ROW = 64

COLUMNS = ("location", "kind", "element")
KINDS = ("identified", "deidentified")


def kind_of(spelling: str) -> str | None:
    """'identified' / 'deidentified' for an accepted spelling of a kind (case-insensitive, ``-`` and ``_``
    ignored; Python's lower-casing), None otherwise.  The release rule every reader applies."""
    k = spelling.lower().replace("-", "").replace("_", "")
    return k if k in KINDS else None


@dataclass(frozen=True, eq=False)
class CodedRelease:
    """A validated long release on integer codes, exact repeats removed (rows keep their file order).

    ``keys[k]`` holds the element keys of kind ``KINDS[k]`` in order of first appearance (Arrow strings, or a
    NumPy object array of str from the plain path);
    ``ones[k]`` their packed trail words (bit c of word c // 64: disclosed at location c); ``sizes[c, k]``
    the number of distinct elements of kind k at location c.  ``repeats`` is (count, position of the first
    repeat among the input rows) when exact repeats were removed.
    """

    locations: list[str]
    row_loc: np.ndarray
    row_kind: np.ndarray
    row_elem: np.ndarray
    keys: tuple[pa.Array | np.ndarray, pa.Array | np.ndarray]
    ones: tuple[np.ndarray, np.ndarray]
    sizes: np.ndarray
    repeats: tuple[int, int] | None = None
    _key_cache: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.row_loc)

    def key_objects(self, kind: int) -> np.ndarray:
        """The element keys of kind ``kind`` (0 identified, 1 de-identified) as a NumPy object array of str,
        made once on first use.  O(elements)."""
        if isinstance(self.keys[kind], np.ndarray):
            return self.keys[kind]
        if kind not in self._key_cache:
            self._key_cache[kind] = self.keys[kind].to_numpy(zero_copy_only=False).astype(object)
        return self._key_cache[kind]

    def frame(self) -> pd.DataFrame:
        """The long table (location, kind, element as Python strings), as the detailed reader returns it.
        O(rows): only for callers that need the rows themselves."""
        import pandas as pd

        loc = np.asarray(self.locations, dtype=object)[self.row_loc]
        kind = np.asarray(KINDS, dtype=object)[self.row_kind]
        element = np.empty(len(self), dtype=object)
        for k in (0, 1):
            rows = self.row_kind == k
            element[rows] = self.key_objects(k)[self.row_elem[rows]]
        return pd.DataFrame({"location": loc, "kind": kind, "element": element}).astype(dict.fromkeys(COLUMNS, object))


def read_coded(path: Path) -> CodedRelease | None:
    """The release in ``path`` (long CSV or Parquet) on codes, or None when the detailed reader must run
    (a file of a size no fast path takes, or anything the fast paths do not vouch for: module docstring)."""
    from graphlink.core.tabular import PARQUET_SUFFIXES, parquet_parts
    from graphlink.fileio import check_input

    parts = parquet_parts(path)
    check_input(path, folder=parts is not None)     # a FIFO or a device is refused before it is opened
    parquet = parts is not None or path.suffix.lower() in PARQUET_SUFFIXES
    try:
        if not parquet and path.stat().st_size < min(PLAIN_MAX_BYTES, FAST_MIN_BYTES):
            coded = plain_release(path)
            return None if coded is None else _repeat_row(coded, first_row=2)
        warm = _warm_kernels()
        try:
            columns = _parquet_columns(parts or [path]) if parquet else _csv_columns(path)
        finally:
            warm.join()
    except (OSError, ValueError, ImportError):
        return None
    except Exception as exc:  # noqa: BLE001 - any Arrow failure: the detailed reader words it
        import pyarrow as pa

        if isinstance(exc, pa.ArrowException):
            return None
        raise
    coded = None if columns is None else coded_release(*columns)
    return None if coded is None else _repeat_row(coded, first_row=1 if parquet else 2)


def _warm_kernels() -> threading.Thread:
    """Load numba and this module's compiled kernels (and REIDIT-C's) in a thread while Arrow reads the file.

    Loading them costs ~0.6 s of one core, under the GIL (imports, numba's target set-up, cache lookups); Arrow's
    reader releases the GIL and runs on its own threads, so on two cores most of that cost disappears from the
    wall time.  Errors are left to the real calls, which raise them again.  O(1) in the data.
    """
    def load() -> None:
        try:
            from graphlink.kernels.hashing import dedupe_strings, factorize_rows, gather_codes, group_rows, pack_rows

            empty8, empty32, words = np.zeros(0, np.int8), np.zeros(0, np.int32), np.zeros((1, 1), np.uint64)
            dedupe_strings(np.zeros(1, np.int64), np.zeros(1, np.uint8))
            gather_codes(empty32, 0, empty32, empty32)
            gather_codes(empty32, 0, empty32, empty8)     # the kind column's codes
            factorize_rows(empty32, empty8, empty32, 0, 0)
            pack_rows(empty32, empty8, empty32, 0, 0, 0, 1)
            group_rows(words, words)                   # REIDIT-C's, a few ms more once numba is up
        except Exception:  # noqa: BLE001, S110 - only a head start: the real call raises it again
            pass

    thread = threading.Thread(target=load, name="graphlink-warm-kernels", daemon=True)
    thread.start()
    return thread


def _repeat_row(coded: CodedRelease, *, first_row: int) -> CodedRelease:
    """``repeats`` with the position of the first repeat turned into its row number (module tabular's rules:
    the first record is row ``first_row``; a plain CSV has one record per line after the header)."""
    if coded.repeats is None:
        return coded
    count, pos = coded.repeats
    return replace(coded, repeats=(count, pos + first_row))


# --------------------------------------------------------------------------------------------------- readers
def _parquet_columns(files: list[Path]) -> tuple[pa.ChunkedArray, ...] | None:
    """The three columns of a large Parquet release (one file, or the parts of a Parquet folder in name
    order), dictionary-encoded where the file allows; None unless every one appears exactly once (names
    stripped), the release has at least ``FAST_MIN_ROWS`` rows, and every part has the same columns and types."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    footers = [pq.ParquetFile(f) for f in files]
    if sum(pf.metadata.num_rows for pf in footers) < FAST_MIN_ROWS or any(
            pf.schema_arrow.names != footers[0].schema_arrow.names for pf in footers):
        return None
    parts = [_parquet_part(f, pf.schema_arrow) for f, pf in zip(files, footers, strict=True)]
    if any(part is None for part in parts):
        return None
    try:
        return tuple(pa.chunked_array([c for part in parts for c in part[i].chunks]) for i in range(3))
    except (pa.ArrowException, TypeError):          # types differ between parts: the detailed reader unifies
        return None


def _parquet_part(path: Path, schema: pa.Schema) -> tuple[pa.ChunkedArray, ...] | None:
    """The three columns of one Parquet file whose footer's schema is ``schema`` (see :func:`_parquet_columns`),
    or None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = list(schema.names)
    stripped = [str(n).strip() for n in raw]
    if any(stripped.count(c) != 1 for c in COLUMNS):
        return None
    names = [raw[stripped.index(c)] for c in COLUMNS]
    if any(raw.count(n) != 1 for n in names):
        return None
    types = [schema.field(n).type for n in names]
    if any(_large_string_type(t.value_type if pa.types.is_dictionary(t) else t) is None for t in types):
        return None
    plain = [n for n, t in zip(names, types, strict=True) if pa.types.is_string(t) or pa.types.is_large_string(t)]
    # every column, as the detailed reader does: a column it cannot read refuses the file there too
    table = pq.ParquetFile(path, read_dictionary=plain).read()
    return tuple(table.column(raw.index(n)) for n in names)


def _csv_columns(path: Path) -> tuple[pa.ChunkedArray, ...] | None:
    """The three columns of a large, plain CSV release (UTF-8 without byte-order mark, header on the first
    line, no quote character anywhere, no blank line, every row as wide as the header); None otherwise."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if path.stat().st_size < FAST_MIN_BYTES:
        return None
    plain = _plain_csv(path)
    if plain is None:
        return None
    data, header, positions = plain
    names = [f"c{i}" for i in range(len(header))]
    wanted = [names[i] for i in positions]
    table = pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=",", quote_char=False, escape_char=False,
                                         newlines_in_values=False, ignore_empty_lines=False),
        # dictionary-encoded per block by Arrow (in parallel): fewer values for distinct_codes to hash
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.dictionary(pa.int32(), pa.string())),
                                             include_columns=wanted, strings_can_be_null=False,
                                             check_utf8=True))
    return tuple(table.column(c) for c in wanted)


def _plain_csv(path: Path) -> tuple[bytes, list[str], list[int]] | None:
    """(UTF-8 bytes without byte-order mark, header names, positions of ``COLUMNS`` in it) of a plain CSV
    release (see :func:`_csv_columns`), or None when the file is not plain, or a column is missing or repeated.
    O(file size)."""
    from graphlink.core.tabular import _check_utf8, plain_header
    from graphlink.errors import ReleaseError

    try:
        data = _check_utf8(path.read_bytes(), str(path))      # encoding, NUL bytes; drops a UTF-8 BOM
    except ReleaseError:
        return None
    header = plain_header(data)
    if header is None or any(header.count(c) != 1 for c in COLUMNS):
        return None
    return data, header, [header.index(c) for c in COLUMNS]


def plain_release(path: Path) -> CodedRelease | None:
    """A small plain CSV release (module docstring) on codes, read and checked in Python without pandas, Arrow
    or numba; None when the detailed reader must run (not plain, a row not as wide as the header, a blank
    value, an unknown kind, no rows, too many locations for its rows).

    Values are stripped with ``str.strip`` as the detailed reader does; locations and elements (per kind) are
    numbered in order of first appearance and exact repeats are dropped, the first one's position kept.
    O(file size + (|M| + |N|)·W).
    """
    from graphlink.core.tabular import plain_lines
    from graphlink.kernels.rows import pack_columns

    plain = _plain_csv(path)
    if plain is None:
        return None
    data, header, (i_loc, i_kind, i_elem) = plain
    width = len(header)
    kinds: dict[str, int | None] = {}              # spelling -> 0, 1 or None (few spellings: each checked once)
    loc_code: dict[str, int] = {}
    elem_code: tuple[dict[str, int], dict[str, int]] = ({}, {})
    seen: set[tuple[int, int, int]] = set()
    rows: list[tuple[int, int, int]] = []
    n_repeats, first_repeat = 0, -1
    lines = plain_lines(data.decode("utf-8"))[1:]
    for pos, line in enumerate(lines):
        fields = line.split(",")
        if len(fields) != width:
            return None
        loc, spelling, elem = fields[i_loc].strip(), fields[i_kind].strip(), fields[i_elem].strip()
        if not (loc and spelling and elem):
            return None
        if spelling not in kinds:
            kind_name = kind_of(spelling)
            kinds[spelling] = None if kind_name is None else KINDS.index(kind_name)
        kind = kinds[spelling]
        if kind is None:
            return None
        row = (loc_code.setdefault(loc, len(loc_code)), kind, elem_code[kind].setdefault(elem, len(elem_code[kind])))
        if row in seen:
            n_repeats += 1
            first_repeat = pos if first_repeat < 0 else first_repeat
            continue
        seen.add(row)
        rows.append(row)
    n_loc = len(loc_code)
    if not rows or _too_wide(len(elem_code[0]) + len(elem_code[1]), n_loc, len(lines)):
        return None
    table = np.array(rows, dtype=np.int64)
    row_loc, row_kind, row_elem = table[:, 0].astype(np.int32), table[:, 1].astype(np.int8), table[:, 2]
    sizes = np.zeros((n_loc, 2), dtype=np.int64)
    np.add.at(sizes, (row_loc, row_kind), 1)
    ones = tuple(pack_columns(row_elem[row_kind == k], row_loc[row_kind == k], len(elem_code[k]), n_loc)
                 for k in (0, 1))
    keys = tuple(np.array(list(elem_code[k]), dtype=object) for k in (0, 1))
    return CodedRelease(locations=list(loc_code), row_loc=row_loc, row_kind=row_kind, row_elem=row_elem,
                        keys=keys, ones=ones, sizes=sizes,  # type: ignore[arg-type]
                        repeats=(n_repeats, first_repeat) if n_repeats else None)


def _too_wide(n_elements: int, n_locations: int, n_rows: int) -> bool:
    """Would the packed trail words exceed ``MAX_PACKED_BYTES_PER_ROW`` bytes per input row?  O(1)."""
    from graphlink.kernels.rows import n_words

    return n_elements * n_words(n_locations) * 8 > MAX_PACKED_BYTES_PER_ROW * n_rows


# ---------------------------------------------------------------------------------------------- validation
def _large_string_type(t: pa.DataType) -> str | None:
    """'integer' or 'text' for the value types the release reader accepts, None for the others."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or (
            hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)):
        return "text"
    return None


def _large_string(values: pa.Array) -> pa.Array | None:
    """``values`` as large_string (integers as decimal text, like the detailed reader); None for other types."""
    import pyarrow as pa

    what = _large_string_type(values.type)
    if what is None:
        return None
    if what == "integer":
        values = values.cast(pa.string())
    return values.cast(pa.large_string())


def _buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of a large_string array, zero-copy."""
    bufs = values.buffers()
    offsets = np.frombuffer(bufs[1], np.int64)[values.offset:values.offset + len(values) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    return offsets, data


def arrow_ints(values: np.ndarray) -> pa.Array:
    """A 1-d integer or boolean NumPy array as an Arrow array, zero-copy for integers.  ``pa.array`` would do
    the same but imports pandas on first use (0.25 s of a cold start)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(np.packbits(values,
                                                                                           bitorder="little"))])
    kind = {"i": "int", "u": "uint"}[values.dtype.kind]
    return pa.Array.from_buffers(getattr(pa, f"{kind}{values.dtype.itemsize * 8}")(), len(values),
                                 [None, pa.py_buffer(values)])


def _indices(indices: pa.Array) -> np.ndarray:
    """The dictionary indices of a chunk without nulls, zero-copy (``to_numpy`` would import pandas: 0.2 s)."""
    import pyarrow as pa

    width = indices.type.bit_width // 8
    dtype = np.dtype(f"{'u' if pa.types.is_unsigned_integer(indices.type) else 'i'}{width}")
    return np.frombuffer(indices.buffers()[1], dtype, count=len(indices), offset=indices.offset * width)


def _dedupe(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(code per value, distinct values in first-appearance order).  O(total bytes)."""
    from graphlink.kernels.hashing import dedupe_strings

    offsets, data = _buffers(values)
    codes, first = dedupe_strings(offsets, data)
    if len(first) == len(values):        # all distinct, so first is 0, 1, ...: the values themselves, not a copy
        return codes, values
    return codes, values.take(arrow_ints(first))


def distinct_codes(column: pa.ChunkedArray, dtype: type = np.int32) -> tuple[np.ndarray, pa.Array] | None:
    """A text column as (code per row, distinct stripped values), or None when a value is null, blank after
    stripping, or of a type the release reader refuses.  Codes are int32, or ``dtype`` for a column known to
    have few values (the caller refuses more values than it holds: the codes then wrap and are not used).

    Dictionary chunks contribute their dictionaries (hashed once per entry, not per row).  Values are
    stripped like the detailed reader does: a value whose first and last bytes are printable ASCII other
    than space needs nothing; only the others are stripped, with pandas as there.
    O(rows + total bytes of the entries hashed).
    """
    import pyarrow as pa

    from graphlink.kernels.hashing import gather_codes

    entries, parts = [], []               # parts: (first entry of the chunk, its dictionary indices or None)
    base = 0
    for chunk in column.chunks:
        if chunk.null_count:
            return None
        if pa.types.is_dictionary(chunk.type):
            values, idx = chunk.dictionary, _indices(chunk.indices)
        else:
            values, idx = chunk, None
        values = _large_string(values)
        if values is None or values.null_count:
            return None
        entries.append(values)
        parts.append((base, len(values) if idx is None else len(idx), idx))
        base += len(values)
    if not entries:
        return np.zeros(0, np.int32), pa.array([], pa.large_string())
    entry_codes, distinct = _dedupe(pa.concat_arrays(entries))
    stripped = _strip(distinct)
    if stripped is None:
        return None
    if stripped is not distinct:                   # stripping made some values equal: number them again
        remap, distinct = _dedupe(stripped)
        entry_codes = remap[entry_codes]
    codes = np.empty(sum(n for _, n, _ in parts), dtype)
    pos = 0
    for start, n, idx in parts:
        if idx is None:
            codes[pos:pos + n] = entry_codes[start:start + n]
        else:
            gather_codes(entry_codes, start, idx, codes[pos:pos + n])
        pos += n
    return codes, distinct


def _strip(distinct: pa.Array) -> pa.Array | None:
    """``distinct`` stripped of surrounding whitespace (the same array when nothing changes); None when a
    value is blank.  O(values) vectorised; the few values that may need stripping are stripped by pandas."""
    if not len(distinct):
        return distinct
    offsets, data = _buffers(distinct)
    if np.any(offsets[1:] == offsets[:-1]):
        return None
    head, tail = data[offsets[:-1]], data[offsets[1:] - 1]
    clean = (head > 0x20) & (head < 0x7F) & (tail > 0x20) & (tail < 0x7F)
    dirty = np.flatnonzero(~clean)
    if not len(dirty):
        return distinct
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    before = distinct.take(arrow_ints(dirty))
    after = pa.array(pd.Series(before.to_pandas(), dtype="str").str.strip().to_numpy(dtype=object),
                     pa.large_string())
    if pc.any(pc.equal(pc.utf8_length(after), 0)).as_py():
        return None
    if after.equals(before):
        return distinct
    mask = np.zeros(len(distinct), dtype=bool)
    mask[dirty] = True
    return pc.replace_with_mask(distinct, arrow_ints(mask), after)


def coded_release(location: pa.ChunkedArray, kind: pa.ChunkedArray,
                  element: pa.ChunkedArray) -> CodedRelease | None:
    """Validate three text columns as a long release and code them (see the module docstring); None when the
    detailed validator must word a problem.

    Locations and elements are numbered in order of first appearance (elements per kind) by
    :func:`graphlink.kernels.hashing.factorize_rows`, as the detailed path numbers them; the trail words are packed by
    :func:`graphlink.kernels.hashing.pack_rows` in the same pass that finds exact repeats (a bit already set).  Both
    are numba: on millions of rows they need about half the CPU and system time of the NumPy/Arrow equivalent
    (``np.bitwise_or.at`` plus a hash or sort to locate repeats), mostly by allocating no temporaries.
    O(rows + (|M| + |N|)·W) expected.
    """
    from graphlink.kernels.hashing import factorize_rows, pack_rows
    from graphlink.kernels.rows import n_words

    n_rows = len(location)
    if n_rows == 0:
        return None
    cols = []
    for column, dtype in ((location, np.int32), (kind, np.int8), (element, np.int32)):   # at most 64 kinds, below
        coded = distinct_codes(column, dtype)
        if coded is None:
            return None
        cols.append(coded)
    (loc_codes, loc_values), (kind_codes, kind_values), (elem_codes, elem_values) = cols
    if len(kind_values) > 64:
        return None
    spelled = [kind_of(k) for k in kind_values.to_pylist()]
    if any(k is None for k in spelled):
        return None
    kind_row = np.array([KINDS.index(k) for k in spelled], dtype=np.int8)[kind_codes]
    # the codes become the rows' indexes in place (factorize_rows): they are not used after this
    loc_order, row_loc, row_elem, id_keys, de_keys = factorize_rows(elem_codes, kind_row, loc_codes,
                                                                    len(elem_values), len(loc_values))
    n_loc = len(loc_order)
    if _too_wide(len(id_keys) + len(de_keys), n_loc, n_rows):
        return None
    ones_i, ones_d, repeat, sizes = pack_rows(row_elem, kind_row, row_loc, len(id_keys), len(de_keys), n_loc,
                                              n_words(n_loc))
    repeats = None
    if repeat.any():
        repeats = (int(repeat.sum()), int(repeat.argmax()))
        keep = ~repeat
        row_loc, kind_row, row_elem = row_loc[keep], kind_row[keep], row_elem[keep]
    return CodedRelease(locations=loc_values.take(arrow_ints(loc_order)).to_pylist(), row_loc=row_loc,
                        row_kind=kind_row, row_elem=row_elem,
                        keys=(elem_values.take(arrow_ints(id_keys)), elem_values.take(arrow_ints(de_keys))),
                        ones=(ones_i, ones_d), sizes=sizes, repeats=repeats)
