"""The Cypher console against the real server: the regression corpus of tests/hostile_cypher.py (the reported
``\\uXXXX`` bypasses and their relatives, comments, look-alike letters, several statements, subqueries, ``USE``)
refused by the API and the CLI in both modes, each lock checked on its own (the plan allowlist alone stops every
bypass), the static lock's parser checked against the server's on generated queries (differential), the time limit
and the give-up deadline,
parameters never spliced into query text, the server's own settings (authentication, no file URLs, no plugin
procedures). The app page is tests/app/test_app_security.py.

After the module, the graph, the users and the password are what they were before (``untouched``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from graphlink.errors import StoreError
from graphlink.store import guard
from graphlink.store.guard import QueryRefusedError
from tests.cli_runner import run_cli
from tests.hostile_cypher import (
    ALWAYS_REFUSED,
    COMMENT_BYPASSES,
    EFFECTIVE,
    ESCAPED,
    INJECTIONS,
    LOOKALIKES,
    READ_ONLY_REFUSED,
    READS,
    SERVER_REFUSED,
)

pytestmark = pytest.mark.neo4j

ALL_READ_REFUSED = ALWAYS_REFUSED + ESCAPED + COMMENT_BYPASSES + READ_ONLY_REFUSED + SERVER_REFUSED
ALL_WRITE_REFUSED = ALWAYS_REFUSED + ESCAPED + COMMENT_BYPASSES


def _snapshot(store) -> dict:
    from neo4j import READ_ACCESS

    with store.driver.session(database="system", default_access_mode=READ_ACCESS) as s:
        users = sorted(r["user"] for r in s.run("SHOW USERS YIELD user"))
    counts = store._query("RETURN COUNT { (n) } AS n, COUNT { (:Pwned) } AS pwned, "
                          "COUNT { MATCH ()-[r]->() RETURN r } AS rels")[0]
    labels = store._query("CALL db.labels() YIELD label RETURN collect(label) AS l")[0]["l"]
    return {"users": users, "nodes": counts["n"], "rels": counts["rels"], "pwned": counts["pwned"],
            "labels": sorted(labels)}


@pytest.fixture(scope="module", autouse=True)
def untouched(neo4j_server, neo4j_store):
    """Nothing the hostile queries tried may have happened, and the same credentials still work."""
    from graphlink.store.neo4j import connect

    before = _snapshot(neo4j_store)
    yield
    after = _snapshot(neo4j_store)
    assert after == before and after["pwned"] == 0 and "Pwned" not in after["labels"]
    uri, auth, _ = neo4j_server
    with connect(uri, auth) as again:  # ALTER USER ... SET PASSWORD never ran
        assert again.server_version()


# ---------------------------------------------------------------------------------------------- API
@pytest.mark.parametrize(("query", "needle"), ALL_READ_REFUSED)
def test_api_refuses_in_read_only_mode(neo4j_store, query: str, needle: str) -> None:
    with pytest.raises(QueryRefusedError) as err:
        neo4j_store.run_cypher(query)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("query", "needle"), ALL_WRITE_REFUSED)
def test_api_refuses_file_url_and_admin_even_with_write(neo4j_store, query: str, needle: str) -> None:
    with pytest.raises(QueryRefusedError):
        neo4j_store.run_cypher(query, write=True)


@pytest.mark.parametrize("query", EFFECTIVE)
def test_escaped_payloads_are_real(neo4j_store, query: str) -> None:
    """Without the console, a READ session runs them: the corpus is an attack, not a strawman."""
    from neo4j import READ_ACCESS

    with neo4j_store.driver.session(database=neo4j_store.database, default_access_mode=READ_ACCESS) as s:
        assert list(s.run(query)), query


@pytest.mark.parametrize(("query", "needle"), COMMENT_BYPASSES)
def test_comment_bypass_payloads_are_code_to_the_server(neo4j_store, query: str, needle: str) -> None:
    """The payload line of the reported bypass is code to Neo4j: on a bare READ session the server looks the function
    or procedure up (this server has no APOC, so it names it as unknown; with APOC it ran it)."""
    from neo4j import READ_ACCESS
    from neo4j.exceptions import Neo4jError

    with neo4j_store.driver.session(database=neo4j_store.database, default_access_mode=READ_ACCESS) as s:
        try:
            s.run(query).consume()
        except Neo4jError as exc:
            assert needle in str(exc), exc
        else:
            assert needle.startswith("db.stats"), query    # db.stats.retrieve exists: it ran


@pytest.mark.parametrize("query", LOOKALIKES)
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_lookalike_letters_never_run(neo4j_store, query: str, write: bool) -> None:
    with pytest.raises(StoreError):   # a name to Neo4j, so a syntax error (or refused before it is sent)
        neo4j_store.run_cypher(query, write=write)


@pytest.mark.parametrize("query", READS)
def test_analyst_reads_pass_the_console(neo4j_store, query: str) -> None:
    """The allowlists are not too tight: index seeks, shortest paths, subqueries, unions ... all run read-only."""
    neo4j_store.run_cypher(query, {"release": "no-such-release", "ids": ["a", "b"]})


def test_read_only_queries_still_answer(neo4j_store) -> None:
    df = neo4j_store.run_cypher("MATCH (n) RETURN count(n) AS nodes")
    assert list(df.columns) == ["nodes"] and int(df["nodes"].iloc[0]) >= 0
    assert "name" in neo4j_store.run_cypher("SHOW INDEXES YIELD name RETURN name").columns


# ---------------------------------------------------------------------------------------------- each lock alone
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_plan_lock_refuses_when_the_static_lock_is_bypassed(neo4j_store, monkeypatch, write: bool) -> None:
    """Defence in depth: with the static check switched off, the server's plan of every hostile query is refused
    (or the server cannot even plan it); the reported bypasses are refused by the plan allowlist itself."""
    monkeypatch.setattr(guard, "check", lambda query, write=False, limits=None: None)
    harmless = {"USE neo4j MATCH (n) RETURN n"}  # the configured database itself: only the static rule refuses USE
    for query, _ in (ALL_WRITE_REFUSED if write else ALL_READ_REFUSED):
        if query in harmless:
            continue
        with pytest.raises(StoreError):
            neo4j_store.run_cypher(query, write=write)
            pytest.fail(f"ran: {query}")
    for query in EFFECTIVE + [q for q, _ in ESCAPED if "CR\\u0045ATE USER" in q or "L\\u004fAD CSV" in q]:
        with pytest.raises(QueryRefusedError, match="plan"):
            neo4j_store.run_cypher(query, write=write)


def test_read_session_lock_is_enforced_by_the_server(neo4j_store) -> None:
    from neo4j import READ_ACCESS
    from neo4j.exceptions import Neo4jError

    with neo4j_store.driver.session(database="neo4j", default_access_mode=READ_ACCESS) as s, \
            pytest.raises(Neo4jError, match="(?i)access mode"):
        s.run("CREATE (:Pwned)").consume()


def test_local_server_refuses_file_urls_and_loads_no_plugin_procedure(neo4j_server, neo4j_store) -> None:
    """The launcher's neo4j.conf (or the container's NEO4J_* settings, tests/containers.py): LOAD CSV from file URLs
    off, no APOC procedure or function registered."""
    from neo4j.exceptions import Neo4jError

    if neo4j_server[2] not in ("local", "container"):
        pytest.skip("server settings are the project's launcher's; this server was configured elsewhere")
    with neo4j_store.driver.session(database="neo4j") as s:
        with pytest.raises(Neo4jError, match="allow_csv_import_from_file_urls"):
            list(s.run("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l LIMIT 1"))
        with pytest.raises(Neo4jError, match="allow_csv_import_from_file_urls"):
            list(s.run("LOAD CSV FROM 'file:///../../../../etc/passwd' AS l RETURN l LIMIT 1"))
        procs = s.run("SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc.' RETURN count(*) AS n").single()
        funcs = s.run("SHOW FUNCTIONS YIELD name WHERE name STARTS WITH 'apoc.' RETURN count(*) AS n").single()
        assert procs["n"] == 0 and funcs["n"] == 0
        with pytest.raises(Neo4jError, match="apoc.load.json"):
            list(s.run("CALL apoc.load.json('file:///etc/passwd')"))


def test_local_server_refuses_missing_and_wrong_credentials(neo4j_server) -> None:
    from neo4j.exceptions import AuthError

    from graphlink.store import server
    from graphlink.store.neo4j import connect

    uri, auth, source = neo4j_server
    if source not in ("local", "container"):
        pytest.skip("authentication is configured by whoever runs this server")
    # two failures for neo4j at most: a third would lock the user for dbms.security.auth_lock_time (5 s)
    for bad in (None, ("neo4j", "neo4j"), ("intruder", auth[1])):
        with server.open_driver(uri, bad) as drv, pytest.raises(AuthError):
            drv.verify_connectivity()
    with pytest.raises(StoreError, match="refused the credentials"):
        connect(uri, ("neo4j", auth[1] + "x"))
    with connect(uri, auth) as store:  # a success resets the failure count
        assert store.server_version()


# ---------------------------------------------------------------------------------------------- the server's view
NOISE = st.sampled_from([
    "x", " ", "'", '"', "`", "\\", "\\'", '\\"', "//", "/*", "*/", "\\u002a/", "\\u0027", "\\u0022", "\\u0060",
    "\n", "\r", "\\u000a", "\\u000d", "\u2028", "\\u2028", "\u2029", "\\u2029", "\x85", "\\u0085", "\x0b",
    "\\u000b", "\x0c", "\\u000c", "\\u005c", ", zz.hidden(1) AS h#", ", toUpper('x') AS t#",
])
BREAKS = st.sampled_from(["\n", "\r", "\r\n", "\\u000a", "\\u000d", "\u2028", "\\u2028", "\u2029", "\\u2029",
                          "\x85", "\\u0085", "\x0b", "\\u000b", "\x0c", "\\u000c"])


@st.composite
def tricky_queries(draw: st.DrawFn) -> str:
    """``RETURN 1 AS a`` followed by random return items (calls of unknown functions ``zz.f<i>``, plainly, in
    backticks or with escaped letters; built-in calls), ``//`` comments ended by raw or escaped line breaks that
    Neo4j may or may not end them at, block comments, and string literals, all holding quotes, backslashes,
    escapes and items of their own; sometimes a procedure call first."""
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(["CALL zz.p0() YIELD y ", "CALL `zz`.p0() YIELD y ",
                                           "CALL zz.p\\u0030() YIELD y ", "CALL db.labels() YIELD label "])))
    parts.append("RETURN 1 AS a")
    serial = iter(range(1000))
    for i in range(draw(st.integers(1, 6))):
        # every return item a noise fragment holds gets a name of its own (the server refuses two of one name)
        noise = "".join(n.replace("#", str(next(serial))) for n in draw(st.lists(NOISE, max_size=6)))
        kind = draw(st.sampled_from(["call", "comment", "block", "string", "builtin"]))
        if kind == "call":
            name = draw(st.sampled_from([f"zz.f{i}", f"`zz`.f{i}", f"zz.`f{i}`", f"zz.f\\u00{30 + i}",
                                         f"z\\u007a.f{i}"]))
            parts.append(f", {name}(1) AS c{i}")
        elif kind == "comment":
            parts.append(f" //{noise}{draw(BREAKS)}")
        elif kind == "block":
            parts.append(f" /*{noise}*/")
        elif kind == "string":
            quote = draw(st.sampled_from(["'", '"']))
            parts.append(f", {quote}{noise}{quote} AS s{i}")
        else:
            parts.append(f", toLower('A') AS b{i}")
    return "".join(parts)


def _server_unknown(store, query: str) -> tuple[str, str | None]:
    """What the server makes of ``query`` with ``EXPLAIN``: ("ok", None), ("unknown", the function or procedure it
    names as unknown) or ("error", its message)."""
    import re

    from neo4j import READ_ACCESS
    from neo4j.exceptions import Neo4jError

    try:
        with store.driver.session(database=store.database, default_access_mode=READ_ACCESS) as s:
            s.run("EXPLAIN " + query).consume()
    except Neo4jError as exc:
        msg = str(exc.message or exc)
        m = re.search(r"Unknown function '([^']*)'|no procedure with the name `([^`]*)`", msg)
        return ("unknown", m.group(1) or m.group(2)) if m else ("error", msg)
    return "ok", None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(tricky_queries())
def test_the_guard_reads_what_the_server_reads(neo4j_store, query: str) -> None:
    """Differential: the static lock's facts against Neo4j's own planning of the same text. The generated queries
    call only unknown functions and procedures (``zz.*``) besides built-ins, so the server names one of them as
    unknown exactly when there is one: the set the guard found is empty exactly when the server plans the query,
    and the server's name is in it; a text the guard cannot parse, the server cannot either."""
    facts = guard.read(query)
    server, name = _server_unknown(neo4j_store, query)
    event(f"server: {server}, guard: {facts.error or len(facts.functions + facts.procedures)} names")
    if facts.error is not None:
        assert facts.error == "syntax", (query, facts)
        assert server == "error", (query, facts.message, server, name)
        return
    unknown = {n for n, _ in facts.functions + facts.procedures if n.startswith("zz.")}
    if not unknown:
        assert server == "ok", (query, server, name)
        return
    assert server == "unknown" and name in unknown, (query, unknown, server, name)
    with pytest.raises(QueryRefusedError, match="zz"):
        guard.check(query)


