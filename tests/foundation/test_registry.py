"""The method registry (graphlink/registry.py, docs/registry.md): one spec per method, read by the CLI, the app, the
advisor, the words and both engines.  A toy method registered in a fixture is found everywhere a built-in one is;
no code outside the registry branches on a method's or an engine's name."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from graphlink import catalog, engines, registry
from graphlink.analysis.advisor import advise
from graphlink.analysis.reidit import reidentify
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.errors import ModelAssumptionError
from graphlink.io.examples import DATA
from graphlink.registry import MethodError, MethodSpec
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
FIG34 = DATA / "thesis_fig3_4.csv"
TOY = "first-candidate"


def _toy_spec(**extra) -> MethodSpec:
    def first_candidate(graph):
        """Every de-identified element with its first candidate (lowest identified row) in the link graph: a toy
        heuristic, per connected component by construction.  O(E log E)."""
        import numpy as np
        import pandas as pd

        from graphlink.analysis.reidit import Reidentification
        from graphlink.analysis.results import ReidentifySummary

        ei, ej = np.asarray(graph.ei), np.asarray(graph.ej)
        order = np.lexsort((ei, ej))
        ei, ej = ei[order], ej[order]
        first = np.r_[True, ej[1:] != ej[:-1]] if len(ej) else np.zeros(0, bool)
        keys_m, keys_n = graph.trails.identified.keys, graph.trails.deidentified.keys
        rows = [(str(keys_m[i]), str(keys_n[j]), f"{keys_m[i]} is the first candidate of {keys_n[j]}")
                for i, j in zip(ei[first], ej[first], strict=True)]
        pairs = pd.DataFrame(rows, columns=["identified", "deidentified", "reason"]).astype(object)
        summary = ReidentifySummary(TOY, len(pairs), len(pairs), identified=graph.n_identified,
                                    deidentified=graph.n_deidentified)
        return Reidentification(TOY, pairs, summary)

    return MethodSpec(TOY, "reidentify", "first candidate",
                      "pairs every de-identified element with its first candidate in the link graph",
                      first_candidate, **extra)


@pytest.fixture
def toy():
    """The toy method, registered for one test and removed afterwards."""
    spec = registry.register(_toy_spec(advised=True))
    yield spec
    registry.unregister(TOY)
    assert TOY not in registry.names("reidentify")


def _expected(graph) -> set[tuple[str, str]]:
    """The oracle: each de-identified element's smallest neighbour, asked through the graph's neighbour lists."""
    out = set()
    for j in range(graph.n_deidentified):
        nb = graph.neighbours_of_deidentified(j)
        if len(nb):
            out.add((str(graph.trails.identified.keys[int(np.min(nb))]), str(graph.trails.deidentified.keys[j])))
    return out


def _pairs(result) -> set[tuple[str, str]]:
    return set(zip(result.pairs["identified"], result.pairs["deidentified"], strict=True))


# ------------------------------------------------------------------------------------------------ the registry
def test_every_method_is_registered_once_and_the_catalog_is_the_registry():
    assert catalog.METHODS == registry.names("reidentify") == (
        "complete", "incomplete", "incomplete-k", "multiple", "true-loves")
    assert catalog.PROTECT_METHODS == registry.names("protect") == ("greedy-dedup", "force-dedup", "flow-dedup",
                                                                   "keep-most")
    for kind in ("reidentify", "protect"):
        for spec in registry.specs(kind):
            assert callable(spec.resolve()), spec.name           # every lazy reference resolves
            assert spec.label and spec.description
    with pytest.raises(ValueError, match="registered already"):
        registry.register(MethodSpec("complete", "reidentify", "x", "x", "builtins:print"))


def test_validate_is_the_one_place_for_parameters_and_readings():
    with pytest.raises(MethodError) as exc:
        registry.validate("incomplete-k", k=None)
    assert exc.value.diagnostic.code == "method-parameter" and exc.value.exit_code == 2
    assert isinstance(exc.value, ValueError)                      # what the library raised before the registry
    with pytest.raises(MethodError, match="at least 1"):
        registry.validate("incomplete-k", k=0)
    with pytest.raises(MethodError) as unknown:
        registry.get("nope", "reidentify")
    assert unknown.value.diagnostic.data["choices"] == list(registry.names("reidentify"))
    assert registry.validate("incomplete-k", k=np.int64(2)).name == "incomplete-k"
    rel = read_release(FIG34)
    many = build_trails(rel, "identified", "one-to-many")
    for name in registry.names("reidentify"):
        spec = registry.get(name)
        if spec.one_to_one_only:
            with pytest.raises(ModelAssumptionError) as refused:
                registry.validate(name, trails=many, k=2)
            assert refused.value.diagnostic.code == "method-needs-one-to-one"
            assert spec.label in str(refused.value)
        else:
            registry.validate(name, trails=many, k=2)
    # the library's own entry point refuses through the same check
    with pytest.raises(ModelAssumptionError, match="REIDIT-I-K assumes one-to-one"):
        reidentify(many, "incomplete-k", k=2)


# ------------------------------------------------------------------------------------- a toy method everywhere
def test_toy_method_runs_in_the_local_engine_and_the_advisor(toy):
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    got = reidentify(graph, TOY)
    assert got.method == TOY and _pairs(got) == _expected(graph)
    assert got.summary.correct is None                             # a link graph carries no truth
    with_truth = reidentify(read_release(FIG34, truth=DATA / "thesis_fig3_4_truth.csv"), TOY)
    assert with_truth.summary.truth_pairs == 4                     # evaluated like every method
    assert advise("one-to-one", "none").methods[-1] == TOY         # after Table A.1's methods
    assert advise("one-to-many", "identified").methods == ("multiple", TOY)


def test_toy_method_is_a_cli_choice(toy):
    out = run_cli("reidentify", str(FIG34), "--method", TOY, "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    assert {(p["identified"], p["deidentified"]) for p in doc["pairs"]} == _expected(graph)
    table = run_cli("reidentify", str(FIG34), "--method", TOY)
    assert "first candidate: 4 of 4" in table.stderr               # the summary names it by its label
    bad = run_cli("reidentify", str(FIG34), "--method", "no-such-method")
    listed = bad.stderr.split("is not one of the choices (", 1)[1].split(")", 1)[0].split(", ")
    assert bad.returncode == 2 and TOY in listed                     # listed among the choices
    registry.unregister(TOY)
    gone = run_cli("reidentify", str(FIG34), "--method", TOY)
    assert gone.returncode == 2 and "is not one of" in gone.stderr


def test_toy_one_to_one_method_is_refused_on_one_to_many_data_by_the_cli():
    registry.register(_toy_spec(multiplicities=("one-to-one",)))
    try:
        out = run_cli("reidentify", str(FIG34), "--method", TOY, "--multiplicity", "one-to-many",
                      "--reserved", "identified")
        assert out.returncode == 2 and "first candidate assumes one-to-one data" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        registry.unregister(TOY)


def test_toy_method_is_in_the_app_selector(toy, at):
    from tests.app.test_app import goto, metrics

    goto(at, "reidentification")
    methods = at.multiselect[0]
    assert TOY in methods.options or "first candidate" in methods.options
    assert TOY in methods.value                                    # one-to-one and one-to-many: it applies
    methods.set_value([TOY, "true-loves"]).run()
    at.button(key="reid_run").click().run()
    assert not at.exception, at.exception
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    assert metrics(at)["first candidate"] == str(len(_expected(graph)))


@pytest.mark.spark
@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_toy_method_runs_on_spark_on_both_splits(toy, spark):
    """No Spark code of its own: the driver split runs its function on the collected graph, the component split
    per bucket of components in the executors, the pairs concatenated."""
    from graphlink.engines import spark as gs

    graph = build_linkgraph(build_trails(read_release(FIG34)))
    st_ = gs.trails(str(FIG34), spark=spark)
    for split in ("driver", "components"):
        got = gs.reidentify(gs.parts(st_, split=split), TOY)
        assert got.method == TOY and _pairs(got) == _expected(graph), split
    for split in ("driver", "components"):                         # no writer in its Spark plan: collected
        assert gs.parts(st_, split=split).writer(registry.get(TOY)) is None


# ------------------------------------------------------------------------------ no branch on a name elsewhere
def _python_files() -> list[Path]:
    return [p for d in ("graphlink", "app") for p in sorted((ROOT / d).rglob("*.py"))] + [ROOT / "streamlit_app.py"]


def _names_in(node: ast.AST, methods: set[str]) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in methods:
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in methods}
    return set()


def _is_engine_name(node: ast.AST) -> bool:
    """``engine.name``, ``eng.name``, ``self.engine.name``: an engine's name."""
    return isinstance(node, ast.Attribute) and node.attr == "name" and "eng" in ast.unparse(node.value).lower()


