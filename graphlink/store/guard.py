"""What the Cypher console may run: checks on the text before it is sent and on the server's plan of it.

The console (``graphlink cypher``, the app's Cypher page, ``Store.run_cypher``/``run_file``) takes analyst-written
Cypher. One code path (:meth:`graphlink.store.neo4j.Store.run_cypher`) runs it behind these locks; any one of them
refuses the query (docs/security.md, "The Cypher console"):

1. :func:`check`, on the text **the server will parse**: Neo4j replaces every ``\\uXXXX`` escape *before* it lexes a
   query, in keywords, names, strings and comments alike (:func:`decode_escapes` does exactly what Neo4j 5's
   ``UnicodeEscapeReplacementReader`` does). The decoded text is split into tokens the way Cypher's lexer does
   (comments, string literals, backticked names), then:

   * size limits (:data:`LIMITS`): very long, deeply nested or long-chained expressions make Neo4j 5.26's parser
     overflow its stack and never answer, or its planner run for minutes without looking at the transaction
     timeout;
   * an **allowlist of invoked names**: a ``CALL`` may name only a procedure of :data:`PROCEDURES`, a function call
     only a built-in function or one of :data:`PLUGIN_FUNCTIONS` (pure APOC helpers);
   * early refusals with a precise reason for what is never run (``LOAD CSV``, administration, ``USE``, other
     ``SHOW`` commands, several statements; schema commands and ``CALL {...} IN TRANSACTIONS`` without ``--write``).
     They only make the message clearer: the allowlists below refuse the same queries.

2. :func:`check_plan`, on the server's own plan (``EXPLAIN``): every operator must be one of :data:`READ_OPERATORS`
   (plus :data:`WRITE_OPERATORS` with ``--write``) on the configured database, and every ``ProcedureCall`` one of
   :data:`PROCEDURES`. Whatever spelling reached the server, this is what it would execute: ``LoadCSV``,
   ``ShowSettings``, ``ShowTransactions``, ``TerminateTransactions``, ``AdministrationCommand@system`` (users,
   roles, databases), ``db.stats.*`` are not on the lists, in any mode.

3. The query then runs in a session of the matching access mode (READ unless ``--write``), which the server
   enforces for writes, under a transaction timeout, and the client gives up when the server has not answered
   shortly after it (``Store.run_cypher``).

Neo4j Community has no role-based access control (``CREATE ROLE``/``GRANT`` are Enterprise features), so the console
cannot run as a less privileged database user: these locks are what keeps it to reading the graph.
Cost: O(length of the query) for :func:`check`, O(plan operators) for :func:`check_plan`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from graphlink.errors import StoreError

#: what runs a write the console refused in read-only mode (the CLI and the app say it with their own controls)
READ_ONLY_REMEDY = "allow writes (write=True) to run it"


class QueryRefusedError(StoreError):
    """The console refused a query before running it (exit 2). ``reason`` is the rule that refused it; a write
    refused in read-only mode (``read_only``) carries a ``store-read-only`` diagnostic."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None, *,
                 read_only: bool = False) -> None:
        from graphlink.diagnostics import Diagnostic

        where = f" (line {line}, column {column})" if line is not None else ""
        self.reason = f"{reason}; {READ_ONLY_REMEDY}" if read_only else reason
        diagnostic = Diagnostic("store-read-only", f"refused{where}: {reason}", {"line": line, "column": column},
                                remedy=READ_ONLY_REMEDY) if read_only else None
        super().__init__(f"refused{where}: {self.reason}", diagnostic=diagnostic)


# ---------------------------------------------------------------------------------------------- escapes
@dataclass(frozen=True)
class Decoded:
    """A query after Neo4j's ``\\uXXXX`` replacement: ``text`` and, per character of it, the index in the original
    text where it came from (``origin``; one more entry for the end)."""

    text: str
    origin: list[int]


