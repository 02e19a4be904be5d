"""Releases, link graphs and results from Spark into Neo4j with the Neo4j Connector for Apache Spark.

The graph model is the local store's (:mod:`graphlink.store.neo4j`, :mod:`graphlink.store.classgraph`), so the
Cypher library (``cypher/*.cypher``) reads Spark-written releases unchanged::

    (:Release)-[:HAS_LOCATION]->(:Location)<-[:DISCLOSED_AT]-(:Identified | :Deidentified)
    (:Identified | :Deidentified)-[:IN_CLASS]->(:TrailClass {release, side, cid, trail, size, null_degree, run})
    (:TrailClass {side:'identified'})-[:LINK {allowed, vital, flow, run}]->(:TrailClass {side:'deidentified'})
    (:Identified)-[:REIDENTIFIED {method, run, reason}]->(:Deidentified);  (:Analysis)-[:VIOLATES]->(element)

Bulk rows (elements, disclosures, twin classes, memberships, class links, pairs, violators) are written by the
connector from the executors (``query`` write mode: ``UNWIND $events AS event`` + one statement, batches of
``GRAPHLINK_NEO4J_BATCH`` rows); the handful of single nodes (Release, Location, Analysis) and the finishing
statements go through the store's Python driver, as for the local engine.  Node writes run in parallel;
relationship writes in ``GRAPHLINK_NEO4J_REL_PARTITIONS`` partitions (default 1), because every relationship
locks both end nodes and a hot node (a location, a large class) would otherwise make parallel transactions
deadlock and retry.  The release's content hash (``fingerprint``) is the local loader's, computed in Spark, so
loading the same release with either engine is idempotent.  Element-level LINKs are written for small graphs
only (the setting ``element_links_max``), from the driver, as the local writer does.

When to use which (docs/scale.md): the connector for writes into a database that holds data or is not the
project's local server (every run's results, link graphs, further releases); ``neo4j-admin database import full``
from CSV files written by Spark (:mod:`graphlink.engines.spark.bulk`, ``graphlink load --engine spark --bulk``) for the
first release loaded into the empty database of the project's local server.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from graphlink.config import get_config
from graphlink.engines.spark.fill import SparkTrails, first_locations, word_cols
from graphlink.errors import StoreError
from graphlink.store import classgraph, cypherlib, server
from graphlink.store.neo4j import Store, env_auth
from graphlink.store.reports import LoadReport

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from graphlink.engines.spark.release import SparkRelease

FORMAT = "org.neo4j.spark.DataSource"
LABEL = {"identified": "Identified", "deidentified": "Deidentified"}


def _write(df: DataFrame, store: Store, query: str, auth: Any = None, *, partitions: int | None = None) -> None:
    """One connector write (``query`` mode, Append); ``partitions`` narrows relationship writes."""
    from pyspark.errors import PySparkException

    # the store's credentials (NEO4J_AUTH, else the local server's password file), as its driver uses them
    auth = (store.conn.auth if store.conn.auth is not None else env_auth()) if auth is None else auth
    opts = {"url": store.uri, "database": store.database, "query": query, "batch.size": str(get_config().neo4j_batch),
            **tls_options(store.uri)}
    if auth:
        opts.update({"authentication.type": "basic", "authentication.basic.username": auth[0],
                     "authentication.basic.password": auth[1]})
    else:
        opts["authentication.type"] = "none"
    if partitions:
        df = df.coalesce(partitions)
    try:
        df.write.format(FORMAT).mode("Append").options(**opts).save()
    except PySparkException as exc:
        text = " ".join(str(exc).split())
        raise StoreError(f"the Neo4j connector could not write to {store.uri}: {text[:300]}") from None


def tls_options(uri: str) -> dict[str, str]:
    """The connector's TLS options for ``uri``: with a pinned certificate (the project's local server, a server
    this process started, ``GRAPHLINK_NEO4J_CERT``), TLS that trusts exactly that certificate, as the Python
    driver does (:func:`graphlink.store.server.open_driver`): the connector's Java driver then sends the
    credentials only to the holder of its key (it verifies the host name too: the launcher's certificate names
    127.0.0.1 and localhost). Without one, nothing: the URI's scheme decides, as for the Python driver."""
    from pathlib import Path

    cert = server.pinned_certificate(uri)
    if cert is None:
        return {}
    if not Path(cert).is_file():
        raise StoreError(f"the certificate pinned for {uri} is missing ({cert}); the connector does not send "
                         "credentials to a server it cannot verify")
    return {"encryption.enabled": "true", "encryption.trust.strategy": "TRUST_CUSTOM_CA_SIGNED_CERTIFICATES",
            "encryption.ca.certificate.path": str(cert)}


