"""Benchmark: what the hardening costs. The console's static check, atomic file output, the console's
server-side locks and the pinned TLS of Bolt.

Usage::

    python benchmarks/bench_security.py                  # static check + atomic writes
    python benchmarks/bench_security.py --console        # + a query through the console vs the bare driver,
                                                         #   and a new TLS connection vs a plain one
                                                         #   (needs Neo4j: NEO4J_URI or `graphlink neo4j start`)

Prints sizes, wall times and peak memory (each case in a forked child, benchmarks/_measure.py) for
  1. graphlink.store.guard.check (Neo4j's parser in the console's Java worker; its start is timed by
     bench_cypher_guard.py) over every statement of cypher/*.cypher, over a query at the console's depth limit
     and over one at its character limit made of \\uXXXX escapes,
  2. writing a simulated release of ~1e6 rows as CSV: pandas ``to_csv`` straight to the name (the naive way)
     vs graphlink.fileio.write_frame (temporary file, fsync, rename),
  3. (--console) a small read query: ``Store.run_cypher`` (parser check, EXPLAIN plan check, READ session
     with a time limit, the give-up thread) vs one ``session.run`` on the bare driver; and opening a connection
     (driver, TLS handshake with the pinned certificate, authentication) vs a plain-text one where the server
     allows it (the project's server does while HTTP serves Neo4j Browser).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure  # noqa: E402

from graphlink import fileio  # noqa: E402
from graphlink.store.cypherlib import library  # noqa: E402
from graphlink.store.guard import LIMITS, check  # noqa: E402


def _per_call(fn, repeat: int) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def bench_guard(repeat: int) -> None:
    statements = [st.text for cf in library() for st in cf.statements]
    chars = sum(map(len, statements))

    def library_pass() -> str:
        per = _per_call(lambda: [check(s, write=True) for s in statements], repeat)
        return f"{len(statements)} statements, {chars:,} chars: {per / len(statements) * 1e6:.0f} µs per statement"

    measure("static check: the Cypher library", library_pass)
    predicates = LIMITS.depth - 10  # n.name = 'r1' OR ...: one level of the syntax tree each
    at_limit = "MATCH (n:Release) WHERE " + " OR ".join(f"n.name = 'r{i}' /* c{i} */" for i in range(predicates)) + \
        " RETURN n.name AS name"
    escaped = "RETURN '" + "\\u0041" * ((LIMITS.chars - 20) // 6) + "' AS a"

    for label, query in ((f"{predicates} predicates (the depth limit)", at_limit),
                         ("\\u escapes up to the character limit", escaped)):
        def large(q: str = query) -> str:
            return f"{len(q):,} chars: {_per_call(lambda: check(q), 3) * 1e3:.1f} ms"

        measure(f"static check: one query of {label}", large)


def bench_writes(subjects: int) -> None:
    from graphlink.simulation.simulate import simulate_uniform

    frame = simulate_uniform(subjects, 20, 0.5, withhold=0.1, seed=7).frame
    folder = Path(tempfile.mkdtemp(prefix="bench-security-"))
    print(f"  release: {len(frame):,} rows", flush=True)

    def naive() -> str:
        frame.to_csv(folder / "naive.csv", index=False)
        return f"{(folder / 'naive.csv').stat().st_size / 2**20:.0f} MiB"

    def atomic() -> str:
        fileio.write_frame(frame, folder / "atomic.csv")
        return f"{(folder / 'atomic.csv').stat().st_size / 2**20:.0f} MiB"

    measure("write CSV: DataFrame.to_csv straight to the name (naive)", naive)
    measure("write CSV: fileio.write_frame (temp + fsync + rename)", atomic)
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def bench_console(repeat: int) -> None:
    from neo4j import GraphDatabase

    from graphlink.store import server
    from graphlink.store.neo4j import DATABASE, connect

    query = "MATCH (r:Release) RETURN count(r) AS releases"
    with connect() as store:
        store.run_cypher(query)  # warm the plan cache

        def locked() -> str:
            return f"{_per_call(lambda: store.run_cypher(query), repeat) * 1e3:.2f} ms per query"

        def bare() -> str:
            def once() -> None:
                with store.driver.session(database=DATABASE) as s:
                    list(s.run(query))
            return f"{_per_call(once, repeat) * 1e3:.2f} ms per query"

        def bare_plain() -> str:
            try:
                with GraphDatabase.driver(store.uri, auth=store.conn.auth, notifications_min_severity="OFF") as drv:
                    def once() -> None:
                        with drv.session(database=DATABASE) as s:
                            list(s.run(query))
                    return f"{_per_call(once, repeat) * 1e3:.2f} ms per query"
            except Exception:  # the server requires TLS (no Neo4j Browser)
                return "refused: this server requires TLS"

        measure(f"console query through its locks ({repeat} runs)", locked)
        measure(f"the same query on the bare driver, pinned TLS ({repeat} runs)", bare)
        measure(f"the same query on a bare plain-text driver ({repeat} runs)", bare_plain)

        connections = max(5, repeat // 10)

        def pinned() -> str:
            def once() -> None:
                with server.open_driver(store.uri, store.conn.auth) as drv:
                    drv.verify_connectivity()
            return f"{_per_call(once, connections) * 1e3:.1f} ms per new connection"

        def plain() -> str:
            def once() -> None:
                with GraphDatabase.driver(store.uri, auth=store.conn.auth) as drv:
                    drv.verify_connectivity()
            try:
                return f"{_per_call(once, connections) * 1e3:.1f} ms per new connection"
            except Exception:  # the server requires TLS (no Neo4j Browser)
                return "refused: this server requires TLS"

        measure(f"new connection, TLS with the pinned certificate ({connections} runs)", pinned)
        measure(f"new connection, plain text ({connections} runs)", plain)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subjects", type=int, default=53_000, help="simulated subjects for the write benchmark")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--console", action="store_true", help="also time the console against a live Neo4j")
    args = ap.parse_args()
    bench_guard(args.repeat)
    bench_writes(args.subjects)
    if args.console:
        bench_console(args.repeat)


if __name__ == "__main__":
    main()