def _java_hex_digit(unit: int) -> int:
    """``Character.digit(unit, 16)`` of Java for one UTF-16 code unit: ASCII and full-width Latin letters a-f,
    and any Unicode decimal digit (general category Nd); -1 otherwise."""
    if 0x30 <= unit <= 0x39:
        return unit - 0x30
    for base in (0x41, 0x61, 0xFF21, 0xFF41):  # A, a, full-width A, full-width a
        if base <= unit < base + 6:
            return 10 + unit - base
    if 0xD800 <= unit <= 0xDFFF:
        return -1
    ch = chr(unit)
    return unicodedata.decimal(ch, -1) if unicodedata.category(ch) == "Nd" else -1


def _java_parse_hex(units: list[int]) -> int | None:
    """``Integer.parseInt(s, 16)`` of Java (a leading ``+`` or ``-`` is allowed), or None where Java throws."""
    if not units:
        return None
    sign, start = 1, 0
    if units[0] in (0x2B, 0x2D):  # '+', '-'
        if len(units) == 1:
            return None
        sign, start = (-1 if units[0] == 0x2D else 1), 1
    value = 0
    for unit in units[start:]:
        digit = _java_hex_digit(unit)
        if digit < 0:
            return None
        value = value * 16 + digit
    return sign * value


def decode_escapes(query: str) -> Decoded:
    """Replace ``\\uXXXX`` escapes exactly as Neo4j 5 does before lexing (``UnicodeEscapeReplacementReader``).

    Rules, on UTF-16 code units as Java sees them: a backslash that is not itself escaped by the backslash before
    it, followed by ``u``, takes the next four units (fewer at the end of the text) as a hexadecimal number in
    Java's ``Integer.parseInt(s, 16)`` syntax (so ``+``/``-`` signs, full-width and other Unicode decimal digits
    count) and becomes that code unit; the six units are consumed. A backslash produced by an escape does not
    escape the next character. Only lowercase ``u``; ``\\\\u0041`` stays as it is. Where Neo4j fails ("expected four
    hexadecimal digits") this raises :class:`QueryRefusedError`. O(len(query)).
    """
    if "\\" not in query:
        return Decoded(query, list(range(len(query) + 1)))
    raw = query.encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]
    unit_origin: list[int] = []  # code-point index in `query` of every UTF-16 unit
    for index, ch in enumerate(query):
        unit_origin += [index] * (2 if ord(ch) > 0xFFFF else 1)
    unit_origin.append(len(query))
    out: list[int] = []
    out_origin: list[int] = []
    escaped = False
    pos, end = 0, len(units)
    while pos < end:
        unit = units[pos]
        replacement = not escaped and unit == 0x5C and pos + 1 < end and units[pos + 1] == 0x75
        if replacement:
            value = _java_parse_hex(units[pos + 2:pos + 6])
            if value is None:
                raise _refuse_at(query, unit_origin[min(pos + 2, end)],
                                 "invalid \\u escape: expected four hexadecimal digits")
            unit = value & 0xFFFF
        escaped = not escaped and not replacement and unit == 0x5C
        out.append(unit)
        out_origin.append(unit_origin[pos])
        pos += 6 if replacement else 1
    text = b"".join(u.to_bytes(2, "little") for u in out).decode("utf-16-le", "surrogatepass")
    origin: list[int] = []  # per code point of `text`: the origin of its first unit
    i = 0
    while i < len(out):
        origin.append(out_origin[i])
        pair = 0xD800 <= out[i] <= 0xDBFF and i + 1 < len(out) and 0xDC00 <= out[i + 1] <= 0xDFFF
        i += 2 if pair else 1
    origin.append(len(query))
    return Decoded(text, origin)


# ---------------------------------------------------------------------------------------------- tokens
@dataclass(frozen=True)
class Token:
    """A lexical token: ``word`` (bare identifier or keyword), ``quoted`` (backticked name), ``string``,
    ``number``, ``param`` (``$name``) or ``punct`` (one character). ``text[pos:end]`` is its source text."""

    kind: str
    text: str
    pos: int
    end: int


