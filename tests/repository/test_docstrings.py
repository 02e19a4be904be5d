"""Docstrings are the user's first manual (CONTRIBUTING.md, "Style"): every public name of ``graphlink``
(the lazy API of ``graphlink/__init__.py``) has numpydoc sections and a runnable example, and so does every name
of the wider user-facing API a notebook user calls (:data:`USER_API`: the packages' exports and the modules
docs/qi.md, docs/fingerprint.md, docs/secure.md and docs/neo4j.md show in Python).  The examples themselves run as
doctests (``--doctest-modules`` over ``graphlink`` and ``app/components`` in pyproject's pytest configuration)."""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import pytest

import graphlink

#: the user-facing API beyond ``graphlink.__all__``: module -> the public names a notebook user calls there
USER_API: dict[str, tuple[str, ...]] = {
    "graphlink.errors": ("MissingExtraError", "ProtocolError", "require"),
    "graphlink.core.release": ("LocationSizes",),
    "graphlink.analysis.matching": ("EdgeClasses",),
    "graphlink.config": ("get_config", "set_config", "config_context", "Config", "settings"),
    "graphlink.engines": ("get",),
    "graphlink.registry": ("names", "specs", "labels", "applicable", "secure_names", "get", "find", "register",
                           "validate"),
    "graphlink.analysis.advisor": ("advise",),
    "graphlink.io.trails": ("TrailSummary", "write_csv", "write_parquet"),
    "graphlink.io.pairs": ("write_pairs_csv", "write_pairs_file"),
    "graphlink.simulation.simulate": ("simulate_probabilities",),
    "graphlink.simulation.theory": ("p_unique", "var_unique_count", "sd_unique_fraction", "p_reidit_i_round1",
                                    "p_unique_heterogeneous", "p_reidit_i_round1_heterogeneous", "binary_entropy",
                                    "location_entropy", "system_entropy", "expected_entropy", "auc", "shift",
                                    "shape"),
    "graphlink.secure": ("secure_unlink",),
    "graphlink.secure.api": ("SecureUnlinkOutput",),
    "graphlink.secure.report": ("StranonResult",),
    "graphlink.secure.protocol": ("run_stranon", "partial_switch_undetected", "partial_switch_detection_bound",
                                  "grab_and_go_undetected", "dataset_ops_formula", "bandwidth_formula"),
    "graphlink.secure.unlinkability": ("external_view", "ViewAudit"),
    "graphlink.secure.bounds": ("regions", "pairwise_bounds", "Regions"),
    "graphlink.fingerprint": ("Attribution", "Discretisation", "Plan", "Recipient", "attribute", "make_plan",
                              "plan_from_nodes", "release_frame", "table_fingerprint"),
    "graphlink.report": ("LocationExposure", "ReleaseReport", "build_report", "location_exposure"),
    "graphlink.protect": ("Allocation", "Instance", "MaxRiskResult", "UnlinkResult", "UnlinkSummary", "allocate",
                          "apply_disclosure", "audit_release", "certify", "check_model", "disclosed_of",
                          "explicit_clean", "final_clean", "finish", "flow_dedup_sets", "force_dedup_sets",
                          "greedy_dedup_sets", "keep_most", "least_frequent", "reduce_databases", "unlink",
                          "unlink_keep", "unlink_max_risk", "utility"),
    "graphlink.qi.hierarchy": ("Hierarchy", "parse_csv", "read_csv", "read_dir", "write_dir", "flat", "digits",
                               "dates", "intervals", "categorical", "iupac"),
    "graphlink.qi.table": ("read_table", "encode", "QITable"),
    "graphlink.qi.checks": ("check", "k_anonymity", "equivalence_classes", "diversity", "Classes", "CheckReport"),
    "graphlink.qi.lattice": ("Lattice", "optimal", "classify", "enumerate_lattice", "evaluate", "Node",
                             "SearchResult"),
    "graphlink.qi.metrics": ("Objective", "measure", "objective_bounds", "Measures"),
    "graphlink.qi.algorithms": ("anonymize",),
    "graphlink.qi.result": ("Anonymization",),
    "graphlink.qi.risk": ("risk", "prosecutor", "journalist", "marketer", "uniqueness", "RiskSummary",
                          "AttackerRisk", "Uniqueness", "AttributeSetRisk"),
    "graphlink.qi.attacks": ("link", "shuffle", "Linkage"),
    "graphlink.qi.als": ("read_als",),
    "graphlink.qi.qitrails": ("expose", "Exposure"),
    "graphlink.store.cypherlib": ("library", "load_file", "parse_text"),
    "graphlink.store.plugins": ("never_allowed",),
}


