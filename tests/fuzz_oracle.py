"""An independent reference reader for the fuzz tests: what a release, per-location folder or truth file
*should* read as, by the documented rules (``graphlink.core.tabular`` and ``graphlink.core.release`` docstrings),
written from those rules alone with a character-by-character CSV tokenizer and plain pyarrow.

``expect_*`` functions return a :class:`Verdict`: either the rows the library must keep (and how many
exact duplicates it must report collapsing), or the set of defects; the library must then refuse the
input with a ``ReleaseError`` whose (row, column) is one of them.  Nothing here imports pandas or the
library's readers.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("identified", "deidentified")
LONG = ("location", "kind", "element")
TRUTH = ("identified", "deidentified")
SEPARATOR = "|"
UTF16_32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True)
class Defect:
    """Where the input is wrong: the row (line) and column a correct error may name (None: not named)."""

    row: int | None
    column: str | None
    what: str
    file: str | None = None


@dataclass
class Verdict:
    """The reference outcome: ``rows`` kept in order (when accepted) or ``defects`` (when refused)."""

    rows: list[tuple] = field(default_factory=list)
    duplicates: int = 0
    first_repeat_row: int | None = None
    defects: list[Defect] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.defects

    def refuse(self, row: int | None, column: str | None, what: str, file: str | None = None) -> None:
        self.defects.append(Defect(row, column, what, file))


@dataclass(frozen=True)
class Record:
    line: int
    fields: list[str]


@dataclass
class Parsed:
    """A CSV file as the rules read it: header names, the data records, and the file-level defects."""

    names: list[str] | None = None
    records: list[Record] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)


def line_of(data: bytes, pos: int) -> int:
    """1-based line of a byte offset, each of CRLF, LF and CR ending a line."""
    line, i = 1, 0
    while i < pos:
        if data[i:i + 2] == b"\r\n":
            line, i = line + 1, i + 2
            continue
        if data[i] in (0x0A, 0x0D):
            line += 1
        i += 1
    return line


def tokenize(text: str, sep: str = ",") -> tuple[list[Record], int | None]:
    """CSV records with their start lines, and the start line of a never-closed quoted field (or None).

    Dialect: ``sep`` (``,`` unless the header says otherwise: :func:`parse_csv`) separates fields;
    spaces (not tabs) at the start of a field are skipped; a field whose first
    other character is ``"`` is quoted (``""`` is a quote; text after the closing quote is appended); any
    other ``"`` is literal; CRLF, LF or CR ends a record outside quotes.
    """
    records: list[Record] = []
    fields: list[str] = []
    buf: list[str] = []
    state, line, start, i, n, begun = "start", 1, 1, 0, len(text), False
    while i < n:
        c = text[i]
        if state == "start":
            if c == " ":
                i, begun = i + 1, True
                continue
            if c == '"':
                state, i, begun = "quoted", i + 1, True
                continue
            state = "plain"
        if state == "quoted":
            if c == '"':
                if text[i + 1:i + 2] == '"':
                    buf.append('"')
                    i += 2
                else:
                    state, i = "plain", i + 1
                continue
            if c == "\r" and text[i + 1:i + 2] == "\n":
                buf.append("\r\n")
                i, line = i + 2, line + 1
                continue
            if c in "\r\n":
                line += 1
            buf.append(c)
            i += 1
            continue
        # plain (also after a closing quote)
        if c == sep:
            fields.append("".join(buf))
            buf, state, i, begun = [], "start", i + 1, True
            continue
        if c in "\r\n":
            fields.append("".join(buf))
            records.append(Record(start, fields))
            i += 2 if text[i:i + 2] == "\r\n" else 1
            line += 1
            fields, buf, state, start, begun = [], [], "start", line, False
            continue
        buf.append(c)
        i, begun = i + 1, True
    if state == "quoted":
        fields.append("".join(buf))
        records.append(Record(start, fields))
        return records, start
    if begun or buf or fields:
        fields.append("".join(buf))
        records.append(Record(start, fields))
    return records, None


def _line_start(text: str, line: int) -> int:
    """Offset in ``text`` where 1-based ``line`` starts (CRLF, LF and CR end lines)."""
    at, i, n = 1, 0, len(text)
    while at < line and i < n:
        if text[i:i + 2] == "\r\n":
            i += 2
            at += 1
        elif text[i] in "\r\n":
            i += 1
            at += 1
        else:
            i += 1
    return i


def parse_csv(data: bytes, file: str | None = None) -> Parsed:
    """Apply the file rules of ``graphlink.core.tabular`` to raw bytes."""
    out = Parsed()
    if any(data.startswith(b) for b in UTF16_32_BOMS):
        out.defects.append(Defect(None, None, "UTF-16/32", file))
        return out
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    if b"\x00" in data:
        out.defects.append(Defect(line_of(data, data.index(b"\x00")), None, "NUL byte", file))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.defects.append(Defect(line_of(data, exc.start), None, "not UTF-8", file))
        text = data.decode("utf-8", errors="replace")
    records, open_quote = tokenize(text)
    if open_quote is not None:
        out.defects.append(Defect(open_quote, None, "unterminated quote", file))
    header_at = next((k for k, r in enumerate(records) if any(f.strip() for f in r.fields)), None)
    if header_at is None:
        out.defects.append(Defect(None, None, "empty file", file))
        return out
    if len(records[header_at].fields) == 1:
        # no comma in the header: a ';' or tab there makes the whole file use it (the more frequent; ';' on a tie)
        start = _line_start(text, records[header_at].line)
        widths = {sep: len(tokenize(text[start:], sep)[0][0].fields) - 1 for sep in (";", "\t")}
        if max(widths.values()) > 0:
            sep = ";" if widths[";"] >= widths["\t"] else "\t"
            shift = records[header_at].line - 1         # the records from the header on, numbered as in the file
            tail, open_quote = tokenize(text[start:], sep)
            records, header_at = [Record(r.line + shift, r.fields) for r in tail], 0
            out.defects = [d for d in out.defects if d.what != "unterminated quote"]
            if open_quote is not None:
                out.defects.append(Defect(open_quote + shift, None, "unterminated quote", file))
    out.names = [f.strip() for f in records[header_at].fields]
    width = len(out.names)
    for rec in records[header_at + 1:]:
        if len(rec.fields) > width:
            out.defects.append(Defect(rec.line, None, "too many fields", file))
            continue
        fields = [f.strip() for f in rec.fields] + [""] * (width - len(rec.fields))
        if any(fields):
            out.records.append(Record(rec.line, fields))
    return out


def _columns(parsed: Parsed, wanted: Iterable[str], verdict: Verdict, file: str | None) -> dict[str, int] | None:
    names = parsed.names or []
    if any(c not in names for c in wanted):
        verdict.refuse(None, None, "missing column", file)
        return None
    where = {}
    for c in wanted:
        if names.count(c) > 1:
            verdict.refuse(None, c, "repeated column", file)
        where[c] = names.index(c)
    return where


def _dedupe(verdict: Verdict, rows: list[tuple], lines: list[int | None]) -> None:
    seen: set[tuple] = set()
    for row, line in zip(rows, lines, strict=True):
        if row in seen:
            verdict.duplicates += 1
            if verdict.first_repeat_row is None:
                verdict.first_repeat_row = line
            continue
        seen.add(row)
        verdict.rows.append(row)


def normalise_kind(kind: str) -> str | None:
    k = kind.lower().replace("-", "").replace("_", "")
    return k if k in KINDS else None


def expect_long_rows(rows: list[tuple[int | None, dict[str, object]]], verdict: Verdict,
                     file: str | None) -> None:
    """The release rules on rows of raw values (None = missing): blanks, kinds, duplicates."""
    if not rows:
        verdict.refuse(None, None, "empty release", file)
        return
    clean, lines = [], []
    for line, values in rows:
        ok = True
        for col in LONG:
            v = values[col]
            if v is None or not str(v).strip():
                verdict.refuse(line, col, "empty key", file)
                ok = False
        if not ok:
            continue
        kind = normalise_kind(str(values["kind"]).strip())
        if kind is None:
            verdict.refuse(line, "kind", "unknown kind", file)
            continue
        clean.append((str(values["location"]).strip(), kind, str(values["element"]).strip()))
        lines.append(line)
    if verdict.accepted:
        _dedupe(verdict, clean, lines)


def _csv_rows(data: bytes, file: str | None, wanted: tuple[str, ...],
              verdict: Verdict) -> list[tuple[int, dict[str, str]]] | None:
    """The wanted columns of every kept record with its line, or None after recording the defects that
    stop reading (no header, missing columns)."""
    parsed = parse_csv(data, file)
    verdict.defects.extend(parsed.defects)
    if parsed.names is None:
        return None
    where = _columns(parsed, wanted, verdict, file)
    if where is None:
        return None
    return [(r.line, {c: r.fields[i] for c, i in where.items()}) for r in parsed.records]


def expect_long_csv(data: bytes, file: str | None = None) -> Verdict:
    """Reference outcome of reading a long-format CSV release."""
    verdict = Verdict()
    rows = _csv_rows(data, file, LONG, verdict)
    if rows is not None:
        expect_long_rows(rows, verdict, file)
    if not verdict.accepted:
        verdict.rows, verdict.duplicates, verdict.first_repeat_row = [], 0, None
    return verdict


def expect_truth_csv(data: bytes, file: str | None = None) -> Verdict:
    """Reference outcome of reading a truth CSV: rows are (identified, deidentified) pairs."""
    verdict = Verdict()
    rows = _csv_rows(data, file, TRUTH, verdict)
    if rows is None:
        return verdict
    pairs, lines = [], []
    for line, vals in rows:
        bad = [c for c in TRUTH if not vals[c]]
        for c in bad:
            verdict.refuse(line, c, "empty key", file)
        if not bad:
            pairs.append((vals["identified"], vals["deidentified"]))
            lines.append(line)
    if verdict.accepted:
        _dedupe(verdict, pairs, lines)
    return verdict


# --------------------------------------------------------------------------------------------- Parquet
def parquet_text_columns(path: Path, wanted: Iterable[str], verdict: Verdict) -> list[dict[str, object]] | None:
    """Rows of the wanted columns as text (integers as decimal text, None for null), or None after
    recording the defects (unreadable file, missing/repeated column, a type that is not text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = str(path)
    try:
        table = pq.ParquetFile(path).read()
    except Exception:
        verdict.refuse(None, None, "not Parquet", file)
        return None
    names = [n.strip() for n in table.column_names]
    wanted = list(wanted)
    if any(c not in names for c in wanted):
        verdict.refuse(None, None, "missing column", file)
        return None
    columns = {}
    for c in wanted:
        if names.count(c) > 1:
            verdict.refuse(None, c, "repeated column", file)
            continue
        col = table.column(names.index(c))
        t = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t):
            columns[c] = [None if v is None else str(v) for v in col.to_pylist()]
        elif pa.types.is_integer(t):
            columns[c] = [None if v is None else str(int(v)) for v in col.to_pylist()]
        else:
            verdict.refuse(None, c, f"type {col.type}", file)
    if not verdict.accepted:
        return None
    return [{c: columns[c][i] for c in wanted} for i in range(table.num_rows)]


