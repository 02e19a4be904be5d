"""Words at the edge: the library's messages name no command-line flag; the CLI words its diagnostics with its
flags, the app with its own controls, and no page of the app shows a flag on the demo releases."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import graphlink as gl
from graphlink.cli import words as cli_words
from graphlink.diagnostics import CODES, Diagnostic
from graphlink.errors import ModelAssumptionError
from graphlink_app.components import words as app_words
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
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


# ------------------------------------------------------------------ the edges word from code and data only
def _reworded(obj: object) -> object:
    """The same refusal with the library's sentence and remedy reworded: an edge that renders from the code and
    the data says exactly what it said before."""
    from graphlink.diagnostics import of
    from graphlink.errors import ReleaseError

    d = of(obj)
    assert d is not None
    other = Diagnostic(d.code, "REWORDED " + d.message[::-1], d.data, remedy="REWORDED remedy")
    if isinstance(obj, ReleaseError):
        return ReleaseError("REWORDED", file=obj.file, row=obj.row, column=obj.column, diagnostic=other)
    if isinstance(obj, Exception):
        return type(obj)(diagnostic=other) if isinstance(obj, ModelAssumptionError) else other
    return other


def _method_parameter_refusals() -> list[Exception]:
    from graphlink import registry

    out = []
    for given in ({"k": None}, {"k": 0}):
        with pytest.raises(registry.MethodError) as info:
            registry.validate("incomplete-k", **given)
        out.append(info.value)
    return out


def test_method_parameter_lines_come_from_the_data() -> None:
    """The CLI's --k lines used to be the library's sentence with ``k (…)`` replaced by ``--k (…)``."""
    missing, low = _method_parameter_refusals()
    assert cli_words.say(missing) == "--method incomplete-k needs --k (the candidate-set size)"
    assert cli_words.say(low) == "REIDIT-I-K: --k (the candidate-set size) must be a whole number of at least 1, got 0"
    for exc in (missing, low):
        assert cli_words.say(_reworded(exc)) == cli_words.say(exc)


def test_folder_key_line_comes_from_the_data(tmp_path: Path) -> None:
    """A folder table without an ``element`` column: the CLI names --id-key / --deid-key, and where it is."""
    from graphlink.core.release import _key_columns
    from graphlink.core.tabular import read_table
    from graphlink.errors import ReleaseError

    table_path = tmp_path / "H1.csv"
    table_path.write_text("name,dob\nann,1970\n", encoding="utf-8")
    table = read_table(table_path, expected="key columns")
    for role, flag in (("identified", "--id-key"), ("deidentified", "--deid-key")):
        with pytest.raises(ReleaseError) as info:
            _key_columns(table, None, role=role)
        line = cli_words.say(info.value)
        assert line == (f"{table_path}: cannot tell which column(s) hold the {role} key; name them with {flag} "
                        "(columns: name, dob)")
        assert "key column(s)" in str(info.value) and flag not in str(info.value)   # the library names no flag
        assert cli_words.say(_reworded(info.value)) == line


@pytest.mark.parametrize("kind", ["folder", "input", "empty"])
def test_output_lines_come_from_the_data(tmp_path: Path, kind: str) -> None:
    """The library says "the output"; the CLI says --out (it used to replace the words in the sentence)."""
    from graphlink.errors import ReleaseError
    from graphlink.fileio import check_output

    release = tmp_path / "r.csv"
    release.write_text("location,kind,element\n", encoding="utf-8")
    target = {"folder": tmp_path, "input": release, "empty": ""}[kind]
    with pytest.raises(ReleaseError) as info:
        check_output(target, inputs=[release])
    exc = info.value
    line = cli_words.say(exc)
    assert str(exc).replace("the output", "--out", 1) == line            # what the old rewrite produced
    assert cli_words.say(_reworded(exc)) == line
    with pytest.raises(ReleaseError) as named:
        check_output(target, inputs=[release], option="--pairs-out")
    assert cli_words.say(named.value).startswith(f"{named.value.where}: --pairs-out " if named.value.where
                                                 else "--pairs-out ")


def test_choice_and_method_lines_come_from_the_data() -> None:
    from graphlink import registry
    from graphlink.core.model import _invalid

    with pytest.raises(registry.MethodError) as unknown:
        registry.validate("no-such-method")
    assert cli_words.say(unknown.value).startswith("--method must be one of ")
    assert cli_words.say(_reworded(unknown.value)) == cli_words.say(unknown.value)
    choice = _invalid("reserved", "sideways", ("auto", "none", "identified", "deidentified"))
    assert cli_words.say(choice) == "--reserved must be one of auto, none, identified, deidentified"
    assert cli_words.say(_reworded(choice)) == cli_words.say(choice)


def _households_refusal() -> object:
    from graphlink.protect.certify import check_model

    release = gl.simulate_households(None, 0.25, locations=6, seed=3)
    with pytest.raises(ModelAssumptionError) as info:
        check_model(release, "one-to-many")
    return info.value.diagnostic


def test_the_secure_page_names_the_protocol_from_the_data() -> None:
    """The Secure page used to replace "Protection by withholding records does not apply" in the Protect page's
    line; now both lines are rendered from the code with their own subject."""
    d = _households_refusal()
    assert d.code in app_words.refusal_lines()
    protect, secure = app_words.protect_refusal(d), app_words.protect_refusal(d, app_words.SECURE)
    assert protect.startswith("**Protection by withholding records does not apply to this release.** ")
    assert secure.startswith(f"**{app_words.SECURE} does not apply to this release.** ")
    # the same reason; protection adds where a one-to-many release can be protected (the protocol has no such path)
    assert protect.split("** ", 1)[1] == secure.split("** ", 1)[1] + app_words._MANY_ELSEWHERE
    assert app_words.protect_refusal(_reworded(d), app_words.SECURE) == secure


def test_the_report_page_words_a_refusal_by_its_code() -> None:
    """The report page used to regex the CLI's --reserved / --multiplicity out of the error's text; it now says
    the app's remedy for the code, which a reworded library sentence keeps."""
    import pandas as pd

    from graphlink.report import build_report

    frame = pd.DataFrame({"location": ["A", "A", "A"], "kind": ["identified", "identified", "deidentified"],
                          "element": ["p", "q", "d"]})
    with pytest.raises(ModelAssumptionError) as info:
        build_report(gl.read_release(frame), 2)
    line = app_words.say(info.value)
    remedy = app_words.REMEDIES[info.value.diagnostic.code](dict(info.value.diagnostic.data))
    assert line.endswith(remedy) and "'Reserved side'" in remedy and not FLAG.search(line)
    assert app_words.say(_reworded(info.value)).endswith("; " + remedy)