# Neo4j ends a // comment at \r or \n only; ending it at more line breaks shows this check more text, never less
_LINE_BREAKS = "\n\r\x0b\x0c\x85\u2028\u2029"


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def tokenize(query: str) -> list[Token]:
    """Split (decoded) Cypher text into tokens, dropping ``//`` and ``/* */`` comments and whitespace.

    Strings (``'...'``, ``"..."``) honour backslash escapes; backticked names honour doubled backticks.
    Unterminated strings, names or comments raise :class:`QueryRefusedError`. O(len(query)).
    """
    tokens: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):
            i += 2
            while i < n and query[i] not in _LINE_BREAKS:
                i += 1
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            if end < 0:
                raise _refuse_at(query, i, "unterminated /* comment")
            i = end + 2
        elif ch in "'\"":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" else 1
            if j >= n:
                raise _refuse_at(query, i, "unterminated string literal")
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
            raise _refuse_at(query, start, "unterminated backticked name")
        if not query.startswith("``", j):
            return query[start + 1:j].replace("``", "`"), j + 1
        j += 2


def _refuse_at(query: str, pos: int, reason: str, read_only: bool = False) -> QueryRefusedError:
    line = query.count("\n", 0, pos) + 1
    column = pos - (query.rfind("\n", 0, pos) + 1) + 1
    return QueryRefusedError(reason, line, column, read_only=read_only)


# ---------------------------------------------------------------------------------------------- allowlists
#: procedures a console query may CALL, in either mode: the schema listings and the index queries (all READ mode
#: in Neo4j 5.26). Everything else is refused: ``db.stats.*`` (other sessions' query texts), ``db.clearQueryCaches``,
#: every ``dbms.*``, every plugin procedure.
PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys",
    "db.schema.visualization", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
    "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes", "db.index.vector.queryRelationships",
})
_PROCEDURES_LOWER = {p.lower(): p for p in PROCEDURES}
#: built-in functions that have a namespace (Neo4j 5.26, ``SHOW FUNCTIONS``; a live test keeps this list honest).
#: Functions without a namespace are always built-in: Neo4j refuses to register a plugin function in the root
#: namespace.
BUILTIN_FUNCTIONS = frozenset({
    "date.realtime", "date.statement", "date.transaction", "date.truncate",
    "datetime.fromepoch", "datetime.fromepochmillis", "datetime.realtime", "datetime.statement",
    "datetime.transaction", "datetime.truncate",
    "duration.between", "duration.indays", "duration.inmonths", "duration.inseconds",
    "localdatetime.realtime", "localdatetime.statement", "localdatetime.transaction", "localdatetime.truncate",
    "localtime.realtime", "localtime.statement", "localtime.transaction", "localtime.truncate",
    "time.realtime", "time.statement", "time.transaction", "time.truncate",
    "point.distance", "point.withinbbox",
    "vector.similarity.cosine", "vector.similarity.euclidean",
})
#: plugin function namespaces allowed where a server has them (the project's own server loads none): APOC's pure
#: helpers on values, which read no file, URL or other session and run no Cypher text
PLUGIN_FUNCTIONS = ("apoc.coll.", "apoc.map.", "apoc.text.", "apoc.math.", "apoc.number.", "apoc.bitwise.",
                    "apoc.agg.", "apoc.date.", "apoc.temporal.", "apoc.label.", "apoc.node.", "apoc.rel.",
                    "apoc.any.", "apoc.scoring.", "apoc.hashing.")

