"""The app's pages speak words (AppTest; the browser test ``tests/app/test_app_notation_browser.py`` reads the same
pages in chromium): a label for every choice the library offers, numbers with thousands separators, one-to-many
wording on the Link graph page, the Secure protocol page refusing what Protect refuses, Protect's warning when more
than half of the de-identified records are withheld (the command line's threshold), the certain bar of the risk
report drawn red, and an Experiments legend with one entry per line drawn."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from graphlink import catalog
from graphlink_app.components import charts, labels, words
from tests.app.test_app_notation_browser import notation_in
from tests.app.test_app_user_text import sources
from tests.cli_runner import run_cli
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")


def _start(monkeypatch: pytest.MonkeyPatch, demo: str) -> AppTest:
    monkeypatch.setenv("GRAPHLINK_DEMO", demo)
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    return at


def _goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at: AppTest) -> str:
    return "\n".join(rendered(s) for s in sources(at))


# ------------------------------------------------------------------------------------------------ labels, numbers
@pytest.mark.parametrize(("keys", "mapping"), [
    (catalog.METHODS, labels.method_labels()), (catalog.PROTECT_METHODS, labels.protect_labels()),
    (catalog.QI_ALGORITHMS, labels.QI_ALGORITHM_LABELS), (catalog.QI_LOSSES, labels.QI_LOSS_LABELS),
    (catalog.FINGERPRINT_LOSSES, labels.FINGERPRINT_LOSS_LABELS)])
def test_every_choice_of_the_catalog_has_a_label_in_words(keys: tuple[str, ...], mapping: dict[str, str]) -> None:
    assert set(keys) <= set(mapping), set(keys) - set(mapping)
    for key in keys:
        assert not notation_in(mapping[key], mapping[key]), mapping[key]


def test_every_experiment_has_a_label() -> None:
    from graphlink.simulation.experiments.registry import load_all

    assert set(load_all()) <= set(labels.EXPERIMENT_LABELS)


@pytest.mark.parametrize(("value", "shown"), [(1210, "1,210"), (-15766, "-15,766"), (999, "999"), (None, "—"),
                                              (2_000_000, "2,000,000")])
def test_numbers_have_thousands_separators(value: int | None, shown: str) -> None:
    assert labels.number(value) == shown


# ------------------------------------------------------------------------------------------------ one page each
@pytest.mark.slow
def test_thesis_pages_hold_no_notation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page's Markdown, alerts, metrics and widget labels on the thesis demo (hidden tabs and collapsed
    expanders included: AppTest sees them all), the pages' main buttons pressed."""
    at = _start(monkeypatch, "thesis")
    press = {"reidentification": "reid_run", "protect": "protect_run", "secure": "sec_run"}
    for page in ("trails", "linkgraph", "reidentification", "protect", "secure", "experiments", "docs"):
        _goto(at, page)
        if page in press:
            at.button(key=press[page]).click().run()
        text = _text(at)
        found = notation_in(text, re.sub(r"`[^`]*`", " ", text))   # trails in code are data, not counts
        assert found == [], (page, found)


def test_sidebar_and_data_page_show_the_reading_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _start(monkeypatch, "thesis")
    text = _text(at)
    assert "deidentified" not in re.sub(r"`[^`]*`", "", text.split("How the data model was decided")[-1])
    assert not re.search(r"key\s+`?[0-9a-f]{8}", text)
    assert any(m.label == "Side that may withhold" and m.value == "de-identified" for m in at.metric)


def test_link_graph_speaks_of_certain_and_possible_pairs_on_a_one_to_many_release(
        monkeypatch: pytest.MonkeyPatch) -> None:
    at = _goto(_start(monkeypatch, "households"), "linkgraph")
    shown = {m.label for m in at.metric}
    assert {"Certain pairs", "Possible pairs"} <= shown
    assert not {"Maximum matching size", "True loves (certain pairs)", "Allowed edges"} & shown
    legend = " ".join(m.value for m in at.markdown if "legend" in m.value)
    assert "consistent assignment" in legend and "maximum matching" not in legend.lower()
    assert "true love" not in legend.lower()
    table = at.dataframe[0].value
    assert not table["edge class"].str.contains("True love|maximum matching", case=False).any()


def test_reidentification_names_certain_pairs_not_true_loves_on_a_one_to_many_release(
        monkeypatch: pytest.MonkeyPatch) -> None:
    at = _goto(_start(monkeypatch, "households"), "reidentification")
    at.button(key="reid_run").click().run()
    assert not at.exception
    assert "Certain pairs (exact)" in {m.label for m in at.metric}
    text = " ".join(rendered(x.value) for x in [*at.main.markdown, *at.main.caption, *at.main.info])
    assert "true love" not in text.lower().replace("no true love", "") and "maximum matching" not in text
    assert "consistent assignment" in text