def test_builtin_function_allowlist_is_the_server_s(neo4j_store) -> None:
    recs = neo4j_store._query("SHOW FUNCTIONS YIELD name, isBuiltIn WHERE isBuiltIn AND name CONTAINS '.' "
                              "RETURN collect(toLower(name)) AS names")
    assert set(recs[0]["names"]) - {"graph.byelementid", "graph.byname"} == set(guard.BUILTIN_FUNCTIONS)
    modes = {r["name"]: r["mode"] for r in neo4j_store._query("SHOW PROCEDURES YIELD name, mode RETURN *")}
    assert all(modes.get(p) == "READ" for p in guard.PROCEDURES), modes


def test_library_plans_pass_the_plan_check(neo4j_store) -> None:
    """Every statement of cypher/*.cypher: its plan passes in the mode it is meant for (reads read-only)."""
    from neo4j import WRITE_ACCESS

    from graphlink.store.cypherlib import library

    for cf in library():
        write = cf.path.stem in ("schema", "load") or cf.path.stem.endswith(("_schema", "_load"))
        for stmt in cf.statements:
            params = {p: None for p in stmt.parameters}
            with neo4j_store.driver.session(database=neo4j_store.database, default_access_mode=WRITE_ACCESS) as s:
                plan = s.run("EXPLAIN " + stmt.text, params).consume().plan
            guard.check_plan(plan, write=write, database=neo4j_store.database)


