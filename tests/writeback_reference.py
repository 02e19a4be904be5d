"""The reference for the write-back tests: results written row by row with the plainest Cypher (one MATCH per
end, one CREATE per row, one transaction per statement), as graphlink wrote them before batching, and a dump of
a release's whole graph to compare two writes node by node and edge by edge, property values and types included.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import numpy as np

from graphlink.config import get_config
from graphlink.io.trails import trail_strings
from graphlink.store import classgraph

#: load and run times, and which path loaded the release: compared by type only
VOLATILE = {"created_at", "loaded_at", "at", "load_method"}
RUN = re.compile(r"-\d{8}[Tt]\d{6}-[0-9a-f]{8}$")  # run ids (graphlink.store.batches.run_id; the t lower case)


def _analysis(store: Any, name: str, kind: str, method: str, params: dict, extra: dict) -> str:
    run = f"{kind}-20000101t000000-{np.random.default_rng().integers(16**8):08x}"
    store._query("""MATCH (r:Release {name: $release})
                    CREATE (a:Analysis {run: $run, release: $release, kind: $kind, method: $method,
                                        params: $params, at: datetime()})-[:ON]->(r)
                    SET a += $extra""",
                 {"release": name, "run": run, "kind": kind, "method": method,
                  "params": json.dumps(params, default=str, sort_keys=True), "extra": extra})
    return run


def write_link_graph(store: Any, name: str, result: Any) -> None:
    """The link graph of ``result`` row by row (the graph model of :mod:`graphlink.store.classgraph`)."""
    g, tr = result.graph, result.graph.trails
    arr = classgraph.class_arrays(result)
    n_elem = int(g.n_expanded_edges)
    with_elements = n_elem <= get_config().element_links_max and g.expandable
    run = _analysis(store, name, "link-graph", "link-graph", {"class_edges": len(g.class_ei)}, {
        "edges": n_elem, "class_edges": int(len(g.class_ei)), "element_links": with_elements,
        "maximum_matching_size": arr["nu"], "n_null": arr["n_null"], "multiplicity": tr.multiplicity,
        "reserved": tr.reserved, "fingerprint": classgraph.tables(result).fingerprint()})
    store._query("MATCH (r:Release {name: $release}) SET r.model_reserved = $reserved, "
                 "r.model_multiplicity = $multiplicity, r.model_reason = $reason",
                 {"release": name, "reserved": tr.reserved, "multiplicity": tr.multiplicity, "reason": tr.reason})
    label = {"identified": "Identified", "deidentified": "Deidentified"}
    for side, cls, sizes in (("identified", g.id_class, g.id_class_size),
                             ("deidentified", g.de_class, g.de_class_size)):
        ts = getattr(tr, side)
        nd = arr["null"].get(side, np.zeros(len(sizes), np.int64))
        for c in range(len(sizes)):
            row = int(np.flatnonzero(cls == c)[0])
            store._query("CREATE (:TrailClass {release: $release, side: $side, cid: $cid, trail: $trail, "
                         "size: $size, null_degree: $nd, run: $run})",
                         {"release": name, "side": side, "cid": c, "trail": trail_strings(ts, np.array([row]))[0],
                          "size": int(sizes[c]), "nd": int(nd[c]), "run": run})
        for key, c in zip(ts.keys, cls, strict=True):
            store._query(f"MATCH (e:{label[side]} {{release: $release, key: $key}}) "
                         "MATCH (c:TrailClass {release: $release, side: $side, cid: $cid}) CREATE (e)-[:IN_CLASS]->(c)",
                         {"release": name, "side": side, "key": str(key), "cid": int(c)})
    for n, (ci, cj) in enumerate(zip(g.class_ei, g.class_ej, strict=True)):
        store._query("MATCH (x:TrailClass {release: $release, side: 'identified', cid: $ci}) "
                     "MATCH (y:TrailClass {release: $release, side: 'deidentified', cid: $cj}) "
                     "CREATE (x)-[:LINK {allowed: $al, vital: $vi, flow: $fl, run: $run}]->(y)",
                     {"release": name, "run": run, "ci": int(ci), "cj": int(cj), "al": bool(arr["allowed"][n]),
                      "vi": bool(arr["vital"][n]), "fl": int(arr["flow"][n])})
    if with_elements:
        edge = {(int(a), int(b)): n for n, (a, b) in enumerate(zip(g.class_ei, g.class_ej, strict=True))}
        mate = getattr(result, "mate_identified", None)
        for i, j in zip(g.ei, g.ej, strict=True):
            n = edge[(int(g.id_class[i]), int(g.de_class[j]))]
            store._query("MATCH (i:Identified {release: $release, key: $i}) "
                         "MATCH (d:Deidentified {release: $release, key: $d}) "
                         "CREATE (i)-[:LINK {allowed: $al, vital: $vi, matched: $ma, run: $run}]->(d)",
                         {"release": name, "run": run, "i": str(tr.identified.keys[i]),
                          "d": str(tr.deidentified.keys[j]), "al": bool(arr["allowed"][n]),
                          "vi": bool(arr["vital"][n]), "ma": bool(mate is not None and mate[i] == j)})


def write_audit(store: Any, name: str, result: Any) -> None:
    k = int(result.k)
    viol = result.violations
    run = _analysis(store, name, "audit", "k-unlinkability", {"k": k}, {
        "k": k, "k_unlinkable": bool(result.k_unlinkable), "true_loves": int(result.true_loves),
        "maximum_matching_size": int(result.maximum_matching_size), "violations": len(viol)})
    label = {"identified": "Identified", "deidentified": "Deidentified"}
    for side, e, u in zip(viol["side"], viol["element"], viol["union_degree"], strict=True):
        store._query(f"MATCH (a:Analysis {{run: $run}}) MATCH (x:{label[side]} {{release: $release, key: $e}}) "
                     "CREATE (a)-[:VIOLATES {side: $side, union_degree: $u}]->(x)",
                     {"run": run, "release": name, "side": side, "e": str(e), "u": int(u)})


def write_reidentification(store: Any, name: str, result: Any) -> None:
    pairs = result.pairs
    run = _analysis(store, name, "reidentification", str(result.method), result.summary.as_dict(),
                    {"pairs": len(pairs)})
    for i, d, r in zip(pairs["identified"], pairs["deidentified"], pairs["reason"], strict=True):
        store._query("MATCH (i:Identified {release: $release, key: $i}) "
                     "MATCH (d:Deidentified {release: $release, key: $d}) "
                     "CREATE (i)-[:REIDENTIFIED {method: $method, run: $run, reason: $reason}]->(d)",
                     {"release": name, "run": run, "method": str(result.method), "i": str(i), "d": str(d),
                      "reason": str(r)})


def graph(store: Any, name: str) -> dict[str, Counter]:
    """Every node and relationship of release ``name``: labels or type, the identity of the ends (element key,
    location name, (side, cid) of a class, kind of an Analysis), properties with their Cypher types. The release
    name reads '<R>', run ids their kind; :data:`VOLATILE` properties are compared by type only."""
    def ident(n: str) -> str:
        return (f"CASE WHEN {n}:TrailClass THEN {n}.side + '/' + toString({n}.cid) WHEN {n}:Analysis THEN {n}.kind "
                f"WHEN {n}:Release THEN 'release' ELSE coalesce({n}.key, {n}.id, {n}.name) END")

    props = "[k IN keys(x) | [k, valueType(x[k]), CASE WHEN k IN $volatile THEN null ELSE x[k] END]]"
    nodes = store._query(f"""MATCH (x) WHERE x.release = $r OR (x:Release AND x.name = $r)
                             RETURN labels(x) AS labels, {ident('x')} AS id, {props} AS props""",
                         {"r": name, "volatile": sorted(VOLATILE)})
    rels = store._query(f"""MATCH (a)-[x]->(b) WHERE a.release = $r OR (a:Release AND a.name = $r)
                            RETURN type(x) AS type, {ident('a')} AS ia, {ident('b')} AS ib, {props} AS props""",
                        {"r": name, "volatile": sorted(VOLATILE)})

    def norm(v: Any) -> Any:
        if v == name:
            return "<R>"
        if isinstance(v, str) and RUN.search(v):
            return RUN.sub("", v)
        if isinstance(v, list):
            return tuple(norm(x) for x in v)
        return v

    def key(p: list) -> tuple:
        return tuple(sorted((k, t, norm(v)) for k, t, v in p))

    return {"nodes": Counter((tuple(sorted(r["labels"])), norm(r["id"]), key(r["props"])) for r in nodes),
            "rels": Counter((r["type"], norm(r["ia"]), norm(r["ib"]), key(r["props"])) for r in rels)}
