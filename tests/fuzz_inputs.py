"""Hypothesis strategies for malformed (and well-formed) inputs of every graphlink reader.

Each strategy draws a *logical* table (header + rows from a pool of nasty values), serialises it the many
ways users' tools do (quoting styles, CRLF/CR, spaces after commas, blank lines, BOMs, other encodings),
and sometimes damages the bytes (flips, insertions, truncation, or random bytes outright).  About half of
the draws are well-formed so the acceptance path (and the analyses after it) is exercised too.

Strategies return :class:`FileCase` / :class:`FolderCase` values that know how to write themselves; the
reader table in ``tests/core/test_fuzz_readers.py`` pairs each with its reference oracle and CLI commands.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

#: rich console markup and terminal escapes: graphlink prints user values in rich tables and notes, where
#: these must print as themselves (markup escaped, control characters shown as \x1b ...)
RICH_MARKUP = ["[/bold]", "[red]x", "[link=file:///etc/passwd]x[/link]", "[/]"]
TERMINAL = ["\x1b[2J\x1b[H", "\x1b]8;;http://127.0.0.1:9/\x1b\\hidden\x1b]8;;\x1b\\", "\x9b31m", "\x7f",
            "\u202eevil"]
#: values that have broken CSV readers (and terminals) somewhere: NA-likes, numbers, quotes, separators, line
#: breaks, Unicode line separators and spaces, control characters, the composite-key separator, formulas
NASTY = ["NA", "null", "NaN", "None", "nan", "N/A", "#N/A", "-", "0", "007", "1e3", "1.0", "-1", "TRUE",
         "#comment", "=1+1", "a,b", 'say "hi"', '"quoted"', "line\nbreak", "cr\rcr", "crlf\r\nx", " padded ",
         "\ttab", "\u00a0nbsp\u00a0", "\u2028", "x\u2028y", "é", "Hôpital Saint-Éloi", "日本", "😀", "\x85",
         "a|b", "|", "\x1f", "\x0b", "\x0c", "\\", "'", '"', '""', "\x1b[31mred", "\u200b", "ǅ", "İ",
         *RICH_MARKUP, *TERMINAL]
KIND_OK = ["identified", "deidentified", "De-Identified", "IDENTIFIED", "de_identified", " identified ",
           "Identified", "DEIDENTIFIED", "de-identified"]
KIND_BAD = ["secret", "", " ", "NA", "null", "id", "identifed", "identified!", "de identified", "İdentified"]
LONG = ["location", "kind", "element"]


def rarely(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (hypothesis favours boundary integers, so not ``integers(0, n) == 0``)."""
    return st.sampled_from([False] * (n - 1) + [True])


def examples(default: int) -> int:
    """Examples per property: ``default`` (CI), or ``GRAPHLINK_FUZZ_EXAMPLES`` for a long local run."""
    return int(os.environ.get("GRAPHLINK_FUZZ_EXAMPLES", default))


# ------------------------------------------------------------------------------------------------ values
def nasty_text(max_size: int = 12) -> st.SearchStrategy[str]:
    """A key-like value: usually plain, sometimes one of NASTY, random Unicode, or a huge field."""
    return st.one_of(
        st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,6}", fullmatch=True),
        st.sampled_from(NASTY),
        st.text(max_size=max_size),
        st.integers(-10**6, 10**12).map(str),
        st.builds(lambda n, c: c * n, st.integers(10_000, 300_000), st.sampled_from("xé,\"\n")),
    )


def location_name() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(["H1", "H2", "H3", "H4"]), nasty_text(8))


@dataclass
class Logical:
    """A table before serialisation: header names and rows of values (None = leave the field out)."""

    header: list[str]
    rows: list[list[str | None]]


@st.composite
def model_release(draw: st.DrawFn) -> Logical:
    """A well-formed release that usually satisfies the trail model (deidentified side reserved): a few
    subjects visit a few locations; each location discloses its visitors' names and a subset of their DNA."""
    n_loc = draw(st.integers(1, 4))
    n_sub = draw(st.integers(1, 6))
    keys = draw(st.lists(nasty_text(), min_size=2 * n_sub, max_size=2 * n_sub,
                         unique_by=lambda s: s.strip()).filter(lambda ks: all(k.strip() for k in ks)))
    names, dna = keys[:n_sub], keys[n_sub:]
    locs = draw(st.lists(location_name().filter(lambda s: bool(s.strip())), min_size=n_loc, max_size=n_loc,
                         unique_by=lambda s: s.strip()))
    rows: list[list[str | None]] = []
    for loc in locs:
        visitors = draw(st.lists(st.integers(0, n_sub - 1), min_size=1, max_size=n_sub, unique=True))
        rows += [[loc, draw(st.sampled_from(KIND_OK[:1] + KIND_OK[3:4])), names[v]] for v in visitors]
        shown = draw(st.lists(st.sampled_from(visitors), max_size=len(visitors), unique=True))
        rows += [[loc, "deidentified", dna[v]] for v in shown]
    return Logical(list(LONG), rows)


