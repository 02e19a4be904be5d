"""The store's connection to Neo4j: one driver, pinned where it was opened, and the few ways the store's modules
talk through it (managed queries, auto-commit queries, sessions, explicit transactions).

A :class:`Connection` is owned by a :class:`graphlink.store.neo4j.Store` (``store.conn``) and handed to the
modules that write for it (:mod:`~graphlink.store.writeback`, :mod:`~graphlink.store.bulk`,
:mod:`~graphlink.store.classgraph`, :mod:`~graphlink.store.batches`, the Spark connector), which use only the public
names here. Its :class:`Target` -- address, credentials, pinned certificate -- is fixed when the Store is made and
never looked up again: a driver opened later (a reconnect after a bulk import, the console's own driver) still
refuses whoever took the port after ``graphlink neo4j stop``. Every driver failure surfaces as a one-line
:class:`graphlink.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from graphlink.config import get_config
from graphlink.errors import StoreError, require
from graphlink.store import server


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a Store connects and how, resolved once (``graphlink.store.neo4j._resolve``): ``uri``, ``auth``,
    ``certificate`` (the PEM bytes every connection pins, or None: TLS as the URI says) and ``local_password``
    (``auth`` is the local server's generated password, which only ever travels inside TLS with ``certificate``)."""

    uri: str
    auth: Any
    certificate: bytes | None
    local_password: bool


def one_line(exc: Exception) -> str:
    """The driver's message of ``exc`` on one line, at most 400 characters."""
    msg = getattr(exc, "message", None) or str(exc)
    return " ".join(str(msg).split())[:400]


def hint(uri: str) -> str:
    """What to check when the server at ``uri`` cannot be reached (the address came from NEO4J_URI or the local
    server)."""
    if get_config().neo4j_uri:
        return "check NEO4J_URI / NEO4J_AUTH"
    return "start the local server with `graphlink neo4j start` (or set NEO4J_URI)"


def open_driver(target: Target) -> Any:
    """A driver for ``target``: TLS pinned to exactly ``target.certificate`` when there is one
    (:func:`graphlink.store.server.open_driver`), never read again from a file; the local password never without
    it (StoreError). Opens no connection yet (the driver connects lazily)."""
    from neo4j import exceptions

    if target.local_password and target.certificate is None:  # _resolve refuses this already; kept as the rule
        raise StoreError(f"no pinned certificate for the local server at {target.uri}; its password is not sent")
    try:
        if target.certificate is not None:
            return server.open_driver(target.uri, target.auth, certificate=target.certificate, connection_timeout=5,
                                      notifications_min_severity="OFF")
        return require("neo4j", "neo4j", "the Neo4j store").GraphDatabase.driver(
            target.uri, auth=target.auth, connection_timeout=5, notifications_min_severity="OFF")
    except (ValueError, exceptions.ConfigurationError) as exc:
        raise StoreError(f"invalid Neo4j URI {target.uri!r}: {exc}") from None