# ---------------------------------------------------------------------------------------------- time
def test_a_long_query_is_stopped_at_the_time_limit(neo4j_store) -> None:
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="time limit of 2 s"):
        neo4j_store.run_cypher("UNWIND range(1, 100000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n",
                               timeout=2)
    assert time.monotonic() - t0 < 2 + neo4j_store_grace()
    assert int(neo4j_store.run_cypher("RETURN 1 AS one")["one"].iloc[0]) == 1


def _running(store) -> list[str]:
    """The queries running on the server besides this look-up, through the test's own session (the console
    refuses SHOW TRANSACTIONS)."""
    rows = store._query("SHOW TRANSACTIONS YIELD currentQuery, status WHERE NOT currentQuery STARTS WITH 'SHOW' "
                        "RETURN currentQuery + ' (' + status + ')' AS q")
    return [r["q"] for r in rows]


def _free_within(store, seconds: float) -> float:
    """Seconds until no query runs on the server; fails after ``seconds``."""
    t0 = time.monotonic()
    while _running(store):
        assert time.monotonic() - t0 < seconds, f"still running after {seconds} s: {_running(store)}"
        time.sleep(0.25)
    return time.monotonic() - t0


def test_a_timed_out_query_leaves_the_server_free(neo4j_store) -> None:
    """The transaction's own timeout stops a row-by-row query while it runs: the console says so at the limit and
    the server has nothing left running a few seconds later."""
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="time limit of 2 s"):
        neo4j_store.run_cypher("UNWIND range(1, 100000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n",
                               timeout=2)
    assert time.monotonic() - t0 < 2 + neo4j_store_grace()
    assert _free_within(neo4j_store, 10) < 10


