"""The Cypher library (``cypher/*.cypher``): parsing files into named, documented, parameterised statements.

File format (plain Cypher, so the same files run in Neo4j Browser and cypher-shell)::

    // What the query computes ...            <- header comment: the documentation
    // @param release  name of the release     <- required parameter
    // @param k=2  minimum union degree        <- parameter with a default (JSON value, else a string)

    // @name k_unlinkability                   <- optional statement name
    MATCH ... RETURN ...;                      <- a statement ends with a line ending in ';'

Parameters a statement does not use are ignored by Neo4j, so one parameter map serves a whole file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from graphlink.errors import ReleaseError, StoreError
from graphlink.store.server import project_root

_PARAM = re.compile(r"^//\s*@param\s+(\w+)(?:=(\S+))?\s*(.*)$")
_NAME = re.compile(r"^//\s*@name\s+(\S+)")
_USES = re.compile(r"\$(\w+)")


def cypher_dir() -> Path:
    """Folder of the Cypher library (``<project>/cypher``)."""
    return project_root() / "cypher"


def parse_value(text: str):
    """A CLI/param-header value: JSON (numbers, true/false/null, lists, maps, quoted strings), else the raw string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Statement:
    name: str
    text: str

    @property
    def parameters(self) -> list[str]:
        return sorted(set(_USES.findall(self.text)))


@dataclass
class CypherFile:
    path: Path
    doc: str
    params: dict[str, tuple[bool, object, str]] = field(default_factory=dict)  # name -> (has default, value, help)
    statements: list[Statement] = field(default_factory=list)

    def statement(self, name: str) -> Statement:
        for st in self.statements:
            if st.name == name:
                return st
        raise KeyError(f"{self.path.name} has no statement named {name!r}")

    def resolve_params(self, given: dict | None = None) -> dict:
        """Defaults from the header, overridden by ``given``; StoreError naming any missing required parameter."""
        out = {k: v for k, (has, v, _) in self.params.items() if has}
        out.update(given or {})
        used = {p for st in self.statements for p in st.parameters}
        missing = sorted(p for p in used if p not in out)
        if missing:
            helps = "; ".join(f"{p}: {self.params[p][2]}" if p in self.params else p for p in missing)
            raise StoreError(f"{self.path.name} needs parameter(s) {', '.join(missing)} "
                             f"(give each as NAME=VALUE): {helps}")
        return out


def resolve_file(path: str | Path) -> Path:
    """The ``.cypher`` file ``path`` names: the path itself when something exists there (refused, without
    opening it, unless it is a regular file: :func:`graphlink.fileio.check_input`), else (also for a folder) a
    bare name like ``trails`` looked up in the library folder.  StoreError when neither exists.  O(1) system calls."""
    from graphlink.fileio import check_input

    p = Path(path)
    if os.path.lexists(p) and not p.is_dir():     # a folder of that name does not hide the library's file
        return check_input(p)
    cand = cypher_dir() / (p.name if p.suffix == ".cypher" else f"{p.name}.cypher")
    if not cand.is_file():
        raise StoreError(f"no Cypher file {path} (the library is in {cypher_dir()})")
    return check_input(cand)


def load_file(path: str | Path) -> CypherFile:
    """Parse a ``.cypher`` file (a bare name like ``trails`` is looked up in the library folder:
    :func:`resolve_file`).

    Examples
    --------
    A bare name is looked up in the library:

    >>> from graphlink.store.cypherlib import load_file
    >>> query = load_file("trails")
    >>> [s.name for s in query.statements], query.params["release"][0]       # release has no default
    (['trails'], False)
    """
    p = resolve_file(path)
    data = p.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:    # e.g. a file saved as UTF-16 or Latin-1
        line = data[:exc.start].count(b"\n") + 1
        raise ReleaseError(f"byte 0x{data[exc.start]:02x} is not UTF-8; expected a UTF-8 .cypher file", file=str(p),
                           row=line) from None
    return parse_text(text, p)


def parse_text(text: str, path: str | Path = "<query>") -> CypherFile:
    """Split Cypher text into its documentation, ``@param`` declarations and ``;``-terminated statements.

    Examples
    --------
    >>> from graphlink.store.cypherlib import parse_text
    >>> query = parse_text("// Elements of a release.\\n// @param release  its name\\n"
    ...                    "MATCH (e:Element {release: $release}) RETURN e.key;")
    >>> query.doc, list(query.params), query.statements[0].parameters
    ('Elements of a release.', ['release'], ['release'])
    """
    doc_lines: list[str] = []
    params: dict[str, tuple[bool, object, str]] = {}
    statements: list[Statement] = []
    buf: list[str] = []
    name: str | None = None
    in_header = True  # the documentation: comment lines before the first @param/@name/statement
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("//"):
            if m := _PARAM.match(line):
                in_header = False
                has = m.group(2) is not None
                params[m.group(1)] = (has, parse_value(m.group(2)) if has else None, m.group(3).strip())
            elif m := _NAME.match(line):
                in_header = False
                name = m.group(1)
            elif in_header:
                doc_lines.append(line[2:].strip())
            continue
        if not line:
            continue
        in_header = False
        buf.append(raw)
        if line.endswith(";"):
            body = "\n".join(buf).rstrip().rstrip(";").rstrip()
            statements.append(Statement(name or f"statement{len(statements) + 1}", body))
            buf, name = [], None
    if buf:
        statements.append(Statement(name or f"statement{len(statements) + 1}", "\n".join(buf).strip()))
    if not statements:
        raise StoreError(f"{path} contains no Cypher statement")
    return CypherFile(Path(path), "\n".join(doc_lines).strip(), params, statements)


def library() -> list[CypherFile]:
    """Every file of the library, sorted by name (for listings in the CLI and the app).

    Examples
    --------
    No server needed: the library is the project's ``cypher/`` folder, parsed:

    >>> from graphlink.store.cypherlib import library
    >>> "trails" in [f.path.stem for f in library()]
    True
    """
    return [load_file(p) for p in sorted(cypher_dir().glob("*.cypher"))]