@st.composite
def random_release(draw: st.DrawFn) -> Logical:
    """Rows of arbitrary (mostly plausible) values: unknown kinds, blanks and NA-likes included."""
    kinds = st.one_of(st.sampled_from(KIND_OK), st.sampled_from(KIND_BAD), nasty_text(6))
    row = st.tuples(location_name(), kinds, nasty_text()).map(list)
    return Logical(list(LONG), draw(st.lists(row, max_size=12)))


@st.composite
def damaged_logical(draw: st.DrawFn, base: st.SearchStrategy[Logical]) -> Logical:
    """Header and row damage: columns missing/repeated/reordered/padded/renamed, extra columns, short and
    long rows, blank and whitespace rows, duplicated rows, blanked keys."""
    t = draw(base)
    header, rows = list(t.header), [list(r) for r in t.rows]
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["dup-row", "blank-key", "short", "long", "blank-row", "ws-row", "commas",
                                   "pad-header", "case-header", "drop-col", "repeat-col", "extra-col",
                                   "reorder", "nasty-key", "ws-key"]))
        i = draw(st.integers(0, max(0, len(rows) - 1)))
        if op == "dup-row" and rows:
            rows.insert(draw(st.integers(0, len(rows))), list(rows[i]))
        elif op in ("blank-key", "nasty-key", "ws-key") and rows and rows[i]:
            j = draw(st.integers(0, len(rows[i]) - 1))
            rows[i][j] = {"blank-key": "", "ws-key": " \t "}.get(op) or draw(st.sampled_from(NASTY))
        elif op == "short" and rows and rows[i]:
            rows[i] = rows[i][:draw(st.integers(0, len(rows[i]) - 1))]
        elif op == "long" and rows:
            rows[i] = rows[i] + draw(st.lists(nasty_text(4), min_size=1, max_size=2))
        elif op == "blank-row":
            rows.insert(i, [])
        elif op == "ws-row":
            rows.insert(i, ["  "])
        elif op == "commas":
            rows.insert(i, [""] * draw(st.integers(2, 5)))
        elif op == "pad-header" and header:
            j = draw(st.integers(0, len(header) - 1))
            header[j] = f" {header[j]}\t"
        elif op == "case-header" and header:
            j = draw(st.integers(0, len(header) - 1))
            header[j] = header[j].upper()
        elif op == "drop-col" and header:
            j = draw(st.integers(0, len(header) - 1))
            header.pop(j)
            rows = [r[:j] + r[j + 1:] for r in rows]
        elif op == "repeat-col" and header:
            j = draw(st.integers(0, len(header) - 1))
            header.append(header[j])
            rows = [r + [r[j] if j < len(r) else ""] for r in rows]
        elif op == "extra-col":
            header.append(draw(st.sampled_from(["note", "", "NA", "element ", "Element", "x,y"])))
            rows = [r + [draw(nasty_text(4))] for r in rows]
        elif op == "reorder" and header:
            order = draw(st.permutations(range(len(header))))
            header = [header[k] for k in order]
            rows = [[r[k] if k < len(r) else "" for k in order] for r in rows]
    return Logical(header, rows)


