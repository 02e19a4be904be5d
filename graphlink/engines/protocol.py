"""The one interface every engine implements, so the CLI gets an engine once and never asks which one it has.

The pattern is Splink's (Linacre et al., the ``DatabaseAPI`` its ``DuckDBAPI`` and ``SparkAPI`` implement): the
commands are written against :class:`Engine`; :class:`graphlink.engines.local.LocalEngine` (the library itself,
one process) and :class:`graphlink.engines.spark.backend.SparkEngine` (Apache Spark) implement it, and
:func:`graphlink.engines.get` returns one by name.  Both return the library's result objects
(:class:`~graphlink.analysis.reidit.Reidentification`, :class:`~graphlink.analysis.audit.AuditResult`), so the
commands render them with the same code.  What an engine cannot do is a capability it states
(:attr:`Engine.constrains_links`, the parts' :meth:`~graphlink.analysis.reidit.LinkParts.writer`), not a
branch on its name.

The release and trails an engine returns are its own types (core ``Release`` / ``Trails``, or Spark's
``SparkRelease`` / ``SparkTrails``); the commands read only what both offer: ``name``, ``model``, ``reserved``,
``multiplicity``, ``decided_by``, ``reason``, ``one_to_many``, ``locations``, and two things each kind of trails
gives by itself: ``matrices()`` (the full matrices on this process) and the overview
(:func:`graphlink.io.trails.overview` calls the trails' own ``overview`` where they have one).

Importing this module imports nothing heavy (typing only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from graphlink.analysis.audit import AuditResult
    from graphlink.analysis.matching import EdgeClasses
    from graphlink.analysis.onetomany import ManyClasses
    from graphlink.analysis.reidit import LinkParts, Reidentification
    from graphlink.core.linkgraph import LinkGraph
    from graphlink.core.release import Release
    from graphlink.core.trails import Trails
    from graphlink.engines.spark.fill import SparkTrails
    from graphlink.engines.spark.release import SparkRelease

    #: the release an engine reads: the core's, or Spark's
    AnyRelease = Release | SparkRelease
    #: the trails an engine fills: the core's, or Spark's twin classes
    AnyTrails = Trails | SparkTrails
    #: the exact classification of the link graph's edges an audit keeps (None where the parts keep it)
    Classes = EdgeClasses | ManyClasses | None

#: ``update(fraction, message)`` of a progress bar, or None
Progress = Callable[[float, str], None] | None


@dataclass(frozen=True)
class Stored:
    """Where an engine wrote results into Neo4j.

    Attributes
    ----------
    uri : str
        The server's URI.
    run : str
        The run id of the stored result.
    method : str or None
        How it was written (``bulk-import``, ``unwind``) when the engine chose among ways; None for the Spark
        connector, which has one.
    detail : dict
        The write-back's own figures (``why``, ``seconds``) when ``method`` is set.
    """

    uri: str
    run: str
    method: str | None = None
    detail: dict = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """What the ``trails``, ``reidentify``, ``audit`` and ``load`` commands need from an engine: data primitives
    only (read, fill, the link-graph parts, writers); the analyses run on the parts (``reidentify``, the
    parts' ``audit``).

    Every method returns the library's own result types; an engine that cannot do a step says so through a
    capability (:attr:`constrains_links`, the parts' ``writer``) the commands check, never through its name.
    """

    #: the name ``--engine`` takes (``local``, ``spark``)
    name: str
    #: where it runs, as words that follow a step's description (``""`` for this process, ``" in Spark"``)
    where: str
    #: the attribute linkage sets of ``--qi-links`` (TR02 Def. 3.1) can constrain this engine's link graph
    constrains_links: bool

    def read(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
             truth: Path | None = None, store: bool = False) -> AnyRelease:
        """Read and validate ``release`` without filling trails (``graphlink load``: the release for
        :func:`graphlink.store.neo4j.load`).  ``store``: it will be written to Neo4j (Spark starts its session with
        the connector)."""
        ...

    def trails(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
               reserved: str = "auto", multiplicity: str = "auto", truth: Path | None = None,
               store: bool = False) -> tuple[AnyRelease, AnyTrails]:
        """Read and validate ``release`` and fill its trails (Malin 2006, Alg. 1) under the decided model.
        ``store``: the results will be written to Neo4j (Spark starts its session with the connector).
        Returns (release, trails)."""
        ...

    def parts(self, release: AnyRelease, trails: AnyTrails, *, graph: LinkGraph | None = None) -> LinkParts:
        """The link graph of ``trails`` as parts :func:`graphlink.analysis.reidit.reidentify` runs the registered
        methods on (the one ``reidentify``; no engine defines its own), with the release's truth.  ``graph``: a link
        graph to use instead of the trails' (only where :attr:`constrains_links`)."""
        ...

    def write_pairs(self, trails: AnyTrails, result: Reidentification, columns: list[str], out: str) -> None:
        """Write pairs already on this process to ``out``, as its kind of name says (one file, or a new folder of
        parts: :func:`graphlink.io.pairs.one_file`; the command has checked it with
        :func:`graphlink.io.pairs.check_pairs_out`)."""
        ...

    def store(self, release: AnyRelease, trails: AnyTrails, name: str, *,
              reidentification: Reidentification | None = None, audit: AuditResult | None = None,
              classes: Classes = None, progress: Progress = None) -> Stored:
        """Load the release into Neo4j if needed and write one result (``reidentification`` or ``audit``)."""
        ...
