"""The static lock of the Cypher console (graphlink/store/guard.py), without a server: Neo4j's own parser in the
console's Java worker (docker/local/CypherCheck.java, on the local runtime's class path).

Hostile queries are refused however they are spelt (case, whitespace, comments, backticks, Unicode spaces:
hypothesis rewrites them; ``\\uXXXX`` escapes anywhere, read by the parser itself); the comment that an escaped
Unicode line break did not end (the reported bypass) hides nothing; the same text inside a string literal or a
comment is harmless and passes; queries too large or too deeply nested are refused; every query of the project's
own Cypher library passes in the mode it is meant for. The plan check is fed plans as the driver returns them.
The live-server half (plan check, READ session, server settings, time limit, the differential test of the
parser against the server) is tests/store/test_security_console.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.store import guard
from graphlink.store.cypherlib import library
from graphlink.store.guard import LIMITS, QueryRefusedError, check, check_plan, read
from tests.hostile_cypher import (
    ACCEPTED,
    ALWAYS_REFUSED,
    COMMENT_BYPASSES,
    ESCAPED,
    READ_ONLY_REFUSED,
    READS,
)


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
    # positions are those of the text as typed, escapes and all
    msg = _refusal("RETURN '\\u0041\\u0042' AS x,\n  '\\u0043' AS y UNION CALL db.stats.retrieve('QUERIES')", False)
    assert msg.startswith("refused (line 2, column 23): procedure db.stats.retrieve")   # its CALL
    assert _refusal("RETURN 'open", False).startswith("refused (line 1, column 8): Neo4j cannot parse it")


# ---------------------------------------------------------------------------------------------- the reported bypass
@pytest.mark.parametrize(("query", "needle"), COMMENT_BYPASSES)
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_a_comment_neo4j_does_not_end_hides_nothing(query: str, needle: str, write: bool) -> None:
    """``// x\\u2028 "`` then, on the next line, ``, <payload> AS b //"``: Neo4j ends a ``//`` comment only at
    ``\\n`` or ``\\r``, so the quote is commented out and the payload is code. The first console ended the comment
    at the escaped (or raw) Unicode line break, read a string hiding the next line, and let the payload through;
    Neo4j's own parser sees it."""
    assert needle in _refusal(query, write)


def test_the_parser_reads_the_payload_line_as_code() -> None:
    facts = read("RETURN 1 AS a // x\\u2028 \"\n, toUpper('x') AS b //\"")
    assert [name for name, _ in facts.functions] == ["toUpper"]
    facts = read("RETURN 1 AS a // x\n, toUpper('x') AS b")
    assert [name for name, _ in facts.functions] == ["toUpper"]
    assert read("RETURN 1 AS a // toUpper('x')").functions == ()


def test_without_the_parser_every_query_is_refused(monkeypatch, tmp_path) -> None:
    """No runtime (no worker class): one line naming the set-up script, never a fallback reading."""
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(tmp_path))
    from graphlink.config import config_context

    worker = guard.ParserWorker()
    monkeypatch.setattr(guard, "WORKER", worker)
    with config_context(neo4j_dir=str(tmp_path)), pytest.raises(QueryRefusedError, match="setup-neo4j.sh"):
        check("RETURN 1 AS one")


def test_a_stuck_or_dead_worker_is_replaced(monkeypatch) -> None:
    worker = guard.ParserWorker()
    monkeypatch.setattr(guard, "WORKER", worker)
    check("RETURN 1 AS one")
    assert worker._proc is not None
    worker._proc.kill()
    worker._proc.wait()
    check("RETURN 2 AS two")            # a dead worker is started again
    tight = guard.Limits(seconds=0.0)   # no time at all: the worker is given up on, the query refused
    with pytest.raises(QueryRefusedError, match="too large"):
        check("RETURN 3 AS three", limits=tight)
    assert worker._proc is None
    check("RETURN 4 AS four")
    worker.close()


# ---------------------------------------------------------------------------------------------- limits
@pytest.mark.parametrize(("query", "what"), [
    ("RETURN " + "[" * (LIMITS.depth + 1) + "]" * (LIMITS.depth + 1), "nested"),
    ("RETURN " + "CASE WHEN true THEN " * (LIMITS.depth + 1) + "1" + " END" * (LIMITS.depth + 1), "nested"),
    ("RETURN " + "EXISTS { MATCH (n) WHERE " * (LIMITS.subqueries + 1) + "true" + " }" * (LIMITS.subqueries + 1),
     "subqueries"),
    ("RETURN " + "NOT " * (LIMITS.depth + 1) + "true", "nested"),
    ("RETURN 1 + " + "-(" * (LIMITS.depth + 1) + "1" + ")" * (LIMITS.depth + 1), "nested"),
    ("WITH {} AS m RETURN m" + ".a" * (LIMITS.depth + 1), "nested"),
    ("WITH {} AS m RETURN m" + "['a']" * (LIMITS.depth + 1), "nested"),
    ("RETURN " + "+".join(["1"] * (LIMITS.depth + 1)), "nested"),
    ("RETURN [" + ", ".join(["1"] * LIMITS.nodes) + "]", "parts"),
    ("RETURN '" + "x" * LIMITS.chars + "'", "characters"),
    ("RETURN " + "(" * 3000 + "1" + ")" * 3000, "too deeply"),   # the parser's own stack runs out
])
def test_queries_beyond_the_limits_are_refused(query: str, what: str) -> None:
    assert what in _refusal(query, True)


