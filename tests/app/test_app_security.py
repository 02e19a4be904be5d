"""The app's exposure and its Cypher page under attack.

* Exposure (AppTest, no server needed): the Cypher page is off unless ``GRAPHLINK_CYPHER_CONSOLE=1`` (on loopback
  too: the app has no login, and any local account could open it), or behind ``GRAPHLINK_CYPHER_CONSOLE_TOKEN``,
  whose secret the page asks for; its words name no CLI flag.
* The page against the real Neo4j: every hostile query of tests/hostile_cypher.py is refused with a
  "Refused ..." message and no result table; parameter values come back as data; nothing on the page drops,
  replaces or loads a stored release (read-only means read-only).
* Real processes (slow): ``streamlit run`` with the committed config listens on 127.0.0.1 only;
  ``GRAPHLINK_EXPOSE=1 bash scripts/app.sh`` listens on every interface and its Cypher page, opened in headless
  chromium, says the console is off.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from graphlink.store.server import free_port
from graphlink_app.components.exposure import GUESSES, TOKEN_MIN_CHARS, is_loopback, reset_guesses
from tests.hostile_cypher import ALWAYS_REFUSED, ESCAPED, INJECTIONS, READ_ONLY_REFUSED, SERVER_REFUSED
from tests.processes import stop, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
OFF = "Cypher console is off"


@pytest.fixture
def address(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str | None], None]]:
    """Set Streamlit's ``server.address`` for AppTest (restored afterwards); clears the exposure switches."""
    monkeypatch.delenv("GRAPHLINK_EXPOSE", raising=False)
    monkeypatch.delenv("GRAPHLINK_CYPHER_CONSOLE", raising=False)
    monkeypatch.delenv("GRAPHLINK_CYPHER_CONSOLE_TOKEN", raising=False)
    monkeypatch.setenv("GRAPHLINK_DEMO", "thesis")
    old = st_config.get_option("server.address")
    reset_guesses()                     # wrong secrets count per app process, which is this one under AppTest
    yield lambda value: st_config.set_option("server.address", value)
    reset_guesses()
    st_config.set_option("server.address", old)


def _cypher_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app/pages/cypher.py").run()
    assert not at.exception, at.exception
    return at


def _console_on(at: AppTest) -> bool:
    has_query_box = any(t.key == "cy_query" for t in at.text_area)
    off = any(OFF in w.value for w in at.warning)
    assert has_query_box != off, "the page must either offer the console or say it is off"
    return has_query_box


@pytest.mark.parametrize(("addr", "expose", "console", "on"), [
    ("127.0.0.1", None, None, False),      # off unless asked for, on loopback too
    ("localhost", None, None, False),
    ("::1", None, None, False),
    ("127.0.0.1", None, "1", True),        # asked for
    ("::1", None, "yes", True),
    ("127.0.0.1", "1", None, False),       # GRAPHLINK_EXPOSE=1 says it is exposed (a proxy in front)
    ("0.0.0.0", None, None, False),
    ("192.0.2.10", None, None, False),
    ("", None, None, False),               # no address: Streamlit listens on every interface
    ("0.0.0.0", None, "1", True),          # explicitly allowed
    ("0.0.0.0", "1", "1", True),
    ("0.0.0.0", None, "0", False),
])
def test_cypher_page_off_when_exposed(address, monkeypatch, addr, expose, console, on) -> None:
    address(addr or None)
    if expose is not None:
        monkeypatch.setenv("GRAPHLINK_EXPOSE", expose)
    if console is not None:
        monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", console)
    at = _cypher_page()
    assert _console_on(at) is on
    if not on:
        assert not at.button and not at.dataframe   # nothing to run, nothing shown
        words = " ".join(w.value for w in at.warning)
        assert "GRAPHLINK_CYPHER_CONSOLE=1" in words and "--" not in words   # how to turn it on, no CLI flag


