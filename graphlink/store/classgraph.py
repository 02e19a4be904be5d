"""Writer of the link graph at twin-class level (§4.2.4; docs/algorithms.md#twin-classes): O(elements + class edges).

Low-entropy releases (few locations, many people) repeat trails massively: 1e5 people over 24 sites give 8.3e8
element-level link edges but 1.2e6 class edges.  The graph keeps the classes::

    (:TrailClass {release, side, cid, trail, size, null_degree, run})
    (:Identified | :Deidentified)-[:IN_CLASS]->(:TrailClass)
    (:TrailClass {side:'identified'})-[:LINK {allowed, vital, flow, run}]->(:TrailClass {side:'deidentified'})

Every member pair of a class edge shares its verdict (twins are interchangeable), so an element's union degree
(Definition 19) is the sum of the sizes of the classes its class reaches by allowed LINKs, plus ``null_degree``
(its allowed edges to the §4.2.4 null trails: ``n_null`` when its class may be left unmatched, else 0).
``vital`` marks true loves (one-to-one) or certain pairs (one-to-many, :mod:`graphlink.analysis.onetomany`, where
``allowed`` means possible).  ``flow`` is the number of member pairs matched in the engine's maximum matching.

When the link graph is written with its pair probabilities (:func:`graphlink.analysis.risk.pair_probabilities`,
a ``RiskResult`` of the same graph), every LINK also carries ``probability`` (a member pair's share of the
consistent assignments), ``probability_exact`` and ``probability_error`` (the 95 % half-width, 0 when exact);
without them those properties are absent (docs/neo4j.md#pair-probabilities).

Element-level ``(:Identified)-[:LINK {allowed, vital, matched, run}]->(:Deidentified)`` edges are written too
when the release is small enough that analysts would browse them: at most ``get_config().element_links_max``
element edges (default 100,000; environment variable ``GRAPHLINK_ELEMENT_LINKS_MAX``).  The Cypher library answers
through the classes either way (``cypher/k_unlinkability.cypher``, ``cypher/link_pairs.cypher``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlink.config import get_config
from graphlink.io.trails import trail_strings
from graphlink.store.batches import Batches

CHUNK = 20_000
LINK_CHUNK = 100_000
LABEL = {"identified": "Identified", "deidentified": "Deidentified"}
Progress = Callable[[float, str], None] | None


def class_arrays(result: Any) -> dict[str, Any]:
    """Per class edge (allowed, vital, flow) and per complete-side class its null degree, from either an
    ``EdgeClasses`` (one-to-one) or a ``ManyClasses`` (one-to-many) result."""
    g = result.graph
    if hasattr(result, "class_possible"):
        return {"allowed": result.class_possible, "vital": result.class_certain, "flow": result.class_flow,
                "null": {}, "nu": int(result.nu), "n_null": 0}
    null: dict[str, np.ndarray] = {}
    if g.n_null:
        side = result.complete_side
        cls = g.id_class if side == "identified" else g.de_class
        n_cls = len(g.id_class_size if side == "identified" else g.de_class_size)
        per_class = np.zeros(n_cls, np.int64)
        per_class[cls[result.null_allowed]] = g.n_null
        null[side] = per_class
    return {"allowed": result.class_allowed, "vital": result.class_vital, "flow": result.class_flow,
            "null": null, "nu": int(result.nu), "n_null": int(g.n_null)}


@dataclass
class Tables:
    """The link graph's rows as columns, shared by the two writers (UNWIND batches here, the importer's CSV files
    in :mod:`graphlink.store.writeback`), so that both write the same nodes, edges and properties.

    Per side (``identified``, ``deidentified``): class ``trail``/``size``/``null`` (cid = position) and the
    members' ``keys``/``cid``; the class LINKs ``ci``/``cj``/``allowed``/``vital``/``flow`` sorted by ``(ci, cj)``;
    the element LINKs (``elements``: ``i``, ``d`` keys, ``allowed``, ``vital``, ``matched``, and the three
    probability columns when known) or None; ``analysis``: the extra properties of the ``link-graph`` Analysis node;
    ``model``: reserved, multiplicity, reason; ``probability`` / ``probability_exact`` / ``probability_error``: per
    class LINK (same order), or None when the link graph is written without its pair probabilities.
    """

    trail: dict[str, list[str]]
    size: dict[str, np.ndarray]
    null: dict[str, np.ndarray]
    keys: dict[str, np.ndarray]
    cid: dict[str, np.ndarray]
    ci: np.ndarray
    cj: np.ndarray
    allowed: np.ndarray
    vital: np.ndarray
    flow: np.ndarray
    elements: dict[str, np.ndarray] | None
    analysis: dict[str, Any]
    model: dict[str, Any]
    probability: np.ndarray | None = None
    probability_exact: np.ndarray | None = None
    probability_error: np.ndarray | None = None

    def fingerprint(self) -> str:
        """The link graph's content hash (sha256, hex): every class, membership, class and element LINK with their
        properties, the Analysis node's counts and the data model, in a fixed order. Two tables with the same
        fingerprint write the same graph (run ids aside). O(rows)."""
        import hashlib
        import json

        h = hashlib.sha256()

        def add(name: str, value: Any) -> None:
            h.update(name.encode())
            if value is None:
                h.update(b"\x00none")
            elif isinstance(value, np.ndarray) and value.dtype != object:
                h.update(str(value.dtype).encode() + str(value.shape).encode())
                h.update(np.ascontiguousarray(value).tobytes())
            else:       # strings (keys, trails): length-prefixed, so that no two lists hash alike
                for v in value:
                    b = str(v).encode()
                    h.update(len(b).to_bytes(8, "little") + b)

        add("analysis", [json.dumps(self.analysis, sort_keys=True, default=str)])
        add("model", [json.dumps(self.model, sort_keys=True, default=str)])
        for side in ("identified", "deidentified"):
            for name in ("trail", "size", "null", "keys", "cid"):
                add(f"{side}.{name}", getattr(self, name)[side])
        for name in ("ci", "cj", "allowed", "vital", "flow", *PROBABILITY):
            add(name, getattr(self, name))
        for name, column in sorted((self.elements or {}).items()):
            add(f"elements.{name}", column)
        add("elements", None if self.elements is None else [])
        return h.hexdigest()

    @property
    def rows(self) -> int:
        """Nodes and relationships to write (for progress and the bulk importer's size rule)."""
        n = sum(len(s) for s in self.size.values()) + sum(len(k) for k in self.keys.values()) + len(self.ci)
        return n + (len(self.elements["i"]) if self.elements is not None else 0)


def tables(result: Any, risk: Any = None) -> Tables:
    """:class:`Tables` of a classified link graph (``EdgeClasses`` or ``ManyClasses``), with the pair
    probabilities of ``risk`` (a ``RiskResult`` of the same link graph) on the LINKs when given. O(|M| + |N| +
    class edges), plus O(element edges) for a small release's element LINKs."""
    g = result.graph
    tr = g.trails
    arr = class_arrays(result)
    if risk is not None:
        arr["risk"] = _risk_columns(g, risk)
    n_elem = int(g.n_expanded_edges)
    with_elements = n_elem <= get_config().element_links_max and g.expandable
    trail, size, null, keys, cid = {}, {}, {}, {}, {}
    for side, cls, sizes in (("identified", g.id_class, g.id_class_size),
                             ("deidentified", g.de_class, g.de_class_size)):
        ts = getattr(tr, side)
        first = np.full(len(sizes), -1, np.int64)
        first[cls[::-1]] = np.arange(len(cls))[::-1]            # a representative row per class
        trail[side] = trail_strings(ts, first)
        size[side] = np.asarray(sizes, np.int64)
        null[side] = np.asarray(arr["null"].get(side, np.zeros(len(sizes), np.int64)), np.int64)
        keys[side] = np.asarray([str(k) for k in ts.keys], dtype=object)
        cid[side] = np.asarray(cls, np.int64)
    order = np.lexsort((g.class_ej, g.class_ei))
    analysis = {"edges": n_elem, "class_edges": int(len(g.class_ei)), "element_links": with_elements,
                "maximum_matching_size": arr["nu"], "n_null": arr["n_null"], "multiplicity": tr.multiplicity,
                "reserved": tr.reserved}
    prob = {k: v[order] for k, v in arr["risk"].items()} if risk is not None else {}
    return Tables(trail, size, null, keys, cid, np.asarray(g.class_ei, np.int64)[order],
                  np.asarray(g.class_ej, np.int64)[order], np.asarray(arr["allowed"], bool)[order],
                  np.asarray(arr["vital"], bool)[order], np.asarray(arr["flow"], np.int64)[order],
                  element_tables(result, arr) if with_elements else None, analysis,
                  {"reserved": tr.reserved, "multiplicity": tr.multiplicity, "reason": tr.reason}, **prob)


#: the LINK properties of the pair probabilities, in the order the writers send them
PROBABILITY = ("probability", "probability_exact", "probability_error")


def _risk_columns(g: Any, risk: Any) -> dict[str, np.ndarray]:
    """Per class edge of ``g`` (its own order): a member pair's probability, whether it is exact, its 95 %
    half-width. Refuses a ``RiskResult`` of another link graph (its class edges would not line up). O(class
    edges)."""
    if len(risk.class_probability) != len(g.class_ei):
        raise ValueError("the pair probabilities belong to another link graph")
    return {"probability": np.asarray(risk.class_probability, float),
            "probability_exact": np.asarray(risk.class_exact, bool),
            "probability_error": np.asarray(risk.class_error, float)}


def element_tables(result: Any, arr: dict) -> dict[str, np.ndarray]:
    """Element-level LINK rows (small releases only): each element edge takes its class edge's verdict;
    ``matched`` marks the engine's maximum matching (one-to-one). O(element edges)."""
    g = result.graph
    n_dc = len(g.de_class_size)
    key_class = g.class_ei * n_dc + g.class_ej
    order = np.argsort(key_class, kind="stable")
    ei, ej = g.ei, g.ej
    edge_class = order[np.searchsorted(key_class[order], g.id_class[ei] * n_dc + g.de_class[ej])]
    mate = getattr(result, "mate_identified", None)
    matched = (mate[ei] == ej) if mate is not None else np.zeros(len(ei), bool)
    ik, dk = g.trails.identified.keys, g.trails.deidentified.keys
    out = {"i": np.asarray([str(x) for x in ik[ei]], dtype=object),
           "d": np.asarray([str(x) for x in dk[ej]], dtype=object),
           "allowed": np.asarray(arr["allowed"], bool)[edge_class],
           "vital": np.asarray(arr["vital"], bool)[edge_class],
           "matched": np.asarray(matched, bool)}
    for name, column in arr.get("risk", {}).items():       # each element pair takes its class edge's probability
        out[name] = column[edge_class]
    return out


def write(store: Any, name: str, result: Any, progress: Progress = None, *, table: Tables | None = None,
          risk: Any = None) -> str:
    """Replace the release's link graph by ``result``'s (class level, plus element level when small), with the
    pair probabilities of ``risk`` on its LINKs when given (``table`` already holds them when passed).

    Records the data model (reserved side, multiplicity) on the Release node so the Cypher trails follow the
    engine, and an ``(:Analysis {kind: 'link-graph'})`` node with the counts and, after the last edge, the
    :meth:`Tables.fingerprint`.  Returns the run id.  When the stored link graph has the same fingerprint it is
    kept and its run returned (O(rows) to hash, no writes but the model); one without a fingerprint (an
    interrupted write) or with another is replaced.
    Cost: O(|M| + |N| + class edges) writes: parameterised ``UNWIND`` batches of parallel lists on a few
    concurrent sessions (:class:`graphlink.store.batches.Batches`); each batch looks its classes up once.
    ``progress(fraction, message)`` as batches complete.
    """
    t = table if table is not None else tables(result, risk)
    fp = t.fingerprint()
    stored = store.conn.query("MATCH (a:Analysis {release: $release, kind: 'link-graph'}) "
                              "RETURN a.run AS run, a.fingerprint AS fingerprint", {"release": name})
    if len(stored) == 1 and stored[0]["fingerprint"] == fp:
        # the same link graph is stored, complete (its fingerprint is set last): replacing it would delete and
        # recreate millions of relationships to the same end
        set_model(store, name, t.model)
        if progress:
            progress(1.0, "the same link graph is stored already")
        return str(stored[0]["run"])
    drop(store, name)
    run = store.new_analysis(name, "link-graph", "link-graph", {"class_edges": t.analysis["class_edges"]},
                              t.analysis)
    set_model(store, name, t.model)
    out = Batches(store.conn, progress, total=t.rows, what="link graph rows")
    for side in ("identified", "deidentified"):
        n = len(t.size[side])
        out.run("""UNWIND range(0, size($cid) - 1) AS i
                   CREATE (:TrailClass {release: $release, side: $side, cid: $cid[i], trail: $trail[i],
                                        size: $size[i], null_degree: $nd[i], run: $run})
                   RETURN count(*) AS n""",
                ({"release": name, "side": side, "run": run, "cid": list(range(lo, hi)), "trail": t.trail[side][lo:hi],
                  "size": t.size[side][lo:hi].tolist(), "nd": t.null[side][lo:hi].tolist()}
                 for lo, hi in _spans(n, CHUNK)), rows="cid")
    for side in ("identified", "deidentified"):
        order = np.argsort(t.cid[side], kind="stable")   # batches of (mostly) disjoint classes: few lock waits
        keys, cids = t.keys[side][order], t.cid[side][order]
        out.run(f"""MATCH (c:TrailClass {{release: $release, side: $side}})
                      USING INDEX SEEK c:TrailClass(release, side, cid) WHERE c.cid IN $uc
                    WITH c ORDER BY c.cid WITH collect(c) AS cs WHERE size(cs) = size($uc)
                    UNWIND range(0, size($key) - 1) AS i
                    MATCH (e:{LABEL[side]} {{release: $release, key: $key[i]}})
                      USING INDEX SEEK e:{LABEL[side]}(release, key)
                    WITH e, cs[$pc[i]] AS c
                    CREATE (e)-[:IN_CLASS]->(c)
                    RETURN count(*) AS n""",
                (_members(name, side, keys[lo:hi], cids[lo:hi]) for lo, hi in _spans(len(keys), LINK_CHUNK)),
                rows="key")
    # Class LINKs in rounds of lanes on disjoint classes at both ends (rounds()): no lock waits, no deadlocks.
    for lanes in rounds(t.ci, t.cj, out.workers, LINK_CHUNK):
        out.run_lanes(LINK_QUERY, [(_class_links(name, run, t, rows) for rows in lane) for lane in lanes], rows="pa")
    if t.elements is not None:
        _element_batches(out, name, run, t.elements)
    # last: a write that was interrupted has no fingerprint, so the next one replaces it
    store.conn.query("MATCH (a:Analysis {run: $run}) SET a.fingerprint = $fingerprint", {"run": run, "fingerprint": fp})
    return run


#: One batch of class LINKs: its distinct end classes looked up once (one seek per *class*, on the composite
#: uniqueness constraint's index), then the edges addressed by list position (no lookup per edge).
LINK_QUERY = """MATCH (x:TrailClass {release: $release, side: 'identified'})
                 USING INDEX SEEK x:TrailClass(release, side, cid) WHERE x.cid IN $ua
               WITH x ORDER BY x.cid WITH collect(x) AS xs WHERE size(xs) = size($ua)
               MATCH (y:TrailClass {release: $release, side: 'deidentified'})
                 USING INDEX SEEK y:TrailClass(release, side, cid) WHERE y.cid IN $ub
               WITH xs, y ORDER BY y.cid WITH xs, collect(y) AS ys WHERE size(ys) = size($ub)
               UNWIND range(0, size($pa) - 1) AS i
               WITH xs[$pa[i]] AS x, ys[$pb[i]] AS y, i
               CREATE (x)-[:LINK {allowed: $al[i], vital: $vi[i], flow: $fl[i], run: $run,
                                  probability: $pr[i], probability_exact: $px[i], probability_error: $pe[i]}]->(y)
               RETURN count(*) AS n"""


def _cuts(weights: np.ndarray, parts: int) -> np.ndarray:
    """``parts + 1`` ascending bounds that split ``range(len(weights))`` into contiguous ranges of about equal
    total weight (a range may be empty when one item outweighs a share). O(len(weights))."""
    cum = np.cumsum(weights)
    total = int(cum[-1]) if len(cum) else 0
    inner = np.searchsorted(cum, [total * k / parts for k in range(1, parts)], side="left") + 1
    return np.concatenate([[0], np.minimum(inner, len(weights)), [len(weights)]]).astype(np.int64)


def rounds(ci: np.ndarray, cj: np.ndarray, lanes: int, chunk: int) -> list[list[list[np.ndarray]]]:
    """Row positions of the class LINKs ``(ci[k], cj[k])`` as rounds of ``lanes`` lanes of batches, such that the
    lanes of one round touch disjoint classes at *both* ends.

    The identified classes and the de-identified classes are each cut into ``lanes`` contiguous ranges of about
    equal edge counts (a grid of ``lanes``² blocks); round ``r`` gives lane ``a`` the block (``a``,
    ``(a + r) mod lanes``), a Latin square, so every block is written exactly once and no two lanes of a round
    share a node. Each block is cut into batches of at most ``chunk`` rows, in ``(ci, cj)`` order. Concurrent
    transactions then never wait for each other's node locks (creating a relationship locks both its ends until
    the transaction commits; with batches that all reach the same de-identified classes they did, and deadlocked).
    O(rows + classes).

    Examples
    --------
    >>> ci, cj = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    >>> [[[b.tolist() for b in lane] for lane in r] for r in rounds(ci, cj, 2, 10)]
    [[[[0]], [[3]]], [[[1]], [[2]]]]
    """
    lanes = max(int(lanes), 1)
    if len(ci) == 0:
        return []
    xa = _cuts(np.bincount(ci), lanes)
    yb = _cuts(np.bincount(cj), lanes)
    bx = np.searchsorted(xa, ci, side="right") - 1        # the range of each row's identified class
    by = np.searchsorted(yb, cj, side="right") - 1
    block = bx * lanes + by
    order = np.argsort(block, kind="stable")               # (ci, cj) order within a block
    bounds = np.searchsorted(block[order], np.arange(lanes * lanes + 1))
    out = []
    for r in range(lanes):
        lanes_r = []
        for a in range(lanes):
            b = (a + r) % lanes
            rows = order[bounds[a * lanes + b]:bounds[a * lanes + b + 1]]
            lanes_r.append([rows[lo:lo + chunk] for lo in range(0, len(rows), chunk)])
        if any(lanes_r):
            out.append([lane for lane in lanes_r if lane])
    return out


def set_model(store: Any, name: str, model: dict) -> None:
    """The data model the link graph was built under, on the Release node (the Cypher trails follow it)."""
    store.conn.query("""MATCH (r:Release {name: $release})
                    SET r.model_reserved = $reserved, r.model_multiplicity = $multiplicity, r.model_reason = $reason""",
                 {"release": name, **model})


def _spans(n: int, size: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def _members(name: str, side: str, keys: np.ndarray, cids: np.ndarray) -> dict:
    uc, pc = np.unique(cids, return_inverse=True)
    return {"release": name, "side": side, "key": keys.tolist(), "uc": uc.tolist(), "pc": pc.tolist()}


def _class_links(name: str, run: str, t: Tables, rows: np.ndarray) -> dict:
    """One batch of class LINKs (the rows at positions ``rows``): its distinct end classes (two index seeks per
    *class*, not per edge) and the edges as list positions (~3× the per-row-MATCH rate)."""
    ua, pa = np.unique(t.ci[rows], return_inverse=True)
    ub, pb = np.unique(t.cj[rows], return_inverse=True)
    return {"release": name, "run": run, "ua": ua.tolist(), "ub": ub.tolist(), "pa": pa.tolist(),
            "pb": pb.tolist(), "al": t.allowed[rows].tolist(), "vi": t.vital[rows].tolist(),
            "fl": t.flow[rows].tolist(), **_probabilities(t.probability, t.probability_exact, t.probability_error,
                                                          rows)}


def _probabilities(p: np.ndarray | None, x: np.ndarray | None, e: np.ndarray | None, rows: Any) -> dict:
    """The batch's probability parameters (``pr``, ``px``, ``pe``): lists, or null when not computed."""
    if p is None or x is None or e is None:
        return {"pr": None, "px": None, "pe": None}
    return {"pr": p[rows].tolist(), "px": x[rows].tolist(), "pe": e[rows].tolist()}


def _element_batches(out: Any, name: str, run: str, el: dict[str, np.ndarray]) -> None:
    out.run("""UNWIND range(0, size($i) - 1) AS n
               MATCH (i:Identified {release: $release, key: $i[n]}) USING INDEX SEEK i:Identified(release, key)
               MATCH (d:Deidentified {release: $release, key: $d[n]}) USING INDEX SEEK d:Deidentified(release, key)
               CREATE (i)-[:LINK {allowed: $al[n], vital: $vi[n], matched: $ma[n], run: $run,
                                  probability: $pr[n], probability_exact: $px[n], probability_error: $pe[n]}]->(d)
               RETURN count(*) AS n""",
            ({"release": name, "run": run, "i": el["i"][lo:hi].tolist(), "d": el["d"][lo:hi].tolist(),
              "al": el["allowed"][lo:hi].tolist(), "vi": el["vital"][lo:hi].tolist(),
              "ma": el["matched"][lo:hi].tolist(),
              **_probabilities(el.get("probability"), el.get("probability_exact"), el.get("probability_error"),
                               slice(lo, hi))} for lo, hi in _spans(len(el["i"]), CHUNK)), rows="i")


def _write_element_links(store: Any, name: str, run: str, result: Any, arr: dict) -> None:
    """Element-level LINK edges (small releases only), as :func:`write` writes them (the Spark writer's too)."""
    _element_batches(Batches(store.conn), name, run, element_tables(result, arr))


def drop(store: Any, name: str) -> None:
    """Remove the release's written link graph (classes, memberships, class and element LINKs, its Analysis).

    Relationships first, a class at a time in bounded batches on the concurrent sessions of
    :class:`graphlink.store.batches.Batches` (a class node of a low-entropy release can carry 1e5 edges): the
    batches are cut by the classes' degrees (O(1) each), so a transaction deletes about ``LINK_CHUNK`` edges.
    The class LINKs go in the rounds of lanes the writer uses (:func:`_drop_class_links`).
    """
    out = Batches(store.conn)
    _drop_class_links(store, name, out.workers)
    for side in ("deidentified", "identified"):
        degrees = store.conn.query("MATCH (c:TrailClass {release: $name, side: $side}) "
                               "RETURN c.cid AS cid, COUNT { (c)<-[:IN_CLASS]-() } AS n", {"name": name, "side": side})
        out.run("""MATCH (c:TrailClass {release: $release, side: $side}) WHERE c.cid IN $cids
                   MATCH (c)<-[l:IN_CLASS]-() DELETE l RETURN count(*) AS n""",
                ({"release": name, "side": side, "cids": cids} for cids in _by_weight(degrees, LINK_CHUNK)))
    store.conn.run_auto("MATCH (c:TrailClass {release: $name}) "
                    "CALL (c) { DETACH DELETE c } IN TRANSACTIONS OF 10000 ROWS", {"name": name})
    store.conn.run_auto("MATCH (:Identified {release: $name})-[l:LINK]->() "
                    "CALL (l) { DELETE l } IN TRANSACTIONS OF 10000 ROWS", {"name": name})
    store.conn.query("MATCH (a:Analysis {release: $name, kind: 'link-graph'}) DETACH DELETE a", {"name": name})


def _drop_class_links(store: Any, name: str, lanes: int) -> None:
    """Delete the release's class LINKs in rounds of ``lanes`` lanes that reach disjoint classes at both ends, as
    :func:`rounds` schedules the writes: the identified and the de-identified classes are each cut into ``lanes``
    ranges of about equal degree, round ``r`` gives lane ``a`` the identified range ``a`` and the de-identified
    range ``(a + r) mod lanes``, and a lane deletes its block a group of identified classes (about ``LINK_CHUNK``
    edges) at a time. Deleting a relationship locks both its ends, so batches that all reached the same
    de-identified classes waited for each other. O(classes) reads, O(class LINKs) deletes."""
    deg = {}
    for side, pattern in (("identified", "(c)-[:LINK]->()"), ("deidentified", "(c)<-[:LINK]-()")):
        recs = store.conn.query(f"MATCH (c:TrailClass {{release: $name, side: $side}}) "
                            f"RETURN c.cid AS cid, COUNT {{ {pattern} }} AS n", {"name": name, "side": side})
        d = np.zeros(max((int(r["cid"]) for r in recs), default=-1) + 1, np.int64)
        for r in recs:
            d[int(r["cid"])] = int(r["n"])
        deg[side] = d
    if not deg["identified"].sum():
        return
    lanes = max(int(lanes), 1)
    xa, yb = _cuts(deg["identified"], lanes), _cuts(deg["deidentified"], lanes)
    query = """MATCH (c:TrailClass {release: $release, side: 'identified'})
                 USING INDEX SEEK c:TrailClass(release, side, cid) WHERE c.cid IN $cids
               MATCH (c)-[l:LINK]->(y:TrailClass) WHERE y.cid >= $lo AND y.cid < $hi
               DELETE l RETURN count(*) AS n"""
    out = Batches(store.conn, workers=lanes)
    for r in range(lanes):
        work = []
        for a in range(lanes):
            b = (a + r) % lanes
            cids = np.arange(xa[a], xa[a + 1])
            share = deg["identified"][cids] * max(int(deg["deidentified"][yb[b]:yb[b + 1]].sum()), 1)
            # each class's edges into this de-identified range, estimated by the range's share of all degrees
            share = share // max(int(deg["deidentified"].sum()), 1) + 1
            groups = _by_weight([{"cid": c, "n": w} for c, w in zip(cids.tolist(), share.tolist(), strict=True)
                                 if deg["identified"][c]], LINK_CHUNK)
            work.append([{"release": name, "cids": g, "lo": int(yb[b]), "hi": int(yb[b + 1])} for g in groups])
        out.run_lanes(query, [lane for lane in work if lane])


def _by_weight(records: list, limit: int) -> list[list[int]]:
    """Class ids in groups of at most ``limit`` edges (a class of more goes alone)."""
    groups: list[list[int]] = []
    cur: list[int] = []
    weight = 0
    for rec in records:
        if not rec["n"]:
            continue
        if cur and weight + rec["n"] > limit:
            groups.append(cur)
            cur, weight = [], 0
        cur.append(int(rec["cid"]))
        weight += int(rec["n"])
    if cur:
        groups.append(cur)
    return groups
