"""QI tables, hierarchies and releases in a live Neo4j: the Cypher library's classes and QI links agree with the
library on Sweeney's table."""

from __future__ import annotations

import uuid
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from graphlink.errors import StoreError
from graphlink.qi.checks import equivalence_classes
from graphlink.qi.heuristics import datafly
from graphlink.qi.table import encode
from graphlink.store import qi as qstore
from tests.cli.test_qi_cli import run, run_cli
from tests.qi_helpers import QI4, fig4_table, sweeney, sweeney_hierarchies

pytestmark = pytest.mark.neo4j


@pytest.fixture
def names(neo4j_store):
    made: list[str] = []

    def fresh() -> str:
        made.append(f"test-qi-{uuid.uuid4().hex[:10]}")
        return made[-1]

    yield fresh
    for name in made:
        qstore.drop_table(neo4j_store, name)
    neo4j_store._query("MATCH (v:QIValue) WHERE v.domain STARTS WITH 'test-qi-' DETACH DELETE v")


def _classes(df: pd.DataFrame) -> Counter:
    """Library classes as Counter{sorted 'attr=label' tuple: size}."""
    cl = equivalence_classes(df, QI4)
    return Counter({tuple(sorted(f"{q}={v}" for q, v in cl.values.iloc[c].items())): int(cl.sizes[c])
                    for c in range(len(cl.sizes))})


def _cypher_classes(frame: pd.DataFrame) -> Counter:
    return Counter({tuple(sorted(c)): int(s) for c, s in zip(frame["class"], frame["size"], strict=True)})


def test_classes_at_lattice_nodes_match_the_library(neo4j_store, names) -> None:
    t = fig4_table()
    name = names()
    info = qstore.load_table(neo4j_store, t, name, sensitive="Problem")
    assert info["rows"] == 12 and info["status"] == "loaded"
    for levels in ({}, {"BirthDate": 2}, {"Race": 1, "BirthDate": 4, "ZIP": 1}):
        got = neo4j_store.run_file("qi_classes", {"table": name, "levels": levels, "limit": 100})
        node = np.array([levels.get(q, 0) for q in QI4])
        assert _cypher_classes(got) == _classes(t.generalized_frame(node))
    at_year = neo4j_store.run_file("qi_classes", {"table": name, "levels": {"BirthDate": 2}, "k": 2})
    assert int(at_year["below_k"].sum()) == 2 and len(at_year) == 7     # SW-A's freq: 7 sequences, 2 singletons
    assert qstore.load_table(neo4j_store, t, name)["skipped"] is True   # idempotent
    other = encode(sweeney("fig4_pt").iloc[:6], QI4, sweeney_hierarchies())
    with pytest.raises(StoreError, match="different content"):
        qstore.load_table(neo4j_store, other, name)


def test_release_classes_and_qi_links(neo4j_store, names) -> None:
    """Datafly's release in the graph has Datafly's classes; a voter list linked to it (SW-K Fig. 1's linking
    attack in Cypher) finds 0 or at least k = 2 candidates per voter, exactly the compatible released rows."""
    t = fig4_table()
    name, voters = names(), names()
    qstore.load_table(neo4j_store, t, name)
    res = datafly(t, 2)
    run_id = qstore.write_release(neo4j_store, name, res)
    got = neo4j_store.run_file("qi_release_classes", {"run": run_id})
    assert _cypher_classes(got) == _classes(res.frame()) and set(got["k"]) == {2}
    suppressed = neo4j_store.run_cypher("MATCH (x:QIRecord)-[:SUPPRESSED_IN]->(:QIRelease {run: $run}) "
                                        "RETURN x.row AS row ORDER BY row", {"run": run_id})
    assert suppressed["row"].tolist() == np.flatnonzero(res.suppressed).tolist() == [6, 7]
    assert qstore.releases(neo4j_store, name)["run"].tolist() == [run_id]

    people = sweeney("fig4_pt")[QI4].assign(name=[f"person{i}" for i in range(12)])
    outsider = pd.DataFrame([["black", "9/7/1965", "male", "02139", "outsider"]], columns=QI4 + ["name"])
    vt = encode(pd.concat([people, outsider], ignore_index=True), QI4, sweeney_hierarchies())
    qstore.load_table(neo4j_store, vt, voters, domain=name, key="name")
    links = neo4j_store.run_file("qi_links", {"identified": voters, "run": run_id})
    released = res.frame()
    hs = sweeney_hierarchies()
    for voter in range(vt.n):
        expected = [r for r in range(len(released))
                    if all(hs[q].meet(vt.frame[q][voter], released[q][r]) == vt.frame[q][voter] for q in QI4)]
        row = links[links["identified_row"] == voter]
        count = int(row["candidates"].iloc[0]) if len(row) else 0
        assert count == len(expected) and count in (0, 2, 3)
    assert set(links["key"]) >= {"person0", "person11"} and "outsider" not in set(links["key"])
    assert qstore.write_links(neo4j_store, voters, run_id) == int(links["candidates"].sum())


def test_cli_load_and_store_release(neo4j_env, neo4j_store, names, tmp_path) -> None:
    from tests.qi_helpers import SWEENEY

    name = names()
    pt, hier = str(SWEENEY / "fig4_pt.csv"), str(SWEENEY / "hierarchies")
    out = run("load", pt, "--qi", ",".join(QI4), "--hierarchies", hier, "--name", name, "--sensitive", "Problem")
    assert out.returncode == 0, out.stderr
    out = run("anonymize", pt, "--qi", ",".join(QI4), "--k", "2", "--hierarchies", hier, "--algorithm", "mondrian",
              "--out", str(tmp_path / "m.csv"), "--store", "neo4j", "--name", name, "--format", "json")
    assert out.returncode == 0, out.stderr
    import json

    run_id = json.loads(out.stdout)["run"]
    got = neo4j_store.run_file("qi_release_classes", {"run": run_id})
    assert _cypher_classes(got) == _classes(pd.read_csv(tmp_path / "m.csv", dtype=str))
    assert int(got["k"].iloc[0]) >= 2
    # docs/qi.md's analyst query, through `graphlink cypher`
    out = run_cli("cypher", "qi_classes", "--param", f"table={name}", "--param", 'levels={"BirthDate": 2}')
    assert out.returncode == 0, out.stderr
    assert "7 row(s)" in out.stdout
