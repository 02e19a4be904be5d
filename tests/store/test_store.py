"""The Neo4j store against a live server: loading, Cypher library == Python engine, write-back, read-only runner.

Oracles: the core engine (graphlink.core.trails / linkgraph / reidit / matching / audit) on the same random simulated
releases; the input frame itself for round trips.
"""

from __future__ import annotations

import time

import pandas as pd
import pytest

from graphlink.analysis.audit import audit
from graphlink.analysis.matching import classify_edges
from graphlink.analysis.reidit import reidentify, reidit_c
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.errors import StoreError
from graphlink.simulation.simulate import simulate_uniform

pytestmark = pytest.mark.neo4j

# (subjects, locations, p, withhold, reserved, seed): reserved both ways, unreserved, and dense/sparse visits
CASES = [
    (40, 6, 0.5, 0.3, "deidentified", 1),
    (40, 5, 0.4, 0.0, "none", 2),
    (35, 7, 0.6, 0.25, "identified", 3),
]


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def _counts(store, name: str) -> tuple[int, int, int]:
    df = store.run_cypher(
        """RETURN COUNT { (:Identified {release: $n}) } AS i, COUNT { (:Deidentified {release: $n}) } AS d,
                  COUNT { (:Location {release: $n})<-[:DISCLOSED_AT]-() } AS r""", {"n": name})
    return tuple(int(x) for x in df.iloc[0])


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[4]}-seed{c[5]}")
def loaded(request, neo4j_store):
    """A simulated release loaded under a unique name, with the engine's trails for it."""
    subjects, locations, p, withhold, reserved, seed = request.param
    rel = simulate_uniform(subjects, locations, p, withhold=withhold, reserved=reserved, seed=seed)
    name = f"test-sim-{reserved}-{seed}"
    neo4j_store.drop_release(name)
    neo4j_store.load_release(rel, name=name)
    # simulated one-to-one data: identified withholding would otherwise be read one-to-many (graphlink.core.model)
    yield name, rel, build_trails(rel, multiplicity="one-to-one")
    neo4j_store.drop_release(name)


# ---------------------------------------------------------------------------------------------- loading
def test_load_then_read_back_equals_input(neo4j_store, release_name):
    rel = simulate_uniform(50, 6, 0.5, withhold=0.2, seed=11)
    info = neo4j_store.load_release(rel, name=release_name)
    assert info.rows == len(rel.frame)
    assert info.locations == len(rel.locations)
    assert info.reserved == build_trails(rel).reserved
    back = neo4j_store.read_release(release_name)
    assert list(back.columns) == ["location", "kind", "element"]
    pd.testing.assert_frame_equal(_sorted(back), _sorted(rel.frame[["location", "kind", "element"]].astype(str)))
    assert release_name in {r.name for r in neo4j_store.list_releases()}


def test_stored_releases_are_frozen_typed_records_of_the_input(neo4j_store, release_name):
    """release_info / list_releases: frozen records whose figures are the input's (oracle: the frame itself)."""
    import dataclasses

    from graphlink.store.reports import StoredRelease

    rel = simulate_uniform(30, 4, 0.5, withhold=0.2, seed=13)
    assert neo4j_store.release_info(release_name) is None
    neo4j_store.load_release(rel, name=release_name)
    info = neo4j_store.release_info(release_name)
    assert isinstance(info, StoredRelease)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.status = "loading"  # type: ignore[misc]
    frame = rel.frame
    assert (info.name, info.status, info.rows, info.locations) == (release_name, "loaded", len(frame),
                                                                   len(rel.locations))
    for kind in ("identified", "deidentified"):
        assert getattr(info, kind) == frame.loc[frame["kind"] == kind, "element"].nunique()
    assert info.loaded_at and info.created_at and info.load_method in ("unwind", "bulk-import")
    assert info.as_dict()["fingerprint"] == info.fingerprint
    listed = [r for r in neo4j_store.list_releases() if r.name == release_name]
    assert listed == [info]
    assert neo4j_store.break_lock(release_name) is None                  # no load runs: no lock to remove


