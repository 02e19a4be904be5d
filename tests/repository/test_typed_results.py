"""Public results are typed: a public function of ``graphlink`` returns a frozen dataclass with documented
attributes, not a loose dictionary whose keys a reader has to guess.

The scan (AST, no import) finds every public function or method -- its name and every enclosing class's name
without a leading underscore -- whose return annotation holds a dictionary without typed keys and values: a bare
``dict`` (also inside ``list[...]``, ``tuple[...]``, ``... | None``) or ``dict[str, Any]``.  ``dict[str, int]``
and the like are mappings, and stay.  Exempt: ``as_dict`` / ``to_dict``, the JSON payload of a typed result.
What is left is listed in ``REMAINING`` with the reason; the test holds the list (and its count) exactly, so a
new loose return fails here and a converted one must leave the list.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOSE = re.compile(r"\bdict\b(?!\[)|\bdict\[str, Any\]")
JSON_PAYLOADS = frozenset({"as_dict", "to_dict"})

#: module:qualified name -> why it still returns a loose dictionary
REMAINING: dict[str, str] = {
    # JSON payloads under another name: what a command prints with --format json, keys documented there
    "graphlink.cli.commands.core:model_dict": "the model's part of reidentify/risk --format json",
    "graphlink.fingerprint.plan:Plan.summary": "fingerprint plan --format json (to_dict without the hierarchies)",
    "graphlink.qi.result:Anonymization.summary": "qi anonymize --format json",
    "graphlink.secure.report:party_report": "the secure-demo report's JSON per party",
    "graphlink.store.writeback:Analysis.properties": "the Analysis node's properties, written to Neo4j as they are",
    "graphlink.core.release:LocationSizes.records": "rows for JSON and for pandas.DataFrame.from_records",
    # arrays handed between the layers of one computation, read only by the next step (never by a user)
    "graphlink.analysis.matching:dm_classify": "per-edge masks for classify_edges, which returns EdgeClasses",
    "graphlink.analysis.matching:twin_classify": "class-level masks for classify_edges (same contract as twin_flow)",
    "graphlink.kernels.flow:twin_flow": "the numba engine behind twin_classify (kernels hold arrays, not classes)",
    "graphlink.store.classgraph:class_arrays": "columns for the class-graph writer",
    "graphlink.engines.spark.neo4j:verdicts": "the counts beside Spark frames, for the Spark writer",
    "graphlink.protect.procedures:explicit_clean": "Procedure 8's location -> element sets, read by the pipeline",
    "graphlink.protect.procedures:reduce_databases": "Procedure 9's location -> element sets, read by the pipeline",
    "graphlink.fingerprint.plan:cluster": "the clusters of steps 8-9, read by the next planning step",
    "graphlink.registry:MethodSpec.keywords": "keyword arguments for the method's function",
    "graphlink.store.cypherlib:CypherFile.resolve_params": "Cypher parameters for the driver",
    # records whose keys are the data's own (attribute names, values), so no fixed fields exist
    "graphlink.qi.checks:Classes.smallest": "per class its QI values keyed by the table's own attributes",
    "graphlink.qi.checks:necessary_condition": "per QI attribute of the table",
    "graphlink.qi.attacks:Linkage.disclosed": "linked QI sequences keyed by the tables' own attributes",
    # files and processes read back as they were written
    "graphlink.store.bulkswap:journal": "the bulk swap's JSON journal file",
    "graphlink.store.server:read_state": "the local server's JSON state file",
    "graphlink.store.guard:ParserWorker.read": "the parser worker's JSON answer",
    # experiment and report rows, turned into tables and figures at once
    "graphlink.protect.optimal:heuristic_gap": "rows of the optimal-gap experiment's table",
    "graphlink.simulation.experiments.calibration:measure": "one population's figures, a row of the experiment",
    "graphlink.simulation.experiments.common:preset": "an experiment's settings, overridable key by key",
    "graphlink.simulation.experiments.dedup:comparison_text": "the figures quoted beside the experiment's text",
    "graphlink.secure.bounds:pairwise_bounds": "rows of the bounds table",
    # not converted yet (the next candidates): read by the CLI, the app and the QI store tests
    "graphlink.secure.api:evaluate_views": "secure-demo's views; the app's Secure page reads its keys",
    "graphlink.store.qi:table_info": "a QI table's node properties, like release_info before StoredRelease",
    "graphlink.store.qi:load_table": "a QI table's load, like load_release before LoadReport",
}


def _visit(node: ast.AST, module: str, prefix: str, found: dict[str, str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
            _visit(child, module, f"{prefix}{child.name}.", found)
        elif (isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and not child.name.startswith("_")
              and child.name not in JSON_PAYLOADS and child.returns is not None):
            annotation = ast.unparse(child.returns)
            if LOOSE.search(annotation):
                found[f"{module}:{prefix}{child.name}"] = annotation


def loose_returns(root: Path) -> dict[str, str]:
    """``{module:qualified name: annotation}`` of every public function under ``root`` returning a loose
    dictionary (module docstring).  O(source size)."""
    found: dict[str, str] = {}
    for path in sorted((root / "graphlink").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        _visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), module, "", found)
    return found


def test_public_loose_dict_returns_are_exactly_the_listed_ones() -> None:
    found = loose_returns(ROOT)
    assert "graphlink.analysis.reidit:evaluate" not in found and found      # the scan ran
    new = sorted(set(found) - set(REMAINING))
    assert not new, f"public functions returning a loose dict (return a frozen dataclass instead): {new}"
    gone = sorted(set(REMAINING) - set(found))
    assert not gone, f"REMAINING lists functions that no longer return a loose dict: {gone}"
    assert len(found) == 30


def test_the_scan_sees_methods_unions_and_containers(tmp_path: Path) -> None:
    pkg = tmp_path / "graphlink"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "from typing import Any\n"
        "def a() -> dict: ...\n"
        "def b() -> dict | None: ...\n"
        "def c() -> list[dict]: ...\n"
        "def d() -> dict[str, Any]: ...\n"
        "def e() -> dict[str, int]: ...\n"       # a typed mapping: fine
        "def _f() -> dict: ...\n"                # private: fine
        "class K:\n"
        "    def g(self) -> dict: ...\n"
        "    def to_dict(self) -> dict: ...\n"   # the JSON payload: fine
        "class _P:\n"
        "    def h(self) -> dict: ...\n", encoding="utf-8")
    assert sorted(loose_returns(tmp_path)) == ["graphlink.m:K.g", "graphlink.m:a", "graphlink.m:b", "graphlink.m:c",
                                               "graphlink.m:d"]
