"""Fuzzing the Neo4j entry points: ``graphlink load`` on generated release files and
``graphlink cypher`` on malformed ``.cypher`` files, against the test server.  A few cases each: the
readers themselves are fuzzed at length in ``tests/core/test_fuzz_readers.py``."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests import fuzz_inputs as fi
from tests import fuzz_oracle as fo
from tests.fuzz_harness import CASES, check_contract, report_cases, run_cli

pytestmark = pytest.mark.neo4j
SETTINGS = settings(max_examples=min(fi.examples(12), 100), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@contextlib.contextmanager
def server_env(neo4j_server) -> Iterator[None]:
    """NEO4J_URI / NEO4J_AUTH pointing at the test server for the in-process CLI (restored after)."""
    uri, auth, _ = neo4j_server
    old = {k: os.environ.get(k) for k in ("NEO4J_URI", "NEO4J_AUTH")}
    os.environ["NEO4J_URI"] = uri
    os.environ["NEO4J_AUTH"] = "none" if auth is None else f"{auth[0]}/{auth[1]}"
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module", autouse=True)
def _cases(request: pytest.FixtureRequest):
    yield
    report_cases(request)


def test_load_contract(neo4j_server, neo4j_store) -> None:
    @SETTINGS
    @given(data=fi.LONG_CSV)
    def prop(data: bytes) -> None:
        name = f"test-fuzz-{uuid.uuid4().hex[:10]}"
        with tempfile.TemporaryDirectory() as d, server_env(neo4j_server):
            path = Path(d) / "release.csv"
            path.write_bytes(data)
            verdict = fo.expect_long_csv(data, str(path))
            CASES["load"] += 1
            try:
                outcome = run_cli(["load", str(path), "--name", name])
            finally:
                neo4j_store.drop_release(name)
            check_contract(outcome, ["load", str(path)])
            if not verdict.accepted:
                assert outcome.code == 2
            elif outcome.code == 0:          # every kept row is in the store: none dropped on the way
                assert re.search(rf"{len(verdict.rows):,} disclosures", outcome.stdout), outcome.stdout

    prop()


def test_cypher_contract(neo4j_server) -> None:
    @settings(SETTINGS, max_examples=min(fi.examples(20), 100))
    @given(data=fi.CYPHER_FILES)
    def prop(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as d, server_env(neo4j_server):
            path = Path(d) / "query.cypher"
            path.write_bytes(data)
            argv = ["cypher", str(path)]
            CASES["cypher"] += 1
            check_contract(run_cli(argv), argv)

    prop()


def test_names_and_values_print_as_text_not_markup(neo4j_server, neo4j_store, tmp_path: Path) -> None:
    """Was: a release name or a query value like '[/b]' crashed the progress bar / result table with rich's
    MarkupError (exit 1)."""
    name = f"test-fuzz-[/b]-{uuid.uuid4().hex[:6]}"
    release = tmp_path / "r.csv"
    release.write_text("location,kind,element\nH1,identified,[/b]\nH1,deidentified,x\n")
    query = tmp_path / "q.cypher"
    query.write_text("RETURN '[/b]' AS `[red]col`;\n")
    with server_env(neo4j_server):
        try:
            loaded = run_cli(["load", str(release), "--name", name])
        finally:
            neo4j_store.drop_release(name)
        shown = run_cli(["cypher", str(query)])
    assert loaded.code == 0 and name in loaded.stdout, loaded.stderr
    assert shown.code == 0 and "[/b]" in shown.stdout and "[red]col" in shown.stdout, shown.stderr