#: plan operators a read-only console query may use (Neo4j 5.26 names, without the ``@database`` suffix)
READ_OPERATORS = frozenset({
    "ProduceResults", "EmptyResult", "Argument", "ArgumentTracker", "EmptyRow",
    "AllNodesScan", "NodeByLabelScan", "NodeByIdSeek", "NodeByElementIdSeek", "NodeIndexScan",
    "NodeIndexContainsScan", "NodeIndexEndsWithScan", "MultiNodeIndexSeek", "AssertingMultiNodeIndexSeek",
    "AssertingMultiRelationshipIndexSeek", "MultiNodeIndexSeek(Locking)", "AssertingMultiNodeIndexSeek(Locking)",
    "IntersectionNodeByLabelsScan", "SubtractionNodeByLabelsScan",
    "UnionNodeByLabelsScan", "NodeCountFromCountStore", "RelationshipCountFromCountStore",
    "Apply", "SemiApply", "AntiSemiApply", "LetSemiApply", "LetAntiSemiApply", "SelectOrSemiApply",
    "SelectOrAntiSemiApply", "LetSelectOrSemiApply", "LetSelectOrAntiSemiApply", "ConditionalApply",
    "AntiConditionalApply", "RollUpApply", "Anti", "Optional", "CartesianProduct", "NodeHashJoin",
    "ValueHashJoin", "NodeLeftOuterHashJoin", "NodeRightOuterHashJoin", "TriadicSelection", "TriadicBuild",
    "TriadicFilter", "ProjectEndpoints", "ShortestPath", "Repeat(Trail)", "Repeat(Walk)",
    "BidirectionalRepeat(Trail)", "NullifyMetadata", "PathPropagatingBFS",
    "Filter", "Projection", "CacheProperties", "Limit", "ExhaustiveLimit", "Skip", "Sort", "PartialSort", "Top",
    "PartialTop", "Distinct", "OrderedDistinct", "EagerAggregation", "OrderedAggregation", "Eager", "Union",
    "OrderedUnion", "Unwind", "AssertSameNode", "AssertSameRelationship", "PreserveOrder",
    "ProcedureCall", "ShowIndexes", "ShowConstraints", "ShowProcedures", "ShowFunctions",
})
#: operator families whose names carry a mode: index seeks, relationship scans and seeks, expands, shortest paths
_READ_OPERATOR_FAMILIES = re.compile(
    r"(Node|(Directed|Undirected)Relationship)(Unique)?IndexSeek(ByRange)?(\(Locking\))?"
    r"|(Directed|Undirected)(RelationshipIndex(Scan|ContainsScan|EndsWithScan)|RelationshipTypeScan"
    r"|UnionRelationshipTypesScan|AllRelationshipsScan|RelationshipBy(Id|ElementId)Seek)"
    r"|(Optional)?Expand\((All|Into)\)|(BFSPruning)?VarLengthExpand\((All|Into|Pruning)\)"
    r"|StatefulShortestPath\((All|Into)\)")
#: operators ``--write`` adds: data changes, schema (indexes, constraints) and CALL {...} IN TRANSACTIONS
WRITE_OPERATORS = frozenset({
    "Create", "Merge", "LockingMerge", "Delete", "DetachDelete", "SetLabels", "RemoveLabels", "SetProperty",
    "SetProperties", "SetPropertiesFromMap", "SetNodePropertiesFromMap", "SetRelationshipPropertiesFromMap",
    "SetNodeProperty", "SetRelationshipProperty", "SetNodeProperties", "SetRelationshipProperties",
    "SetDynamicProperty", "Foreach", "SubqueryForeach", "TransactionApply", "TransactionForeach",
    "CreateIndex", "CreateConstraint", "DropIndex", "DropConstraint", "DoNothingIfExists(INDEX)",
    "DoNothingIfExists(CONSTRAINT)",
})


@dataclass(frozen=True)
class Limits:
    """Bounds on a console query (see the module doc; the figures are in docs/security.md).

    ``chars``/``tokens``: its size; ``nesting``: brackets ``( [ {`` and ``CASE ... END`` inside each other;
    ``subqueries``: ``{ }`` subqueries (``CALL``, ``EXISTS``, ``COUNT``, ``COLLECT``) inside each other;
    ``chain``: prefix operators (``NOT``, unary ``+``/``-``) or postfix accesses (``.key``, ``[i]``) in a row.
    """

    chars: int = 64_000
    tokens: int = 3_000
    nesting: int = 40
    subqueries: int = 4
    chain: int = 40