# ----------------------------------------------------------------------------------------- serialising
@st.composite
def serialise(draw: st.DrawFn, t: Logical, clean: bool = False) -> bytes:
    """CSV bytes for a logical table, written the ways real tools do, maybe re-encoded and damaged
    (``clean``: UTF-8, with or without a byte-order mark, and never damaged)."""
    style = draw(st.sampled_from(["minimal", "all", "nonnumeric", "raw"]))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    space = draw(st.sampled_from(["", "", " ", "\t"]))
    lines = []
    for rec in [t.header, *t.rows]:
        fields = [f for f in rec if f is not None]
        if style == "raw":
            lines.append((","+space).join(fields))
            continue
        buf = io.StringIO()
        quoting = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "nonnumeric": csv.QUOTE_NONNUMERIC}[style]
        csv.writer(buf, quoting=quoting, lineterminator="").writerow(fields)
        lines.append(buf.getvalue().replace(",", "," + space) if space and style == "all" else buf.getvalue())
    lead = draw(st.sampled_from(["", "", "", "\n", " \n\n", ",,\n"]))
    text = lead + end.join(lines) + draw(st.sampled_from([end, "", end + end, end + "  "]))
    if clean:
        return text.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig"])))
    encoding = draw(st.sampled_from(["utf-8"] * 8 + ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "latin-1",
                                                        "cp1252", "utf-32"]))
    data = text.encode(encoding, errors="replace")
    return draw(damage(data))


@st.composite
def damage(draw: st.DrawFn, data: bytes) -> bytes:
    """Usually nothing; sometimes byte flips, insertions (NUL, quotes, invalid UTF-8), or truncation."""
    how = draw(st.sampled_from(["none"] * 6 + ["flip", "insert", "truncate"]))
    if how == "none" or not data:
        return data
    pos = draw(st.integers(0, len(data) - 1))
    if how == "flip":
        return data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
    if how == "insert":
        junk = draw(st.sampled_from([b"\x00", b'"', b"\xff", b"\xe9", b"\xc3", b"\r", b"\n", b",", b"\xef\xbb\xbf"]))
        return data[:pos] + junk + data[pos:]
    return data[:pos]


def csv_bytes(base: st.SearchStrategy[Logical]) -> st.SearchStrategy[bytes]:
    """CSV files from ``base`` tables: damaged or not, plus random bytes and near-empty files."""
    tables = st.one_of(base, damaged_logical(base))
    return st.one_of(
        tables.flatmap(serialise),
        tables.flatmap(serialise),
        tables.flatmap(serialise),
        st.binary(max_size=200),
        st.sampled_from([b"", b"\n", b"   \r\n\t", b"\xef\xbb\xbf", b"location,kind,element",
                         b"location,kind,element\n",
                         b'"', b'location,kind,element\n"H1,identified,x\n', b",,\n,,\n"]),
    )


LONG_CSV = csv_bytes(st.one_of(model_release(), random_release()))


@st.composite
def truth_logical(draw: st.DrawFn) -> Logical:
    pair = st.tuples(nasty_text(), nasty_text()).map(list)
    header = draw(st.sampled_from([["identified", "deidentified"], ["deidentified", "identified", "note"],
                                   ["identified"], ["name", "dna"], ["identified", "identified", "deidentified"]]))
    return Logical(header, draw(st.lists(pair, max_size=8)))


TRUTH_CSV = csv_bytes(truth_logical())


# ---------------------------------------------------------------------------------------------- Parquet
@dataclass
class ParquetCase:
    """A Parquet file as arrays (written with pyarrow) or raw bytes (random or truncated)."""

    names: list[str] = field(default_factory=list)
    columns: list[object] = field(default_factory=list)    # pyarrow arrays
    raw: bytes | None = None

    def write(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.raw is not None:
            path.write_bytes(self.raw)
        else:
            pq.write_table(pa.Table.from_arrays(self.columns, names=self.names), path)


@st.composite
def parquet_column(draw: st.DrawFn, values: list[str | None]) -> object:
    """One column of the right length in a random Arrow type (text most often)."""
    import pyarrow as pa

    kind = draw(st.sampled_from(["string"] * 5 + ["large_string", "dictionary", "int64", "uint8", "float64",
                                                   "bool", "binary", "list", "struct", "null", "timestamp"]))
    n = len(values)
    if kind == "string":
        return pa.array(values, type=pa.string())
    if kind == "large_string":
        return pa.array(values, type=pa.large_string())
    if kind == "dictionary":
        return pa.array(values, type=pa.string()).dictionary_encode()
    if kind in ("int64", "uint8"):
        ints = draw(st.lists(st.one_of(st.none(), st.integers(0, 255)), min_size=n, max_size=n))
        return pa.array(ints, type=pa.int64() if kind == "int64" else pa.uint8())
    if kind == "float64":
        return pa.array(draw(st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), min_size=n, max_size=n)),
                        type=pa.float64())
    if kind == "bool":
        return pa.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if kind == "binary":
        return pa.array([None if v is None else v.encode("utf-8", "replace") for v in values], type=pa.binary())
    if kind == "list":
        return pa.array([[v] if v is not None else None for v in values], type=pa.list_(pa.string()))
    if kind == "struct":
        return pa.array([{"v": v} for v in values], type=pa.struct([("v", pa.string())]))
    if kind == "null":
        return pa.nulls(n)
    return pa.array(draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n)), type=pa.timestamp("s"))


