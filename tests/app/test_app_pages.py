"""What each app page opens on, under Streamlit AppTest: defaults that fit the data model, readable link graphs,
tables without Python syntax, the Cypher examples in reading order, an Experiments page that shows a result,
the user guide, and µ-Argus's suppression counted in cells. The same pages are looked at in chromium by
tests/app/test_app_pages_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_app import APP, goto, metrics
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
#: what a table cell or a sentence must not look like: a Python dict, list, bytes or string repr, an object repr
REPR = re.compile(r"^\s*[\[{(]'|^b'|^'.*'$|<graphlink\.|\{'")


def _start(monkeypatch: pytest.MonkeyPatch, demo: str) -> AppTest:
    monkeypatch.setenv("GRAPHLINK_DEMO", demo)
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    app = AppTest.from_file(APP, default_timeout=600)
    app.run()
    assert not app.exception, app.exception
    return app


def _text(app: AppTest) -> str:
    main = app.main
    return rendered(" ".join(x.value for x in [*main.markdown, *main.caption, *main.info, *main.warning, *main.error,
                                               *main.success]))


def test_households_open_with_the_one_to_many_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    app = goto(_start(monkeypatch, "households"), "reidentification")
    methods = app.multiselect[0]
    assert methods.value == ["multiple", "true-loves"]          # REIDIT-M and the exact pairs: what applies
    app.button(key="reid_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert set(metrics(app)) == {"REIDIT-M", "Certain pairs (exact)"}    # no true loves without a matching
    # asking for the one-to-one methods too: one calm note pointing at the Data page's control, no error
    methods.set_value(["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]).run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    notes = [rendered(i.value) for i in app.main.info]
    assert len(notes) == 1, notes
    assert "REIDIT-C, REIDIT-I, REIDIT-I-K are not run" in notes[0] and "Multiplicity" in notes[0]
    assert not re.search(r"--[a-z]", _text(app))


def test_households_protect_explains_instead_of_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    app = goto(_start(monkeypatch, "households"), "protect")
    assert not app.error, [e.value for e in app.error]
    notes = [rendered(i.value) for i in app.main.info]
    assert len(notes) == 1 and "one-to-one" in notes[0] and "Multiplicity" in notes[0], notes


def test_thesis_reidentification_pairs_default_to_the_exact_method(at: AppTest) -> None:
    goto(at, "reidentification")
    assert at.multiselect[0].value == ["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]
    at.button(key="reid_run").click().run()
    assert at.selectbox(key="reid_shown").value == "true-loves"


def test_link_graph_large_release_opens_readable(monkeypatch: pytest.MonkeyPatch) -> None:
    app = goto(_start(monkeypatch, "simulated"), "linkgraph")
    assert app.slider(key="lg_hops").value == 1                # the picked person and its candidates
    text = _text(app)
    assert "The whole graph: 3,000 identified and 3,000 de-identified elements" in text
    first = re.search(r"within 1 hop\(s\): 1 identified, (\d+) de-identified, (\d+) link edges", text)
    assert first and first.group(1) == first.group(2), text   # a star: one line per candidate
    app.slider(key="lg_hops").set_value(2).run()
    drawn = re.search(r"within 2 hop\(s\): \d+ identified, \d+ de-identified, (\d+) link edges", _text(app))
    assert drawn and int(drawn.group(1)) > 120
    assert "of these link edges are not drawn" in _text(app)
    app.toggle(key="lg_every_edge").set_value(True).run()
    assert "of these link edges are not drawn" not in _text(app)
    app.radio(key="lg_mode").set_value("Whole graph").run()
    assert not app.exception, app.exception
    assert any("too many to draw readably" in rendered(i.value) for i in app.main.info)


def test_link_graph_whole_graph_only_when_small(at: AppTest) -> None:
    goto(at, "linkgraph")
    at.radio(key="lg_mode").set_value("Whole graph").run()
    assert not at.exception, at.exception
    text = _text(at)
    assert "The whole link graph: 4 identified, 4 de-identified, 5 link edges" in text


def test_secure_protocol_tables_have_no_python_syntax(at: AppTest) -> None:
    goto(at, "secure")
    at.button(key="sec_run").click().run()
    assert not at.exception, at.exception
    for step in (1, 2, 5):
        at.select_slider(key="sec_step").set_value(step).run()
        for frame in (d.value for d in at.dataframe):
            cells = [str(v) for v in frame.astype(str).to_numpy().ravel()]
            bad = [c for c in cells if REPR.search(c)]
            assert not bad, bad[:5]
            assert all(c == c.strip() and "_" not in c for c in frame.columns), list(frame.columns)
    text = _text(at)
    assert "{'" not in text and "certification of 2-unlinkability" in text
    costs = next(d.value for d in at.dataframe if "counter" in d.value.columns)   # one row per counter
    assert {"messages sent", "bytes received", "CPU seconds"} <= set(costs["counter"])
    assert {"H1", "sTTP"} <= set(costs.columns)


def test_cypher_examples_in_reading_order(at: AppTest) -> None:
    goto(at, "cypher")
    options = [o for o in at.selectbox(key="cy_example").options if o != "(none)"]
    assert options[:2] == ["trails", "reidit_c"], options[:5]
    writers = [i for i, o in enumerate(options) if "refused by this read-only console" in o]
    assert writers, options
    assert writers == list(range(len(options) - len(writers), len(options))), options   # every loader last
    assert all(o.split(" ")[0].split("·")[0].strip() in {"load", "schema", "qi_load", "qi_schema", "fingerprint_load",
                                                         "fingerprint_schema"} for o in (options[i] for i in writers))


def test_experiments_open_on_a_result(at: AppTest) -> None:
    goto(at, "experiments")
    assert not at.exception, at.exception
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart"), "no chart before Run"
    assert any("What it does" in m.value for m in at.markdown)
    assert any("Comparison with the thesis" in e.label for e in at.expander)


def test_documentation_is_the_user_guide(at: AppTest) -> None:
    goto(at, "docs")
    text = " ".join(m.value for m in at.markdown)
    assert "a user guide" in text and "The data model in plain words" in text
    for developer_words in ("benchmark", "pytest", "CONTRIBUTING"):
        assert developer_words not in text
    assert not re.search(r"(^|\s)--[a-z]", text)
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    for page in ("Data", "Trails", "Link graph", "Re-identification", "Quasi-identifiers", "Protect",
                 "Fingerprinting", "Secure protocol", "Cypher", "Experiments"):
        assert f"### {page}" in guide, page


def test_mu_argus_counts_cells_not_rows(at: AppTest) -> None:
    from graphlink.qi import datasets
    from graphlink.qi.algorithms import anonymize
    from graphlink.qi.table import encode

    goto(at, "qi")
    at.selectbox(key="qi_algorithm").set_value("mu-argus").run()
    at.button(key="qi_run").click().run()
    assert not at.exception, at.exception
    ds = datasets.load("cps1988")
    expected = anonymize(encode(ds.frame, ds.qi, ds.hierarchies), 5, "mu-argus", max_suppression=0.01).summary()
    m = metrics(at)
    assert "Rows suppressed" not in m
    assert m["Cells suppressed"] == f"{expected['suppressed_cells']:,}"
    assert any(f"{expected['unprotected_rows']:,} row(s)" in rendered(w.value) for w in at.warning)
    at.button(key="qi_compare").click().run()
    table = at.dataframe[-1].value
    row = table[table["algorithm"].str.startswith("µ-Argus")].iloc[0]
    assert row["cells suppressed"] == expected["suppressed_cells"]
    assert row["rows removed to reach k"] == expected["suppressed_to_enforce_k"]
    assert pd.isna(row["rows suppressed"])


def test_experiments_show_the_calibration_in_words(at: AppTest) -> None:
    """The calibration experiment opens on a small live run: a reliability chart per kind of visits, the attacker's
    table, both readings named in words, and the table's numbers those of the experiment's own CSV."""
    goto(at, "experiments")
    at.selectbox(key="exp_name").set_value("calibration").run()
    assert not at.exception, at.exception
    assert len(at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")) >= 2
    tables = [t.value for t in at.dataframe]
    attacker = next(t for t in tables if "Expected right" in t.columns)
    assert set(attacker["Reading"]) == {"graphlink: share of the possible assignments",
                                        "the thesis's reading: every candidate equally likely"}
    assert (attacker["Right"] <= attacker["People"]).all()
    decile = next(t for t in tables if "Predicted between" in t.columns)
    assert set(decile["Prediction inside the range"]) <= {"yes", "no"} and (decile["People"] > 0).all()
    text = " ".join(m.value for m in at.markdown)
    assert "|E" not in text and "most likely record" in text
    at.radio(key="exp_cal_level").set_value("pairs").run()
    assert not at.exception, at.exception
    assert any("Pairs" in t.value.columns for t in at.dataframe)


#: Malin 2006's reading would make every candidate of a record equally likely; here three records y1 ~ {x1, x2},
#: y2 ~ {x1, x2, x3}, y3 ~ {x2, x3} (each seen at one hospital, the people at two or three) fit three assignments,
#: and x1-y1 lies in two of them (docs/risk.md): counted by hand, x1-y1 and x3-y3 are 2/3, every other possible pair
#: 1/3, and naming each person's most likely record gets 2/3 + 1/3 + 2/3 = 5/3 people right on average.
THREE_RECORDS = "location,kind,element\n" + "\n".join(
    [f"A,identified,{x}" for x in ("x1", "x2")] + [f"B,identified,{x}" for x in ("x1", "x2", "x3")]
    + [f"C,identified,{x}" for x in ("x2", "x3")] + ["A,deidentified,y1", "B,deidentified,y2", "C,deidentified,y3"])
HAND_COUNTED = {("x1", "y1"): "0.67 (exact)", ("x1", "y2"): "0.33 (exact)", ("x2", "y1"): "0.33 (exact)",
                ("x2", "y2"): "0.33 (exact)", ("x2", "y3"): "0.33 (exact)", ("x3", "y2"): "0.33 (exact)",
                ("x3", "y3"): "0.67 (exact)"}
#: a probability as the app words it (never a bare float, never thesis notation)
PROBABILITY_WORDS = re.compile(r"^(\d\.\d\d \(exact\)|about \d\.\d\d ± \d\.\d\d \(estimated\)|not known \(too many "
                               r"candidates to estimate\)|0 \(no record fits\))$")


def _three_records(at: AppTest) -> AppTest:
    at.file_uploader(key="upload_release").set_value(("three.csv", THREE_RECORDS.encode(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _frame(app: AppTest, column: str) -> pd.DataFrame:
    """The page's table that has ``column``."""
    tables = [d.value for d in app.main.dataframe if column in d.value.columns]
    assert tables, [list(d.value.columns) for d in app.main.dataframe]
    return tables[0]


