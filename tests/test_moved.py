"""The flat 0.x layout's import paths still work (graphlink/_moved.py): each warns once, naming the new path, and
gives the module at its new place; the old ``graphlink.kernels`` names come from the kernels package's modules.

Checked in fresh interpreters (an old path warns only the first time a process imports it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphlink._moved import KERNEL_NAMES, MOVED, PACKAGES, new_path

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def old_paths() -> list[str]:
    """Every old module path: the entries of MOVED and, under each old package, the old name of every module its
    new package holds (read from the tree, so a module added later is covered too)."""
    paths = set(MOVED)
    for old in PACKAGES:
        folder = ROOT / Path(*MOVED[old].split("."))
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] in ("__init__", "__main__"):
                parts = parts[:-1]
            name = ".".join((old, *parts))
            if new_path(name) == ".".join((MOVED[old], *parts)):
                paths.add(name)
    return sorted(paths)


def test_no_old_path_is_a_module_of_the_tree() -> None:
    """An old path that is a file again would be imported instead of the alias: the finder comes first, but a
    module there would be dead code."""
    for old in old_paths():
        rel = Path(*old.split("."))
        assert not rel.with_suffix(".py").exists() and not (ROOT / rel / "__init__.py").exists(), old


def test_every_new_path_exists() -> None:
    for old in old_paths():
        new = Path(*new_path(old).split("."))
        assert (ROOT / new.with_suffix(".py")).is_file() or (ROOT / new / "__init__.py").is_file(), (old, new)


def test_old_paths_import_warn_once_and_give_the_new_module() -> None:
    code = f"""
import importlib, json, warnings
from graphlink._moved import new_path
out = {{}}
for old in {old_paths()!r}:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = importlib.import_module(old)
        again = importlib.import_module(old)
    new = importlib.import_module(new_path(old))
    out[old] = {{"same": first is new or getattr(first, "_module", None) is new, "again": again is first,
                "warnings": [(w.category.__name__, str(w.message)) for w in caught
                             if str(w.message).startswith(old + " has moved")],
                "new": new.__name__}}
print(json.dumps(out))
"""
    result = _run(code)
    assert set(result) == set(old_paths())
    for old, r in result.items():
        assert r["same"] and r["again"], old
        assert r["warnings"] == [["DeprecationWarning", f"{old} has moved to {r['new']}; import it from there "
                                                        "(the old path goes in a later release)"]], old


def test_old_module_paths_that_are_public_functions_stay_callable() -> None:
    """``import graphlink.audit`` binds the module to the package's attribute; ``gl.audit(...)`` still audits and
    ``gl.unlink`` is still the function's behaviour."""
    code = """
import json, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import graphlink as gl
import graphlink.audit
from graphlink.audit import AuditResult, audit
import graphlink.unlink
from graphlink.unlink import UnlinkResult
graph = gl.build_linkgraph(gl.build_trails(gl.thesis_example()))
result = gl.audit(graph, 1)
print(json.dumps({"audit": isinstance(result, AuditResult) and result.k_unlinkable,
                  "same_function": audit is gl.audit.audit,
                  "unlink_result": gl.unlink.UnlinkResult is UnlinkResult,
                  "callable": callable(gl.unlink)}))
"""
    assert _run(code) == {"audit": True, "same_function": True, "unlink_result": True, "callable": True}


def test_new_paths_do_not_warn() -> None:
    code = """
import importlib, json, pkgutil, warnings
import graphlink
names = [m.name for m in pkgutil.walk_packages(graphlink.__path__, "graphlink.")
         if not m.name.startswith(("graphlink.engines.spark", "graphlink.cli"))]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for name in names:
        importlib.import_module(name)
print(json.dumps([str(w.message) for w in caught if "has moved" in str(w.message)]))
"""
    assert _run(code) == []


@pytest.mark.parametrize("name", sorted(KERNEL_NAMES))
def test_old_kernel_names(name: str) -> None:
    code = f"""
import importlib, json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from graphlink.kernels import {name} as old
    from graphlink.kernels import {name} as again
new = getattr(importlib.import_module("graphlink.kernels.{KERNEL_NAMES[name]}"), "{name}")
print(json.dumps({{"same": old is new and again is new, "warnings": [str(w.message) for w in caught],
                  "file": [w.filename for w in caught]}}))
"""
    r = _run(code)
    assert r["same"]
    assert r["warnings"] == [f"graphlink.kernels.{name} has moved to graphlink.kernels.{KERNEL_NAMES[name]}.{name}; "
                             "import it from there (the old path goes in a later release)"]
    assert r["file"] == ["<string>"]           # the warning points at the importing line, not at graphlink


def test_kernels_package_still_raises_for_unknown_names() -> None:
    import graphlink.kernels

    with pytest.raises(AttributeError, match="no attribute 'not_a_kernel'"):
        graphlink.kernels.not_a_kernel  # noqa: B018


def test_the_warning_points_at_the_users_import() -> None:
    code = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import graphlink.reidit
print(json.dumps([(w.filename, w.lineno) for w in caught]))
"""
    assert _run(code) == [["<string>", 5]]
