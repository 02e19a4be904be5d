"""The Fingerprinting page in headless Debian chromium: plan FP's example, simulate a leak by both recipients and
read the verdict (collusion: R1 and R2); the loss chart is drawn."""

from __future__ import annotations

import pytest

from tests.test_app_browser import ARTIFACTS, _app_ready, _page, app_url, browser  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def _metric(page, label: str) -> str:  # noqa: ANN001
    m = page.locator('[data-testid="stMetric"]', has_text=label).first
    m.wait_for()
    return m.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_plan_and_collusion_in_browser(app_url: str, browser: object) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser, f"{app_url}/fingerprint")
    _app_ready(page)
    page.get_by_role("button", name="Plan the fingerprints").click()
    assert _metric(page, "Fingerprint capacity (upper bound)") == "6"
    assert _metric(page, "Usable within the bounds") == "3"
    page.locator(".vega-embed").first.wait_for()                     # the loss axis chart
    # Streamlit's react-aria multiselect: its combobox input sits under the tag container, so click it forced
    picker = page.get_by_role("combobox", name="Simulate: rows from these recipients")
    for name in ("R1", "R2"):
        picker.click(force=True)
        page.get_by_role("option", name=name, exact=True).click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Simulate a leak").click()
    page.get_by_text("collusion, FP Table 6").first.wait_for()
    assert _metric(page, "Attributed to") == "R1, R2"
    assert _metric(page, "Exact match") == "no"
    page.wait_for_timeout(1500)  # let the Vega chart finish drawing before the screenshot
    page.screenshot(path=str(ARTIFACTS / "fingerprint.png"), full_page=True)
    page.close()
