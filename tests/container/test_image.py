"""The project's Neo4j image (docker/neo4j): its entry point reads ``NEO4J_AUTH`` and the ``NEO4J_<setting>``
variables the way the official image does, and refuses what the official one refuses before Neo4j starts. What a
started server then does with them (authentication on, file URLs and plugin procedures refused) is checked by
test_store.py and test_console.py in this folder. Each case here is one short-lived container (no Neo4j start).
"""

from __future__ import annotations

import contextlib
import os

import pytest

from tests.containers import OWNER_LABEL, container_missing, project_image


@pytest.fixture(scope="module")
def image(container_engine) -> str:
    try:
        return project_image(container_engine)
    except RuntimeError as exc:
        container_missing(str(exc))


@pytest.fixture(scope="module")
def client(container_engine):
    with contextlib.closing(container_engine.client()) as c:
        yield c


def run(client, image: str, env: dict[str, str], command: list[str] | None = None) -> tuple[int, str]:
    """Run a container to its end: its exit code and output."""
    c = client.containers.run(image, command, environment=env, detach=True, labels={OWNER_LABEL: str(os.getpid())})
    try:
        code = c.wait(timeout=300)["StatusCode"]
        return code, c.logs().decode(errors="replace")
    finally:
        c.remove(force=True, v=True)


@pytest.mark.parametrize(("auth", "message"), [
    ("neo4j/short", "at least 8 characters"),
    ("neo4j/neo4j", "cannot be 'neo4j'"),
    ("admin/long-enough-password", "the admin user must be neo4j"),
    ("neo4j/long-enough/true", "suffix is not supported"),
    ("neo4j", "expected neo4j/<password> or none"),
])
def test_bad_neo4j_auth_is_refused_in_one_line(client, image, auth: str, message: str) -> None:
    code, out = run(client, image, {"NEO4J_AUTH": auth})
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("docker-entrypoint: NEO4J_AUTH:"), out
    assert message in lines[0] and "long-enough" not in lines[0]  # the password is never echoed


def test_settings_come_from_the_environment(client, image) -> None:
    code, out = run(client, image, {"NEO4J_AUTH": "neo4j/abcdefghij",
                                    "NEO4J_dbms_security_auth__minimum__password__length": "12"})
    assert code == 1 and "at least 12 characters" in out, out
    # the JVM refuses an unknown option (the second of two additional flags) at once, after the entry point wrote
    # neo4j.conf: the file is then read back
    env = {"NEO4J_AUTH": "none", "NEO4J_server_memory_pagecache_size": "64m", "NEO4J_db_logs_query_enabled": "OFF",
           "NEO4J_server_memory_heap_max__size": "700m", "NEO4J_dbms_security_allow__csv__import__from__file__urls":
           "true", "NEO4J_server_jvm_additional": "-XX:TieredStopAtLevel=1\n-XX:+NoSuchGraphlinkOption"}
    script = '/usr/local/bin/docker-entrypoint.sh neo4j; echo "exit $?"; cat "$NEO4J_HOME/conf/neo4j.conf"'
    code, out = run(client, image, env, ["bash", "-c", script])
    conf = dict(line.split("=", 1) for line in out.splitlines() if "=" in line and not line.startswith("#"))
    assert "heap 256m..700m" in out and "authentication false" in out and "exit 1" in out, out
    assert "NoSuchGraphlinkOption" in out and "server.jvm.additional" not in conf  # JVM flags, not a conf line
    assert conf["server.memory.pagecache.size"] == "64m" and conf["db.logs.query.enabled"] == "OFF"
    assert conf["dbms.security.auth_enabled"] == "false" and conf["server.memory.heap.max_size"] == "700m"
    assert conf["dbms.security.allow_csv_import_from_file_urls"] == "true"  # a setting overrides a default
    assert conf["dbms.security.procedures.allowlist"] == "" and conf["server.directories.data"] == "/data"