@st.composite
def parquet_case(draw: st.DrawFn) -> ParquetCase:
    how = draw(st.sampled_from(["table"] * 6 + ["random", "truncated"]))
    if how == "random":
        return ParquetCase(raw=draw(st.binary(max_size=300)))
    t = draw(st.one_of(model_release(), random_release(), damaged_logical(st.one_of(model_release(),
                                                                                      random_release()))))
    width = len(t.header)
    rows = [(r + [None] * width)[:width] for r in t.rows]
    cols = []
    for j in range(width):
        values = [r[j] for r in rows]
        if draw(st.integers(0, 9)) == 0:
            values = [None if draw(st.booleans()) else v for v in values]
        cols.append(draw(parquet_column(values)) if draw(st.integers(0, 3)) == 0 else _string_array(values))
    case = ParquetCase(names=list(t.header), columns=cols)
    if how == "truncated":
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "t.parquet"
            case.write(p)
            data = p.read_bytes()
        return ParquetCase(raw=data[:draw(st.integers(0, max(0, len(data) - 1)))])
    return case


def _string_array(values: list[str | None]) -> object:
    import pyarrow as pa

    return pa.array(values, type=pa.string())


# ---------------------------------------------------------------------------------------------- folders
@dataclass
class FolderCase:
    """A per-location folder release: ``tables[(folder, file)] = bytes``, plus odd entries (stray files,
    symbolic links, broken links, link loops) and the key options to pass."""

    tables: dict[tuple[str, str], bytes]
    stray: dict[str, bytes] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)     # (link path, target relative to root)
    id_key: list[str] | None = None
    deid_key: list[str] | None = None

    def write(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        for (folder, name), data in self.tables.items():
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / name).write_bytes(data)
        for name, data in self.stray.items():
            (root / name).write_bytes(data)
        for link, target in self.links:
            p = root / link
            p.parent.mkdir(parents=True, exist_ok=True)
            if not p.exists() and not p.is_symlink():
                p.symlink_to(root / target)


@st.composite
def folder_table(draw: st.DrawFn, header: list[str]) -> bytes:
    """identified.csv / deidentified.csv in the location's own schema: usually clean UTF-8, sometimes
    damaged like any other CSV."""
    rows = draw(st.lists(st.lists(nasty_text(), min_size=len(header), max_size=len(header)), max_size=5))
    table = Logical(header, rows)
    if draw(rarely(3)):
        return draw(serialise(draw(damaged_logical(st.just(table)))))
    return draw(serialise(table, clean=True))


#: per-location table schemas and the key option that names their key (None: found without the option)
ID_SCHEMAS = [(["element"], None), (["name"], None), (["name", "dob"], ["name", "dob"]), (["name", "zip"], ["name"])]
DEID_SCHEMAS = [(["dna"], None), (["element"], None), (["dna", "other"], ["dna"])]
WRONG_KEYS = [["nope"], ["name", "name"], ["element"], ["name", "dob"]]


@st.composite
def folder_case(draw: st.DrawFn) -> FolderCase:
    names = draw(st.lists(st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 _-]{0,7}", fullmatch=True),
                                    st.sampled_from(["H1", "H2", "H3", "Hôpital", "日本"])),
                          min_size=1, max_size=3, unique_by=lambda n: n.strip()))
    if draw(rarely(6)):
        names.append(draw(st.sampled_from(["H1 ", " ", ".hidden", "\t"])))           # odd folder names
    (id_header, id_key), (de_header, de_key) = draw(st.sampled_from(ID_SCHEMAS)), draw(st.sampled_from(DEID_SCHEMAS))
    if draw(rarely(6)):
        id_key = draw(st.sampled_from(WRONG_KEYS))
    if draw(rarely(8)):
        de_key = draw(st.sampled_from([["nope"], ["dna", "dna"]]))
    tables = {}
    for folder in names:
        for role, header in (("identified", id_header), ("deidentified", de_header)):
            if draw(rarely(12)):
                continue                                            # a missing table
            tables[(folder, f"{role}.csv")] = draw(folder_table(header))
    stray = draw(st.dictionaries(st.sampled_from(["README.txt", "H9.csv", "notes.md"]), st.binary(max_size=20),
                                 max_size=1)) if draw(rarely(4)) else {}
    links: list[tuple[str, str]] = []
    if draw(rarely(5)):
        links.append((draw(st.sampled_from(["L-link", "zz-link"])), names[0]))      # a linked location folder
    if draw(rarely(10)):
        links.append(("broken", "does-not-exist"))
    if draw(rarely(10)):
        links.append(("loop", "loop"))
    return FolderCase(tables, stray, links, id_key=id_key, deid_key=de_key)


