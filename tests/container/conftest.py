"""The container tests (``-m container``; docs/neo4j.md, "Containers").

Here the store fixtures of tests/conftest.py are bound to a Neo4j container (``neo4j_container``: testcontainers on
the engine of ``container_engine``, tests/containers.py) instead of the session's server. A test module of this
folder that imports test functions from another module (``from tests.store.test_store import test_...``) runs them
again,
unchanged, against the container: the same test bodies on a second kind of server. Every test here is marked
``container`` and ``neo4j``; without an engine or image they are skipped, with ``GRAPHLINK_CONTAINER_REQUIRED=1``
(CI) that is a failure instead.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.store_fixtures import fresh_release_name, open_store, point_env_at

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.container)
            item.add_marker(pytest.mark.neo4j)


def pytest_terminal_summary(terminalreporter) -> None:
    from tests.containers import TIMINGS

    if TIMINGS:
        terminalreporter.section("Neo4j in a container")
        for what, value in TIMINGS.items():
            terminalreporter.write_line(f"{what}: {value}")


# The container and its engine last as long as this folder's tests (package scope), not the whole session: a Neo4j
# JVM that the later tests do not use would hold its memory (on a shared machine) until the session ends.
@pytest.fixture(scope="package")
def container_engine(tmp_path_factory):
    """A Docker API for these tests (:func:`tests.containers.engine_session`)."""
    from tests.containers import EngineUnavailable, container_missing, engine_session

    with contextlib.ExitStack() as stack:
        try:
            engine = stack.enter_context(engine_session(tmp_path_factory.mktemp("container-engine")))
        except EngineUnavailable as exc:
            container_missing(str(exc))
        yield engine


@pytest.fixture(scope="package")
def neo4j_image(container_engine):
    """The Neo4j image of the container tests (:func:`tests.containers.choose_image`)."""
    from tests.containers import choose_image, container_missing

    try:
        return choose_image(container_engine)
    except Exception as exc:
        container_missing(f"no Neo4j image: {exc}")


@pytest.fixture(scope="package")
def neo4j_container(container_engine, neo4j_image):
    """Neo4j in a container for these tests: ``(uri, auth, "container")``; removed afterwards."""
    from tests.containers import neo4j_container as start

    with start(container_engine, neo4j_image) as (uri, auth, _):
        yield uri, auth, "container"


@pytest.fixture(scope="module")
def neo4j_server(neo4j_container):
    """The session's Neo4j container as ``(uri, auth, "container")``."""
    return neo4j_container


@pytest.fixture(scope="module")
def neo4j_store(neo4j_server):
    """A store on the container for the module, schema applied."""
    yield from open_store(neo4j_server)


@pytest.fixture
def release_name(neo4j_store):
    """A fresh release name on the container; dropped afterwards."""
    yield from fresh_release_name(neo4j_store)


@pytest.fixture
def neo4j_env(neo4j_server, monkeypatch):
    """NEO4J_URI / NEO4J_AUTH pointing at the container (CLI tests)."""
    return point_env_at(neo4j_server, monkeypatch)