@pytest.mark.parametrize("person", ["x1", "x2", "x3"])
def test_link_graph_candidates_say_how_likely_each_pair_is(at: AppTest, person: str) -> None:
    app = goto(_three_records(at), "linkgraph")
    app.selectbox(key="lg_element").set_value(person).run()
    assert not app.exception, app.exception
    cand = _frame(app, "probability")
    assert {(person, c): p for c, p in zip(cand.candidate, cand.probability, strict=True)} == \
        {k: v for k, v in HAND_COUNTED.items() if k[0] == person}
    assert "Press and hold a line to see how likely that pair is" in _text(app)


def test_link_graph_edges_carry_their_probability_in_words(at: AppTest) -> None:
    """What the graph shows on a pressed line: each drawn edge's data holds the hand-counted probability."""
    from graphlink_app import caches
    from graphlink_app.components import graph as gview

    _three_records(at)
    loaded = at.session_state["loaded"]
    g = caches.graph(loaded.key, "auto|auto", loaded.release)
    cls = caches.classes(loaded.key, "auto|auto", loaded.release)
    els = gview.elements(cls, gview.whole(g, caches.class_index(loaded.key, "auto|auto", loaded.release)), None,
                         caches.risk(loaded.key, "auto|auto", loaded.release))
    edges = {(e["data"]["source"][2:], e["data"]["target"][2:]): e["data"]["probability"] for e in els
             if "source" in e["data"]}
    assert edges == {k: f"probability {v}" for k, v in HAND_COUNTED.items()}
    assert any(r["selector"] == "edge[probability]:active" for r in gview.stylesheet())


