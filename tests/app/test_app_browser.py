"""End-to-end test of the Streamlit app in a real headless Debian chromium, driven by Playwright.

Never downloads a browser: it uses the system chromium (``/usr/bin/chromium``, or ``$CHROMIUM``); install it
with ``scripts/setup-browser.sh``. Screenshots go to ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.processes import stop, wait_healthy

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_app(env: dict[str, str], timeout: float = 60.0) -> Iterator[str]:
    """The app on a free loopback port with ``env`` added to the environment; its URL once it answers."""
    port = _free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **env)
    log = tempfile.NamedTemporaryFile(prefix="streamlit-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
         "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(f"{url}/_stcore/health", proc, lambda: Path(log.name).read_text(), timeout=timeout)
        yield url
    finally:
        stop(proc)
        log.close()


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    with serve_app({"GRAPHLINK_DEMO": "thesis"}) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A persistent chromium context on a fresh, throw-away user-data-dir (Playwright's way to pass one)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no system chromium at {CHROMIUM} (run scripts/setup-browser.sh)")
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="graphlink-chromium-")
    try:
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1500, "height": 1100})
            try:
                yield ctx
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


#: generous on a loaded machine: a Streamlit rerun on two busy cores can take tens of seconds
TIMEOUT_MS = 180_000


def _page(browser: object, url: str):  # noqa: ANN202
    page = browser.new_page()  # type: ignore[attr-defined]
    page.set_default_timeout(TIMEOUT_MS)
    page.set_default_navigation_timeout(TIMEOUT_MS)
    page.goto(url)
    return page


def _app_ready(page) -> None:  # noqa: ANN001
    page.get_by_text("Current release").first.wait_for()
    _app_idle(page)


def _app_idle(page) -> None:  # noqa: ANN001
    """Wait until no script run is in progress (Streamlit's status widget is gone or empty)."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
                           " || document.querySelector('[data-testid=\"stStatusWidget\"]').innerText === ''",
                           timeout=TIMEOUT_MS)


def _click(page, locator) -> None:  # noqa: ANN001
    """Click ``locator`` once no rerun is in progress, scrolled into view first: a rerun that lands while the
    page loads can re-render the element or move it out of the viewport, so Playwright's checks (attached,
    visible, stable, receiving events) run on the element as it is when the app is idle."""
    _app_idle(page)
    locator.scroll_into_view_if_needed()
    locator.click()


def _drawn(page, chart) -> None:  # noqa: ANN001
    """Wait until a Vega chart has drawn: its marks element (``canvas.marks`` or ``svg.marks``, whichever renderer)
    is visible, i.e. in the page with a size; what the screenshot needs, without a fixed pause."""
    chart.locator(".marks").first.wait_for(state="visible")
    _app_idle(page)


def test_demo_true_loves_in_browser(app_url: str, browser: object) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser, f"{app_url}/reidentification")
    _app_ready(page)
    page.get_by_text("Thesis Figure 3.4: four hospitals").first.wait_for()
    _click(page, page.get_by_role("button", name="Run re-identification"))
    page.locator("#re-identified-pairs").first.wait_for()          # the section heading (the chart axis says it too)
    metric = page.locator('[data-testid="stMetric"]', has_text="True loves (exact)")
    metric.wait_for()
    assert metric.locator('[data-testid="stMetricValue"]').inner_text().strip() == "4"
    reidit_i = page.locator('[data-testid="stMetric"]', has_text="REIDIT-I").first
    assert reidit_i.locator('[data-testid="stMetricValue"]').inner_text().strip() == "4"
    _drawn(page, page.locator(".vega-embed").first)
    page.screenshot(path=str(ARTIFACTS / "reidentification.png"), full_page=True)
    page.close()


def _node_centres(png: bytes, rgb: tuple[int, int, int], tol: int = 12) -> list[tuple[float, float]]:
    """Centres of the blobs of one fill colour in a screenshot (nodes of one side of the graph)."""
    import io

    import numpy as np
    from PIL import Image
    from scipy import ndimage

    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    mask = (np.abs(img - np.array(rgb)).max(axis=2) <= tol)
    labels, n = ndimage.label(mask)
    sizes = ndimage.sum(mask, labels, range(1, n + 1))
    keep = [i + 1 for i, sz in enumerate(sizes) if sz >= 30]
    centres = ndimage.center_of_mass(mask, labels, keep)
    return [(float(x), float(y)) for y, x in centres]


