"""How graphlink starts Spark (graphlink/engines/spark/runtime.py): a session sized to its input, and nothing on stderr
that a user cannot act on. The last test starts the CLI's own JVM in a process of its own."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphlink.config import get_config
from graphlink.engines.spark import runtime

DATA = Path(__file__).resolve().parents[2] / "graphlink" / "data"


def test_input_bytes_of_files_folders_and_uris(tmp_path):
    (tmp_path / "a.csv").write_text("x" * 10)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "p1.parquet").write_bytes(b"y" * 7)
    (tmp_path / "parts" / "sub").mkdir()
    (tmp_path / "parts" / "sub" / "p2.parquet").write_bytes(b"z" * 5)
    assert runtime.input_bytes(tmp_path / "a.csv") == 10
    assert runtime.input_bytes(str(tmp_path / "parts")) == 12
    assert runtime.input_bytes("hdfs:///data/release.parquet") is None
    assert runtime.input_bytes(tmp_path / "missing.csv") is None
    assert runtime.input_bytes(None) is None


def test_partitions_follow_the_input(monkeypatch):
    monkeypatch.delenv("GRAPHLINK_SPARK_PARTITIONS", raising=False)
    assert runtime.partitions(2, 1_000) == 1
    assert runtime.partitions(2, get_config().spark_small_bytes + 1) == 8
    assert runtime.partitions(4, None) == 16           # size unknown (a URI): sized for a large input
    monkeypatch.setenv("GRAPHLINK_SPARK_PARTITIONS", "3")
    assert runtime.partitions(2, 1_000) == 3


def test_forward_drops_only_the_launcher_notice(monkeypatch):
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(out))
    runtime._forward(io.BytesIO(b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                                b"spark: ERROR Executor: task failed\nWARNING: something else\n"))
    assert out.getvalue() == b"spark: ERROR Executor: task failed\nWARNING: something else\n"


@pytest.mark.slow
@pytest.mark.spark
def test_the_cli_on_spark_says_nothing_a_user_cannot_act_on():
    """The 22-row audit with --engine spark, as a user runs it: the verdict on stdout, and on stderr only
    graphlink's own model note (no JVM notice, no log-level banner, no Ivy output: no connector is resolved)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("GRAPHLINK_SPARK_REQUIRED") == "1":
            pytest.fail("GRAPHLINK_SPARK_REQUIRED=1 but pyspark is not installed", pytrace=False)
        pytest.skip("pyspark is not installed")
    env = {k: v for k, v in os.environ.items() if k != "GRAPHLINK_SPARK_PARTITIONS"}
    proc = subprocess.run([sys.executable, "-m", "graphlink.cli", "audit", str(DATA / "thesis_fig3_4.csv"),
                           "--k", "2", "--engine", "spark"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "NOT k-unlinkable" in proc.stdout and "Certain re-identifications (true loves): 4" in proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Model: each de-identified record belongs to one identified "
                                                   "person (one-to-one)"), proc.stderr


@pytest.mark.spark
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc")
def test_a_local_session_listens_on_loopback_only(spark) -> None:
    """The driver's RPC endpoint and block manager of a local session listen on 127.0.0.1, not on the machine's
    network address (nothing outside the machine has anything to say to a local[*] session)."""
    from tests.engines.test_spark_cluster import LOOPBACK, _listening_addresses

    addresses = _listening_addresses(spark.sparkContext._gateway.proc.pid)
    assert addresses and addresses <= LOOPBACK, addresses
