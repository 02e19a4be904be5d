"""Neo4j writer for quasi-identifier tables, their hierarchies and anonymized releases.

Graph model (constraints in ``cypher/qi_schema.cypher``, statements in ``cypher/qi_load.cypher``)::

    (:QITable {name, domain, rows, qi, source, fingerprint, status})
    (:QIValue {domain, attribute, level, label})-[:GENERALIZES_TO]->(:QIValue)          hierarchies
    (:QIRecord {table, row, key, sensitive})-[:HAS_VALUE]->(:QIValue {level: 0})        records
    (:QIRelease {run, table, algorithm, k, k_requested, levels, prec, dm_star, ...})-[:OF]->(:QITable)
    (:QIRecord)-[:RELEASED_AS {run}]->(:QIValue)    every released cell
    (:QIRecord)-[:SUPPRESSED_IN]->(:QIRelease)      every removed record
    (:QIRecord)-[:QI_LINK {run}]->(:QIRecord)       identified record -> compatible released record

Tables of one *domain* share hierarchy nodes, so an identified table (a voter list) and a released table
meet at the same values: ``cypher/qi_links.cypher`` is Sweeney's linking attack in Cypher, and
``cypher/qi_classes.cypher`` / ``qi_release_classes.cypher`` list equivalence classes at any lattice node or
of any stored release. Writes are batched ``UNWIND`` + ``MERGE`` (idempotent); cost O(values + n·m).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from graphlink.errors import StoreError
from graphlink.qi.hierarchy import Hierarchy
from graphlink.qi.result import Anonymization
from graphlink.qi.table import QITable, as_labels
from graphlink.store import cypherlib
from graphlink.store.batches import run_id
from graphlink.store.neo4j import BATCH, Progress, Store

LABELS = ("QIRelease", "QIRecord")


def _statements() -> cypherlib.CypherFile:
    return cypherlib.load_file(cypherlib.cypher_dir() / "qi_load.cypher")


def apply_schema(store: Store) -> None:
    """Create the QI constraints and indexes (idempotent) and wait until they are online."""
    for st in cypherlib.load_file(cypherlib.cypher_dir() / "qi_schema.cypher").statements:
        store.conn.query(st.text)
    store.conn.query("CALL db.awaitIndexes(300)")


def _fingerprint(table: QITable) -> str:
    h = hashlib.sha256(json.dumps([list(table.qi), [h.matrix.tolist() for h in table.hierarchies]]).encode())
    h.update(np.ascontiguousarray(table.codes).tobytes())
    return h.hexdigest()


def table_info(store: Store, name: str) -> dict | None:
    recs = store.conn.query("MATCH (t:QITable {name: $name}) RETURN properties(t) AS p", {"name": name})
    return {k: (v.iso_format() if hasattr(v, "iso_format") else v) for k, v in recs[0]["p"].items()} if recs else None


def drop_table(store: Store, name: str) -> None:
    """Delete a QI table, its records and releases (hierarchy values stay: other tables of the domain use them)."""
    store.conn.run_auto("MATCH (n:QIRelease {table: $name}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                    {"name": name})
    store.conn.run_auto("MATCH (n:QIRecord {table: $name}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
                    {"name": name})
    store.conn.query("MATCH (t:QITable {name: $name}) DETACH DELETE t", {"name": name})


def _batches(rows: list[dict], size: int) -> list[list[dict]]:
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _parents(h: Hierarchy, level: int) -> list[str | None]:
    """Per label of ``level`` (in code order), its label one level up (None at the top)."""
    card = h.cardinality(level)
    if level == h.height:
        return [None] * card
    first = np.unique(h.ancestors[level], return_index=True)[1]     # a ground row under each code
    return [str(x) for x in h.labels[level + 1][h.ancestors[level + 1][first]]]


def load_table(store: Store, table: QITable, name: str, *, domain: str | None = None, key: str | None = None,
               sensitive: str | None = None, replace: bool = False, progress: Progress = None) -> dict:
    """Write ``table`` (records, their ground values, every hierarchy level) under ``name``.

    ``domain`` (default: ``name``) scopes the hierarchy nodes; give an identified table the domain of the
    released table to link them. ``key`` and ``sensitive`` name columns kept on each record. Loading the same
    content again is a no-op; different content under an existing name needs ``replace=True``.
    """
    domain = domain or name
    for col in (key, sensitive):
        if col is not None and col not in table.frame.columns:
            raise StoreError(f"no column {col!r} in the table to keep on its records")
    apply_schema(store)
    fp = _fingerprint(table)
    info = table_info(store, name)
    if info:
        if info.get("fingerprint") == fp and info.get("status") == "loaded":
            return {**info, "skipped": True}
        if not replace:
            from graphlink.diagnostics import Diagnostic

            raise StoreError(diagnostic=Diagnostic(
                "store-name-taken", f"QI table {name!r} is already in Neo4j with different content", {"name": name},
                remedy="choose another name or replace it"))
        drop_table(store, name)
    st = _statements().statement
    base = {"table": name, "domain": domain, "qi": list(table.qi)}
    store.conn.query(st("table").text, {**base, "props": {"source": table.source, "fingerprint": fp,
                                                      "sensitive_column": sensitive, "key_column": key}})
    values = [{"attribute": q, "level": lv, "label": str(lab), "parent": parent}
              for q, h in zip(table.qi, table.hierarchies, strict=True) for lv in range(h.height + 1)
              for lab, parent in zip(h.labels[lv], _parents(h, lv), strict=True)]
    for chunk in _batches(values, BATCH):
        store.conn.query(st("values").text, {**base, "rows": chunk})
    labels = np.stack([np.asarray(h.values, dtype=object)[table.codes[:, i]]
                       for i, h in enumerate(table.hierarchies)], axis=1)
    keys = as_labels(table.frame[key]).tolist() if key else [None] * table.n
    sens = as_labels(table.frame[sensitive]).tolist() if sensitive else [None] * table.n
    rows = [{"row": r, "key": keys[r], "sensitive": sens[r], "labels": labels[r].tolist()} for r in range(table.n)]
    per = max(BATCH // max(table.m, 1), 1)
    for done, chunk in enumerate(_batches(rows, per), start=1):
        store.conn.query(st("records").text, {**base, "rows": chunk})
        if progress:
            progress(min(done * per, table.n) / table.n, f"{min(done * per, table.n):,}/{table.n:,} records")
    out = store.conn.query(st("loaded").text, base)
    return {**dict(out[0]["table"]), "skipped": False}


def write_release(store: Store, name: str, res: Anonymization) -> str:
    """Write an anonymization of the table loaded as ``name``: a QIRelease node, one RELEASED_AS edge per
    released cell (to the value node at the cell's level) and SUPPRESSED_IN for removed records. Returns the
    run id."""
    info = table_info(store, name)
    if not info or info.get("status") != "loaded":
        raise StoreError(f"no QI table named {name!r} in Neo4j; load it first (graphlink qi load)")
    if info.get("fingerprint") != _fingerprint(res.table):
        raise StoreError(f"QI table {name!r} in Neo4j holds other data than this anonymization's table")
    t = res.table
    run = run_id(f"qi-{res.algorithm}")
    s = res.summary()
    props: dict[str, Any] = {"algorithm": res.algorithm, "k": s["k"], "k_requested": res.k_requested,
                             "levels": json.dumps(s["levels"]), "prec": s["prec"], "dm_star": s["dm_star"],
                             "suppressed_rows": s["suppressed_rows"], "classes": s["classes"]}
    st = _statements().statement
    base = {"table": name, "domain": info["domain"], "qi": list(t.qi), "run": run}
    store.conn.query(st("release").text, {**base, "props": props})
    lv = np.broadcast_to(res.cell_levels, (t.n, t.m))
    released = res.frame()[list(t.qi)].to_numpy()
    kept = np.flatnonzero(~res.suppressed)
    rows = [{"row": int(r), "levels": lv[r].tolist(), "labels": [str(x) for x in released[j]]}
            for j, r in enumerate(kept)]
    for chunk in _batches(rows, max(BATCH // max(t.m, 1), 1)):
        store.conn.query(st("released").text, {**base, "rows": chunk})
    for chunk in _batches([{"row": int(r)} for r in np.flatnonzero(res.suppressed)], BATCH):
        store.conn.query(st("suppressed").text, {**base, "rows": chunk})
    return run


def write_links(store: Store, identified: str, run: str) -> int:
    """Store QI_LINK edges from every record of ``identified`` to the released records it is compatible with."""
    recs = store.conn.query(_statements().statement("links").text, {"identified": identified, "run": run})
    return int(recs[0]["links"]) if recs else 0


def releases(store: Store, name: str) -> pd.DataFrame:
    """The releases stored for a QI table, newest first."""
    return store.run_cypher("""MATCH (r:QIRelease {table: $name})
                               RETURN r.run AS run, r.algorithm AS algorithm, r.k AS k, r.levels AS levels,
                                      r.prec AS prec, r.dm_star AS dm_star, r.suppressed_rows AS suppressed_rows,
                                      toString(r.at) AS at ORDER BY r.at DESC""", {"name": name})