def _settled_centres(page, frame, rgb: tuple[int, int, int], count: int) -> list[tuple[float, float]]:  # noqa: ANN001
    """The node centres of one colour once the graph's layout has settled: ``count`` blobs, at the same places in
    two screenshots in a row (polled, so a slow machine only takes longer)."""
    deadline, last = time.monotonic() + TIMEOUT_MS / 1000, None
    while True:
        centres = sorted(_node_centres(frame.screenshot(), rgb))
        if len(centres) == count and centres == last:
            return centres
        if time.monotonic() > deadline:
            raise AssertionError(f"the graph did not settle: {centres}")
        last = centres
        page.wait_for_timeout(250)                 # the poll interval, not a wait for something to finish


def test_link_graph_renders_and_click_explains(app_url: str, browser: object) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser, f"{app_url}/linkgraph")
    _app_ready(page)
    page.get_by_text("True loves (certain pairs)").first.wait_for()
    page.get_by_text("True love: in every maximum matching").first.wait_for()
    page.get_by_text("Element Ali (identified)").first.wait_for()
    iframe = page.locator("iframe[title='st_cytoscape.st_cytoscape']")
    iframe.wait_for()
    page.frame_locator("iframe[title='st_cytoscape.st_cytoscape']").locator("canvas").first.wait_for()
    _app_idle(page)
    iframe.scroll_into_view_if_needed()
    # the lower de-identified node (a yellow diamond): Ali's neighbourhood is actg (top) and gatc
    diamonds = _settled_centres(page, iframe, (0xF0, 0xE4, 0x42), 2)
    page.screenshot(path=str(ARTIFACTS / "linkgraph.png"), full_page=True)
    box = iframe.bounding_box()
    assert box is not None
    x, y = max(diamonds, key=lambda c: c[1])
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.get_by_text("Element gatc (de-identified)").first.wait_for()
    page.get_by_text("actg can only be Ali, so gatc must be Dan").first.wait_for()
    _app_idle(page)
    page.screenshot(path=str(ARTIFACTS / "linkgraph_clicked.png"), full_page=True)
    page.close()


def test_pressing_a_link_edge_shows_its_probability(app_url: str, browser: object) -> None:
    """Cytoscape.js has no hover state: a line's probability is its label while the pointer presses it
    (app/components/graph.py). Ali's line to gatc (link only, probability 0) is pressed at its middle; while
    pressed, dark label text is drawn there, and it is gone once released."""
    import io

    import numpy as np
    from PIL import Image

    page = _page(browser, f"{app_url}/linkgraph")
    _app_ready(page)
    page.get_by_text("Element Ali (identified)").first.wait_for()
    iframe = page.locator("iframe[title='st_cytoscape.st_cytoscape']")
    page.frame_locator("iframe[title='st_cytoscape.st_cytoscape']").locator("canvas").first.wait_for()
    _app_idle(page)
    iframe.scroll_into_view_if_needed()
    diamonds = _settled_centres(page, iframe, (0xF0, 0xE4, 0x42), 2)
    (ali,) = _settled_centres(page, iframe, (0x56, 0xB4, 0xE9), 1)
    gatc = max(diamonds, key=lambda c: c[1])
    mid = ((ali[0] + gatc[0]) / 2, (ali[1] + gatc[1]) / 2)

    def dark_near(png: bytes) -> int:
        """Pixels of label text (near black) within a label's reach of the line's middle."""
        img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
        x, y = int(mid[0]), int(mid[1])
        box = img[max(0, y - 30):y + 30, max(0, x - 120):x + 120]
        return int((box.max(axis=2) < 80).sum())

    before = dark_near(iframe.screenshot())
    box = iframe.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + mid[0], box["y"] + mid[1])
    page.mouse.down()
    deadline, pressed = time.monotonic() + TIMEOUT_MS / 1000, before
    while pressed <= before + 50 and time.monotonic() < deadline:   # polled: the redraw follows the press
        pressed = dark_near(iframe.screenshot())
    page.screenshot(path=str(ARTIFACTS / "linkgraph_pressed.png"))
    page.mouse.up()
    assert pressed > before + 50, (before, pressed)
    deadline, after = time.monotonic() + TIMEOUT_MS / 1000, pressed
    while after > before + 50 and time.monotonic() < deadline:
        after = dark_near(iframe.screenshot())
    assert after <= before + 50, (before, after)
    page.close()
