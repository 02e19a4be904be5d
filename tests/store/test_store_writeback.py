"""Write-back in concurrent UNWIND batches (graphlink/store/writeback.py) into a database that holds other data:
the graph equals the one plain per-row queries write (tests/writeback_reference.py), for one-to-one and
one-to-many link graphs, with batches cut small so that several run at once; a batch that cannot create all its
rows fails; replacing a link graph leaves nothing of the old one. The bulk-import side of the comparison is in
tests/store/test_store_bulk.py (it needs a private, empty server)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.errors import StoreError
from graphlink.store import batches, classgraph, writeback
from tests import writeback_reference as ref

pytestmark = pytest.mark.neo4j


@pytest.fixture
def other_name(neo4j_store):
    from tests.store_fixtures import fresh_release_name

    yield from fresh_release_name(neo4j_store)


def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(classgraph, "CHUNK", 13)
    monkeypatch.setattr(classgraph, "LINK_CHUNK", 29)
    monkeypatch.setattr(writeback, "PAIR_CHUNK", 3)


def test_one_to_many_results_equal_plain_queries(neo4j_store, release_name, other_name, monkeypatch):
    from graphlink.analysis.audit import audit
    from graphlink.analysis.onetomany import classify_one_to_many
    from graphlink.analysis.reidit import reidentify
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_households

    rel = simulate_households(30, 0.3, locations=6, withhold=0.2, seed=4)
    tr = build_trails(rel)
    assert tr.one_to_many
    mc = classify_one_to_many(build_linkgraph(tr))
    res = {"classes": mc, "audit": audit(mc, 3), "reidentification": reidentify(tr, "true-loves", explain=True)}
    _small_batches(monkeypatch)
    out = neo4j_store.write_results(rel, release_name, **res)
    assert out.method == "unwind" and "GRAPHLINK_BULK_MIN_ROWS" in out.why   # far below the size rule
    neo4j_store.load_release(rel, name=other_name)
    ref.write_link_graph(neo4j_store, other_name, mc)
    ref.write_audit(neo4j_store, other_name, res["audit"])
    ref.write_reidentification(neo4j_store, other_name, res["reidentification"])
    assert ref.graph(neo4j_store, release_name) == ref.graph(neo4j_store, other_name)


@pytest.mark.slow
def test_replacing_a_link_graph_leaves_nothing_of_the_old_one(neo4j_store, release_name, other_name, monkeypatch):
    """A second link graph replaces the first (that of four of the six locations, as if the release had been
    analysed before it grew): drop works class by class in batches, and the graph is then the one a single write
    gives."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_uniform

    rel = simulate_uniform(150, 6, 0.5, withhold=0.2, seed=3)
    from graphlink.core.release import Release

    part = Release(frame=rel.frame[rel.frame["location"].isin(["L01", "L02", "L03", "L04"])], name="part")
    first = classify_edges(build_linkgraph(build_trails(part, multiplicity="one-to-one")))
    second = classify_edges(build_linkgraph(build_trails(rel)))
    _small_batches(monkeypatch)
    neo4j_store.load_release(rel, name=release_name)
    neo4j_store.write_link_graph(release_name, first)
    neo4j_store.write_link_graph(release_name, second)
    neo4j_store.load_release(rel, name=other_name)
    ref.write_link_graph(neo4j_store, other_name, second)
    got, want = ref.graph(neo4j_store, release_name), ref.graph(neo4j_store, other_name)
    assert got == want
    assert Counter(neo4j_store.analyses(release_name)["kind"]) == {"link-graph": 1}


def test_a_batch_that_cannot_create_all_its_rows_fails(neo4j_store, release_name):
    from graphlink.simulation.simulate import simulate_uniform

    neo4j_store.load_release(simulate_uniform(20, 3, 0.5, seed=1), name=release_name)
    rows = []
    out = batches.Batches(neo4j_store.conn, lambda f, m: rows.append((f, m)), total=4, what="pairs", workers=2)
    with pytest.raises(StoreError, match="created 1 of its 2 rows") as refused:
        out.run("""UNWIND $keys AS k MATCH (e:Identified {release: $release, key: k})
                   SET e.touched = true RETURN count(*) AS n""",
                [{"release": release_name, "keys": ["p000000", "p000001"]},
                 {"release": release_name, "keys": ["p000002", "no such key"]}], rows="keys")
    assert "\n" not in str(refused.value)


def test_writers_setting(monkeypatch):
    monkeypatch.setenv("GRAPHLINK_NEO4J_WRITERS", "5")
    assert batches.writers() == 5
    for bad in ("0", "many"):
        monkeypatch.setenv("GRAPHLINK_NEO4J_WRITERS", bad)
        with pytest.raises(StoreError, match="GRAPHLINK_NEO4J_WRITERS"):
            batches.writers()


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 40)), unique=True, max_size=300),
       st.integers(1, 5), st.integers(1, 50))
