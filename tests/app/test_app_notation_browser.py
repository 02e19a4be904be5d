"""Every page of the app, on each of the three demos, in a real headless chromium: the pages speak words.

The app is read by the people who decide about a release (a data-protection board, a hospital's privacy
officer), not by readers of the thesis. So the visible text of a page (``inner_text`` of the body, after the page
has settled and its main button, if it computes on demand, has been pressed) must hold none of :data:`NOTATION`:
the thesis's symbols (``|C|``, ``|ω_c| ≤ |γ_c|``), references to numbered definitions, algorithms and theorems
(``Definition 21``, ``Alg. 10``, ``TR02 Def. 3.1``, ``§4.2.4``), Greek letters used as symbols, the library's raw
choice keys (``greedy-dedup``, ``prec``, ``samarati``, ``als-gain``, ``deidentified``, ``AER::CPS1988``),
Python paths (``graphlink.core.release.read_release``), repository paths (``docs/qi.md``), hexadecimal cache keys,
and whole numbers of four digits or more without a thousands separator (``1210``, ``-15766``; years such as
2006 are words, and the 0/1/* trails in ``code`` are data, not counts). A glossary page, if the app gets one, may
keep the notation for experts: it goes into :data:`EXEMPT`.

One Streamlit server per demo (the session starts on it) and one chromium for the whole module. Without chromium
the test is skipped, or fails under ``GRAPHLINK_BROWSER_REQUIRED=1``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphlink import catalog
from tests.app.test_app_browser import CHROMIUM, CHROMIUM_ARGS, serve_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT_MS = 300_000          # one page run of the 3,000-subject demo on a loaded two-core machine
SHOTS = os.environ.get("GRAPHLINK_SCREENSHOTS")

#: every page of the app (streamlit_app.PAGES) -> the buttons that make it compute, pressed in order when enabled
PAGES: dict[str, list[str]] = {
    "data": [],
    "trails": [],
    "linkgraph": [],
    "reidentification": ["Run re-identification"],
    "qi": ["Anonymize"],
    "protect": ["Protect release"],
    "report": ["Build report"],
    "fingerprint": ["Plan the fingerprints"],
    "secure": ["Run protocol"],
    "cypher": [],
    "experiments": [],
    "docs": [],
}
#: pages that may show notation on purpose (a glossary for experts); none today
EXEMPT: frozenset[str] = frozenset()
DEMOS = ("thesis", "simulated", "households")

#: plain English words among the choice keys: they read as words wherever they appear
_ENGLISH = {"complete", "incomplete", "multiple", "optimal", "unsorted", "complementary", "temporal", "loss",
            "entropy", "arithmetic", "geometric", "max", "sum", "decimal", "precision", "households", "scaling",
            "popularity", "withholding", "dedup", "auc", "calibration"}


def _keys() -> set[str]:
    keys = set()
    for name in ("METHODS", "PROTECT_METHODS", "QI_ALGORITHMS", "QI_LOSSES", "FINGERPRINT_LOSSES", "QI_AGGREGATES",
                 "QI_ROUNDINGS"):
        keys |= set(getattr(catalog, name, ()))
    from graphlink.simulation.experiments.registry import load_all

    keys |= set(load_all())
    return {k for k in keys if k not in _ENGLISH} | {"deidentified", "mondrian", "datafly", "samarati"}


#: what the pages must not show: name -> pattern (case-sensitive: "Mondrian" is a name, "mondrian" a key)
NOTATION: dict[str, re.Pattern[str]] = {
    "thesis symbol |X|": re.compile(r"\|[^\s|]{1,12}\|"),
    "numbered definition": re.compile(r"\b(?:Definitions?|Defs?\.?|Lemma|Theorem|Corollary|Proc\.?|Procedure)"
                                      r"\s*\d"),
    "numbered algorithm": re.compile(r"\bAlg(?:orithm)?s?\.?\s*\d"),
    "section sign": re.compile("§"),
    "technical report": re.compile(r"\bTR0\d\b"),
    "Greek letter": re.compile("[\u0391-\u03a9\u03b1-\u03c9]"),
    "cryptographic group": re.compile(r"ristretto|Ristretto"),
    "choice key": re.compile(r"(?<![\w-])(?:" + "|".join(sorted(map(re.escape, _keys()), key=len, reverse=True))
                             + r")(?![\w-])"),
    "dataset key": re.compile(r"\b[A-Za-z]+::[A-Za-z0-9]+"),
    "Python path": re.compile(r"\bgraphlink\.[a-z_]"),
    "repository path": re.compile(r"\bdocs/|\.md\b"),
    "hexadecimal key": re.compile(r"\bkey\s+`?[0-9a-f]{6,}"),
}
#: a whole number of four digits or more without thousands separators, years (1900-2099) aside
UNSEPARATED = re.compile(r"(?<![\w.,:/#])-?\d{4,}(?![\w,]|\.\d)")


def notation_in(text: str, plain: str) -> list[str]:
    """Every finding of :data:`NOTATION` in ``text`` and of unseparated numbers in ``plain`` (the text without its
    ``code`` spans), each with a little context."""
    found = []
    for name, pattern in NOTATION.items():
        for m in pattern.finditer(text):
            found.append(f"{name}: …{text[max(0, m.start() - 30):m.end() + 30]}…")
    for m in UNSEPARATED.finditer(plain):
        if re.fullmatch(r"(19|20)\d\d", m.group()):
            continue
        found.append(f"number without separators: …{plain[max(0, m.start() - 30):m.end() + 30]}…")
    return [f.replace("\n", " ") for f in found]


def test_notation_patterns_catch_the_reported_strings() -> None:
    """The list catches the notation once shown on the pages (thesis symbols, numbered references, raw keys,
    paths, unseparated numbers), and passes the words that replace them."""
    quoted = ["|C|", "|S|", "(Definition 21)", "(Alg. 10)", "(TR02 Def. 3.1)", "|ω_c| ≤ |γ_c|", "ristretto255",
              "v_C (Theorem 11)", "greedy-dedup", "prec", "samarati", "als-gain", "deidentified", "AER::CPS1988",
              "graphlink.core.release.read_release", "See docs/qi.md", "key 1c7082fd…",
              "63 null (all-*) trails pad the deidentified side (thesis §4.2.4)", "1210 of them", "-15766"]
    for s in quoted:
        assert notation_in(s, s), s
    words = ["1,210 de-identified records", "Greedy deduplication", "precision", "Malin (2006)", "seed 2006",
             "-15,766", "de-identified", "Mondrian", "4.5 %", "1 of 3 locations"]
    for s in words:
        assert not notation_in(s, s), (s, notation_in(s, s))


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("GRAPHLINK_BROWSER_REQUIRED") == "1":
            pytest.fail(f"GRAPHLINK_BROWSER_REQUIRED=1 but no chromium at {CHROMIUM}", pytrace=False)
        pytest.skip(f"no system chromium at {CHROMIUM} (run scripts/setup-browser.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def demo_app(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with serve_app({"GRAPHLINK_DEMO": request.param, "GRAPHLINK_CYPHER_CONSOLE": "1"}, timeout=180) as url:
        yield request.param, url


IDLE_JS = ("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
           " const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
           " return a && a.getAttribute('data-test-script-state') === 'notRunning'"
           " && (!w || w.innerText.trim() === '')"
           " && !document.querySelector('[data-testid=\"stSkeleton\"], [data-stale=\"true\"]'); }")
RUNNING_JS = ("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
              " return !a || a.getAttribute('data-test-script-state') !== 'notRunning'; }")
#: the body's visible text, and the same without code spans (trails such as 1011 are data, not counts)
TEXT_JS = """() => {
  const text = document.body.innerText;
  const spans = [...document.querySelectorAll('code')].map(c => c.innerText);
  let plain = text;
  for (const s of spans) if (s) plain = plain.split(s).join(' ');
  return {text, plain};
}"""


def _settle(page) -> None:  # noqa: ANN001
    page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)


def _press(page, name: str) -> None:  # noqa: ANN001
    button = page.get_by_role("button", name=name, exact=True)
    if button.count() == 0 or not button.first.is_enabled():
        return                            # the page refuses this release in words: nothing to compute
    button.first.scroll_into_view_if_needed()
    button.first.click()
    # the rerun may already be over when we look (playwright's TimeoutError): then it was quicker than the poll
    with contextlib.suppress(Exception):
        page.wait_for_function(RUNNING_JS, timeout=5_000)
    _settle(page)


@pytest.mark.parametrize("demo_app", DEMOS, indirect=True, scope="module")
@pytest.mark.parametrize("path", list(PAGES))
def test_page_speaks_words(demo_app: tuple[str, str], chromium: object, path: str) -> None:
    if path in EXEMPT:
        pytest.skip(f"{path} is a glossary for experts")
    demo, url = demo_app
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{url}/{path}")
        page.get_by_text("Current release").first.wait_for()
        _settle(page)
        for name in PAGES[path]:
            _press(page, name)
        seen = page.evaluate(TEXT_JS)
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SHOTS) / f"{demo}-{path}.png"), full_page=True)
    finally:
        context.close()
    found = notation_in(seen["text"], seen["plain"])
    assert found == [], f"notation on the {path} page of the {demo} demo:\n" + "\n".join(found)
