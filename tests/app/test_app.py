"""Streamlit AppTest tests for every page of the analyst app, on the thesis's four-hospital example.

Expected counts are derived by hand from Malin (2006) Figure 3.4 with FillTrails (Alg. 1): H2 and H3 disclose
as many de-identified as identified records, so their absent de-identified cells are 0, giving
    Ali 1110, Bob 1101, Charlie 1011, Dan 0111  |  actg 111*, tgac 1011, ctga *101, gatc *11*.
Links (n ⪯ m): actg–Ali, tgac–Charlie, ctga–Bob, gatc–Ali, gatc–Dan (5 edges). Hence
REIDIT-C = 1 (tgac is the only complete de-identified trail, equal to Charlie's), REIDIT-I = 4 (actg→Ali,
tgac→Charlie, ctga→Bob, then gatc→Dan), REIDIT-M = 3 (gatc keeps two supertrails), true loves = 4 (the
perfect matching is unique). Every location discloses 3 of the 4 names: popularity 0.75, entropy 0.811 bits.
"""

from __future__ import annotations

import math
import os
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
DATA = ROOT / "graphlink" / "data"


def metrics(app: AppTest) -> dict[str, str]:
    """Metric label -> value as the page shows them (Markdown escapes removed)."""
    return {rendered(m.label): rendered(m.value) for m in app.metric}


def sidebar_text(app: AppTest) -> str:
    return rendered(" ".join(x.value for x in [*app.sidebar.markdown, *app.sidebar.info, *app.sidebar.success]))


def goto(app: AppTest, page: str) -> AppTest:
    app.switch_page(f"app/pages/{page}.py").run()
    assert not app.exception, app.exception
    return app


def test_starts_on_the_thesis_demo(at: AppTest) -> None:
    m = metrics(at)
    assert m["Locations"] == "4"
    assert m["Identified elements"] == "4"
    assert m["De-identified elements"] == "4"
    assert m["Side that may withhold"] == "de-identified"
    side = sidebar_text(at)
    assert "Thesis Figure 3.4" in side
    assert "In-process engine" in side or "Neo4j" in side


def test_load_simulated_demo(at: AppTest) -> None:
    from graphlink.simulation.simulate import simulate_zipf
    from graphlink_app.demos import DEMO_SIMULATED, SIMULATED_DEMO_PARAMS

    at.radio(key="demo_choice").set_value(DEMO_SIMULATED).run()
    at.button(key="load_demo").click().run()
    assert not at.exception, at.exception
    expected = simulate_zipf(**SIMULATED_DEMO_PARAMS)
    m = metrics(at)
    assert m["Locations"] == str(SIMULATED_DEMO_PARAMS["locations"])
    assert m["Identified elements"] == f"{len(expected.elements('identified')):,}"
    assert m["De-identified elements"] == f"{len(expected.elements('deidentified')):,}"
    assert 2000 < len(expected.elements("identified")) <= 3000
    assert metrics(at)["Side that may withhold"] == "de-identified"


@pytest.mark.parametrize("model", ["uniform", "Zipf"])
def test_simulate_with_sliders(at: AppTest, model: str) -> None:
    from graphlink.simulation import simulate as sim

    at.radio(key="sim_model").set_value(model).run()
    at.slider(key="sim_subjects").set_value(500)
    at.slider(key="sim_locations").set_value(6)
    at.number_input(key="sim_seed").set_value(11)
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    if model == "uniform":
        expected = sim.simulate_uniform(500, 6, 0.3, withhold=0.2, seed=11)
    else:
        expected = sim.simulate_zipf(500, 6, 1.0, withhold=0.2, seed=11)
    m = metrics(at)
    assert m["Locations"] == "6"
    assert m["Identified elements"] == f"{len(expected.elements('identified')):,}"
    assert m["De-identified elements"] == f"{len(expected.elements('deidentified')):,}"
    assert "Simulated: 500 subjects" in sidebar_text(at)


