"""``graphlink releases`` lists what the store holds; ``graphlink drop NAME`` removes one release, after asking, and
is refused while a load of that release holds its lock (against the real server, the CLI in this process except
the lock holder, a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from graphlink.simulation.simulate import simulate_uniform
from tests.cli_runner import run_cli
from tests.store.test_store_lock import HOLDER, env  # noqa: F401  (the CLI process environment fixture)

pytestmark = pytest.mark.neo4j


@pytest.fixture
def stored(neo4j_store, neo4j_env):
    name = f"test-drop-{uuid.uuid4().hex[:8]}"
    rel = simulate_uniform(40, 4, 0.5, withhold=0.2, seed=3)
    neo4j_store.load_release(rel, name=name)
    yield name
    neo4j_store.break_lock(name)
    neo4j_store.drop_release(name)


def _names(neo4j_store) -> set[str]:
    return {r.name for r in neo4j_store.list_releases()}


def test_releases_lists_the_stored_release_with_its_sizes(stored, neo4j_store) -> None:
    res = run_cli("releases", "--format", "json")
    assert res.returncode == 0, res.stderr
    shown = {r["name"]: r for r in json.loads(res.stdout)["releases"]}
    info = neo4j_store.release_info(stored)
    assert shown[stored]["rows"] == info.rows and shown[stored]["locations"] == 4
    assert shown[stored]["status"] == "loaded" and shown[stored]["loaded"]
    table = run_cli("releases")
    assert table.returncode == 0 and stored in table.stdout


def test_drop_asks_and_keeps_the_release_when_the_answer_is_no(stored, neo4j_store) -> None:
    res = run_cli("drop", stored, input="n\n")
    assert res.returncode == 1 and "nothing removed" in res.stderr
    assert stored in _names(neo4j_store)


def test_drop_removes_the_release_and_everything_of_it(stored, neo4j_store) -> None:
    res = run_cli("drop", stored, input="y\n")
    assert res.returncode == 0, res.stderr
    assert stored not in _names(neo4j_store)
    left = neo4j_store._query("MATCH (n {release: $n}) RETURN count(n) AS c", {"n": stored})[0]["c"]
    assert left == 0


def test_drop_of_an_unknown_release_is_one_line(neo4j_env) -> None:
    res = run_cli("drop", "no-such-release-here", "--yes")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "no release named 'no-such-release-here'" in res.stderr


def test_drop_is_refused_while_a_load_holds_the_lock(stored, neo4j_store, env) -> None:  # noqa: F811
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, stored], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        res = run_cli("drop", stored, "--yes")
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert str(holder.pid) in res.stderr
        assert stored in _names(neo4j_store)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
