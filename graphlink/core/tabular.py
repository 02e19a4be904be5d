"""Reading a user's table file (CSV or Parquet) into text columns, with rows numbered as the user sees them.

Every graphlink reader of a user table (long releases, per-location tables, truth files; hierarchy files
later) goes through :func:`read_table`, so they all accept the same files and refuse bad ones with the same
one-line :class:`~graphlink.errors.ReleaseError` naming file, row and column.  The rules:

**CSV**
  * UTF-8 text.  A UTF-8 byte-order mark is skipped.  UTF-16/UTF-32 (recognised by their byte-order
    mark), NUL bytes (binary data, or UTF-16 without a mark) and bytes that are not UTF-8 (Latin-1,
    Windows-1252) are refused, naming the row of the first bad byte.
  * Comma-separated, unless the header has no comma outside quotes but a ``;`` or a tab: the file is then
    semicolon- or tab-separated (as spreadsheets in many locales save CSV), whichever of the two the header
    holds more often (``;`` on a tie), and every rule below holds with that separator in place of the comma.
  * ``"`` quotes a field (``""`` inside quotes is one quote) and a quoted field may span
    lines.  Spaces after a comma are skipped, so ``a, "b,c"`` has two fields (a tab is not skipped:
    ``a,<tab>"b,c"`` has three).  A ``"`` inside an unquoted field is an ordinary character; text after
    a closing quote is appended (``"ab"c`` is ``abc``).  A quote that is never closed is refused.  Lines
    end with LF, CRLF or CR (also inside an unquoted field: :func:`write_csv` quotes such values).
  * The first row with a non-blank field is the header; header names are stripped of surrounding
    whitespace.  Blank lines before it are skipped.
  * A row with more fields than the header is refused; missing trailing fields read as empty.
  * A row whose fields are all empty or whitespace (a blank line, ``,,``) is skipped.
  * **Row numbers are line numbers**: row N is the line of the file where the record starts, counting
    every line (the header is row 1 when the file starts with it).

**Parquet**
  * The columns a reader asks for must hold text (string, large string, a dictionary of strings) or
    integers (read as decimal text); other types (floating point, boolean, binary, temporal, nested) are
    refused naming the column and its type.  Nulls read as missing values.  Other columns may have any
    type and are never looked at.
  * Row N is the N-th record (the first record is row 1).
  * A *Parquet folder* (a table written as part files, as Spark or DuckDB write one: :func:`parquet_parts`)
    reads as the parts' records in name order; row N is the N-th record of the folder.

CSV values are returned stripped of surrounding whitespace (``str.strip``); Parquet values as stored.
The callers strip again (Parquet) and refuse empty keys.  Reading is O(file size) with pandas' C parser;
the exact (slow) scan in :func:`_records` only runs to find a header after blank lines or to name a row
in a message.  ``tests/fuzz_oracle.py`` re-implements these rules independently for the fuzz tests.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphlink.errors import ReleaseError

if TYPE_CHECKING:          # imported where used: the plain reader of small releases starts without pandas
    import numpy as np
    import pandas as pd
    import pyarrow as pa

PARQUET_SUFFIXES = (".parquet", ".pq")

_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE_END_B = re.compile(rb"\r\n|\r|\n")
# One CSV field at the current position, as pandas' C tokenizer reads it with skipinitialspace=True:
# optional spaces, then either a quoted part (maybe unterminated: it then runs to the end) followed by
# unquoted text, or plain unquoted text.  Group 1 is set (possibly "") for a quoted field, group 2 is the
# closing quote ("" when the quote is never closed).
_FIELDS = {sep: re.compile(r' *(?:"((?:[^"]|"")*)("?)[^SEP\r\n]*|[^SEP\r\n]*)'.replace("SEP", re.escape(sep)))
           for sep in (",", ";", "\t")}
#: separators a CSV file may use, by name for messages (module docstring: "Separator")
SEPARATOR_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
_DECODE_CHUNK = 1 << 24


@dataclass(frozen=True)
class Table:
    """A table file read as text: header names, the values of each column, and how to name a row.

    ``column_at(i)`` returns the values of the i-th column (CSV: stripped text; Parquet: as stored, null
    as None/NaN); ``row_of(pos)`` is the row number (see the module docstring) of the record at 0-based
    position ``pos`` among the ``n_rows`` records kept.
    """

    file: str
    names: list[str]
    n_rows: int
    column_at: Callable[[int], pd.Series]
    row_of: Callable[[int], int]
    separator: str = ","

    def index_of(self, name: str) -> int | None:
        """Position of the column ``name`` in the header, None if absent; refuses a name given twice."""
        where = [i for i, n in enumerate(self.names) if n == name]
        if len(where) > 1:
            raise ReleaseError(f"column {name!r} appears {len(where)} times in the header; expected it once",
                               file=self.file, column=name)
        return where[0] if where else None

    def column(self, name: str) -> pd.Series:
        """The values of the column ``name``; refuses a missing or repeated name."""
        i = self.index_of(name)
        if i is None:
            raise ReleaseError(f"missing column {name!r} (found: {names_list(self.names)})", file=self.file,
                               column=name)
        return self.column_at(i)

    def require(self, names: tuple[str, ...] | list[str], *, expected: str) -> None:
        """Refuse the table unless every column in ``names`` appears exactly once in the header."""
        missing = [c for c in names if c not in self.names]
        if missing:
            how = "" if self.separator == "," else f"; read as {SEPARATOR_NAMES[self.separator]}-separated"
            if self.separator == "," and len(self.names) == 1:
                how = "; read as comma-separated: a file may use commas, semicolons or tabs"
            raise ReleaseError(f"missing column(s) {', '.join(map(repr, missing))}; expected columns {expected} "
                               f"(found: {names_list(self.names)}{how})", file=self.file)
        for c in names:
            self.index_of(c)


def write_csv(frame: pd.DataFrame, target: str | Path | io.TextIOBase) -> None:
    """Write ``frame`` (no index) as CSV that :func:`read_table` reads back value for value.

    pandas quotes a value holding a comma, quote or line feed, but not one holding a lone carriage return,
    which every reader then takes as a line break; such a frame is written with every field quoted.
    O(cells).
    """
    import pandas as pd

    text = [c for c in frame.columns if frame[c].dtype == object or isinstance(frame[c].dtype, pd.StringDtype)]
    has_cr = any(frame[c].astype(str).str.contains("\r", regex=False).any() for c in text) or any(
        "\r" in str(c) for c in frame.columns)
    frame.to_csv(target, index=False, quoting=csv.QUOTE_ALL if has_cr else csv.QUOTE_MINIMAL)


def names_list(names: list[str]) -> str:
    """Header names for an error message: quoted only when they hold characters that would be unreadable."""
    if not names:
        return "none"
    return ", ".join(n if n.isprintable() and n.strip() == n and n else repr(n) for n in names)


def read_table(path: str | Path, *, expected: str) -> Table:
    """Read a CSV or Parquet file (by suffix) with the rules of the module docstring.

    ``expected`` describes the header the caller wants (e.g. ``"location,kind,element"``) for the
    messages about empty files.  Raises :class:`ReleaseError` naming file, row and column.  O(file size).
    """
    from graphlink.fileio import check_input

    path = Path(path)
    parts = parquet_parts(path)
    if parts is not None:
        check_input(path, folder=True)
        return _read_parquet_parts(path, parts)
    check_input(path)           # a FIFO or a device would block or never end: refused before it is opened
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return _read_parquet(path)
    return _read_csv(path, expected=expected)


def parquet_parts(path: Path) -> list[Path] | None:
    """The part files of a *Parquet folder* (one table written as parts, as Spark, DuckDB, Dask and pandas
    write it) in name order, or None when ``path`` is not one: a folder whose entries, apart from names starting
    with ``_`` or ``.`` (``_SUCCESS``, ``.crc`` files), are all Parquet files (suffix ``.parquet`` or ``.pq``).
    A folder with sub-folders is not one (a per-location release folder; Hive-style partition folders are not
    read).  A Parquet-named entry that is not a regular file (a FIFO, a device, a socket, a broken link) is a
    ReleaseError naming it, found by ``stat`` before anything is opened: reading a FIFO would block forever.
    O(entries)."""
    if not path.is_dir():
        return None
    try:
        entries = [e for e in sorted(path.iterdir()) if not e.name.startswith(("_", "."))]
    except OSError:
        return None
    if not entries or any(e.is_dir() or e.suffix.lower() not in PARQUET_SUFFIXES for e in entries):
        return None
    from graphlink.fileio import check_input

    for e in entries:
        try:
            e.stat()
        except OSError as exc:
            raise ReleaseError(f"cannot read this part of the Parquet folder ({exc.strerror or exc}; a broken "
                               "symbolic link?)", file=str(e)) from None
        check_input(e)
    return entries


# ----------------------------------------------------------------------------------------------- CSV
def plain_header(data: bytes) -> list[str] | None:
    """The stripped names on the first line of UTF-8 CSV bytes in which every record is one line (no quote
    character anywhere), else None.  For the readers that vouch only for such plain files
    (:mod:`graphlink.core.ingest`) and hand anything else to :func:`read_table`.  O(len(data))."""
    if b'"' in data:
        return None
    first = _LINE_END_B.search(data)
    return [h.strip() for h in data[: first.start() if first else len(data)].decode("utf-8").split(",")]


def plain_lines(text: str) -> list[str]:
    """The lines of ``text`` split where :func:`read_table` ends a line (LF, CRLF, CR: not at other Unicode
    line breaks); a line end at the very end of the text starts no line.  O(len(text))."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _line_at(data: bytes, pos: int) -> int:
    """1-based line number of byte offset ``pos`` (CRLF, LF and CR each end a line)."""
    return data.count(b"\n", 0, pos) + data.count(b"\r", 0, pos) - data.count(b"\r\n", 0, pos) + 1