def expect_long_parquet(path: Path) -> Verdict:
    """Reference outcome of reading a long-format Parquet release (rows numbered from 1)."""
    verdict = Verdict()
    rows = parquet_text_columns(path, LONG, verdict)
    if rows is not None:
        expect_long_rows([(i + 1, r) for i, r in enumerate(rows)], verdict, str(path))
    if not verdict.accepted:
        verdict.rows, verdict.duplicates, verdict.first_repeat_row = [], 0, None
    return verdict


# ---------------------------------------------------------------------------------------------- folders
def expect_folder(root: Path, id_key: list[str] | None, deid_key: list[str] | None) -> Verdict:
    """Reference outcome of a per-location folder release (see ``graphlink.core.release._read_folder``)."""
    verdict = Verdict()
    entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    folders, seen = [], set()
    for p in entries:
        if p.is_symlink() and not p.exists():
            verdict.refuse(None, None, "broken link", str(p))
            continue
        if not p.is_dir():
            continue
        loc = p.name.strip()
        if not loc or loc in seen:
            verdict.refuse(None, None, "bad location name", str(p if not loc else root))
            continue
        seen.add(loc)
        folders.append((loc, p))
    if not folders and verdict.accepted:
        verdict.refuse(None, None, "no location folders", str(root))
    rows: list[tuple] = []
    lines: list[str] = []
    for loc, folder in folders:
        for kind, keys in (("identified", id_key), ("deidentified", deid_key)):
            f = folder / f"{kind}.csv"
            if (f.is_symlink() and not f.exists()) or not f.is_file():
                verdict.refuse(None, None, "missing table", str(f))
                continue
            parsed = parse_csv(f.read_bytes(), str(f))
            verdict.defects.extend(parsed.defects)
            if parsed.names is None or parsed.defects or not parsed.records:
                continue
            cols = keys
            if cols is None:
                if "element" in parsed.names:
                    cols = ["element"]
                elif len(parsed.names) == 1:
                    cols = list(parsed.names)
                else:
                    verdict.refuse(None, None, "which key column", str(f))
                    continue
            if any(c not in parsed.names for c in cols):
                verdict.refuse(None, next(c for c in cols if c not in parsed.names), "missing key column", str(f))
                continue
            where = {}
            for c in cols:
                if parsed.names.count(c) > 1:
                    verdict.refuse(None, c, "repeated column", str(f))
                where[c] = parsed.names.index(c)
            for r in parsed.records:
                parts = [r.fields[where[c]] for c in cols]
                bad = False
                for c, v in zip(cols, parts, strict=True):
                    if not v:
                        verdict.refuse(r.line, c, "empty key", str(f))
                        bad = True
                    elif len(cols) > 1 and SEPARATOR in v:
                        verdict.refuse(r.line, c, "separator in composite key", str(f))
                        bad = True
                if not bad:
                    rows.append((loc, kind, SEPARATOR.join(parts)))
                    lines.append(f"{f} row {r.line}")
    if verdict.accepted and not rows:
        verdict.refuse(None, None, "empty release", str(root))
    if verdict.accepted:
        _dedupe(verdict, rows, lines)
    return verdict
