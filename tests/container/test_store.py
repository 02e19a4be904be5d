"""The store tests that matter for a server of one's own, against Neo4j in a container (``-m container``).

The container: testcontainers' Neo4j module on the session's engine (tests/containers.py), the official
``neo4j:5.26-community`` image where a registry answers and the project's ``localhost/graphlink/neo4j:5.26``
otherwise. The tests are the very functions of tests/store/test_store.py, imported here, so they run a second time with
the fixtures of tests/container/conftest.py (the container instead of the session's server): loading and read-back,
the idempotent reload and the interrupted one, the Cypher library against the engine, the link-graph,
re-identification and audit write-back, the read-only runner, ``graphlink load`` + ``graphlink cypher``.

Bulk import (graphlink/store/bulk.py) rebuilds the database offline on the project's own local server, with the
server's files at hand and its launcher paused; a server in a container is reached over Bolt only, so it never
applies there. What does apply is the rule's other half, tested here: ``auto`` loads with UNWIND and says why,
``always`` refuses in one line, and nothing is written.
"""

from __future__ import annotations

import pandas as pd
import pytest

from graphlink.errors import StoreError
from graphlink.simulation.simulate import simulate_uniform
from tests.store.test_store import (  # noqa: F401
    loaded,
    test_audit_write_back,
    test_cli_load_and_cypher,
    test_constraint_violation_is_reported_clearly,
    test_cypher_link_edges_equal_engine,
    test_cypher_reidit_c_equals_engine,
    test_cypher_trails_equal_engine,
    test_different_content_under_same_name_is_refused_unless_replaced,
    test_leave_one_location_out_equals_engine,
    test_link_graph_write_back_and_k_unlinkability_equal_engine,
    test_load_then_read_back_equals_input,
    test_load_twice_changes_nothing_and_interrupted_load_completes,
    test_one_to_many_link_graph_and_trails_follow_the_engine,
    test_read_only_runner_refuses_writes,
    test_reidentification_write_back_round_trips,
    test_run_cypher_accepts_library_text_with_defaults,
    test_thesis_figure_3_4_in_cypher,
    test_truth_is_loaded_as_entities,
)


def test_the_server_is_the_container(neo4j_server, neo4j_store) -> None:
    """These tests reach Neo4j 5.26 in the container, on a loopback port, with authentication on."""
    uri, auth, source = neo4j_server
    assert source == "container" and uri.startswith("bolt://127.0.0.1:") and auth is not None
    assert neo4j_store.server_version().startswith("5.26.")


def test_bulk_import_never_applies_to_a_container(neo4j_store, neo4j_env, release_name, monkeypatch,
                                                 tmp_path) -> None:
    from typer.testing import CliRunner

    from graphlink.cli import app

    monkeypatch.setenv("GRAPHLINK_BULK_MIN_ROWS", "1")  # the size is never the reason here
    rel = simulate_uniform(40, 4, 0.5, seed=21)
    with pytest.raises(StoreError, match="is not the project's local server") as refused:
        neo4j_store.load_release(rel, name=release_name, bulk="always")
    assert "\n" not in str(refused.value) and neo4j_store.release_info(release_name) is None
    info = neo4j_store.load_release(rel, name=release_name, bulk="auto")
    assert info.method == "unwind" and "is not the project's local server" in info.why
    cols = ["location", "kind", "element"]
    pd.testing.assert_frame_equal(
        neo4j_store.read_release(release_name).sort_values(cols).reset_index(drop=True),
        rel.frame[cols].astype(str).sort_values(cols).reset_index(drop=True))

    # the CLI, through NEO4J_URI: one line for --bulk always, UNWIND for auto
    csv = tmp_path / "rel.csv"
    rel.frame.to_csv(csv, index=False)
    other = release_name + "-cli"
    try:
        res = CliRunner().invoke(app, ["load", str(csv), "--name", other, "--bulk", "always"])
        assert res.exit_code != 0 and isinstance(res.exception, StoreError)
        assert str(res.exception).startswith("cannot bulk-import:") and "is not the project's local server" in \
            str(res.exception) and "\n" not in str(res.exception)
        assert neo4j_store.release_info(other) is None
        res = CliRunner().invoke(app, ["load", str(csv), "--name", other, "--bulk", "auto"])
        assert res.exit_code == 0 and "by UNWIND" in res.output, res.output
    finally:
        neo4j_store.drop_release(other)
