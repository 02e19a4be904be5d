"""Parameterised write queries in batches on a few concurrent sessions: the UNWIND side of the write-back
(:mod:`graphlink.store.writeback`, :mod:`graphlink.store.classgraph`).

``GRAPHLINK_NEO4J_WRITERS`` sets the number of concurrent sessions (default 3: on two cores the server's
transactions, not the client, are the limit; 1 → 2 → 3 sessions wrote 9.8 → 12.6 → 13.5 thousand class LINKs a
second at load 8). Each batch is one managed transaction (``Connection.query`` of
:mod:`graphlink.store.connection`: retried on transient errors, deadlocks included) on a session of its own; the
driver is thread-safe, sessions are not. :meth:`Batches.run` hands any batch to any free session;
:meth:`Batches.run_lanes` runs lanes of batches side by side, each lane in order, for writes whose caller made the
lanes touch disjoint nodes.
"""

from __future__ import annotations

import queue
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graphlink.config import get_config
from graphlink.errors import StoreError

if TYPE_CHECKING:
    from graphlink.store.connection import Connection

Progress = Callable[[float, str], None] | None


def writers() -> int:
    """Concurrent sessions of a write-back: the setting ``neo4j_writers`` (``GRAPHLINK_NEO4J_WRITERS``, default 3;
    validated by :mod:`graphlink.config`)."""
    return get_config().neo4j_writers


class Batches:
    """Runs parameterised write queries, one managed transaction per batch, on :func:`writers` sessions at once.

    ``conn`` is the store's connection (``store.conn``). The driver is thread-safe and ``Connection.query`` opens
    a session per call, so each batch runs on its own session; at most two batches per session wait in memory.
    ``progress(fraction, message)`` is called from the calling thread after each batch, against ``total`` rows
    over every :meth:`run` of this object.
    """

    def __init__(self, conn: Connection, progress: Progress = None, *, total: int = 0, what: str = "rows",
                 workers: int | None = None) -> None:
        self.conn = conn
        self.progress = progress
        self.total = max(int(total), 1)
        self.what = what
        self.workers = workers or writers()
        self.done = 0

    def run(self, query: str, batches: Iterable[dict], rows: str | None = None) -> int:
        """Run ``query`` once per parameter dict of ``batches``; return the sum of the ``n`` each returns.

        ``rows``: the parameter whose list length is the batch's row count; the batch must then return exactly
        that ``n`` (StoreError otherwise: a key or class was missing). O(batches) transactions.
        """
        def one(params: dict) -> tuple[int, int | None]:
            recs = self.conn.query(query, params)
            n = int(recs[0]["n"]) if recs else 0
            want = len(params[rows]) if rows else None
            return n, want

        total = 0
        pending: deque[Future] = deque()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="graphlink-write") as pool:
            try:
                for params in batches:
                    pending.append(pool.submit(one, params))
                    while len(pending) >= 2 * self.workers:
                        total += self._settle(pending)
                while pending:
                    total += self._settle(pending)
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
        return total

    def run_lanes(self, query: str, lanes: Sequence[Iterable[dict]], rows: str | None = None) -> int:
        """Run ``query`` over several *lanes* at once: each lane's batches one after the other on a session of its
        own, the lanes side by side. Returns the sum of the ``n`` of every batch (checked against ``rows`` as in
        :meth:`run`).

        For writes whose batches would otherwise lock the same nodes: the caller puts batches that touch
        overlapping nodes into one lane and makes the lanes disjoint (:func:`graphlink.store.classgraph.rounds`),
        so that concurrent transactions never wait for each other's locks nor deadlock, where :meth:`run` hands
        any batch to any free session. O(batches) transactions on ``len(lanes)`` sessions.
        """
        done: queue.Queue = queue.Queue()

        def lane(batches: Iterable[dict]) -> None:
            for params in batches:
                recs = self.conn.query(query, params)
                done.put((int(recs[0]["n"]) if recs else 0, len(params[rows]) if rows else None))

        total = 0
        with ThreadPoolExecutor(max(len(lanes), 1), thread_name_prefix="graphlink-lane") as pool:
            futures = [pool.submit(lane, b) for b in lanes]
            try:
                while True:
                    try:
                        n, want = done.get(timeout=0.2)
                    except queue.Empty:
                        if all(f.done() for f in futures) and done.empty():
                            break
                        continue
                    total += self._count(n, want)
                for f in futures:
                    f.result()                # a StoreError of a batch surfaces here
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return total

    def _count(self, n: int, want: int | None) -> int:
        """Check one finished batch, count it, report progress. Returns its ``n``."""
        if want is not None and n != want:
            raise StoreError(f"a write-back batch created {n:,} of its {want:,} rows: the graph lacks nodes "
                             "it refers to (was the release changed while it was written?)")
        self.done += want if want is not None else n
        if self.progress:
            self.progress(min(self.done / self.total, 1.0), f"{self.done:,}/{self.total:,} {self.what} written")
        return n

    def _settle(self, pending: deque[Future]) -> int:
        """Wait for a batch to finish; check it, count it, report progress. Returns its ``n``."""
        done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
        got = 0
        for f in list(pending):
            if f not in done:
                continue
            pending.remove(f)
            n, want = f.result()              # a StoreError of the batch surfaces here
            got += self._count(n, want)
        return got


def run_id(kind: str) -> str:
    """A new run id: ``kind-YYYYmmddtHHMMSS-xxxxxxxx`` (UTC; the ``t`` is lower case).

    Lower case throughout because Neo4j stores a string of lower-case letters, digits and ``-`` of up to about 36
    characters inline in the property record (its short-string classes), while one upper-case letter among the
    punctuation sends every copy to the dynamic string store: 3.8e6 class LINKs each carrying the run cost a
    0.5 GB string store and a third of a bulk import's relationship phase.
    """
    return f"{kind}-{datetime.now(UTC).strftime('%Y%m%dt%H%M%S')}-{uuid.uuid4().hex[:8]}"
