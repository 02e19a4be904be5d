"""graphlink on Apache Spark: the same analyses and result objects as the local engine, for releases that outgrow
one machine (``--engine spark``; ``pip install 'graphlink[spark]'``, Java 17).

Importing this package does not import pyspark; the first call does (:func:`session`).  ``source`` is a path or
URI Spark reads (CSV/Parquet file or folder of parts; ``s3a://``, ``hdfs://``, ...), a per-location folder, a
pandas or Spark DataFrame, a :class:`graphlink.core.release.Release`, or the :class:`SparkTrails` of an earlier call
(reused, nothing recomputed)::

    from graphlink.engines import spark as gs
    st = gs.trails("hdfs:///consortium/release.parquet", master="spark://head:7077")
    gs.reidentify(st, "true-loves").pairs          # the library's reidentify on Spark's link-graph parts
    gs.audit(st, k=5).k_unlinkable                 # a graphlink.analysis.audit.AuditResult
    gs.summary(st).to_dict()                       # a graphlink.io.trails.TrailSummary

Where each stage runs and what it costs: :mod:`graphlink.engines.spark.fill` (validation, FillTrails, twin classes,
the data model), :mod:`graphlink.engines.spark.links` (class links, REIDIT-C), :mod:`graphlink.engines.spark.engine`
(driver or component split), :mod:`graphlink.engines.spark.components`, :mod:`graphlink.engines.spark.neo4j` (writes
with the Neo4j Connector for Apache Spark); the scaling figures are in docs/scale.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from graphlink.analysis.audit import AuditResult
    from graphlink.core.linkgraph import LinkGraph
    from graphlink.engines.spark.engine import SparkParts
    from graphlink.engines.spark.fill import SparkTrails
    from graphlink.engines.spark.release import SparkRelease
    from graphlink.io.trails import TrailSummary

__all__ = ["audit", "linkgraph", "parts", "read", "reidentify", "session", "summary", "trails"]


def session(master: str | None = None, *, neo4j: bool = False) -> SparkSession:
    """The process's Spark session (``master`` > ``SPARK_MASTER`` > ``local[*]``); see
    :mod:`graphlink.engines.spark.runtime`."""
    from graphlink.engines.spark.runtime import get_session

    return get_session(master, neo4j=neo4j)


def read(source: Any, *, spark: SparkSession | None = None, master: str | None = None, name: str | None = None,
         truth: Any = None, id_key: list[str] | None = None, deid_key: list[str] | None = None,
         fmt: str | None = None) -> SparkRelease:
    """Read and validate a release in Spark (the local engine's errors; :mod:`graphlink.engines.spark.release`)."""
    from graphlink.engines.spark import release

    return release.read(spark or session(master), source, name=name, truth=truth, id_key=id_key,
                        deid_key=deid_key, fmt=fmt)


def trails(source: Any, *, reserved: str = "auto", multiplicity: str = "auto", spark: SparkSession | None = None,
           master: str | None = None, **read_options: Any) -> SparkTrails:
    """FillTrails and twin classes in Spark under the data model the local engine would choose."""
    from graphlink.engines.spark import fill as strails
    from graphlink.engines.spark.release import SparkRelease

    if isinstance(source, strails.SparkTrails):
        return source
    rel = source if isinstance(source, SparkRelease) else read(source, spark=spark, master=master, **read_options)
    return strails.build(rel, reserved, multiplicity)  # type: ignore[arg-type]


def summary(source: Any, *, top: int = 10, preview: int = 10, **options: Any) -> TrailSummary:
    """The trails summary of ``graphlink trails`` (:func:`graphlink.io.trails.summarize`)."""
    return trails(source, **options).summary(top=top, preview=preview)


def linkgraph(source: Any, **options: Any) -> LinkGraph:
    """The core :class:`~graphlink.core.linkgraph.LinkGraph`, its class graph built in Spark (driver memory
    O(|M| + |N| + class edges))."""
    from graphlink.engines.spark import engine

    return engine.linkgraph(trails(source, **options))


def parts(source: Any, *, split: str = "auto", **options: Any) -> SparkParts:
    """The trails' class graph as link-graph parts for :func:`graphlink.analysis.reidit.reidentify` (re-exported
    here as ``reidentify``), run where ``split`` says (:mod:`graphlink.engines.spark.engine`)::

        gs.reidentify(gs.parts(st, split="components"), "true-loves")
    """
    from graphlink.engines.spark.engine import SparkParts

    return SparkParts(trails(source, **options), split)  # type: ignore[arg-type]


def __getattr__(name: str) -> Any:
    """``reidentify``: the library's one :func:`graphlink.analysis.reidit.reidentify`, imported when asked for (it
    takes :class:`SparkTrails` or :func:`parts` as they are)."""
    if name == "reidentify":
        from graphlink.analysis.reidit import reidentify

        return reidentify
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def audit(source: Any, k: int, *, split: str = "auto", **options: Any) -> AuditResult:
    """:func:`graphlink.analysis.audit.audit` (Definition 19) on Spark."""
    from graphlink.engines.spark import engine

    return engine.audit(trails(source, **options), k, split=split)  # type: ignore[arg-type]
