"""The Quasi-identifiers page in headless Debian chromium: anonymize CPS 1988 and read the release's k."""

from __future__ import annotations

import pytest

from graphlink.qi import datasets
from graphlink.qi.algorithms import anonymize
from graphlink.qi.table import encode
from tests.app.test_app_browser import ARTIFACTS, _app_ready, _click, _drawn, _page, app_url, browser  # noqa: F401

pytestmark = pytest.mark.browser


def test_anonymize_cps1988_in_browser(app_url: str, browser: object) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser, f"{app_url}/qi")
    _app_ready(page)
    page.get_by_text("The table as it is").first.wait_for()
    _click(page, page.get_by_role("button", name="Anonymize", exact=True))
    metric = page.locator('[data-testid="stMetric"]', has_text="k of the release")
    metric.wait_for()
    ds = datasets.load("cps1988")
    expected = anonymize(encode(ds.frame, ds.qi, ds.hierarchies), 5, "optimal", max_suppression=0.01).summary()
    assert metric.locator('[data-testid="stMetricValue"]').inner_text().strip() == str(expected["k"])
    prec = page.locator('[data-testid="stMetric"]', has_text="Prec")
    assert prec.locator('[data-testid="stMetricValue"]').inner_text().strip() == f"{expected['prec']:.4f}"
    page.get_by_text("Generalization levels").first.wait_for()
    _drawn(page, page.locator(".vega-embed").last)                   # the histogram, before the screenshot
    page.screenshot(path=str(ARTIFACTS / "qi.png"), full_page=True)
    page.close()
