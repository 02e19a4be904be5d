"""The container tests (``-m container``; docs/neo4j.md, "Containers").

Here the store fixtures of tests/conftest.py are bound to the session's Neo4j container (``neo4j_container``:
testcontainers on the session's engine, tests/containers.py) instead of the session's server. A test module of this
folder that imports test functions from another module (``from tests.test_store import test_...``) runs them again,
unchanged, against the container: the same test bodies on a second kind of server. Every test here is marked
``container`` and ``neo4j``; without an engine or image they are skipped, with ``GRAPHLINK_CONTAINER_REQUIRED=1``
(CI) that is a failure instead.
"""

from __future__ import annotations

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
