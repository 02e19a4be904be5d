"""The Neo4j store: releases, trails and analysis results as a graph, queried in Cypher.

Graph model (see docs/neo4j.md; constraints in cypher/schema.cypher). Community Edition has one user database,
so every node carries ``release`` and every lookup is scoped to one release::

    (:Release {name, status, rows, locations, identified, deidentified, reserved, fingerprint, loaded_at})
      -[:HAS_LOCATION]->(:Location {release, name, index, identified, deidentified})
    (:Identified {release, key})   -[:DISCLOSED_AT]->(:Location)
    (:Deidentified {release, key}) -[:DISCLOSED_AT]->(:Location)
    (:Entity {release, id})-[:APPEARS_AS]->(:Identified | :Deidentified)          simulated ground truth
    (:TrailClass {release, side, cid, trail, size, null_degree, run})                  written link graph, by
    (:Identified | :Deidentified)-[:IN_CLASS]->(:TrailClass)                          twin class (classgraph.py)
    (:TrailClass)-[:LINK {allowed, vital, flow, run}]->(:TrailClass)
    (:Identified)-[:LINK {allowed, vital, matched, run}]->(:Deidentified)          (small releases only)
    (:Identified)-[:REIDENTIFIED {method, run, reason}]->(:Deidentified)           written re-identifications
    (:Analysis {run, release, kind, method, params, at, ...})-[:ON]->(:Release)     provenance of each run

Connection: ``NEO4J_URI`` / ``NEO4J_AUTH`` (``user/password`` or ``none``) override everything; otherwise the
project-local server started by ``graphlink neo4j start`` (its state file), with the password generated for it
(``.graphlink/neo4j/password``, see :func:`resolve_auth`) sent only over TLS to the holder of the launcher's
certificate (:func:`graphlink.store.server.open_driver`). When neither is there, nothing is tried: no default
address gets a connection, let alone a password. Every failure surfaces as a one-line
:class:`graphlink.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphlink.config import get_config
from graphlink.diagnostics import Diagnostic
from graphlink.errors import StoreError, require
from graphlink.store import cypherlib, guard, server
from graphlink.store.batches import Batches
from graphlink.store.connection import Connection, Target, hint, one_line, open_driver
from graphlink.store.reports import LoadLock, LoadReport, StoredRelease, StoredResults

BATCH = 10_000
#: seconds the client waits past a console query's time limit before it gives up on the server's answer
DEADLINE_GRACE = 10.0
#: seconds between two heartbeats of a held load lock (the holder refreshes ``heartbeat`` on its lock node)
HEARTBEAT = 10.0
#: a lock from another machine counts as alive while its last heartbeat is younger than this many of its intervals
STALE_BEATS = 6
KINDS = ("identified", "deidentified")
LABEL = {"identified": "Identified", "deidentified": "Deidentified"}

Progress = Callable[[float, str], None] | None   # (fraction done, message): the engine's convention


# ---------------------------------------------------------------------------------------------- connection
def database() -> str:
    """The database every query runs on: the setting ``neo4j_database`` (``NEO4J_DATABASE``, default ``neo4j``),
    read when asked, so a change after import is honoured."""
    return get_config().neo4j_database


def env_auth(raw: str | None = None) -> tuple[str, str] | None:
    """``NEO4J_AUTH`` as the driver wants it: ``user/password`` -> tuple, ``none``/unset -> None
    (``NEO4J_USER``/``NEO4J_PASSWORD`` are honoured when ``NEO4J_AUTH`` is unset).  The settings
    ``neo4j_auth``, ``neo4j_user``, ``neo4j_password`` of :mod:`graphlink.config` hold them."""
    cfg = get_config()
    raw = (cfg.neo4j_auth or "") if raw is None else raw
    if not raw and cfg.neo4j_password:  # the NEO4J_USER / NEO4J_PASSWORD spelling
        return (cfg.neo4j_user, cfg.neo4j_password)
    if not raw or raw.lower() == "none":
        return None
    user, sep, password = raw.partition("/")
    if not sep:
        raise StoreError("NEO4J_AUTH must be 'user/password' or 'none'")
    return (user, password)


def resolve_uri(uri: str | None = None) -> str:
    """Explicit argument > ``NEO4J_URI`` > the running local server (its state file). StoreError when there is
    none of them: no connection is attempted to a default port, where another program may be listening."""
    uri = uri or get_config().neo4j_uri
    local = server.local_server() if not uri else None
    return _found(uri or (local.uri if local is not None else None))


def _found(uri: str | None) -> str:
    if not uri:
        raise StoreError("no Neo4j server: the local server is not running (start it with `graphlink neo4j "
                         "start`) and NEO4J_URI is not set")
    return uri


def _env_sets_auth() -> bool:
    cfg = get_config()
    return bool(cfg.neo4j_auth or cfg.neo4j_password)


def resolve_auth(uri: str) -> tuple[str, str] | None:
    """Credentials for ``uri`` when none are passed: ``NEO4J_AUTH`` (or ``NEO4J_USER``/``NEO4J_PASSWORD``) when
    set, for any server; else the project's local server gets its generated password when ``uri`` is the one in
    its state file and its launcher runs (the connection then pins the launcher's certificate); else none. The
    local password is never sent to another server."""
    if _env_sets_auth():
        return env_auth()
    local = server.local_server()
    return local.auth if local is not None and uri == local.uri else None


def _resolve(uri: str | None, auth: Any) -> Target:
    """URI, credentials and pinned certificate together, from one look at the local server
    (:func:`graphlink.store.server.local_server`): the precedence of :func:`resolve_uri` and :func:`resolve_auth`,
    and the certificate of :func:`graphlink.store.server.pinned_certificate`, read now as bytes. StoreError (one
    line) when there is no server, or when the local password would be used without its certificate."""
    local = server.local_server()
    found = _found(uri or get_config().neo4j_uri or (local.uri if local is not None else None))
    is_local = local is not None and found == local.uri
    local_password = False
    if auth is None:
        if _env_sets_auth():
            auth = env_auth()
        elif is_local:
            auth, local_password = local.auth, local.auth is not None
    if found in server._PINNED:
        certificate: bytes | None = server.read_certificate(server._PINNED[found], found)
    elif is_local:
        certificate = local.certificate
    elif get_config().neo4j_cert:
        certificate = server.read_certificate(get_config().neo4j_cert, found)
    else:
        certificate = None
    if local_password and certificate is None:
        raise StoreError(f"the certificate of the local Neo4j server at {found} cannot be read, and its password "
                         "travels only over TLS to that certificate, so nothing was sent; restart the server "
                         "(`graphlink neo4j stop`, then `graphlink neo4j start`)")
    return Target(found, auth, certificate, local_password)


def console_timeout() -> float:
    """The console's time limit per query in seconds: the setting ``cypher_timeout`` (``GRAPHLINK_CYPHER_TIMEOUT``,
    default 120; validated by :mod:`graphlink.config`)."""
    return float(get_config().cypher_timeout)


def check_timeout(value: Any, what: str = "the console's time limit") -> float:
    """``value`` as a time limit in seconds, or StoreError in one line: a number above 0 and at most one day
    (:data:`graphlink.config.CYPHER_TIMEOUT_MAX`). ``inf``, ``nan``, ``1e308``, 0, negatives and text that is no
    number are refused here, before the driver multiplies them into milliseconds (where ``inf`` overflows)."""
    from graphlink.config import TIMEOUT_EXPECT, timeout_ok

    try:
        seconds = float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    except ValueError:
        seconds = None
    if seconds is None or not timeout_ok(seconds):
        raise StoreError(f"{what} must be {TIMEOUT_EXPECT}, got {value!r}")
    return seconds


_hint = hint


def load(store: Store, release: Any, *, name: str | None = None, replace: bool = False, bulk: str = "auto",
         progress: Progress = None) -> LoadReport:
    """``graphlink load``: ``release``, as the engine read it, loaded into ``store`` under ``name``.

    A release that brings its own loader (a ``load_into(store, name, replace=, bulk=, progress=)`` method: Spark's,
    which writes the bulk importer's files from the executors) loads itself; any other (the core ``Release``, a
    long DataFrame) goes through :meth:`Store.load_release`.  The store never imports an engine, and the command
    never asks which engine read the release.  Same figures (:class:`~graphlink.store.reports.LoadReport`) either
    way; cost as the loader says (O(rows) writes).

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.store.neo4j import connect, load
    >>> with connect() as store:                                           # doctest: +SKIP
    ...     report = load(store, gl.thesis_example(), name="fig34")
    """
    own = getattr(release, "load_into", None)
    if callable(own):
        return own(store, name, replace=replace, bulk=bulk, progress=progress)
    return store.load_release(release, name=name, progress=progress, replace=replace, bulk=bulk)


def connect(uri: str | None = None, auth: Any = None) -> Store:
    """Open the Neo4j store and check that the server answers.

    Parameters
    ----------
    uri : str, optional
        Bolt URI; default ``NEO4J_URI``, else the project's local server (``graphlink neo4j start``).
    auth : tuple, optional
        ``(user, password)``; default ``NEO4J_AUTH``, else the local server's credentials.

    Returns
    -------
    Store
        Loads releases (idempotent, batched), writes results back, runs Cypher (read-only unless asked).

    Raises
    ------
    StoreError
        One line: the server does not answer, refuses the credentials, or the URI is invalid.

    Examples
    --------
    Needs a running server (the live tests cover these calls):

    >>> import graphlink as gl
    >>> with gl.connect() as store:                                        # doctest: +SKIP
    ...     store.load_release(gl.thesis_example(), name="fig34")
    ...     store.run_file("reidit_c", {"release": "fig34"})
    """
    exceptions = require("neo4j.exceptions", "neo4j", "the Neo4j store")

    target = _resolve(uri, auth)
    uri, local_password = target.uri, target.local_password
    driver = _open_driver(target)
    try:
        driver.verify_connectivity()
    except exceptions.AuthError:
        driver.close()
        if local_password:
            raise StoreError(f"Neo4j at {uri} refused the password in {server.Paths.default().password_file}; "
                             "if the file was lost or replaced, restart the local server (`graphlink neo4j "
                             "stop`, then `graphlink neo4j start` sets a new password)") from None
        raise StoreError(f"Neo4j at {uri} refused the credentials; set NEO4J_AUTH=user/password "
                         "(or NEO4J_AUTH=none)") from None
    except Exception as exc:  # ServiceUnavailable, DNS, TLS, handshake
        driver.close()
        raise _unreachable(uri, exc) from None
    return Store(driver, uri, target.auth, certificate=target.certificate, local_password=local_password)


def _unreachable(uri: str, exc: Exception) -> StoreError:
    """The one-line error for a server that could not be reached, or did not prove it holds the pinned key."""
    text = " ".join(f"{exc} {exc.__cause__ or ''}".split())
    if "certificate" in text.lower() or "ssl" in text.lower():
        return StoreError(f"the server at {uri} did not prove it is the expected Neo4j (its TLS certificate "
                          "is not the pinned one, or it does not speak TLS); no credentials were sent")
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return StoreError(f"cannot reach Neo4j at {uri} ({reason[:160]}); {_hint(uri)}")


_open_driver = open_driver
_one_line = one_line


def _batches(seq: Sequence, size: int) -> Iterator[Sequence]:
    for i in range(0, len(seq), size):
        yield seq[i:i + size]


def _release_frame(release: Any) -> tuple[pd.DataFrame, pd.DataFrame | None, str | None, str]:
    """(frame, truth, source, default name) from a core Release or a plain long-format DataFrame."""
    from graphlink.core.release import Release

    if isinstance(release, pd.DataFrame):
        frame, truth, source, name = release, None, None, "release"
    else:
        frame = release.frame
        truth = getattr(release, "truth", None)
        source = getattr(release, "source", None)
        name = getattr(release, "name", None) or "release"
    missing = {"location", "kind", "element"} - set(frame.columns)
    if missing:
        raise StoreError(f"release frame lacks column(s) {', '.join(sorted(missing))}")
    frame = frame[["location", "kind", "element"]]
    if isinstance(release, Release):  # validated: strings, repeats collapsed (making them again: 0.2 s at 1e6)
        frame = frame.reset_index(drop=True)
    else:
        frame = frame.astype(str).drop_duplicates(ignore_index=True)
    bad = sorted(set(frame["kind"].unique()) - set(KINDS))
    if bad:
        raise StoreError(f"release frame has kind(s) {bad}; expected 'identified' or 'deidentified'")
    return frame, truth, str(source) if source else None, str(name)


def fingerprint(frame: pd.DataFrame, *, distinct: bool = False) -> str:
    """Order-independent content hash of a long-format release: sha256 over the sorted 64-bit row hashes.

    ``distinct``: ``frame`` holds strings and no repeated row already (as :func:`_release_frame` returns it), so
    they are not made again. O(rows log rows), vectorised (about 0.1 s for 1e6 distinct rows).
    """
    rows = frame[["location", "kind", "element"]]
    if not distinct:
        rows = rows.astype(str).drop_duplicates()
    hashed = np.sort(pd.util.hash_pandas_object(rows, index=False).to_numpy(dtype=np.uint64))
    return hashlib.sha256(hashed.tobytes()).hexdigest()


def release_fingerprint(release: Any) -> str:
    """The content hash :meth:`Store.load_release` stores for ``release`` (a core Release or a long DataFrame):
    :func:`fingerprint` of the rows as the loader reads them. O(rows log rows)."""
    return fingerprint(_release_frame(release)[0], distinct=True)


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _process_start(pid: int) -> str | None:
    """Start time of ``pid`` (clock ticks since boot, /proc/PID/stat field 22), "" without /proc, None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:
            pass
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _lock_owner() -> dict:
    """Who holds a load lock: host name, boot id, PID and the start time of this process."""
    import socket

    pid = os.getpid()
    return {"host": socket.gethostname(), "boot": _boot_id(), "pid": pid, "started": _process_start(pid) or ""}


