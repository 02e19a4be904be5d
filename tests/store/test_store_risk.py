"""Pair probabilities on the stored link graph (graphlink/store/classgraph.py, writeback.py): every class and
element LINK written with a ``RiskResult`` carries ``probability``, ``probability_exact`` and
``probability_error`` equal to the library's (:func:`graphlink.analysis.risk.pair_probabilities`), through the
UNWIND batches and ``graphlink risk --store neo4j``; without one those properties are absent; and
``cypher/most_likely_reidentified.cypher`` names each person's most likely record as ``RiskResult.people()`` does.
The bulk importer's half is in tests/store/test_store_bulk.py."""

from __future__ import annotations

import pytest

from graphlink.store import classgraph, writeback
from tests.cli_runner import run_cli

pytestmark = pytest.mark.neo4j


def _release_and_risk(estimated: bool = False):
    """A simulated release with null trails and twins, and its pair probabilities (with ``estimated``: every block
    of more than one class pair estimated by a fixed number of sweeps, so errors are non-zero)."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.analysis.risk import pair_probabilities
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_uniform

    rel = simulate_uniform(subjects=50, locations=8, p=0.25, withhold=0.3, reserved="deidentified", seed=11)
    g = build_linkgraph(build_trails(rel))
    classes = classify_edges(g)
    chain = {"max_exact_states": 1, "budget": None, "sweeps": 200} if estimated else {}
    return rel, classes, pair_probabilities(g, classes=classes, seed=3, **chain)


def _stored_classes(store, name: str) -> dict:
    rows = store.run_cypher("""MATCH (x:TrailClass {release: $r, side: 'identified'})-[l:LINK]->(y:TrailClass)
                               RETURN x.cid AS ci, y.cid AS cj, l.probability AS p, l.probability_exact AS x,
                                      l.probability_error AS e""", {"r": name})
    return {(int(r.ci), int(r.cj)): (r.p, r.x, r.e) for r in rows.itertuples(index=False)}


def _stored_elements(store, name: str) -> dict:
    rows = store.run_cypher("""MATCH (i:Identified {release: $r})-[l:LINK]->(d:Deidentified)
                               RETURN i.key AS i, d.key AS d, l.probability AS p, l.probability_exact AS x,
                                      l.probability_error AS e""", {"r": name})
    return {(r.i, r.d): (r.p, r.x, r.e) for r in rows.itertuples(index=False)}


def _library_classes(risk) -> dict:
    g = risk.graph
    return {(int(a), int(b)): (float(p), bool(x), float(e)) for a, b, p, x, e in
            zip(g.class_ei, g.class_ej, risk.class_probability, risk.class_exact, risk.class_error, strict=True)}


@pytest.mark.parametrize("estimated", [False, True], ids=["exact", "estimated"])
def test_stored_probabilities_equal_the_library(neo4j_store, release_name, monkeypatch, estimated):
    rel, classes, risk = _release_and_risk(estimated)
    assert risk.exact is not estimated and bool((risk.class_error > 0).any()) is estimated
    monkeypatch.setattr(classgraph, "CHUNK", 13)            # several concurrent batches of each kind
    monkeypatch.setattr(classgraph, "LINK_CHUNK", 29)
    out = writeback.write_results(neo4j_store, rel, release_name, classes=classes, risk=risk, bulk="never")
    assert out.method == "unwind"
    assert _stored_classes(neo4j_store, release_name) == _library_classes(risk)   # floats sent as they are
    pairs = risk.pairs()
    want = {(str(r.identified), str(r.deidentified)): (float(r.probability), bool(r.exact), float(r.error))
            for r in pairs.itertuples(index=False)}
    assert len(want) == risk.graph.n_expanded_edges and _stored_elements(neo4j_store, release_name) == want


def test_without_probabilities_the_links_carry_none(neo4j_store, release_name):
    rel, classes, _ = _release_and_risk()
    writeback.write_results(neo4j_store, rel, release_name, classes=classes, bulk="never")
    stored = list(_stored_classes(neo4j_store, release_name).values()) + \
        list(_stored_elements(neo4j_store, release_name).values())
    assert stored and all(v == (None, None, None) for v in stored)
    assert not len(neo4j_store.run_file("most_likely_reidentified", {"release": release_name, "min": 0.0}))


def test_risk_store_cli_and_the_most_likely_query(neo4j_store, release_name, neo4j_env, tmp_path):
    """``graphlink risk --store neo4j`` writes what the library computes, and the analyst query reads each
    person's most likely record back: the same people, probabilities and tie counts as ``RiskResult.people()``,
    the record one of the tied twins."""
    rel, _, risk = _release_and_risk()
    path = tmp_path / "release.csv"
    rel.frame.to_csv(path, index=False)
    done = run_cli("risk", str(path), "--store", "neo4j", "--name", release_name, "--reserved", "deidentified",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "stored the link graph with its probabilities" in done.stderr
    assert _stored_classes(neo4j_store, release_name) == _library_classes(risk)      # every block exact: no seed
    got = neo4j_store.run_file("most_likely_reidentified", {"release": release_name, "min": 0.0, "limit": 10_000})
    people = risk.people()
    people = people[people.probability > 0]
    assert sorted(got.identified) == sorted(map(str, people.identified))
    g = risk.graph
    twins = {str(k): g.de_class[j] for j, k in enumerate(g.trails.deidentified.keys)}
    by_person = people.set_index(people.identified.astype(str))
    for r in got.itertuples(index=False):
        want = by_person.loc[r.identified]
        assert (r.probability, r.exact, r.error, r.tied) == (want.probability, want.exact, want.error, want.tied)
        assert twins[r.deidentified] == twins[str(want.deidentified)]
    assert list(got.probability) == sorted(got.probability, reverse=True)
    top = neo4j_store.run_file("most_likely_reidentified", {"release": release_name, "min": 0.9, "limit": 3})
    assert len(top) == min(3, int((people.probability >= 0.9).sum())) and (top.probability >= 0.9).all()
