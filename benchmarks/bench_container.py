"""Benchmark: Neo4j in a container (the test path of tests/container) against the project's own launcher.

Usage (needs a container engine and the local runtime: ``bash scripts/setup-containers.sh``)::

    python benchmarks/bench_container.py                  # 2 starts each, a ~50,000-row release
    python benchmarks/bench_container.py --repeat 3 --subjects 20000

In one run, on the same machine and release:

  1. ``scripts/build-image.sh`` when the image is up to date (what every test session and CI run pays);
  2. the Docker API: podman's service on a socket of its own (or the Docker daemon that answers);
  3. start to answering a query, alternately: Neo4j in a container (testcontainers' Neo4j module, as the container
     tests start it) and the peer, a throw-away server from the project's launcher (``EphemeralServer``, as the other
     tests start it; it compiles with C1 only, which starts faster);
  4. on one server of each kind: ``load_release`` by UNWIND of the same simulated release, twice (the server's JIT
     cold, then warm; the container is reached through a port published on 127.0.0.1), then the Cypher library's
     REIDIT-C on it;
  5. stop: removing the container (and its volume) against stopping the launcher.

Prints the load average beside the figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphlink.simulation.simulate import simulate_uniform  # noqa: E402
from graphlink.store import server  # noqa: E402
from graphlink.store.neo4j import connect  # noqa: E402
from tests import containers  # noqa: E402


def load_avg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def row(label: str, seconds: float, extra: str = "") -> None:
    print(f"  {label:<62} {seconds:8.2f} s  {extra}", flush=True)


def workload(uri: str, auth, rel, label: str) -> None:
    """Load the release twice under two names (cold, then with the server's JIT warm), REIDIT-C on the second."""
    with connect(uri, auth) as store:
        store.apply_schema()
        for name, when in (("bench-container-1", "cold"), ("bench-container-2", "warm")):
            t = time.perf_counter()
            info = store.load_release(rel, name=name, bulk="never")
            dt = time.perf_counter() - t
            row(f"{label}: load_release by UNWIND, {when} ({info.rows:,} rows)", dt,
                f"{info.rows / dt:,.0f} rows/s")
        t = time.perf_counter()
        pairs = store.run_file("reidit_c", {"release": name})
        row(f"{label}: cypher reidit_c ({len(pairs):,} pairs)", time.perf_counter() - t)
        for name in ("bench-container-1", "bench-container-2"):
            store.drop_release(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2, help="starts of each kind (default 2)")
    ap.add_argument("--subjects", type=int, default=5000, help="simulated subjects (x 20 locations, p=0.5)")
    args = ap.parse_args()
    print(f"load average at start: {load_avg()}  ({os.cpu_count()} cores)")

    t = time.perf_counter()
    res = subprocess.run(["bash", "scripts/build-image.sh"], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"scripts/build-image.sh failed: {res.stderr.strip()[-500:]}")
    row("1. scripts/build-image.sh (image up to date)", time.perf_counter() - t)

    with tempfile.TemporaryDirectory(prefix="bench-container-") as tmp:
        t = time.perf_counter()
        engine = containers.start_engine(Path(tmp))
        row(f"2. Docker API up ({engine.kind})", time.perf_counter() - t)
        os.environ["DOCKER_HOST"] = engine.docker_host
        try:
            image = containers.choose_image(engine)
            rel = simulate_uniform(args.subjects, 20, 0.5, withhold=0.1, reserved="none", seed=7)
            for i in range(args.repeat):
                t = time.perf_counter()
                with containers.neo4j_container(engine, image) as (uri, auth, _):
                    row(f"3. container ({image}) start to answering, #{i + 1}", time.perf_counter() - t)
                    if i == 0:
                        workload(uri, auth, rel, "4. container")
                    t = time.perf_counter()
                row(f"5. container stopped and removed, #{i + 1}", time.perf_counter() - t)
                home = Path(tmp) / f"local-{i}"
                t = time.perf_counter()
                srv = server.EphemeralServer(home)
                row(f"3. local launcher start to answering, #{i + 1}", time.perf_counter() - t)
                try:
                    if i == 0:
                        workload(srv.uri, srv.auth, rel, "4. local launcher")
                finally:
                    t = time.perf_counter()
                    srv.stop()
                    row(f"5. local launcher stopped, #{i + 1}", time.perf_counter() - t)
        finally:
            with contextlib.suppress(Exception):
                engine.stop()
    print(f"load average at end: {load_avg()}")


if __name__ == "__main__":
    main()
