"""A command's own exit code reaches the shell through the CLI's entry (``graphlink.cli.main``): click hands a
``typer.Exit(n)`` back as a return value when it does not exit itself, and that value used to be dropped (exit 0)."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import run_cli


def test_neo4j_status_of_a_server_that_is_not_running_exits_3(tmp_path: Path) -> None:
    res = run_cli("neo4j", "status", env={"GRAPHLINK_NEO4J_DIR": str(tmp_path / "none"), "NEO4J_URI": None})
    assert res.returncode == 3, (res.stdout, res.stderr)
    assert "not running" in res.stdout
