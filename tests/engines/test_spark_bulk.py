"""Bulk import from files written by Spark (:mod:`graphlink.engines.spark.bulk`) against the local engine's bulk import.

Each release is bulk-imported by the local engine into the empty database, its whole graph read back (every node
with every property value and Cypher type, every relationship by its end nodes' keys); the database is emptied
and the same release bulk-imported by the Spark engine (``local[2]``): the graphs must be equal, fingerprint and
``load_method`` included, loading it again with either engine changes nothing, and a Cypher file reads it as it
read the local one. Then ``graphlink load --engine spark``: which path ran, the refusal of ``--bulk always`` on a
database with data (one line naming why), the fallback to the Neo4j connector.

Uses the private local server of ``tests/store/test_store_bulk.py`` (its fixtures) and the session's Spark.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphlink.core.release import Release, read_release
from graphlink.errors import StoreError
from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import bulk
from graphlink.store.neo4j import connect
from tests.store import test_store_bulk as tsb
from tests.store.test_store_bulk import VOLATILE, _graph, _per_label, _release

#: the private local server and the emptied store of tests/store/test_store_bulk.py
local, store = tsb.local, tsb.store

pytestmark = [pytest.mark.neo4j, pytest.mark.slow, pytest.mark.spark]

FIG34 = Path(__file__).resolve().parents[2] / "graphlink" / "data" / "thesis_fig3_4.csv"


def _thesis() -> tuple[Release, str]:
    return read_release(FIG34), str(FIG34)


def _simulated() -> tuple[Release, Release]:
    rel = _release(subjects=300, locations=6)  # ground truth, CSV-hostile keys and location name
    return rel, rel


@pytest.mark.parametrize("make", [_thesis, _simulated], ids=["thesis-fig3-4", "simulated-tricky"])
def test_spark_bulk_import_builds_the_local_graph(local, store, spark, make):
    from graphlink.engines.spark import bulk as spark_bulk
    from graphlink.engines.spark.release import read

    rel, source = make()  # the Spark engine reads the file itself (thesis) or the same in-memory release
    name = "same"
    local_info = store.load_release(rel, name=name, bulk="always")
    assert local_info.method == "bulk-import", local_info
    want = _graph(store, name)
    want_release = store.read_release(name)
    want_trails = store.run_file("trails", {"release": name})
    tsb.empty(store)

    srel = read(spark, source)
    lines: list[str] = []
    info = spark_bulk.load_release(srel, store, name, bulk="always", progress=lambda f, m: lines.append(m))
    assert info.method == "bulk-import" and info.why == "the local database was empty", info
    assert info.status == "loaded" and not info.skipped
    assert any("neo4j-admin" in m for m in lines)
    got = _graph(store, name)
    assert _per_label(got) == _per_label(want)
    assert got["nodes"] == want["nodes"]  # every property and its type: fingerprint, sizes, load_method, source
    assert got["rels"] == want["rels"]
    expect = {k: v for k, v in local_info.properties.items() if k not in VOLATILE}
    assert {k: v for k, v in store.release_info(name).properties.items() if k in expect} == expect
    assert store.release_info(name).source == (source if isinstance(source, str) else rel.source)
    if rel.truth is not None:
        assert _per_label(got)[("Entity",)] == rel.truth.drop_duplicates().shape[0]
        assert _per_label(got)["APPEARS_AS"] > 0
    # the Cypher library reads it unchanged
    assert store.read_release(name).equals(want_release)
    assert store.run_file("trails", {"release": name}).equals(want_trails)
    # idempotent, whichever engine loads it again
    assert spark_bulk.load_release(srel, store, name, bulk="always").skipped
    assert store.load_release(rel, name=name, bulk="always").skipped
    assert not bulk.journal(local[0]) and not list((local[0].base / "bulk").glob("job-*"))  # nothing left behind


def test_spark_files_are_the_local_files(spark, tmp_path):
    """Offline: the Spark-written groups hold the rows the local writer writes (ids aside: they are not stored)."""
    from graphlink.engines.spark import bulk as spark_bulk
    from graphlink.engines.spark.release import read
    from graphlink.store.neo4j import _release_frame, fingerprint

    rel, _ = _simulated()
    frame, truth, source, _ = _release_frame(rel)
    fp = fingerprint(frame)
    (tmp_path / "local").mkdir()
    (tmp_path / "spark").mkdir()
    mine = bulk.write_files(tmp_path / "local", frame, truth, "r", source, fp)
    theirs = spark_bulk.write_files(read(spark, rel), tmp_path / "spark", "r", fp)
    assert theirs.multiline and mine.multiline  # a key holds a line break
    assert theirs.summary == mine.summary

    def rows(files: bulk.ImportFiles) -> dict[str, list[tuple]]:
        """Per label / type, the rows with node ids replaced by what they name (label + key)."""
        named: dict[str, tuple] = {}
        out: dict[str, list[tuple]] = {}
        for label, names in files.nodes:
            header = (files.folder / names[0]).read_text().rstrip("\n").split(",")
            for name in names[1:]:
                with (files.folder / name).open(encoding="utf-8", newline="") as fh:
                    for row in csv.reader(fh):
                        rec = dict(zip(header, row, strict=True))
                        lab = label or rec.pop(":LABEL")
                        node = (lab, *(v for k, v in rec.items() if k not in (":ID", "created_at:datetime")))
                        named[rec[":ID"]] = node
                        out.setdefault(lab, []).append(node)
        for kind, names in files.relationships:
            for name in names[1:]:
                with (files.folder / name).open(encoding="utf-8", newline="") as fh:
                    out.setdefault(kind, []).extend((named[a], named[b]) for a, b in csv.reader(fh))
        return {k: sorted(v) for k, v in out.items()}

    assert rows(theirs) == rows(mine)
    assert '--nodes=Element.header.csv,Element/part-' in " ".join(theirs.arguments())


def test_cli_engine_spark_says_which_path_ran(local, store, spark, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from graphlink.cli import app

    rel = simulate_uniform(80, 3, 0.5, withhold=0.15, seed=11)  # no line breaks: Spark reads CSV rows by line
    path = tmp_path / "cli-rel.csv"
    rel.frame.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    runner = CliRunner()
    opts = ["--engine", "spark", "--spark-master", "local[2]"]
    res = runner.invoke(app, ["load", str(path), "--name", "c1", "--bulk", "always", *opts])
    assert res.exit_code == 0, res.output
    assert "by bulk import (the local database was empty)" in res.output
    res = runner.invoke(app, ["load", str(path), "--name", "c1", "--bulk", "always", *opts])
    assert res.exit_code == 0 and "already loaded (nothing changed)" in res.output, res.output
    res = runner.invoke(app, ["load", str(path), "--name", "c2", "--bulk", "always", *opts])
    assert res.exit_code != 0 and isinstance(res.exception, StoreError)
    from graphlink.cli.words import say

    msg = say(res.exception)                        # the line the CLI prints
    assert "\n" not in msg
    assert msg == ("cannot bulk-import: the local database already holds data; load with --bulk auto "
                   "(the connector) instead")
    assert "--bulk" not in str(res.exception)       # the library's own sentence names no flag
    # a new connection: the CLI's import replaced the database the fixture's driver holds bookmarks of
    with connect() as st:
        assert [r.name for r in st.list_releases()] == ["c1"]  # the refusal wrote nothing
        monkeypatch.setenv("GRAPHLINK_BULK_MIN_ROWS", "1")  # auto would bulk-import at this size, but falls back
        res = runner.invoke(app, ["load", str(path), "--name", "c2", "--bulk", "auto", *opts])
        assert res.exit_code == 0, res.output
        assert "by the Neo4j connector (the local database already holds data)" in res.output
        assert _per_label(_graph(st, "c2")) == _per_label(_graph(st, "c1"))
        assert _graph(st, "c2")["rels"] == _graph(st, "c1")["rels"]
        c1, c2 = st.release_info("c1"), st.release_info("c2")
        assert c2.load_method == "unwind" and c2.status == "loaded"  # the connector writes the UNWIND model
        assert c2.fingerprint == c1.fingerprint and c2.rows == c1.rows == len(rel.frame.drop_duplicates())
