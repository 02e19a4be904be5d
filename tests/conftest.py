"""Shared fixtures. Neo4j for tests: NEO4J_URI  >  local launcher (Maven jars)  >  testcontainers  >  skip.
Spark for tests: one ``local[2]`` session for the whole run (``spark`` fixture); without pyspark or Java the Spark
tests are skipped, with ``GRAPHLINK_SPARK_REQUIRED=1`` (CI) that is a failure instead.

* ``NEO4J_URI`` (+ ``NEO4J_AUTH``): any running Neo4j 5.x (a user's server, Aura, docker compose). Tests only
  touch releases named ``test-...`` and drop them afterwards; nothing else on that server is changed.
* Otherwise a throw-away local server on a free port in a temporary home, from the runtime that
  ``bash scripts/setup-neo4j.sh`` resolved (``.graphlink/neo4j/runtime``), with authentication on, a generated
  password and TLS on Bolt with a certificate its clients pin, like the project's server. It exits with the test
  session.
* Otherwise Neo4j in a container (tests/containers.py) when a container engine is there.
* Otherwise the Neo4j tests are skipped; with ``NEO4J_REQUIRED=1`` (CI) that is a failure instead.

The container tests (``-m container``: tests/container/, whose conftest.py has their fixtures) run a focused set of
the store tests against Neo4j in a container started by testcontainers, and docker compose against the same engine;
without an engine or image they are skipped, with ``GRAPHLINK_CONTAINER_REQUIRED=1`` (CI) that is a failure instead.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from graphlink import config
from tests.store_fixtures import fresh_release_name, open_store, point_env_at

# A process reads the GRAPHLINK_* variables once, at its first graphlink.config.get_config(); the tests change them
# the way users do, through the environment, so each change is read again (config.reload) as a new process would
# read it, and every test starts from the environment with no set_config() change left over from another.
_setenv, _delenv = pytest.MonkeyPatch.setenv, pytest.MonkeyPatch.delenv


def _setenv_read(self: pytest.MonkeyPatch, name: str, value: str, prepend: str | None = None) -> None:
    _setenv(self, name, value, prepend)
    if name.startswith("GRAPHLINK_"):
        config.reload()


def _delenv_read(self: pytest.MonkeyPatch, name: str, raising: bool = True) -> None:
    _delenv(self, name, raising)
    if name.startswith("GRAPHLINK_"):
        config.reload()


pytest.MonkeyPatch.setenv = _setenv_read      # type: ignore[method-assign]
pytest.MonkeyPatch.delenv = _delenv_read      # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _settings_from_the_environment():
    config.reload()
    yield
    config.reload()


@pytest.fixture(params=["plain", "detailed"])
def csv_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Small CSV releases read by the plain path of :mod:`graphlink.core.ingest` (no pandas) or, with it switched
    off, by the detailed pandas reader: a test using this fixture must hold on both."""
    import graphlink.core.ingest as ingest

    if request.param == "detailed":
        monkeypatch.setattr(ingest, "PLAIN_MAX_BYTES", 0)
    return request.param


def _missing(msg: str) -> None:
    if os.environ.get("NEO4J_REQUIRED") == "1":
        pytest.fail(f"NEO4J_REQUIRED=1 but {msg}", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory):
    """Yields ``(uri, auth, source)`` with source in {"env", "local", "container"}."""
    from graphlink.store import server
    from graphlink.store.neo4j import env_auth

    if os.environ.get("NEO4J_URI"):
        uri, auth = os.environ["NEO4J_URI"], env_auth()
        if not server.bolt_version(uri, auth=auth, timeout=10):
            _missing(f"NEO4J_URI={uri} does not answer")
        yield uri, auth, "env"
        return
    paths = server.Paths.default()
    if server.runtime_version(paths) and server.find_java():
        srv = server.EphemeralServer(tmp_path_factory.mktemp("neo4j-home"), paths)
        try:
            yield srv.uri, srv.auth, "local"
        finally:
            srv.stop()
        return
    from tests import containers

    if containers.engine_installed():
        with contextlib.ExitStack() as stack:
            try:
                engine = stack.enter_context(containers.engine_session(tmp_path_factory.mktemp("container-engine")))
                image = containers.choose_image(engine)
                uri, auth, _ = stack.enter_context(containers.neo4j_container(engine, image))
            except (containers.EngineUnavailable, RuntimeError, TimeoutError) as exc:
                _missing(f"no Neo4j: no runtime for the local server, and no container ({exc})")
            yield uri, auth, "container"
        return
    _missing("no Neo4j: set NEO4J_URI, run `bash scripts/setup-neo4j.sh` (Java 17 + Maven), or install a container "
             "engine (bash scripts/setup-containers.sh)")


@pytest.fixture
def neo4j_runtime():
    """The resolved local runtime (``server.Paths``) for tests that start servers of their own; skip without
    one (fail under ``NEO4J_REQUIRED=1`` unless ``NEO4J_URI`` names the server to use instead)."""
    from graphlink.store import server

    paths = server.Paths.default()
    if not server.runtime_version(paths) or not server.find_java():
        msg = "no local Neo4j runtime: run `bash scripts/setup-neo4j.sh` (Java 17 + Maven)"
        if os.environ.get("NEO4J_REQUIRED") == "1" and not os.environ.get("NEO4J_URI"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return paths


@pytest.fixture(scope="session")
def neo4j_store(neo4j_server):
    """One :class:`graphlink.store.neo4j.Store` for the session, schema applied."""
    yield from open_store(neo4j_server)


@pytest.fixture
def release_name(neo4j_store):
    """A fresh release name for one test; the release is dropped afterwards."""
    yield from fresh_release_name(neo4j_store)


@pytest.fixture
def neo4j_env(neo4j_server, monkeypatch):
    """Point NEO4J_URI / NEO4J_AUTH (and GRAPHLINK_NEO4J_CERT, the certificate a local test server's clients pin)
    at the test server (for CLI tests)."""
    return point_env_at(neo4j_server, monkeypatch)


@pytest.fixture
def at(monkeypatch):
    """The Streamlit app (``streamlit_app.py``) under AppTest, started on the thesis demo release, with the Cypher
    console switched on (it is off unless asked for; tests/app/test_app_security.py checks that)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GRAPHLINK_DEMO", "thesis")
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    app = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "streamlit_app.py"), default_timeout=120)
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.fixture(scope="session")
def spark():
    """One ``local[2]`` SparkSession for the whole test session, with the Neo4j connector when Maven Central
    answers (the connector test then needs it); small shuffles for small test data."""
    def missing(msg: str) -> None:
        if os.environ.get("GRAPHLINK_SPARK_REQUIRED") == "1":
            pytest.fail(f"GRAPHLINK_SPARK_REQUIRED=1 but {msg}", pytrace=False)
        pytest.skip(msg)

    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing("pyspark is not installed (pip install '.[spark]')")
    from graphlink.engines.spark.runtime import SparkUnavailable, get_session

    os.environ.setdefault("GRAPHLINK_SPARK_PARTITIONS", "4")
    try:
        session = get_session("local[2]", neo4j=True)
    except SparkUnavailable:
        try:        # no connector (Maven Central unreachable): the engine tests still run, the connector test fails
            session = get_session("local[2]")
        except SparkUnavailable as exc:
            missing(str(exc))
    yield session
    session.stop()