def test_reduce_over_a_huge_range_is_refused_before_it_runs(neo4j_store) -> None:
    """``reduce`` over ``range(1, 3e9)``: Neo4j 5.26 checks the time limit between rows only, so this one row kept
    a server core busy for ~95 s past a 5 s limit. The console refuses it at once, and the server is free."""
    t0 = time.monotonic()
    with pytest.raises(QueryRefusedError, match="range"):
        neo4j_store.run_cypher("RETURN reduce(s = 0, x IN range(1, 3000000000) | s + x) AS s", timeout=5)
    assert time.monotonic() - t0 < 5
    assert _free_within(neo4j_store, 5) < 5
    assert neo4j_store.run_cypher("RETURN reduce(s = 0, x IN range(1, 1000) | s + x) AS s")["s"].iloc[0] == 500500


def test_the_server_enforces_its_own_limits(neo4j_server, neo4j_store) -> None:
    """The launcher's neo4j.conf sets a transaction timeout for every client and memory limits sized to the heap
    (read back from the server, through the test's own session), and the memory limit stops a query that
    collects more than one transaction may hold."""
    from graphlink.config import get_config
    from graphlink.store.server import memory_limits

    if neo4j_server[2] != "local":
        pytest.skip("the limits of a server named by NEO4J_URI are its owner's")
    got = {r["name"]: r["value"] for r in neo4j_store._query(
        "SHOW SETTINGS YIELD name, value WHERE name IN ['db.transaction.timeout', 'db.memory.transaction.max', "
        "'db.memory.transaction.total.max'] RETURN name, value")}
    per_tx, total = memory_limits(get_config().neo4j_heap)
    seconds = sum(float(n) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[u]
                  for n, u in re.findall(r"([0-9.]+)(ms|s|m|h|d)", got["db.transaction.timeout"]))
    assert seconds == get_config().neo4j_tx_timeout, got
    assert got["db.memory.transaction.max"] == f"{int(per_tx[:-1])}.00MiB", got        # Neo4j prints MiB
    assert got["db.memory.transaction.total.max"] == f"{int(total[:-1])}.00MiB", got
    with pytest.raises(StoreError, match="more memory than one transaction may hold"):
        neo4j_store.run_cypher("UNWIND range(1, 200000000) AS x RETURN size(collect(x)) AS n", timeout=300)
    assert _free_within(neo4j_store, 10) < 10