def _lock_owner_gone(lock: dict, me: dict) -> bool:
    """The process that took ``lock`` is known not to run any more: it ran on this machine, and the machine has
    booted since, or no process has its PID, or the one that has it started at another time (a reused PID)."""
    if lock.get("host") != me["host"]:
        return False  # another machine: nothing here can tell
    if lock.get("boot") and me["boot"] and lock.get("boot") != me["boot"]:
        return True
    started = _process_start(int(lock.get("pid") or 0))
    return started is None or (bool(started) and bool(lock.get("started")) and started != lock.get("started"))


def _lock_alive(lock: dict, quiet: float | None, me: dict) -> bool:
    """The load holding ``lock`` still runs, as far as anyone can tell: on this machine, its process (same PID and
    start time, same boot) is there; on another, its last heartbeat is younger than :data:`STALE_BEATS` of its
    intervals (``quiet``: seconds since then, on the server's clock, so the machines' clocks do not matter)."""
    if lock.get("host") == me["host"]:
        return not _lock_owner_gone(lock, me)
    interval = float(lock.get("interval") or HEARTBEAT)
    return quiet is None or quiet < STALE_BEATS * interval


def _since(lock: dict) -> str:
    return str(lock.get("at") or "?")[:19].replace("T", " ")


def _lock_message(name: str, lock: dict, me: dict, quiet: float | None = None) -> str:
    since = _since(lock)
    who = f"process {lock.get('pid')} on {lock.get('host')}"
    if lock.get("host") == me["host"]:
        return (f"release {name!r} is being loaded by another {who} since {since}; run this load again when "
                "that one has finished")
    beat = f", last heartbeat {quiet:.0f} s ago" if quiet is not None else ""
    return (f"release {name!r} is being loaded by {who} since {since}{beat}, which this machine cannot check; if "
            "that load no longer runs, take its lock over (docs/neo4j.md, \"Load locks\")")


