"""The bodies of the store fixtures: for the session's server (tests/conftest.py) and for Neo4j in a container
(tests/container/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


def open_store(server: tuple) -> Iterator:
    """A :class:`graphlink.store.neo4j.Store` on ``(uri, auth, source)``, schema applied; closed afterwards."""
    from graphlink.store.neo4j import connect

    uri, auth, _ = server
    store = connect(uri, auth)
    store.apply_schema()
    yield store
    store.close()


def fresh_release_name(store) -> Iterator[str]:
    """A fresh release name for one test; the release is dropped afterwards."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    store.drop_release(name)


def point_env_at(server: tuple, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point NEO4J_URI / NEO4J_AUTH at ``(uri, auth, source)`` (for CLI tests), and GRAPHLINK_NEO4J_CERT at the
    certificate its clients pin when the project's launcher started it (TLS); the URI."""
    from graphlink.store import server as local

    uri, auth, _ = server
    monkeypatch.setenv("NEO4J_URI", uri)
    monkeypatch.setenv("NEO4J_AUTH", "none" if auth is None else f"{auth[0]}/{auth[1]}")
    cert = local.pinned_certificate(uri)
    if cert is not None:
        monkeypatch.setenv("GRAPHLINK_NEO4J_CERT", str(cert))
    else:
        monkeypatch.delenv("GRAPHLINK_NEO4J_CERT", raising=False)
    return uri
