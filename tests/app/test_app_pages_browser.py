"""Every page of the app in a real headless Debian chromium at 1400×1000, on the bundled demo releases.

Each page is opened (and its main button pressed, where the page waits for one) on the demo it is meant for, and
the visible text of the page is checked for what a reader must never see: a Streamlit exception box, a red error
box on a demo, a label cut short by its box (``scrollWidth`` wider than ``clientWidth`` on an element that hides
its overflow), Python dicts or reprs (``{'``, ``<graphlink.``) and command-line flags (``--name``). A screenshot
of each page goes to a temporary folder (printed; set ``GRAPHLINK_SCREENSHOTS`` to choose it), never into the
repository. Playwright drives the system chromium (``/usr/bin/chromium`` or ``$CHROMIUM``); waits are for
elements and for Streamlit to finish its run, with generous time limits for a busy machine.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_app_browser import CHROMIUM, CHROMIUM_ARGS, serve_app

pytestmark = pytest.mark.browser

TIMEOUT_MS = 240_000          # one page run on a loaded two-core machine (the 3,000-subject demo builds its graph)
SHOTS = Path(os.environ.get("GRAPHLINK_SCREENSHOTS") or tempfile.mkdtemp(prefix="graphlink-pages-"))

#: what the page must never show, as a script run in the page: findings per kind
CHECK_JS = r"""
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const cut = [];
  for (const e of main.querySelectorAll('*')) {
    const cs = getComputedStyle(e);
    const hides = cs.textOverflow === 'ellipsis' || cs.overflowX === 'hidden' || cs.overflow === 'hidden';
    const text = (e.innerText || '').trim();
    if (!hides || !text || cs.display === 'none' || cs.visibility === 'hidden') continue;
    if (e.closest('[data-testid="stDataFrame"], [data-testid="stCodeBlock"], [data-testid="stVegaLiteChart"]'))
      continue;                                        // tables and charts scroll or draw on their own canvas
    if (e.children.length === 0 || cs.textOverflow === 'ellipsis') {
      if (e.scrollWidth > e.clientWidth + 1) cut.push(text.slice(0, 80));
    }
  }
  const text = main.innerText;
  const raw = [...text.matchAll(/\{'|<graphlink\.|\bb'\\x/g)].map(m => text.slice(m.index, m.index + 60));
  const flags = [...text.matchAll(/(^|[\s(`'"])--[a-z][a-z-]*/g)].map(m => m[0].trim());
  const errors = [...main.querySelectorAll('[data-testid="stAlertContentError"]')].map(e => e.innerText.slice(0, 160));
  const exceptions = main.querySelectorAll('[data-testid="stException"]').length;
  return {cut, raw, flags, errors, exceptions};
}
"""

#: demo -> the GRAPHLINK_DEMO value the server starts on
DEMOS = {"thesis": "thesis", "simulated": "simulated", "households": "households"}

#: (demo, page path, buttons to press in order, text that shows the page has its result: on the Re-identification
#: page, the pair probabilities below the pairs, or the note that they are not computed)
CASES = [
    ("thesis", "data", [], "Records per location"),
    ("thesis", "trails", [], "Trail matrices"),
    ("thesis", "linkgraph", [], "Candidates"),
    ("thesis", "reidentification", ["Run re-identification"], "Each person's most likely record"),
    ("thesis", "qi", ["Anonymize"], "Trails behind the k-anonymous table"),
    ("thesis", "protect", ["Protect release"], "Before and after"),
    ("thesis", "fingerprint", ["Plan the fingerprints"], "Who leaked it?"),
    ("thesis", "secure", ["Run protocol"], "What each party sees"),
    ("thesis", "cypher", [], "Query"),
    ("thesis", "experiments", [], "Comparison with the thesis"),
    ("thesis", "docs", [], "The data model in plain words"),
    ("simulated", "data", [], "Records per location"),
    ("simulated", "linkgraph", [], "Candidates"),
    ("simulated", "reidentification", ["Run re-identification"], "Each person's most likely record"),
    ("households", "data", [], "Records per location"),
    ("households", "trails", [], "Trail matrices"),
    ("households", "linkgraph", [], "Candidates"),
    ("households", "reidentification", ["Run re-identification"], "is not computed for this release"),
    ("households", "protect", [], "does not apply to this release"),
    ("households", "secure", [], "does not apply to this release"),
]


@pytest.fixture(scope="module")
def demo_app(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A Streamlit server per demo (the session starts on it), on a free loopback port, with the Cypher page on;
    the cases are grouped by demo, so each server starts once."""
    demo = request.param
    with serve_app({"GRAPHLINK_DEMO": DEMOS[demo], "GRAPHLINK_CYPHER_CONSOLE": "1"}, timeout=180) as url:
        yield demo, url


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no system chromium at {CHROMIUM} (run scripts/setup-browser.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


#: the script run is over: the app root says so (Streamlit's script-run state), and no status widget is busy
IDLE_JS = ("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
           " const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
           " return a && a.getAttribute('data-test-script-state') === 'notRunning'"
           " && (!w || w.innerText.trim() === ''); }")
#: every chart has drawn (Vega renders into a canvas or an svg), no element is still a loading placeholder
#: (Streamlit's skeletons) and none is a stale leftover of a rerun
DRAWN_JS = ("() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
            ".every(c => c.querySelector('canvas, svg'))"
            " && !document.querySelector('[data-testid=\"stSkeleton\"], [data-testid=\"stSkeletonElement\"],"
            " [data-testid=\"stAppSkeleton\"]')"
            " && !document.querySelector('[data-stale=\"true\"]')")


def _settle(page) -> None:  # noqa: ANN001
    page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
    page.wait_for_function(DRAWN_JS, timeout=TIMEOUT_MS)


@pytest.mark.parametrize(("demo_app", "path", "buttons", "ready"), CASES, indirect=["demo_app"], scope="module",
                         ids=[f"{d}-{p}" for d, p, _, _ in CASES])
def test_page_reads_cleanly(demo_app: tuple[str, str], chromium: object, path: str, buttons: list[str],
                            ready: str) -> None:
    demo = demo_app[0]
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{demo_app[1]}/{path}")
        page.get_by_text("Current release").first.wait_for()
        _settle(page)
        for name in buttons:
            page.get_by_role("button", name=name, exact=True).click()
        page.get_by_text(ready, exact=False).first.wait_for()
        _settle(page)
        found = page.evaluate(CHECK_JS)
        page.screenshot(path=str(SHOTS / f"{demo}-{path}.png"))
        print(f"screenshot: {SHOTS / f'{demo}-{path}.png'}")
    finally:
        context.close()
    assert found["exceptions"] == 0, found
    assert found["errors"] == [], f"red error boxes on the {demo} demo: {found['errors']}"
    assert found["cut"] == [], f"labels cut short: {found['cut']}"
    assert found["raw"] == [], f"Python reprs in the page: {found['raw']}"
    assert found["flags"] == [], f"command-line flags in the page: {found['flags']}"