def test_unwind_load_runs_its_batches_on_concurrent_sessions(neo4j_store, release_name, monkeypatch):
    """A release loaded in UNWIND batches (a database that holds other data) sends its element batches on the
    write-back's concurrent sessions, several at a time, and the graph is still exactly the release: every
    disclosure once, progress counted in disclosures up to all of them."""
    import threading

    from graphlink.store import connection

    rel = simulate_uniform(120, 6, 0.5, withhold=0.2, seed=13)
    threads: set[str] = set()
    running, most = [0], [0]
    lock = threading.Lock()
    plain = connection.Connection.query

    def watched(self, cypher, params=None, database=None):
        if "$elements" not in cypher:
            return plain(self, cypher, params, database)
        with lock:
            threads.add(threading.current_thread().name)
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.05)           # long enough for the next batch to be sent meanwhile
            return plain(self, cypher, params, database)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(connection.Connection, "query", watched)
    seen: list[tuple[float, str]] = []
    info = neo4j_store.load_release(rel, name=release_name, batch_size=20, bulk="never",
                                    progress=lambda f, m: seen.append((f, m)))
    assert info.method == "unwind" and info.rows == len(rel.frame)
    assert len(threads) >= 2 and most[0] >= 2
    assert seen[-1][0] == 1.0 and f"{len(rel.frame):,}/{len(rel.frame):,} disclosures" in seen[-1][1]
    back = neo4j_store.read_release(release_name)
    pd.testing.assert_frame_equal(_sorted(back), _sorted(rel.frame[["location", "kind", "element"]].astype(str)))


def test_the_driver_packs_parameters_with_its_compiled_encoder():
    """The neo4j extra brings the driver's compiled Bolt encoder: a write-back's parameter lists of 100,000 rows
    packed in pure Python cost a client CPU-second each."""
    from neo4j._codec.packstream import v1

    assert v1._rust_pack is not None


def test_load_twice_changes_nothing_and_interrupted_load_completes(neo4j_store, release_name):
    rel = simulate_uniform(60, 5, 0.5, withhold=0.2, seed=12)
    first = neo4j_store.load_release(rel, name=release_name, batch_size=50)
    counts = _counts(neo4j_store, release_name)
    again = neo4j_store.load_release(rel, name=release_name, batch_size=50)
    assert again.skipped and _counts(neo4j_store, release_name) == counts
    # force the MERGE path over an already complete release: still nothing changes
    neo4j_store.run_cypher("MATCH (r:Release {name: $n}) SET r.status = 'loading'", {"n": release_name},
                           write=True)
    redo = neo4j_store.load_release(rel, name=release_name, batch_size=50)
    assert not redo.skipped and _counts(neo4j_store, release_name) == counts
    assert redo.rows == first.rows == len(rel.frame)

    # an interrupted load (stopped after its first batch) completes on re-run
    other = release_name + "-int"

    def boom(fraction: float, message: str) -> None:
        raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            neo4j_store.load_release(rel, name=other, progress=boom, batch_size=50)
        assert neo4j_store.release_info(other).status == "loading"
        assert _counts(neo4j_store, other)[2] < len(rel.frame)
        done = neo4j_store.load_release(rel, name=other, batch_size=50)
        assert done.status == "loaded" and _counts(neo4j_store, other) == counts
        pd.testing.assert_frame_equal(_sorted(neo4j_store.read_release(other)),
                                      _sorted(rel.frame[["location", "kind", "element"]].astype(str)))
    finally:
        neo4j_store.drop_release(other)


def test_different_content_under_same_name_is_refused_unless_replaced(neo4j_store, release_name):
    a = simulate_uniform(20, 4, 0.5, seed=1)
    b = simulate_uniform(20, 4, 0.5, seed=2)
    neo4j_store.load_release(a, name=release_name)
    with pytest.raises(StoreError, match="different content"):
        neo4j_store.load_release(b, name=release_name)
    neo4j_store.load_release(b, name=release_name, replace=True)
    pd.testing.assert_frame_equal(_sorted(neo4j_store.read_release(release_name)),
                                  _sorted(b.frame[["location", "kind", "element"]].astype(str)))


def test_truth_is_loaded_as_entities(neo4j_store, release_name):
    rel = simulate_uniform(15, 3, 0.6, seed=5)
    info = neo4j_store.load_release(rel, name=release_name)
    assert info.entities == len(rel.truth)
    pairs = neo4j_store.run_cypher(
        """MATCH (i:Identified)<-[:APPEARS_AS]-(t:Entity {release: $n})-[:APPEARS_AS]->(d:Deidentified)
           RETURN i.key AS identified, d.key AS deidentified""", {"n": release_name})
    present_i = set(rel.elements("identified"))
    present_d = set(rel.elements("deidentified"))
    want = rel.truth[rel.truth["identified"].isin(present_i) & rel.truth["deidentified"].isin(present_d)]
    assert set(map(tuple, pairs.to_numpy())) == set(map(tuple, want[["identified", "deidentified"]].to_numpy()))


