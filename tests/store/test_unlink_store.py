"""``graphlink unlink --store neo4j``: the protected release goes to Neo4j with its link graph and its certificate
(the exact audit at k, recomputed on the release as written), against a live server."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from tests.cli_runner import run_cli
from tests.fixtures import fig34


def _rows(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    return sorted(map(tuple, frame[["location", "kind", "element"]].astype(str).to_numpy()))


def test_unlink_stores_the_protected_release_with_its_certificate(neo4j_store, release_name, neo4j_env,
                                                                  tmp_path) -> None:
    path = tmp_path / "fig34.csv"
    fig34().to_csv(path, index=False)
    out = tmp_path / "safe.csv"
    done = run_cli("unlink", str(path), "--k", "2", "--method", "keep-most", "--seed", "0", "--out", str(out),
                   "--store", "neo4j", "--name", release_name)
    assert done.returncode == 0, done.stderr
    assert "stored as run" in done.stderr
    assert _rows(neo4j_store.read_release(release_name)) == _rows(pd.read_csv(out, dtype=str))
    assert Counter(neo4j_store.analyses(release_name)["kind"]) == {"link-graph": 1, "audit": 1}
    rows = neo4j_store.run_cypher("MATCH (a:Analysis {release: $name, kind: 'audit'}) "
                                  "RETURN a.k AS k, a.k_unlinkable AS ok, a.true_loves AS certain",
                                  {"name": release_name})
    assert rows.to_dict("records") == [{"k": 2, "ok": True, "certain": 0}]


def test_unlink_store_options_are_checked_before_any_work(tmp_path) -> None:
    path = tmp_path / "fig34.csv"
    fig34().to_csv(path, index=False)
    out = tmp_path / "safe.csv"
    for args, words in ((["--store", "mongo"], "--store must be none or neo4j"),
                        (["--name", "x"], "--name is an option of --store neo4j"),
                        (["--max-risk", "0.5", "--store", "neo4j"], "--store is not available with --max-risk")):
        done = run_cli("unlink", str(path), "--k", "2", "--out", str(out), *args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert words in done.stderr and not out.exists()


def test_unlink_store_without_a_server_says_so_before_protecting(tmp_path) -> None:
    """An unreachable server is said at once, in one line, and nothing is written."""
    path = tmp_path / "fig34.csv"
    fig34().to_csv(path, index=False)
    out = tmp_path / "safe.csv"
    done = run_cli("unlink", str(path), "--k", "2", "--out", str(out), "--store", "neo4j",
                   env={"NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_AUTH": "neo4j/wrong-password-0"})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists()


def test_unlink_stores_a_protected_one_to_many_release_with_its_one_to_many_certificate(
        neo4j_store, release_name, neo4j_env, tmp_path) -> None:
    """keep-most on households: the stored certificate is the one-to-many audit of the release as written."""
    import graphlink as gl

    path = tmp_path / "hh.csv"
    gl.simulate_households(60, 0.15, locations=10, withhold=0.2, seed=4).to_csv(path)
    out = tmp_path / "safe.csv"
    done = run_cli("unlink", str(path), "--k", "2", "--method", "keep-most", "--seed", "0", "--out", str(out),
                   "--store", "neo4j", "--name", release_name)
    assert done.returncode == 0, done.stderr
    assert _rows(neo4j_store.read_release(release_name)) == _rows(pd.read_csv(out, dtype=str))
    rows = neo4j_store.run_cypher("MATCH (a:Analysis {release: $name, kind: 'audit'}) "
                                  "RETURN a.k AS k, a.k_unlinkable AS ok, a.true_loves AS certain",
                                  {"name": release_name})
    assert rows.to_dict("records") == [{"k": 2, "ok": True, "certain": 0}]
