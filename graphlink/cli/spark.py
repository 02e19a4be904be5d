"""The command line's Spark branch (``graphlink trails|reidentify|audit ... --engine spark``): the steps of
:mod:`graphlink.cli.commands.core` on :mod:`graphlink.engines.spark`, returning the same objects so the commands format
both engines' results with the same code."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from graphlink.analysis.audit import AuditResult
from graphlink.analysis.reidit import Reidentification
from graphlink.core.trails import Trails
from graphlink.engines.spark import engine
from graphlink.engines.spark.fill import SparkTrails, build
from graphlink.engines.spark.release import SparkRelease, read
from graphlink.engines.spark.runtime import get_session, input_bytes


def _split(key: str | None) -> list[str] | None:
    return [c.strip() for c in key.split(",") if c.strip()] if key else None


def load_trails(release: Path, id_key: str | None, deid_key: str | None, reserved: str, multiplicity: str,
                master: str | None, truth: Path | None = None, *, neo4j: bool = False) -> tuple[SparkRelease,
                                                                                                  SparkTrails]:
    """Read, validate and fill the release in Spark (``neo4j``: start the session with the Neo4j connector)."""
    spark = get_session(master, neo4j=neo4j, size=input_bytes(release))
    rel = read(spark, str(release), id_key=_split(id_key), deid_key=_split(deid_key), truth=truth)
    return rel, build(rel, reserved, multiplicity)  # type: ignore[arg-type]


def matrices(tr: SparkTrails) -> Trails:
    """The full trail matrices for the csv/parquet writers (collected to the driver)."""
    return tr.to_trails()


def reidentify(tr: SparkTrails, method: str, k: int | None, explain: bool | None) -> Reidentification:
    return engine.reidentify(tr, method, k=k, explain=explain)


def writes_from_executors(tr: SparkTrails, method: str) -> bool:
    """Can the executors write ``method``'s pairs without collecting them?  REIDIT-C always; true loves when
    the exact analyses run on the component split (:func:`graphlink.engines.spark.engine.choose_split`)."""
    return method == "complete" or (method == "true-loves" and engine.choose_split(tr) == "components")


def write_from_executors(tr: SparkTrails, method: str, out: str, explain: bool) -> dict:
    """``method``'s pairs written by the executors to the folder ``out``; nothing but counts collected
    (:func:`graphlink.engines.spark.links.write_reidit_c`, :func:`graphlink.engines.spark.components.write_true_loves`).
    Returns the method's summary."""
    from graphlink.engines.spark import components
    from graphlink.engines.spark.links import write_reidit_c

    if method == "complete":
        return write_reidit_c(tr, out, explain=explain)
    return components.write_true_loves(tr, out, explain=explain)


def write_pairs(tr: SparkTrails, result: Reidentification, columns: list[str], out: str) -> None:
    """Pairs already on the driver written by Spark to the folder ``out``, laid out as REIDIT-C's from the
    executors (:func:`graphlink.engines.spark.links.write_pairs`).  O(pairs)."""
    from graphlink.engines.spark import links
    from graphlink.io.pairs import pairs_table

    links.write_pairs(tr.classes.sparkSession.createDataFrame(pairs_table(result, columns).to_pandas()), out)


def audit(tr: SparkTrails, k: int) -> AuditResult:
    return engine.audit(tr, k)


def _connect() -> Any:
    from graphlink.store.neo4j import connect

    return connect()


def store_reidentification(tr: SparkTrails, name: str, result: Reidentification) -> tuple[str, str]:
    """Load the release and write the pairs with the Neo4j connector.  Returns (server URI, run id)."""
    from graphlink.engines.spark import neo4j

    with contextlib.closing(_connect()) as st:
        neo4j.write_release(tr, st, name)
        run = neo4j.write_reidentification(st, name, result, spark=tr.classes.sparkSession)
        return st.uri, run


def store_audit(tr: SparkTrails, name: str, result: AuditResult) -> tuple[str, str]:
    """Load the release, write its link graph and the audit with the Neo4j connector.  Returns (URI, run id)."""
    from graphlink.engines.spark import neo4j

    with contextlib.closing(_connect()) as st:
        neo4j.write_release(tr, st, name)
        neo4j.write_link_graph(tr, st, name)
        run = neo4j.write_audit(st, name, result, spark=tr.classes.sparkSession)
        return st.uri, run


def load_release(release: Path, name: str | None, truth: Path | None, replace: bool, bulk: str,
                 master: str | None, progress: Any = None) -> tuple[str, dict]:
    """``graphlink load --engine spark``: read the release in Spark and load it (bulk import of Spark-written
    files, else the connector; :func:`graphlink.engines.spark.bulk.load_release`).  Returns (server URI, summary)."""
    from graphlink.engines.spark import bulk as spark_bulk

    # the connector is only needed when the import may fall back to it
    spark = get_session(master, neo4j=bulk != "always", size=input_bytes(release))
    rel = read(spark, str(release), truth=truth)
    with contextlib.closing(_connect()) as st:
        return st.uri, spark_bulk.load_release(rel, st, name, replace=replace, bulk=bulk, progress=progress)
