"""The Fingerprinting page in Streamlit's AppTest: plan FP's example, release, drop in leaks, see who — the page's
numbers are the library's, and FP's verdicts come out."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from graphlink.fingerprint import make_plan
from graphlink.qi import datasets
from graphlink.qi.table import encode
from tests.fp_helpers import fp_table
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
PAGE = "app/pages/fingerprint.py"


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    app = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=180)
    app.run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def metrics(app: AppTest) -> dict[str, str]:
    """Metric label -> value as the page shows them (Markdown escapes removed)."""
    return {rendered(m.label): rendered(m.value) for m in app.metric}


def test_seed_example_plan_release_and_leaks(page: AppTest) -> None:
    """FP §3.3 on the page: capacity 6, R1 (a1, b1), R2 (a0, b2); R2's release; the §3.2 leak names R2; a
    simulated leak from both recipients is coarser than neither alone and names both (collusion)."""
    page.button(key="fp_plan").click().run()
    assert not page.exception, page.exception
    m = metrics(page)
    assert m["Fingerprint capacity (upper bound)"] == "6" and m["k-anonymous nodes"] == "4"
    assert m["Usable within the bounds"] == "3" and m["Loss spread"] == "0"
    pattern = page.dataframe[0].value
    assert pattern[["recipient", "sex", "birthdate"]].values.tolist() == [["R1", 1, 1], ["R2", 0, 2]]
    page.selectbox(key="fp_release_who").set_value("R2").run()
    release = page.dataframe[1].value
    assert sorted(release["birthdate"]) == ["1970"] * 4 and sorted(release["sex"]) == ["f", "f", "m", "m"]
    assert list(release.columns) == ["sex", "birthdate", "disease"]      # the names are left out by default
    page.text_area(key="fp_leak_text").input("sex,birthdate,disease\nm,1970,chest pain\n").run()
    assert not page.exception, page.exception
    v = metrics(page)
    assert v["Attributed to"] == "R2" and v["Exact match"] == "yes" and v["Rows explained"] == "1 of 1"
    assert any("exact match" in rendered(s.value) for s in page.success)
    page.text_area(key="fp_leak_text").input("sex,birthdate\nx,1970\n").run()
    assert any("fits no node" in rendered(e.value) for e in page.error)
    page.text_area(key="fp_leak_text").input("").run()
    page.multiselect(key="fp_sim_who").set_value(["R1", "R2"]).run()
    page.button(key="fp_simulate").click().run()
    assert not page.exception, page.exception
    v = metrics(page)
    assert v["Attributed to"] == "R1, R2" and v["Exact match"] == "no" and v["Rows explained"] == "2 of 2"
    assert any("collusion" in rendered(s.value) for s in page.success)


def test_table6_unattributable_leak(page: AppTest) -> None:
    page.selectbox(key="fp_source").set_value("FP Table 6: four patients with a ZIP code").run()
    page.button(key="fp_plan").click().run()
    assert not page.exception, page.exception
    expected = make_plan(fp_table("table6"), 1, 3, loss="samarati", discretisation="exact", seed=0)
    shown = page.dataframe[0].value
    assert [tuple(r) for r in shown[["sex", "birthdate", "zip"]].values] == [r.levels for r in expected.recipients]
    page.text_area(key="fp_leak_text").input("sex,birthdate,zip\np,1970,*\n").run()
    v = metrics(page)
    assert v["Attributed to"] == "nobody" and v["Rows explained"] == "0 of 1"
    assert any("cannot be attributed" in rendered(w.value) for w in page.warning)
    assert len(page.dataframe[-2].value) == 3      # every recipient alone is a candidate


def test_cps1988_twenty_recipients(page: AppTest) -> None:
    page.selectbox(key="fp_source").set_value(datasets.SPECS["cps1988"].title).run()
    page.button(key="fp_plan").click().run()
    assert not page.exception, page.exception
    ds = datasets.load("cps1988")
    expected = make_plan(encode(ds.frame, ds.qi, ds.hierarchies), 5, 20, max_suppression=0.01, seed=0)
    m = metrics(page)
    assert m["k-anonymous nodes"] == f"{expected.capacity['k_anonymous']:,}"
    assert m["Loss spread"] == f"{expected.loss_spread['spread']:.4g}"
    assert m["Pairs jointly below k"] == f"{expected.collusion['pairs_below_k']:,} of 190"
    page.multiselect(key="fp_sim_who").set_value(["R7"]).run()
    page.button(key="fp_simulate").click().run()
    assert metrics(page)["Attributed to"] == "R7"