def test_console_behind_a_token(address, monkeypatch) -> None:
    """With ``GRAPHLINK_CYPHER_CONSOLE_TOKEN`` the page asks for the secret first; a wrong one keeps it shut."""
    address("127.0.0.1")
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE_TOKEN", "s3cret-token-for-the-console")
    at = _cypher_page()
    assert not any(t.key == "cy_query" for t in at.text_area) and not at.button
    at.text_input(key="cy_token").set_value("wrong").run()
    assert not at.exception and any("not the console's secret" in e.value for e in at.error)
    assert not any(t.key == "cy_query" for t in at.text_area)
    at.text_input(key="cy_token").set_value("s3cret-token-for-the-console").run()
    assert not at.exception, at.exception
    assert any(t.key == "cy_query" for t in at.text_area)     # unlocked for this browser session


@pytest.mark.parametrize("token", ["x", "short-secret", "a" * (TOKEN_MIN_CHARS - 1)])
def test_a_short_console_secret_keeps_the_console_off(address, monkeypatch, token: str) -> None:
    """A secret shorter than 16 characters could be guessed: the page says so in words, offers no secret box and
    no console, even with GRAPHLINK_CYPHER_CONSOLE=1 as well."""
    address("127.0.0.1")
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE_TOKEN", token)
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    at = _cypher_page()
    assert not _console_on(at) and not any(t.key == "cy_token" for t in at.text_input)
    words = " ".join(w.value for w in at.warning)
    assert f"has {len(token)} characters" in words and f"at least {TOKEN_MIN_CHARS}" in words


def test_wrong_secrets_lock_the_console(address, monkeypatch) -> None:
    """Each wrong secret counts once (not once per rerun); after five the console locks for the app process:
    the right secret no longer opens it, in this browser session or a new one."""
    address("127.0.0.1")
    secret = "s3cret-token-for-the-console"
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE_TOKEN", secret)
    at = _cypher_page()
    at.text_input(key="cy_token").set_value("wrong-0").run()
    for _ in range(GUESSES):                                   # reruns with the same text are not new guesses
        at.run()
    assert any("not the console's secret" in e.value for e in at.error) and not at.exception
    for n in range(1, GUESSES):
        at.text_input(key="cy_token").set_value(f"wrong-{n}").run()
    assert any("locked" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="cy_token").set_value(secret).run()
    assert not any(t.key == "cy_query" for t in at.text_area)
    fresh = _cypher_page()                                      # another browser session of the same app
    assert any("locked" in e.value for e in fresh.error) and not any(t.key == "cy_token" for t in fresh.text_input)
    assert not any(t.key == "cy_query" for t in fresh.text_area)


def test_a_right_secret_after_a_few_wrong_ones_still_opens(address, monkeypatch) -> None:
    address("127.0.0.1")
    secret = "s3cret-token-for-the-console"
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE_TOKEN", secret)
    at = _cypher_page()
    for n in range(GUESSES - 1):
        at.text_input(key="cy_token").set_value(f"wrong-{n}").run()
    at.text_input(key="cy_token").set_value(secret).run()
    assert not at.exception and any(t.key == "cy_query" for t in at.text_area)


def test_loopback_addresses() -> None:
    assert all(is_loopback(a) for a in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(a) for a in (None, "", "0.0.0.0", "::", "10.0.0.1", "example.org", "127.0.0.1.nip.io"))


def test_committed_config_binds_loopback() -> None:
    import tomllib

    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert conf["server"]["address"] == "127.0.0.1"


# ---------------------------------------------------------------------------------------------- under attack
@pytest.fixture
def console(neo4j_env: str, address, monkeypatch) -> AppTest:
    address("127.0.0.1")
    monkeypatch.setenv("GRAPHLINK_CYPHER_CONSOLE", "1")
    at = _cypher_page()
    if not any(t.key == "cy_query" for t in at.text_area) or any(
            "No Neo4j server is connected" in w.value for w in at.warning):
        pytest.fail("the Cypher console did not connect to the test server")
    return at


def _run(at: AppTest, query: str, params: str = "") -> AppTest:
    at.text_area(key="cy_query").set_value(query)
    at.text_input(key="cy_params").set_value(params)
    at.button(key="cy_run").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.neo4j