# --------------------------------------------------------------------------------------------------- release
def _release(st: SparkTrails | SparkRelease) -> SparkRelease:
    return st.release if isinstance(st, SparkTrails) else st


def fingerprint(st: SparkTrails | SparkRelease) -> str:
    """The local loader's content hash (:func:`graphlink.store.neo4j.fingerprint`): sha256 over the sorted 64-bit
    pandas row hashes, hashed in the executors, sorted by Spark, streamed to the driver per partition."""
    from pyspark.sql import functions as F

    def hashes(batches: Any) -> Any:
        for pdf in batches:
            h = pd.util.hash_pandas_object(pdf[["location", "kind", "element"]].astype(str), index=False)
            yield pd.DataFrame({"h": h.to_numpy(np.uint64).view(np.int64)})

    rows = _release(st).rows.select("location", "kind", "element")
    # order as unsigned: flip the sign bit, then sort as signed longs
    h = rows.mapInPandas(hashes, "h long").withColumn("u", F.col("h").bitwiseXOR(F.lit(-(1 << 63))))
    ordered = h.orderBy("u").select("h")
    digest = hashlib.sha256()
    chunks = ordered.rdd.mapPartitions(lambda it: [np.array([r[0] for r in it], np.int64).tobytes()])
    for blob in chunks.toLocalIterator():
        digest.update(blob)
    return digest.hexdigest()


def write_release(st: SparkTrails | SparkRelease, store: Store, name: str, *, auth: Any = None,
                  fp: str | None = None) -> LoadReport:
    """Load the release under ``name`` as :meth:`Store.load_release` does with UNWIND (idempotent; refused when
    ``name`` holds other content; one load per name at a time: :meth:`Store.load_lock`).  Elements and their
    DISCLOSED_AT edges by the connector; O(rows) writes. ``fp``: the release's :func:`fingerprint`, when the
    caller has it already."""
    with store.load_lock(name):
        return _write_release(st, store, name, auth=auth, fp=fp)


def _write_release(st: SparkTrails | SparkRelease, store: Store, name: str, *, auth: Any,
                   fp: str | None) -> LoadReport:
    from pyspark.sql import functions as F

    rel = _release(st)
    locations = st.locations if isinstance(st, SparkTrails) else first_locations(rel.rows)
    fp = fp or fingerprint(rel)
    store.apply_schema()
    existing = store.release_info(name)
    if existing is not None and existing.fingerprint == fp and existing.status == "loaded":
        return LoadReport.from_node(existing, skipped=True)
    if existing is not None and existing.fingerprint not in (None, fp):
        from graphlink.diagnostics import Diagnostic

        raise StoreError(diagnostic=Diagnostic(
            "store-name-taken", f"release {name!r} is already in Neo4j with different content", {"name": name},
            remedy="choose another name"))
    statements = cypherlib.load_file(cypherlib.cypher_dir() / "load.cypher").statement
    store.conn.query(statements("release").text, {"release": name, "source": rel.source, "fingerprint": fp})
    store.conn.query(statements("locations").text, {"release": name, "locations": [
        {"name": loc, "index": i} for i, loc in enumerate(locations)]})
    verb = "CREATE" if existing is None else "MERGE"
    rows = rel.rows
    for kind, label in LABEL.items():
        part = (rows.filter(F.col("kind") == kind).groupBy("element")
                .agg(F.collect_list("location").alias("at"))
                .select(F.lit(name).alias("release"), F.col("element").alias("key"), "at"))
        _write(part, store, f"""{verb} (e:{label} {{release: event.release, key: event.key}})
                               WITH e, event UNWIND event.at AS loc
                               MATCH (l:Location {{release: event.release, name: loc}})
                               {verb} (e)-[:DISCLOSED_AT]->(l)""", auth, partitions=get_config().neo4j_rel_partitions)
    truth = rel.truth
    if truth is not None and len(truth):
        t = truth[["identified", "deidentified"]].astype(str)
        items = [{"id": f"{i}|{d}", "identified": i, "deidentified": d}
                 for i, d in zip(t["identified"], t["deidentified"], strict=True)]
        for lo in range(0, len(items), 10_000):
            store.conn.query(statements("truth").text, {"release": name, "truth": items[lo:lo + 10_000]})
    store.as_owner(name, statements("finalize").text, {"release": name})  # only while the load lock is still ours
    return LoadReport.from_node(store.release_info(name), method="connector")


# ------------------------------------------------------------------------------------------------ link graph
def _trail_text(n_loc: int) -> Column:
    """Each class's trail as '0'/'1'/'*' text, from its known and ones words."""
    from pyspark.sql import functions as F

    from graphlink.engines.spark.links import _bit

    cells = [F.when(~_bit(c, "k"), F.lit("*")).when(_bit(c, "o"), F.lit("1")).otherwise(F.lit("0"))
             for c in range(n_loc)]
    return F.concat(*cells) if cells else F.lit("")