def test_constraint_violation_is_reported_clearly(neo4j_store, release_name):
    neo4j_store.load_release(simulate_uniform(5, 2, 0.9, seed=3), name=release_name)
    key = neo4j_store.read_release(release_name)["element"].iloc[0]
    label = "Identified" if key.startswith("p") else "Deidentified"
    with pytest.raises(StoreError, match="constraint"):
        neo4j_store.run_cypher(f"CREATE (:{label} {{release: $n, key: $k}})", {"n": release_name, "k": key},
                               write=True)


# ---------------------------------------------------------------------------------------------- Cypher == engine
def test_cypher_trails_equal_engine(neo4j_store, loaded):
    name, rel, trails = loaded
    df = neo4j_store.run_file("trails", {"release": name})
    assert set(df["reserved"]) == {trails.reserved}
    got = {(k, e): t for k, e, t in df[["kind", "element", "trail"]].itertuples(index=False)}
    want = {}
    for kind, side in (("identified", trails.identified), ("deidentified", trails.deidentified)):
        for i, key in enumerate(side.keys):
            want[(kind, str(key))] = side.trail_str(i)
    assert got == want


def test_cypher_link_edges_equal_engine(neo4j_store, loaded):
    name, rel, trails = loaded
    g = build_linkgraph(trails)
    want = {(str(trails.identified.keys[i]), str(trails.deidentified.keys[j])) for i, j in zip(g.ei, g.ej,
                                                                                                strict=True)}
    df = neo4j_store.run_file("link_edges", {"release": name})
    assert set(map(tuple, df.to_numpy())) == want
    assert len(df) == len(want)


def test_cypher_reidit_c_equals_engine(neo4j_store, loaded):
    name, rel, trails = loaded
    want = reidit_c(trails).pairs
    df = neo4j_store.run_file("reidit_c", {"release": name})
    assert set(map(tuple, df[["identified", "deidentified"]].to_numpy())) == \
        set(map(tuple, want[["identified", "deidentified"]].to_numpy()))


def test_leave_one_location_out_equals_engine(neo4j_store, loaded):
    name, rel, trails = loaded
    df = neo4j_store.run_file("leave_one_location_out", {"release": name}).set_index("location")
    base = len(reidit_c(trails).pairs)
    for loc in rel.locations:
        reduced = rel.with_frame(rel.frame[rel.frame["location"] != loc])
        assert df.loc[loc, "reidentified_all"] == base
        again = build_trails(reduced, multiplicity=trails.multiplicity)
        assert df.loc[loc, "reidentified_without"] == len(reidit_c(again).pairs), loc


def test_link_graph_write_back_and_k_unlinkability_equal_engine(neo4j_store, loaded):
    name, rel, trails = loaded
    classes = classify_edges(build_linkgraph(trails))
    run = neo4j_store.write_link_graph(name, classes)
    g = classes.graph
    back = neo4j_store.read_link_graph(name)          # element pairs expanded from the class graph
    assert set(back["run"]) <= {run}
    want = {(str(trails.identified.keys[i]), str(trails.deidentified.keys[j])): (bool(a), bool(v))
            for i, j, a, v in zip(g.ei, g.ej, classes.allowed, classes.vital, strict=True)}
    got = {(r.identified, r.deidentified): (r.allowed, r.vital) for r in back.itertuples(index=False)}
    assert got == want
    # class flows: the engine's maximum matching, never more than a class's size
    flows = neo4j_store.run_cypher("""MATCH (a:TrailClass {release: $n})-[l:LINK]->(b:TrailClass)
                                      RETURN a.cid AS a, b.cid AS b, l.flow AS flow, a.size AS sa, b.size AS sb""",
                                   {"n": name})
    assert flows["flow"].sum() == int((classes.mate_identified >= 0).sum())
    assert (flows.groupby("a")["flow"].sum() <= flows.groupby("a")["sa"].first()).all()
    # small release: the element-level LINK edges are there too, matched ones forming the engine's matching
    elem = neo4j_store.run_cypher("""MATCH (i:Identified {release: $n})-[l:LINK]->(d:Deidentified)
                                     RETURN i.key AS i, d.key AS d, l.matched AS matched""", {"n": name})
    assert len(elem) == len(want)
    matched = elem[elem["matched"]]
    assert matched["i"].is_unique and matched["d"].is_unique
    assert len(matched) == int((classes.mate_identified >= 0).sum())
    for k in (1, 2, 3):
        want_v = audit(classes, k).violations
        got_v = neo4j_store.run_file("k_unlinkability", {"release": name, "k": k})
        assert set(map(tuple, got_v[["side", "element", "union_degree"]].to_numpy())) == \
            set(map(tuple, want_v[["side", "element", "union_degree"]].astype({"union_degree": int}).to_numpy()))


