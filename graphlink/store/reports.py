"""What the store's facade returns: frozen reports with typed fields instead of dictionaries.

* :class:`LoadReport` -- a load of a release (:meth:`graphlink.store.neo4j.Store.load_release`, the Spark engine's
  loader): the Release node's figures and how this load went.
* :class:`StoredResults` -- a release written with its results (:meth:`graphlink.store.neo4j.Store.write_results`):
  the load's report and the run id of every result written.
* :class:`StoredRelease` -- a release as the store holds it (:meth:`~graphlink.store.neo4j.Store.release_info`,
  :meth:`~graphlink.store.neo4j.Store.list_releases`): the Release node's figures.
* :class:`LoadLock` -- the load lock :meth:`~graphlink.store.neo4j.Store.break_lock` removed.

Each has ``as_dict()`` giving the plain dictionary the store returned before (for JSON and for the engines'
``Stored.detail``). No driver is needed here: the engines build these too.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any


def _int(value: Any) -> int:
    return int(value) if value is not None else 0


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclasses.dataclass(frozen=True)
class StoredRelease:
    """A release as stored in Neo4j: the figures of its Release node.

    Attributes
    ----------
    name : str
        The release's name in the store.
    status : str
        ``loaded``; ``loading`` while a load runs or after one was interrupted (the next load completes it).
    rows, locations, identified, deidentified, entities : int or None
        Disclosures, locations, distinct identified and de-identified elements, simulated people (0 without a
        ground truth); None until a load has counted them.
    reserved : str
        Which side holds back disclosures at its locations (``none``, ``identified``, ``deidentified``, ``mixed``;
        empty until counted).
    fingerprint, source, created_at, loaded_at, load_method : str or None
        The content hash, source file, when the node was made and when the load finished (ISO), and the way it
        was loaded (``bulk-import``, ``unwind``, ``connector``).
    properties : Mapping
        Every property of the Release node, read-only (the model written with results, among others).

    Examples
    --------
    >>> info = StoredRelease.from_node({"name": "demo", "status": "loaded", "rows": 12, "locations": 4})
    >>> info.name, info.status, info.rows, info.identified, info.loaded_at
    ('demo', 'loaded', 12, None, None)
    """

    name: str
    status: str
    rows: int | None
    locations: int | None
    identified: int | None
    deidentified: int | None
    entities: int | None
    reserved: str
    fingerprint: str | None = None
    source: str | None = None
    created_at: str | None = None
    loaded_at: str | None = None
    load_method: str | None = None
    properties: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> StoredRelease:
        """The release from its node's properties ``node`` (driver values made plain already).  O(properties)."""
        p = dict(node)
        def count(key: str) -> int | None:
            return None if p.get(key) is None else int(p[key])

        return cls(name=str(p.get("name") or ""), status=str(p.get("status") or ""), rows=count("rows"),
                   locations=count("locations"), identified=count("identified"),
                   deidentified=count("deidentified"), entities=count("entities"),
                   reserved=str(p.get("reserved") or ""), fingerprint=_text(p.get("fingerprint")),
                   source=_text(p.get("source")), created_at=_text(p.get("created_at")),
                   loaded_at=_text(p.get("loaded_at")), load_method=_text(p.get("load_method")),
                   properties=types.MappingProxyType(p))

    def as_dict(self) -> dict[str, Any]:
        """The Release node's properties as a plain dictionary (what the store returned before this class)."""
        return dict(self.properties)


@dataclasses.dataclass(frozen=True)
class LoadLock:
    """The lock a load of a release holds while it writes (docs/neo4j.md, "Load locks").

    Attributes
    ----------
    release : str
        The release being loaded.
    token : str
        The lock's identity: removing it by token leaves a lock taken again meanwhile in place.
    host : str or None
        The machine of the load that took it.
    pid : int or None
        That load's process id on its machine.
    since : str or None
        When it was taken (ISO, on the server's clock).
    properties : Mapping
        Every property of the lock node, read-only (boot id, process start time, heartbeat, interval).

    Examples
    --------
    >>> lock = LoadLock.from_node({"release": "demo", "token": "t1", "host": "lab-2", "pid": 4711})
    >>> lock.host, lock.pid, lock.since
    ('lab-2', 4711, None)
    """

    release: str
    token: str
    host: str | None
    pid: int | None
    since: str | None
    properties: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> LoadLock:
        """The lock from its node's properties.  O(properties)."""
        p = dict(node)
        return cls(release=str(p.get("release") or ""), token=str(p.get("token") or ""), host=_text(p.get("host")),
                   pid=None if p.get("pid") is None else int(p["pid"]), since=_text(p.get("at")),
                   properties=types.MappingProxyType(p))

    def as_dict(self) -> dict[str, Any]:
        """The lock node's properties as a plain dictionary."""
        return dict(self.properties)


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
    def from_node(cls, node: StoredRelease | Mapping[str, Any] | None, *, seconds: float = 0.0,
                  skipped: bool = False, method: str | None = None, why: str | None = None,
                  seconds_finalize: float | None = None) -> LoadReport:
        """The report of a load from the stored release ``node`` (or its node's properties; None or empty:
        nothing stored) and what the loader knows. O(properties)."""
        p = dict(node.properties if isinstance(node, StoredRelease) else node or {})
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