def test_reidentification_names_each_persons_most_likely_record(at: AppTest) -> None:
    app = goto(_three_records(at), "reidentification")
    app.button(key="reid_run").click().run()
    assert not app.exception, app.exception
    m = metrics(app)
    assert m["Expected correct re-identifications"] == "1.7"            # 5/3, exact
    assert m["People at 50 % or more"] == "2"
    # each record's candidates equally likely: y1 and y3 give 1/2 to each of theirs, so every person's best is 1/2
    assert m["Counting every candidate as equally likely"] == "1.5"
    likely = _frame(app, "most likely record")
    rows = {p: (r, w) for p, r, w in zip(likely.person, likely["most likely record"], likely.probability,
                                         strict=True)}
    assert rows["x1"] == ("y1", "0.67 (exact)") and rows["x3"] == ("y3", "0.67 (exact)")
    assert rows["x2"][1] == "0.33 (exact)" and rows["x2"][0] in {"y1", "y2", "y3"}
    assert list(likely.person[:2]) == ["x1", "x3"]                     # most likely first


def test_thesis_demo_every_person_certain(at: AppTest) -> None:
    """Figure 3.4: all four people are true loves, so each most likely record is the truth file's, with
    probability 1, and the expected number right is 4."""
    app = goto(at, "reidentification")
    app.button(key="reid_run").click().run()
    truth = pd.read_csv(ROOT / "graphlink" / "data" / "thesis_fig3_4_truth.csv")
    likely = _frame(app, "most likely record")
    assert dict(zip(likely.person, likely["most likely record"], strict=True)) == \
        dict(zip(truth.identified, truth.deidentified, strict=True))
    assert set(likely.probability) == {"1.00 (exact)"} and metrics(app)["Expected correct re-identifications"] == "4"