def test_one_to_many_link_graph_and_trails_follow_the_engine(neo4j_store, release_name):
    """Households (Appendix A): the model the engine decides is recorded, so Cypher trails/links match it."""
    from graphlink.analysis.onetomany import classify_one_to_many
    from graphlink.simulation.simulate import simulate_households

    rel = simulate_households(30, 0.3, locations=6, withhold=0.2, seed=4)
    trails = build_trails(rel)
    assert trails.one_to_many
    neo4j_store.load_release(rel, name=release_name)
    mc = classify_one_to_many(build_linkgraph(trails))
    neo4j_store.write_link_graph(release_name, mc)
    df = neo4j_store.run_file("trails", {"release": release_name})
    assert set(df["multiplicity"]) == {"one-to-many"}
    got = {(k, e): t for k, e, t in df[["kind", "element", "trail"]].itertuples(index=False)}
    assert got == {(kind, str(key)): side.trail_str(i) for kind, side in (("identified", trails.identified),
                                                                         ("deidentified", trails.deidentified))
                   for i, key in enumerate(side.keys)}
    g = mc.graph
    links = neo4j_store.run_file("link_edges", {"release": release_name})
    assert set(map(tuple, links.to_numpy())) == {(str(trails.identified.keys[i]), str(trails.deidentified.keys[j]))
                                                 for i, j in zip(g.ei, g.ej, strict=True)}
    for k in (2, 3):
        want_v = audit(mc, k).violations
        got_v = neo4j_store.run_file("k_unlinkability", {"release": release_name, "k": k})
        assert set(map(tuple, got_v[["side", "element", "union_degree"]].to_numpy())) == \
            set(map(tuple, want_v[["side", "element", "union_degree"]].astype({"union_degree": int}).to_numpy()))
    certain = neo4j_store.read_link_graph(release_name)
    certain = set(map(tuple, certain.loc[certain["vital"], ["identified", "deidentified"]].to_numpy()))
    assert certain == set(map(tuple, reidentify(trails, "true-loves").pairs[["identified", "deidentified"]]
                              .to_numpy()))


def test_reidentification_write_back_round_trips(neo4j_store, loaded):
    name, rel, trails = loaded
    result = reidentify(rel, "true-loves")
    run = neo4j_store.write_reidentification(name, result)
    back = neo4j_store.read_reidentification(run)
    assert set(map(tuple, back.to_numpy())) == set(map(tuple, result.pairs[["identified", "deidentified",
                                                                            "reason"]].to_numpy()))
    prov = neo4j_store.analyses(name)
    row = prov[prov["run"] == run].iloc[0]
    assert row["kind"] == "reidentification" and row["method"] == result.method
    # the analyst queries over the written run
    if len(result.pairs):
        loc = rel.locations[0]
        at = neo4j_store.run_file("reidentified_at_location", {"release": name, "location": loc, "run": run})
        disclosed_here = set(rel.frame[(rel.frame["location"] == loc) & (rel.frame["kind"] == "identified")]
                             ["element"])
        assert set(at["identified"]) == set(result.pairs["identified"]) & disclosed_here
        ranked = neo4j_store.run_file("locations_by_contribution", {"release": name, "run": run})
        assert ranked["reidentified"].is_monotonic_decreasing
        assert int(ranked.set_index("location").loc[loc, "reidentified"]) == len(at)
        key = result.pairs["identified"].iloc[0]
        nb = neo4j_store.run_file("neighbourhood", {"release": name, "key": key})
        assert "REIDENTIFIED" in set(nb["relationship"]) and "DISCLOSED_AT" in set(nb["relationship"])