LIMITS = Limits()


# ---------------------------------------------------------------------------------------------- the static check
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
_OPEN, _CLOSE = "([{", ")]}"
_SUBQUERY_HEADS = {"CALL", "EXISTS", "COUNT", "COLLECT"}


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


def _punct(tok: Token | None, chars: str) -> bool:
    return tok is not None and tok.kind == "punct" and tok.text in chars


def _calls(tokens: list[Token]) -> Iterator[tuple[str, Token, bool]]:
    """Every invoked procedure or function: (dotted name, first token, is a CALL).

    A name is parts (bare or backticked; a backticked part may itself contain dots) joined by ``.``; it is an
    invocation when ``(`` follows it or ``CALL`` precedes it.
    """
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        prev = tokens[i - 1] if i else None
        if tok.kind in ("word", "quoted") and not _punct(prev, "."):
            parts = [tok.text]
            j = i + 1
            while j + 1 < len(tokens) and _punct(tokens[j], ".") and tokens[j + 1].kind in ("word", "quoted"):
                parts.append(tokens[j + 1].text)
                j += 2
            after = tokens[j] if j < len(tokens) else None
            is_call = _upper(prev) == "CALL" and _is_keyword(tokens, i - 1)
            if is_call or _punct(after, "("):
                yield ".".join(p.strip() for p in ".".join(parts).split(".")), tok, is_call
            i = j
        else:
            i += 1


def _value_end(tok: Token | None) -> bool:
    """``tok`` can end an operand (so ``[`` after it indexes, ``.`` accesses a key, ``-`` subtracts)."""
    return tok is not None and (tok.kind in ("word", "quoted", "param", "number", "string")
                                or _punct(tok, ")]}"))


def _check_limits(text: str, tokens: list[Token], limits: Limits) -> None:
    """Refuse what Neo4j cannot plan safely (stack overflow, planning that ignores the timeout). O(tokens)."""
    def refuse(tok: Token, what: str, limit: int) -> QueryRefusedError:
        return _refuse_at(text, tok.pos, f"{what} (the console's limit is {limit}); split the query or simplify it")

    if len(tokens) > limits.tokens:
        raise refuse(tokens[limits.tokens], f"the query has more than {limits.tokens:,} tokens", limits.tokens)
    stack: list[tuple[bool, int]] = []  # per open bracket or CASE: (a subquery body?, postfix run before it)
    subqueries = prefix = postfix = 0
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        word = _upper(tok) if _is_keyword(tokens, i) else ""
        if _punct(tok, _OPEN) or word == "CASE":
            body = tok.text == "{" and (_upper(prev) in _SUBQUERY_HEADS or _punct(prev, ")"))
            index = tok.text == "[" and _value_end(prev)  # x[0]: one more access in a postfix run
            stack.append((body, postfix + 1 if index else 0))
            subqueries += body
            if len(stack) > limits.nesting:
                raise refuse(tok, f"brackets and CASE expressions are nested more than {limits.nesting} deep",
                             limits.nesting)
            if subqueries > limits.subqueries:
                raise refuse(tok, f"subqueries are nested more than {limits.subqueries} deep", limits.subqueries)
            prefix = postfix = 0
            continue
        if _punct(tok, _CLOSE) or word == "END":
            body, postfix = stack.pop() if stack else (False, 0)
            subqueries -= body
            prefix = 0
        elif _punct(tok, ".") and _value_end(prev):
            postfix += 1
        elif not (tok.kind in ("word", "quoted") and _punct(prev, ".")):  # the key after a '.' continues a run
            postfix = 0
        if word == "NOT" or (_punct(tok, "+-") and not _value_end(prev)):
            prefix += 1
        elif not _punct(tok, _CLOSE):
            prefix = 0
        if max(prefix, postfix) > limits.chain:
            raise refuse(tok, f"more than {limits.chain} operators or property accesses in a row", limits.chain)


