"""The one engine interface (graphlink/engines/protocol.py): both engines implement it, ``engines.get`` picks one
by name, the local engine returns what the library returns, and the commands never branch on the engine's name.

The Spark engine's results are checked against the local engine's in tests/engines/test_spark.py (through the CLI, which
now calls every engine through this interface)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from graphlink import engines, registry
from graphlink.engines.protocol import Engine
from graphlink.io.examples import DATA

ROOT = Path(__file__).resolve().parents[2]
FIG = DATA / "thesis_fig3_4.csv"
TRUTH = DATA / "thesis_fig3_4_truth.csv"


@pytest.mark.parametrize("name", engines.NAMES)
def test_every_engine_implements_the_protocol(name):
    engine = engines.get(name, master="local[1]")
    assert isinstance(engine, Engine)
    assert engine.name == name
    missing = [m for m in protocol_methods() if not callable(getattr(engine, m, None))]
    assert missing == []


def protocol_methods() -> list[str]:
    """The methods :class:`Engine` declares, in the order it declares them."""
    return [n for n, v in vars(Engine).items() if callable(v) and not n.startswith("_")]


#: the engine boundary as docs/engines.md documents it: data primitives, plus the write-back and output plumbing
#: the commands still call (docs/engines.md says which are to go)
DOCUMENTED = ["trails", "matrices", "summary", "parts", "audit", "check_out", "write_pairs", "store", "load"]


def test_the_protocol_has_only_the_documented_methods():
    """The Engine protocol is the boundary docs/engines.md draws: no algorithm (``reidentify``) is an engine method,
    and every method it has is documented there."""
    assert protocol_methods() == DOCUMENTED
    doc = (ROOT / "docs" / "engines.md").read_text(encoding="utf-8")
    assert [m for m in DOCUMENTED if f"`{m}(" not in doc] == []


def definitions(name: str) -> list[str]:
    """``file:line`` of every function or method called ``name`` defined outside the tests (an AST walk of the
    package, the app, the benchmarks and the Streamlit entry point)."""
    files = [*(ROOT / "graphlink").rglob("*.py"), *(ROOT / "app").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py"),
             ROOT / "streamlit_app.py"]
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_reidentify_is_written_once():
    """One ``reidentify``, the library's, runs the registered methods on every engine's link-graph parts; an
    engine offers data primitives (``parts``), never its own copy of the algorithm."""
    assert definitions("reidentify") == ["graphlink/analysis/reidit.py:" + str(_line_of_reidentify())]


def _line_of_reidentify() -> int:
    from graphlink.analysis import reidit

    return reidit.reidentify.__code__.co_firstlineno


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
        got = reidentify(engine.parts(rel, tr), method)
        want = reidentify(ref_tr, method, truth=ref_rel.truth)
        assert sorted(map(tuple, got.pairs[["identified", "deidentified"]].to_numpy().tolist())) == \
            sorted(map(tuple, want.pairs[["identified", "deidentified"]].to_numpy().tolist()))
        assert got.summary == want.summary
    result, classes = engine.audit(tr, 2)
    assert result.to_dict() == audit(classify_edges(build_linkgraph(ref_tr)), 2).to_dict()
    assert classes is not None and engine.matrices(tr) is tr
    assert engine.parts(rel, tr).writer(registry.get("complete")) is None     # the pairs are here already


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