class Connection:
    """One driver to one Neo4j database, with the error handling every store query shares.

    ``driver`` is thread-safe; each call here opens a session of its own, so several threads may use one
    Connection at once (:class:`graphlink.store.batches.Batches` does). ``database`` is chosen when the Connection
    is made (the setting ``neo4j_database``) and stays.
    """

    def __init__(self, driver: Any, target: Target, database: str) -> None:
        self.driver = driver
        self._target = target
        self.database = database

    # -------------------------------------------------------------- what it connects to
    @property
    def uri(self) -> str:
        """The Bolt address of the server."""
        return self._target.uri

    @property
    def auth(self) -> Any:
        """The credentials the driver sends (``(user, password)`` or None), as resolved when the Store was made."""
        return self._target.auth

    @property
    def certificate(self) -> bytes | None:
        """The PEM certificate every connection pins (None: TLS as the URI says)."""
        return self._target.certificate

    def target(self, uri: str | None = None) -> Target:
        """This connection's target as pinned at its creation (``uri``: another address of the same server)."""
        return dataclasses.replace(self._target, uri=uri or self._target.uri)

    def open_driver(self) -> Any:
        """Another driver to the same target, same pin (the console's, which it may close on its own)."""
        return open_driver(self._target)

    def reconnect(self, uri: str | None = None) -> None:
        """Close the driver and open a new one to ``uri`` (default: the same address) with the same credentials
        and certificate (after the local server reopened its database)."""
        self.driver.close()
        self._target = self.target(uri)
        self.driver = open_driver(self._target)

    def close(self) -> None:
        """Close the driver (its connections)."""
        self.driver.close()

    # -------------------------------------------------------------- queries
    def lost(self, exc: Exception) -> StoreError:
        """The one-line error for a server that went away during a query."""
        return StoreError(f"lost Neo4j at {self.uri} ({one_line(exc)[:160]}); {hint(self.uri)}")

    def query(self, cypher: str, params: dict | None = None, database: str | None = None) -> list:
        """Run ``cypher`` in a managed (write-mode) transaction, retried on transient errors (deadlocks included);
        return its records. StoreError (one line) on a refusal or a lost server."""
        from neo4j import exceptions

        try:
            records, _, _ = self.driver.execute_query(cypher, params or {}, database_=database or self.database)
            return records
        except exceptions.ConstraintError as exc:
            raise StoreError(f"Neo4j refused the write (constraint violation): {one_line(exc)}") from None
        except exceptions.ServiceUnavailable as exc:
            raise self.lost(exc) from None
        except exceptions.Neo4jError as exc:
            raise StoreError(f"Neo4j refused the query: {one_line(exc)}") from None

    def execute(self, cypher: str, params: dict | None = None) -> list:
        """Run ``cypher`` in a managed transaction and return its records, letting the driver's exceptions through
        (for callers that tell a ConstraintError from other failures: the load lock)."""
        records, _, _ = self.driver.execute_query(cypher, params or {}, database_=self.database)
        return records

    def run_auto(self, cypher: str, params: dict | None = None) -> None:
        """Run ``cypher`` as an auto-commit query (needed by ``CALL {...} IN TRANSACTIONS``)."""
        from neo4j import exceptions

        try:
            with self.driver.session(database=self.database) as session:
                session.run(cypher, params or {}).consume()
        except exceptions.Neo4jError as exc:
            raise StoreError(f"Neo4j refused the query: {one_line(exc)}") from None

    def session(self, write: bool = True) -> Any:
        """A driver session on the database, in WRITE or READ access mode (close it, or use it in ``with``)."""
        from neo4j import READ_ACCESS, WRITE_ACCESS

        return self.driver.session(database=self.database,
                                   default_access_mode=WRITE_ACCESS if write else READ_ACCESS)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """An explicit write transaction for the ``with`` block, committed when the block ends without an error
        and rolled back otherwise."""
        with self.session() as session, session.begin_transaction() as tx:
            yield tx
            tx.commit()

    def execute_write(self, work: Callable[[Any], Any]) -> Any:
        """``work(tx)`` as one managed write transaction (retried on transient errors); its return value.
        StoreError (one line) on a refusal or a lost server."""
        from neo4j import exceptions

        try:
            with self.session() as session:
                return session.execute_write(work)
        except exceptions.ServiceUnavailable as exc:
            raise self.lost(exc) from None
        except exceptions.Neo4jError as exc:
            raise StoreError(f"Neo4j refused the query: {one_line(exc)}") from None

    def read_rows(self, cypher: str, params: dict | None = None,
                  plain: Callable[[Any], Any] = lambda v: v) -> tuple[list[str], list[list[Any]]]:
        """Run one fixed read query in a READ session; return its column names and rows (each value through
        ``plain``). StoreError (one line) on a refusal or a lost server."""
        from neo4j import exceptions

        try:
            with self.session(write=False) as session:
                result = session.run(cypher, params or {})
                keys = list(result.keys())
                rows = [[plain(v) for v in r.values()] for r in result]
        except exceptions.ServiceUnavailable as exc:
            raise self.lost(exc) from None
        except exceptions.Neo4jError as exc:
            raise StoreError(f"Neo4j refused the query: {one_line(exc)}") from None
        return keys, rows