# -------------------------------------------------------------------------------------------------- zip
@dataclass
class ZipMember:
    name: str
    data: bytes
    symlink: bool = False
    encrypted_flag: bool = False


@st.composite
def zip_upload(draw: st.DrawFn) -> bytes:
    """A zip for the app's upload: a long CSV, location folders (top level or under one folder), nested
    zips, traversal names, symbolic links, encrypted-flagged members, or broken archives."""
    how = draw(st.sampled_from(["long", "folders", "wrapped", "odd"] * 2 + ["random", "truncated", "empty"]))
    if how == "random":
        return draw(st.binary(max_size=300))
    if how == "empty":
        return _zip([])
    members: list[ZipMember] = []
    if how in ("long", "odd"):
        members.append(ZipMember(draw(st.sampled_from(["release.csv", "data/release.csv", "R.CSV"])),
                                 draw(LONG_CSV)))
    if how in ("folders", "wrapped", "odd"):
        case = draw(folder_case())
        prefix = "release/" if how == "wrapped" else ""
        members += [ZipMember(f"{prefix}{folder}/{name}", data) for (folder, name), data in case.tables.items()]
    if how == "odd":
        odd = draw(st.sampled_from(["../evil.csv", "/abs.csv", "a/../../b.csv", "inner.zip", "link",
                                    "__MACOSX/._x", ".DS_Store", "enc.csv", "a" * 300 + ".csv"]))
        if odd == "inner.zip":
            members.append(ZipMember(odd, _zip([ZipMember("r.csv", b"location,kind,element\nH1,identified,x\n")])))
        elif odd == "link":
            members.append(ZipMember("H1/identified.csv", b"/etc/passwd", symlink=True))
        elif odd == "enc.csv":
            members.append(ZipMember(odd, b"secret", encrypted_flag=True))
        else:
            members.append(ZipMember(odd, b"location,kind,element\nH1,identified,x\n"))
    data = _zip(members)
    if how == "truncated":
        return data[:draw(st.integers(0, max(0, len(data) - 1)))]
    return data