def test_page_reads_at_most_the_row_cap(console: AppTest, monkeypatch) -> None:
    """The app's console has the CLI's row cap: past it, words asking for LIMIT and no table; at the cap, the
    table. (A cap of 1,000 here, through GRAPHLINK_CYPHER_MAX_ROWS, keeps the test quick.)"""
    from graphlink import config

    monkeypatch.setenv("GRAPHLINK_CYPHER_MAX_ROWS", "1000")
    config.reload()
    try:
        _run(console, "UNWIND range(1, 20000000) AS x RETURN x")
        shown = [e.value.replace("\\", "") for e in console.error]    # Markdown escapes removed
        assert any("more than 1,000 rows" in e and "add LIMIT" in e for e in shown), shown
        assert not console.dataframe
        _run(console, "UNWIND range(1, 1000) AS x RETURN x")
        assert not console.error and len(console.dataframe[0].value) == 1000
    finally:
        monkeypatch.delenv("GRAPHLINK_CYPHER_MAX_ROWS")
        config.reload()


@pytest.mark.slow
@pytest.mark.neo4j
def test_page_refuses_every_hostile_query(console: AppTest) -> None:
    for query, _ in ALWAYS_REFUSED + ESCAPED + READ_ONLY_REFUSED + SERVER_REFUSED:
        _run(console, query)
        errors = [e.value for e in console.error]
        assert errors and errors[0].startswith("Refused"), (query, errors)
        assert not console.dataframe, query
    _run(console, "MATCH (n:Pwned) RETURN count(n) AS pwned")
    assert not console.error and int(console.dataframe[-1].value["pwned"].iloc[0]) == 0


@pytest.mark.neo4j
def test_page_parameters_are_data(console: AppTest) -> None:
    import json

    for payload in INJECTIONS:
        _run(console, "RETURN $v AS v", json.dumps({"v": payload}))
        assert not console.error, [e.value for e in console.error]
        assert console.dataframe[-1].value["v"].iloc[0] == payload


@pytest.mark.neo4j
def test_read_only_console_cannot_drop_or_replace_a_stored_release(console: AppTest, neo4j_store) -> None:
    """As reported: the page's "Load the current release" called the loader with replace on, so anyone who may
    open the read-only console could drop a stored release and load the app's in its place, by typing its name.
    Every text box of the page gets that name, every button is pressed: the stored release stays as it was."""
    import uuid

    from graphlink.simulation.simulate import simulate_uniform

    name = f"test-app-{uuid.uuid4().hex[:8]}"
    neo4j_store.load_release(simulate_uniform(40, 3, 0.5, seed=7), name=name, bulk="never")
    before = neo4j_store.release_info(name)
    try:
        console.run()
        for box in console.text_input:
            if box.key not in ("cy_token", None):
                box.set_value(name)
        console.run()
        assert not console.exception, console.exception
        pressed = 0
        for key in [b.key for b in console.button]:
            console.button(key=key).click().run()
            assert not console.exception, console.exception
            pressed += 1
        assert pressed >= 1
        after = neo4j_store.release_info(name)
        assert after == before                          # same content, same fingerprint, not even re-marked
        picker = [s for s in console.selectbox if s.key == "cy_release"]
        assert picker and any(o.startswith(name) for o in picker[0].options)   # offered to read, nothing more
    finally:
        neo4j_store.drop_release(name)