def test_the_console_reads_at_most_its_row_cap(neo4j_store) -> None:
    """``range(1, 2e7)`` as rows took 1.4 GB in the client; the console stops at its cap (100,000 rows), says to
    add LIMIT, and the server stops the query when the console drops its connection."""
    from graphlink.config import get_config

    cap = get_config().cypher_max_rows
    assert cap == 100_000
    t0 = time.monotonic()
    with pytest.raises(StoreError, match=f"more than {cap:,} rows.*add LIMIT"):
        neo4j_store.run_cypher("UNWIND range(1, 20000000) AS x RETURN x", timeout=600)
    assert time.monotonic() - t0 < 60
    assert _free_within(neo4j_store, 10) < 10
    exact = neo4j_store.run_cypher(f"UNWIND range(1, {cap}) AS x RETURN x")       # exactly the cap: all rows
    assert len(exact) == cap and exact["x"].iloc[-1] == cap


def neo4j_store_grace() -> float:
    from graphlink.store.neo4j import DEADLINE_GRACE

    return DEADLINE_GRACE + 20  # generous: a loaded CI machine


@pytest.mark.slow
def test_the_client_gives_up_when_the_server_never_answers(neo4j_store, monkeypatch) -> None:
    """Neo4j 5.26's parser overflows its stack on ~300 nested brackets and then never answers (the limits refuse
    such a query; here they are switched off): the console gives up after the time limit plus its grace, and the
    next query works."""
    monkeypatch.setattr(guard, "check", lambda query, write=False, limits=None: None)
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="did not answer within"):
        neo4j_store.run_cypher("RETURN " + "[" * 400 + "]" * 400, timeout=2)
    assert time.monotonic() - t0 < 2 + neo4j_store_grace()
    monkeypatch.undo()
    assert int(neo4j_store.run_cypher("RETURN 1 AS one")["one"].iloc[0]) == 1