def _zip(members: list[ZipMember]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for m in members:
            info = zipfile.ZipInfo(m.name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if m.symlink:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, m.data)
    data = buf.getvalue()
    return flag_encrypted(data) if any(m.encrypted_flag for m in members) else data


def flag_encrypted(data: bytes) -> bytes:
    """The zip with every member marked encrypted (bit 0 of the general-purpose flags in the local and
    central headers); zipfile cannot write encrypted members, and the reader must refuse before reading."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = out.find(signature)
        while start >= 0:
            out[start + offset] |= 0x1
            start = out.find(signature, start + 4)
    return bytes(out)


def zip_bomb(unzipped: int) -> bytes:
    """A small zip whose one member inflates to ``unzipped`` bytes (zeros compress about 1000:1)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf, zf.open("bomb.csv", "w") as out:
        chunk = b"\0" * (1 << 20)
        for _ in range(unzipped // len(chunk)):
            out.write(chunk)
    return buf.getvalue()


# ------------------------------------------------------------------------------------ quasi-identifiers
RACES = ["Asian", "Black", "White", "asian", " Asian", "Other", ""]
ZIPS = ["02138", "02139", "02141", "02142", "2138", "02138 ", "0213*", "99999", ""]


@st.composite
def qi_table(draw: st.DrawFn) -> Logical:
    """A table for ``graphlink qi``: Race and ZIP (the Sweeney Figure 3 hierarchies), maybe a sensitive
    column; values mostly from the hierarchies, sometimes not."""
    header = draw(st.sampled_from([["Race", "ZIP"], ["Race", "ZIP", "disease"], ["ZIP", "Race"], ["Race"]]))
    value = {"Race": st.one_of(st.sampled_from(RACES[:3]), st.sampled_from(RACES), nasty_text(6)),
             "ZIP": st.one_of(st.sampled_from(ZIPS[:4]), st.sampled_from(ZIPS), nasty_text(6)),
             "disease": nasty_text(6)}
    rows = draw(st.lists(st.tuples(*[value[c] for c in header]).map(list), max_size=12))
    return Logical(header, rows)


QI_CSV = csv_bytes(qi_table())


@st.composite
def hierarchy_csv(draw: st.DrawFn) -> bytes:
    """An ARX hierarchy for ZIP (``;``-separated, one row per value, no header): the Sweeney one with rows
    dropped, levels cut or added, values repeated or contradicting, other separators and encodings."""
    rows = [["02138", "0213*", "021**", "*"], ["02139", "0213*", "021**", "*"],
            ["02141", "0214*", "021**", "*"], ["02142", "0214*", "021**", "*"]]
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["drop", "short", "long", "repeat", "contradict", "nasty", "blank"]))
        i = draw(st.integers(0, max(0, len(rows) - 1)))
        if not rows:
            break
        if op == "drop":
            rows.pop(i)
        elif op == "short":
            rows[i] = rows[i][:draw(st.integers(1, 3))]
        elif op == "long":
            rows[i] = rows[i] + ["**"]
        elif op == "repeat":
            rows.append(list(rows[i]))
        elif op == "contradict":
            rows.append([rows[i][0], "9999*", "021**", "*"])
        elif op == "nasty":
            rows[i][draw(st.integers(0, len(rows[i]) - 1))] = draw(nasty_text(6))
        else:
            rows[i] = ["", "", "", ""]
    sep = draw(st.sampled_from([";"] * 4 + [",", "\t"]))
    text = "\n".join(sep.join(r) for r in rows) + draw(st.sampled_from(["\n", ""]))
    encoding = draw(st.sampled_from(["utf-8"] * 5 + ["utf-8-sig", "utf-16", "latin-1"]))
    return draw(damage(text.encode(encoding, errors="replace")))


# ------------------------------------------------------------------------------------ other CLI inputs
@st.composite
def popularity_csv(draw: st.DrawFn) -> bytes:
    """``graphlink simulate --probabilities`` files: p/probability/visitors columns with bad numbers."""
    header = draw(st.sampled_from([["location", "p"], ["p"], ["location", "probability", "withhold"],
                                   ["location", "visitors", "purchasers", "population"], ["location", "visitors"],
                                   ["location", "p", "p"], ["Location", "P"], ["x"]]))
    number = st.one_of(st.floats(0, 1).map(repr), st.sampled_from(["", "NA", "nan", "inf", "-0.1", "1.5", "1e308",
                                                                   "abc", "0", "1", "5", "100", " 0.5 "]),
                       st.integers(-5, 10**6).map(str))
    rows = draw(st.lists(st.lists(st.one_of(number, nasty_text(5)), min_size=len(header), max_size=len(header)),
                         max_size=5))
    for r in rows:
        if header[0].lower() == "location" and draw(st.booleans()):
            r[0] = draw(st.sampled_from(["A", "B", "C", "D"]))
    return draw(serialise(Logical(header, rows)))


#: ALS and plan-file values that broke the readers once: bad prefix lengths, non-numeric levels, NaN
ALS_MAPS = ["year", "month", "lower", "prefix:3", "prefix:0", "prefix:-1", "prefix:x", "prefix:", "prefix: 2",
            "prefix:" + "9" * 5000, "prefix:1e3", "prefix:٣", "upper", ""]
ALS_LEVELS = ["0", "1", "2", "-1", "x", "1.5", "99999999999999999999", "true", "null", "[1]", "{a: 1}", "''"]


