"""What the store's facade returns: frozen reports with typed fields instead of dictionaries.

* :class:`LoadReport` -- a load of a release (:meth:`graphlink.store.neo4j.Store.load_release`, the Spark engine's
  loader): the Release node's figures and how this load went.
* :class:`StoredResults` -- a release written with its results (:meth:`graphlink.store.neo4j.Store.write_results`):
  the load's report and the run id of every result written.

Both have ``as_dict()`` giving the plain dictionary the store returned before (for JSON and for the engines'
``Stored.detail``). No driver is needed here: the engines build these too.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any


def _int(value: Any) -> int:
    return int(value) if value is not None else 0


@dataclasses.dataclass(frozen=True)
class LoadReport:
    """One load of a release into Neo4j.

    Attributes
    ----------
    name : str
        The release's name in the store.
    rows, locations, identified, deidentified, entities : int
        Disclosures, locations, distinct identified and de-identified elements, simulated people (0 without a
        ground truth), as the Release node counts them.
    reserved : str
        Which side holds back disclosures at its locations (the Release node's ``reserved``): ``none``,
        ``identified``, ``deidentified`` or ``mixed``.
    status : str
        ``loaded`` (``loading`` only for an interrupted load).
    skipped : bool
        The same content was stored already, so nothing was written.
    method : str or None
        How this load wrote the graph: ``bulk-import``, ``unwind`` or ``connector``; None when skipped.
    why : str or None
        The reason for ``method``.
    seconds : float
        Wall time of the load, in seconds.
    seconds_finalize : float or None
        Of which the final counting transaction (UNWIND loads).
    fingerprint, source, loaded_at, load_method : str or None
        The Release node's content hash, source file, load time (ISO) and the way it was first loaded.
    properties : Mapping
        Every property of the Release node, read-only.
    """

    name: str
    rows: int
    locations: int
    identified: int
    deidentified: int
    entities: int
    reserved: str
    status: str
    skipped: bool
    method: str | None
    why: str | None
    seconds: float
    seconds_finalize: float | None = None
    fingerprint: str | None = None
    source: str | None = None
    loaded_at: str | None = None
    load_method: str | None = None
    properties: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_node(cls, node: Mapping[str, Any] | None, *, seconds: float = 0.0, skipped: bool = False,
                  method: str | None = None, why: str | None = None,
                  seconds_finalize: float | None = None) -> LoadReport:
        """The report of a load from the Release node's properties ``node`` (None or empty: nothing stored) and
        what the loader knows. O(properties)."""
        p = dict(node or {})
        return cls(name=str(p.get("name") or ""), rows=_int(p.get("rows")), locations=_int(p.get("locations")),
                   identified=_int(p.get("identified")), deidentified=_int(p.get("deidentified")),
                   entities=_int(p.get("entities")), reserved=str(p.get("reserved") or ""),
                   status=str(p.get("status") or ""), skipped=skipped, method=method, why=why,
                   seconds=round(float(seconds), 3),
                   seconds_finalize=None if seconds_finalize is None else round(float(seconds_finalize), 3),
                   fingerprint=p.get("fingerprint"), source=p.get("source"),
                   loaded_at=None if p.get("loaded_at") is None else str(p["loaded_at"]),
                   load_method=p.get("load_method"), properties=types.MappingProxyType(p))

    def timed(self, seconds: float) -> LoadReport:
        """The same report with the wall time ``seconds`` (rounded to milliseconds)."""
        return dataclasses.replace(self, seconds=round(float(seconds), 3))

    def as_dict(self) -> dict[str, Any]:
        """The Release node's properties plus this load's ``seconds``, ``skipped``, ``method``, ``why`` (and
        ``seconds_finalize`` when measured): the dictionary the store returned before these reports."""
        out: dict[str, Any] = {**self.properties, "seconds": self.seconds, "skipped": self.skipped}
        if self.method is not None:
            out["method"] = self.method
        if self.why is not None:
            out["why"] = self.why
        if self.seconds_finalize is not None:
            out["seconds_finalize"] = self.seconds_finalize
        return out


@dataclasses.dataclass(frozen=True)
class StoredResults:
    """A release written with its results (:meth:`graphlink.store.neo4j.Store.write_results`).

    Attributes
    ----------
    release : LoadReport
        The load of the release (skipped when it was stored already).
    runs : Mapping[str, str]
        Run id per written result: ``link_graph``, ``audit``, ``reidentification`` (only those written).
    method : str
        ``bulk-import`` (release and results in one import) or ``unwind`` (batches).
    why : str
        The reason for ``method``.
    seconds : float
        Wall time in seconds.
    """

    release: LoadReport
    runs: Mapping[str, str]
    method: str
    why: str
    seconds: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", types.MappingProxyType(dict(self.runs)))

    def as_dict(self) -> dict[str, Any]:
        """``{"release": ..., "runs": ..., "method", "why", "seconds"}`` as plain dictionaries."""
        return {"release": self.release.as_dict(), "runs": dict(self.runs), "method": self.method, "why": self.why,
                "seconds": self.seconds}
