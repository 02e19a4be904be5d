"""Words at the edge: the library's messages name no command-line flag; the CLI words its diagnostics with its
flags, the app with its own controls, and no page of the app shows a flag on the demo releases."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import graphlink as gl
from app.components import words as app_words
from graphlink.cli import words as cli_words
from graphlink.diagnostics import CODES, Diagnostic
from graphlink.errors import ModelAssumptionError
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parent.parent
#: a command-line flag: two dashes and a letter, not inside a word or an arrow (``-->``)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: string literals outside graphlink/cli/ that hold a flag on purpose: the arguments of programs the library
#: starts (neo4j-admin, the JVM: a string that is one flag token) and this one pointer at a set-up script
SETUP_SCRIPT = "bash scripts/setup-neo4j.sh --force"
#: functions that build a whole graphlink command line as data (the report's reproduction commands, shown as code)
COMMAND_BUILDERS = {"reproduce_command"}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def flag_literals(root: Path) -> list[str]:
    """``path:line: text`` of every string literal (f-string parts included) under ``root`` outside ``cli/``
    that names a flag, docstrings and comments aside (comments are no literals)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        builders = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in COMMAND_BUILDERS
                    for n in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) in builders:
                continue
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docs:
                continue
            text = node.value
            if re.fullmatch(r"--[a-z][\w-]*(=\S*)?", text) or SETUP_SCRIPT in text:   # a program's argument
                continue
            if FLAG.search(text):
                found.append(f"{rel}:{node.lineno}: {text[:100]!r}")
    return found


def test_no_message_of_the_library_names_a_cli_flag() -> None:
    assert flag_literals(ROOT / "graphlink") == []


def test_the_scan_finds_a_flag_in_a_message(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""Docstrings may say --method."""\n# so may comments: --reserved\n'
                                   'def f(x):\n    """--k in a docstring."""\n'
                                   '    raise ValueError(f"state {x} with --multiplicity one-to-one")\n'
                                   'ARGS = ["--nodes=", "-->", "a-b"]\n')
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "c.py").write_text('X = "use --method multiple"\n')
    assert [line.split(":")[1] for line in flag_literals(tmp_path)] == ["5"]


def _raised_codes() -> set[str]:
    """Every code the library names in a ``Diagnostic(...)`` it builds."""
    codes = set()
    for path in (ROOT / "graphlink").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Diagnostic" and node.args and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                codes.add(node.args[0].value)
    return codes


def test_every_code_the_library_builds_is_listed_and_worded_without_flags_by_the_app() -> None:
    raised = _raised_codes()
    assert raised and raised <= set(CODES), raised - set(CODES)
    data = {"stated_many": False, "one_to_many": False, "other": "batched transactions", "side": "identified",
            "option": "reserved", "choices": ["auto", "none"], "value": "x"}
    for code in CODES:
        d = Diagnostic(code, "something is wrong", data, remedy="do this")
        assert not FLAG.search(app_words.say(d)), code
        assert not FLAG.search(str(d)), code
        assert not FLAG.search(app_words.say(ModelAssumptionError(diagnostic=d))), code


def test_one_refusal_three_edges() -> None:
    """REIDIT-C on one-to-many data: the library's sentence names no flag, the CLI names --method and
    --multiplicity, the app its Methods and Multiplicity selectors."""
    release = gl.simulate_households(None, 0.25, locations=12, seed=3)
    with pytest.raises(ModelAssumptionError) as info:
        gl.reidentify(release, "complete")
    exc = info.value
    assert exc.diagnostic.code == "method-needs-one-to-one" and exc.diagnostic.data["method"] == "REIDIT-C"
    assert "REIDIT-C assumes one-to-one data" in str(exc) and not FLAG.search(str(exc))
    cli = cli_words.say(exc)
    assert "--method multiple" in cli and "--multiplicity one-to-one" in cli
    app = app_words.say(exc)
    assert "'Methods'" in app and "'Multiplicity' one-to-one on the Data page" in app and not FLAG.search(app)
    assert str(exc).split(";")[0] == cli.split(";")[0] == app.split(";")[0]     # the same problem, other remedy


def test_a_broken_model_is_a_diagnostic_with_data() -> None:
    """x and y share trail 11 and only n has it: Hall's condition fails; the diagnostic says which side, how many
    and which elements."""
    import pandas as pd

    frame = pd.DataFrame({"location": list("AAAABBBB"), "kind": ["identified"] * 2 + ["deidentified"] * 2
                          + ["identified"] * 2 + ["deidentified"] * 2, "element": list("xynmxynp")})
    res = gl.reidentify(gl.build_trails(gl.read_release(frame), "none"), "true-loves")
    d = res.summary.diagnostic
    assert res.summary.model_ok is False and d.code == "hall-fails"
    assert d.data["sides"] == {"deidentified": 2, "identified": 1} and d.data["first"]["identified"] == ["y"]
    assert "--reserved identified" in cli_words.say(d) and not FLAG.search(str(d))


def test_model_sentence_and_details() -> None:
    m = gl.build_trails(gl.thesis_example()).model
    assert cli_words.model_line(m) == ("Model: each de-identified record belongs to one identified person "
                                       "(one-to-one); locations may withhold de-identified records.")
    details = cli_words.model_details(m)
    assert "|ω_c| ≤ |γ_c|" in details and "from the per-location sizes" in details
    assert "|" not in m.sentence and "Lemma" not in m.sentence


# ------------------------------------------------------------------------------------------------ the app
PAGES = ["data", "trails", "linkgraph", "reidentification", "protect"]


def _texts(at: object) -> list[str]:
    """What the page shows as text: Markdown, captions, alerts, metrics, expander labels, table cells."""
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "title", "subheader", "header"):
        out += [rendered(str(el.value)) for el in getattr(at, kind)]
    out += [rendered(f"{m.label} {m.value}") for m in at.metric]
    out += [rendered(str(e.label)) for e in at.expander]
    for df in at.dataframe:
        frame = df.value
        out += [str(c) for c in frame.columns]
        out += [str(v) for v in frame.select_dtypes(include=["object", "string"]).to_numpy().ravel()]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("demo", ["thesis", "simulated", "households"])
def test_no_page_shows_a_cli_flag_on_the_demo_releases(demo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page of the release analyses on each demo release, the Re-identification page run with every
    method that applies (on the households demo REIDIT-C/-I are not run: the note points at the app's
    Multiplicity selector)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GRAPHLINK_DEMO", demo)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    shown = []
    for page in PAGES:
        at.switch_page(f"app/pages/{page}.py").run()
        if page == "reidentification":
            if demo == "households":          # ask for every method: the one-to-one ones are declined in words
                at.multiselect[0].set_value(["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]).run()
            at.button(key="reid_run").click().run()
        assert not at.exception, (page, at.exception)
        shown += [(page, t) for t in _texts(at)]
    assert [(p, t) for p, t in shown if FLAG.search(t)] == []
    assert any("Model:" in t for p, t in shown if p == "data")          # the scan saw the pages' text
    assert any(t == "Re-identified" for p, t in shown if p == "reidentification")  # and the summary table
    if demo == "households":
        notes = [t for p, t in shown if p == "reidentification" and "not run on this release" in t]
        assert notes and all("Multiplicity" in t for t in notes)
