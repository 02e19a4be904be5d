"""A Spark standalone cluster for the tests: one master and two workers, each its own JVM, started from the ``pyspark``
distribution (``bin/spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``) on loopback only.

The master's REST submission server is off, its web UI and the workers' bound to 127.0.0.1 (``SPARK_LOCAL_IP``), and
every log and work folder is in a temporary folder. Stopped (SIGTERM, then SIGKILL) when the fixture ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from graphlink.store.server import free_port
from tests.processes import stop


@dataclass(frozen=True)
class Cluster:
    """A running standalone cluster: its master URL and the environment a client process needs."""

    url: str
    env: dict[str, str]
    logs: Path
    pids: tuple[int, ...]

    def log_tail(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-1500:] for p in sorted(self.logs.glob("*.log")))


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _wait_for(check, what: str, procs: list[subprocess.Popen], logs: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            tail = "\n".join(p.read_text(errors="replace")[-1500:] for p in sorted(logs.glob("*.log")))
            raise RuntimeError(f"the Spark cluster did not come up ({what}): {tail}")
        time.sleep(0.5)


def start_cluster(base: Path, workers: int = 2, timeout: float = 180.0) -> Iterator[Cluster]:
    """Start the cluster under ``base`` (a generator: yields once it is up, stops it when resumed)."""
    home = _spark_home()
    logs = base / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    port, ui = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(logs),
               SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
               PYSPARK_PYTHON=sys.executable)          # executors run this interpreter, with this graphlink
    spark_class = str(home / "bin" / "spark-class")
    procs: list[subprocess.Popen] = []
    try:
        with open(logs / "master.log", "wb") as out:
            procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host",
                                           "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
                                          env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        _wait_for(lambda: "ALIVE" in (logs / "master.log").read_text(errors="replace"), "master", procs, logs,
                  timeout)
        url = f"spark://127.0.0.1:{port}"
        for i in range(workers):
            work = base / f"worker{i}"
            work.mkdir()
            with open(logs / f"worker{i}.log", "wb") as out:
                procs.append(subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--webui-port",
                     str(free_port()), "--cores", "1", "--memory", "2g", "--work-dir", str(work), url],
                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        _wait_for(lambda: (logs / "master.log").read_text(errors="replace").count("Registering worker") >= workers,
                  "workers", procs, logs, timeout)
        client = dict(env)
        client.pop("SPARK_LOG_DIR", None)
        yield Cluster(url, client, logs, tuple(p.pid for p in procs))
    finally:
        for proc in reversed(procs):
            stop(proc, timeout=30)