def check(query: str, *, write: bool = False, limits: Limits = LIMITS) -> None:
    """Refuse (raise :class:`QueryRefusedError`, one line) what the console must never run; see the module doc.

    ``query`` is checked as the server will read it (after :func:`decode_escapes`); positions in refusals are
    those of the original text. ``write=False`` adds the read-only rules. Passing this check is necessary, not
    sufficient: the caller still plans the query with ``EXPLAIN`` (:func:`check_plan`) and runs it in a session of
    the matching access mode. O(len(query)).
    """
    if len(query) > limits.chars:
        raise QueryRefusedError(f"the query has {len(query):,} characters (the console's limit is "
                                f"{limits.chars:,}); split the query or simplify it")
    decoded = decode_escapes(query)
    text = decoded.text
    try:
        tokens = tokenize(text)
        _check_text(text, tokens, write, limits)
    except QueryRefusedError as exc:
        raise _at_origin(exc, text, query, decoded) from None


def _at_origin(exc: QueryRefusedError, text: str, query: str, decoded: Decoded) -> QueryRefusedError:
    """The same refusal with its position moved from the decoded text to the original one."""
    line, column = _position(str(exc))
    if text == query or line is None or column is None:
        return exc
    pos = _offset(text, line, column)
    return _refuse_at(query, decoded.origin[min(pos, len(decoded.origin) - 1)], exc.reason)


