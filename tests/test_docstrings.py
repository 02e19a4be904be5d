"""Docstrings are the user's first manual (CONTRIBUTING.md, "Docstrings"): every public name of ``graphlink``
(the lazy API of ``graphlink/__init__.py``) has numpydoc sections and a runnable example.  The examples
themselves run as doctests (``--doctest-modules`` over ``graphlink`` in pyproject's pytest configuration)."""

from __future__ import annotations

import inspect
import re

import pytest

import graphlink


def _public() -> list[str]:
    return [name for name in graphlink.__all__ if not name.startswith("_")]


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


def test_every_public_name_has_a_runnable_example() -> None:
    missing = [name for name in _public() if ">>> " not in _examples(inspect.getdoc(getattr(graphlink, name)) or "")]
    assert missing == [], f"public names without an Examples section with a >>> example: {missing}"


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


def test_the_section_reader_finds_what_is_there_and_nothing_else() -> None:
    doc = "Summary.\n\nParameters\n----------\nx : int\n\nExamples\n--------\n>>> 1\n1\n\nNotes\n-----\nend"
    assert _sections(doc) == {"Parameters", "Examples", "Notes"}
    assert _examples(doc).strip() == ">>> 1\n1"
    assert _examples("Summary.\n\nNotes\n-----\n>>> 1\n") == ""