class LockLostError(StoreError):
    """A load's lock was broken or taken by another process while it ran: the load is not reported as done."""

    def __init__(self, name: str) -> None:
        super().__init__(f"another process broke the load lock of release {name!r}; the release may be incomplete "
                         "-- load it again")


class _Heartbeat(threading.Thread):
    """Refreshes ``heartbeat`` on a held lock node every :data:`HEARTBEAT` seconds, so that a machine which cannot
    look at the holder's process can still tell a live load from a dead one. Errors are ignored (the server may
    be paused for a bulk import's swap); whether the lock is still this load's is decided by its token at the
    end (:meth:`Store.load_lock`), not here."""

    def __init__(self, store: Store, name: str, token: str) -> None:
        super().__init__(name="graphlink-lock-heartbeat", daemon=True)
        self.store, self.release, self.token = store, name, token
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(HEARTBEAT):
            with self.store._beat_lock:
                if self.store._beats_paused or self.done.is_set():
                    continue
                with contextlib.suppress(Exception):
                    self.store.conn.execute(
                        "MATCH (l:LoadLock {release: $release, token: $token}) SET l.heartbeat = datetime()",
                        {"release": self.release, "token": self.token})

    def stop(self) -> None:
        self.done.set()
        self.join(HEARTBEAT + 30)


