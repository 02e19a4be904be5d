"""Benchmark: what reading console queries with Neo4j's own parser costs (graphlink.store.guard, docs/security.md).

Usage::

    python benchmarks/bench_cypher_guard.py              # about ten seconds on an idle machine
    python benchmarks/bench_cypher_guard.py --repeat 20

Prints sizes and wall times for
  1. the first check of a process: starting the parser's JVM (docker/local/CypherCheck.java on the local Neo4j
     runtime's class path) and its first, cold parse; then the same query again, warm;
  2. graphlink.store.guard.check over every statement of cypher/*.cypher (milliseconds per statement, warm);
  3. one query each near the console's limits: the syntax tree's depth (an OR of predicates), its size (a long
     list) and the character limit (a string of \\uXXXX escapes).

Needs the local runtime (``bash scripts/setup-neo4j.sh``), no server.
"""

from __future__ import annotations

import argparse
import time

from graphlink.store import guard
from graphlink.store.cypherlib import library


def _per_call(fn, repeat: int) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per timing (default 5)")
    args = ap.parse_args()

    guard.WORKER.close()
    t0 = time.perf_counter()
    guard.check("MATCH (n) RETURN count(n) AS nodes")
    first = time.perf_counter() - t0
    again = _per_call(lambda: guard.check("MATCH (n) RETURN count(n) AS nodes"), args.repeat * 20)
    print(f"first check of a process (JVM start + cold parse): {first * 1e3:.0f} ms; "
          f"the same query warm: {again * 1e3:.2f} ms")

    statements = [st.text for cf in library() for st in cf.statements]
    chars = sum(map(len, statements))
    per = _per_call(lambda: [guard.check(s, write=True) for s in statements], args.repeat)
    print(f"the Cypher library: {len(statements)} statements, {chars:,} chars: "
          f"{per / len(statements) * 1e3:.2f} ms per statement")

    limits = guard.LIMITS
    predicates = limits.depth - 10
    deep = "MATCH (n:Release) WHERE " + " OR ".join(f"n.name = 'r{i}'" for i in range(predicates)) + \
        " RETURN n.name AS name"
    wide = "RETURN [" + ",".join("1" * (limits.nodes - 100)) + "] AS xs"
    escaped = "RETURN '" + "\\u0041" * ((limits.chars - 20) // 6) + "' AS a"
    for label, query in ((f"{predicates} predicates joined by OR (near the depth limit)", deep),
                         (f"a list of {limits.nodes - 100:,} numbers (near the size limit)", wide),
                         ("\\u escapes up to the character limit", escaped)):
        facts = guard.read(query)
        per = _per_call(lambda q=query: guard.check(q), args.repeat)
        print(f"{label}: {len(query):,} chars, {facts.nodes:,} tree nodes, depth {facts.depth}: "
              f"{per * 1e3:.1f} ms")
    guard.WORKER.close()


if __name__ == "__main__":
    main()
