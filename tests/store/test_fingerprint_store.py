"""Fingerprint plans and leak verdicts in a live Neo4j: (:Recipient)-[:RECEIVED]->(:Generalization) holds the
pattern-list, and the Cypher library's answers agree with the library."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graphlink.errors import StoreError
from graphlink.fingerprint import attribute, make_plan, plan_from_nodes
from graphlink.store import fingerprint as fstore
from tests.cli.test_qi_cli import run_cli
from tests.fp_helpers import FP, FP_HIER, fp_table

pytestmark = pytest.mark.neo4j


@pytest.fixture
def plans(neo4j_store):
    made: list[str] = []
    yield made
    for pid in made:
        fstore.drop_plan(neo4j_store, pid)


def test_pattern_list_and_suspects_in_cypher(neo4j_store, plans) -> None:
    """FP Table 6's three sets: the stored pattern-list is the plan's, and fingerprint_suspects lists exactly the
    recipients the library says could produce a leak of each granularity (exact ones first)."""
    t6 = fp_table("table6")
    plan = plan_from_nodes(t6, 1, {"set 1": (1, 2, 0), "set 2": (1, 1, 1), "set 3": (0, 2, 1)})
    pid = fstore.write_plan(neo4j_store, plan)
    plans.append(pid)
    assert fstore.write_plan(neo4j_store, plan) == pid     # idempotent
    got = neo4j_store.run_file("fingerprint_recipients", {"plan": pid})
    assert sorted(got["recipient"]) == ["set 1", "set 2", "set 3"]
    for row in got.itertuples():
        levels = dict(x.split("=") for x in row.levels)
        assert {q: int(v) for q, v in levels.items()} == dict(zip(plan.qi, plan.recipient(row.recipient).levels,
                                                                   strict=True))
    leaks = [{"sex": "p", "birthdate": "03.1970", "zip": "1015"},     # Table 6: nobody alone
             {"sex": "p", "birthdate": "1970", "zip": "100X"},        # coarse: anybody
             {"sex": "m", "birthdate": "1970", "zip": "101X"}]        # set 3 exactly
    for row in leaks:
        res = attribute(plan, pd.DataFrame([row]))
        sus = neo4j_store.run_file("fingerprint_suspects", {"plan": pid, "levels": res.pattern})
        assert sorted(sus["recipient"]) == sorted(res.could_generate)
        assert sorted(sus.loc[sus["exact"], "recipient"]) == sorted(res.exact_matches)
    rel = neo4j_store.run_cypher("MATCH (r:Recipient {plan: $p})-[:RECEIVED]->(g:Generalization)-[a:AT]->"
                                 "(:FPAttribute {name: 'zip'}) WHERE a.level = 0 RETURN r.name AS name", {"p": pid})
    assert rel["name"].tolist() == ["set 1"]


def test_leak_verdicts_and_cli(neo4j_store, neo4j_env, plans, tmp_path: Path) -> None:
    """``plan --store neo4j`` and ``attribute --store neo4j`` write the plan and the verdicts; fingerprint_leaks
    returns who each leak was attributed to, or the candidate sets of one that was not."""
    plan_path = tmp_path / "plan.json"
    out = run_cli("fingerprint", "plan", str(FP / "table1.csv"), "--qi", "sex,birthdate", "--k", "2",
                  "--recipients", "2", "--hierarchies", str(FP_HIER), "--loss", "samarati", "--l-min", "1",
                  "--l-max", "2", "--discretise", "exact", "--out", str(plan_path), "--store", "neo4j",
                  "--format", "json")
    assert out.returncode == 0, out.stderr
    pid = json.loads(out.stdout)["plan_id"]
    plans.append(pid)
    stored = neo4j_store.run_cypher("MATCH (r:Recipient {plan: $p})-[:RECEIVED]->(g:Generalization) "
                                    "RETURN r.name AS name, g.levels AS levels ORDER BY name", {"p": pid})
    assert stored.values.tolist() == [["R1", [1, 1]], ["R2", [0, 2]]]
    again = run_cli("fingerprint", "load", str(plan_path))
    assert again.returncode == 0 and pid in again.stdout     # the same content gets the same id
    for rows in ([{"sex": "m", "birthdate": "1970"}], [{"sex": "p", "birthdate": "1970"}]):
        leak = tmp_path / "leak.csv"
        pd.DataFrame(rows).to_csv(leak, index=False)
        done = run_cli("fingerprint", "attribute", str(plan_path), str(leak), "--store", "neo4j", "--format", "json")
        assert done.returncode == 0, done.stderr
    leaks = neo4j_store.run_file("fingerprint_leaks", {"plan": pid})
    assert len(leaks) == 2
    by_exact = {bool(r.exact): r for r in leaks.itertuples()}
    assert by_exact[True].recipients == ["R2"]
    assert by_exact[False].recipients == [] and sorted(m for c in by_exact[False].candidates
                                                       for m in c["members"]) == ["R1", "R2"]
    other = make_plan(fp_table(), 2, 1, loss="samarati", seed=1)
    with pytest.raises(StoreError, match="different fingerprint plan"):
        fstore.write_plan(neo4j_store, other, pid)
