"""Bulk import (``neo4j-admin database import``) of a new release into the project's local server.

The same release is loaded both ways — bulk import into the empty database, then batched UNWIND under another
name — and the two graphs are compared node by node and edge by edge, property values *and* their Cypher types
(including the Release node's provenance). Then the rule: a database holding anything that is not graphlink's own
is never rebuilt (``auto`` falls back to UNWIND, ``always`` refuses in one line), a server that is not the
project's local one is never stopped, a failed importer leaves the database as it was and served again.

Runs a private local server (temporary ``GRAPHLINK_NEO4J_DIR`` whose ``runtime/`` points at the resolved jars,
free ports, HTTP off), never the developer's own ``.graphlink/neo4j``; its database pauses during every bulk import.
Like every Neo4j test it is skipped without a runtime, and fails instead under ``NEO4J_REQUIRED=1``.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pytest

from graphlink.config import set_config
from graphlink.core.release import Release, read_release
from graphlink.errors import StoreError
from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import bulk, server
from graphlink.store.neo4j import Store, connect

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

#: element keys and location names that CSV has to quote or escape; they must come back unchanged
TRICKY = ["line\nbreak", "a,b", 'say "hi"', "semi;colon", " padded ", "back\\slash", "ünï©ødé ✓", "tab\there",
          "x" * 300]


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The project's local server, private to this module: ``(paths, monkeypatch)`` with the environment set."""
    from graphlink.store.neo4j import database

    paths = server.Paths.default()
    if not server.runtime_version(paths) or not server.find_java():
        msg = "no local Neo4j runtime: run `bash scripts/setup-neo4j.sh` (Java 17 + Maven)"
        if os.environ.get("NEO4J_REQUIRED") == "1":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    if database() != bulk.DATABASE:
        pytest.fail(f"NEO4J_DATABASE={database()!r}: the local server has only 'neo4j'", pytrace=False)
    mine = server.Paths(tmp_path_factory.mktemp("bulk") / "neo4j")
    mine.base.mkdir()
    (mine.base / "runtime").symlink_to(paths.runtime, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_PASSWORD", "GRAPHLINK_BULK_MIN_ROWS"):
            mp.delenv(var, raising=False)
        mp.setenv("GRAPHLINK_NEO4J_DIR", str(mine.base))
        server.start(port=server.free_port(), http_port=None, paths=mine, echo=lambda line: None)
        try:
            yield mine, mp
        finally:
            server.stop(mine, timeout=60)


@pytest.fixture
def store(local) -> Store:
    """A connection to the private server, whose database is emptied first (data and schema)."""
    with connect() as st:
        empty(st)
        yield st


def empty(st: Store) -> None:
    """Delete every node, index and constraint (the importer only rebuilds an empty database)."""
    st.conn.run_auto("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS", {})
    for rec in st._query("SHOW CONSTRAINTS YIELD name RETURN name"):
        st._query(f"DROP CONSTRAINT `{rec['name']}`")
    for rec in st._query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
        st._query(f"DROP INDEX `{rec['name']}`")


def _release(subjects: int = 400, locations: int = 7) -> Release:
    """A simulated release with ground truth, some element keys and a location renamed to CSV-hostile strings."""
    rel = simulate_uniform(subjects, locations, 0.5, withhold=0.15, seed=11)
    frame, truth = rel.frame.astype(str), rel.truth.astype(str)
    ids = list(dict.fromkeys(frame.loc[frame["kind"] == "identified", "element"]))[: len(TRICKY)]
    des = list(dict.fromkeys(frame.loc[frame["kind"] == "deidentified", "element"]))[: len(TRICKY)]
    rename = {**{k: f"id {t}" for k, t in zip(ids, TRICKY, strict=True)},
              **{k: f"de {t}" for k, t in zip(des, TRICKY, strict=True)}}
    loc0 = frame["location"].iloc[0]
    frame = frame.assign(element=frame["element"].replace(rename),
                         location=frame["location"].replace({loc0: 'site "1", north'}))
    truth = truth.assign(identified=truth["identified"].replace(rename),
                         deidentified=truth["deidentified"].replace(rename))
    truth.loc[len(truth)] = ["nobody-i", "nobody-d"]  # an entity whose elements are not in the release
    return Release(frame=frame, name="tricky", source="sim/tricky.csv", truth=truth)


VOLATILE = {"created_at", "loaded_at"}  # load times: compared by type only


def _graph(store: Store, name: str) -> dict:
    """Everything of release ``name``: nodes per label (properties with their Cypher types) and relationships
    (type, start, end by key), with the release name itself replaced by '<R>'."""
    nodes = store._query(
        """MATCH (n) WHERE n.release = $r OR (n:Release AND n.name = $r)
           RETURN labels(n) AS labels,
                  [k IN keys(n) | [k, valueType(n[k]), CASE WHEN k IN $volatile THEN null ELSE n[k] END]] AS props""",
        {"r": name, "volatile": sorted(VOLATILE)})
    rels = store._query(
        """MATCH (a)-[e]->(b) WHERE a.release = $r OR (a:Release AND a.name = $r)
           RETURN type(e) AS type, labels(a)[0] AS al, coalesce(a.key, a.id, a.name) AS ak,
                  labels(b)[0] AS bl, coalesce(b.key, b.id, b.name) AS bk, keys(e) AS props""", {"r": name})

    def norm(v):
        return "<R>" if v == name else v

    out_nodes = Counter()
    for rec in nodes:
        props = tuple(sorted((k, t, norm(v)) for k, t, v in rec["props"]))
        out_nodes[(tuple(rec["labels"]), props)] += 1
    out_rels = Counter((r["type"], r["al"], norm(r["ak"]), r["bl"], norm(r["bk"]), tuple(r["props"])) for r in rels)
    return {"nodes": out_nodes, "rels": out_rels}


def _per_label(graph: dict) -> Counter:
    return Counter({**Counter(labels for (labels, _), n in graph["nodes"].items() for _ in range(n)),
                    **Counter(r[0] for r, n in graph["rels"].items() for _ in range(n))})


def test_bulk_and_unwind_build_the_same_graph(local, store):
    paths, _ = local
    pid = server.read_state(paths)["pid"]
    rel = _release()
    lines: list[str] = []
    info = store.load_release(rel, name="bulk-one", bulk="always", progress=lambda f, m: lines.append(m))
    assert info.method == "bulk-import" and info.why == "the local database was empty", info
    assert info.status == "loaded" and info.load_method == "bulk-import" and not info.skipped
    assert any("neo4j-admin" in m for m in lines) and any("swapping" in m for m in lines)
    # the same launcher JVM reopened its DBMS on the new store: same process, same URI
    assert server.read_state(paths)["pid"] == pid and store.uri == server.local_uri(paths)
    assert "NEO4J_PAUSED" in paths.log.read_text()
    assert not bulk.journal(paths) and not list((paths.base / "bulk").glob("job-*"))  # nothing left behind
    # the database was rebuilt, the system database (hence the password) was not
    assert server.bolt_version(store.uri, auth=server.local_auth(paths))

    other = store.load_release(rel, name="unwind-one", bulk="never")
    assert other.method == "unwind" and other.load_method == "unwind"
    assert other.why.startswith("UNWIND was asked for")

    a, b = _graph(store, "bulk-one"), _graph(store, "unwind-one")
    assert _per_label(a) == _per_label(b)
    assert _per_label(a)[("Entity",)] == rel.truth.drop_duplicates().shape[0]
    assert sum(n for (t, *_), n in a["rels"].items() if t == "DISCLOSED_AT") == len(rel.frame.drop_duplicates())
    # every node with every property and its type, except load_method (it says which path ran)
    for g in (a, b):
        g["nodes"] = Counter({(lab, tuple(p for p in props if p[0] != "load_method")): n
                              for (lab, props), n in g["nodes"].items()})
    assert a["nodes"] == b["nodes"]
    assert a["rels"] == b["rels"]
    # the CSV-hostile strings came back unchanged
    keys = set(store.run_cypher("MATCH (e:Identified {release: 'bulk-one'}) RETURN e.key AS k")["k"])
    assert {f"id {t}" for t in TRICKY} <= keys
    assert "site \"1\", north" in set(store.run_cypher(
        "MATCH (l:Location {release: 'bulk-one'}) RETURN l.name AS n")["n"])
    # provenance as UNWIND writes it, typed the same
    ra, rb = store.release_info("bulk-one"), store.release_info("unwind-one")
    assert set(ra.properties) == set(rb.properties)
    assert ra.fingerprint == rb.fingerprint and ra.source == "sim/tricky.csv"
    types = store._query("MATCH (r:Release) RETURN r.name AS n, valueType(r.created_at) AS c, "
                         "valueType(r.loaded_at) AS l ORDER BY n")
    assert {(t["c"], t["l"]) for t in types} == {("ZONED DATETIME NOT NULL", "ZONED DATETIME NOT NULL")}
    # the schema of cypher/schema.cypher is in place and online
    names = {r["name"] for r in store._query("SHOW INDEXES YIELD name, state WHERE state = 'ONLINE' RETURN name")}
    assert bulk._own_schema()["schema"] <= names
    # the library's queries run on it: per-location sizes read back equal
    for name in ("bulk-one", "unwind-one"):
        assert store.read_release(name).equals(store.read_release("bulk-one"))


def test_idempotent_and_refuses_a_database_with_data(local, store, monkeypatch):
    rel = _release(subjects=120, locations=4)
    first = store.load_release(rel, name="r1", bulk="always")
    assert first.method == "bulk-import"
    # the same release again: already loaded, whatever the mode
    for mode in ("always", "auto", "never"):
        again = store.load_release(rel, name="r1", bulk=mode)
        assert again.skipped and again.rows == first.rows
    # a second release: the database holds r1, so the importer may not rebuild it
    with pytest.raises(StoreError) as refused:
        store.load_release(rel, name="r2", bulk="always")
    msg = str(refused.value)
    assert "\n" not in msg and "already holds data" in msg and "bulk import set to auto" in msg
    assert refused.value.diagnostic.code == "store-bulk-refused"
    assert store.release_info("r2") is None and store.release_info("r1").status == "loaded"
    monkeypatch.setenv("GRAPHLINK_BULK_MIN_ROWS", "1")  # auto would bulk-import at this size ...
    fell_back = store.load_release(rel, name="r2", bulk="auto")
    assert fell_back.method == "unwind" and "already holds data" in fell_back.why  # ... but falls back
    assert _per_label(_graph(store, "r1")) == _per_label(_graph(store, "r2"))


def test_foreign_data_or_schema_is_never_replaced(local, store):
    store._query("CREATE (:Customer {name: 'keep me'})")
    rel = _release(subjects=60, locations=3)
    with pytest.raises(StoreError, match="already holds data"):
        store.load_release(rel, name="f1", bulk="always")
    assert store._query("MATCH (c:Customer) RETURN c.name AS n")[0]["n"] == "keep me"
    store._query("MATCH (c:Customer) DELETE c")
    store._query("CREATE INDEX customer_name IF NOT EXISTS FOR (c:Customer) ON (c.name)")
    with pytest.raises(StoreError, match="customer_name"):
        store.load_release(rel, name="f1", bulk="always")
    assert "customer_name" in {r["name"] for r in store._query("SHOW INDEXES YIELD name RETURN name")}


def test_auto_threshold_and_not_the_local_server(local, store, tmp_path, monkeypatch):
    rel = _release(subjects=60, locations=3)
    small = store.load_release(rel, name="s1", bulk="auto")  # far below GRAPHLINK_BULK_MIN_ROWS
    assert small.method == "unwind" and "GRAPHLINK_BULK_MIN_ROWS" in small.why
    store.drop_release("s1")
    # the same server seen from a client whose project runs no local server: it is not ours to stop
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(StoreError, match="not the project's local server") as refused:
        store.load_release(rel, name="s2", bulk="always")
    assert "\n" not in str(refused.value)
    with pytest.raises(StoreError, match="bulk mode must be one of"):
        store.load_release(rel, name="s2", bulk="sometimes")


@pytest.mark.parametrize("importer", ["server", "jvm"])
def test_failed_importer_leaves_the_database_served(local, store, monkeypatch, importer):
    """The importer fails in the server's JVM (an option it refuses) or in a JVM of its own (one that cannot even
    start): the server keeps serving the old store, and nothing is left behind."""
    paths, _ = local
    pid, paused = server.read_state(paths)["pid"], paths.log.read_text().count("NEO4J_PAUSED")
    monkeypatch.setenv("GRAPHLINK_BULK_IMPORTER", importer)
    broken = (("GRAPHLINK_NEO4J_IMPORT_MEMORY", "lots") if importer == "server"
              else ("GRAPHLINK_NEO4J_IMPORT_HEAP", "1k"))
    monkeypatch.setenv(*broken)
    rel = _release(subjects=60, locations=3)
    with pytest.raises(StoreError, match="bulk importer failed"):
        store.load_release(rel, name="x1", bulk="always")
    assert server.bolt_version(store.uri, auth=server.local_auth(paths))  # it never stopped serving the old store
    assert server.read_state(paths)["pid"] == pid and paths.log.read_text().count("NEO4J_PAUSED") == paused
    assert store.release_info("x1") is None and not bulk.journal(paths)
    assert not list((paths.base / "bulk").glob("job-*"))
    log = (paths.home / "logs" / "bulk-import.log").read_text()
    assert ("in the server's JVM" if importer == "server" else "in a JVM of its own") in log[log.rindex("\n--- "):]
    monkeypatch.delenv(broken[0])
    assert store.load_release(rel, name="x1", bulk="always").method == "bulk-import"  # the next run does it


def test_cli_says_which_path_ran(local, store, tmp_path):
    from typer.testing import CliRunner

    from graphlink.cli import app

    rel = _release(subjects=80, locations=3)
    path = tmp_path / "cli-rel.csv"
    rel.frame.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    runner = CliRunner()
    res = runner.invoke(app, ["load", str(path), "--name", "c1", "--bulk", "always"])
    assert res.exit_code == 0, res.output
    assert "by bulk import (the local database was empty)" in res.output
    res = runner.invoke(app, ["load", str(path), "--name", "c2", "--bulk", "always"])
    # graphlink.cli.main prints a StoreError as its one line; the runner hands it back as the exception
    assert res.exit_code != 0 and isinstance(res.exception, StoreError)
    assert str(res.exception).startswith("cannot bulk-import: the local database already holds data")
    res = runner.invoke(app, ["load", str(path), "--name", "c2", "--bulk", "never"])
    assert res.exit_code == 0 and "by UNWIND" in res.output, res.output
    written = read_release(path).frame  # as the reader normalised it (e.g. surrounding blanks stripped)
    with connect() as st:
        for name in ("c1", "c2"):
            back = st.read_release(name)
            assert set(back.itertuples(index=False)) == set(written.itertuples(index=False))


def test_a_client_dying_while_the_database_is_paused_stops_the_server(local, store):
    """The launcher never reopens a store whose swap its client may have left half done: it exits instead."""
    import subprocess
    import sys
    import time

    paths, _ = local
    store._query("CREATE (:Keep {v: 1})")
    control = paths.home / "control"
    child = subprocess.Popen([sys.executable, "-c", (
        "import os, pathlib, sys, time\n"
        f"c = pathlib.Path({str(control)!r})\n"
        "(c / 'pause').write_text(str(os.getpid()))\n"
        "while not (c / 'paused').exists(): time.sleep(0.05)\n"
        "os._exit(9)\n")])
    assert child.wait(timeout=120) == 9
    t0 = time.monotonic()
    while server.status(paths).running and time.monotonic() - t0 < 60:
        time.sleep(0.2)
    assert not server.status(paths).running
    assert "died while the database was paused" in paths.log.read_text()
    st = server.start(port=server.free_port(), http_port=None, paths=paths, echo=lambda line: None)
    assert st.running
    with connect() as again:
        assert again._query("MATCH (k:Keep) RETURN k.v AS v")[0]["v"] == 1


def test_a_swap_interrupted_half_way_is_completed_by_the_next_start(local, store, monkeypatch):
    paths, _ = local
    rel = _release(subjects=90, locations=3)

    def half(paths_: server.Paths, job: Path) -> None:  # the first of the two renames, then Ctrl-C
        live, staged, previous = bulk._swap_dirs(paths_, job)[0]
        previous.parent.mkdir(parents=True, exist_ok=True)
        live.rename(previous)
        staged.rename(live)
        raise KeyboardInterrupt

    monkeypatch.setattr(bulk, "_swap", half)
    with pytest.raises(KeyboardInterrupt):
        store.load_release(rel, name="h1", bulk="always")
    assert not server.status(paths).running  # stopped rather than reopened on a half-swapped store
    assert bulk.journal(paths)["phase"] == "swapping"
    monkeypatch.undo()
    lines: list[str] = []
    server.start(port=server.free_port(), http_port=None, paths=paths, echo=lines.append)
    assert any("completed the interrupted bulk import of release 'h1'" in line for line in lines)
    with connect() as again:
        assert again.release_info("h1").status == "loading"
        done = again.load_release(rel, name="h1", bulk="always")
        assert done.why == "completed an interrupted import" and done.status == "loaded"
        assert done.rows == len(rel.frame.drop_duplicates())
        assert not bulk.journal(paths)


def _results(rel: Release) -> dict:
    """The link graph, an audit with violations (the smallest k of 2, 4, 8, ... that has some) and REIDIT-I pairs
    (with reasons) of ``rel``, as the CLI computes them."""
    from graphlink.analysis.audit import audit
    from graphlink.analysis.matching import classify_edges
    from graphlink.analysis.reidit import reidentify
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails

    tr = build_trails(rel)
    classes = classify_edges(build_linkgraph(tr))
    k = 2
    while not len(audit(classes, k).violations):
        k *= 2
    return {"classes": classes, "audit": audit(classes, k), "reidentification": reidentify(tr, "incomplete",
                                                                                         explain=True)}


def test_results_by_one_bulk_import_equal_batches_and_plain_queries(local, store, monkeypatch):
    """A new release and its results (link graph with element LINKs, audit, re-identification) through one
    import, through concurrent UNWIND batches (cut small, so that many run at once), and row by row with plain
    queries (tests/writeback_reference.py): the same graph, property values and types included."""
    from graphlink.store import classgraph, writeback
    from tests import writeback_reference as ref

    rel = _release(subjects=200, locations=8)   # some unique trails: REIDIT-I finds pairs
    res = _results(rel)
    assert len(res["audit"].violations) and len(res["reidentification"].pairs)
    lines: list[str] = []
    out = store.write_results(rel, "bulk-res", bulk="always", progress=lambda f, m: lines.append(m), **res)
    assert out.method == "bulk-import" and out.why == "the local database was empty", out
    assert set(out.runs) == {"link_graph", "audit", "reidentification"}
    assert out.release.status == "loaded" and any("neo4j-admin" in m for m in lines)

    monkeypatch.setattr(classgraph, "CHUNK", 37)
    monkeypatch.setattr(classgraph, "LINK_CHUNK", 53)
    monkeypatch.setattr(writeback, "PAIR_CHUNK", 11)
    lines.clear()
    again = store.write_results(rel, "unwind-res", bulk="never",
                                progress=lambda f, m: lines.append(m), **res)
    assert again.method == "unwind" and again.release.method == "unwind"
    assert any("link graph rows written" in m for m in lines) and any("pairs written" in m for m in lines)

    store.load_release(rel, name="plain-res", bulk="never")
    ref.write_link_graph(store, "plain-res", res["classes"])
    ref.write_audit(store, "plain-res", res["audit"])
    ref.write_reidentification(store, "plain-res", res["reidentification"])

    plain = ref.graph(store, "plain-res")
    assert sum(n for (t, *_), n in plain["rels"].items() if t == "LINK") > len(res["classes"].graph.class_ei)
    assert ref.graph(store, "bulk-res") == plain
    assert ref.graph(store, "unwind-res") == plain
    # the Cypher library reads the imported results as the engine's
    got = store.run_file("k_unlinkability", {"release": "bulk-res", "k": res["audit"].k})
    want = res["audit"].violations
    assert set(map(tuple, got[["side", "element", "union_degree"]].to_numpy())) == \
        set(map(tuple, want[["side", "element", "union_degree"]].astype({"union_degree": int}).to_numpy()))

    # written again: the release is stored, so batches; the link graph is replaced, audits and pairs accumulate
    third = store.write_results(rel, "bulk-res", **res)
    assert third.method == "unwind" and third.why == "the release is stored already"
    assert third.release.skipped
    kinds = Counter(store.analyses("bulk-res")["kind"])
    assert kinds == {"link-graph": 1, "audit": 2, "reidentification": 2}
    after = ref.graph(store, "bulk-res")
    assert {k: v for k, v in after["nodes"].items() if k[0] != ("Analysis",)} == \
        {k: v for k, v in plain["nodes"].items() if k[0] != ("Analysis",)}
    assert Counter(t for (t, *_), n in after["rels"].items() for _ in range(n))["REIDENTIFIED"] == \
        2 * len(res["reidentification"].pairs)


@pytest.mark.parametrize("estimated", [False, True], ids=["exact", "estimated"])
def test_probabilities_by_one_bulk_import_equal_the_library(local, store, estimated):
    """The link graph with its pair probabilities through one import: every class and element LINK carries the
    library's probability, exactness and error (typed double / boolean / double), as the UNWIND writer sets them
    (tests/store/test_store_risk.py)."""
    from graphlink.store import writeback
    from tests.store.test_store_risk import _library_classes, _release_and_risk, _stored_classes, _stored_elements

    rel, classes, risk = _release_and_risk(estimated)
    out = writeback.write_results(store, rel, "bulk-risk", classes=classes, risk=risk, bulk="always")
    assert out.method == "bulk-import", out
    assert _stored_classes(store, "bulk-risk") == _library_classes(risk)
    want = {(str(r.identified), str(r.deidentified)): (float(r.probability), bool(r.exact), float(r.error))
            for r in risk.pairs().itertuples(index=False)}
    assert _stored_elements(store, "bulk-risk") == want


def test_cli_audit_store_writes_through_one_import(local, store, tmp_path):
    from typer.testing import CliRunner

    from graphlink.cli import app

    rel = _release(subjects=80, locations=3)
    path = tmp_path / "audit-rel.csv"
    rel.frame.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    set_config(bulk_min_rows=1)       # the CLI runs in this process, whose settings were read already
    runner = CliRunner()
    cmd = ["audit", str(path), "--k", "2", "--reserved", "deidentified", "--store", "neo4j", "--name", "a1"]
    res = runner.invoke(app, cmd)
    assert res.exit_code == 0, res.output
    assert "by one bulk import with the release (the local database was empty)" in " ".join(res.output.split())
    res = runner.invoke(app, cmd)
    assert res.exit_code == 0, res.output
    assert "by batched transactions (the release is stored already)" in " ".join(res.output.split())
    with connect() as st:
        assert Counter(st.analyses("a1")["kind"]) == {"link-graph": 1, "audit": 2}


def test_the_load_locks_heartbeat_neither_spoils_nor_outlives_a_bulk_import(local, store, monkeypatch):
    """The lock's heartbeat writes to the database, and any write between the importer's snapshot and the swap
    keeps the old store: heartbeats pause for the import. The new store has no lock node: the load puts its own
    back (same token) and so still owns its lock when it marks the release loaded."""
    from graphlink.store import neo4j as store_module

    monkeypatch.setattr(store_module, "HEARTBEAT", 0.05)       # a heartbeat in every step of the import
    rel = _release(subjects=120, locations=4)
    tokens: list[list] = []

    def watch(fraction: float, message: str) -> None:
        tokens.append([r["t"] for r in store._query("MATCH (l:LoadLock) RETURN l.token AS t")])

    info = store.load_release(rel, name="beating", bulk="always", progress=watch)
    assert info.method == "bulk-import" and info.status == "loaded", info
    assert tokens and len({t for seen in tokens for t in seen}) == 1       # one lock, one token, throughout
    assert not store._query("MATCH (l:LoadLock) RETURN l")               # released at the end