def test_audit_write_back(neo4j_store, loaded):
    name, rel, trails = loaded
    res = audit(classify_edges(build_linkgraph(trails)), 2)
    run = neo4j_store.write_audit(name, res)
    got = neo4j_store.run_cypher(
        """MATCH (a:Analysis {run: $run})-[v:VIOLATES]->(x)
           RETURN v.side AS side, x.key AS element, v.union_degree AS union_degree, a.k_unlinkable AS ok""",
        {"run": run})
    assert set(map(tuple, got[["side", "element", "union_degree"]].to_numpy())) == \
        set(map(tuple, res.violations[["side", "element", "union_degree"]].astype({"union_degree": int})
                .to_numpy()))
    info = neo4j_store.run_cypher("MATCH (a:Analysis {run: $run}) RETURN a.k AS k, a.k_unlinkable AS ok",
                                  {"run": run}).iloc[0]
    assert info["k"] == 2 and bool(info["ok"]) == res.k_unlinkable


# ---------------------------------------------------------------------------------------------- read-only runner
def test_read_only_runner_refuses_writes(neo4j_store, release_name):
    with pytest.raises(StoreError, match="read-only"):
        neo4j_store.run_cypher("CREATE (:Release {name: $n})", {"n": release_name})
    with pytest.raises(StoreError, match="read-only"):
        neo4j_store.run_cypher("MATCH (r:Release) SET r.touched = true RETURN r")
    with pytest.raises(StoreError, match="read-only"):
        neo4j_store.run_file("schema")
    assert neo4j_store.release_info(release_name) is None
    neo4j_store.run_file("schema", write=True)  # idempotent with --write
    df = neo4j_store.run_cypher("RETURN 1 + $x AS y", {"x": 1})
    assert df.to_dict("records") == [{"y": 2}]


def test_missing_parameter_is_named(neo4j_store):
    with pytest.raises(StoreError, match="release"):
        neo4j_store.run_file("trails", {})


def test_run_cypher_accepts_library_text_with_defaults(neo4j_store, release_name):
    """The app's console sends whole library files: header defaults apply, the trailing ';' is fine."""
    from graphlink.store.cypherlib import cypher_dir

    rel = simulate_uniform(12, 3, 0.6, seed=8)
    neo4j_store.load_release(rel, name=release_name)
    text = (cypher_dir() / "trails.cypher").read_text()
    df = neo4j_store.run_cypher(text, {"release": release_name})  # $kind from its default (null)
    assert len(df) == len(rel.elements("identified")) + len(rel.elements("deidentified"))
    with pytest.raises(StoreError, match="read-only"):
        neo4j_store.run_cypher((cypher_dir() / "schema.cypher").read_text())


def test_unreachable_server_is_one_line_error(monkeypatch):
    from graphlink.store import server
    from graphlink.store.neo4j import connect

    monkeypatch.delenv("NEO4J_URI", raising=False)
    port = server.free_port()
    with pytest.raises(StoreError) as err:
        connect(f"bolt://127.0.0.1:{port}")
    msg = str(err.value)
    assert "\n" not in msg and f"127.0.0.1:{port}" in msg and "graphlink neo4j start" in msg


def test_neo4j_database_changed_after_import_reaches_the_server(neo4j_env, neo4j_store, monkeypatch):
    """NEO4J_DATABASE set after graphlink is imported (the CLI runs in this process) is the database the server is
    asked for: a database the server does not have is refused by the server, naming it; unset again, it works."""
    from graphlink.store.neo4j import connect
    from tests.cli_runner import run_cli

    monkeypatch.setenv("NEO4J_DATABASE", "nosuchdb")
    done = run_cli("releases")
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "nosuchdb" in lines[0] and "Traceback" not in done.stderr
    store = connect()
    try:
        assert store.database == "nosuchdb"
    finally:
        store.close()
    monkeypatch.delenv("NEO4J_DATABASE")
    assert run_cli("releases").returncode == 0


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_load_and_cypher(neo4j_env, neo4j_store, release_name, tmp_path):
    from typer.testing import CliRunner

    from graphlink.cli import app

    rel = simulate_uniform(30, 5, 0.5, withhold=0.0, reserved="none", seed=9)
    csv = tmp_path / "rel.csv"
    rel.frame.to_csv(csv, index=False)
    runner = CliRunner()
    res = runner.invoke(app, ["load", str(csv), "--name", release_name])
    assert res.exit_code == 0, res.output
    assert f"{len(rel.frame):,} disclosures" in res.output
    res = runner.invoke(app, ["load", str(csv), "--name", release_name])
    assert res.exit_code == 0 and "already loaded" in res.output
    out = tmp_path / "pairs.csv"
    res = runner.invoke(app, ["cypher", "reidit_c", "--param", f"release={release_name}", "--csv", str(out)])
    assert res.exit_code == 0, res.output
    want = reidit_c(build_trails(read_release(csv))).pairs
    assert set(pd.read_csv(out)["identified"].astype(str)) == set(want["identified"])
    res = runner.invoke(app, ["cypher", "schema"])
    assert res.exit_code != 0 and "read-only" in str(res.exception)