def test_the_model_label_is_the_edges_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI bolded "Model:" by replacing it in the library's sentence, the Data page likewise in Markdown; both
    now set the label before the reading, whatever the sentence says."""
    from graphlink.core.model import ModelDecision
    from graphlink.io.examples import DATA
    from tests.cli_runner import run_cli

    m = gl.build_trails(gl.thesis_example()).model
    assert m.sentence == "Model: " + m.reading
    monkeypatch.setattr(ModelDecision, "sentence", property(lambda self: "REWORDED"))
    done = run_cli("trails", DATA / "thesis_fig3_4.csv")
    assert done.returncode == 0, done.stderr
    assert "Model: each de-identified record belongs to one identified person" in done.stderr


def test_a_remedy_follows_the_message_and_the_text_is_never_cut() -> None:
    """The edges used to cut the library's remedy off the end of the error's text; they now put their remedy after
    the diagnostic's message, and leave an error whose text is its own sentence whole."""
    from graphlink.diagnostics import render
    from graphlink.errors import ReleaseError

    d = Diagnostic("side-undecided", "cannot tell which side is reserved", remedy="state the reserved side")
    edges = {"side-undecided": lambda data: "pick one"}
    assert render(ModelAssumptionError(diagnostic=d), edges) == "cannot tell which side is reserved; pick one"
    located = ReleaseError(str(d), file="r.csv", row=3, diagnostic=d)
    assert render(located, edges) == "r.csv, row 3: cannot tell which side is reserved; pick one"
    own = ModelAssumptionError("the model broke; state the reserved side again", diagnostic=d)
    assert render(own, edges) == "the model broke; state the reserved side again"
    assert cli_words.say(ModelAssumptionError(diagnostic=_reworded(d))) == cli_words.say(
        ModelAssumptionError(diagnostic=Diagnostic(d.code, "REWORDED " + d.message[::-1], remedy="other")))
