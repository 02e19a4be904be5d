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


#: the engine boundary as docs/engines.md documents it: data primitives only (the analyses run on the parts; the
#: matrices and the overview are the trails' own)
DOCUMENTED = ["read", "trails", "parts", "write_pairs", "store"]


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
    result, classes = engine.parts(rel, tr).audit(2)
    assert result.to_dict() == audit(classify_edges(build_linkgraph(ref_tr)), 2).to_dict()
    assert classes is not None and tr.matrices() is tr
    assert engine.parts(rel, tr).writer(registry.get("complete")) is None     # the pairs are here already


def test_no_engine_offers_command_plumbing():
    """``--out``'s check, ``graphlink load`` and the trails' matrices and overview are no engine methods: the
    output's kind of name, the store and the trails decide them, whichever engine computed (docs/engines.md)."""
    for name in engines.NAMES:
        engine = engines.get(name, master="local[1]")
        assert [m for m in ("check_out", "load", "matrices", "summary", "audit") if hasattr(engine, m)] == []


def test_out_is_checked_by_its_kind_of_name(tmp_path):
    """Before any engine starts: one file follows the rules of every file a command writes (an input is never
    written over), a local folder of parts must be new, a URI is the writer's to check."""
    from graphlink.errors import ReleaseError
    from graphlink.io.pairs import check_pairs_out, one_file

    release = tmp_path / "release.csv"
    release.write_text("location,kind,element\n", encoding="utf-8")
    assert [one_file(o) for o in ("p.csv", "p.parquet", "p", "p/", "p.parquet/", "s3a://b/p.csv")] == \
        [True, True, False, False, False, False]
    with pytest.raises(ReleaseError, match="same file"):
        check_pairs_out(str(release), [release])
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(ReleaseError, match="folder"):
        check_pairs_out(str(tmp_path / "dir.csv"), [])      # a folder is not one file
    for existing in (str(tmp_path), f"{tmp_path}/"):
        with pytest.raises(ValueError, match="new folder of parts"):
            check_pairs_out(existing, [])
    (tmp_path / "old.csv").write_text("x\n", encoding="utf-8")
    check_pairs_out(str(tmp_path / "old.csv"), [release])   # a file that is no input is replaced whole
    (tmp_path / "old").write_text("x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="new folder of parts"):
        check_pairs_out(str(tmp_path / "old"), [release])   # no ending: Spark's folder of parts, so new only
    check_pairs_out(str(tmp_path / "new.csv"), [release])
    check_pairs_out(f"{tmp_path / 'new'}/", [release])
    check_pairs_out("s3a://bucket/pairs", [release])


@pytest.mark.parametrize("ending", ["", ".parquet"])
def test_the_local_engine_writes_a_folder_of_parts_for_a_folder_name(tmp_path, ending):
    """``--out DIR/`` is a folder of parts on every engine (the local engine writes one part, as Spark lays its
    parts out); a plain name stays one file."""
    import pandas as pd

    from graphlink.analysis.reidit import reidentify
    from graphlink.errors import ReleaseError

    engine = engines.get("local")
    rel, tr = engine.trails(FIG, truth=TRUTH)
    result = reidentify(engine.parts(rel, tr), "true-loves")
    cols = ["identified", "deidentified"]
    folder = tmp_path / f"pairs{ending}"
    engine.write_pairs(tr, result, cols, f"{folder}/")
    parts = sorted(folder.iterdir())
    assert [p.name for p in parts] == ["part-00000." + ("parquet" if ending else "csv")]
    got = pd.read_parquet(parts[0]) if ending else pd.read_csv(parts[0], dtype=str)
    assert sorted(map(tuple, got.to_numpy().tolist())) == \
        sorted(map(tuple, result.pairs[cols].astype(str).to_numpy().tolist()))
    with pytest.raises(ReleaseError, match="exists"):
        engine.write_pairs(tr, result, cols, f"{folder}/")
    engine.write_pairs(tr, result, cols, str(tmp_path / "plain"))
    assert (tmp_path / "plain").is_file() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_audit_runs_on_the_parts():
    """The local parts' audit is the library's exact audit (Def. 19) of their link graph, the one-to-many
    reading included, on the trails or on a link graph given; the classes it returns are the graph's."""
    from graphlink.analysis.audit import audit
    from graphlink.analysis.reidit import LocalParts
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_households

    households = simulate_households(12, 0.4, locations=6, reserved="none", seed=3)
    for rel, multiplicity in ((read_release(FIG, truth=TRUTH), "one-to-one"), (households, "one-to-many")):
        tr = build_trails(rel, "auto", multiplicity)
        graph = build_linkgraph(tr)
        for k in (1, 2, 3):
            want = audit(graph, k).to_dict()
            for data in (tr, graph):
                got, classes = LocalParts(data).audit(k)
                assert got.to_dict() == want
                assert audit(classes, k).to_dict() == want
                assert hasattr(classes, "class_possible") == (multiplicity == "one-to-many")


def test_the_overview_is_the_trails_own():
    """``graphlink.io.trails.overview`` summarises the core trails itself and hands any other trails to their own
    ``overview`` (Spark's, from its twin classes); ``matrices()`` of the core trails are the trails."""
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails
    from graphlink.io.trails import overview, summarize

    tr = build_trails(read_release(FIG), "auto")
    mine = overview(tr, top=2, preview=3)
    assert mine.to_dict() == summarize(tr, top=2, preview=3).to_dict() and tr.matrices() is tr

    class Elsewhere:
        def overview(self, *, top, preview):
            return ("own", top, preview)

    assert overview(Elsewhere(), top=4, preview=1) == ("own", 4, 1)  # type: ignore[arg-type,comparison-overlap]


def test_the_store_loads_a_release_by_its_own_loader():
    """``graphlink load`` is the engine's ``read`` plus the store's ``load``: a release with its own loader
    (Spark's) loads itself, any other goes through ``Store.load_release``."""
    from graphlink.store.neo4j import load

    calls = []

    class FakeStore:
        def load_release(self, release, name=None, progress=None, *, replace=False, bulk="auto"):
            calls.append(("store", release, name, replace, bulk))
            return "report"

    class OwnLoader:
        def load_into(self, store, name=None, *, replace=False, bulk="auto", progress=None):
            calls.append(("own", store, name, replace, bulk))
            return "own report"

    store, own = FakeStore(), OwnLoader()
    assert load(store, "core release", name="a", bulk="never") == "report"  # type: ignore[arg-type]
    assert load(store, own, name="b", replace=True) == "own report"  # type: ignore[arg-type]
    assert calls == [("store", "core release", "a", False, "never"), ("own", store, "b", True, "auto")]


#: a command asking which engine it has: the Spark choice, a Spark import, a test of the engine's name
BRANCHES = r"EngineOpt\.spark|engines\.spark|engines import spark|cli import spark|\beng(ine)?\.name\s*[!=]="


def test_commands_never_branch_on_the_engine():
    """The commands get an engine once and call it: no ``EngineOpt.spark`` test, no Spark import and no question
    about the engine's name in them."""
    offenders = []
    for path in sorted((ROOT / "graphlink" / "cli").rglob("*.py")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(BRANCHES, line):
                offenders.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert offenders == []
