"""Static checks of analyst Cypher before it reaches the server: the first of three locks on the console.

The read-only console (``graphlink cypher``, the app's Cypher page, ``Store.run_cypher``) is guarded three ways;
any one of them refuses the query (docs/security.md):

1. :func:`check` (this module): a lexer that drops comments and string literals the way Cypher's own lexer does,
   so case, whitespace, comments and backticks cannot hide a keyword or a procedure name, followed by rules on
   the tokens (some in every mode, more when writing is not allowed).
2. The server plans the query with ``EXPLAIN``; anything whose query type is not ``r`` (read) is refused.
3. The query runs in a READ access-mode session, which the server enforces on its own.

Rules that hold in every mode: no ``LOAD CSV`` (it reads files and URLs on the server), no procedure or function
that reads or writes files or URLs or runs Cypher text it is given (``apoc.load.*``, ``apoc.import.*``,
``apoc.export.*``, ``apoc.cypher.*``, ``apoc.periodic.*``, ...; :data:`DENIED_CALLS`), no ``dbms.*`` procedure,
no administration command (users, roles, privileges, databases, ``SHOW TRANSACTIONS``/``SETTINGS``,
``TERMINATE``), no ``USE`` (the console runs on the configured database). Read-only mode also refuses schema
commands (``CREATE``/``DROP INDEX``/``CONSTRAINT``), ``CALL {...} IN TRANSACTIONS`` (it commits on its own) and
procedures outside the ``db.*``/``apoc.*``/``tx.*`` namespaces.

A word is taken as a keyword wherever it stands unquoted outside a property, label, map key or name: a variable
called ``show`` or ``use`` is refused too (quote it in backticks). Refusing too much is the safe side.
Cost: O(length of the query).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphlink.errors import StoreError


class QueryRefusedError(StoreError):
    """The console refused a query before running it (exit 2). ``reason`` is the rule that refused it."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        self.reason = reason
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"refused{where}: {reason}")


@dataclass(frozen=True)
class Token:
    """A lexical token: ``word`` (bare identifier or keyword), ``quoted`` (backticked name), ``string``,
    ``number``, ``param`` (``$name``) or ``punct`` (one character). ``query[pos:end]`` is its source text."""

    kind: str
    text: str
    pos: int
    end: int


_LINE_BREAKS = "\n\r\x0b\x0c\x85\u2028\u2029"


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def tokenize(query: str) -> list[Token]:
    """Split Cypher text into tokens, dropping ``//`` and ``/* */`` comments and whitespace.

    Strings (``'...'``, ``"..."``) honour backslash escapes; backticked names honour doubled backticks.
    Unterminated strings, names or comments raise :class:`QueryRefusedError`. O(len(query)).
    """
    tokens: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):  # ends at any line break (ending early only examines more text)
            i += 2
            while i < n and query[i] not in _LINE_BREAKS:
                i += 1
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            if end < 0:
                raise _refuse(query, i, "unterminated /* comment")
            i = end + 2
        elif ch in "'\"":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" else 1
            if j >= n:
                raise _refuse(query, i, "unterminated string literal")
            tokens.append(Token("string", query[i + 1:j], i, j + 1))
            i = j + 1
        elif ch == "`":
            name, end = _backticked(query, i)
            tokens.append(Token("quoted", name, i, end))
            i = end
        elif ch == "$":
            j = i + 1
            if j < n and query[j] == "`":
                name, j = _backticked(query, j)
            else:
                while j < n and _is_word_char(query[j]):
                    j += 1
                name = query[i + 1:j]
            tokens.append(Token("param", name, i, j))
            i = j
        elif ch.isdigit():  # digits only: a letter glued to a number starts a word, so no keyword hides in it
            j = i
            while j < n and query[j].isdigit():
                j += 1
            tokens.append(Token("number", query[i:j], i, j))
            i = j
        elif _is_word_char(ch):
            j = i
            while j < n and _is_word_char(query[j]):
                j += 1
            tokens.append(Token("word", query[i:j], i, j))
            i = j
        elif ord(ch) > 127:  # Cypher's punctuation is ASCII: anything else separates words, like a space
            i += 1
        else:
            tokens.append(Token("punct", ch, i, i + 1))
            i += 1
    return tokens