def _yaml_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@st.composite
def als_yaml(draw: st.DrawFn) -> bytes:
    """ALS files for the GENPHEN release (``graphlink/data/genphen``): its three relations, mutated (bad maps,
    levels, missing keys, unknown attributes), or hostile YAML: deep nesting, anchors and aliases (a small
    "billion laughs"), tags, huge scalars; sometimes damaged bytes."""
    rels = ["{identified: birthdate, deidentified: age, age_at: '2004-06-01'}",
            "{identified: gender, deidentified: gender}", "{identified: visit_date, deidentified: visit_date}"]
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["map", "level", "missing", "unknown", "age", "drop", "nasty"]))
        if op == "map":
            how = _yaml_str(draw(st.sampled_from(ALS_MAPS)))
            rels.append(f"{{identified: visit_date, deidentified: visit_date, map: {how}}}")
        elif op == "level":
            rels.append("{identified: gender, deidentified: gender, hierarchy: sex.csv, level: "
                        f"{draw(st.sampled_from(ALS_LEVELS))}}}")
        elif op == "missing":
            rels.append("{identified: gender}")
        elif op == "unknown":
            rels.append(f"{{identified: {_yaml_str(draw(nasty_text(6)))}, deidentified: gender}}")
        elif op == "age":
            rels.append(f"{{identified: birthdate, deidentified: age, age_at: {_yaml_str(draw(nasty_text(8)))}}}")
        elif op == "drop" and len(rels) > 1:
            rels.pop(draw(st.integers(0, len(rels) - 1)))
        else:
            rels.append(f"{{identified: gender, deidentified: gender, map: {_yaml_str(draw(nasty_text(8)))}}}")
    text = "relations:\n" + "".join(f"  - {r}\n" for r in rels)
    hostile = draw(st.sampled_from([None] * 6 + ["deep", "laughs", "alias", "tag", "huge", "list", "empty"]))
    if hostile == "deep":
        n = draw(st.sampled_from([40, 1_000, 20_000]))
        text = "relations: " + "[" * n + "]" * n + "\n"
    elif hostile == "laughs":
        text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
            text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        text += "relations: [*i]\n"
    elif hostile == "alias":
        text = "r: &r {identified: gender, deidentified: gender}\nrelations: [*r, *r]\n"
    elif hostile == "tag":
        text = "relations: !!python/object/apply:os.system ['true']\n"
    elif hostile == "huge":
        text = "relations:\n  - {identified: " + "x" * 2_000_000 + ", deidentified: gender}\n"
    elif hostile == "list":
        text = "- relations\n"
    elif hostile == "empty":
        text = ""
    return draw(damage(text.encode("utf-8")))


#: plan-file fields and hostile replacements for them (``float("nan")`` is written as the token NaN)
PLAN_FIELDS = ["format", "version", "table", "qi", "k", "max_suppression", "loss", "l_min", "l_max",
               "discretisation", "seed", "recipients", "hierarchies", "capacity", "clusters", "collusion"]
PLAN_VALUES = ["two", "", -1, 0, 1, 1.5, 10**30, None, True, [], {}, float("nan"), float("inf"), ["R1"],
               {"a": 1}, "x" * 300_000, [[["deep"]]]]


@dataclass
class PlanCase:
    """A fingerprint plan to damage: field operations on a valid plan, then maybe deep nesting or bytes."""

    ops: list[tuple[str, str, object]]       # (drop|set|recipient, field, value)
    deep: int = 0                            # > 0: replace the document by that many nested arrays
    damaged: bytes | None = None             # replace the file by these bytes

    def text(self, plan: dict) -> bytes:
        import copy
        import json

        if self.damaged is not None:
            return self.damaged
        if self.deep:
            return ("[" * self.deep + "]" * self.deep).encode()
        d = copy.deepcopy(plan)
        for op, name, value in self.ops:
            if op == "drop":
                d.pop(name, None)
            elif op == "set":
                d[name] = value
            elif isinstance(d.get("recipients"), list) and d["recipients"] and isinstance(d["recipients"][0], dict):
                d["recipients"][0][name] = value
        return json.dumps(d, allow_nan=True).encode()


@st.composite
def plan_case(draw: st.DrawFn) -> PlanCase:
    ops = []
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["drop", "set", "recipient"]))
        name = draw(st.sampled_from(PLAN_FIELDS if op != "recipient" else
                                    ["name", "levels", "loss", "k", "suppressed_rows", "dm_star"]))
        ops.append((op, name, draw(st.sampled_from(PLAN_VALUES))))
    deep = draw(st.sampled_from([0] * 8 + [3, 5_000, 200_000]))
    damaged = draw(st.one_of(st.none(), st.none(), st.none(), st.binary(max_size=200)))
    return PlanCase(ops, deep, damaged)


BAD_INTS = st.sampled_from(["-1", "0", "1", "2", "3", "abc", "", "1.5", "1e3", "99999999999999999999", "-0", " 3"])
BAD_FLOATS = st.sampled_from(["-0.1", "0", "0.5", "1", "1.5", "nan", "inf", "-inf", "abc", "", "1e-300", "0.3"])


