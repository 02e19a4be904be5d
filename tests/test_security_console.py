"""The read-only Cypher console against the real server: hostile queries refused by the API and the CLI, each
of the three locks checked on its own, parameters never spliced into query text, the server's own settings
(authentication, no file URLs, no plugin procedures). The app page is tests/test_app_security.py.

After the module, the graph, the users and the password are what they were before (``untouched``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphlink.errors import StoreError
from graphlink.store import guard
from graphlink.store.guard import QueryRefusedError
from tests.hostile_cypher import ALWAYS_REFUSED, INJECTIONS, READ_ONLY_REFUSED, SERVER_REFUSED

pytestmark = pytest.mark.neo4j

ALL_READ_REFUSED = ALWAYS_REFUSED + READ_ONLY_REFUSED + SERVER_REFUSED


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


@pytest.mark.parametrize(("query", "needle"), ALWAYS_REFUSED)
def test_api_refuses_file_url_and_admin_even_with_write(neo4j_store, query: str, needle: str) -> None:
    with pytest.raises(QueryRefusedError):
        neo4j_store.run_cypher(query, write=True)


def test_read_only_queries_still_answer(neo4j_store) -> None:
    df = neo4j_store.run_cypher("MATCH (n) RETURN count(n) AS nodes")
    assert list(df.columns) == ["nodes"] and int(df["nodes"].iloc[0]) >= 0
    assert "name" in neo4j_store.run_cypher("SHOW INDEXES YIELD name RETURN name").columns


# ---------------------------------------------------------------------------------------------- each lock alone
def test_plan_lock_refuses_when_the_static_lock_is_bypassed(neo4j_store, monkeypatch) -> None:
    """Defence in depth: with the static check switched off, the EXPLAIN query type still refuses."""
    monkeypatch.setattr(guard, "check", lambda query, write=False: None)
    for query in ("CREATE INDEX pwned FOR (n:Pwned) ON (n.x)", "CALL db.createLabel('Pwned')",
                  "CREATE (:Pwned)", "SHOW USERS", "ALTER USER neo4j SET PASSWORD 'pwned-pass-1'"):
        with pytest.raises(StoreError, match="refused|Neo4j refused"):
            neo4j_store.run_cypher(query)


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
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError

    from graphlink.store.neo4j import connect

    uri, auth, source = neo4j_server
    if source not in ("local", "container"):
        pytest.skip("authentication is configured by whoever runs this server")
    # two failures for neo4j at most: a third would lock the user for dbms.security.auth_lock_time (5 s)
    for bad in (None, ("neo4j", "neo4j"), ("intruder", auth[1])):
        with GraphDatabase.driver(uri, auth=bad) as drv, pytest.raises(AuthError):
            drv.verify_connectivity()
    with pytest.raises(StoreError, match="refused the credentials"):
        connect(uri, ("neo4j", auth[1] + "x"))
    with connect(uri, auth) as store:  # a success resets the failure count
        assert store.server_version()


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
    from graphlink.cli import main

    monkeypatch.setattr(sys, "argv", ["graphlink", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


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