def _backticked(query: str, start: int) -> tuple[str, int]:
    """The name in the backticks opening at ``start`` (doubled backticks escape one) and the offset after it."""
    j = start + 1
    while True:
        j = query.find("`", j)
        if j < 0:
            raise _refuse(query, start, "unterminated backticked name")
        if not query.startswith("``", j):
            return query[start + 1:j].replace("``", "`"), j + 1
        j += 2


def _refuse(query: str, pos: int, reason: str) -> QueryRefusedError:
    line = query.count("\n", 0, pos) + 1
    column = pos - (query.rfind("\n", 0, pos) + 1) + 1
    return QueryRefusedError(reason, line, column)


# ---------------------------------------------------------------------------------------------- the rules
#: procedure/function name prefixes refused in every mode: file/URL access, other servers, dynamic Cypher,
#: background jobs, server configuration
DENIED_CALLS = (
    "apoc.load.", "apoc.import.", "apoc.export.", "apoc.cypher.", "apoc.periodic.", "apoc.do.", "apoc.when",
    "apoc.case", "apoc.trigger.", "apoc.systemdb.", "apoc.bolt.", "apoc.dv.", "apoc.custom.", "apoc.log.",
    "apoc.static.", "apoc.config.", "apoc.es.", "apoc.mongo", "apoc.couchbase.", "apoc.redis.", "apoc.jdbc",
    "apoc.model.", "apoc.gephi.", "apoc.ml.", "apoc.spatial.", "apoc.metrics.", "apoc.monitor.", "apoc.warmup.",
    "apoc.uuid.", "apoc.ttl.", "apoc.generate.", "apoc.util.sleep", "apoc.lock.", "apoc.schema.assert",
    "apoc.nlp.", "apoc.s3", "apoc.gcs", "apoc.hdfs", "apoc.arrow.", "apoc.xls", "apoc.couchdb",
    "dbms.", "genai.", "ai.", "gds.",
)
#: procedure namespaces a read-only query may CALL (their write-mode procedures are refused by the plan check)
READ_PROCEDURES = ("db.", "apoc.", "tx.")

_SCHEMA_OBJECTS = {"INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS", "RANGE", "TEXT", "POINT", "LOOKUP",
                   "FULLTEXT", "VECTOR", "BTREE"}
_ADMIN_OBJECTS = {"USER", "USERS", "ROLE", "ROLES", "DATABASE", "DATABASES", "COMPOSITE", "ALIAS", "ALIASES",
                  "SERVER", "SERVERS", "OR"}
_ADMIN_VERBS = {"GRANT", "DENY", "REVOKE", "ALTER", "RENAME", "TERMINATE", "DEALLOCATE", "REALLOCATE",
                "ENABLE", "DRYRUN", "USE"}
# SHOW <modifiers> <listing>: the schema listings are read-only; every other SHOW is administration
_SHOW_LISTINGS = {"INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS", "PROCEDURE", "PROCEDURES", "FUNCTION",
                  "FUNCTIONS"}
_SHOW_MODIFIERS = {"ALL", "RANGE", "TEXT", "POINT", "LOOKUP", "FULLTEXT", "VECTOR", "BTREE", "UNIQUE",
                   "UNIQUENESS", "KEY", "EXIST", "EXISTS", "EXISTENCE", "NODE", "REL", "RELATIONSHIP", "PROPERTY",
                   "TYPE", "BUILT", "IN", "USER", "DEFINED"}
# tokens after which a word is a name (property, label, type, map key, parameter), not a keyword
_NAME_CONTEXT = {".", ":", "|", "&", "!", "$"}


def _is_keyword(tokens: list[Token], i: int) -> bool:
    """``tokens[i]`` is an unquoted word standing where a keyword can (not a property, label or map key)."""
    tok = tokens[i]
    if tok.kind != "word":
        return False
    if i > 0 and tokens[i - 1].kind == "punct" and tokens[i - 1].text in _NAME_CONTEXT:
        return False
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return not (nxt is not None and nxt.kind == "punct" and nxt.text == ":")  # a map key {show: 1}


def _upper(tok: Token | None) -> str:
    return tok.text.upper() if tok is not None and tok.kind == "word" else ""