#: what a spreadsheet or archive saved under a .csv name (or given as-is) starts with, and its name for people
_WORKBOOKS = ((b"PK\x03\x04", "a ZIP archive: an Excel workbook (.xlsx), an OpenDocument sheet (.ods) or another "
               "zipped file"),
              (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel workbook (.xls)"))


def _check_utf8(data: bytes, file: str) -> bytes:
    """The bytes without a UTF-8 byte-order mark; refuses spreadsheets (naming them), other encodings, NUL bytes and
    invalid UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise ReleaseError(f"the file is {encoding} text; expected UTF-8 (save it as CSV UTF-8)", file=file)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    for magic, what in _WORKBOOKS:
        if data.startswith(magic):
            raise ReleaseError(f"this is {what}, not CSV text; save the sheet as CSV (UTF-8) and read that file",
                               file=file)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ReleaseError("found a NUL byte: binary data, or UTF-16 text without a byte-order mark? expected "
                           "UTF-8 CSV text", file=file, row=_line_at(data, nul))
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:                               # in chunks: no full copy of a large file as text
        for start in range(0, len(data), _DECODE_CHUNK):
            decoder.decode(view[start:start + _DECODE_CHUNK], final=start + _DECODE_CHUNK >= len(data))
    except UnicodeDecodeError:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:   # the whole-buffer error knows the exact offset
            raise ReleaseError(f"byte 0x{data[exc.start]:02x} is not UTF-8; expected UTF-8 CSV text (Latin-1 "
                               "or Windows-1252? save it as CSV UTF-8)", file=file,
                               row=_line_at(data, exc.start)) from None
    return data


@dataclass(frozen=True)
class _Record:
    line: int            # line where the record starts (1-based, in the whole file)
    fields: list[str]    # raw field texts (quoted fields unquoted), only when asked for
    n_fields: int
    closed: bool         # False when a quoted field is never closed


def _records(text: str, *, keep_fields: bool = False, sep: str = ","):
    """Yield the CSV records of ``text`` with their start lines: the slow, exact path used to find the
    header and to name rows in messages (pandas' fast parser does the bulk reading).  O(len(text))."""
    field = _FIELDS[sep]
    pos, line, n = 0, 1, len(text)
    while pos < n:
        start_line, fields, count, closed = line, [], 0, True
        while True:
            m = field.match(text, pos)
            count += 1
            if m.group(1) is not None:
                line += len(_LINE_END.findall(m.group(0)))
                closed = closed and m.group(2) == '"'
            if keep_fields:
                fields.append(_unquote(m))
            pos = m.end()
            if pos < n and text[pos] == sep:
                pos += 1
                continue
            break
        if pos < n:  # a line end
            pos += 2 if text.startswith("\r\n", pos) else 1
            line += 1
        yield _Record(start_line, fields, count, closed)


def _unquote(m: re.Match) -> str:
    if m.group(1) is None:
        return m.group(0).lstrip(" ")
    tail = m.group(0)[m.group(0).index('"') + 1 + len(m.group(1)) + len(m.group(2)):]
    return m.group(1).replace('""', '"') + tail


def _header_start(data: bytes) -> tuple[int, int] | None:
    """(line of the header, byte offset where its line starts), or None when every row is blank."""
    first = _LINE_END_B.search(data)
    head = data[: first.start() if first else len(data)]
    if b'"' not in head and any(f.strip() for f in head.decode("utf-8").split(",")):
        return 1, 0                                  # the common case: the header is the first line
    for rec in _records(data.decode("utf-8"), keep_fields=True):
        if any(f.strip() for f in rec.fields):
            if rec.line == 1:
                return 1, 0
            ends = _LINE_END_B.finditer(data)
            for _ in range(rec.line - 2):
                next(ends)
            return rec.line, next(ends).end()
    return None


def _read_csv(path: Path, *, expected: str) -> Table:
    import numpy as np
    import pandas as pd

    file = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReleaseError(f"cannot read the file ({exc.strerror or exc})", file=file) from None
    data = _check_utf8(data, file)
    start = _header_start(data)
    if start is None:
        raise ReleaseError(f"the file is empty (expected a header row: {expected})", file=file)
    header_line, offset = start
    body = data[offset:] if offset else data
    sep = separator_of(body)
    # a byte-order mark that starts the header line (after blank lines: the one at the file's start is gone) is
    # part of the first column's name, as the rules read it; pandas would drop it (and read a header of nothing
    # else as no data at all), so it is put back
    bom = body.startswith(codecs.BOM_UTF8)
    try:
        raw = pd.read_csv(io.BytesIO(body), header=None, dtype=str, na_filter=False, skipinitialspace=True,
                          skip_blank_lines=False, encoding="utf-8", engine="c", sep=sep, quotechar='"')
    except pd.errors.ParserError as exc:
        raise _parser_error(body, header_line, file, exc, sep) from None
    except pd.errors.EmptyDataError:
        if not bom:                     # pragma: no cover - _header_start found a non-blank line
            raise
        raw = pd.DataFrame([[""]], dtype=str)
    names = [str(v).strip() for v in raw.iloc[0]]
    if bom:
        names[0] = "\ufeff" + names[0]
    raw = raw.iloc[1:]
    raw.columns = range(len(names))
    # rows whose every field is blank: test column by column, only the rows still blank so far
    candidates = np.arange(len(raw))
    for c in raw.columns:
        if not len(candidates):
            break
        values = raw[c].iloc[candidates] if len(candidates) < len(raw) else raw[c]
        candidates = candidates[(values.str.strip() == "").to_numpy(dtype=bool)]
    kept = np.arange(len(raw))
    if len(candidates):
        kept = np.setdiff1d(kept, candidates)
        raw = raw.iloc[kept]
    raw = raw.reset_index(drop=True)
    row_of = _line_mapper(body, header_line, kept, sep)
    return Table(file=file, names=names, n_rows=len(raw), column_at=lambda i: raw[i].str.strip(), row_of=row_of,
                 separator=sep)


def separator_of(body: bytes) -> str:
    """The separator of CSV bytes that start with the header record (module docstring): ``,`` unless the
    header has no comma outside quotes but holds ``;`` or tabs.  O(header) in the common case: a first line
    without quotes that holds a comma needs no scan; otherwise the header record is tokenized for each
    separator (on at most the first 64 KiB)."""
    first = _LINE_END_B.search(body)
    line = body[: first.start() if first else len(body)]
    if b'"' not in line and b"," in line:
        return ","
    text = body[: 1 << 16].decode("utf-8", errors="ignore")
    counts = {sep: next(_records(text, sep=sep)).n_fields - 1 for sep in _FIELDS} if text else {}
    if not counts or counts[","] or not max(counts[";"], counts["\t"]):
        return ","
    return ";" if counts[";"] >= counts["\t"] else "\t"


def _line_mapper(body: bytes, header_line: int, kept: np.ndarray, sep: str = ",") -> Callable[[int], int]:
    """Position among the kept records -> line number.  Without quotes every record is one line; with
    quotes the records are re-scanned (once, lazily) since a quoted field may span lines."""
    if b'"' not in body:
        return lambda pos: header_line + 1 + int(kept[pos])
    cache: list[int] = []

    def row_of(pos: int) -> int:
        record = int(kept[pos]) + 1                  # records counted from the header (record 0)
        if len(cache) <= record:
            cache.clear()
            for rec in _records(body.decode("utf-8"), sep=sep):
                cache.append(header_line - 1 + rec.line)
                if len(cache) > record:
                    break
        return cache[record]

    return row_of


def _parser_error(body: bytes, header_line: int, file: str, exc: Exception, sep: str = ",") -> ReleaseError:
    """Turn pandas' tokenizer error into a message naming the row (found by the exact slow scan)."""
    width = None
    for rec in _records(body.decode("utf-8"), sep=sep):
        line = header_line - 1 + rec.line
        if width is None:
            width = rec.n_fields
        elif rec.n_fields > width:
            return ReleaseError(f"this row has {rec.n_fields} fields but the header has {width}", file=file,
                                row=line)
        if not rec.closed:
            return ReleaseError("a quoted field starting in this row is never closed (a '\"' is missing)",
                                file=file, row=line)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ReleaseError(f"cannot read it as CSV: {first}", file=file)


# ------------------------------------------------------------------------------------------- Parquet
def _parquet_file(path: Path) -> pa.Table:
    """One Parquet file as an Arrow table; an unreadable one is refused naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).read()      # not read_table: its dataset layer fails on repeated names
    except (pa.ArrowException, OSError, ValueError, NotImplementedError, TypeError) as exc:
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise ReleaseError(f"cannot read it as Parquet: {first}", file=str(path)) from None


def _read_parquet(path: Path) -> Table:
    return _parquet_table(str(path), _parquet_file(path))


def _read_parquet_parts(folder: Path, parts: list[Path]) -> Table:
    """A Parquet folder (:func:`parquet_parts`) as one table: the parts' records in name order.  Every part must
    have the first part's column names; columns whose types differ between parts are unified where Arrow can
    (dictionaries decoded, then ``promote_options="permissive"``, e.g. string and large string), else refused.
    Row N is the N-th record of the folder (the parts' records counted in name order).  O(total size)."""
    import pyarrow as pa

    tables = [_parquet_file(part) for part in parts]
    names = tables[0].column_names
    for part, table in zip(parts[1:], tables[1:], strict=True):
        if table.column_names != names:
            raise ReleaseError(f"its columns ({names_list(table.column_names)}) differ from those of "
                               f"{parts[0].name} ({names_list(names)}); expected every part to have the same",
                               file=str(part))
    if any(t.schema != tables[0].schema for t in tables):     # e.g. one part dictionary-encoded, one not
        tables = [pa.table([_decoded(c) for c in t.columns], names=names) for t in tables]
    try:
        table = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise ReleaseError(f"its parts have column types that do not combine: {str(exc).splitlines()[0]}",
                           file=str(folder)) from None
    return _parquet_table(str(folder), table)


def _decoded(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column as its values (other columns as they are)."""
    import pyarrow as pa

    if not pa.types.is_dictionary(col.type):
        return col
    return pa.chunked_array([c.dictionary_decode() for c in col.chunks], type=col.type.value_type)


def _parquet_table(file: str, table: pa.Table) -> Table:
    import pyarrow as pa

    names = [str(n).strip() for n in table.column_names]

    def column_at(i: int) -> pd.Series:
        col = table.column(i)
        kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        text_like = pa.types.is_string(kind) or pa.types.is_large_string(kind) or (
            hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind))
        if not (text_like or pa.types.is_integer(kind) or pa.types.is_null(kind)):
            raise ReleaseError(f"Parquet type {col.type} is not text; expected strings (or integers)",
                               file=file, column=names[i])
        col = _decoded(col)
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            col = col.cast(pa.string())
        return col.to_pandas()

    return Table(file=file, names=names, n_rows=table.num_rows, column_at=column_at, row_of=lambda pos: pos + 1)
