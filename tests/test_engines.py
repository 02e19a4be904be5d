"""The one engine interface (graphlink/engines/protocol.py): both engines implement it, ``engines.get`` picks one
by name, the local engine returns what the library returns, and the commands never branch on the engine's name.

The Spark engine's results are checked against the local engine's in tests/test_spark.py (through the CLI, which
now calls every engine through this interface)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphlink import engines
from graphlink.engines.protocol import Engine
from graphlink.io.examples import DATA

ROOT = Path(__file__).resolve().parents[1]
FIG = DATA / "thesis_fig3_4.csv"
TRUTH = DATA / "thesis_fig3_4_truth.csv"


@pytest.mark.parametrize("name", engines.NAMES)
def test_every_engine_implements_the_protocol(name):
    engine = engines.get(name, master="local[1]")
    assert isinstance(engine, Engine)
    assert engine.name == name
    missing = [m for m in ("trails", "matrices", "summary", "reidentify", "audit", "check_out", "writes_direct",
                           "write_direct", "write_pairs", "store", "load") if not callable(getattr(engine, m, None))]
    assert missing == []


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="local, spark"):
        engines.get("dask")


def test_local_engine_is_the_library():
    """Same pairs, summary and audit as the library's own calls on the Fig. 3.4 release."""
    from graphlink.analysis.audit import audit
    from graphlink.analysis.matching import classify_edges
    from graphlink.analysis.reidit import reidentify
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails

    engine = engines.get("local")
    rel, tr = engine.trails(FIG, truth=TRUTH)
    ref_rel = read_release(FIG, truth=TRUTH)
    ref_tr = build_trails(ref_rel, "auto")
    assert (tr.reserved, tr.multiplicity) == (ref_tr.reserved, ref_tr.multiplicity)
    for method in ("complete", "incomplete", "true-loves"):
        got = engine.reidentify(rel, tr, method)
        want = reidentify(ref_tr, method, truth=ref_rel.truth)
        assert sorted(map(tuple, got.pairs[["identified", "deidentified"]].to_numpy().tolist())) == \
            sorted(map(tuple, want.pairs[["identified", "deidentified"]].to_numpy().tolist()))
        assert got.summary == want.summary
    result, classes = engine.audit(tr, 2)
    assert result.to_dict() == audit(classify_edges(build_linkgraph(ref_tr)), 2).to_dict()
    assert classes is not None and engine.matrices(tr) is tr
    assert engine.writes_direct(tr, "complete") is False


def test_spark_engine_refuses_an_existing_out_folder(tmp_path):
    """Checked before any session starts: an existing path is never written over."""
    with pytest.raises(ValueError, match="names a new folder"):
        engines.get("spark").check_out(str(tmp_path), [])
    engines.get("spark").check_out(str(tmp_path / "new"), [])
    engines.get("spark").check_out("s3a://bucket/pairs", [])


def test_commands_never_branch_on_the_engine():
    """The commands get an engine once and call it: no ``EngineOpt.spark`` test and no Spark import in them."""
    offenders = []
    for path in sorted((ROOT / "graphlink" / "cli").rglob("*.py")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"EngineOpt\.spark|engines\.spark|engines import spark|cli import spark", line):
                offenders.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert offenders == []
