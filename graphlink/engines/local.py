"""The local engine: the library itself, in this process (:class:`graphlink.engines.protocol.Engine`).

Each method is a call into :mod:`graphlink.core`, :mod:`graphlink.analysis`, :mod:`graphlink.io` or
:mod:`graphlink.store`, imported when it runs (``graphlink --help`` stays fast).  Memory and time are those of
the functions called: trails O(disclosures), the analyses as their modules state.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphlink.engines.protocol import Progress, Stored

if TYPE_CHECKING:
    from graphlink.analysis.audit import AuditResult
    from graphlink.analysis.reidit import LocalParts, Reidentification
    from graphlink.core.linkgraph import LinkGraph
    from graphlink.core.release import Release
    from graphlink.core.trails import Trails


class LocalEngine:
    """The analyses on this machine, in this process.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.engines import get
    >>> from graphlink.io.examples import DATA
    >>> engine = get("local")
    >>> rel, tr = engine.trails(DATA / "thesis_fig3_4.csv", truth=DATA / "thesis_fig3_4_truth.csv")
    >>> tr.reserved, len(gl.reidentify(engine.parts(rel, tr), "true-loves"))
    ('deidentified', 4)
    """

    name = "local"
    where = ""
    constrains_links = True

    def read(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
             truth: Path | None = None, store: bool = False) -> Release:
        """The validated release (:func:`graphlink.core.release.read_release`); ``store`` changes nothing here."""
        from graphlink.core.release import read_release

        return read_release(release, id_key=id_key, deid_key=deid_key, truth=truth)

    def trails(self, release: Path, *, id_key: list[str] | None = None, deid_key: list[str] | None = None,
               reserved: str = "auto", multiplicity: str = "auto", truth: Path | None = None,
               store: bool = False) -> tuple[Release, Trails]:
        from graphlink.core.trails import build_trails

        rel = self.read(release, id_key=id_key, deid_key=deid_key, truth=truth)
        return rel, build_trails(rel, reserved, multiplicity)  # type: ignore[arg-type]

    def parts(self, release: Release, trails: Trails, *, graph: LinkGraph | None = None) -> LocalParts:
        """One part: ``graph`` when given (an ALS-constrained link graph), else the trails (the link graph is built
        when a method needs it), with the release's truth."""
        from graphlink.analysis.reidit import LocalParts

        return LocalParts(trails if graph is None else graph, release.truth)

    def write_pairs(self, trails: Trails, result: Reidentification, columns: list[str], out: str) -> None:
        """One file, or a new folder holding one part (:func:`graphlink.io.pairs.write_pairs_out`)."""
        from graphlink.io.pairs import write_pairs_out

        write_pairs_out(result, columns, out)

    def store(self, release: Release, trails: Trails, name: str, *, reidentification: Reidentification | None = None,
              audit: AuditResult | None = None, classes: Any = None, progress: Progress = None) -> Stored:
        """The release and the result at bulk speed (:meth:`graphlink.store.neo4j.Store.write_results`)."""
        from graphlink.store.neo4j import connect

        results = ({"reidentification": reidentification} if reidentification is not None
                   else {"classes": classes, "audit": audit})
        with contextlib.closing(connect()) as st:
            out = st.write_results(release, name, progress=progress, **results)
        run = out.runs["reidentification" if reidentification is not None else "audit"]
        return Stored(st.uri, run, out.method, {"why": out.why, "seconds": out.seconds})