@st.composite
def simulate_args(draw: st.DrawFn) -> list[str]:
    """Option lists for ``graphlink simulate`` mixing bad and tiny valid values (never a large run)."""
    args: list[str] = []
    subjects = draw(st.sampled_from([None, "-1", "0", "1", "7", "40", "abc", "1.5", "10000000000000", ""]))
    if subjects is not None:
        args += ["--subjects", subjects]
    locations = draw(st.sampled_from([None, "-1", "0", "1", "3", "6", "x", "100000000000"]))
    if locations is not None:
        args += ["--locations", locations]
    for opt, values in (("--p", BAD_FLOATS), ("--zipf", BAD_FLOATS), ("--withhold", BAD_FLOATS)):
        if draw(st.integers(0, 2)) == 0:
            args += [opt, draw(values)]
    if draw(st.integers(0, 4)) == 0:
        args += ["--withhold-rates", draw(st.sampled_from(["0.1,0.2", "a,b", "", "2", "0.1,,0.3", "nan,0", ","]))]
    if draw(st.integers(0, 4)) == 0:
        args += ["--repeat", draw(st.sampled_from(["0", "-3", "2", "x", "100000000000"]))]
    if draw(st.integers(0, 4)) == 0:
        args += ["--seed", draw(st.sampled_from(["-1", "0", "7", "x", "1e3", "18446744073709551616"]))]
    if draw(st.integers(0, 4)) == 0:
        args += ["--reserved", draw(st.sampled_from(["identified", "none", "both", ""]))]
    if draw(st.integers(0, 5)) == 0:
        args += ["--households"]
        if draw(st.booleans()):
            args += ["--household-sizes", draw(st.sampled_from(["1,1", "0,0", "-1,2", "a", "", "1.5,2",
                                                                 "100000000000"]))]
    if draw(st.integers(0, 5)) == 0:
        args += ["--population", draw(st.sampled_from(["0", "-5", "10", "x"]))]
    return args


def experiment_args(names: list[str]) -> st.SearchStrategy[list[str]]:
    """``graphlink experiment`` invocations with at least one bad option (none may start a real run)."""
    bad = st.sampled_from([["--runs", "0"], ["--runs", "-2"], ["--runs", "x"], ["--seed", "-1"],
                           ["--seed", "abc"], ["--workers", "0"], ["--workers", "-4"], ["--workers", "x"],
                           ["--out", "@FILE@"], ["--out", "@FILE@/sub"], ["--bogus"], ["--runs"]])
    name = st.one_of(st.sampled_from(names), st.sampled_from(["", "nope", "DEDUP", "../x", "auc;rm"]))
    ok = st.sampled_from([[], ["--small"], ["--runs", "1"], ["--seed", "3"], ["--workers", "1"]])

    def join(t: tuple) -> list[str]:
        name_, bads, oks = t
        given = {opt[0] for opt in bads}        # a valid value after a bad one would override it
        return [name_, *[a for opt in bads + [o for o in oks if not o or o[0] not in given] for a in opt]]

    return st.tuples(name, st.lists(bad, min_size=1, max_size=2), st.lists(ok, max_size=2)).map(join)


CYPHER_FILES = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([
        "MATCH (n) RETURN count(n) AS n;\n",
        "MATCH (n RETURN n;\n",                                  # syntax error
        "// @param k\nMATCH (n) RETURN $k AS k;\n",              # required parameter not given
        "// @param k=[1,\nRETURN $k AS k;\n",                   # bad default
        "RETURN 1 AS a",                                         # no terminating ;
        ";;;\n",
        "",
        "// only a comment\n",
        "RETURN 'unterminated;\n",
        "CREATE (:Fuzz {x: 1});\n",                              # a write in read-only mode
        "RETURN 1 AS a;\nRETURN 2 AS b;\n",
    ]).map(lambda s: s.encode()),
    st.sampled_from(["RETURN 'é' AS e;\n", "RETURN '日本' AS j;\n"]).map(lambda s: s.encode("latin-1", "replace")),
    st.sampled_from(["RETURN 1 AS a;\n"]).map(lambda s: s.encode("utf-16")),
)

#: the methods of ``graphlink reidentify`` with the options each needs
REIDENTIFY_METHODS: list[list[str]] = [["--method", "complete"], ["--method", "incomplete"],
                                       ["--method", "incomplete-k", "--k", "2"], ["--method", "multiple"],
                                       ["--method", "true-loves"]]

Writer = Callable[[Path], list[str]]
