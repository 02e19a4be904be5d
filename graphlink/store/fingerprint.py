"""Neo4j writer for fingerprint plans and leak attributions (FP §3.1 step 9's pattern-list, §3.2's verdicts).

Graph model (constraints in ``cypher/fingerprint_schema.cypher``, statements in ``cypher/fingerprint_load.cypher``)::

    (:FingerprintPlan {id, table_fingerprint, source, rows, qi, k, loss, max_suppression, recipients, ...})
    (:FPAttribute {plan, name, height})-[:IN_PLAN]->(:FingerprintPlan)
    (:Generalization {plan, pattern, levels, loss, k, suppressed_rows, prec, dm_star, height})-[:IN_PLAN]->(plan)
    (:Generalization)-[:AT {level}]->(:FPAttribute)
    (:Recipient {plan, name, released_rows, distinguishing_rows})-[:RECEIVED]->(:Generalization)
    (:Leak {id, plan, source, rows, exact, reason, pattern})-[:ATTRIBUTED_TO]->(:Recipient)
    (:Leak)-[:CANDIDATE {set}]->(:Recipient)

Queries: ``cypher/fingerprint_recipients.cypher`` (the pattern-list), ``fingerprint_suspects.cypher`` (who
could have produced a leak of a given granularity), ``fingerprint_leaks.cypher`` (stored verdicts). A plan's id
is derived from its content, so writing the same plan twice is a no-op (MERGE). Cost O(R·m) writes.
"""

from __future__ import annotations

import hashlib
import json

from graphlink.errors import StoreError
from graphlink.fingerprint.attribute import Attribution
from graphlink.fingerprint.plan import Plan
from graphlink.store import cypherlib
from graphlink.store.batches import run_id
from graphlink.store.neo4j import Store


def _statements() -> cypherlib.CypherFile:
    return cypherlib.load_file(cypherlib.cypher_dir() / "fingerprint_load.cypher")


def apply_schema(store: Store) -> None:
    """Create the fingerprint constraints and indexes (idempotent) and wait until they are online."""
    for st in cypherlib.load_file(cypherlib.cypher_dir() / "fingerprint_schema.cypher").statements:
        store.conn.query(st.text)
    store.conn.query("CALL db.awaitIndexes(300)")


def plan_id(plan: Plan) -> str:
    """``fp-`` + 12 hex digits of a hash of what defines the plan: table, QIs, hierarchies, k, suppression,
    loss and the pattern-list (not the timings, nor the shuffle seed)."""
    key = {"table": plan.table.get("fingerprint"), "qi": list(plan.qi), "k": plan.k,
           "max_suppression": plan.max_suppression, "loss": plan.loss,
           "hierarchies": {q: plan.hierarchies[q].matrix.tolist() for q in plan.qi},
           "recipients": [[r.name, list(r.levels)] for r in plan.recipients]}
    return "fp-" + hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def write_plan(store: Store, plan: Plan, name: str | None = None) -> str:
    """Write the plan (its QIs, the recipients' generalizations and who received which); return its id
    (``name`` if given, else :func:`plan_id`). Idempotent; a different plan under an existing name is refused."""
    apply_schema(store)
    pid = name or plan_id(plan)
    have = store.conn.query("MATCH (p:FingerprintPlan {id: $id}) RETURN p.content AS content", {"id": pid})
    content = plan_id(plan)
    if have and have[0]["content"] not in (None, content):
        raise StoreError(f"a different fingerprint plan is already stored as {pid!r}; choose another name")
    st = _statements().statement
    base = {"plan": pid, "qi": list(plan.qi)}
    props = {"content": content, "table_fingerprint": plan.table.get("fingerprint"),
             "source": plan.table.get("source"), "rows": plan.table.get("rows"), "k": plan.k, "loss": plan.loss,
             "max_suppression": plan.max_suppression, "recipients": len(plan.recipients),
             "discretisation": plan.discretisation, "capacity_upper_bound": plan.capacity.get("upper_bound"),
             "loss_spread": plan.loss_spread.get("spread")}
    store.conn.query(st("plan").text, {**base, "props": props})
    store.conn.query(st("attributes").text, {**base, "rows": [{"name": q, "height": plan.hierarchies[q].height}
                                                          for q in plan.qi]})
    nodes = {}
    for r in plan.recipients:
        nodes.setdefault(plan.pattern(r.levels), {
            "pattern": plan.pattern(r.levels), "levels": list(r.levels), "loss": r.loss, "k": r.k,
            "suppressed_rows": r.suppressed_rows, "prec": r.prec, "dm_star": r.dm_star, "height": sum(r.levels)})
    store.conn.query(st("generalizations").text, {**base, "rows": list(nodes.values())})
    store.conn.query(st("recipients").text, {**base, "rows": [
        {"name": r.name, "pattern": plan.pattern(r.levels), "released_rows": r.released_rows,
         "distinguishing_rows": r.distinguishing_rows} for r in plan.recipients]})
    return pid


def write_attribution(store: Store, plan: Plan, result: Attribution, *, source: str | None = None,
                      plan_name: str | None = None) -> str:
    """Store one leak's verdict against a stored plan (written first if needed); returns the leak id."""
    pid = write_plan(store, plan, plan_name)
    leak = run_id("leak")
    props = {"source": source, "rows": result.rows, "exact": result.exact, "explained_rows": result.explained_rows,
             "reason": result.reason, "pattern": json.dumps(result.pattern)}
    st = _statements().statement
    store.conn.query(st("leak").text, {"plan": pid, "leak": leak, "props": props, "recipients": result.recipients})
    if not result.recipients and result.candidates:
        store.conn.query(st("candidates").text, {"leak": leak, "candidates": result.candidates})
    return leak


def drop_plan(store: Store, plan: str) -> None:
    """Delete a stored plan, its recipients, generalizations and leaks."""
    for label in ("Leak", "Recipient", "Generalization", "FPAttribute"):
        store.conn.query(f"MATCH (n:{label} {{plan: $plan}}) DETACH DELETE n", {"plan": plan})
    store.conn.query("MATCH (p:FingerprintPlan {id: $plan}) DETACH DELETE p", {"plan": plan})
