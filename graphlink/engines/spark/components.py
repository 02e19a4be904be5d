"""Exact analyses when the class graph is too large for the driver: split by connected components in Spark,
classify each part with the core engine in an executor (docs/algorithms.md#connected-components).

1. **Components** of the class graph (vertices: twin classes of both sides, ids ``cid``; edges: class links).
   Alternating large-star / small-star rounds (Kiveris et al., "Connected components in MapReduce and beyond",
   SoCC 2014) on the edge table until it is a star around each component's smallest id: O(log² n) rounds, each
   a few shuffles of the class edges.  A class graph of at most ``GRAPHLINK_SPARK_CC_DRIVER_EDGES`` edges
   (default 1e6) is labelled on the driver with scipy instead (``cc="auto"``).  Isolated classes are their own
   component.
2. **Buckets.**  Components are hashed into buckets (about ``GRAPHLINK_SPARK_BUCKET_ELEMENTS`` = 2.5e5 elements
   each, at least 2 per core), so one Python call serves many small components; a giant component (low-entropy
   releases) is one bucket.  Shuffle: the elements and class edges once each.
3. **Per bucket** (``cogroup().applyInPandas``): the bucket's elements (in element order) and class edges become a
   core :class:`~graphlink.core.linkgraph.LinkGraph` (:meth:`~graphlink.core.linkgraph.LinkGraph.from_classes` with the
   whole release's null padding) and the core runs the method — :func:`~graphlink.analysis.reidit.true_loves`,
   :func:`~graphlink.analysis.reidit.reidit_i` (with the whole release's Flip decision), ``reidit_ik``, ``reidit_m``,
   :func:`~graphlink.analysis.audit.audit`, one-to-many certain pairs — with the matching engine the whole graph would
   use. Every part of these analyses is per component: maximum matchings and Dulmage–Mendelsohn decompose over
   components, null trails follow a closed form in each part's own deficiency (docs/algorithms.md#null-trails),
   REIDIT-I's propagation never crosses a component.
4. **Merge** on the driver: counts are summed, Hall's condition is the sum of matched elements, element lists are
   ordered by element, and the texts that depend on the whole release (diagnostics, the "not certain" caveat,
   the explanation budget ``EXPLAIN_LIMIT``) are written there with the core's own functions.

Results equal the driver split's pairs, union degrees, verdicts and counts.  Two things can differ, both only
where the data admits several maximum matchings: which elements a diagnostic names as unmatched when Hall's
condition fails, and which (equally valid) tight set a forced pair's reason names.  Pair order: true loves and
REIDIT-M as the local engine; REIDIT-I/I-K by reserved-side element (the local order is its propagation order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from graphlink import registry
from graphlink.analysis.audit import AuditResult
from graphlink.analysis.reidit import (
    EXPLAIN_LIMIT,
    Reidentification,
    conflict_diagnostic,
    forced_short_reason,
    hall_diagnostic,
    many_refuted,
    note_unsolved,
    orphan_diagnostic,
)
from graphlink.analysis.results import ReidentifySummary
from graphlink.config import get_config
from graphlink.engines.spark.fill import SparkTrails, storage_level, to_uint64, word_cols
from graphlink.engines.spark.links import edges

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

CAVEAT_ONE = " [the data breaks the model (Hall's condition fails): not certain]"
#: per-bucket output rows; the meaning of a/b/n1..n3/f1/f2 depends on ``kind`` (see ``_run_bucket``)
SCHEMA = "kind string, a string, b string, reason string, n1 long, n2 long, n3 long, f1 boolean, f2 boolean"


# ------------------------------------------------------------------------------------------ 1. components
def _large_star(e: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    both = e.unionByName(e.select(F.col("b").alias("a"), F.col("a").alias("b")))
    low = both.groupBy("a").agg(F.least(F.col("a"), F.min("b")).alias("m"))
    return (both.join(low, "a").filter(F.col("b") > F.col("a"))
            .select(F.col("b").alias("a"), F.col("m").alias("b")).distinct())


def _small_star(e: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    up = e.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v"))
    low = up.groupBy("u").agg(F.min("v").alias("m"))
    out = (up.join(low, "u").select(F.col("v").alias("a"), F.col("m").alias("b"))
           .unionByName(low.select(F.col("u").alias("a"), F.col("m").alias("b"))))
    return out.filter(F.col("a") != F.col("b")).distinct()


def _stars(e: DataFrame) -> DataFrame:
    """Large-star / small-star rounds until the edge set stops changing; returns (node, component min)."""
    from pyspark.sql import functions as F

    e = e.filter(F.col("a") != F.col("b")).distinct().localCheckpoint()
    while True:
        nxt = _small_star(_large_star(e)).localCheckpoint()
        if nxt.count() == e.count() and nxt.exceptAll(e).isEmpty():
            break
        e = nxt
    return e.select(F.greatest("a", "b").alias("cid"), F.least("a", "b").alias("comp"))


def labels(st: SparkTrails, cc: str = "auto") -> DataFrame:
    """Component label ``comp`` (smallest class id in the component) for every class ``cid``; cached per trails
    and method."""
    from pyspark.sql import functions as F

    cache = st.__dict__.setdefault("_cache", {})
    if ("labels", cc) in cache:
        return cache[("labels", cc)]

    e = edges(st).select(F.col("id_cid").alias("a"), F.col("de_cid").alias("b"))
    if cc == "driver" or (cc == "auto" and e.count() <= get_config().spark_cc_driver_edges):
        lab = _driver_labels(e.toPandas(), st.classes.sparkSession)
    else:
        lab = _stars(e)
    out = (st.classes.select("cid").join(lab, "cid", "left")
           .select("cid", F.coalesce("comp", "cid").alias("comp")).persist(storage_level()))
    cache[("labels", cc)] = out
    return out


def _driver_labels(e: pd.DataFrame, spark: Any) -> DataFrame:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    ids, inv = np.unique(np.concatenate([e["a"].to_numpy(np.int64), e["b"].to_numpy(np.int64)]),
                         return_inverse=True)
    n, m = len(ids), len(e)
    g = sp.csr_matrix((np.ones(m, np.int8), (inv[:m], inv[m:])), shape=(n, n))
    _, lab = connected_components(g, directed=False)
    low = np.full(lab.max() + 1 if n else 0, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(low, lab, ids)
    frame = pd.DataFrame({"cid": ids, "comp": low[lab] if n else ids})
    return spark.createDataFrame(frame, "cid long, comp long")


# ----------------------------------------------------------------------------------------------- 2. buckets
def _n_buckets(st: SparkTrails) -> int:
    sc = st.classes.sparkSession.sparkContext
    per = get_config().spark_bucket_elements
    return max(2 * sc.defaultParallelism, -(-(st.n_identified + st.n_deidentified) // per))


def graph_size(st: SparkTrails) -> tuple[int, int]:
    """(element-level edges Σ a_i·b_j, class edges) of the whole link graph; one aggregation, cached."""
    from pyspark.sql import functions as F

    cache = st.__dict__.setdefault("_cache", {})
    if "size" not in cache:
        sizes = st.classes.select("cid", "size")
        row = (edges(st).join(sizes.withColumnRenamed("cid", "id_cid").withColumnRenamed("size", "a"), "id_cid")
               .join(sizes.withColumnRenamed("cid", "de_cid").withColumnRenamed("size", "b"), "de_cid")
               .agg(F.count(F.lit(1)).alias("e"), F.sum(F.col("a") * F.col("b")).alias("x")).collect()[0])
        cache["size"] = (int(row["x"] or 0), int(row["e"]))
    return cache["size"]


def _engine(st: SparkTrails) -> str:
    """The matching engine ``classify_edges(engine='auto')`` picks for the whole graph
    (:attr:`graphlink.core.linkgraph.LinkGraph.prefers_twins`)."""

    expanded, n_edges = graph_size(st)
    prefers = expanded > get_config().max_expanded_edges or (expanded > 4 * max(1, n_edges) and expanded > 2_000_000)
    return "twins" if prefers else "elements"


def _null(st: SparkTrails) -> tuple[int, str | None]:
    """The §4.2.4 null padding of the whole release (:func:`graphlink.core.linkgraph._null_padding`)."""
    n_m, n_n, reserved = st.n_identified, st.n_deidentified, st.model.reserved
    if reserved == "deidentified" and n_m > n_n:
        return n_m - n_n, "deidentified"
    if reserved == "identified" and n_n > n_m:
        return n_n - n_m, "identified"
    return 0, None


def _r_s(st: SparkTrails) -> tuple[int, int]:
    """(|R|, |S|): reserved-side and complete-side element counts."""
    if st.star_side == "identified":
        return st.n_identified, st.n_deidentified
    return st.n_deidentified, st.n_identified


def _needs_locations(st: SparkTrails) -> bool:
    return st.one_to_many and st.model.reserved == "none"


def run(st: SparkTrails, task: dict, cc: str = "auto") -> pd.DataFrame:
    """Run one task (see ``_run_bucket``) on every bucket; returns the collected output rows."""
    return run_frame(st, task, cc).toPandas()


def run_frame(st: SparkTrails, task: dict, cc: str = "auto") -> DataFrame:
    """Run one task (see ``_run_bucket``) on every bucket; the output rows stay in Spark (persisted)."""
    from pyspark.sql import functions as F

    lab = labels(st, cc)
    n = _n_buckets(st)
    bucket = lab.select("cid", F.pmod(F.xxhash64("comp"), F.lit(n)).alias("bucket"))
    # nothing withheld, one-to-many: the cover constraints need every element's locations (its ones words)
    words = word_cols("o", st.n_words) if _needs_locations(st) else []
    els = st.elements.select("side", "eid", "element", "cid", *words).join(bucket, "cid")
    # a fresh projection (new column ids): the same table on both sides of a cogroup is an ambiguous self-join
    eds = edges(st).join(bucket.select(F.col("cid").alias("id_cid"), F.col("bucket").alias("bucket")), "id_cid")
    m = st.model
    n_r, n_s = _r_s(st)
    null = _null(st)
    ctx = {**task, "locations": list(st.locations), "sizes": st.sizes, "reserved": m.reserved, "reason": m.reason,
           "multiplicity": m.multiplicity, "decided_by": m.decided_by, "n_null": null[0], "null_side": null[1],
           "flip": n_r == n_s, "engine": _engine(st)}

    def apply(_key: Any, left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        return _run_bucket(ctx, left, right)

    return (els.groupBy("bucket").cogroup(eds.groupBy("bucket")).applyInPandas(apply, SCHEMA)
            .persist(storage_level()))


# -------------------------------------------------------------------------------------------- 3. per bucket
def _bucket_graph(ctx: dict, left: pd.DataFrame, right: pd.DataFrame) -> tuple[Any, dict]:
    """The bucket's core LinkGraph (elements in element order, classes in first-appearance order) and the
    element ids (``eid``) per side."""
    from graphlink.core.linkgraph import LinkGraph
    from graphlink.core.trails import Trails, TrailSide

    n_loc = len(ctx["locations"])
    sides, ranks, eids, cids = {}, {}, {}, {}
    for side in ("identified", "deidentified"):
        part = left[left["side"] == side].sort_values("eid", kind="stable")
        cid = part["cid"].to_numpy(np.int64)
        cids[side] = np.unique(cid)
        ranks[side] = np.searchsorted(cids[side], cid)
        eids[side] = part["eid"].to_numpy(np.int64)
        words = word_cols("o", -(-n_loc // 64))
        ones = to_uint64(part, words) if words[0] in part.columns else np.zeros((len(part), 0), np.uint64)
        sides[side] = TrailSide(part["element"].to_numpy(dtype=object), ones, ones, n_loc)
    trails = Trails(ctx["locations"], sides["identified"], sides["deidentified"], ctx["reserved"], ctx["reason"],
                    ctx["sizes"], ctx["multiplicity"], ctx["decided_by"])
    cei = np.searchsorted(cids["identified"], right["id_cid"].to_numpy(np.int64))
    cej = np.searchsorted(cids["deidentified"], right["de_cid"].to_numpy(np.int64))
    graph = LinkGraph.from_classes(trails, ranks["identified"], ranks["deidentified"], cei, cej,
                                   n_null=ctx["n_null"], null_side=ctx["null_side"])
    return graph, {"eid": eids, "cid": cids}


def _rows(kind: str, n: int, **cols: Any) -> pd.DataFrame:
    # strings as object columns: pyspark 4.3 cannot send pandas 3's chunked Arrow-backed str columns
    out = pd.DataFrame({"kind": pd.Series([kind] * n, dtype=object)})
    for c in ("a", "b", "reason"):
        out[c] = pd.Series(np.asarray(cols.get(c, [None] * n), dtype=object) if n else [], dtype=object)
    for c in ("n1", "n2", "n3"):
        out[c] = np.asarray(cols.get(c, np.zeros(n)), dtype=np.int64) if n else np.zeros(0, np.int64)
    for c in ("f1", "f2"):
        out[c] = np.asarray(cols.get(c, np.zeros(n, bool)), dtype=bool) if n else np.zeros(0, bool)
    return out


def _stats(**values: int) -> pd.DataFrame:
    return _rows("stat", len(values), a=list(values), n1=[int(v) for v in values.values()])


def _elements(kind: str, side: str, keys: np.ndarray, eids: np.ndarray, rows: np.ndarray, group: int = 0,
              values: np.ndarray | None = None) -> pd.DataFrame:
    rows = np.asarray(rows, np.int64)
    return _rows(kind, len(rows), a=[str(k) for k in keys[rows]], b=[side] * len(rows), n1=eids[rows],
                 n2=np.full(len(rows), group), n3=values[rows] if values is not None else np.zeros(len(rows)))


def _run_bucket(ctx: dict, left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
    """One bucket through the core: ``ctx["bucket"]`` (a bucket function, resolved on the driver from the method's
    spec, :mod:`graphlink.registry`, or one of this module's tasks) on the bucket's link graph.  Output rows
    (``SCHEMA``) by ``kind``:

    * ``pair``: a identified, b de-identified, reason; n1..n3 sort keys; f1 forced (reason names a tight set)
    * ``viol``: a element, b side, n1 union degree, n2 its non-null part
    * ``unmatched`` / ``conflict`` / ``orphan`` / ``uncovered``: a element, b side, n1 eid, n2 group
    * ``edge``: n1 id cid, n2 de cid, n3 flow, f1 allowed, f2 vital; ``null``: n1 cid, n3 null degree
    * ``stat``: a name, n1 value
    """
    if left.empty:
        return _rows("stat", 0)
    graph, ids = _bucket_graph(ctx, left, right)
    out = ctx["bucket"](ctx, graph, ids)
    return out.astype({"kind": object, "a": object, "b": object, "reason": object})


def _r_side(graph: Any) -> tuple[str, str]:
    star = graph.trails.star_side
    return star, ("deidentified" if star == "identified" else "identified")


def _keys(graph: Any) -> dict[str, np.ndarray]:
    tr = graph.trails
    return {"identified": tr.identified.keys, "deidentified": tr.deidentified.keys}


def _classified(ctx: dict, graph: Any, ids: dict, finish: Any) -> pd.DataFrame:
    """One-to-one data: the bucket's edges classified (maximum matching, true loves, the union of all maximum
    matchings), its unmatched elements and counts, then ``finish(classes, out)`` adds the task's own rows."""
    from graphlink.analysis.matching import classify_edges

    tr = graph.trails
    eid = ids["eid"]
    star, other = _r_side(graph)
    keys = _keys(graph)
    out: list[pd.DataFrame] = []
    classes = classify_edges(graph, engine=ctx["engine"])
    mate = {"identified": classes.mate_identified, "deidentified": classes.mate_deidentified}
    out.append(_elements("unmatched", star, keys[star], eid[star], np.flatnonzero(mate[star] < 0), 0))
    if tr.reserved == "none":
        out.append(_elements("unmatched", other, keys[other], eid[other], np.flatnonzero(mate[other] < 0), 1))
    out.append(_stats(nu_real=classes.nu_real, true_loves=classes.n_true_loves,
                      union_edges=int(np.sum(classes.union_degree_identified))))
    finish(classes, out)
    return pd.concat(out, ignore_index=True)