@settings(max_examples=200, deadline=None)
def test_rounds_write_every_class_link_once_with_lanes_on_disjoint_classes(edges, lanes, chunk):
    """The class LINKs' schedule (classgraph.rounds): every row in exactly one batch of at most ``chunk`` rows, at
    most ``lanes`` lanes a round, and no two lanes of a round reach the same class at either end (so concurrent
    transactions never wait for each other's node locks)."""
    import numpy as np

    edges = sorted(edges)
    ci = np.array([a for a, _ in edges], np.int64)
    cj = np.array([b for _, b in edges], np.int64)
    schedule = classgraph.rounds(ci, cj, lanes, chunk)
    rows = [int(r) for rnd in schedule for lane in rnd for batch in lane for r in batch]
    assert sorted(rows) == list(range(len(edges)))
    for rnd in schedule:
        assert 1 <= len(rnd) <= lanes
        assert all(1 <= len(batch) <= chunk for lane in rnd for batch in lane)
        ends = [(set(ci[np.concatenate(lane)].tolist()), set(cj[np.concatenate(lane)].tolist())) for lane in rnd]
        for a in range(len(ends)):
            for b in range(a + 1, len(ends)):
                assert not ends[a][0] & ends[b][0] and not ends[a][1] & ends[b][1]


def test_lanes_run_side_by_side_each_in_order_and_check_their_rows():
    """Batches.run_lanes: one lane's batches one after another, the lanes at the same time, every batch's count
    checked and reported."""
    import threading

    seen: list[tuple[str, int]] = []
    both = threading.Barrier(2, timeout=10)    # fails unless the two lanes run at the same time

    class FakeConnection:
        def query(self, query, params):
            if params["i"] == 0:
                both.wait()
            seen.append((params["lane"], params["i"]))
            return [{"n": len(params["rows"]) - params.get("short", 0)}]

    lanes = [[{"lane": name, "i": i, "rows": [0] * 3} for i in range(4)] for name in "ab"]
    progress = []
    out = batches.Batches(FakeConnection(), lambda f, m: progress.append(f), total=24, workers=2)
    assert out.run_lanes("q", lanes, rows="rows") == 24
    for name in "ab":
        assert [i for lane, i in seen if lane == name] == [0, 1, 2, 3]
    assert len(progress) == 8 and progress[-1] == 1.0
    with pytest.raises(StoreError, match="created 2 of its 3 rows"):
        out.run_lanes("q", [[{"lane": "c", "i": 1, "rows": [0] * 3, "short": 1}]], rows="rows")


def test_the_same_link_graph_again_is_kept_and_an_interrupted_one_replaced(neo4j_store, release_name, monkeypatch):
    """Writing the link graph that is stored already (same fingerprint) keeps it: no relationship is deleted or
    created and its run stays. One whose write was interrupted (no fingerprint: it is set last) or that differs
    (that of four of the six locations) is replaced, and the graph is then the one a single write gives."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_uniform
    from graphlink.store import connection

    rel = simulate_uniform(150, 6, 0.5, withhold=0.2, seed=3)
    classes = classify_edges(build_linkgraph(build_trails(rel, multiplicity="one-to-one")))
    _small_batches(monkeypatch)
    neo4j_store.load_release(rel, name=release_name)
    first = neo4j_store.write_link_graph(release_name, classes)
    written = ref.graph(neo4j_store, release_name)
    writes: list[str] = []
    plain = connection.Connection.query

    def watched(self, cypher, params=None, database=None):
        if any(w in cypher for w in ("CREATE", "DELETE")):
            writes.append(cypher)
        return plain(self, cypher, params, database)

    monkeypatch.setattr(connection.Connection, "query", watched)
    assert neo4j_store.write_link_graph(release_name, classes) == first
    assert writes == [] and ref.graph(neo4j_store, release_name) == written
    neo4j_store._query("MATCH (a:Analysis {run: $run}) REMOVE a.fingerprint", {"run": first})
    again = neo4j_store.write_link_graph(release_name, classes)
    assert again != first and writes
    assert ref.graph(neo4j_store, release_name) == written
    from graphlink.core.release import Release

    part = Release(frame=rel.frame[rel.frame["location"].isin(["L01", "L02", "L03", "L04"])], name="part")
    other = classify_edges(build_linkgraph(build_trails(part, multiplicity="one-to-one")))
    assert classgraph.tables(other).fingerprint() != classgraph.tables(classes).fingerprint()
    assert neo4j_store.write_link_graph(release_name, other) != again
    assert Counter(neo4j_store.analyses(release_name)["kind"]) == {"link-graph": 1}