def _position(message: str) -> tuple[int | None, int | None]:
    m = re.match(r"refused \(line (\d+), column (\d+)\)", message)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def _offset(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _check_text(text: str, tokens: list[Token], write: bool, limits: Limits) -> None:
    def refuse(tok: Token, reason: str) -> QueryRefusedError:
        return _refuse_at(text, tok.pos, reason)

    _check_limits(text, tokens, limits)
    for i, tok in enumerate(tokens):
        if _punct(tok, ";") and i < len(tokens) - 1:
            raise refuse(tok, "one statement at a time: put each statement on lines of its own, ending in ';'")
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
                raise _refuse_at(text, tok.pos, f"{word} {nxt} changes the schema in read-only mode", True)
            if word == "TRANSACTIONS" and i > 0 and _upper(tokens[i - 1]) in ("IN", "CONCURRENT"):
                raise refuse(tok, "CALL {...} IN TRANSACTIONS commits batches on its own; it is refused in "
                                  "read-only mode")

    _check_ranges(text, tokens)
    for name, tok, is_call in _calls(tokens):
        low = name.lower()
        if is_call:
            if low not in _PROCEDURES_LOWER:
                raise refuse(tok, f"procedure {name} is not one the console runs (it runs only "
                                  f"{', '.join(sorted(PROCEDURES))})")
        elif "." in low and low not in BUILTIN_FUNCTIONS and not low.startswith(PLUGIN_FUNCTIONS):
            raise refuse(tok, f"function {name} is not one the console runs (built-in functions and "
                              f"{', '.join(p + '*' for p in PLUGIN_FUNCTIONS[:3])}, ... only)")


#: most values all ``range()`` calls outside ``UNWIND`` may give together (their product: they may nest)
RANGE_VALUES_MAX = 100_000
_INTEGER = re.compile(r"-?[0-9]+")


def _check_ranges(text: str, tokens: list[Token]) -> None:
    """Refuse ``range()`` inside an expression unless its bounds are whole-number literals and all such ranges
    together (their product, since they may nest) give at most :data:`RANGE_VALUES_MAX` values.

    Why: Neo4j 5.26 looks at the transaction timeout and the memory limits between rows, never while it evaluates
    one expression. ``reduce(s = 0, x IN range(1, 3000000000) | s + x)`` kept a server core busy long after its
    time limit, and ``[x IN range(1, 100000000) | x]`` filled the heap untracked until the server stopped
    answering. ``UNWIND range(...)`` makes rows, where both limits apply, so it is left alone.
    O(len(tokens))."""
    product = 1
    for i, tok in enumerate(tokens):
        if (tok.kind != "word" or tok.text.lower() != "range" or i + 1 >= len(tokens)
                or not _punct(tokens[i + 1], "(") or (i and _punct(tokens[i - 1], "."))):
            continue
        if i and _upper(tokens[i - 1]) == "UNWIND":
            continue
        args: list[str] = [""]
        depth, j = 0, i + 1
        while j < len(tokens):
            t = tokens[j]
            if _punct(t, _OPEN):
                depth += 1
                if depth == 1:
                    j += 1
                    continue
            elif _punct(t, _CLOSE):
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and _punct(t, ","):
                args.append("")
            else:
                args[-1] += t.text
            j += 1
        bounds = [int(a) for a in args if _INTEGER.fullmatch(a)]
        why = ("range() inside an expression is evaluated without the time and memory limits (Neo4j checks them "
               "between rows); use UNWIND range(...) to make rows, or give it whole-number literal bounds")
        if len(bounds) != len(args) or len(args) not in (2, 3) or (len(args) == 3 and bounds[2] == 0):
            raise _refuse_at(text, tok.pos, why)
        step = bounds[2] if len(args) == 3 else 1
        product *= max(0, (bounds[1] - bounds[0]) // step + 1)
        if product > RANGE_VALUES_MAX:
            raise _refuse_at(text, tok.pos, f"{why} spanning at most {RANGE_VALUES_MAX:,} values in all "
                                            f"(this query's ranges give {product:,})")


# ---------------------------------------------------------------------------------------------- the plan check
def operators(plan: dict | None) -> Iterator[tuple[str, str, str | None]]:
    """Every operator of a plan as the Python driver returns it (``summary.plan``): (name, database, details).
    Iterative, so a deep plan does not exhaust Python's recursion limit."""
    stack = [plan] if plan else []
    while stack:
        node = stack.pop()
        name, _, database = str(node.get("operatorType", "")).partition("@")
        details = (node.get("args") or node.get("arguments") or {}).get("Details")
        yield name, database, None if details is None else str(details)
        stack.extend(node.get("children") or [])


def _operator_allowed(name: str, write: bool) -> bool:
    return (name in READ_OPERATORS or _READ_OPERATOR_FAMILIES.fullmatch(name) is not None
            or (write and name in WRITE_OPERATORS))


def check_plan(plan: dict | None, *, write: bool, database: str) -> None:
    """Refuse a query whose ``EXPLAIN`` plan uses an operator outside the allowlists or runs on another database.

    ``plan`` is ``ResultSummary.plan`` of ``EXPLAIN <query>``. Every operator must be one of
    :data:`READ_OPERATORS` (or of their families: index seeks, expands, ...), or of :data:`WRITE_OPERATORS` when
    ``write``; every operator must run on ``database``; every ``ProcedureCall`` must call one of
    :data:`PROCEDURES` (its name is the start of the operator's details, as the server prints it).
    O(operators).
    """
    if not plan:
        raise QueryRefusedError("the server gave no plan for this query, so the console does not run it")
    for name, db, details in operators(plan):
        if db != database:
            raise QueryRefusedError(f"the server's plan runs {name} on database {db or '?'!r}; the console runs "
                                    f"only on {database!r}")
        if not _operator_allowed(name, write):
            what = "with writes allowed either" if name not in WRITE_OPERATORS and write else (
                "in read-only mode" if name in WRITE_OPERATORS else "in any mode")
            raise QueryRefusedError(f"the server's plan uses {name}, which the console does not run {what}",
                                    read_only=name in WRITE_OPERATORS and not write)
        if name == "ProcedureCall":
            called = (details or "").split("(", 1)[0].strip()
            if called.lower() not in _PROCEDURES_LOWER:
                raise QueryRefusedError(f"the server's plan calls procedure {called or '?'}, which the console "
                                        f"does not run (it runs only {', '.join(sorted(PROCEDURES))})")