def test_simulated_demo_probabilities_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 3,000-subject demo has groups too large to count: estimates in words, the expected number as 'about',
    and every probability in one of the app's forms; no notation or flags on the page."""
    app = goto(_start(monkeypatch, "simulated"), "reidentification")
    app.button(key="reid_run").click().run()
    assert not app.exception, app.exception
    value = metrics(app)["Expected correct re-identifications"]
    assert re.fullmatch(r"about [\d,]+", value), value
    certain = int(metrics(app)["True loves (exact)"].replace(",", ""))
    assert certain <= int(value.split()[1].replace(",", "")) <= 3000    # every true love is one sure guess
    likely = _frame(app, "most likely record")
    assert len(likely) == 3000 and all(PROBABILITY_WORDS.match(p) for p in likely.probability)
    assert any(p.endswith("(estimated)") for p in likely.probability)
    text = _text(app)
    assert "These figures are estimates" in text and "were sampled in a limited time" in text
    assert not re.search(r"\|E_?y\||--[a-z]", text)
    goto(app, "linkgraph")
    assert all(PROBABILITY_WORDS.match(p) for p in _frame(app, "probability").probability)


def test_households_say_probabilities_are_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    app = goto(_start(monkeypatch, "households"), "reidentification")
    app.button(key="reid_run").click().run()
    text = _text(app)
    assert "is not computed for this release" in text and "read as one-to-many" in text, text
    goto(app, "linkgraph")
    assert "is not computed for this release" in _text(app)
    assert not [d for d in app.main.dataframe if "probability" in d.value.columns]
    assert not re.search(r"--[a-z]", _text(app))