_AT = guard.LIMITS.depth - 10   # the statement, its clause and projection take the first levels


@pytest.mark.parametrize("query", [
    "RETURN " + "(" * _AT + "1" + ")" * _AT,
    "RETURN " + "[" * _AT + "]" * _AT,
    "RETURN " + "{a:" * (_AT // 2) + "1" + "}" * (_AT // 2),
    "RETURN " + "CASE WHEN true THEN " * (_AT // 3) + "1" + " END" * (_AT // 3),
    "RETURN " + "NOT " * _AT + "true",
    "WITH {} AS m RETURN m" + ".a" * _AT,
    "RETURN " + "+".join(["1"] * _AT),
    "WITH {a: true} AS m RETURN " + "(" * 30 + "NOT " * 30 + "m" + ".a" * 30 + ")" * 30,
    "MATCH (a) RETURN " + "EXISTS { MATCH (n) WHERE " * guard.LIMITS.subqueries + "true"
    + " }" * guard.LIMITS.subqueries,
    "RETURN [" + ", ".join(["1"] * (guard.LIMITS.nodes - 100)) + "]",
])
def test_queries_within_the_limits_get_an_answer(neo4j_store, query: str) -> None:
    """At the limits the console lets the query through and the server answers (rows, a type error or the time
    limit), never a silent stack overflow."""
    guard.check(query, write=False)
    try:
        neo4j_store.run_cypher(query, timeout=30)
    except StoreError as exc:
        assert "did not answer" not in str(exc), exc


# ---------------------------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("payload", INJECTIONS)
def test_parameter_values_are_data_not_code(neo4j_store, payload: str) -> None:
    df = neo4j_store.run_cypher("RETURN $v AS v, size($v) AS n", {"v": payload})
    assert df["v"].iloc[0] == payload and int(df["n"].iloc[0]) == len(payload)
    df = neo4j_store.run_cypher("MATCH (r:Release {name: $release}) RETURN r.name AS name", {"release": payload})
    assert df.empty


# ---------------------------------------------------------------------------------------------- CLI
def _main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """``graphlink ARGS`` through the console-script entry (exit codes and stderr exactly as a user sees them)."""
    done = run_cli(*args)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(("query", "needle"), ALL_READ_REFUSED)
def test_cli_refuses_with_one_line_and_exit_2(neo4j_env, tmp_path: Path, monkeypatch, capsys,
                                             query: str, needle: str) -> None:
    qf = tmp_path / "q.cypher"
    qf.write_text(query + "\n")
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf))
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphlink: error: refused"), err
    assert "Traceback" not in err and "row(s)" not in out


def test_cli_refuses_write_mode_file_reads(neo4j_env, tmp_path: Path, monkeypatch, capsys) -> None:
    qf = tmp_path / "q.cypher"
    qf.write_text("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l LIMIT 2;\n")
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf), "--write")
    assert code == 2 and "LOAD CSV" in err and "root:" not in out


@pytest.mark.parametrize(("query", "needle"), ESCAPED)
def test_cli_refuses_escapes_with_write(neo4j_env, tmp_path: Path, monkeypatch, capsys, query: str,
                                        needle: str) -> None:
    qf = tmp_path / "q.cypher"
    qf.write_text(query + "\n")
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf), "--write")
    assert code == 2 and err.startswith("graphlink: error: refused") and len(err.strip().splitlines()) == 1, err


