"""The public Python API (``import graphlink``): lazy exports, docstring examples run as doctests on the thesis
example, and result objects that render as tables in Jupyter."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pytest

import graphlink as gl


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in gl.__all__:
        obj = getattr(gl, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__.strip()) > 40, name
    assert set(gl.__all__) <= set(dir(gl))
    with pytest.raises(AttributeError):
        gl.no_such_thing  # noqa: B018


def test_import_is_cheap() -> None:
    """Heavy modules load only when used (cold start of the CLI and notebooks)."""
    out = subprocess.run([sys.executable, "-c", "import sys, graphlink; print(sorted(m for m in "
                          "('numba', 'scipy', 'neo4j', 'pandas', 'streamlit', 'matplotlib') if m in sys.modules))"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


DOCUMENTED = ["graphlink", "thesis_example", "genphen_example", "read_release", "build_trails", "summarize_trails",
              "build_linkgraph", "reidentify", "audit", "unlink", "simulate_uniform", "connect"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run(name: str) -> None:
    """numpydoc Examples sections, run as doctests (NORMALIZE_WHITESPACE, ELLIPSIS)."""
    obj = gl if name == "graphlink" else getattr(gl, name)
    doc = obj.__doc__ or ""
    assert "Examples\n" in doc and ">>>" in doc, f"{name} has no Examples section"
    if name != "graphlink":
        assert "Returns\n" in doc or "Parameters\n" in doc, name
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = finder.find(obj, name, globs={})
    for t in tests:
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.attempted > 0 and res.failed == 0, f"{name}: {res}"


def test_results_render_as_tables_in_jupyter() -> None:
    release = gl.thesis_example()
    trails = gl.build_trails(release)
    graph = gl.build_linkgraph(trails)
    objs = {"trails": trails, "summary": gl.summarize_trails(trails), "graph": graph,
            "classes": gl.classify_edges(graph), "reid": gl.reidentify(graph, "true-loves", truth=release.truth),
            "audit": gl.audit(graph, 2), "unlink": gl.unlink(release, 2)}
    for name, obj in objs.items():
        html = obj._repr_html_()
        assert "<table" in html, name
    assert "gatc" in objs["reid"]._repr_html_() and "Dan" in objs["reid"]._repr_html_()
    assert "NOT k-unlinkable" in objs["audit"]._repr_html_()
    assert "one-to-one, de-identified reserved" in objs["trails"]._repr_html_()