#: the names whose example cannot run without a Neo4j server (``# doctest: +SKIP``), with the reason; the live
#: store tests (tests/store/test_store.py, marker ``neo4j``) run the same calls
SERVER_ONLY: dict[str, str] = {
    "graphlink:connect": "opens a connection: there is nothing to show without a running server",
}


def _public() -> list[str]:
    return [name for name in graphlink.__all__ if not name.startswith("_")]


def _package_exports(module: str) -> list[str]:
    """The functions and classes a package's ``__init__`` exports in ``__all__`` (constants and type aliases
    have no docstring of their own); nothing for a plain module, whose ``__all__`` may re-export plumbing."""
    mod = importlib.import_module(module)
    if not hasattr(mod, "__path__"):
        return []
    return [name for name in getattr(mod, "__all__", ())
            if inspect.isclass(getattr(mod, name)) or inspect.isfunction(getattr(mod, name))]


def _user_api() -> list[str]:
    """Every name of the user-facing API as ``module:name``, the lazy API's names under ``graphlink``: the names
    of :data:`USER_API`, and whatever else a package of it exports (so a new export needs an example too)."""
    names = [f"graphlink:{name}" for name in _public() if name != "__version__"]
    for module, listed in USER_API.items():
        names += [f"{module}:{name}" for name in dict.fromkeys([*listed, *_package_exports(module)])]
    return names


def _resolve(ref: str) -> object:
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def _sections(doc: str) -> set[str]:
    """numpydoc section titles: a line followed by a line of dashes as long as it."""
    lines = doc.splitlines()
    return {a.strip() for a, b in zip(lines, lines[1:], strict=False)
            if a.strip() and re.fullmatch(r"-+", b.strip() or "x") and len(b.strip()) == len(a.strip())}


def _examples(doc: str) -> str:
    match = re.search(r"^Examples\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, flags=re.S | re.M)
    return match.group(1) if match else ""


def test_public_names_are_the_lazy_api() -> None:
    assert set(_public()) >= set(graphlink._EXPORTS)
    assert len(_public()) > 20


def test_the_user_api_names_exist_and_are_public() -> None:
    for ref in _user_api():
        assert not ref.split(":")[1].startswith("_"), ref
        assert callable(_resolve(ref)), f"{ref} is not a function or class"


def test_every_public_name_has_a_runnable_example() -> None:
    missing = [ref for ref in _user_api() if ">>> " not in _examples(inspect.getdoc(_resolve(ref)) or "")]
    assert missing == [], f"user-facing names without an Examples section with a >>> example: {missing}"


def test_only_the_server_names_skip_their_example() -> None:
    skipping = {ref for ref in _user_api() if "+SKIP" in _examples(inspect.getdoc(_resolve(ref)) or "")}
    assert skipping == set(SERVER_ONLY)


@pytest.mark.parametrize("name", _public())
def test_numpydoc_sections(name: str) -> None:
    obj = getattr(graphlink, name)
    sections = _sections(inspect.getdoc(obj) or "")
    if inspect.isclass(obj):
        assert sections & {"Parameters", "Attributes"}, f"{name}: no Parameters or Attributes section"
    else:
        wanted = {"Parameters", "Returns"} if inspect.signature(obj).parameters else {"Returns"}
        assert wanted <= sections, f"{name}: sections {sorted(sections)}"
    assert "Examples" in sections


def test_a_package_export_is_part_of_the_user_api() -> None:
    refs = set(_user_api())
    assert "graphlink.protect:MaxRiskError" in refs            # exported by graphlink.protect, not listed
    assert "graphlink.protect:Sets" not in refs                 # a type alias: no docstring of its own
    assert not [ref for ref in refs if ref.startswith("graphlink.secure.protocol:make_parties")]   # a module


def test_the_examples_run_in_the_default_pytest_run() -> None:
    """The README's test command (plain ``pytest``) runs every docstring example of the library and of the app's
    components; never the app's pages, which run when imported."""
    options = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]["pytest"]
    options = options["ini_options"]
    assert "--doctest-modules" in options["addopts"].split()
    assert {"tests", "graphlink", "app/components"} <= set(options["testpaths"])
    assert not [p for p in options["testpaths"] if p.rstrip("/") in ("app", "app/pages")]


def test_the_section_reader_finds_what_is_there_and_nothing_else() -> None:
    doc = "Summary.\n\nParameters\n----------\nx : int\n\nExamples\n--------\n>>> 1\n1\n\nNotes\n-----\nend"
    assert _sections(doc) == {"Parameters", "Examples", "Notes"}
    assert _examples(doc).strip() == ">>> 1\n1"
    assert _examples("Summary.\n\nNotes\n-----\n>>> 1\n") == ""
