"""docker compose against the session's container engine (``-m container``): docker/docker-compose.yml brings
Neo4j up on the image of the container tests, ``graphlink load`` and ``graphlink cypher`` run against it as a user
runs them (processes, ``NEO4J_URI``), and ``down -v`` removes containers, network and volume.

The compose command: the ``docker compose`` plugin where installed, else ``docker-compose`` (Debian's 1.29), else
``podman-compose``; all three read the same file. Only the ``neo4j`` service comes up: the ``app`` service starts
from ``python:3.11-slim``, an image that only a registry provides.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
import uuid

import pandas as pd
import pytest

from graphlink.analysis.reidit import reidit_c
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.store import server
from tests.containers import COMPOSE_PREFIX, ROOT, TIMINGS, container_missing, wait_for_neo4j

COMPOSE_FILE = ROOT / "docker" / "docker-compose.yml"


def compose_command() -> list[str] | None:
    """The first compose implementation that answers ``version``."""
    candidates = [["docker", "compose"], ["docker-compose"], ["podman-compose"]]
    for cmd in candidates:
        if shutil.which(cmd[0]) and subprocess.run([*cmd, "version"], capture_output=True, timeout=60).returncode == 0:
            return cmd
    return None


def run(cmd: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.mark.slow
def test_compose_up_load_cypher_down(container_engine, neo4j_image, tmp_path) -> None:
    cmd = compose_command()
    if cmd is None:
        container_missing("no docker compose, docker-compose or podman-compose (bash scripts/setup-containers.sh)")
    project = f"{COMPOSE_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:6]}"
    password = secrets.token_urlsafe(18)
    bolt = server.free_port()
    env = {**os.environ, "DOCKER_HOST": container_engine.docker_host, "GRAPHLINK_NEO4J_IMAGE": neo4j_image,
           "NEO4J_PASSWORD": password, "NEO4J_BOLT_PORT": str(bolt), "NEO4J_HTTP_PORT": str(server.free_port())}
    compose = [*cmd, "-f", str(COMPOSE_FILE), "-p", project]
    uri = f"bolt://127.0.0.1:{bolt}"
    client = container_engine.client()
    try:
        t0 = time.monotonic()
        up = run([*compose, "up", "-d", "neo4j"], env)
        assert up.returncode == 0, up.stderr[-2000:]
        wait_for_neo4j(uri, ("neo4j", password), 300, lambda: run([*compose, "logs", "neo4j"], env, 60).stdout)
        TIMINGS["compose"] = f"`{' '.join(cmd)} up -d neo4j` answering in {time.monotonic() - t0:.1f} s"

        (neo4j,) = client.containers.list(filters={"label": f"com.docker.compose.project={project}"})
        assert neo4j.attrs["Config"]["Image"].endswith(neo4j_image.split("/")[-1])
        bindings = neo4j.attrs["HostConfig"]["PortBindings"]
        assert {b["HostIp"] for port in ("7474/tcp", "7687/tcp") for b in bindings[port]} == {"127.0.0.1"}
        # the file's health check passes on this image once Neo4j answers (run here: podman without systemd has
        # no timer that would run it)
        test = neo4j.attrs["Config"]["Healthcheck"]["Test"]
        check = ["sh", "-c", test[1]] if test[0] == "CMD-SHELL" else test[1:]
        code, out = neo4j.exec_run(check)
        assert code == 0, out

        user = {**env, "NEO4J_URI": uri}
        csv = ROOT / "graphlink" / "data" / "thesis_fig3_4.csv"
        load = run([sys.executable, "-m", "graphlink.cli", "load", str(csv), "--name", "fig34"], user)
        assert load.returncode == 0, load.stderr
        assert "release 'fig34' loaded" in load.stdout and "22 disclosures" in load.stdout, load.stdout
        again = run([sys.executable, "-m", "graphlink.cli", "load", str(csv), "--name", "fig34"], user)
        assert again.returncode == 0 and "already loaded" in again.stdout, again.stdout
        pairs = tmp_path / "pairs.csv"
        cypher = run([sys.executable, "-m", "graphlink.cli", "cypher", "reidit_c", "--param", "release=fig34",
                      "--csv", str(pairs)], user)
        assert cypher.returncode == 0, cypher.stderr
        got = pd.read_csv(pairs, dtype=str)
        want = reidit_c(build_trails(read_release(csv))).pairs
        assert set(zip(got["identified"], got["deidentified"], strict=True)) == \
            set(zip(want["identified"], want["deidentified"], strict=True)) != set()
    finally:
        down = run([*compose, "down", "-v"], env)
        left = client.containers.list(all=True, filters={"label": f"com.docker.compose.project={project}"})
        volumes = client.volumes.list(filters={"label": f"com.docker.compose.project={project}"})
        client.close()
    assert down.returncode == 0, down.stderr[-2000:]
    assert not left and not volumes