def test_link_graph_keeps_matchings_on_a_one_to_one_release(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _goto(_start(monkeypatch, "thesis"), "linkgraph")
    assert {"Maximum matching size", "True loves (certain pairs)"} <= {m.label for m in at.metric}


def test_secure_protocol_refuses_what_protect_refuses_in_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _start(monkeypatch, "households")
    _goto(at, "protect")
    protect = [i.value for i in at.info if "does not apply" in i.value]
    _goto(at, "secure")
    secure = [i.value for i in at.info if "does not apply" in i.value]
    assert protect and secure, (protect, secure)
    # the same reason in the same words; protection adds that keep-most protects one-to-many releases elsewhere
    assert protect[0].split("does not apply", 1)[1] == secure[0].split("does not apply", 1)[1] + words._MANY_ELSEWHERE
    assert "Keep-most" in protect[0] and "Keep-most" not in secure[0]
    assert "one-to-many" in secure[0]
    assert not any(b.key == "sec_run" for b in at.button), "the protocol must not be offered"
    for text in (*protect, *secure):
        assert not notation_in(text, text), text


def test_secure_protocol_refuses_identified_withholding_like_protect() -> None:
    from graphlink.diagnostics import Diagnostic

    d = Diagnostic("unlink-identified-withholding", "library sentence (Definition 21)",
                   {"locations": ["L1", "L2"], "count": 2})
    text = words.protect_refusal(d)
    assert "does not apply" in text and "L1, L2" in text and "Definition" not in text


def test_secure_protocol_runs_on_a_one_to_one_release(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _goto(_start(monkeypatch, "thesis"), "secure")
    at.button(key="sec_run").click().run()
    assert not at.exception
    assert at.success or at.error     # completed, or aborted by the sTTP: the run happened


def test_protect_warns_when_more_than_half_is_withheld_like_the_cli(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """The thesis demo at k = 2 with forced deduplication withholds 6 of its 10 de-identified records: the CLI
    notes it, and so must the page."""
    cli = run_cli("unlink", str(ROOT / "graphlink" / "data" / "thesis_fig3_4.csv"), "--k", "2", "--method",
                  "force-dedup", "--out", str(tmp_path / "out.csv"))
    assert cli.returncode == 0, cli.stderr
    assert "more than half of the de-identified records were withheld" in cli.stderr
    at = _goto(_start(monkeypatch, "thesis"), "protect")
    at.number_input(key="protect_k").set_value(2)
    at.selectbox(key="protect_method").set_value("force-dedup")
    at.button(key="protect_run").click().run()
    warned = [w.value for w in at.warning if "More than half of the de-identified records were withheld" in w.value]
    assert warned and "6 of 10" in warned[0], [w.value for w in at.warning]


@pytest.mark.parametrize(("withheld", "before", "warns"), [(5, 10, False), (6, 10, True), (10, 10, True),
                                                           (0, 0, False), (1013, 1210, True)])
def test_withholding_note_has_the_cli_threshold(withheld: int, before: int, warns: bool) -> None:
    assert (words.withholding_note(withheld, before) is not None) == warns == \
        (withheld * 2 > before or (before > 0 and withheld >= before))


# ------------------------------------------------------------------------------------------------ charts
def test_the_certain_bar_is_red_and_labelled() -> None:
    hist = pd.DataFrame({"candidates": ["1", "2", "5+"], "people": [3, 1500, 40000]})
    spec = charts.candidate_histogram(hist).to_dict()
    bars = spec["layer"][0]
    colour = bars["encoding"]["color"]
    assert colour["condition"]["value"] == charts.OKABE_ITO["vermillion"]
    assert "'1'" in colour["condition"]["test"] or '"1"' in colour["condition"]["test"]
    assert colour["value"] != colour["condition"]["value"]
    assert spec["layer"][1]["mark"]["type"] == "text"                     # every bar carries its count
    assert bars["encoding"]["y"]["scale"]["type"] == "sqrt"               # 3 beside 40,000 stays visible


def test_experiments_legend_has_one_entry_per_line_drawn() -> None:
    long = pd.DataFrame({"locations": [2, 3] * 4, "value": [1, 2, 1, 2, 0, 1, 3, 4],
                         "series": ["certain, trails alone"] * 2 + ["quasi-identifiers alone"] * 2
                         + ["b"] * 2 + ["c"] * 2})
    merged = charts.merge_equal_series(long, ["locations"])
    assert merged["series"].nunique() == 3
    assert "certain, trails alone = quasi-identifiers alone" in set(merged["series"])
    assert len(merged) == 6


def test_skipped_certification_gives_its_size_as_data() -> None:
    """The sTTP's skipped certification carries the pair count and the limit as data (the page words them; the
    technical reason stays for experts)."""
    import graphlink as gl
    from graphlink.secure.api import release_sets
    from graphlink.secure.protocol import run_stranon

    names, gamma, omega = release_sets(gl.thesis_example())
    res = run_stranon({c: (gamma[c], omega[c]) for c in names}, 2, "greedy-dedup-secure", certify_limit=1)
    cert = res.certification
    assert cert["checked"] is False and cert["limit"] == 1 and cert["pairs"] > 1


def test_protect_says_whose_result_it_is_when_keep_most_runs_out_of_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's time budget (``graphlink_app.caches.APP_KEEP_BUDGET``) set to nothing: keep-most stops at its
    first failed audit on the thesis demo at k = 2 and the page says, in words, that the result is another certified
    one."""
    import graphlink_app.caches

    monkeypatch.setattr(graphlink_app.caches, "APP_KEEP_BUDGET", 0.0)
    graphlink_app.caches.protect.clear()        # a cached keep-most run of another test would hide the budget
    at = _goto(_start(monkeypatch, "thesis"), "protect")
    at.number_input(key="protect_k").set_value(2)
    at.selectbox(key="protect_method").set_value("keep-most")
    at.button(key="protect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    said = [i.value for i in at.info if i.value.startswith("Returned:")]
    assert said == ["Returned: Keep-most did not certify within 0 s (1 audit round); the result is the integer "
                    "program's solution, which passes the exact audit."], [i.value for i in at.info]
    assert any("yes (certified)" in str(m.value) for m in at.metric)