#: what ``--engine`` takes and the classes behind it (graphlink/engines/__init__.py)
ENGINE_NAMES = set(engines.NAMES)
ENGINE_CLASSES = {ref.rpartition(":")[2] for ref in engines.CLASSES.values()}


def _is_engine_choice(node: ast.AST) -> bool:
    """An engine named in code: ``"local"``, ``("local", "spark")``, ``EngineOpt.spark``."""
    if _names_in(node, ENGINE_NAMES):
        return True
    return isinstance(node, ast.Attribute) and node.attr in ENGINE_NAMES and "engine" in ast.unparse(node.value).lower()


def _is_engine_class_check(node: ast.AST) -> bool:
    """``isinstance(x, LocalEngine)``, ``type(x).__name__ == ...``'s cousin: a branch on which class an engine is."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            and len(node.args) == 2):
        return False
    kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
    return any(isinstance(k, ast.Name | ast.Attribute) and ast.unparse(k).rpartition(".")[2] in ENGINE_CLASSES
               for k in kinds)


def branches_on_names(source: str, methods: set[str]) -> list[tuple[int, str]]:
    """Comparisons with a registered method's name (``x == "complete"``, ``x in ("incomplete", ...)``), maps keyed
    by two or more method names with text values (a label table), and branches on which engine runs: an engine's
    name compared with anything, anything compared with an engine's name (``name == "local"``,
    ``opt is EngineOpt.spark``), and ``isinstance`` with an engine class.  What an engine can do is a capability
    of the Engine protocol (graphlink/engines/protocol.py), never its name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, sides[:-1], sides[1:], strict=True):
                equal = isinstance(op, ast.Eq | ast.NotEq) and (_names_in(left, methods) | _names_in(right, methods))
                member = isinstance(op, ast.In | ast.NotIn) and _names_in(right, methods)
                engine = any(_is_engine_name(x) or _is_engine_choice(x) for x in (left, right))
                if equal or member or engine:
                    found.append((node.lineno, ast.unparse(node)))
        elif _is_engine_class_check(node):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in methods}
            texts = all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.values)
            if len(keys) >= 2 and texts:
                found.append((node.lineno, ast.unparse(node)[:80]))
    return sorted(set(found))


