"""Every table the app shows leaves a missing cell empty, never "None" or "nan" (AppTest, every page).

Streamlit draws a missing value (None, NaN, pd.NA) as the word "None" unless the table sets a placeholder;
the pages go through ``app.components.tables.show_table``, which sets it to the empty string. A table with
missing cells and no such placeholder, or a cell holding the text of a missing value, is a failure.
"""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

#: texts that mean "missing" when they end up in a cell as a string
MISSING_WORDS = {"None", "none", "nan", "NaN", "<NA>", "NaT"}


def _open(app: AppTest, page: str) -> AppTest:
    app.switch_page(f"app/pages/{page}.py").run()
    assert not app.exception, app.exception
    return app


def _blank(el: object) -> bool:
    proto = el.proto  # type: ignore[attr-defined]
    return proto.HasField("placeholder") and proto.placeholder == ""


def table_problems(app: AppTest) -> list[str]:
    """What would show as "None"/"nan" in the tables now on screen."""
    problems = []
    for i, el in enumerate(app.dataframe):
        frame: pd.DataFrame = el.value
        missing = [str(c) for c in frame.columns[frame.isna().any().to_numpy()]]
        if missing and not _blank(el):
            problems.append(f"table {i}: missing cells in {missing} are drawn as 'None'")
        text = frame.select_dtypes(include=["object", "string"])
        words = [str(c) for c in text.columns[text.isin(MISSING_WORDS).any().to_numpy()]]
        if words:
            problems.append(f"table {i}: the text of a missing value in {words}")
    return problems


def test_reidentification_summary_has_titled_columns_and_no_blank_cell(at: AppTest) -> None:
    """Built from each method's ReidentifySummary: titled columns, rounded numbers, and a measure that does not
    apply shows a dash (only REIDIT-I-K has a k); REIDIT-I-K's re-identified count shows (4 on Fig. 3.4)."""
    _open(at, "reidentification")
    at.button(key="reid_run").click().run()
    assert not at.exception, at.exception
    summary = next(el for el in at.dataframe if "measure" in el.value)   # one column per method
    frame = summary.value.set_index("measure").T
    assert not [c for c in frame.columns if "_" in str(c)]          # titled, no snake_case
    assert frame.loc["REIDIT-I-K", "k"] == "2" and frame.loc["REIDIT-I-K", "Re-identified"] == "4"
    assert (frame["k"] == "—").sum() == len(frame) - 1 == 4
    assert frame.loc["True loves (exact)", "Precision"] == "100.0 %"    # the demo's ground truth
    assert not (frame.isna() | (frame == "")).any().any()
    assert table_problems(at) == []


def test_secure_message_log_leaves_missing_owners_empty(at: AppTest) -> None:
    _open(at, "secure")
    at.button(key="sec_run").click().run()
    assert not at.exception, at.exception
    frames = [el for el in at.dataframe if el.value.isna().to_numpy().any()]
    assert frames, "the message log has messages without an owner: some table must have missing cells"
    assert all(_blank(el) for el in frames)
    assert table_problems(at) == []


PAGES = {
    "data": [],
    "trails": [],
    "linkgraph": [("radio", "lg_side", "deidentified"), ("selectbox", "lg_element", "gatc")],
    "reidentification": [("button", "reid_run", None), ("button", "loo_run", None)],
    "protect": [("number_input", "protect_k", 2), ("button", "protect_run", None),
                ("button", "protect_sweep", None)],
    "secure": [("button", "sec_run", None), ("select_slider", "sec_step", 3)],
    "experiments": [("selectbox", "exp_name", "scaling"), ("number_input", "exp_runs", 1),
                    ("button", "exp_run", None)],
    "fingerprint": [("button", "fp_plan", None), ("multiselect", "fp_sim_who", ["R1", "R2"]),
                    ("button", "fp_simulate", None)],
}


@pytest.mark.parametrize("page", list(PAGES))
def test_no_table_on_any_page_shows_none(at: AppTest, page: str) -> None:
    _open(at, page)
    seen = len(at.dataframe)
    for kind, key, value in PAGES[page]:
        widget = getattr(at, kind)(key=key)
        (widget.click() if kind == "button" else widget.set_value(value)).run()
        assert not at.exception, at.exception
        assert table_problems(at) == [], (page, key)
        seen = max(seen, len(at.dataframe))
    assert seen > 0 and table_problems(at) == []


@pytest.mark.neo4j
def test_cypher_nulls_are_empty_cells(neo4j_env: str, at: AppTest) -> None:
    _open(at, "cypher")
    if any("No Neo4j server is connected" in w.value or "unavailable in this build" in w.value for w in at.warning):
        pytest.fail("the Cypher page found no Neo4j server although the test server is up")
    at.text_area(key="cy_query").set_value("UNWIND [1, null] AS x RETURN x, toString(x) AS s").run()
    at.button(key="cy_run").click().run()
    assert not at.exception, at.exception
    result = at.dataframe[-1]
    assert result.value["x"].isna().sum() == 1 and result.value["s"].isna().sum() == 1
    assert _blank(result) and table_problems(at) == []