class Store:
    """A connection to Neo4j holding graphlink releases and results. Use :func:`connect` to create one.

    ``conn`` (:class:`graphlink.store.connection.Connection`) is its connection, which the modules writing for it
    use; ``driver``, ``uri`` and ``database`` are the connection's."""

    def __init__(self, driver: Any, uri: str, auth: Any = None, *, certificate: bytes | None = None,
                 local_password: bool = False) -> None:
        # pinned when the Store is made, never looked up again: after `graphlink neo4j stop` the state file is
        # gone, and a driver opened later (the console's, a reconnect) must still refuse whoever took the port
        self.conn = Connection(driver, Target(uri, auth, certificate, local_password), database())
        self._load = cypherlib.load_file(cypherlib.cypher_dir() / "load.cypher")
        self._schema_applied = False
        self._lock_schema = False      # the load_lock constraint is known to exist
        self._console: Any = None  # the console's own driver (_console_driver)
        self._held: dict[tuple[str, int], list] = {}  # load locks this Store holds: (name, thread) -> [token, depth]
        self._beat_lock = threading.Lock()  # held while a heartbeat writes, and while heartbeats are paused
        self._beats_paused = 0

    @property
    def driver(self) -> Any:
        """The connection's Neo4j driver."""
        return self.conn.driver

    @property
    def uri(self) -> str:
        """The Bolt address of the server."""
        return self.conn.uri

    @property
    def database(self) -> str:
        """The user database every query runs on (``NEO4J_DATABASE``), chosen when the Store was made."""
        return self.conn.database

    # ------------------------------------------------------------------ basics
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()
        if self._console is not None:
            self._console.close()
            self._console = None

    def reconnect(self, uri: str | None = None) -> None:
        """A new driver for ``uri`` (default: the same address) with the same credentials and pinned certificate,
        after the local server reopened its database (a bulk import's swap); the schema is checked again on the
        next load."""
        if self._console is not None:
            self._console.close()
            self._console = None
        self.conn.reconnect(uri)
        self._schema_applied = self._lock_schema = False

    def server_version(self) -> str:
        rec = self._query("CALL dbms.components() YIELD versions RETURN versions[0] AS v", database="system")
        return str(rec[0]["v"])

    def _query(self, query: str, params: dict | None = None, database: str | None = None) -> list:
        """:meth:`Connection.query <graphlink.store.connection.Connection.query>` (a managed write transaction,
        retried on transient errors; StoreError on refusal)."""
        return self.conn.query(query, params, database)

    # ------------------------------------------------------------------ schema
    def mark_schema_applied(self) -> None:
        """Record that the whole schema exists (a bulk import has just built it), so loads skip applying it."""
        self._schema_applied = self._lock_schema = True

    def apply_schema(self, force: bool = False) -> None:
        """Create the constraints and indexes of cypher/schema.cypher (idempotent) and wait until they are online.

        Done once per Store (every load calls it); ``force=True`` re-applies.
        """
        if self._schema_applied and not force:
            return
        for st in cypherlib.load_file(cypherlib.cypher_dir() / "schema.cypher").statements:
            self._query(st.text)
        self._query("CALL db.awaitIndexes(300)")
        self._schema_applied = self._lock_schema = True

    def _apply_lock_schema(self) -> None:
        """Create the ``load_lock`` uniqueness constraint alone (once per Store): all a lock needs. The rest of
        the schema waits for the load's choice, because a bulk import replaces the database and builds the schema
        after it (0.7 s of index and constraint creation saved on an empty database)."""
        if self._lock_schema or self._schema_applied:
            return
        for st in cypherlib.load_file(cypherlib.cypher_dir() / "schema.cypher").statements:
            if re.match(r"\s*CREATE\s+CONSTRAINT\s+load_lock\b", st.text, re.I):
                self._query(st.text)
        self._lock_schema = True

    # ------------------------------------------------------------------ releases
    def load_release(self, release: Any, name: str | None = None, progress: Progress = None, *,
                     replace: bool = False, batch_size: int = BATCH, bulk: str = "auto") -> LoadReport:
        """Load a release (core ``Release`` or a long DataFrame ``location, kind, element``) under ``name``.

        Two ways, chosen by ``bulk`` (:mod:`graphlink.store.bulk` has the rule): a release into the *empty* database
        of the project's local server is built by ``neo4j-admin database import`` (the database pauses; ``auto``
        does so from ``GRAPHLINK_BULK_MIN_ROWS`` = 200,000 rows, ``always`` at any size or fails, ``never`` not at
        all); otherwise batched ``UNWIND $elements`` + ``MERGE`` on the uniqueness constraints (cypher/load.cypher:
        one row per element with the indexes of its locations), each batch of ~``batch_size`` disclosures a
        managed transaction retried on transient errors, on ``GRAPHLINK_NEO4J_WRITERS`` concurrent sessions
        (:class:`graphlink.store.batches.Batches`); a release new to the graph takes the CREATE fast path.
        Both write the same graph, and the Release node records which one did it (``load_method``).
        Idempotent: the same rows loaded again change nothing, and a release whose content hash is already
        stored as completely loaded is skipped at once; an interrupted load (status 'loading') is completed by
        running it again. Loading *different* rows under an existing name is refused unless ``replace=True``
        (which drops the old release first). One load per name at a time, across processes and machines
        (:meth:`load_lock`): a second one is refused at once.
        ``progress(fraction, message)`` after every batch or step. Cost: O(rows) writes.
        Returns a :class:`graphlink.store.reports.LoadReport`: the Release node's figures (rows, locations,
        identified, deidentified, reserved), ``seconds``, ``skipped``, ``method`` (``bulk-import`` / ``unwind``)
        and ``why`` (the reason for it).
        """
        from graphlink.store import bulk as bulk_import

        t0 = time.perf_counter()
        frame, truth, source, default_name = _release_frame(release)
        name = name or default_name
        fp = fingerprint(frame, distinct=True)
        with self.load_lock(name):
            done_already, existing = self.before_load(name, fp, replace=replace)
            if done_already is not None:
                self.apply_schema()    # results may follow (write_results), which the indexes serve
                return done_already.timed(time.perf_counter() - t0)
            if existing is None:
                done, why = bulk_import.load(self, frame, truth, name, source, fp, mode=bulk, progress=progress)
                if done:
                    return LoadReport.from_node(self.release_info(name), seconds=time.perf_counter() - t0,
                                                method=bulk_import.METHOD, why=why)
            else:
                why = "the release is partly loaded already"
            self.apply_schema()

            fresh = existing is None  # nothing of this release is in the graph: CREATE instead of MERGE
            locations = list(dict.fromkeys(frame["location"]))
            loc_index = {loc: i for i, loc in enumerate(locations)}
            total = len(frame)
            st = self._load.statement
            self._query(st("release").text, {"release": name, "source": source, "fingerprint": fp})
            self._query(st("locations").text, {"release": name, "locations": [
                {"name": loc, "index": i} for i, loc in enumerate(locations)]})
            # Element batches on the write-back's concurrent sessions: batches hold disjoint elements, and the
            # Location nodes they share are dense, which Neo4j does not lock exclusively for a new relationship.
            out = Batches(self.conn, progress, total=total, what="disclosures")
            for kind in KINDS:
                query = st(f"{'create' if fresh else 'elements'}_{kind}").text
                out.run(query, ({"release": name, "elements": batch}
                                for batch, _ in self._element_batches(frame, kind, loc_index, batch_size)))
            if truth is not None and len(truth):
                tr = truth[["identified", "deidentified"]].astype(str)
                rows = [{"id": f"{i}|{d}", "identified": i, "deidentified": d}
                        for i, d in zip(tr["identified"], tr["deidentified"], strict=True)]
                for chunk in _batches(rows, batch_size):
                    self._query(st("truth").text, {"release": name, "truth": list(chunk)})
            t_final = time.perf_counter()
            self.as_owner(name, st("finalize").text, {"release": name})
            info = self.release_info(name)
            t1 = time.perf_counter()
            return LoadReport.from_node(info, seconds=t1 - t0, seconds_finalize=t1 - t_final, method="unwind",
                                        why=why)

    @contextlib.contextmanager
    def load_lock(self, name: str) -> Iterator[str]:
        """Hold the load lock of release ``name`` for the ``with`` block (yields its token).

        The lock is a ``(:LoadLock {release, token, host, boot, pid, started, at, heartbeat, interval})`` node under
        a uniqueness constraint on ``release`` (cypher/schema.cypher), created in a transaction of its own before
        anything of the release is read or written, and deleted (by its token) afterwards. While it is held, a
        background thread sets ``heartbeat`` to the server's time every :data:`HEARTBEAT` seconds (``interval``).
        A second load under the same name -- another process, another machine, another thread -- fails to create
        it and is refused with one line naming the holder. A lock left by a load that died (kill -9, a crash of
        Neo4j) is taken over when this machine can tell that its process is gone: same host and boot, and no live
        process with that PID and start time. A lock from another host stays until :meth:`break_lock` removes it,
        which it does only once that lock's heartbeat has stopped. The release is marked loaded only in a
        transaction that finds the lock still this load's (:meth:`as_owner`), and leaving the block checks the
        token again: a load whose lock was broken or taken raises :class:`LockLostError` instead of returning.
        Re-entrant in one thread (the Spark loader takes it, then its connector writer does). O(1) queries, plus
        one every :data:`HEARTBEAT` seconds.
        """
        from neo4j import exceptions

        key = (name, threading.get_ident())
        if key in self._held:
            self._held[key][1] += 1
            try:
                yield self._held[key][0]
            finally:
                self._held[key][1] -= 1
            return
        self._apply_lock_schema()
        token = uuid.uuid4().hex
        me = _lock_owner()
        for _ in range(3):
            try:
                self._create_lock(name, token, me)
                break
            except exceptions.ConstraintError:
                held, quiet = self._read_lock(name)
                if held is None:
                    continue  # released in the meantime
                if not _lock_owner_gone(held, me):
                    raise StoreError(_lock_message(name, held, me, quiet)) from None
                self._query("MATCH (l:LoadLock {release: $release, token: $token}) DELETE l",
                            {"release": name, "token": held.get("token")})
            except exceptions.ServiceUnavailable as exc:
                raise StoreError(f"lost Neo4j at {self.uri} ({_one_line(exc)[:160]}); {_hint(self.uri)}") from None
        else:
            raise StoreError(f"could not take the load lock of release {name!r}: other loads keep taking it")
        self._held[key] = [token, 1]
        beat = _Heartbeat(self, name, token)
        beat.start()
        try:
            yield token
        except BaseException:
            beat.stop()
            del self._held[key]
            with contextlib.suppress(Exception):  # a server that died keeps the lock: the next load sees its owner gone
                self.conn.execute("MATCH (l:LoadLock {release: $release, token: $token}) DELETE l",
                                  {"release": name, "token": token})
            raise
        beat.stop()
        del self._held[key]
        released = self._query("MATCH (l:LoadLock {release: $release, token: $token}) DELETE l RETURN count(*) AS n",
                               {"release": name, "token": token})
        if not released or not released[0]["n"]:
            raise LockLostError(name)

    def _create_lock(self, name: str, token: str, me: dict) -> None:
        """CREATE the lock node (ConstraintError when another load holds it)."""
        self.conn.execute(
            "CREATE (:LoadLock {release: $release, token: $token, host: $host, boot: $boot, pid: $pid, "
            "started: $started, at: datetime(), heartbeat: datetime(), interval: $interval})",
            {"release": name, "token": token, "interval": float(HEARTBEAT), **me})

    def _read_lock(self, name: str) -> tuple[dict | None, float | None]:
        """The lock node of ``name`` (properties) and the seconds since its last heartbeat, on the server's clock
        (a lock written before heartbeats existed: since it was taken)."""
        recs = self._query("MATCH (l:LoadLock {release: $release}) RETURN properties(l) AS p, "
                           "duration.inSeconds(coalesce(l.heartbeat, l.at), datetime()).seconds AS quiet",
                           {"release": name})
        if not recs:
            return None, None
        quiet = recs[0]["quiet"]
        return _plain(recs[0]["p"]), float(quiet) if quiet is not None else None

    def as_owner(self, name: str, query: str, params: dict | None = None) -> list:
        """Run ``query`` in one write transaction that first finds this thread's lock of ``name`` still there
        (its token) and writes to it, so that no one can break it until the transaction ends; LockLostError, with
        nothing written, if it is gone. The commit that marks a release loaded goes through here. Without a lock
        held by this thread: :meth:`_query`. (Public for the engines' loaders, which commit the same way.)"""
        held = self._held.get((name, threading.get_ident()))
        if held is None:
            return self._query(query, params)
        token = held[0]

        def work(tx: Any) -> list | None:
            owned = tx.run("MATCH (l:LoadLock {release: $release, token: $token}) SET l.heartbeat = datetime() "
                           "RETURN count(l) AS n", release=name, token=token).single()
            if not owned or not owned["n"]:
                return None
            return list(tx.run(query, params or {}))

        records = self.conn.execute_write(work)
        if records is None:
            raise LockLostError(name)
        return records

    def restore_lock(self, name: str) -> None:
        """This thread's lock of ``name`` again, same token, in a database that a bulk import has just replaced
        (the new store has no lock node); LockLostError if another load took the name in the meantime."""
        from neo4j import exceptions

        held = self._held.get((name, threading.get_ident()))
        if held is None:
            return
        self._apply_lock_schema()
        try:
            self._create_lock(name, held[0], _lock_owner())
        except exceptions.ConstraintError:
            raise LockLostError(name) from None

    @contextlib.contextmanager
    def heartbeats_paused(self) -> Iterator[None]:
        """No heartbeat is written inside the block (a bulk import compares the transaction logs before and after
        its import, and any write, a heartbeat too, makes it keep the old store)."""
        with self._beat_lock:
            self._beats_paused += 1
        try:
            yield
        finally:
            with self._beat_lock:
                self._beats_paused -= 1

    def break_lock(self, name: str) -> LoadLock | None:
        """Remove the load lock of release ``name`` when its load no longer runs; return the lock removed, or None
        if there was none. The next load completes whatever the broken one left (status 'loading').

        Refused (StoreError, one line naming the holder and since when) while the holder is alive as far as can be
        told (:func:`_lock_alive`): on this machine, its process is there; on another, its heartbeat is younger
        than :data:`STALE_BEATS` of its intervals. The node is deleted by its token, so a lock taken again
        meanwhile by another load stays. O(1) queries."""
        held, quiet = self._read_lock(name)
        if held is None:
            return None
        me = _lock_owner()
        if _lock_alive(held, quiet, me):
            beat = f", last heartbeat {quiet:.0f} s ago" if quiet is not None else ""
            where = "on this machine, and it is still running" if held.get("host") == me["host"] else \
                f"on {held.get('host')}, which still sends heartbeats{beat}"
            raise StoreError(f"the load lock of release {name!r} is held by process {held.get('pid')} {where} "
                             f"(since {_since(held)}); it was not removed -- wait for that load to finish")
        self._query("MATCH (l:LoadLock {release: $release, token: $token}) DELETE l",
                    {"release": name, "token": held.get("token")})
        return LoadLock.from_node(held)

    def before_load(self, name: str, fp: str, *,
                    replace: bool = False) -> tuple[LoadReport | None, StoredRelease | None]:
        """What is stored under ``name`` before a release with content hash ``fp`` is loaded there (by either
        engine): ``(LoadReport, the stored release)`` when there is nothing left to do (the release is
        loaded already: ``skipped``; or a bulk import of it was interrupted after the swap and is now finished),
        else ``(None, the stored release or None)`` for the caller to load it. A release of other
        content under ``name`` is refused (StoreError), or dropped first when ``replace``. O(1) queries, plus
        :func:`bulk.finish`'s check."""
        from graphlink.store import bulk as bulk_import

        existing = self.release_info(name)
        if existing is None:
            return None, None
        if existing.fingerprint == fp and existing.status == "loaded":
            return LoadReport.from_node(existing, skipped=True), existing
        if (existing.fingerprint == fp and existing.load_method == bulk_import.METHOD
                and bulk_import.finish(self, name)):  # imported, then interrupted before it was marked
            return LoadReport.from_node(self.release_info(name), method=bulk_import.METHOD,
                                        why="completed an interrupted import"), existing
        if existing.fingerprint not in (None, fp):
            if not replace:
                raise StoreError(diagnostic=Diagnostic(
                    "store-name-taken", f"release {name!r} is already in Neo4j with different content",
                    {"name": name}, remedy="choose another name or replace it (load_release(..., replace=True))"))
            self.drop_release(name)
            return None, None
        return None, existing

    @staticmethod
    def _element_batches(frame: pd.DataFrame, kind: str, loc_index: dict[str, int],
                         size: int) -> Iterator[tuple[list[dict], int]]:
        """Rows of one kind as ``[{key, at: [location indexes]}]`` batches of about ``size`` disclosures."""
        part = frame[frame["kind"] == kind]
        if part.empty:
            return
        codes = part["location"].map(loc_index).to_numpy()
        el_codes, uniques = pd.factorize(part["element"], sort=False)
        order = np.argsort(el_codes, kind="stable")
        starts = np.searchsorted(el_codes[order], np.arange(len(uniques) + 1))
        loc_sorted = codes[order]
        batch: list[dict] = []
        n = 0
        for j, key in enumerate(uniques):
            at = loc_sorted[starts[j]:starts[j + 1]].tolist()
            batch.append({"key": str(key), "at": at})
            n += len(at)
            if n >= size:
                yield batch, n
                batch, n = [], 0
        if batch:
            yield batch, n

    def release_info(self, name: str) -> StoredRelease | None:
        """The release stored under ``name`` (its Release node's figures), or None when there is none.  One
        query."""
        recs = self._query("MATCH (r:Release {name: $name}) RETURN properties(r) AS p", {"name": name})
        return StoredRelease.from_node(_plain(recs[0]["p"])) if recs else None

    def list_releases(self) -> list[StoredRelease]:
        """Every stored release with its figures, sorted by name.  One query."""
        recs = self._query("MATCH (r:Release) RETURN properties(r) AS p ORDER BY r.name")
        return [StoredRelease.from_node(_plain(r["p"])) for r in recs]

    def read_release(self, name: str) -> pd.DataFrame:
        """The release back in long format (columns location, kind, element), in location order then element."""
        if not self.release_info(name):
            raise StoreError(f"no release named {name!r} in Neo4j at {self.uri}")
        df = self._read_frame(
            """MATCH (l:Location {release: $name})<-[:DISCLOSED_AT]-(e)
               WITH l, e, CASE WHEN e:Identified THEN 'identified' ELSE 'deidentified' END AS kind
               RETURN l.name AS location, kind, e.key AS element
               ORDER BY l.index, kind DESC, element""", {"name": name})
        if df.empty:
            return pd.DataFrame({"location": pd.Series(dtype=str), "kind": pd.Series(dtype=str),
                                 "element": pd.Series(dtype=str)})
        return df.astype(str)

    def drop_release(self, name: str) -> None:
        """Delete a release and everything scoped to it (batched, so large releases fit in memory).

        The link graph goes first, by :func:`graphlink.store.classgraph.drop`, whose batches are cut by the classes'
        degrees: 5,000 class nodes of a low-entropy release at a time can carry millions of LINKs, more than one
        transaction may hold. The elements go before the Analysis nodes, so that an audit's VIOLATES edges (one per
        violating element) leave in the elements' batches.
        """
        from graphlink.store import classgraph

        classgraph.drop(self, name)
        for label in ("Entity", "Identified", "Deidentified", "Analysis", "Location"):
            self.conn.run_auto(f"MATCH (n:{label} {{release: $name}}) "
                           "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", {"name": name})
        self._query("MATCH (r:Release {name: $name}) DETACH DELETE r", {"name": name})

    # ------------------------------------------------------------------ write-back
    def new_analysis(self, name: str, kind: str, method: str, params: dict, extra: dict | None = None) -> str:
        """Create the ``(:Analysis {run, release, kind, method, params, at, ...extra})-[:ON]->(:Release)`` node of a
        new run on release ``name`` (``params`` stored as sorted JSON); return its run id. StoreError when the
        release is not loaded. O(1) queries."""
        from graphlink.store.batches import run_id

        if not self.release_info(name):
            raise StoreError(f"no release named {name!r} in Neo4j at {self.uri}; load it first")
        run = run_id(kind)
        self._query("""MATCH (r:Release {name: $release})
                       CREATE (a:Analysis {run: $run, release: $release, kind: $kind, method: $method,
                                           params: $params, at: datetime()})-[:ON]->(r)
                       SET a += $extra""",
                    {"release": name, "run": run, "kind": kind, "method": method,
                     "params": json.dumps(params, default=str, sort_keys=True), "extra": extra or {}})
        return run

    def prepare(self, release: Any, name: str | None) -> tuple[pd.DataFrame, pd.DataFrame | None, str | None, str,
                                                                str]:
        """(frame, truth, source, name, content hash) of a release about to be written (see load_release)."""
        frame, truth, source, default_name = _release_frame(release)
        return frame, truth, source, name or default_name, fingerprint(frame, distinct=True)

    def write_results(self, release: Any, name: str | None = None, *, classes: Any = None, audit: Any = None,
                      reidentification: Any = None, bulk: str = "auto", progress: Progress = None) -> StoredResults:
        """Load ``release`` if needed and write its link graph (``classes``), audit and re-identification at bulk
        speed: one bulk import with the release when it is new to an empty local database, else concurrent
        UNWIND batches (:func:`graphlink.store.writeback.write_results`, which has the details). Returns a
        :class:`graphlink.store.reports.StoredResults` (``release``: the LoadReport, ``runs``: run id per result,
        ``method``, ``why``, ``seconds``)."""
        from graphlink.store import writeback

        return writeback.write_results(self, release, name, classes=classes, audit=audit,
                                       reidentification=reidentification, bulk=bulk, progress=progress)

    def write_link_graph(self, name: str, classes: Any, progress: Progress = None) -> str:
        """Write a classified link graph (``matching.EdgeClasses`` or ``onetomany.ManyClasses``) at twin-class
        level, plus element-level LINK edges for small releases; replaces the release's previous link graph.

        See :mod:`graphlink.store.classgraph` for the graph model.  Returns the run id.
        Cost: O(|M| + |N| + class edges) writes, in batches on a few concurrent sessions.
        """
        from graphlink.store import classgraph

        return classgraph.write(self, name, classes, progress)

    def write_reidentification(self, name: str, result: Any, progress: Progress = None) -> str:
        """Write a ``reidit.Reidentification`` as ``REIDENTIFIED {method, run, reason}`` edges plus its Analysis.

        Runs accumulate (each keeps its own edges and provenance). Returns the run id. Cost: O(pairs) writes.
        """
        from graphlink.store import writeback

        return writeback.write_reidentification(self, name, result, progress)

    def write_audit(self, name: str, result: Any) -> str:
        """Write an ``audit.AuditResult``: an Analysis node (k, verdict, counts) and
        ``(:Analysis)-[:VIOLATES {side, union_degree}]->(element)`` for each violator. Returns the run id."""
        from graphlink.store import writeback

        return writeback.write_audit(self, name, result)

    def read_reidentification(self, run: str) -> pd.DataFrame:
        """Pairs of a written re-identification run: identified, deidentified, reason."""
        return self._read_frame("""MATCH (i:Identified)-[x:REIDENTIFIED]->(d:Deidentified) WHERE x.run = $run
                                  RETURN i.key AS identified, d.key AS deidentified, x.reason AS reason
                                  ORDER BY identified, deidentified""", {"run": run})

    def read_link_graph(self, name: str) -> pd.DataFrame:
        """The release's written link graph as element pairs (through its classes, cypher/link_pairs.cypher):
        identified, deidentified, allowed, vital, run.  O(element edges): small releases."""
        return self.run_file("link_pairs", {"release": name})

    def analyses(self, name: str) -> pd.DataFrame:
        """Provenance: every Analysis node of a release (run, kind, method, params, at), newest first."""
        return self._read_frame("""MATCH (a:Analysis {release: $name})
                                  RETURN a.run AS run, a.kind AS kind, a.method AS method, a.params AS params,
                                         toString(a.at) AS at ORDER BY a.at DESC""", {"name": name})

    # ------------------------------------------------------------------ Cypher for analysts
    def run_cypher(self, query: str, params: dict | None = None, write: bool = False,
                   timeout: float | None = None) -> pd.DataFrame:
        """Run analyst-written Cypher (the console: ``graphlink cypher``, the app's Cypher page) and return the
        rows of its (last) statement as a DataFrame.

        The text may be a whole library file: ``// @param name=default`` defaults fill parameters not given,
        and several ``;``-terminated statements run in order (every one of them checked as below).

        Read-only unless ``write=True``, behind the locks of :mod:`graphlink.store.guard` (docs/security.md):
        the text as read by Neo4j's own parser (in the console's Java worker, on the local runtime's class path)
        passes :func:`guard.check` (size limits; only allowlisted clauses, procedures and functions; no
        ``LOAD CSV``, administration or ``USE``); the server's ``EXPLAIN`` plan passes :func:`guard.check_plan` (an
        allowlist of read operators, plus data and schema writes with ``write=True``; never administration,
        ``LOAD CSV``, ``SHOW SETTINGS``/``TRANSACTIONS`` or ``TERMINATE``); the query runs in a READ session (WRITE with
        ``write=True``) under a transaction timeout of ``timeout`` seconds (default :func:`console_timeout`; at
        most a day, :func:`check_timeout`), and the client gives up :data:`DEADLINE_GRACE` seconds later if the
        server has not answered. At most ``cypher_max_rows`` rows (``GRAPHLINK_CYPHER_MAX_ROWS``) are read: past
        them the console drops its connection, so the server stops the query, and raises StoreError asking for
        ``LIMIT``.
        Refusals raise :class:`graphlink.store.guard.QueryRefusedError` (a StoreError). Parameters travel
        separately from the text and are never spliced into it.
        """
        cf = cypherlib.parse_text(query)
        params = cf.resolve_params(params)
        out = pd.DataFrame()
        for st in cf.statements:
            out = self._run_one(st.text, params, write, timeout)
        return out

    def run_file(self, path: str | Path, params: dict | None = None, write: bool = False,
                 statement: str | None = None, timeout: float | None = None) -> pd.DataFrame:
        """Run a library file (``cypher/NAME.cypher`` or any path) statement by statement through the console's
        locks (:meth:`run_cypher`); return the last table.

        Header defaults (``// @param k=2``) fill parameters not given; a missing required parameter is a
        StoreError naming it.
        """
        cf = cypherlib.load_file(path)
        p = cf.resolve_params(params)
        sts = [cf.statement(statement)] if statement else cf.statements
        out = pd.DataFrame()
        for st in sts:
            out = self._run_one(st.text, p, write, timeout)
        return out

    def _console_driver(self) -> Any:
        """The driver console queries use: separate from the store's, so that giving up on a query (closing
        its connection) does not disturb loads or write-backs running on the same Store."""
        if self._console is None:
            self._console = self.conn.open_driver()
        return self._console

    def _run_one(self, query: str, params: dict, write: bool, timeout: float | None) -> pd.DataFrame:
        guard.check(query, write=write)
        limit = console_timeout() if timeout is None else check_timeout(timeout)
        driver = self._console_driver()
        outcome: dict[str, Any] = {}
        deadline = time.monotonic() + limit

        def work() -> None:
            try:
                outcome["frame"] = self._plan_and_run(driver, query, params, write, limit, deadline)
            except BaseException as exc:  # handed to the waiting thread
                outcome["error"] = exc

        worker = threading.Thread(target=work, name="graphlink-console", daemon=True)
        worker.start()
        try:
            worker.join(limit + DEADLINE_GRACE)
        except BaseException:  # Ctrl-C: drop the connection, so the query does not run on unobserved
            self._abandon_console(driver)
            raise
        if worker.is_alive():
            self._abandon_console(driver)
            worker.join(5)
            raise StoreError(f"Neo4j at {self.uri} did not answer within {limit + DEADLINE_GRACE:.0f} s, so the "
                             "console gave up on the query (a very large or deeply nested query can keep the "
                             "server's planner busy past any time limit); simplify the query")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["frame"]

    def _abandon_console(self, driver: Any) -> None:
        """Close the console's connections: the server drops the transaction, a blocked read returns."""
        if self._console is driver:
            self._console = None
        driver.close()

    def _plan_and_run(self, driver: Any, query: str, params: dict, write: bool, limit: float,
                      deadline: float) -> pd.DataFrame:
        from neo4j import READ_ACCESS, WRITE_ACCESS, Query, exceptions

        mode = WRITE_ACCESS if write else READ_ACCESS
        try:
            with driver.session(database=self.database, default_access_mode=mode) as session:
                summary = session.run(Query("EXPLAIN " + query, timeout=limit), params).consume()
            guard.check_plan(summary.plan, write=write, database=self.database)
            if not write and summary.query_type != "r":
                kind = {"w": "writes data", "rw": "reads and writes data",
                        "s": "changes the schema or calls a system procedure"}
                what = kind.get(summary.query_type, "writes")
                raise guard.QueryRefusedError(f"the server's plan says this query {what} (read-only mode)",
                                              read_only=True)
            remaining = max(1.0, deadline - time.monotonic())
            cap = get_config().cypher_max_rows
            session = driver.session(database=self.database, default_access_mode=mode)
            too_many = False
            try:
                result = session.run(Query(query, timeout=remaining), params)
                keys = list(result.keys())
                rows: list[list[Any]] = []
                for record in result:  # the driver fetches in batches; the server waits between them
                    if len(rows) == cap:
                        too_many = True
                        break
                    rows.append([_plain(v) for v in record.values()])
            finally:
                if too_many:
                    # closing the connection makes the server drop the transaction; a ROLLBACK would first
                    # DISCARD the rest, which runs the query to its end
                    self._abandon_console(driver)
                with contextlib.suppress(Exception) if too_many else contextlib.nullcontext():
                    session.close()
            if too_many:
                raise StoreError(f"the result has more than {cap:,} rows, more than the console reads "
                                 "(GRAPHLINK_CYPHER_MAX_ROWS); add LIMIT, or aggregate")
            return pd.DataFrame(rows, columns=keys)
        except RecursionError:
            raise guard.QueryRefusedError("the server's answer is nested too deeply to read (thousands of clauses "
                                          "or plan operators); split the query") from None
        except exceptions.ServiceUnavailable as exc:
            raise StoreError(f"lost Neo4j at {self.uri} ({_one_line(exc)[:160]}); {_hint(self.uri)}") from None
        except exceptions.ConstraintError as exc:
            raise StoreError(f"Neo4j refused the write (constraint violation): {_one_line(exc)}") from None
        except exceptions.Neo4jError as exc:
            if "MemoryPoolOutOfMemoryError" in (exc.code or ""):
                raise StoreError("the query needed more memory than one transaction may hold on the server "
                                 "(db.memory.transaction.max), which stopped it; aggregate earlier or add LIMIT"
                                 ) from None
            if "TransactionTimedOut" in (exc.code or ""):
                raise StoreError(f"the query did not finish within the console's time limit of {limit:g} s "
                                 "and was stopped") from None
            if "access mode" in _one_line(exc).lower():
                raise guard.QueryRefusedError("the server refused to write in a read-only session",
                                              read_only=True) from None
            raise StoreError(f"Neo4j refused the query: {_one_line(exc)}") from None

    def _read_frame(self, query: str, params: dict | None = None) -> pd.DataFrame:
        """One of the store's own fixed read queries as a DataFrame (a READ session, no console checks)."""
        keys, rows = self.conn.read_rows(query, params, _plain)
        return pd.DataFrame(rows, columns=keys)


def _plain(value: Any) -> Any:
    """Driver values -> plain Python (temporal -> ISO string; nodes/relationships -> property dicts)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if hasattr(value, "element_id") and hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    return value
