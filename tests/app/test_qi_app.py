"""The Quasi-identifiers page in Streamlit's AppTest: its numbers are the library's on Sweeney's table and CPS 1988."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from graphlink.qi import datasets
from graphlink.qi.algorithms import anonymize
from graphlink.qi.checks import check
from graphlink.qi.table import encode

ROOT = Path(__file__).resolve().parents[2]
SWEENEY = datasets.SPECS["sweeney"].title
CPS = datasets.SPECS["cps1988"].title


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    app = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=180)
    app.run()
    app.switch_page("app/pages/qi.py").run()
    assert not app.exception, app.exception
    return app


def metrics(app: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def test_sweeney_table_check_anonymize_and_compare(page: AppTest) -> None:
    page.selectbox(key="qi_source").set_value(SWEENEY).run()
    assert not page.exception, page.exception
    m = metrics(page)
    assert m["Records"] == "12" and m["k (smallest class)"] == "1" and m["Equivalence classes"] == "12"
    assert m["Records unique on the QI"] == "12" and m["Distinct ℓ-diversity"] == "1"
    page.selectbox(key="qi_algorithm").set_value("datafly").run()
    page.slider(key="qi_sup").set_value(0.0).run()
    page.button(key="qi_run").click().run()
    assert not page.exception, page.exception
    m = metrics(page)
    assert m["k of the release"] == "2"
    # Datafly with a 0% limit keeps generalizing past SW-A's year level: the library decides what it reaches
    ds = datasets.load("sweeney")
    expected = anonymize(encode(ds.frame, ds.qi, ds.hierarchies), 2, "datafly", max_suppression=0.0).summary()
    assert m["Rows suppressed"] == str(expected["suppressed_rows"]) and m["Prec"] == f"{expected['prec']:.4f}"
    page.button(key="qi_compare").click().run()
    assert not page.exception, page.exception
    table = page.dataframe[-1].value
    assert len(table) == 5 and (table["k"] >= 2).all()
    best = table.set_index("algorithm")["Prec"]
    assert best["MinGen (exact, cell-level)"] >= best["Optimal lattice search (exact)"] >= best["Datafly (Sweeney)"]


def test_cps1988_optimal(page: AppTest) -> None:
    page.selectbox(key="qi_source").set_value(CPS).run()
    ds = datasets.load("cps1988")
    rep = check(ds.frame, ds.qi, sensitive="wage")
    m = metrics(page)
    assert m["Records"] == "28,155" and m["k (smallest class)"] == str(rep.k)
    assert m["Equivalence classes"] == f"{len(rep.classes.sizes):,}"
    page.button(key="qi_run").click().run()
    assert not page.exception, page.exception
    expected = anonymize(encode(ds.frame, ds.qi, ds.hierarchies), 5, "optimal", max_suppression=0.01).summary()
    m = metrics(page)
    assert int(m["k of the release"]) >= 5 and m["Prec"] == f"{expected['prec']:.4f}"
    assert m["Rows suppressed"] == f"{expected['suppressed_rows']:,}"
    assert any("Generalization levels" in md.value for md in page.markdown)
    page.selectbox(key="qi_algorithm").set_value("mingen").run()
    assert any("limited to 16 rows" in w.value for w in page.warning)


def test_trails_name_people_the_k_anonymous_table_protects(page: AppTest) -> None:
    """The page's trail section shows the library's three counts for the release it just made."""
    from graphlink.qi.qitrails import expose

    page.selectbox(key="qi_source").set_value(datasets.SPECS["acs12"].title).run()
    page.button(key="qi_run").click().run()
    page.slider(key="qi_trail_locations").set_value(10).run()
    assert not page.exception, page.exception
    ds = datasets.load("acs12")
    released = anonymize(encode(ds.frame, ds.qi, ds.hierarchies), 5, "optimal", max_suppression=0.01).frame()
    e = expose(released, ds.qi, locations=10, p=0.3, seed=1)
    m = metrics(page)
    assert m["Named by the k-anonymous table"] == "0" == str(len(e.qi_only))
    assert m["Named by trails alone"] == f"{len(e.trails_only):,}"
    assert m["Named by trails + generalized values"] == f"{len(e.both):,}"
    assert len(e.both) > len(e.trails_only) > 0
    assert any("0 wrong" in c.value for c in page.caption)


def test_risk_section_shows_the_library_figures(page: AppTest) -> None:
    """The risk section's numbers are :func:`graphlink.qi.risk.risk`'s for the chosen columns, threshold and
    population share; the estimates appear once a share is given."""
    from graphlink.qi.risk import risk

    page.selectbox(key="qi_source").set_value(CPS).run()
    assert not page.exception, page.exception
    assert any("needs the share of the population" in c.value for c in page.caption)
    page.slider(key="qi_risk_threshold").set_value(0.1).run()
    page.number_input(key="qi_risk_fraction").set_value(5.0).run()
    assert not page.exception, page.exception
    ds = datasets.load("cps1988")
    r = risk(ds.frame, ds.qi, threshold=0.1, sampling_fraction=0.05)
    m = metrics(page)
    assert m["Records at risk"] == f"{100 * r.prosecutor.records_at_risk:.2f} %"
    assert m["Average risk (journalist)"] == f"{100 * r.journalist.average:.2f} %"
    assert m["Average risk (marketer)"] == f"{100 * r.marketer.average:.2f} %"
    shares = next(d.value for d in page.dataframe if "estimate" in d.value.columns)
    assert shares.set_index("estimate").loc["Dankar's rule", "share"] == f"{100 * r.uniqueness.dankar:.2f} %"
    assert any(f"picked the {r.uniqueness.dankar_model} estimate" in md.value for md in page.markdown)
