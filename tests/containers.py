"""Neo4j in a container for the tests (docs/neo4j.md, "Containers").

* **The engine**: a Docker API. ``DOCKER_HOST`` when it answers, else a Docker daemon on its default socket, else
  podman's Docker-compatible service, started by the test session on a socket of its own (``podman system service``
  with the configuration of ``scripts/container-env.sh``: runc, ulimits this machine allows) and stopped with it; the
  service also exits when the test process dies (parent-death signal), so nothing is left serving.
* **The image**: ``GRAPHLINK_TEST_NEO4J_IMAGE`` if set; else the official ``neo4j:5.26-community`` when the engine has
  it or its registry answers within 3 s; else the project's ``localhost/graphlink/neo4j:5.26``, brought up to date
  by ``scripts/build-image.sh`` (idempotent; the first build on a machine without a registry makes a Debian base with
  debootstrap, about 2.5 min).
* **The container**: testcontainers' Neo4j module (which sets ``NEO4J_AUTH``), its Bolt port published on 127.0.0.1
  only, with the settings of the project's throw-away test server (:data:`SETTINGS`: no ``LOAD CSV`` file URLs, no
  plugin procedure, HTTP off, its memory and JIT) in the environment, so the same settings hold on either image.
  Ready when a query on the default database answers. testcontainers' reaper container (Ryuk) is an image that
  cannot be pulled without a registry: it is switched off, and the session removes its containers itself;
  containers left by a test process that was killed are removed by the next session.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL_IMAGE = "neo4j:5.26-community"
PROJECT_IMAGE = "localhost/graphlink/neo4j:5.26"
DOCKER_SOCKET = "unix:///var/run/docker.sock"
#: label on every container a test session starts: the pid of that session (stale ones are removed by the next)
OWNER_LABEL = "org.graphlink.test-pid"
#: prefix of the compose projects the tests create: ``graphlink-test-<pid>-<random>``
COMPOSE_PREFIX = "graphlink-test-"
#: the settings of the project's throw-away test server (graphlink/store/server.py: ``EphemeralServer``) as NEO4J_*
#: variables, which both images read: its hardening (docs/security.md), HTTP off, its memory, and its quick-start JIT
#: (C1 only: the server answers sooner, and test sessions are short)
SETTINGS = {
    "NEO4J_dbms_security_allow__csv__import__from__file__urls": "false",
    "NEO4J_dbms_security_procedures_allowlist": "",
    "NEO4J_dbms_usage__report_enabled": "false",
    "NEO4J_server_http_enabled": "false",
    "NEO4J_server_memory_pagecache_size": "128m",
    "NEO4J_server_memory_heap_initial__size": "256m",
    "NEO4J_server_memory_heap_max__size": "1G",
    "NEO4J_server_jvm_additional": "-XX:TieredStopAtLevel=1",
}


def container_missing(msg: str) -> None:
    """Skip the container test, or fail it under ``GRAPHLINK_CONTAINER_REQUIRED=1`` (CI)."""
    import pytest

    if os.environ.get("GRAPHLINK_CONTAINER_REQUIRED") == "1":
        pytest.fail(f"GRAPHLINK_CONTAINER_REQUIRED=1 but {msg}", pytrace=False)
    pytest.skip(msg)


#: what the session's container set-up took, for the closing summary (tests/container/conftest.py)
TIMINGS: dict[str, str] = {}


class EngineUnavailable(RuntimeError):
    """No Docker API can be had here (the reason is the message)."""


@dataclass
class Engine:
    """A Docker API endpoint: ``docker_host`` (a ``DOCKER_HOST`` value), the engine behind it (``docker`` or
    ``podman``) and, when this session started it, podman's service process."""

    docker_host: str
    kind: str
    service: subprocess.Popen | None = None

    def client(self):
        import docker

        return docker.DockerClient(base_url=self.docker_host, timeout=300)

    def stop(self) -> None:
        if self.service is not None and self.service.poll() is None:
            self.service.terminate()
            try:
                self.service.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.service.kill()
                self.service.wait()