# ---------------------------------------------------------------------------------------------- real processes
def _listening(port: int) -> set[str]:
    """Addresses with a LISTEN socket on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for name, width in (("tcp", 8), ("tcp6", 32)):
        try:
            rows = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            host, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port and len(host) == width:
                raw = bytes.fromhex(host)
                # the kernel prints each 32-bit word in host (little-endian) order
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(socket.inet_ntop(socket.AF_INET if width == 8 else socket.AF_INET6, words))
    return found


def _start(cmd: list[str], port: int, env: dict, log: Path, cwd: Path = ROOT) -> subprocess.Popen:
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc, log.read_text, timeout=90)
    except BaseException:
        stop(proc)
        raise
    return proc


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc/net")
def test_streamlit_with_committed_config_listens_on_loopback_only(tmp_path: Path) -> None:
    """Started from another folder: Streamlit still reads the config next to streamlit_app.py."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_SERVER_")}
    proc = _start([sys.executable, "-m", "streamlit", "run", APP, "--server.headless", "true",
                   "--server.port", str(port), "--server.fileWatcherType", "none"], port, env, tmp_path / "log",
                  cwd=tmp_path)
    try:
        listening = _listening(port)
    finally:
        stop(proc)
    assert listening == {"127.0.0.1"}, listening


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc/net")
def test_app_sh_expose_switch_listens_everywhere_and_turns_the_console_off(tmp_path: Path) -> None:
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        pytest.skip(f"no system chromium at {chromium} (run scripts/setup-browser.sh)")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_SERVER_")}
    env.update(GRAPHLINK_SKIP_SETUP="1", GRAPHLINK_EXPOSE="1", VENV=sys.prefix, GRAPHLINK_DEMO="thesis")
    env.pop("GRAPHLINK_CYPHER_CONSOLE", None)
    proc = _start(["bash", str(ROOT / "scripts" / "app.sh"), "--server.port", str(port),
                   "--server.fileWatcherType", "none"], port, env, tmp_path / "log")
    try:
        listening = _listening(port)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            try:
                page = browser.new_page()
                page.set_default_timeout(60_000)
                page.goto(f"http://127.0.0.1:{port}/cypher")
                page.get_by_text(OFF).first.wait_for()
                assert page.locator("textarea").count() == 0
            finally:
                browser.close()
    finally:
        stop(proc)
    assert listening & {"0.0.0.0", "::"}, listening


def test_pairs_download_keeps_formulas_from_running_in_a_spreadsheet() -> None:
    import io

    import pandas as pd

    from graphlink_app.components.text import spreadsheet_csv

    keys = ["=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tx", "Ali", "<b>n</b>"]
    frame = pd.DataFrame({"identified": keys, "deidentified": list(reversed(keys)), "count": range(len(keys))})
    back = pd.read_csv(io.BytesIO(spreadsheet_csv(frame)), keep_default_na=False)
    for column in ("identified", "deidentified"):
        for written, key in zip(back[column], frame[column], strict=True):
            risky = key[0] in "=+-@\t\r"
            assert written == ("'" + key if risky else key)
    assert back["count"].tolist() == list(range(len(keys)))


# ---------------------------------------------------------------------------------------------- docker compose
def test_compose_ships_no_open_default() -> None:
    """docker/docker-compose.yml: authentication always on with a password the user must give (no default, no
    ``none``), the app's console off unless asked for, and the server's limits sized like the launcher's. With a
    compose program installed, ``config`` without ``NEO4J_PASSWORD`` fails naming it."""
    import shutil

    import yaml

    from graphlink.store.server import memory_limits

    path = ROOT / "docker" / "docker-compose.yml"
    services = yaml.safe_load(path.read_text())["services"]
    neo4j, app = services["neo4j"]["environment"], services["app"]["environment"]
    for env in (neo4j, app):
        assert env["NEO4J_AUTH"].startswith("neo4j/${NEO4J_PASSWORD:?") and "none" not in env["NEO4J_AUTH"]
    assert app["GRAPHLINK_CYPHER_CONSOLE"] == "${GRAPHLINK_CYPHER_CONSOLE:-0}"
    assert app["GRAPHLINK_CYPHER_CONSOLE_TOKEN"] == "${GRAPHLINK_CYPHER_CONSOLE_TOKEN:-}"
    per_tx, total = memory_limits(neo4j["NEO4J_server_memory_heap_max__size"])
    assert (neo4j["NEO4J_db_memory_transaction_max"], neo4j["NEO4J_db_memory_transaction_total_max"]) == (per_tx, total)
    assert neo4j["NEO4J_db_transaction_timeout"] == "1h"
    compose = shutil.which("docker-compose")
    if compose:
        env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_PASSWORD", "NEO4J_AUTH")}
        done = subprocess.run([compose, "-f", str(path), "config"], capture_output=True, text=True, env=env,
                              timeout=120)
        assert done.returncode != 0 and "set NEO4J_PASSWORD" in done.stderr, done.stderr
        done = subprocess.run([compose, "-f", str(path), "config"], capture_output=True, text=True,
                              env={**env, "NEO4J_PASSWORD": "a-long-password"}, timeout=120)
        assert done.returncode == 0 and "NEO4J_AUTH: neo4j/a-long-password" in done.stdout, done.stderr