def verdicts(st: SparkTrails, split: str = "auto") -> tuple[DataFrame, DataFrame, dict, Any]:
    """Per class edge (id_cid, de_cid, allowed, vital, flow), per complete-side class its null degree
    (side, cid, null_degree), the counts, and the driver's classification (driver split) or None."""
    from graphlink.engines.spark import components, engine

    spark = st.classes.sparkSession
    if engine.choose_split(st, split) == "driver":
        result = engine.classes(st)
        g, arr = result.graph, classgraph.class_arrays(result)
        d_id, d_de = st.driver["identified"], st.driver["deidentified"]
        e = pd.DataFrame({"id_cid": d_id.cids[g.class_ei], "de_cid": d_de.cids[g.class_ej],
                          "allowed": np.asarray(arr["allowed"], bool), "vital": np.asarray(arr["vital"], bool),
                          "flow": np.asarray(arr["flow"], np.int64)})
        nulls = [pd.DataFrame({"side": side, "cid": st.driver[side].cids, "null_degree": per.astype(np.int64)})
                 for side, per in arr["null"].items()]
        null = pd.concat(nulls) if nulls else pd.DataFrame({"side": [], "cid": [], "null_degree": []})
        return (spark.createDataFrame(e, "id_cid long, de_cid long, allowed boolean, vital boolean, flow long"),
                spark.createDataFrame(null.astype({"side": object}), "side string, cid long, null_degree long"),
                {"nu": arr["nu"], "n_null": arr["n_null"]}, result)
    from pyspark.sql import functions as F

    out = components.run_frame(st, {"method": "graph", "k": None, "explain": None,
                                           "bucket": components.bucket_classified_graph})
    e = out.filter(F.col("kind") == "edge").select(F.col("n1").alias("id_cid"), F.col("n2").alias("de_cid"),
                                                   F.col("f1").alias("allowed"), F.col("f2").alias("vital"),
                                                   F.col("n3").alias("flow"))
    null = out.filter(F.col("kind") == "null").select(F.col("b").alias("side"), F.col("n1").alias("cid"),
                                                      F.col("n3").alias("null_degree"))
    stats = out.filter(F.col("kind") == "stat").groupBy("a").agg(F.sum("n1").alias("v")).collect()
    values = {r["a"]: int(r["v"]) for r in stats}
    n_null = components._null(st)[0]
    nu = values.get("nu", values.get("nu_real", 0))
    if not st.one_to_many:
        n_left = st.n_deidentified if st.star_side == "identified" else st.n_identified
        nu += min(n_null, n_left - nu)
    return e, null, {"nu": nu, "n_null": 0 if st.one_to_many else n_null}, None