def test_cli_escaped_settings_leak_is_closed(neo4j_env, tmp_path: Path) -> None:
    """The escaped ``S\\u0048OW SETTINGS`` that listed the server's directories, as a user runs it: a real process,
    exit 2, one line, no server directory printed."""
    qf = tmp_path / "q.cypher"
    qf.write_text("S\\u0048OW SETTINGS YIELD name, value WHERE name STARTS WITH 'server.directories' "
                  "RETURN name, value\n")
    res = subprocess.run([sys.executable, "-m", "graphlink.cli", "cypher", str(qf)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2 and res.stderr.strip().count("\n") == 0 and "SHOW SETTINGS" in res.stderr
    assert "server.directories" not in res.stdout


def test_cli_timeout_option(neo4j_env, tmp_path: Path, monkeypatch, capsys) -> None:
    qf = tmp_path / "q.cypher"
    qf.write_text("UNWIND range(1, 100000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n;\n")
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf), "--timeout", "1")
    assert code == 2 and "time limit of 1 s" in err and len(err.strip().splitlines()) == 1, err


def test_cli_refuses_a_result_past_the_row_cap(neo4j_env, tmp_path: Path) -> None:
    """As a user runs it (a real process, whose peak memory shows): exit 2, one line asking for LIMIT, and the
    client stays small."""
    qf = tmp_path / "q.cypher"
    qf.write_text("UNWIND range(1, 20000000) AS x RETURN x;\n")
    # the peak is the process's own high-water mark (VmHWM); ru_maxrss would also count the pytest process it was
    # spawned from, which Linux carries across exec (a long test session is gigabytes)
    res = subprocess.run([sys.executable, "-c", "import sys\nfrom graphlink.cli import main\n"
                          "try:\n    main()\nfinally:\n    hwm = [ln for ln in open('/proc/self/status') "
                          "if ln.startswith('VmHWM:')][0]\n    print('PEAK', hwm.split()[1], file=sys.stderr)",
                          "cypher", str(qf)], capture_output=True, text=True, timeout=600)
    lines = [line for line in res.stderr.strip().splitlines() if not line.startswith("PEAK")]
    peak_mb = int(res.stderr.rsplit("PEAK ", 1)[1].split()[0]) / 1024
    assert res.returncode == 2 and len(lines) == 1 and "add LIMIT" in lines[0], res.stderr
    assert peak_mb < 600, peak_mb


def test_cli_passwd_leak_is_closed(neo4j_env, tmp_path: Path) -> None:
    """The reported /etc/passwd leak, as a user runs it: a real process, exit 2, one line, no file content."""
    qf = tmp_path / "q.cypher"
    qf.write_text("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l LIMIT 2\n")
    res = subprocess.run([sys.executable, "-m", "graphlink.cli", "cypher", str(qf)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "refused" in res.stderr and "LOAD CSV" in res.stderr
    assert "root:" not in res.stdout + res.stderr


@pytest.mark.parametrize("payload", INJECTIONS)
def test_cli_param_values_are_never_spliced(neo4j_env, tmp_path: Path, monkeypatch, capsys, payload: str) -> None:
    qf = tmp_path / "echo.cypher"
    qf.write_text("// @param v  a value\nRETURN $v AS v, size($v) AS n;\n")
    out_csv = tmp_path / "echo.csv"
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf), "--param", f"v={payload}", "--csv", str(out_csv))
    assert code == 0, err
    import pandas as pd

    got = pd.read_csv(out_csv, keep_default_na=False, dtype=str)
    assert got["v"].tolist() == [payload] and got["n"].tolist() == [str(len(payload))]


def test_cli_hostile_param_names_do_not_change_the_query(neo4j_env, tmp_path: Path, monkeypatch, capsys) -> None:
    qf = tmp_path / "q.cypher"
    qf.write_text("MATCH (n) RETURN count(n) AS nodes;\n")
    code, out, err = _main(monkeypatch, capsys, "cypher", str(qf),
                           "--param", "x}) DETACH DELETE n //=1", "--param", "y`=LOAD CSV")
    assert code == 0, err
    assert "1 row(s)" in out
    code, _, err = _main(monkeypatch, capsys, "cypher", str(qf), "--param", "novalue")
    assert code == 2 and "NAME=VALUE" in err