def test_thesis_figure_3_4_in_cypher(neo4j_store, release_name):
    """Thesis Figure 3.4 (four hospitals, de-identified reserved): Cypher trails/links/REIDIT-C == engine."""
    from tests.fixtures import fig34

    rel = read_release(fig34(), name="fig34")
    trails = build_trails(rel)
    neo4j_store.load_release(rel, name=release_name)
    df = neo4j_store.run_file("trails", {"release": release_name})
    got = {(k, e): t for k, e, t in df[["kind", "element", "trail"]].itertuples(index=False)}
    assert got == {(kind, str(key)): side.trail_str(i)
                   for kind, side in (("identified", trails.identified), ("deidentified", trails.deidentified))
                   for i, key in enumerate(side.keys)}
    assert set(df["reserved"]) == {trails.reserved} == {"deidentified"}
    g = build_linkgraph(trails)
    links = neo4j_store.run_file("link_edges", {"release": release_name})
    assert set(map(tuple, links.to_numpy())) == {(str(trails.identified.keys[i]), str(trails.deidentified.keys[j]))
                                                 for i, j in zip(g.ei, g.ej, strict=True)}
    pairs = neo4j_store.run_file("reidit_c", {"release": release_name})
    assert set(map(tuple, pairs[["identified", "deidentified"]].to_numpy())) == \
        set(map(tuple, reidit_c(trails).pairs[["identified", "deidentified"]].to_numpy()))


def test_per_row_element_lookups_carry_index_seek_hints():
    """Every per-row lookup of an element by (release, key) in graphlink's Cypher carries ``USING INDEX SEEK``:
    without it Neo4j 5.26 planned some of them as a scan of the whole (release, key) index filtered per row,
    quadratic in the release (the UNWIND load of 1e6 rows took 117 s instead of 13 s). Checked in the source,
    since the planner's choice depends on the statistics of the moment."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lookup = re.compile(r"MATCH \((\w+):\{?(?:LABEL\[kind\]|Identified|Deidentified)\}?"
                        r" \{\{?release: [$\w.]+, key: ([$\w.\[\]]+)\}\}?\)(?=(.{0,80}))", re.S)
    found = 0
    for path in [*root.glob("graphlink/**/*.py"), *root.glob("cypher/*.cypher")]:
        for m in lookup.finditer(path.read_text(encoding="utf-8")):
            per_row = not m.group(2).startswith("$") or "[" in m.group(2)   # t.key, event.i, $i[n]: one per row
            if per_row:
                found += 1
                own = re.split(r"MATCH|CREATE|MERGE|FOREACH", m.group(3))[0]     # up to the next clause
                assert "USING INDEX SEEK" in own, f"{path.relative_to(root)}: {m.group(0)[:120]}"
    assert found >= 9     # load.cypher 2, writeback 3, classgraph 2, the Spark engine 2


def test_ground_truth_lookups_are_planned_as_seeks(neo4j_store, release_name):
    rel = simulate_uniform(300, 4, 0.6, seed=5)
    neo4j_store.load_release(rel, name=release_name, bulk="never")
    tr = rel.truth.astype(str)
    rows = [{"id": f"{i}|{d}|x", "identified": i, "deidentified": d}
            for i, d in zip(tr["identified"], tr["deidentified"], strict=True)]
    with neo4j_store.driver.session(database=neo4j_store.database) as session:
        plan = session.run("EXPLAIN " + neo4j_store._load.statement("truth").text,
                           {"release": release_name, "truth": rows}).consume().plan

    def operators(p: dict) -> list[str]:
        return [p["operatorType"], *[op for c in p.get("children", []) for op in operators(c)]]

    ops = operators(plan)
    assert not any(op.startswith("NodeIndexScan") for op in ops), ops
    assert sum(op.startswith("NodeUniqueIndexSeek") for op in ops) == 3, ops   # Entity, Identified, Deidentified