def _ping(base_url: str) -> str | None:
    """The engine behind the Docker API at ``base_url`` (``docker`` / ``podman``), or None when nothing answers
    within 5 s."""
    import docker

    try:
        with contextlib.closing(docker.DockerClient(base_url=base_url, timeout=5)) as client:
            components = client.version().get("Components") or []
    except Exception:
        return None
    return "podman" if any("podman" in str(c.get("Name", "")).lower() for c in components) else "docker"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """PR_SET_PDEATHSIG: the kernel sends SIGTERM to the child when the test process exits, however it exits."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def start_engine(workdir: Path, timeout: float = 60.0) -> Engine:
    """A Docker API for this session (see the module docstring); EngineUnavailable with the reason otherwise."""
    t0 = time.monotonic()
    engine = _start_engine(workdir, timeout)
    TIMINGS["engine"] = f"{engine.kind} at {engine.docker_host} ({time.monotonic() - t0:.1f} s)"
    return engine


def _start_engine(workdir: Path, timeout: float) -> Engine:
    if os.environ.get("DOCKER_HOST"):
        kind = _ping(os.environ["DOCKER_HOST"])
        if not kind:
            raise EngineUnavailable(f"DOCKER_HOST={os.environ['DOCKER_HOST']} does not answer")
        return Engine(os.environ["DOCKER_HOST"], kind)
    if _ping(DOCKER_SOCKET) == "docker":
        return Engine(DOCKER_SOCKET, "docker")
    if not _on_path("podman"):
        raise EngineUnavailable("no container engine: no Docker daemon answers and podman is not installed "
                                "(bash scripts/setup-containers.sh installs podman on Debian)")
    sock = workdir / "podman.sock"
    log = workdir / "podman-service.log"
    script = 'source scripts/container-env.sh && podman_setup && exec podman system service --time=0 "unix://$1"'
    with log.open("wb") as out:
        proc = subprocess.Popen(["bash", "-c", script, "podman-service", str(sock)], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    engine = Engine(f"unix://{sock}", "podman", proc)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if sock.exists() and _ping(engine.docker_host):
            return engine
        time.sleep(0.2)
    engine.stop()
    tail = log.read_text(errors="replace").strip().splitlines()[-3:]
    raise EngineUnavailable(f"podman's Docker API did not come up on {sock}: {' | '.join(tail) or 'no output'}")


@contextlib.contextmanager
def engine_session(workdir: Path) -> Iterator[Engine]:
    """:func:`start_engine`, with what killed test processes left removed first (:func:`remove_stale`), the API
    as ``DOCKER_HOST`` for subprocesses (docker compose) and testcontainers' reaper off while it lasts; podman's
    service, if started here, stops at the end."""
    engine = start_engine(workdir)
    saved = {k: os.environ.get(k) for k in ("DOCKER_HOST", "TESTCONTAINERS_RYUK_DISABLED")}
    try:
        with contextlib.closing(engine.client()) as client:
            remove_stale(client)
        os.environ.update(DOCKER_HOST=engine.docker_host, TESTCONTAINERS_RYUK_DISABLED="true")
        yield engine
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        engine.stop()


def engine_installed() -> bool:
    """Whether a container engine is here at all (``DOCKER_HOST``, Docker's socket, or podman on PATH)."""
    return bool(os.environ.get("DOCKER_HOST")) or Path(DOCKER_SOCKET.removeprefix("unix://")).exists() or \
        _on_path("podman")


def _on_path(tool: str) -> bool:
    return shutil.which(tool) is not None


def remove_stale(client) -> list[str]:
    """Remove what test processes that no longer run left behind (they are killed before their clean-up): their
    containers with their volumes, and their compose projects (``graphlink-test-<pid>-...``) with their networks
    and volumes. The names of the containers removed."""
    gone = []
    for c in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
        if _dead(c.labels.get(OWNER_LABEL, "")):
            c.remove(force=True, v=True)
            gone.append(c.name)
    key = "com.docker.compose.project"

    def stale(labels: dict | None) -> bool:
        project = (labels or {}).get(key, "")
        return project.startswith(COMPOSE_PREFIX) and _dead(project[len(COMPOSE_PREFIX):].split("-")[0])

    for c in client.containers.list(all=True, filters={"label": key}):
        if stale(c.labels):
            c.remove(force=True, v=True)
            gone.append(c.name)
    for item in [*client.networks.list(filters={"label": key}), *client.volumes.list(filters={"label": key})]:
        if stale(item.attrs.get("Labels")):
            item.remove()
    return gone


def _dead(pid: str) -> bool:
    return pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def registry_answers(host: str = "registry-1.docker.io", timeout: float = 3.0) -> bool:
    """Whether the registry of ``docker.io`` images accepts a connection within ``timeout`` seconds (cheap: a
    machine without one fails at once, on name resolution)."""
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _has(client, image: str) -> bool:
    import docker

    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False


def choose_image(engine: Engine, echo: Callable[[str], None] = print) -> str:
    """The Neo4j image for this session (see the module docstring); RuntimeError when none can be had."""
    t0 = time.monotonic()
    image = _choose_image(engine, echo)
    TIMINGS["image"] = f"{image} ({time.monotonic() - t0:.1f} s to choose, pull or bring up to date)"
    return image


def _choose_image(engine: Engine, echo: Callable[[str], None]) -> str:
    import docker

    client = engine.client()
    with contextlib.closing(client):
        forced = os.environ.get("GRAPHLINK_TEST_NEO4J_IMAGE")
        if forced:
            if not _has(client, forced):
                client.images.pull(forced)
            return forced
        if _has(client, OFFICIAL_IMAGE):
            return OFFICIAL_IMAGE
        if registry_answers():
            try:
                client.images.pull(OFFICIAL_IMAGE)
                return OFFICIAL_IMAGE
            except docker.errors.APIError as exc:
                echo(f"pulling {OFFICIAL_IMAGE} failed ({str(exc).splitlines()[0]}); using {PROJECT_IMAGE}")
    return project_image(engine)


def project_image(engine: Engine) -> str:
    """:data:`PROJECT_IMAGE`, brought up to date by ``scripts/build-image.sh`` on the engine's side (seconds when
    nothing changed); RuntimeError with the script's last line when it fails."""
    env = {**os.environ, "GRAPHLINK_CONTAINER_ENGINE": engine.kind}
    res = subprocess.run(["bash", "scripts/build-image.sh"], cwd=ROOT, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"scripts/build-image.sh failed: {' '.join(res.stderr.strip().splitlines()[-1:])}")
    return PROJECT_IMAGE


def wait_for_neo4j(uri: str, auth: tuple[str, str], timeout: float, logs: Callable[[], str]) -> float:
    """Wait until the default database answers a query; the seconds waited. TimeoutError with the log's tail."""
    from neo4j import GraphDatabase

    t0 = time.monotonic()
    last: Exception | None = None
    while time.monotonic() - t0 < timeout:
        try:  # an auto-commit query: the driver's managed transactions would retry (with back-off) by themselves
            with GraphDatabase.driver(uri, auth=auth, connection_timeout=3) as drv, \
                    drv.session(database="neo4j") as session:
                session.run("RETURN 1 AS ok").consume()
                return time.monotonic() - t0
        except Exception as exc:  # not up yet: refused, reset, database unavailable
            last = exc
            time.sleep(0.25)
    tail = " | ".join(logs().strip().splitlines()[-5:])
    raise TimeoutError(f"Neo4j in the container did not answer within {timeout:.0f} s ({last}); log: {tail}")


@contextlib.contextmanager
def neo4j_container(engine: Engine, image: str, timeout: float = 300.0,
                    env: dict[str, str] | None = None) -> Iterator[tuple[str, tuple[str, str], object]]:
    """Start Neo4j from ``image`` with testcontainers' Neo4j module; yields ``(uri, auth, container)`` and removes
    the container (and its volume) afterwards."""
    from testcontainers.community.neo4j import Neo4jContainer
    from testcontainers.core.config import testcontainers_config

    class ProjectNeo4j(Neo4jContainer):
        def _connect(self) -> None:
            """The module waits for a log line that only the official image prints; readiness is checked below
            (a query on the default database), the same way for both images."""

    testcontainers_config.ryuk_disabled = True
    password = secrets.token_urlsafe(18)
    container = ProjectNeo4j(image, password=password,
                             docker_client_kw={"environment": {"DOCKER_HOST": engine.docker_host}})
    container.ports["7687"] = ("127.0.0.1",)  # a free host port on the loopback interface only
    container.with_envs(**SETTINGS, **(env or {}))
    container.with_kwargs(labels={OWNER_LABEL: str(os.getpid())})
    try:
        t0 = time.monotonic()
        container.start()
        port = container.get_exposed_port(7687)
        uri = f"bolt://127.0.0.1:{port}"

        def logs() -> str:
            out, err = container.get_logs()
            return (out + err).decode(errors="replace")

        wait_for_neo4j(uri, (container.username, password), timeout, logs)
        TIMINGS["container"] = f"started and answering in {time.monotonic() - t0:.1f} s"
        yield uri, (container.username, password), container
    finally:
        container.stop(force=True, delete_volume=True)
