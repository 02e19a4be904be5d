"""Bulk import of a release read by the Spark engine: the importer's CSV files written by Spark's executors, then
the local engine's importer, store swap and checks (:mod:`graphlink.store.bulk`), under the same rule (the
project's local server, an empty database; ``graphlink load --engine spark --bulk auto|always|never``).

**Same graph.** The files hold exactly what :func:`graphlink.store.bulk.write_files` writes for the local engine
(the model of ``cypher/load.cypher``): the Release node with its totals, reserved side, content fingerprint
(:func:`graphlink.engines.spark.neo4j.fingerprint`, equal to the local one), ``load_method: 'bulk-import'`` and status
'loading'; Location nodes in first-appearance order with their per-location sizes; Identified, Deidentified and
Entity nodes; HAS_LOCATION, DISCLOSED_AT and APPEARS_AS. The Release, Location and HAS_LOCATION files are
written on the driver by the local engine's own code (:func:`graphlink.store.bulk.write_release_nodes`,
O(locations)); the rest, O(rows), by the executors.

**Ids.** One integer space, as the local writer's (``--id-type=integer``): 0 the Release, ``1 + index`` the
locations, ``1 + n_loc + _row`` an element, where ``_row`` is its first disclosure's row (unique across both
kinds: a row discloses one element; the element ids of :mod:`graphlink.engines.spark.fill`), then the entities above the
largest. So no dense numbering (no sort, no ``zipWithIndex``) and ids that do not change if Spark recomputes a
partition. The ids are the importer's input only, never stored, so they may differ from the local writer's.

**Files.** Per group a header file written by the driver (``:ID``, ``:START_ID``, ``:END_ID``, ``:LABEL``) and the
part files of one ``DataFrameWriter.csv`` (no header; RFC 4180 quoting: ``"`` doubled, surrounding blanks kept,
a null as an empty unquoted field). Identified and Deidentified share one node group whose ``:LABEL`` column names
the label, and DISCLOSED_AT is one relationship group: one Spark job each. The job folder is on the driver's disk
(beside the local server), so the executors must see it: a ``local[*]`` master, or a cluster whose executors mount
that file system; otherwise the driver finds no part files and the import is abandoned (StoreError).

Cost: one shuffle of the rows (group by element), three writes of O(rows), two small aggregations.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from graphlink.engines.spark.fill import first_locations, storage_level
from graphlink.errors import StoreError
from graphlink.store import bulk as store_bulk
from graphlink.store.bulk import ImportFiles, Progress
from graphlink.store.reports import LoadReport

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from graphlink.engines.spark.release import SparkRelease
    from graphlink.store.neo4j import Store

LABEL = {"identified": "Identified", "deidentified": "Deidentified"}
#: the way ``graphlink load --engine spark`` loads when it does not bulk-import
OTHER = "the connector"


def _write_csv(files: ImportFiles, stem: str, header: list[str], df: DataFrame) -> list[str]:
    """``stem.header.csv`` from the driver and ``stem/part-*.csv`` from the executors; the group's file names
    (relative to ``files.folder``, header first). O(rows of ``df``), written in parallel."""
    out = files.folder / stem
    (df.write.mode("errorifexists").option("header", False).option("quote", '"').option("escape", '"')
     .option("ignoreLeadingWhiteSpace", False).option("ignoreTrailingWhiteSpace", False)
     .option("lineSep", "\n").option("encoding", "UTF-8").csv("file://" + str(out)))
    if not (out / "_SUCCESS").exists():
        raise StoreError(f"the Spark executors did not write the import files into {out} on this machine (is "
                         "the master local, or does the cluster share that folder?); the database was not changed")
    parts = sorted(p.relative_to(files.folder).as_posix() for p in out.glob("part-*") if p.stat().st_size)
    if not parts:  # an empty group: one empty data file, as the local writer's
        (out / "part-empty.csv").write_bytes(b"")
        parts = [f"{stem}/part-empty.csv"]
    return [store_bulk.write_header(files, stem, header), *parts]


def write_files(rel: SparkRelease, folder: Path, name: str, fp: str) -> ImportFiles:
    """The release as importer input, written into the empty ``folder`` (module docstring): the Spark engine's
    counterpart of :func:`graphlink.store.bulk.write_files`, for :func:`graphlink.store.bulk.load_files`.
    O(rows) in the executors, O(locations + truth rows) on the driver."""
    from pyspark.sql import functions as F

    files = ImportFiles(folder)
    rows = rel.rows
    spark = rows.sparkSession
    locations = first_locations(rows)
    n_loc = len(locations)
    base = 1 + n_loc
    loc_df = spark.createDataFrame([(loc, i) for i, loc in enumerate(locations)], "location string, li long")
    elements = (rows.join(F.broadcast(loc_df), "location").groupBy("kind", "element")
                .agg(F.min("_row").alias("eid"), F.collect_list("li").alias("at")).persist(storage_level()))
    try:
        stats = {r["kind"]: r for r in elements.groupBy("kind").agg(
            F.count(F.lit(1)).alias("n"), F.max("eid").alias("top"),
            F.max(F.col("element").rlike("[\r\n]").cast("int")).alias("newline")).collect()}
        files.multiline = any(r["newline"] for r in stats.values())
        node_id = (F.lit(base) + F.col("eid")).alias("id")
        label = F.when(F.col("kind") == "identified", F.lit(LABEL["identified"])).otherwise(LABEL["deidentified"])
        files.nodes.append(("", _write_csv(files, "Element", [":ID", "release", "key", ":LABEL"], elements.select(
            node_id, F.lit(name).alias("release"), "element", label.alias("label")))))
        disclosed = elements.select(node_id, F.explode("at").alias("li")).select("id", (F.col("li") + 1).alias("loc"))
        files.relationships.append(("DISCLOSED_AT", _write_csv(files, "DISCLOSED_AT", [":START_ID", ":END_ID"],
                                                               disclosed)))
        top = max((r["top"] for r in stats.values()), default=-1)
        entities = _write_truth(files, rel.truth, elements, name, base, base + top + 1)
    finally:
        elements.unpersist()
    sizes = (rows.groupBy("location", "kind").count().toPandas()
             .pivot(index="location", columns="kind", values="count")
             .reindex(index=locations, columns=list(LABEL)).fillna(0).astype(np.int64))
    n = {kind: stats[kind]["n"] if kind in stats else 0 for kind in LABEL}
    store_bulk.write_release_nodes(files, name, rel.source, fp, locations, sizes["identified"].to_numpy(),
                                   sizes["deidentified"].to_numpy(), n["identified"], n["deidentified"], entities)
    return files


def _write_truth(files: ImportFiles, truth: pd.DataFrame | None, elements: DataFrame, name: str, base: int,
                 first_id: int) -> int:
    """Entity nodes (ids from ``first_id``) and APPEARS_AS edges to the elements the release discloses, one per
    (entity, element) as ``cypher/load.cypher``'s MERGE makes them; returns the number of entities. The truth is
    a driver-side table (as the local engine's); its edges meet the elements in a Spark join. O(truth rows)."""
    from pyspark.sql import functions as F

    if truth is None or not len(truth):
        return 0
    spark = elements.sparkSession
    tr = truth[["identified", "deidentified"]].astype(str)
    codes, ent_ids = pd.factorize((tr["identified"] + "|" + tr["deidentified"]).to_numpy(dtype=object))
    files.multiline = files.multiline or store_bulk._has_newline(ent_ids)
    ent = pd.DataFrame({"id": first_id + np.arange(len(ent_ids), dtype=np.int64), "release": name,
                        "key": np.asarray(ent_ids, dtype=object)})
    files.nodes.append(("Entity", _write_csv(files, "Entity", [":ID", "release", "id"], spark.createDataFrame(
        ent, "id long, release string, key string"))))
    pairs = pd.concat([pd.DataFrame({"ent": first_id + codes.astype(np.int64), "kind": kind,
                                     "element": tr[kind].to_numpy(dtype=object)}) for kind in LABEL])
    pairs = spark.createDataFrame(pairs.drop_duplicates(), "ent long, kind string, element string")
    appears = pairs.join(elements.select("kind", "element", "eid"), ["kind", "element"]).select(
        "ent", (F.lit(base) + F.col("eid")).alias("id"))
    files.relationships.append(("APPEARS_AS", _write_csv(files, "APPEARS_AS", [":START_ID", ":END_ID"], appears)))
    return len(ent_ids)


def load_release(rel: SparkRelease, store: Store, name: str | None = None, *, replace: bool = False,
                 bulk: str = "auto", progress: Progress = None, auth: Any = None) -> LoadReport:
    """Load a Spark-read release under ``name`` as :meth:`Store.load_release` does for the local engine: skipped
    when loaded already, refused (or ``replace``-d) when ``name`` holds other content; bulk-imported from files
    written by Spark when :func:`graphlink.store.bulk.load_files`'s rule allows, else written by the Neo4j
    connector (:func:`graphlink.engines.spark.neo4j.write_release`). The same LoadReport as the local engine's
    (``method``: ``bulk-import`` / ``connector``, ``why``). Cost: O(rows log rows) for the fingerprint, then
    O(rows) writes."""
    from graphlink.engines.spark import neo4j

    t0 = time.perf_counter()
    name = name or rel.name
    fp = neo4j.fingerprint(rel)
    with store.load_lock(name):  # one load per name at a time, as for the local engine
        done, existing = store.before_load(name, fp, replace=replace)
        if done is not None:
            return done.timed(time.perf_counter() - t0)
        if existing is None:
            ok, why = store_bulk.load_files(store, lambda folder: write_files(rel, folder, name, fp),
                                            rel.rows.count(), name, fp, bulk, progress, other=OTHER)
            if ok:
                return LoadReport.from_node(store.release_info(name), seconds=time.perf_counter() - t0,
                                            method=store_bulk.METHOD, why=why)
        else:
            why = "the release is partly loaded already"
        info = neo4j.write_release(rel, store, name, auth=auth, fp=fp)
    if info.skipped:  # stored meanwhile, same content: the connector wrote nothing
        return info.timed(time.perf_counter() - t0)
    return dataclasses.replace(info, method="connector", why=why).timed(time.perf_counter() - t0)
