#!/usr/bin/env bash
# Every figure of the README's performance tables, re-measured in one run (the load average before and after each
# benchmark is logged beside it).  Run on an otherwise idle machine, from the repository root, with the project's
# virtual environment active and the local Neo4j runtime set up (`bash scripts/setup-neo4j.sh`):
#
#     bash benchmarks/table.sh 2>&1 | tee table.log
#
# About 45 minutes on two cores.  Each benchmark prints its own sizes, times, peak memory and its naive method or
# peer; this script only runs them in order.
set -u
run() {
  echo "=== $* ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
  local t0=$SECONDS
  "$@"
  echo "=== done in $((SECONDS - t0)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
}
run python benchmarks/bench_core.py --only reidit_c,links,links_masks,matching,reidit_i,low_entropy,twins
run python benchmarks/bench_core.py --only scaling    # a process of its own: it forks, which OpenMP forbids after use
run python benchmarks/bench_e2e.py --repeat 5
run python benchmarks/bench_neo4j_load.py
run python benchmarks/bench_neo4j_load.py --results
run env GRAPHLINK_BULK_IMPORTER=jvm python benchmarks/bench_neo4j_load.py --bulk-only
run python benchmarks/bench_spark.py --startup 3 --subjects ""
run python benchmarks/bench_app.py --first-load 2
run python benchmarks/bench_unlink.py
run python benchmarks/bench_secure.py
run python benchmarks/bench_onetomany.py --populations 20 --lowentropy 3
