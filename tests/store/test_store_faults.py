"""Faults during ``graphlink load``, with real processes: the Neo4j server SIGKILLed mid-load, and separately the
loader SIGKILLed mid-load. The interrupted release is recognisably incomplete (``status: 'loading'``); running
the same command again completes it, and the graph then holds exactly the release: one node per element, one
``DISCLOSED_AT`` per disclosure, no duplicates (the oracle is the release file itself).

Each test starts its own throw-away server (its home in a temporary folder), never the session's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import server
from graphlink.store.neo4j import connect
from tests.processes import stop

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

NAME = "faulty"


@pytest.fixture(scope="module")
def release_csv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """About 100,000 disclosures (10 load batches): long enough to be interrupted in the middle."""
    rel = simulate_uniform(5000, 20, 0.5, withhold=0.1, seed=13)
    path = tmp_path_factory.mktemp("faults") / "release.csv"
    rel.frame.to_csv(path, index=False)
    return path, rel.frame[["location", "kind", "element"]].astype(str).drop_duplicates()


@pytest.fixture
def throwaway(neo4j_runtime: server.Paths, tmp_path: Path) -> Iterator[dict]:
    """A server of our own; ``box["server"]`` is replaced when a test restarts it on the same home."""
    box = {"home": tmp_path / "home", "server": server.EphemeralServer(tmp_path / "home", neo4j_runtime)}
    yield box
    box["server"].stop()


def _loader(srv: server.EphemeralServer, csv: Path) -> subprocess.Popen:
    env = dict(os.environ, **srv.client_env())
    return subprocess.Popen([sys.executable, "-m", "graphlink.cli", "load", str(csv), "--name", NAME],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_mid_load(srv: server.EphemeralServer, loader: subprocess.Popen, timeout: float = 300) -> int:
    """Block until some, not all, element batches of the release are committed; return how many elements."""
    with connect(srv.uri, srv.auth) as store:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert loader.poll() is None, f"the load ended before it could be interrupted: {loader.communicate()}"
            rec = store._query("OPTIONAL MATCH (r:Release {name: $n}) RETURN r.status AS status, "
                               "COUNT { (:Identified {release: $n}) } AS i", {"n": NAME})[0]
            if rec["status"] == "loading" and rec["i"] > 0:
                return int(rec["i"])
            time.sleep(0.05)
    raise AssertionError("the load never got going")


def _assert_complete(srv: server.EphemeralServer, expected: pd.DataFrame) -> None:
    with connect(srv.uri, srv.auth) as store:
        info = store.release_info(NAME)
        assert info.status == "loaded" and info.rows == len(expected)
        for kind in ("identified", "deidentified"):
            assert getattr(info, kind) == expected.loc[expected["kind"] == kind, "element"].nunique()
        one = lambda query: store._query(query, {"n": NAME})[0][0]  # noqa: E731
        rels = one("MATCH (:Location {release: $n})<-[d:DISCLOSED_AT]-() RETURN count(d)")
        duplicated = one("MATCH (l:Location {release: $n})<-[:DISCLOSED_AT]-(e) WITH l, e, count(*) AS c "
                         "WHERE c > 1 RETURN count(*)")
        nodes = one("RETURN COUNT { (:Identified {release: $n}) } + COUNT { (:Deidentified {release: $n}) }")
        assert rels == len(expected) and duplicated == 0                       # no duplicate disclosure
        assert nodes == expected.groupby("kind")["element"].nunique().sum()    # no duplicate element
        assert one("RETURN COUNT { (:Location {release: $n}) }") == expected["location"].nunique()
        back = store.read_release(NAME)
    key = ["location", "kind", "element"]
    assert set(map(tuple, back[key].to_numpy())) == set(map(tuple, expected[key].to_numpy()))


def _finish(srv: server.EphemeralServer, csv: Path) -> str:
    again = _loader(srv, csv)
    out, err = again.communicate(timeout=900)
    assert again.returncode == 0, err
    return out


def test_server_killed_mid_load_then_rerun_completes(throwaway: dict, release_csv) -> None:
    csv, expected = release_csv
    srv = throwaway["server"]
    loader = _loader(srv, csv)
    try:
        done = _wait_mid_load(srv, loader)
        srv.kill()                                                  # the database crashes mid-load
        out, err = loader.communicate(timeout=300)
    finally:
        stop(loader)
    assert loader.returncode == 2, (out, err)                     # a clear error, not a traceback
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "Neo4j" in err
    assert done < expected.loc[expected["kind"] == "identified", "element"].nunique()

    srv = throwaway["server"] = server.EphemeralServer(throwaway["home"], srv.paths)   # restart: recovery
    with connect(srv.uri, srv.auth) as store:
        assert store.release_info(NAME).status == "loading"     # recognisably incomplete
    _finish(srv, csv)
    _assert_complete(srv, expected)
    assert "already loaded" in _finish(srv, csv)                   # and idempotent afterwards


def test_loader_killed_mid_load_then_rerun_completes(throwaway: dict, release_csv) -> None:
    csv, expected = release_csv
    srv = throwaway["server"]
    loader = _loader(srv, csv)
    try:
        _wait_mid_load(srv, loader)
        loader.kill()                                               # the loader dies mid-load
        loader.wait(timeout=60)
    finally:
        stop(loader)
    with connect(srv.uri, srv.auth) as store:
        assert store.release_info(NAME).status == "loading"
    _finish(srv, csv)
    _assert_complete(srv, expected)