def _classified_many(ctx: dict, graph: Any, ids: dict, possible: bool, finish: Any) -> pd.DataFrame:
    """One-to-many data (Appendix A): the bucket classified (:mod:`graphlink.analysis.onetomany`, every step per
    connected component, so each bucket's verdicts are the whole release's), its refusals and counts, then
    ``finish(classes, out)`` adds the task's own rows."""
    import warnings

    from graphlink.analysis.onetomany import classify_one_to_many

    out: list[pd.DataFrame] = []
    with warnings.catch_warnings():           # budget notes are the driver's to give, once, for the whole release
        warnings.simplefilter("ignore")
        mc = classify_one_to_many(graph, possible=possible)
        out.append(_refusal_rows("refusal", mc.refusals, ids))
        out.append(_refusal_rows("unsolved", mc.unsolved, ids))
        out.append(_stats(true_loves=mc.n_true_loves, union_edges=int(np.sum(mc.union_degree_identified))
                          if mc.union_degree_identified is not None else 0))
        finish(mc, out)
    return pd.concat(out, ignore_index=True)


def bucket_true_loves(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """True loves of one bucket (the ``true-loves`` spec's Spark bucket): the pairs with their reasons and
    whether each is forced; one-to-many data: the certain pairs."""
    from graphlink.analysis.reidit import certain_one_to_many, true_loves

    eid = ids["eid"]
    if graph.trails.one_to_many:
        def many(mc: Any, out: list) -> None:
            res = certain_one_to_many(graph, classes=mc)
            m, n = mc.true_love_pairs
            if len(res.pairs):
                out.append(_rows("pair", len(res.pairs), a=res.pairs["identified"], b=res.pairs["deidentified"],
                                 reason=res.pairs["reason"], n1=eid["identified"][m], n2=eid["deidentified"][n]))
        return _classified_many(ctx, graph, ids, False, many)
    star, _ = _r_side(graph)

    def one(classes: Any, out: list) -> None:
        ti, tj = classes.true_love_pairs
        deg_i, deg_j = graph.degrees()
        forced = (deg_j[tj] if star == "deidentified" else deg_i[ti]) > 1
        explain = ctx["explain"] if ctx["explain"] is not None else int(forced.sum()) <= EXPLAIN_LIMIT
        res = true_loves(classes, explain=explain)
        out.append(_stats(forced=int(forced.sum())))
        out.append(_rows("pair", len(res.pairs), a=res.pairs["identified"], b=res.pairs["deidentified"],
                         reason=res.pairs["reason"], n1=ids["cid"]["deidentified"][graph.de_class[tj]],
                         n2=ids["cid"]["identified"][graph.id_class[ti]], f1=forced))
    return _classified(ctx, graph, ids, one)


def bucket_audit(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """The k-unlinkability audit's violations in one bucket (Definition 19; ``ctx["k"]``)."""
    from graphlink.analysis.audit import audit

    def rows(classes: Any, out: list) -> None:
        if graph.trails.one_to_many and (classes.unsolved or classes.consistent is False):
            return
        v = audit(classes, ctx["k"]).violations
        out.append(_rows("viol", len(v), a=v["element"].astype(str), b=v["side"], n1=v["union_degree"],
                         n2=v["union_degree_non_null"]))
    if graph.trails.one_to_many:
        return _classified_many(ctx, graph, ids, True, rows)
    return _classified(ctx, graph, ids, rows)


def bucket_classified_graph(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """One bucket's classified class graph (edges with flow, allowed, vital or certain; null degrees), for the
    store (:mod:`graphlink.engines.spark.neo4j`)."""
    if graph.trails.one_to_many:
        return _classified_many(ctx, graph, ids, True, lambda mc, out: out.append(_graph_rows(
            graph, ids, mc.class_allowed, mc.class_certain, mc.class_flow, None, None, 0)))
    return _classified(ctx, graph, ids, lambda c, out: out.append(_graph_rows(
        graph, ids, c.class_allowed, c.class_vital, c.class_flow, c.null_allowed, c.complete_side, ctx["n_null"])))


def bucket_reidit_m(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """REIDIT-M in one bucket (the ``multiple`` spec's Spark bucket): pairs, orphans and, on one-to-many data with
    nothing withheld, the refusals of the consistency check."""
    import warnings

    with warnings.catch_warnings():       # notes are the driver's to give, once, for the whole release
        warnings.simplefilter("ignore")
        return _reidit_m_rows(graph, ids)


def _reidit_m_rows(graph: Any, ids: dict) -> pd.DataFrame:
    from graphlink.analysis.reidit import reidit_m

    tr = graph.trails
    eid = ids["eid"]
    keys = _keys(graph)
    out = []
    res = reidit_m(graph)
    v = _view(graph)
    deg_r, deg_s = _class_degrees(v)
    if tr.one_to_many:
        from graphlink.analysis.onetomany import classify_one_to_many

        out.append(_elements("orphan", "identified", keys["identified"], eid["identified"],
                             np.flatnonzero(deg_r[v.r_class] == 0)))
        if tr.reserved == "none":
            mc = classify_one_to_many(graph, possible=False, backbone=False)
            out.append(_refusal_rows("refusal", mc.refusals, ids))
            out.append(_refusal_rows("unsolved", mc.unsolved, ids))
        loop_side, loop_eid = "identified", eid["identified"]
    else:
        star, other = _r_side(graph)
        loop_s = tr.reserved == "none"
        orphans = (np.flatnonzero(deg_s[v.s_class] == 0) if loop_s else np.flatnonzero(deg_r[v.r_class] == 0))
        loop_side, loop_eid = (other, eid[other]) if loop_s else (star, eid[star])
        out.append(_elements("orphan", loop_side, keys[loop_side], loop_eid, orphans))
    order = _loop_order(res.pairs, keys[loop_side], loop_eid, loop_side)
    out.append(_rows("pair", len(res.pairs), a=res.pairs["identified"], b=res.pairs["deidentified"],
                     reason=res.pairs["reason"], n1=order))
    return pd.concat(out, ignore_index=True)


def bucket_reidit_i(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """REIDIT-I, or REIDIT-I-K when the spec's pairs are candidate groups (``ctx["groups"]``), in one bucket: pairs
    in the release's order, conflicts, and REIDIT-I-K's counts.  Flip is the whole release's (``ctx["flip"]``)."""
    from graphlink.analysis.reidit import reidit_i, reidit_ik

    eid = ids["eid"]
    star, other = _r_side(graph)
    keys = _keys(graph)
    out = []
    r_eid = eid[star]
    res = reidit_ik(graph, ctx["k"]) if ctx["groups"] else reidit_i(graph, flip=ctx["flip"])
    conflicts = np.asarray(res.summary.conflicts or (), dtype=object)
    pos = {str(k): i for i, k in enumerate(keys[star])}
    rows = np.array([pos[str(c)] for c in conflicts], np.int64)
    out.append(_elements("conflict", star, keys[star], r_eid, rows))
    order = _loop_order(res.pairs, keys[star], r_eid, star)
    n_unique = int(res.summary.unique if res.summary.unique is not None else len(res.pairs))
    group = (np.arange(len(res.pairs)) >= n_unique).astype(np.int64)
    out.append(_rows("pair", len(res.pairs), a=res.pairs["identified"], b=res.pairs["deidentified"],
                     reason=res.pairs["reason"], n1=group, n2=order, n3=np.arange(len(res.pairs))))
    if ctx["groups"]:
        s = res.summary
        out.append(_stats(unique=s.unique, k_reidentified=s.k_reidentified, reidentified_elements=s.reidentified,
                          pairs=s.pairs))
    return pd.concat(out, ignore_index=True)


def bucket_pairs(ctx: dict, graph: Any, ids: dict) -> pd.DataFrame:
    """Any per-component method without a Spark bucket of its own: its function (``ctx["function"]``, with
    ``ctx["keywords"]``) on the bucket's link graph (or its trails), the pairs keyed by the identified element's
    order in the release so that :func:`merge_pairs` concatenates them in that order."""
    data = graph.trails if ctx["input"] == "trails" else graph
    res = ctx["function"](data, **ctx["keywords"])
    eid = ids["eid"]
    order = _loop_order(res.pairs, _keys(graph)["identified"], eid["identified"], "identified")
    return _rows("pair", len(res.pairs), a=res.pairs["identified"], b=res.pairs["deidentified"],
                 reason=res.pairs["reason"], n1=order, n2=np.arange(len(res.pairs)))


def _view(graph: Any) -> Any:
    from graphlink.analysis.reidit import class_view

    return class_view(graph)


def _class_degrees(v: Any) -> tuple[np.ndarray, np.ndarray]:
    from graphlink.kernels.rows import weighted_degrees

    return weighted_degrees(v.r_ptr, v.r_nb, v.s_size), weighted_degrees(v.s_ptr, v.s_nb, v.r_size)


def _loop_order(pairs: pd.DataFrame, keys: np.ndarray, eids: np.ndarray, side: str) -> np.ndarray:
    """The eid of each pair's element on ``side`` (its order in the release)."""
    pos = {str(k): e for k, e in zip(keys, eids, strict=True)}
    return np.array([pos[str(x)] for x in pairs[side]], np.int64)


def _refusal_rows(kind: str, refusals: list, ids: dict) -> pd.DataFrame:
    """Refusals (:class:`graphlink.analysis.onetomany.Refusal`) as rows: a its words, n1..n3 its order key with the row
    made an element id (so buckets merge in the local engine's order), f1 whether a budget note's component was found
    consistent."""
    eid = ids["eid"]
    n3 = [int(eid["identified" if r.code in ("orphan", "budget") else "deidentified"][r.key[2]]) if r.key[2] >= 0
          else -1 for r in refusals]
    return _rows(kind, len(refusals), a=[r.text() for r in refusals], n1=[r.key[0] for r in refusals],
                 n2=[r.key[1] for r in refusals], n3=n3, f1=[r.checked for r in refusals])


def _graph_rows(graph: Any, ids: dict, allowed: np.ndarray, vital: np.ndarray, flow: np.ndarray,
                null_allowed: np.ndarray | None, complete_side: str | None, n_null: int) -> pd.DataFrame:
    cid = ids["cid"]
    out = [_rows("edge", len(graph.class_ei), n1=cid["identified"][graph.class_ei],
                 n2=cid["deidentified"][graph.class_ej], n3=flow, f1=allowed, f2=vital)]
    if null_allowed is not None and n_null and complete_side is not None:
        cls = graph.id_class if complete_side == "identified" else graph.de_class
        per = np.zeros(len(cid[complete_side]), np.int64)
        per[cls[null_allowed]] = n_null
        out.append(_rows("null", len(per), b=[complete_side] * len(per), n1=cid[complete_side], n3=per))
    return pd.concat(out, ignore_index=True)


# ------------------------------------------------------------------------------------------------ 4. merge
def _stat(out: pd.DataFrame, name: str) -> int:
    s = out[(out["kind"] == "stat") & (out["a"] == name)]
    return int(s["n1"].sum())


def _listed(out: pd.DataFrame, kind: str) -> list[str]:
    part = out[out["kind"] == kind].sort_values(["n2", "n1"], kind="stable")
    return [str(x) for x in part["a"]]


def _pairs(out: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    part = out[out["kind"] == "pair"].sort_values(by, kind="stable")
    return pd.DataFrame({"identified": part["a"].to_numpy(dtype=object),
                         "deidentified": part["b"].to_numpy(dtype=object),
                         "reason": part["reason"].to_numpy(dtype=object)}).astype(object)


def _hall_ok(st: SparkTrails, nu_real: int) -> bool:
    n_r, n_s = _r_s(st)
    return nu_real == n_r and (st.model.reserved != "none" or nu_real == n_s)


def _budget(pairs: pd.DataFrame, forced: np.ndarray, n_forced: int, explain: bool | None, text: Any) -> None:
    """Forced pairs past the explanation budget get the core's short reason (the whole release's count)."""
    if explain is None and n_forced > EXPLAIN_LIMIT:
        for i in np.flatnonzero(forced):
            pairs.at[i, "reason"] = text(pairs.at[i, "identified"], pairs.at[i, "deidentified"])


def _caveat(pairs: pd.DataFrame, caveat: str) -> None:
    """The whole release breaks the model: every reason says so (a bucket only knew about itself)."""
    pairs["reason"] = pd.Series([r if r.endswith(caveat) else r + caveat for r in pairs["reason"]], dtype=object,
                                index=pairs.index)


def run_method(st: SparkTrails, spec: registry.MethodSpec, keywords: dict[str, Any],
               cc: str = "auto") -> Reidentification:
    """A re-identification method on the component split (module docstring), without truth or model (the
    parts' run of :class:`graphlink.engines.spark.engine.SparkParts`): the method's spec (:mod:`graphlink.registry`)
    names the bucket function and the merge; a method without them runs its own function per bucket
    (:func:`bucket_pairs`) and the pairs are concatenated (:func:`merge_pairs`).  ``keywords``: the function's
    (:meth:`graphlink.registry.MethodSpec.keywords`), the request validated already."""
    plan = spec.spark
    k, explain = keywords.get("k"), keywords.get("explain")
    ctx = {"method": spec.name, "k": k, "explain": explain, "groups": spec.candidate_groups, "input": spec.input,
           "bucket": registry.resolve(plan.bucket) if plan.bucket else bucket_pairs,
           "function": None if plan.bucket else spec.resolve(), "keywords": keywords}
    out = run(st, ctx, cc)
    merge = registry.resolve(plan.merge) if spec.merge == "custom" and plan.merge else merge_pairs
    return merge(st, out, ctx)


def merge_pairs(st: SparkTrails, out: pd.DataFrame, ctx: dict) -> Reidentification:
    """The buckets' pairs concatenated in the release's order (a spec's ``merge="concat"``)."""
    pairs = _pairs(out, ["n1", "n2"])
    summary = ReidentifySummary(ctx["method"], len(pairs), len(pairs), identified=st.n_identified,
                                deidentified=st.n_deidentified)
    return Reidentification(ctx["method"], pairs, summary)


def merge_reidit_i(st: SparkTrails, out: pd.DataFrame, ctx: dict) -> Reidentification:
    """REIDIT-I or REIDIT-I-K merged: pairs in the release's order, the conflicts of every bucket, the counts."""
    method, k = ctx["method"], ctx["k"]
    pairs = _pairs(out, ["n1", "n2", "n3"])
    conflicts = _listed(out, "conflict")
    diagnostic = conflict_diagnostic(st.model.label, conflicts) if conflicts else None
    sizes = {"identified": st.n_identified, "deidentified": st.n_deidentified}
    if not ctx["groups"]:
        n_r, n_s = _r_s(st)
        summary = ReidentifySummary(method, len(pairs), len(pairs), **sizes, flip=n_r == n_s,
                                    conflicts=conflicts, model_ok=not conflicts, diagnostic=diagnostic)
    else:
        summary = ReidentifySummary(method, _stat(out, "reidentified_elements"), _stat(out, "pairs"),
                                    **sizes, k=k, unique=_stat(out, "unique"),
                                    k_reidentified=_stat(out, "k_reidentified"), conflicts=conflicts,
                                    model_ok=not conflicts, diagnostic=diagnostic)
    return Reidentification(method, pairs, summary)


def merge_true_loves(st: SparkTrails, out: pd.DataFrame, ctx: dict) -> Reidentification:
    """True loves merged (the ``true-loves`` spec's Spark merge)."""
    return _merge_true_loves(st, out, ctx["explain"])


def merge_reidit_m(st: SparkTrails, out: pd.DataFrame, ctx: dict) -> Reidentification:
    """REIDIT-M merged (the ``multiple`` spec's Spark merge)."""
    return _merge_m(st, out)


def _true_loves_verdict(st: SparkTrails, out: pd.DataFrame, n_pairs: int) -> ReidentifySummary:
    """The true loves' summary for ``n_pairs`` pairs, from the buckets' stat and listing rows: whether the
    whole release keeps the model (one-to-one: Hall's condition; one-to-many: every de-identified element
    matched, no orphan) and, when not, why (the core's diagnostic)."""
    sizes = {"identified": st.n_identified, "deidentified": st.n_deidentified}
    if st.one_to_many:
        return _many_verdict(st, out, ReidentifySummary("true-loves", n_pairs, n_pairs, **sizes))
    nu_real = _stat(out, "nu_real")
    ok = _hall_ok(st, nu_real)
    unmatched = _listed(out, "unmatched")
    diagnostic = None
    if not ok:
        star = st.star_side
        other = "deidentified" if star == "identified" else "identified"
        diagnostic = hall_diagnostic(st.model, {star: _listed(out[out["n2"] == 0], "unmatched"),
                                                other: _listed(out[out["n2"] == 1], "unmatched")})
    return ReidentifySummary("true-loves", n_pairs, n_pairs, **sizes, maximum_matching_size=nu_real, model_ok=ok,
                             unmatched=unmatched[:50], engine=_engine(st), diagnostic=diagnostic)


def _merge_true_loves(st: SparkTrails, out: pd.DataFrame, explain: bool | None) -> Reidentification:
    is_pair = out["kind"] == "pair"
    order = out[is_pair].sort_values(["n1", "n2", "n3"], kind="stable")
    pairs = _pairs(order, ["n1", "n2", "n3"])
    forced = order["f1"].to_numpy(bool)
    n_forced = _stat(out, "forced")
    summary = _true_loves_verdict(st, out, len(pairs))
    if st.one_to_many:
        if summary.model_ok is False:
            return Reidentification("true-loves", pairs.iloc[:0], summary.with_(reidentified=0, pairs=0))
        return Reidentification("true-loves", pairs, summary)
    star = st.star_side
    _budget(pairs, forced, n_forced, explain, lambda i, d: (
        forced_short_reason(d, i) if star == "deidentified" else forced_short_reason(i, d)))
    if not summary.model_ok:
        _caveat(pairs, CAVEAT_ONE)
    return Reidentification("true-loves", pairs, summary)


def write_true_loves(st: SparkTrails, out: str, *, explain: bool = False, cc: str = "auto") -> ReidentifySummary:
    """True loves on the component split, their pairs written by the executors to the folder ``out``
    (:func:`graphlink.engines.spark.links.write_pairs`) and never collected: columns ``identified, deidentified`` (and
    ``reason``, the core's words in full, with ``explain``), each part sorted as :func:`run_method` orders the
    pairs.  Returns :func:`run_method`'s summary.  When the release breaks the model (``model_ok`` false) no
    pair is certain and **nothing is written**: the summary's ``diagnostic`` says why.

    Only the buckets' counts and listings (unmatched, orphan elements) reach the driver.  O(elements + class
    edges) shuffled, O(buckets + listed elements) collected."""
    from pyspark.sql import functions as F

    from graphlink.engines.spark.links import write_pairs

    frame = run_frame(st, {"method": "true-loves", "k": None, "explain": True if explain else None,
                           "bucket": bucket_true_loves}, cc)
    try:
        is_pair = F.col("kind") == "pair"
        pairs = frame.filter(is_pair)
        summary = _true_loves_verdict(st, frame.filter(~is_pair).toPandas(), pairs.count())
        if summary.model_ok is not False:          # None: a component beyond the budget (noted); the rest holds
            cols = [F.col("a").alias("identified"), F.col("b").alias("deidentified")]
            write_pairs(pairs.sortWithinPartitions("n1", "n2", "n3").select(*cols, *([F.col("reason")] if explain
                                                                                      else [])), out)
    finally:
        frame.unpersist()
    return summary


def _sorted_texts(out: pd.DataFrame, kind: str) -> list[str]:
    part = out[out["kind"] == kind].sort_values(["n1", "n2", "n3"], kind="stable")
    return [str(x) for x in part["a"]]


def _many_verdict(st: SparkTrails, out: pd.DataFrame, summary: ReidentifySummary) -> ReidentifySummary:
    """``summary`` with the one-to-many verdict of the whole release from the buckets' refusal rows, as the core
    gives it (:func:`graphlink.analysis.reidit.certain_one_to_many`); budget notes are given here once, as the
    core gives them."""
    from graphlink.analysis.onetomany import diagnostic_text

    refusals, unsolved = _sorted_texts(out, "refusal"), _sorted_texts(out, "unsolved")
    unchecked = bool((~out.loc[out["kind"] == "unsolved", "f1"].astype(bool)).any())   # no assignment found there
    ok = False if refusals else (None if unchecked else True)
    summary = summary.with_(model_ok=ok, engine="exact" if st.model.reserved == "none" else "fit",
                            diagnostic=many_refuted(diagnostic_text(refusals)) if refusals else None)
    return note_unsolved(summary, unsolved)


def _merge_m(st: SparkTrails, out: pd.DataFrame) -> Reidentification:
    """REIDIT-M merged; its diagnostic is the core's text (graphlink.analysis.reidit.reidit_m) for the whole release."""
    pairs = _pairs(out, ["n1"])
    orphans = _listed(out, "orphan")
    summary = ReidentifySummary("multiple", len(pairs), len(pairs), identified=st.n_identified,
                                deidentified=st.n_deidentified, model_ok=not orphans)
    if not orphans and st.one_to_many and st.model.reserved == "none":
        summary = _many_verdict(st, out, summary).with_(engine=None)
        if summary.model_ok is False:
            pairs, summary = pairs.iloc[:0], summary.with_(reidentified=0, pairs=0)
    if orphans:
        summary = summary.with_(conflicts=orphans[:50], diagnostic=orphan_diagnostic(
            st.model.label, st.one_to_many, orphans[:5], len(orphans)))
    return Reidentification("multiple", pairs, summary)


def audit(st: SparkTrails, k: int, cc: str = "auto") -> AuditResult:
    """:func:`graphlink.analysis.audit.audit` on the component split (module docstring)."""
    out = run(st, {"method": "audit", "k": k, "explain": None, "bucket": bucket_audit}, cc)
    v = out[out["kind"] == "viol"]
    violations = pd.DataFrame({"side": v["b"].to_numpy(dtype=object), "element": v["a"].to_numpy(dtype=object),
                               "union_degree": v["n1"].to_numpy(np.int64),
                               "union_degree_non_null": v["n2"].to_numpy(np.int64)})
    violations = violations.sort_values(["union_degree", "side", "element"], kind="stable").reset_index(drop=True)
    counts = {"identified": st.n_identified, "deidentified": st.n_deidentified,
              "null_trails": 0 if st.one_to_many else _null(st)[0],
              "violations_identified": int((violations["side"] == "identified").sum()),
              "violations_deidentified": int((violations["side"] == "deidentified").sum()),
              "link_edges": graph_size(st)[0], "union_edges": _stat(out, "union_edges")}
    ok = bool(len(violations) == 0)
    if st.one_to_many:
        from graphlink.errors import ModelAssumptionError

        unsolved = _sorted_texts(out, "unsolved")
        if unsolved:
            from graphlink.analysis.audit import unsolved_audit

            raise ModelAssumptionError(diagnostic=unsolved_audit(unsolved[0]))
        refusals = _sorted_texts(out, "refusal")
        if refusals:
            from graphlink.analysis.audit import refuted_audit
            from graphlink.analysis.onetomany import diagnostic_text

            raise ModelAssumptionError(diagnostic=refuted_audit(diagnostic_text(refusals)))
        counts["multiplicity"] = "one-to-many"
        return AuditResult(k, ok, violations, _stat(out, "true_loves"), 0 if refusals else st.n_deidentified,
                           not refusals, refusals, counts)
    nu_real = _stat(out, "nu_real")
    return AuditResult(k, ok, violations, _stat(out, "true_loves"), nu_real, _hall_ok(st, nu_real),
                       _listed(out, "unmatched"), counts)
