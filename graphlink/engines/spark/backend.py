"""The Spark engine behind the one engine interface (:class:`graphlink.engines.protocol.Engine`; ``--engine spark``).

The steps of the commands on :mod:`graphlink.engines.spark`, returning the local engine's result objects so the
commands render both engines' results with the same code.  The session starts on the first call that reads a
release (sized to it: :func:`graphlink.engines.spark.runtime.get_session`); importing this module imports no
pyspark.  Costs are those of the modules called (docs/scale.md).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphlink.engines.protocol import Progress, Stored

if TYPE_CHECKING:
    from graphlink.analysis.audit import AuditResult
    from graphlink.analysis.reidit import Reidentification
    from graphlink.core.linkgraph import LinkGraph
    from graphlink.engines.spark.engine import SparkParts
    from graphlink.engines.spark.fill import SparkTrails
    from graphlink.engines.spark.release import SparkRelease


def _connect() -> Any:
    from graphlink.store.neo4j import connect

    return connect()


class SparkEngine:
    """The analyses on Apache Spark (``master``: a Spark master URL; default ``SPARK_MASTER``, else ``local[*]``).

    Examples
    --------
    >>> from graphlink.engines import get
    >>> get("spark", master="local[2]").name      # no session yet: it starts on the first read
    'spark'
    """

    name = "spark"
    where = " in Spark"
    #: :func:`graphlink.engines.get` passes the Spark master URL
    takes_master = True
    #: the ALS-constrained link graph is built on the driver from core trails: not on this engine
    constrains_links = False

    def __init__(self, master: str | None = None) -> None:
        self.master = master

    def read(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
             truth: Path | None = None, store: bool = False) -> SparkRelease:
        """Read and validate the release in Spark (``store``: start the session with the Neo4j connector); its
        ``load_into`` is the Spark load (:func:`graphlink.engines.spark.bulk.load_release`)."""
        from graphlink.engines.spark.release import read
        from graphlink.engines.spark.runtime import get_session, input_bytes

        spark = get_session(self.master, neo4j=store, size=input_bytes(release))
        return read(spark, str(release), id_key=id_key, deid_key=deid_key, truth=truth)

    def trails(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
               reserved: str = "auto", multiplicity: str = "auto", truth: Path | None = None,
               store: bool = False) -> tuple[SparkRelease, SparkTrails]:
        """Read, validate and fill the release in Spark (``store``: start the session with the Neo4j connector)."""
        from graphlink.engines.spark.fill import build

        rel = self.read(release, id_key=id_key, deid_key=deid_key, truth=truth, store=store)
        return rel, build(rel, reserved, multiplicity)  # type: ignore[arg-type]

    def parts(self, release: SparkRelease, trails: SparkTrails, *, graph: LinkGraph | None = None) -> SparkParts:
        """The class graph in Spark, split where :func:`graphlink.engines.spark.engine.choose_split` says (the
        release's truth is the trails' own)."""
        from graphlink.engines.spark.engine import SparkParts

        if graph is not None:
            raise ValueError("the Spark engine builds its own link graph")
        return SparkParts(trails)

    def write_pairs(self, trails: SparkTrails, result: Reidentification, columns: list[str], out: str) -> None:
        """Pairs already on the driver written by Spark to ``out`` (one file or a folder), laid out as REIDIT-C's
        from the executors (:func:`graphlink.engines.spark.links.write_pairs`).  O(pairs)."""
        from graphlink.engines.spark import links
        from graphlink.io.pairs import pairs_table

        links.write_pairs(trails.classes.sparkSession.createDataFrame(pairs_table(result, columns).to_pandas()), out)

    def store(self, release: SparkRelease, trails: SparkTrails, name: str, *,
              reidentification: Reidentification | None = None, audit: AuditResult | None = None,
              classes: Any = None, progress: Progress = None) -> Stored:
        """The release and the result with the Neo4j connector (an audit with its link graph)."""
        from graphlink.engines.spark import neo4j

        spark = trails.classes.sparkSession
        with contextlib.closing(_connect()) as st:
            neo4j.write_release(trails, st, name)
            if reidentification is not None:
                return Stored(st.uri, neo4j.write_reidentification(st, name, reidentification, spark=spark))
            neo4j.write_link_graph(trails, st, name)
            return Stored(st.uri, neo4j.write_audit(st, name, audit, spark=spark))