def test_queries_at_the_limits_pass() -> None:
    n = LIMITS.depth - 10   # the statement, its clause and projection come first
    for query in ("RETURN " + "[" * n + "]" * n, "RETURN " + "NOT " * n + "true",
                  "WITH {} AS m RETURN m" + ".a" * n, "RETURN " + "+".join(["1"] * n),
                  "RETURN [" + ", ".join(["1"] * (LIMITS.nodes - 100)) + "]",
                  "RETURN " + "EXISTS { MATCH (n) WHERE " * LIMITS.subqueries + "true" + " }" * LIMITS.subqueries,
                  "MATCH (n) RETURN n.a.b.c, [1, 2][0], -1, n.x - -1, NOT NOT true"):
        check(query, write=False)


def test_library_stays_far_below_the_limits() -> None:
    for cf in library():
        for stmt in cf.statements:
            facts = read(stmt.text)
            assert facts.nodes < LIMITS.nodes // 3 and facts.depth < LIMITS.depth // 2, (cf.path.name, stmt.name)


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
    assert "cannot parse" in _refusal(query, True)


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


def test_facts_name_every_invocation_clause_and_subquery() -> None:
    facts = read("PROFILE MATCH (n) // c1\n/* c2 */ WHERE EXISTS { MATCH (n)--(m) } "
                 "CALL { CALL db.labels() YIELD label RETURN label } IN TRANSACTIONS "
                 "RETURN 'a // toLower(x)' AS `x /* y */`, apoc.coll.sum([1]) AS s, `date`.truncate('day', date())")
    assert sorted(name for name, _ in facts.functions) == ["apoc.coll.sum", "date", "date.truncate"]
    assert [name for name, _ in facts.procedures] == ["db.labels"]
    assert {"Match", "UnresolvedCall", "Return"} <= {name for name, _ in facts.clauses}
    assert facts.in_transactions and facts.subqueries == 1 and facts.kind == "query" and not facts.writes
    assert read("CREATE (n:X)").writes and read("CREATE INDEX FOR (n:X) ON (n.y)").writes


# ---------------------------------------------------------------------------------------------- properties
SEPARATORS = st.lists(st.sampled_from([" ", "\n", "\t", "  ", "/* x */", "/**/", "// c\n", "// c\r",
                                       "\u00a0", "\u2003", "\u200b", "\u3000", "\r\n"]),
                      min_size=1, max_size=3).map("".join)


@st.composite
def disguised(draw: st.DrawFn, query: str) -> str:
    """``query`` with random letter case on its keywords (upper-case words of the corpus) and random whitespace or
    comments where it has a space. String literals keep their case and spaces."""
    out: list[str] = []
    for i, part in enumerate(query.split("'")):
        if i % 2:  # inside a string literal
            out.append(part)
            continue
        words = []
        for word in part.split(" "):
            if word.isalpha() and word.isupper():
                flips = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
                word = "".join(c.upper() if f else c.lower() for c, f in zip(word, flips, strict=True))
            words.append(word)
        out.append("".join(w if not j else draw(SEPARATORS) + w for j, w in enumerate(words)))
    return "'".join(out)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=st.sampled_from([c for c in ALWAYS_REFUSED + READ_ONLY_REFUSED if "`" not in c[0]]))
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


# ---------------------------------------------------------------------------------------------- never allowed
NEVER_CALLS = ["apoc.cypher.runFirstColumnSingle('SHOW SETTINGS', {})", "apoc.periodic.iterate('a', 'b', {})",
               "apoc.load.json('http://127.0.0.1:9/')", "apoc.import.csv([], [], {})", "apoc.export.csv.all('x', {})",
               "apoc.util.compress('x', {})", "APOC.Cypher.run('x', {})", "`apoc.cypher`.run('x', {})",
               "apoc. cypher.run('x', {})"]


@pytest.mark.parametrize("call", NEVER_CALLS)
def test_never_families_are_refused_whatever_the_allowlist_says(monkeypatch, call: str) -> None:
    """Even with every ``apoc.*`` name on both allowlists, the families that run Cypher text or reach files and
    URLs are refused, as a function and as a procedure."""
    monkeypatch.setattr(guard, "PLUGIN_FUNCTIONS", ("apoc.",))
    monkeypatch.setattr(guard, "_PROCEDURES_LOWER", {**guard._PROCEDURES_LOWER,
                                                     call.split("(")[0].replace("`", "").lower(): "x"})
    for query in (f"RETURN {call} AS x", f"CALL {call}"):
        try:
            check(query, write=True)
        except QueryRefusedError as exc:
            assert "is not one the console runs" in str(exc) or "cannot parse" in str(exc), exc
        else:
            pytest.fail(f"ran: {query}")
    assert not guard.function_allowed(call.split("(")[0].replace("`", ""))


def test_server_allowlist_never_holds_the_refused_families() -> None:
    from graphlink.store.server import safe_allowlist

    helpers = [f + "*" for f in guard.PLUGIN_FUNCTIONS]
    assert safe_allowlist(["apoc.*"]) == helpers and safe_allowlist(["*"]) == helpers
    assert safe_allowlist(["apoc.coll.*", "apoc.cypher.*", "apoc.cypher.run", "APOC.Load.json", "apoc.util.*",
                           "apoc.text.join", "apoc.c*", "apoc.do.when"]) == ["apoc.coll.*", "apoc.text.join"]
    for entry in safe_allowlist(["apoc.*", "*", "apoc.c*", "apoc.?ypher.*"]):
        assert not guard.never_allowed(entry.rstrip("*")), entry