def test_the_checker_catches_what_the_old_test_missed():
    """The old check (tests/engines/test_engines.py) looked for ``EngineOpt.spark`` in the CLI only.  Looking a name up
    in a collection of results (``"true-loves" in results``) is no branch and other vocabularies (``"index"``) are not
    methods: neither is flagged."""
    methods = set(registry.names("reidentify")) | set(registry.names("protect"))
    bad = '''
if method == "complete": pass
if m in ("incomplete", "incomplete-k"): pass
where = "" if engine.name == "local" else "x"
LABELS = {"complete": "REIDIT-C", "incomplete": "REIDIT-I"}
ok = method == "index" or "true-loves" in opts
'''
    assert [line for line, _ in branches_on_names(bad, methods)] == [2, 3, 4, 5]


def test_the_checker_catches_every_branch_on_an_engine():
    """The old code's branches (graphlink/cli/commands/core.py's ``where``, graphlink/engines/__init__.py's
    ``if name == "local"`` before the registry) and their disguises are caught; the engine's capabilities, its name
    in a message and the factory's table lookup are not."""
    methods = set(registry.names("reidentify"))
    old = '''
where = "" if engine.name == "local" else f" in {engine.name.capitalize()}"
if name == "local": pass
if e.name != "spark": pass
if backend in ("local", "spark"): pass
if opt is EngineOpt.spark: pass
if isinstance(e, LocalEngine): pass
if isinstance(e, (int, backend.SparkEngine)): pass
where = engine.where
if qi_links is not None and not engine.constrains_links: pass
msg = f"drop --engine {engine.name}"
if name not in CLASSES: pass
url_local = url.startswith("local")
'''
    assert [line for line, _ in branches_on_names(old, methods)] == [2, 3, 4, 5, 6, 7, 8]


def test_the_checker_fails_on_the_last_engine_branch_of_the_old_cli():
    """The line graphlink/cli/commands/core.py had before ``Engine.where`` took its place, in its function."""
    old = '''
def _trails(engine, release):
    where = "" if engine.name == "local" else f" in {engine.name.capitalize()}"
    with step(f"reading {release} and building trails{where}"):
        return engine.trails(release)
'''
    new = old.replace('where = "" if engine.name == "local" else f" in {engine.name.capitalize()}"',
                      "where = engine.where")
    assert [line for line, _ in branches_on_names(old, set())] == [3]
    assert branches_on_names(new, set()) == []


def test_no_branch_on_a_method_or_engine_name_outside_the_registry():
    methods = set(registry.names("reidentify")) | set(registry.names("protect"))
    offenders = []
    for path in _python_files():
        if path == ROOT / "graphlink" / "registry.py":
            continue
        for line, text in branches_on_names(path.read_text(encoding="utf-8"), methods):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert offenders == []
