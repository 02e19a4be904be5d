"""Values from uploads are text in the app, never Markdown or HTML (``app/components/text.py``).

A hostile release — its file name, location names and element keys hold Markdown images and links pointing at a
local HTTP server, raw HTML, autolinks, Streamlit directives, LaTeX and terminal escapes — is uploaded and every
page that shows it is opened:

* in Streamlit's AppTest, every Markdown source the pages produce (text, captions, alerts, headings, metric
  labels and values, widget labels) is parsed with a CommonMark parser: no link, no image, no autolink text, no
  raw control character, and the hostile text is shown as itself;
* in a real headless chromium (``GRAPHLINK_BROWSER_REQUIRED``), the local server must receive no request and the
  page must hold no link or image pointing at it.

Also: a non-UTF-8 upload on the Quasi-identifiers page is one line, not a traceback with server paths.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from tests.app.test_app_browser import _app_idle, _app_ready, _page, app_url, browser  # noqa: F401 (fixtures)
from tests.markdown_text import rendered

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
FP_HIER = ROOT / "graphlink" / "data" / "fingerprint" / "hierarchies"


class _Server:
    """A local HTTP server that records every request it gets (the images and links must never reach it)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                seen.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def no_neo4j(monkeypatch: pytest.MonkeyPatch) -> str:
    """The app in a known state, whatever runs on this machine: NEO4J_URI names a port where no server listens,
    so the sidebar says there is no connection.  (Was: with a local Neo4j running, the sidebar showed its Bolt
    URI and two tests failed, depending on the machine.)  The sidebar's words are checked in
    :func:`check_page`."""
    monkeypatch.setenv("NEO4J_URI", f"bolt://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("NEO4J_AUTH", "none")
    return "In-process engine"


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def hostile(port: int) -> dict[str, str]:
    """Payloads that render as something else in Streamlit's Markdown if not escaped."""
    url = f"http://127.0.0.1:{port}"
    return {
        "image": f"![x]({url}/image.png)",
        "link": f"[Session expired - log in again]({url}/login)",
        "html": f"<img src={url}/html.png><b>bold</b>",
        "autolink": f"<{url}/auto>",
        "bare": f"{url}/bare www.example.org",
        "directives": ":red[red] :material/warning: $x^2$ **strong**",
        "escape": "\x1b[2J\x1b]8;;http://e\x1b\\hidden",
    }


def _csv_field(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def release_csv(port: int) -> bytes:
    """A release whose model reason quotes its de-identified element (it fits no identified trail) and whose
    locations and keys are all hostile (the shape of tests/core/test_reader_regressions.py's ORPHAN)."""
    p = hostile(port)
    locs = [p["image"], p["link"], p["html"]]
    orphan = p["autolink"] + " " + p["escape"]
    rows = [(locs[0], "identified", p["bare"]), (locs[0], "deidentified", orphan),
            (locs[1], "identified", p["directives"]), (locs[1], "deidentified", orphan),
            (locs[2], "identified", p["bare"]), (locs[2], "identified", p["image"]),
            (locs[2], "deidentified", orphan)]
    return ("location,kind,element\n" + "".join(",".join(map(_csv_field, r)) + "\n" for r in rows)).encode()


def upload_name(port: int) -> str:
    """A file name with an image, a link and HTML (no '/': a browser would refuse it; 'http:host' still loads)."""
    return f"![x](http:127.0.0.1:{port}?name) [Session expired](http:127.0.0.1:{port}?n2) <b>b</b>.csv"


# ------------------------------------------------------------------------------------------------ AppTest
_MD = MarkdownIt("commonmark")


def sources(at: AppTest) -> list[str]:
    """Every Markdown source on the page and in the sidebar: text, alerts, headings, metrics, widget labels."""
    out: list[str] = []
    for tree in (at.main, at.sidebar):
        for kind in ("markdown", "caption", "error", "warning", "info", "success", "title", "header",
                     "subheader"):
            out += [str(x.value) for x in getattr(tree, kind)]
        out += [s for m in tree.metric for s in (str(m.label), str(m.value))]
        for kind in ("button", "download_button", "selectbox", "multiselect", "radio", "text_input",
                     "number_input", "slider", "toggle", "file_uploader", "expander"):
            out += [str(getattr(x, "label", "")) for x in getattr(tree, kind)]
    return out


def check_page(at: AppTest, port: int) -> str:
    """No link, image, autolink or control character in any Markdown source; returns the rendered text."""
    assert not at.exception, at.exception
    for src in sources(at):
        html = _MD.render(src)
        assert "<a " not in html and "<img" not in html, src
        assert "://" not in src and "www." not in src and "http:" not in src, f"URL-like text unescaped: {src!r}"
        assert "\x1b" not in src and "\n\n" not in src.replace("\n\nNeo4j", ""), src
    assert any("In-process engine" in str(x.value) for x in at.sidebar.info), "not the known state (no Neo4j)"
    return " ".join(rendered(s).replace("\u2060", "") for s in sources(at))     # without the word joiners


@pytest.fixture
def app(server: _Server, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, at.exception
    at.file_uploader(key="upload_release").set_value((upload_name(server.port), release_csv(server.port),
                                                      "text/csv")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_hostile_release_is_text_on_every_page(app: AppTest, server: _Server) -> None:
    port = server.port
    p = hostile(port)
    text = check_page(app, port)
    assert upload_name(port) in text                      # "Loaded <name>." and the sidebar, as written
    assert p["autolink"] in text                          # the model line quotes the element
    assert "\\x1b[2J" in text                             # control characters shown as escapes
    app.switch_page("app/pages/trails.py").run()
    check_page(app, port)
    app.switch_page("app/pages/linkgraph.py").run()
    text = check_page(app, port)
    assert "Element" in text
    app.switch_page("app/pages/reidentification.py").run()
    app.button(key="reid_run").click().run()
    check_page(app, port)
    app.switch_page("app/pages/protect.py").run()
    app.button(key="protect_run").click().run()
    check_page(app, port)                                 # one-to-many: refused, the error quotes names
    app.switch_page("app/pages/secure.py").run()
    check_page(app, port)                                 # one-to-many: refused in words, as on Protect
    assert not any(b.key == "sec_run" for b in app.button)
    app.switch_page("app/pages/data.py").run()            # read one-to-one, the protocol runs
    next(s for s in app.selectbox if s.label == "Multiplicity").set_value("one-to-one").run()
    app.switch_page("app/pages/secure.py").run()
    app.button(key="sec_run").click().run()
    text = check_page(app, port)
    assert p["image"] in text                             # location names in the message steps


def test_hostile_qi_table_and_hierarchy_are_text(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Column names, values and hierarchy file names on the Quasi-identifiers and Fingerprinting pages."""
    port = server.port
    p = hostile(port)
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    at = AppTest.from_file(APP, default_timeout=180).run()
    col = p["link"].replace(",", " ")
    table = f"{_csv_field(col)},sex\n{_csv_field(p['image'])},m\nb,m\nc,f\nd,f\n".encode()
    hier = (FP_HIER / "sex.csv").read_bytes()
    for page, prefix in (("qi", "qi"), ("fingerprint", "fp")):
        at.switch_page(f"app/pages/{page}.py").run()
        at.selectbox(key=f"{prefix}_source").set_value("Upload a CSV").run()
        at.file_uploader(key=f"{prefix}_upload").set_value((upload_name(port), table, "text/csv")).run()
        at.file_uploader(key=f"{prefix}_upload_hier").set_value([("sex.csv", hier, "text/csv")]).run()
        check_page(at, port)
        if page == "qi":                                   # the released levels name the columns in Markdown
            at.button(key="qi_run").click().run()
            assert col in check_page(at, port)
        bad_hier = [(f"{p['image']}.csv".replace("/", ""), b"m;\xff\n", "text/csv")]
        at.file_uploader(key=f"{prefix}_upload_hier").set_value(bad_hier).run()
        text = check_page(at, port)
        assert "Invalid hierarchy" in text and "not UTF-8" in text
        at.file_uploader(key=f"{prefix}_upload_hier").set_value(None).run()


def test_non_utf8_upload_on_the_qi_page_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: a UnicodeDecodeError traceback with server paths."""
    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("app/pages/qi.py").run()
    at.selectbox(key="qi_source").set_value("Upload a CSV").run()
    at.file_uploader(key="qi_upload").set_value(("latin1.csv", "name,zip\nJosé,02138\n".encode("latin-1"),
                                                 "text/csv")).run()
    assert not at.exception, at.exception
    errors = [rendered(e.value) for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert "latin1.csv" in errors[0] and "not UTF-8" in errors[0] and "row 2" in errors[0]
    assert "Traceback" not in errors[0] and "/tmp" not in errors[0] and ".py" not in errors[0]


def test_md_escapes_what_the_markdown_would_interpret() -> None:
    """The helper on its own: every payload renders (CommonMark) to its own characters, in one paragraph."""
    from graphlink_app.components.text import WORD_JOINER, md

    for value in [*hostile(9).values(), "1. not a list", "# not a heading", "- item", "a\nb", "`code`",
                  "\\[escaped\\]", "&lt;entity&gt;", "x@example.org", "|a|b|", "~~strike~~"]:
        html = _MD.render(md(value))
        assert html.count("<p>") == 1 and "<a " not in html and "<img" not in html and "<code>" not in html
        assert "<em>" not in html and "<strong>" not in html and "<h1>" not in html and "<li>" not in html
        shown = rendered(md(value)).replace(WORD_JOINER, "")
        assert shown.replace("\\x1b", "\x1b").replace("\\n", "\n") == value


# ------------------------------------------------------------------------------------------------ browser
def _nothing_fetched_or_linked(page, server: _Server) -> None:  # noqa: ANN001
    """No request reached the server; no element links to it or loads from it (an in-page heading anchor
    whose slug happens to hold the port number is not a link to it); no traceback."""
    assert server.requests == [], f"the page fetched {server.requests}"
    target = f"127.0.0.1:{server.port}"
    pointing = page.evaluate(
        "(target) => Array.from(document.querySelectorAll('[href], [src], [srcset], [poster], [data]'))"
        ".filter(e => ['href', 'src', 'srcset', 'poster', 'data'].some(a => String(e[a] || e.getAttribute(a) || '')"
        ".includes(target))).map(e => e.outerHTML.slice(0, 300) + ' IN ' + "
        "Array.from({length: 6}).reduce((acc) => { acc.n = acc.n && acc.n.parentElement; "
        "if (acc.n && acc.n.dataset && acc.n.dataset.testid) acc.ids.push(acc.n.dataset.testid); return acc; }, "
        "{n: e, ids: []}).ids.join('<'))", target)
    assert pointing == [], pointing
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
@pytest.mark.browser
def test_hostile_upload_in_a_real_browser_fetches_nothing(app_url: str, browser: object,  # noqa: F811
                                                          server: _Server) -> None:
    """The upload's name, its locations and keys on the Data, Trails, Link graph, Re-identification and Secure
    protocol pages of a real chromium: the local server gets no request and no link or image points at it."""
    port = server.port
    page = _page(browser, app_url)
    _app_ready(page)
    page.get_by_role("tab", name="Upload").click()
    page.locator('input[type="file"]').first.set_input_files(
        files=[{"name": upload_name(port), "mimeType": "text/csv", "buffer": release_csv(port)}])
    page.get_by_text("Loaded", exact=False).first.wait_for()
    _app_idle(page)
    page.get_by_text("Session expired", exact=False).first.wait_for()     # the name, shown as text
    page.wait_for_timeout(1500)
    _nothing_fetched_or_linked(page, server)
    nav = page.locator('[data-testid="stSidebarNav"]')
    for name, button in (("Trails", None), ("Link graph", None), ("Re-identification", "Run re-identification"),
                         ("Secure protocol", "Run protocol")):
        nav.get_by_text(name, exact=True).click()
        _app_idle(page)
        if name == "Secure protocol":
            # read as one-to-many (the orphan record), the protocol is refused in words as Protect is, with the
            # release's values as text (the AppTest above also runs it read one-to-one): wait for either outcome
            refused = page.get_by_text("does not apply", exact=False)
            refused.or_(page.get_by_role("button", name=button)).first.wait_for(timeout=180_000)
            if refused.count() == 0:
                page.get_by_role("button", name=button).click()
                _app_idle(page)
        elif button:
            page.get_by_role("button", name=button).click()
            _app_idle(page)
        page.wait_for_timeout(1500)
        _nothing_fetched_or_linked(page, server)
    page.close()
