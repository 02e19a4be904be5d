"""The static lock of the Cypher console (graphlink/store/guard.py), without a server.

Hostile queries are refused however they are spelt (case, whitespace, comments, backticks, Unicode spaces:
hypothesis rewrites them; ``\\uXXXX`` escapes anywhere, decoded exactly as Neo4j 5's lexer does, checked here
against Java's rules and, in tests/test_security_console.py, against the server itself); the same text inside a
string literal or a comment is harmless and passes; queries too large or too deeply nested for Neo4j's parser are
refused; every query of the project's own Cypher library passes in the mode it is meant for. The plan check is
fed plans as the driver returns them. The live-server half (plan check, READ session, server settings, time
limit) is tests/test_security_console.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.store import guard
from graphlink.store.cypherlib import library
from graphlink.store.guard import LIMITS, QueryRefusedError, check, check_plan, decode_escapes, tokenize
from tests.hostile_cypher import (
    ACCEPTED,
    ALWAYS_REFUSED,
    ESCAPE_CHARS,
    ESCAPED,
    JAVA_DECODED,
    READ_ONLY_REFUSED,
    READS,
)

ESCAPE_ALPHABET = st.sampled_from(ESCAPE_CHARS)


def _refusal(query: str, write: bool) -> str:
    with pytest.raises(QueryRefusedError) as err:
        check(query, write=write)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("refused")
    return msg


@pytest.mark.parametrize(("query", "needle"), ALWAYS_REFUSED + ESCAPED)
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_refused_in_every_mode(query: str, needle: str, write: bool) -> None:
    assert needle.lower() in _refusal(query, write).lower()


@pytest.mark.parametrize(("query", "needle"), READ_ONLY_REFUSED)
def test_refused_in_read_only_mode(query: str, needle: str) -> None:
    assert needle.lower() in _refusal(query, False).lower()
    check(query, write=True)


@pytest.mark.parametrize("query", ACCEPTED + READS)
def test_ordinary_queries_pass(query: str) -> None:
    check(query, write=False)
    check(query, write=True)


def test_refusal_names_line_and_column() -> None:
    msg = _refusal("MATCH (n)\nWITH n\n   LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", False)
    assert msg.startswith("refused (line 3, column 4): LOAD CSV")
    # positions are those of the text as typed, before its escapes are decoded
    msg = _refusal("RETURN '\\u0041\\u0042' AS x,\n  '\\u0043' AS y UNION CALL db.stats.retrieve('QUERIES')", False)
    assert msg.startswith("refused (line 2, column 28): procedure db.stats.retrieve")


# ---------------------------------------------------------------------------------------------- escapes


@pytest.mark.parametrize(("typed", "read"), JAVA_DECODED)
def test_escapes_decode_as_neo4j_reads_them(typed: str, read: str) -> None:
    assert decode_escapes(typed).text == read


def test_an_escape_cut_short_by_the_end_of_the_text_is_parsed_as_it_is() -> None:
    assert decode_escapes(r"RETURN \u41").text == "RETURN A"   # Java's substring stops at the end


@pytest.mark.parametrize("typed", [r"\u004 ", r"\u 041", r"\u12)", r"\u", r"\uzzzz", "\\u\U0001F600zz"])
def test_invalid_escapes_are_refused_as_neo4j_refuses_them(typed: str) -> None:
    with pytest.raises(QueryRefusedError, match="invalid \\\\u escape"):
        decode_escapes("RETURN 1 AS x" + typed)


def test_decoded_positions_point_at_the_typed_text() -> None:
    typed = "a\\u0042c\\uD83D\\uDE00d"
    dec = decode_escapes(typed)
    assert dec.text == "aBc\U0001F600d" and dec.origin == [0, 1, 7, 8, 20, len(typed)]


# ---------------------------------------------------------------------------------------------- limits
@pytest.mark.parametrize(("query", "what"), [
    ("RETURN " + "(" * (LIMITS.nesting + 1) + "1" + ")" * (LIMITS.nesting + 1), "nested"),
    ("RETURN " + "[" * (LIMITS.nesting + 1) + "]" * (LIMITS.nesting + 1), "nested"),
    ("RETURN " + "CASE WHEN true THEN " * (LIMITS.nesting + 1) + "1" + " END" * (LIMITS.nesting + 1), "nested"),
    ("RETURN " + "EXISTS { MATCH (n) WHERE " * (LIMITS.subqueries + 1) + "true" + " }" * (LIMITS.subqueries + 1),
     "subqueries"),
    ("RETURN " + "NOT " * (LIMITS.chain + 1) + "true", "in a row"),
    ("RETURN 1 + " + "- " * (LIMITS.chain + 1) + "1", "in a row"),
    ("WITH {} AS m RETURN m" + ".a" * (LIMITS.chain + 1), "in a row"),
    ("WITH {} AS m RETURN m" + "['a']" * (LIMITS.chain + 1), "in a row"),
    ("RETURN " + "+".join(["1"] * LIMITS.tokens), "tokens"),
    ("RETURN '" + "x" * LIMITS.chars + "'", "characters"),
])
def test_queries_beyond_the_limits_are_refused(query: str, what: str) -> None:
    assert what in _refusal(query, True)


def test_queries_at_the_limits_pass() -> None:
    n, c = LIMITS.nesting, LIMITS.chain
    for query in ("RETURN " + "(" * n + "1" + ")" * n, "RETURN " + "NOT " * c + "true",
                  "WITH {} AS m RETURN m" + ".a" * c, "WITH {} AS m RETURN m" + ".a" * c + "[0]" * 0,
                  "RETURN " + "+".join(["1"] * (LIMITS.tokens // 2 - 2)),
                  "RETURN " + "EXISTS { MATCH (n) WHERE " * LIMITS.subqueries + "true" + " }" * LIMITS.subqueries,
                  "MATCH (n) RETURN n.a.b.c, [1, 2][0], -1, n.x - -1, NOT NOT true"):
        check(query, write=False)


def test_library_stays_far_below_the_limits() -> None:
    for cf in library():
        for stmt in cf.statements:
            assert len(tokenize(stmt.text)) < LIMITS.tokens // 3, (cf.path.name, stmt.name)


# ---------------------------------------------------------------------------------------------- names
@pytest.mark.parametrize("query", ["RETURN date.truncate('day', date()) AS d", "RETURN toUpper('x') AS u",
                                   "RETURN `date`.truncate('day', date()) AS d",
                                   "RETURN vector.similarity.cosine([1.0], [1.0])", "RETURN apoc.coll.sum([1]) AS s",
                                   "CALL db.labels()", "CALL `db`.labels()", "CALL db.schema.visualization()"])
def test_allowed_names_pass(query: str) -> None:
    check(query, write=False)


@pytest.mark.parametrize("query", ["RETURN apoc.load.json('x')", "RETURN foo.bar(1)", "CALL db.createLabel('X')",
                                   "CALL dbms.components()", "RETURN `apoc.cypher`.runFirstColumnSingle('x', {})",
                                   "CALL db.stats.retrieve('QUERIES')", "RETURN graph.byName('system')"])
def test_other_names_are_refused(query: str) -> None:
    _refusal(query, True)


# ---------------------------------------------------------------------------------------------- the plan check
def _plan(*ops: str, database: str = "neo4j", details: str | None = None) -> dict:
    """A plan as the driver returns it: a chain of operators, the first on top."""
    node: dict | None = None
    for op in reversed(ops):
        args = {"Details": details} if op == "ProcedureCall" and details else {}
        node = {"operatorType": f"{op}@{database}", "args": args, "children": [node] if node else []}
    assert node is not None
    return node


@pytest.mark.parametrize("ops", [("ProduceResults", "Projection", "NodeIndexSeek"),
                                 ("ProduceResults", "Expand(All)", "VarLengthExpand(Into)", "AllNodesScan"),
                                 ("ProduceResults", "DirectedRelationshipIndexSeekByRange"),
                                 ("ProduceResults", "ShowIndexes")])
def test_plan_of_reads_passes(ops: tuple[str, ...]) -> None:
    check_plan(_plan(*ops), write=False, database="neo4j")


@pytest.mark.parametrize(("ops", "write_ok"), [
    (("ProduceResults", "ShowSettings"), False), (("ProduceResults", "ShowTransactions"), False),
    (("ProduceResults", "TerminateTransactions"), False), (("ProduceResults", "LoadCSV"), False),
    (("AdministrationCommand",), False), (("ProduceResults", "SomethingNew"), False),
    (("ProduceResults", "EmptyResult", "Create"), True), (("CreateIndex",), True),
    (("ProduceResults", "Argument", "TransactionApply"), True),
])
def test_plan_outside_the_allowlist_is_refused(ops: tuple[str, ...], write_ok: bool) -> None:
    with pytest.raises(QueryRefusedError, match=ops[-1]):
        check_plan(_plan(*ops), write=False, database="neo4j")
    if write_ok:
        check_plan(_plan(*ops), write=True, database="neo4j")
    else:
        with pytest.raises(QueryRefusedError):
            check_plan(_plan(*ops), write=True, database="neo4j")


def test_plan_procedures_and_databases() -> None:
    ok = "db.labels() :: (label :: STRING)"
    check_plan(_plan("ProduceResults", "ProcedureCall", details=ok), write=False, database="neo4j")
    for details in ("db.stats.retrieve($autostring_0) :: (section :: STRING, data :: MAP)", None):
        with pytest.raises(QueryRefusedError, match="procedure"):
            check_plan(_plan("ProduceResults", "ProcedureCall", details=details), write=True, database="neo4j")
    with pytest.raises(QueryRefusedError, match="database 'system'"):
        check_plan(_plan("ProduceResults", "AllNodesScan", database="system"), write=False, database="neo4j")
    with pytest.raises(QueryRefusedError, match="no plan"):
        check_plan(None, write=False, database="neo4j")
    deep = _plan(*(["ProduceResults"] + ["Apply"] * 5000 + ["Argument"]))   # iterative: no recursion limit
    check_plan(deep, write=False, database="neo4j")


def test_every_allowlisted_procedure_is_read_only() -> None:
    assert all(p.startswith("db.") and not p.startswith(("db.stats", "db.create")) for p in guard.PROCEDURES)


@pytest.mark.parametrize("query", ["RETURN 'open", 'RETURN "open', "RETURN `open", "MATCH (n) /* open"])
def test_unterminated_text_is_refused(query: str) -> None:
    assert "unterminated" in _refusal(query, True)


def test_library_passes_in_its_mode() -> None:
    """The project's own queries: read-only ones pass read-only; schema/load files (``schema``, ``qi_schema``,
    ``fingerprint_load``, …) pass with --write, and the schema files are refused read-only."""
    def role(stem: str) -> str | None:
        return next((w for w in ("schema", "load") if stem == w or stem.endswith("_" + w)), None)

    for cf in library():
        for stmt in cf.statements:
            check(stmt.text, write=True)
            if role(cf.path.stem) is None:
                check(stmt.text, write=False)
        if role(cf.path.stem) == "schema":
            with pytest.raises(QueryRefusedError):
                check(cf.statements[0].text, write=False)


def test_tokenizer_drops_comments_and_keeps_literals() -> None:
    toks = tokenize("MATCH (n) // c1\n/* c2 */ RETURN 'a // b' AS `x /* y */`, $p, $`q r`")
    assert [(t.kind, t.text) for t in toks if t.kind != "punct"] == [
        ("word", "MATCH"), ("word", "n"), ("word", "RETURN"), ("string", "a // b"), ("word", "AS"),
        ("quoted", "x /* y */"), ("param", "p"), ("param", "q r")]


# ---------------------------------------------------------------------------------------------- properties
SEPARATORS = st.lists(st.sampled_from([" ", "\n", "\t", "  ", "/* x */", "/**/", "// c\n", "// c\r", "// c\u2028",
                                       "\u00a0", "\u2003", "\u200b", "\u3000", "\r\n"]),
                      min_size=1, max_size=3).map("".join)


@st.composite
def disguised(draw: st.DrawFn, query: str) -> str:
    """``query`` with random letter case on its words and random whitespace/comments between its tokens."""
    out: list[str] = []
    for tok in tokenize(query):
        text = query[tok.pos:tok.end]
        if tok.kind == "word":
            flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
            text = "".join(c.upper() if f else c.lower() for c, f in zip(text, flips, strict=True))
        out += [draw(SEPARATORS) if out else "", text]
    return "".join(out)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=st.sampled_from(ALWAYS_REFUSED + READ_ONLY_REFUSED))
def test_disguised_hostile_queries_stay_refused(data: st.DataObject, case: tuple[str, str]) -> None:
    query = data.draw(disguised(case[0]))
    with pytest.raises(QueryRefusedError):
        check(query, write=False)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80), case=st.sampled_from(ALWAYS_REFUSED + ESCAPED))
def test_hostile_text_inside_literals_and_comments_is_harmless(text: str, case: tuple[str, str]) -> None:
    # a doubled backslash is no escape, in strings and comments alike (Neo4j decodes \uXXXX in both)
    payload = (case[0] + text).replace("\\", "\\\\")
    check(f"RETURN '{payload.replace(chr(39), chr(92) + chr(39))}' AS s", write=False)
    block = payload.replace("*/", "* /")
    check(f"MATCH (n) /* {block} */ RETURN count(n) AS c", write=False)
    line = "".join(" " if c in "\n\r\x0b\x0c\x85\u2028\u2029" else c for c in payload)
    check(f"MATCH (n) RETURN count(n) AS c // {line}", write=False)




@settings(max_examples=300, deadline=None)
@given(st.lists(ESCAPE_ALPHABET, max_size=24).map("".join))
def test_decoding_is_java_s(text: str) -> None:
    """An independent model of the rule (a backslash not escaped by one before it, then u, then Java's
    parseInt(s, 16) of four units) on random mixes of the characters that matter."""
    expected, i, escaped = [], 0, False
    try:
        while i < len(text):
            if not escaped and text.startswith("\\u", i):
                expected.append(chr(_java_parse_int(text[i + 2:i + 6]) & 0xFFFF))
                i, escaped = i + 6, False
                continue
            escaped = not escaped and text[i] == "\\"
            expected.append(text[i])
            i += 1
    except ValueError:
        with pytest.raises(QueryRefusedError):
            decode_escapes(text)
        return
    assert decode_escapes(text).text == "".join(expected)


def _java_parse_int(s: str) -> int:
    """Java's Integer.parseInt(s, 16) for the characters of ESCAPE_ALPHABET."""
    digits = {"\uff10": 0, "\u0664": 4}
    sign, body = (-1, s[1:]) if s[:1] == "-" else (1, s[1:]) if s[:1] == "+" else (1, s)
    if not body:
        raise ValueError(s)
    value = 0
    for ch in body:
        d = digits.get(ch, int(ch, 16) if ch in "0123456789abcdefABCDEF" else None)
        if d is None:
            raise ValueError(s)
        value = value * 16 + d
    return sign * value