def _calls(tokens: list[Token]) -> list[tuple[str, Token, bool]]:
    """Every invoked procedure or function: (dotted name, first token, is a CALL).

    A name is parts (bare or backticked; a backticked part may itself contain dots) joined by ``.``; it is an
    invocation when ``(`` follows it or ``CALL`` precedes it.
    """
    out = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        prev = tokens[i - 1] if i else None
        if tok.kind in ("word", "quoted") and not (prev and prev.kind == "punct" and prev.text == "."):
            parts = [tok.text]
            j = i + 1
            while (j + 1 < len(tokens) and tokens[j].kind == "punct" and tokens[j].text == "."
                   and tokens[j + 1].kind in ("word", "quoted")):
                parts.append(tokens[j + 1].text)
                j += 2
            after = tokens[j] if j < len(tokens) else None
            is_call = _upper(prev) == "CALL" and (prev is not None and _is_keyword(tokens, i - 1))
            if is_call or (after is not None and after.kind == "punct" and after.text == "("):
                name = ".".join(p.strip() for p in ".".join(parts).split("."))
                out.append((name, tok, is_call))
            i = j
        else:
            i += 1
    return out


def check(query: str, *, write: bool = False) -> None:
    """Refuse (raise :class:`QueryRefusedError`, one line) what the console must never run; see the module doc.

    ``write=False`` adds the read-only rules. Passing this check is necessary, not sufficient: the caller still
    plans the query with ``EXPLAIN`` and runs it in a READ session. O(len(query)).
    """
    tokens = tokenize(query)

    def refuse(tok: Token, reason: str) -> QueryRefusedError:
        return _refuse(query, tok.pos, reason)

    for i, tok in enumerate(tokens):
        if not _is_keyword(tokens, i):
            continue
        word, nxt = tok.text.upper(), _upper(tokens[i + 1] if i + 1 < len(tokens) else None)
        if word == "LOAD" and nxt == "CSV":
            raise refuse(tok, "LOAD CSV reads files and URLs on the server; load releases with `graphlink load`")
        if word in _ADMIN_VERBS:
            if word == "USE":
                raise refuse(tok, "USE switches database; the console runs on the configured database "
                                  "(quote a variable named `use` in backticks)")
            raise refuse(tok, f"{word} is an administration command; the console does not administer the server")
        if word in ("START", "STOP") and nxt == "DATABASE":
            raise refuse(tok, f"{word} DATABASE is an administration command")
        if word in ("CREATE", "DROP") and nxt in _ADMIN_OBJECTS:
            raise refuse(tok, f"{word} {nxt} is an administration command")
        if word == "SHOW":
            j = i + 1
            while j < len(tokens) and _upper(tokens[j]) in _SHOW_MODIFIERS:
                j += 1
            if _upper(tokens[j] if j < len(tokens) else None) not in _SHOW_LISTINGS:
                what = " ".join(t.text for t in tokens[i:j + 1]).upper()
                raise refuse(tok, f"{what} is an administration command (the console lists only indexes, "
                                  "constraints, procedures and functions)")
        if not write:
            if word in ("CREATE", "DROP") and nxt in _SCHEMA_OBJECTS:
                raise refuse(tok, f"{word} {nxt} changes the schema in read-only mode; pass --write "
                                  "(write=True) to run it")
            if word == "TRANSACTIONS" and i > 0 and _upper(tokens[i - 1]) in ("IN", "CONCURRENT"):
                raise refuse(tok, "CALL {...} IN TRANSACTIONS commits batches on its own; it is refused in "
                                  "read-only mode")

    for name, tok, is_call in _calls(tokens):
        low = name.lower()
        denied = next((p for p in DENIED_CALLS if low.startswith(p) or low == p.rstrip(".")), None)
        if denied:
            raise refuse(tok, f"{name} is refused: the console never calls {denied.rstrip('.')}* "
                              "(file/URL access, dynamic Cypher or server administration)")
        if is_call and not write and not low.startswith(READ_PROCEDURES):
            raise refuse(tok, f"procedure {name} is not one a read-only query may call "
                              f"(only {', '.join(p + '*' for p in READ_PROCEDURES)})")
