"""The app's Risk report page: AppTest on the thesis demo (the numbers equal the library's report) and one
headless-chromium check that the page renders and its download is the self-contained report."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from graphlink.core.release import read_release
from graphlink.report import build_report
from tests.app.test_app import goto, metrics
from tests.app.test_app_browser import ARTIFACTS, _app_ready, _page, app_url, browser  # noqa: F401 (fixtures)
from tests.app.test_app_user_text import _Server, app, check_page, server  # noqa: F401 (fixtures)
from tests.markdown_text import rendered

DATA = Path(__file__).resolve().parents[2] / "graphlink" / "data"


def thesis_report(k: int):
    return build_report(read_release(DATA / "thesis_fig3_4.csv", name="thesis_fig3_4"), k)


def test_report_page_shows_the_library_numbers(at: AppTest) -> None:
    goto(at, "report")
    at.number_input(key="report_k").set_value(2).run()
    at.button(key="report_run").click().run()
    assert not at.exception, at.exception
    expected = thesis_report(2)
    shown = metrics(at)
    assert shown["People named"] == f"{expected.people:,}" == "4"
    assert shown["Certainly re-identifiable"] == f"{expected.certain:,}"
    assert shown["Fewer than 2 candidates"] == f"{expected.below_k:,}"
    assert any("NOT 2-unlinkable" in rendered(e.value) for e in at.error)
    exposure_table, uniqueness_table, protection = (t.value for t in at.dataframe)   # in page order
    exposure = exposure_table.set_index("location")["certain removed"].to_dict()
    assert exposure == {e.location: e.lost for e in expected.exposure}
    assert list(uniqueness_table["people"]) == [u.people for u in expected.uniqueness]
    assert list(protection["option"]) == [p.label for p in expected.ranked_protection]
    assert list(protection["withheld"]) == [f"{p.records_withheld:,} ({100 * p.share_withheld:.0f} %)"
                                            for p in expected.ranked_protection]
    assert any(expected.recommendation in rendered(x.value) for x in at.markdown)
    assert not any("--" in rendered(x.value) for x in [*at.markdown, *at.caption, *at.info, *at.warning])


def test_hostile_release_is_text_on_the_report_page(app: AppTest, server: _Server) -> None:  # noqa: F811
    """Location and element names from an upload reach the page as text only (app/components/text.py)."""
    app.switch_page("app/pages/report.py").run()
    app.button(key="report_run").click().run()
    text = check_page(app, server.port)
    assert "Risk report" in text and ("cannot be computed" in text or "People named" in text)


def test_a_refusal_speaks_of_the_data_page_not_of_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    # two people at one location and one record: one-to-one with a record withheld, or a household? ambiguous
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "streamlit_app.py"),
                           default_timeout=120).run()
    csv = b"location,kind,element\nA,identified,p\nA,identified,q\nA,deidentified,d\n"
    at.file_uploader(key="upload_release").set_value(("ambiguous.csv", csv, "text/csv")).run()
    goto(at, "report")
    at.button(key="report_run").click().run()
    assert not at.exception, at.exception
    errors = " ".join(rendered(e.value) for e in at.error)
    assert "cannot be computed" in errors and "--" not in errors
    assert "choose 'Reserved side' deidentified (one-to-one) or identified" in errors   # the app's remedy, by code
    assert any("Data page" in rendered(c.value) for c in at.caption)


@pytest.mark.browser
def test_report_page_renders_and_downloads_in_chromium(app_url: str, browser: object,  # noqa: F811
                                                       tmp_path: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser, f"{app_url}/report")
    _app_ready(page)
    page.get_by_role("button", name="Build report").click()
    download_button = page.get_by_role("button", name="Download the report (HTML)")
    download_button.wait_for(timeout=120_000)
    metric = page.locator('[data-testid="stMetric"]', has_text="Certainly re-identifiable")
    assert metric.locator('[data-testid="stMetricValue"]').inner_text().strip() == "4"
    with page.expect_download() as info:
        download_button.click()
    target = tmp_path / "report.html"
    info.value.save_as(target)
    text = target.read_text(encoding="utf-8")

    class Ids(HTMLParser):
        ids: set[str] = set()
        urls: list[str] = []

        def handle_starttag(self, tag, attrs) -> None:
            for name, value in attrs:
                if name == "id":
                    self.ids.add(value)
                if name in ("src", "href"):
                    self.urls.append(value)

    parser = Ids()
    parser.feed(text)
    assert {"summary", "risk", "exposure", "uniqueness", "protection", "reproduce"} <= parser.ids
    assert not parser.urls
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    # the downloaded file renders on its own, offline, in the same browser
    offline = browser.new_page()  # type: ignore[attr-defined]
    offline.goto(target.as_uri())
    assert offline.locator("#summary .card .n").first.inner_text().strip() == "4"
    pdf = offline.pdf(format="A4")                      # what "print to PDF" gives: every page, no error
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") >= 2
    offline.close()
    page.close()