def write_link_graph(st: SparkTrails, store: Store, name: str, *, split: str = "auto", auth: Any = None) -> str:
    """Replace the release's link graph by the Spark engine's (the model of :func:`classgraph.write`): twin classes,
    memberships and class LINKs by the connector, element LINKs for small graphs.  Returns the run id.
    O(|M| + |N| + class edges) writes."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from graphlink.engines.spark.components import graph_size

    e, null, counts, result = verdicts(st, split)
    n_elem, n_class_edges = graph_size(st)

    with_elements = n_elem <= get_config().element_links_max and n_elem <= get_config().max_expanded_edges
    m = st.model
    classgraph.drop(store, name)
    run = store.new_analysis(name, "link-graph", "link-graph", {"class_edges": n_class_edges}, {
        "edges": n_elem, "class_edges": n_class_edges, "element_links": with_elements,
        "maximum_matching_size": counts["nu"], "n_null": counts["n_null"], "multiplicity": m.multiplicity,
        "reserved": m.reserved, "engine": "spark"})
    store.conn.query("""MATCH (r:Release {name: $release})
                    SET r.model_reserved = $reserved, r.model_multiplicity = $multiplicity, r.model_reason = $reason""",
                 {"release": name, "reserved": m.reserved, "multiplicity": m.multiplicity, "reason": m.reason})
    w = st.n_words
    rank = F.row_number().over(Window.partitionBy("side").orderBy("cid")) - 1
    classes = (st.classes.join(null, ["side", "cid"], "left")
               .select("side", "cid", "size", F.coalesce("null_degree", F.lit(0)).alias("null_degree"),
                       _trail_text(len(st.locations)).alias("trail"), *word_cols("o", w))
               .withColumn("rank", rank).persist())
    _write(classes.select(F.lit(name).alias("release"), "side", F.col("rank").alias("cid"), "trail", "size",
                          "null_degree", F.lit(run).alias("run")), store,
           """CREATE (:TrailClass {release: event.release, side: event.side, cid: event.cid, trail: event.trail,
                                   size: event.size, null_degree: event.null_degree, run: event.run})""", auth)
    ranks = classes.select("side", "cid", "rank")
    members = st.elements.select("side", "element", "cid").join(ranks, ["side", "cid"])
    for side, label in LABEL.items():
        _write(members.filter(F.col("side") == side).select(F.lit(name).alias("release"), "side",
                                                             F.col("element").alias("key"), "rank"), store,
               f"""MATCH (e:{label} {{release: event.release, key: event.key}})
                   MATCH (c:TrailClass {{release: event.release, side: event.side, cid: event.rank}})
                   CREATE (e)-[:IN_CLASS]->(c)""", auth, partitions=get_config().neo4j_rel_partitions)
    id_rank = ranks.filter(F.col("side") == "identified").select(F.col("cid").alias("id_cid"),
                                                                 F.col("rank").alias("ci"))
    de_rank = ranks.filter(F.col("side") == "deidentified").select(F.col("cid").alias("de_cid"),
                                                                   F.col("rank").alias("cj"))
    links = e.join(id_rank, "id_cid").join(de_rank, "de_cid")
    _write(links.select(F.lit(name).alias("release"), F.lit(run).alias("run"), "ci", "cj", "allowed", "vital",
                        "flow"), store,
           """MATCH (x:TrailClass {release: event.release, side: 'identified', cid: event.ci})
              MATCH (y:TrailClass {release: event.release, side: 'deidentified', cid: event.cj})
              CREATE (x)-[:LINK {allowed: event.allowed, vital: event.vital, flow: event.flow, run: event.run}]->(y)""",
           auth, partitions=get_config().neo4j_rel_partitions)
    classes.unpersist()
    if with_elements:
        from graphlink.engines.spark import engine

        result = result if result is not None else engine.classes(st)
        classgraph._write_element_links(store, name, run, result, classgraph.class_arrays(result))
    return run


# --------------------------------------------------------------------------------------------------- results
def write_reidentification(store: Store, name: str, result: Any, *, spark: Any, auth: Any = None) -> str:
    """A :class:`~graphlink.analysis.reidit.Reidentification` as REIDENTIFIED edges (connector) plus its Analysis node,
    as :meth:`Store.write_reidentification`.  Returns the run id.  O(pairs) writes."""
    pairs = result.pairs
    run = store.new_analysis(name, "reidentification", str(result.method), result.summary.as_dict(),
                              {"pairs": len(pairs)})
    frame = pd.DataFrame({"release": name, "run": run, "method": str(result.method),
                          "i": pairs["identified"].astype(str).to_numpy(dtype=object),
                          "d": pairs["deidentified"].astype(str).to_numpy(dtype=object),
                          "reason": pairs["reason"].astype(str).to_numpy(dtype=object)}).astype(object)
    if len(frame):
        df = spark.createDataFrame(frame, "release string, run string, method string, i string, d string, "
                                          "reason string")
        _write(df, store, """MATCH (i:Identified {release: event.release, key: event.i})
                               USING INDEX SEEK i:Identified(release, key)
                             MATCH (d:Deidentified {release: event.release, key: event.d})
                               USING INDEX SEEK d:Deidentified(release, key)
                             CREATE (i)-[:REIDENTIFIED {method: event.method, run: event.run,
                                                        reason: event.reason}]->(d)""",
               auth, partitions=get_config().neo4j_rel_partitions)
    return run


def write_audit(store: Store, name: str, result: Any, *, spark: Any, auth: Any = None) -> str:
    """An :class:`~graphlink.analysis.audit.AuditResult`: Analysis node and VIOLATES edges (connector), as
    :meth:`Store.write_audit`.  Returns the run id."""
    k = int(result.k)
    viol = result.violations
    run = store.new_analysis(name, "audit", "k-unlinkability", {"k": k}, {
        "k": k, "k_unlinkable": bool(result.k_unlinkable), "true_loves": int(result.true_loves),
        "maximum_matching_size": int(result.maximum_matching_size), "violations": len(viol)})
    for side, label in LABEL.items():
        part = viol[viol["side"] == side]
        if not len(part):
            continue
        frame = pd.DataFrame({"release": name, "run": run, "side": side,
                              "e": part["element"].astype(str).to_numpy(dtype=object),
                              "u": part["union_degree"].to_numpy(np.int64)}).astype({"e": object})
        df = spark.createDataFrame(frame, "release string, run string, side string, e string, u long")
        _write(df, store, f"""MATCH (a:Analysis {{run: event.run}})
                              MATCH (x:{label} {{release: event.release, key: event.e}})
                              CREATE (a)-[:VIOLATES {{side: event.side, union_degree: event.u}}]->(x)""",
               auth, partitions=get_config().neo4j_rel_partitions)
    return run