def test_upload_valid_csv_and_zip(at: AppTest) -> None:
    csv = (DATA / "thesis_fig3_4.csv").read_bytes()
    at.file_uploader(key="upload_release").set_value(("hospitals.csv", csv, "text/csv")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert metrics(at)["Locations"] == "4"
    assert any("hospitals.csv" in rendered(s.value) for s in at.success)

    import pandas as pd

    pq = BytesIO()
    pd.read_csv(DATA / "thesis_fig3_4.csv").to_parquet(pq)
    at.file_uploader(key="upload_release").set_value(("hospitals.parquet", pq.getvalue(),
                                                      "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert "Upload: hospitals.parquet" in sidebar_text(at)

    # a zip of per-location folders: <location>/identified.csv and <location>/deidentified.csv
    rows = [line.split(",") for line in csv.decode().splitlines()[1:]]
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for loc in sorted({r[0] for r in rows}):
            for kind, header in (("identified", "name"), ("deidentified", "dna")):
                body = "\n".join([header, *[r[2] for r in rows if r[0] == loc and r[1] == kind]]) + "\n"
                zf.writestr(f"hospitals/{loc}/{kind}.csv", body)
    at.file_uploader(key="upload_release").set_value(("hospitals.zip", buf.getvalue(), "application/zip")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    m = metrics(at)
    assert (m["Locations"], m["Identified elements"], m["De-identified elements"]) == ("4", "4", "4")
    assert "Upload: hospitals.zip" in sidebar_text(at)


@pytest.mark.parametrize(("content", "needle"), [
    (b"location,kind\nH1,identified\n", "element"),                       # missing column
    (b"location,kind,element\nH1,identified,Ali\nH1,bogus,actg\n", "kind"),  # bad kind value
    (b"\x00\x01\x02 not a table", ""),                                     # garbage
])
def test_bad_upload_shows_readable_error(at: AppTest, content: bytes, needle: str) -> None:
    at.file_uploader(key="upload_release").set_value(("bad.csv", content, "text/csv")).run()
    assert not at.exception, at.exception          # no traceback
    errors = [e.value for e in at.error]
    assert errors, "a bad upload must show an error"
    assert needle.lower() in errors[0].lower()
    # the previous (demo) release is still loaded
    assert metrics(at)["Locations"] == "4"


def test_trails_page(at: AppTest) -> None:
    goto(at, "trails")
    m = metrics(at)
    assert m["Bound on re-identifications"] == "4"          # min(|S|=4, 2^4 - 1 = 15)
    stats = at.dataframe[0].value
    assert list(stats["location"]) == ["H1", "H2", "H3", "H4"]
    assert all(math.isclose(p, 0.75) for p in stats["popularity"])
    h = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert all(math.isclose(x, h, rel_tol=1e-9) for x in stats["entropy (bits)"])
    assert len(at.get("vega_lite_chart")) >= 2        # the two heatmaps
    at.selectbox(key="trail_filter").set_value("H4").run()
    assert not at.exception


def test_link_graph_page(at: AppTest) -> None:
    goto(at, "linkgraph")
    m = metrics(at)
    assert m["Link edges"] == "5"
    assert m["Maximum matching size"] == "4"
    assert m["True loves (certain pairs)"] == "4"
    at.radio(key="lg_side").set_value("deidentified").run()
    at.selectbox(key="lg_element").set_value("gatc").run()
    assert not at.exception, at.exception
    text = " ".join(x.value for x in at.markdown)
    assert "`*11*`" in text
    cand = at.dataframe[0].value
    assert sorted(cand["candidate"]) == ["Ali", "Dan"]
    assert "Dan" in text and "gatc" in text
    at.radio(key="lg_mode").set_value("Connected component").run()
    assert not at.exception, at.exception


def test_reidentification_counts(at: AppTest) -> None:
    goto(at, "reidentification")
    at.button(key="reid_run").click().run()
    assert not at.exception, at.exception
    m = metrics(at)
    assert m["REIDIT-C"] == "1"
    assert m["REIDIT-I"] == "4"
    assert m["REIDIT-M"] == "3"
    assert m["REIDIT-I-K"] == "4"        # k = 2: the four elements REIDIT-I pins down uniquely
    assert m["True loves (exact)"] == "4"
    at.selectbox(key="reid_shown").set_value("true-loves").run()
    pairs = next(d.value for d in at.dataframe if "reason" in d.value.columns)   # the probabilities' table follows
    truth = {("Ali", "actg"), ("Charlie", "tgac"), ("Dan", "gatc"), ("Bob", "ctga")}
    assert set(zip(pairs["identified"], pairs["de-identified"], strict=True)) == truth
    assert all(isinstance(r, str) and r for r in pairs["reason"])
    at.button(key="loo_run").click().run()
    assert not at.exception, at.exception
    loo = at.dataframe[-1].value
    assert list(loo["location removed"]) == ["H1", "H2", "H3", "H4"]


def test_protect_page(at: AppTest) -> None:
    goto(at, "protect")
    at.number_input(key="protect_k").set_value(2).run()
    at.button(key="protect_run").click().run()
    assert not at.exception, at.exception
    values = [(x.label, x.value) for x in at.metric]
    before, after = values[: len(values) // 2], values[len(values) // 2:]
    assert dict(before)["Certain re-identifications (true loves)"] == "4"
    assert dict(before)["2-unlinkable"] == "no"
    assert dict(after)["Certain re-identifications (true loves)"] == "0"
    assert dict(after)["2-unlinkable"] == "yes (certified)"
    at.button(key="protect_sweep").click().run()
    assert not at.exception, at.exception
    sweep = at.dataframe[-1].value
    assert sweep["certified"].all()
    assert list(sweep["records still disclosed"]) == sorted(sweep["records still disclosed"], reverse=True)


def test_secure_protocol_page(at: AppTest) -> None:
    goto(at, "secure")
    at.button(key="sec_run").click().run()
    assert not at.exception, at.exception
    assert at.success and "Completed" in at.success[0].value
    at.select_slider(key="sec_step").set_value(3).run()
    assert not at.exception
    at.selectbox(key="sec_behaviour").set_value("full-switch").run()
    assert not at.exception, at.exception
    assert any("Aborted" in e.value for e in at.error)


def _neo4j_or_skip(app: AppTest) -> None:
    if app.warning and any("unavailable in this build" in w.value for w in app.warning):
        pytest.skip("graphlink.store.neo4j is not in this build")
    if any("No Neo4j server is connected" in w.value for w in app.warning):
        if os.environ.get("NEO4J_REQUIRED") == "1":
            pytest.fail("NEO4J_REQUIRED=1 but the app found no Neo4j server")
        pytest.skip("no Neo4j server reachable")


@pytest.mark.neo4j
def test_cypher_console_refuses_writes_and_answers_reads(neo4j_env: str, at: AppTest) -> None:
    goto(at, "cypher")
    _neo4j_or_skip(at)
    at.text_area(key="cy_query").set_value("CREATE (n:GraphlinkAppTest {x: 1}) RETURN n").run()
    at.button(key="cy_run").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert errors and errors[0].startswith("Refused"), errors
    at.text_area(key="cy_query").set_value("MATCH (n:GraphlinkAppTest) RETURN count(n) AS nodes").run()
    at.button(key="cy_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert int(at.dataframe[-1].value["nodes"].iloc[0]) == 0      # the refused CREATE did not run


@pytest.mark.neo4j
def test_cypher_examples_on_the_loaded_demo_agree_with_the_library(neo4j_env: str, at: AppTest) -> None:
    from graphlink.analysis.reidit import reidentify
    from graphlink.core.release import read_release
    from graphlink.store.neo4j import connect

    goto(at, "cypher")
    _neo4j_or_skip(at)
    # the console only reads: it says the app's release is not in Neo4j and how to load it, and offers no loader
    assert any("is not in Neo4j" in x.value and "graphlink load" in x.value for x in at.info)
    assert not any(b.key == "cy_load_release" for b in at.button)
    name = f"test-app-{os.getpid()}"
    demo = read_release(DATA / "thesis_fig3_4.csv")
    with connect() as store:
        store.load_release(demo, name=name, bulk="never")
    try:
        at.run()
        picker = at.selectbox(key="cy_release")
        assert picker.value == name                                    # the stored copy of the app's release
        assert f"{name} ({len(demo.frame)} rows) · the release open in the app" in picker.options
        assert not any("is not in Neo4j" in x.value for x in at.info)
        at.selectbox(key="cy_example").set_value(("reidit_c", "reidit_c")).run()
        assert name in at.text_input(key="cy_params").value
        at.button(key="cy_run").click().run()
        assert not at.exception, at.exception
        rows = at.dataframe[-1].value
        lib = reidentify(read_release(DATA / "thesis_fig3_4.csv"), "complete").pairs
        assert set(zip(rows["identified"], rows["deidentified"], strict=True)) == \
            set(zip(lib["identified"], lib["deidentified"], strict=True))
        # an example that writes (the loader's first statement) is refused by the console
        at.selectbox(key="cy_example").set_value(("load", "release")).run()
        at.button(key="cy_run").click().run()
        assert not at.exception, at.exception
        assert any(e.value.startswith("Refused") for e in at.error), [e.value for e in at.error]
    finally:
        with connect() as store:
            store.drop_release(name)


def test_cypher_console_without_server_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")          # nothing listens on port 1
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    monkeypatch.setenv("GRAPHLINK_DEMO", "thesis")
    app = AppTest.from_file(APP, default_timeout=120).run()
    side = " ".join(x.value for x in app.sidebar.info)
    assert "In-process engine" in side
    assert "Error" not in side and ("could not be reached" in side or "no server is running" in side)
    goto(app, "cypher")
    if app.warning and any("unavailable in this build" in w.value for w in app.warning):
        pytest.skip("graphlink.store.neo4j is not in this build")
    assert any("No Neo4j server is connected" in w.value for w in app.warning)
    app.text_area(key="cy_query").set_value("CREATE (n) RETURN n").run()
    app.button(key="cy_run").click().run()
    assert not app.exception
    assert app.error


def test_experiments_page(at: AppTest) -> None:
    goto(at, "experiments")
    if any("No experiments" in w.value for w in at.warning):
        pytest.skip("no experiments registered")
    from graphlink.simulation.experiments.registry import load_all

    name = "popularity" if "popularity" in load_all() else sorted(load_all())[0]
    at.selectbox(key="exp_name").set_value(name).run()
    at.number_input(key="exp_runs").set_value(1).run()
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    assert len(at.get("image")) >= 1


def test_docs_page(at: AppTest) -> None:
    goto(at, "docs")
    assert any("graphlink" in x.value.lower() for x in at.markdown)
