"""The Spark engine on a real standalone cluster (a master and two workers, each its own JVM, on loopback; see
``tests/spark_cluster.py``): what breaks only off the driver's JVM (files the workers must see, Python and graphlink on
the executors, closures and broadcasts) shows up here. The CLI runs as a process against ``spark://127.0.0.1:PORT``
and must give exactly the local engine's pairs and audit. Required in CI (``GRAPHLINK_SPARK_REQUIRED=1``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphlink.simulation.simulate import simulate_uniform
from tests.cli_runner import run_cli

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("GRAPHLINK_SPARK_REQUIRED") == "1":
            pytest.fail("GRAPHLINK_SPARK_REQUIRED=1 but pyspark is not installed", pytrace=False)
        pytest.skip("pyspark is not installed (pip install '.[spark]')")
    from tests.spark_cluster import start_cluster

    runner = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    yield next(runner)
    runner.close()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cluster-release") / "release.csv"
    simulate_uniform(600, 12, 0.4, withhold=0.1, seed=5).frame.to_csv(path, index=False)
    return path


def _graphlink(cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graphlink.cli", *args], env=cluster.env, capture_output=True,
                          text=True, timeout=900)


def _pairs(text: str) -> set[tuple[str, ...]]:
    return {tuple(line.split(",")) for line in text.strip().splitlines()[1:]}


@pytest.mark.parametrize("method", ["true-loves", "incomplete"])
def test_cluster_pairs_equal_the_local_engine(cluster, release: Path, method: str) -> None:
    local = run_cli("reidentify", release, "--method", method, "--format", "csv")
    assert local.returncode == 0, local.stderr
    remote = _graphlink(cluster, "reidentify", str(release), "--method", method, "--format", "csv", "--engine",
                        "spark", "--spark-master", cluster.url)
    assert remote.returncode == 0, remote.stderr[-3000:] + cluster.log_tail()
    assert _pairs(remote.stdout) == _pairs(local.stdout) and _pairs(local.stdout)


def test_cluster_audit_equals_the_local_engine(cluster, release: Path) -> None:
    local = run_cli("audit", release, "--k", "2", "--format", "json")
    remote = _graphlink(cluster, "audit", str(release), "--k", "2", "--format", "json", "--engine", "spark",
                        "--spark-master", cluster.url)
    assert remote.returncode == 0, remote.stderr[-3000:] + cluster.log_tail()
    mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
    for key in ("k_unlinkable", "true_loves", "maximum_matching_size", "counts"):
        assert theirs[key] == mine[key], key


def _listening_addresses(pid: int) -> set[str]:
    """The local addresses of the TCP sockets process ``pid`` listens on (its socket inodes matched against
    /proc/net/tcp and tcp6), in /proc's hex form."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:          # LISTEN, one of the process's sockets
                found.add(fields[1].rsplit(":", 1)[0])
    return found


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc")
def test_the_cluster_listens_on_loopback_only(cluster) -> None:
    """Every socket the master and the workers listen on (RPC, web UIs) is on loopback; no REST submission server."""
    for pid in cluster.pids:
        addresses = _listening_addresses(pid)
        assert addresses, f"process {pid} listens on nothing"
        assert addresses <= LOOPBACK, (pid, addresses)
    assert "StandaloneRestServer" not in (cluster.logs / "master.log").read_text(errors="replace")
