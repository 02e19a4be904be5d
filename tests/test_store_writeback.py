"""Write-back in concurrent UNWIND batches (graphlink/store/writeback.py) into a database that holds other data:
the graph equals the one plain per-row queries write (tests/writeback_reference.py), for one-to-one and
one-to-many link graphs, with batches cut small so that several run at once; a batch that cannot create all its
rows fails; replacing a link graph leaves nothing of the old one. The bulk-import side of the comparison is in
tests/test_store_bulk.py (it needs a private, empty server)."""

from __future__ import annotations

from collections import Counter

import pytest

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
    assert out["method"] == "unwind" and "GRAPHLINK_BULK_MIN_ROWS" in out["why"]   # far below the size rule
    neo4j_store.load_release(rel, name=other_name)
    ref.write_link_graph(neo4j_store, other_name, mc)
    ref.write_audit(neo4j_store, other_name, res["audit"])
    ref.write_reidentification(neo4j_store, other_name, res["reidentification"])
    assert ref.graph(neo4j_store, release_name) == ref.graph(neo4j_store, other_name)


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
    out = batches.Batches(neo4j_store, lambda f, m: rows.append((f, m)), total=4, what="pairs", workers=2)
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
