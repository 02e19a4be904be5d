"""Lifecycle of the project-local Neo4j server: start, status, stop, restart with the data kept.

Runs the real launcher from the Maven runtime (``bash scripts/setup-neo4j.sh``) in a temporary base folder, so it
never touches the developer's own ``.graphlink/neo4j``. Prerequisite messages (no Java, no jars) are checked
without starting anything.
"""

from __future__ import annotations

import base64
import json
import socket
import urllib.error
import urllib.request

import pytest

from graphlink.errors import StoreError
from graphlink.store import server


@pytest.fixture
def tmp_paths(tmp_path, neo4j_runtime):
    """A private base folder whose runtime/ points at the resolved jars (skip/fail if there are none)."""
    real = neo4j_runtime
    paths = server.Paths(tmp_path / "neo4j")
    paths.base.mkdir()
    (paths.base / "runtime").symlink_to(real.runtime, target_is_directory=True)
    yield paths
    server.stop(paths, timeout=30)  # never leave a JVM behind, even when the test failed


@pytest.mark.neo4j
@pytest.mark.slow
def test_start_status_stop_restart_keeps_data(tmp_paths, monkeypatch):
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, ServiceUnavailable
    from typer.testing import CliRunner

    from graphlink.cli import app
    from graphlink.store.neo4j import connect

    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.delenv("NEO4J_AUTH", raising=False)
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(tmp_paths.base))  # what the CLI and the app resolve
    monkeypatch.setenv("GRAPHLINK_NEO4J_JVM_OPTS", "-XX:TieredStopAtLevel=1")  # starts twice as fast
    # the preferred port is taken -> the server takes a free one
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        lines: list[str] = []
        http_port = server.free_port()
        st = server.start(port=taken, http_port=http_port, paths=tmp_paths, echo=lines.append)
    assert st.running and st.pid and st.version and st.version.startswith("5.26")
    assert st.uri != f"bolt://127.0.0.1:{taken}" and any("taken" in line for line in lines)
    assert server.start(paths=tmp_paths, echo=lines.append).message == "already running"
    status = server.status(tmp_paths)
    assert status.running and status.uri == st.uri and status.pid == st.pid and status.version == st.version
    assert (tmp_paths.home / "data" / "databases").is_dir()  # project-local data folder

    # authentication is on with a generated password kept private; nothing else gets in
    assert tmp_paths.password_file.stat().st_mode & 0o777 == 0o600
    assert tmp_paths.base.stat().st_mode & 0o077 == 0
    password = tmp_paths.password_file.read_text().strip()
    assert len(password) >= 32 and server.local_auth(tmp_paths) == ("neo4j", password)
    for bad in (None, ("neo4j", "neo4j")):
        with server.open_driver(st.uri, bad) as drv, pytest.raises(AuthError):
            drv.verify_connectivity()
    # Bolt speaks TLS with the launcher's certificate, which the client pins (the key stays private)
    assert server.read_state(tmp_paths)["certificate"] == str(tmp_paths.certificate)
    assert (tmp_paths.tls_dir / "private.key").stat().st_mode & 0o777 == 0o600
    # the HTTP API (and Neo4j Browser) on loopback asks for the same password
    tx = f"http://127.0.0.1:{http_port}/db/neo4j/tx/commit"
    body = json.dumps({"statements": [{"statement": "RETURN 1 AS one"}]}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(tx, data=body, headers=headers), timeout=30)
    assert refused.value.code == 401
    token = base64.b64encode(f"neo4j:{password}".encode()).decode()
    with urllib.request.urlopen(urllib.request.Request(tx, data=body, headers={
            **headers, "Authorization": f"Basic {token}"}), timeout=30) as resp:
        assert json.load(resp)["results"][0]["data"][0]["row"] == [1]
    res = CliRunner().invoke(app, ["neo4j", "status"])
    assert res.exit_code == 0 and f"password in {tmp_paths.password_file}" in res.output
    assert password not in res.output

    with connect() as store:  # no URI, no credentials given: the local server and its password
        assert store.uri == st.uri
        import pandas as pd

        frame = pd.DataFrame({"location": ["A", "A", "B"], "kind": ["identified", "deidentified", "identified"],
                              "element": ["p1", "s1", "p1"]})
        store.load_release(frame, name="kept")

    stopped = server.stop(tmp_paths)
    assert not stopped.running and "stopped" in stopped.message
    assert not server.status(tmp_paths).running
    assert "NEO4J_STOPPED" in tmp_paths.log.read_text()  # the shutdown hook ran: clean shutdown
    with pytest.raises(StoreError, match="graphlink neo4j start"):
        connect(st.uri)

    # every start sets a new password, even when the password file was lost; the old one stops working
    tmp_paths.password_file.unlink()
    again = server.start(port=0, http_port=None, paths=tmp_paths, echo=lines.append)
    assert again.running and again.pid != st.pid
    new_password = tmp_paths.password_file.read_text().strip()
    assert new_password != password and tmp_paths.password_file.stat().st_mode & 0o777 == 0o600
    with server.open_driver(again.uri, ("neo4j", password)) as drv, pytest.raises(AuthError):
        drv.verify_connectivity()
    # without HTTP (Neo4j Browser), Bolt accepts TLS only: a plain-text client is turned away
    with GraphDatabase.driver(again.uri, auth=("neo4j", new_password), connection_timeout=5) as drv, \
            pytest.raises(ServiceUnavailable):
        drv.verify_connectivity()
    with connect() as store:
        back = store.read_release("kept")
        assert sorted(map(tuple, back.to_numpy())) == sorted(map(tuple, frame.to_numpy()))
    with pytest.raises(StoreError, match="running"):
        server.reset_password(tmp_paths, echo=lines.append)
    server.stop(tmp_paths)
    # reset-password (the way back before passwords changed at every start) still sets the file's password
    server.reset_password(tmp_paths, echo=lines.append)
    reset = tmp_paths.password_file.read_text().strip()
    assert reset not in (password, new_password)


def test_missing_java_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on PATH
    with pytest.raises(StoreError, match="Java not found"):
        server.check_java()


def test_missing_jars_without_maven_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither mvn nor anything else
    paths = server.Paths(tmp_path / "empty")
    with pytest.raises(StoreError, match="Maven"):
        server.ensure_runtime(paths, echo=lambda s: None)


def test_status_without_server(tmp_path):
    st = server.status(server.Paths(tmp_path / "nothing"))
    assert not st.running and "jars" in st.message


def test_conf_binds_localhost_only(tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHLINK_NEO4J_PROCEDURES", raising=False)
    conf = server.write_conf(tmp_path, tmp_path / "runtime", 7999, 7998).read_text()
    assert "server.default_listen_address=127.0.0.1" in conf
    assert "server.bolt.listen_address=127.0.0.1:7999" in conf
    assert "server.http.listen_address=127.0.0.1:7998" in conf
    assert "server.memory.pagecache.size=" in conf


def test_conf_is_hardened(tmp_path, monkeypatch):
    """Authentication on, LOAD CSV file URLs off, an empty import folder, no plugin procedure unless asked for."""
    monkeypatch.delenv("GRAPHLINK_NEO4J_PROCEDURES", raising=False)
    lines = server.write_conf(tmp_path, tmp_path / "runtime", 7999, None).read_text().splitlines()
    assert "dbms.security.auth_enabled=true" in lines
    assert "dbms.security.allow_csv_import_from_file_urls=false" in lines
    assert f"server.directories.import={tmp_path / 'import'}" in lines
    assert (tmp_path / "import").is_dir() and not any((tmp_path / "import").iterdir())
    assert "dbms.security.procedures.allowlist=" in lines
    assert not any(line.startswith("dbms.security.procedures.unrestricted") for line in lines)
    # TLS on Bolt, required; plugin jars neither loaded nor on the class path
    assert "dbms.ssl.policy.bolt.enabled=true" in lines and "server.bolt.tls_level=REQUIRED" in lines
    assert f"dbms.ssl.policy.bolt.base_directory={server.tls_dir(tmp_path)}" in lines
    assert f"server.directories.plugins={tmp_path / 'plugins'}" in lines and not any((tmp_path / "plugins").iterdir())
    assert "plugins" not in server.class_path(server.Paths(tmp_path))
    with_browser = server.write_conf(tmp_path, tmp_path / "runtime", 7999, 7998).read_text().splitlines()
    assert "server.bolt.tls_level=OPTIONAL" in with_browser  # Neo4j Browser's web page cannot pin a certificate
    monkeypatch.setenv("GRAPHLINK_NEO4J_PROCEDURES", "apoc.coll.*, apoc.text.*")
    conf = server.write_conf(tmp_path, tmp_path / "runtime", 7999, None).read_text()
    assert "dbms.security.procedures.allowlist=apoc.coll.*,apoc.text.*" in conf.splitlines()
    assert f"server.directories.plugins={tmp_path / 'runtime' / 'plugins'}" in conf.splitlines()
    lib = tmp_path / "runtime" / "lib"
    lib.mkdir(parents=True)
    for jar in ("neo4j-5.26.30.jar", "hadoop-common-3.5.0.jar"):
        (lib / jar).touch()
    cp = server.class_path(server.Paths(tmp_path))
    assert "plugins" in cp and "neo4j-5.26.30.jar" in cp and "hadoop-common" not in cp


def test_conf_sets_the_server_s_own_limits(tmp_path):
    """Every transaction stops after GRAPHLINK_NEO4J_TX_TIMEOUT unless its client asks otherwise, and may hold half
    the heap (70 % for all of them); the heap is the one the launcher gives the JVM."""
    from graphlink.config import config_context
    from graphlink.errors import StoreError

    with config_context(neo4j_tx_timeout=90, neo4j_heap="2g"):
        lines = server.write_conf(tmp_path, tmp_path / "runtime", 7999, None).read_text().splitlines()
        assert "-Xmx2g" in server.launcher_command("java", server.Paths(tmp_path), tmp_path)
    assert "db.transaction.timeout=90000ms" in lines
    assert "db.memory.transaction.max=1024m" in lines and "db.memory.transaction.total.max=1433m" in lines
    lines = server.write_conf(tmp_path, tmp_path / "runtime", 7999, None, heap="512M").read_text().splitlines()
    assert "db.memory.transaction.max=256m" in lines
    assert [server.size_bytes(s) for s in ("1g", "1G", "512m", "1024k", "4096")] == [1 << 30, 1 << 30, 512 << 20,
                                                                                      1 << 20, 4096]
    for bad in ("", "lots", "1.5g", "0m", "-1g"):
        with pytest.raises(StoreError, match="GRAPHLINK_NEO4J_HEAP"):
            server.size_bytes(bad)


def test_password_file_is_generated_once_and_private(tmp_path):
    pf = tmp_path / "state" / "password"
    first = server.ensure_password(pf)
    assert len(first) >= 32 and pf.stat().st_mode & 0o777 == 0o600
    assert server.ensure_password(pf) == first  # kept: the database was initialised with it
    pf.chmod(0o644)
    assert server.ensure_password(pf) == first and pf.stat().st_mode & 0o777 == 0o600
    assert server.local_auth(server.Paths(tmp_path / "state")) == ("neo4j", first)
    assert server.local_auth(server.Paths(tmp_path / "elsewhere")) is None
    assert server.ensure_password(tmp_path / "other") != first  # random per server
    rotated = server.new_password(pf)
    assert rotated != first and pf.read_text().strip() == rotated and pf.stat().st_mode & 0o777 == 0o600


def test_cli_status_when_stopped(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from graphlink.cli import app

    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(tmp_path / "none"))
    monkeypatch.delenv("NEO4J_URI", raising=False)
    res = CliRunner().invoke(app, ["neo4j", "status"])
    assert res.exit_code == 3 and "not running" in res.output


def test_local_password_goes_only_to_the_local_server(tmp_path, monkeypatch):
    import neo4j

    from graphlink.store.neo4j import connect, resolve_auth, resolve_uri

    base = tmp_path / "neo4j"
    server.ensure_password(base / "password")
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(base))
    for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_USER", "NEO4J_PASSWORD", "GRAPHLINK_NEO4J_CERT"):
        monkeypatch.delenv(var, raising=False)
    assert resolve_auth("bolt://127.0.0.1:7687") is None   # no local server running: not even the default port
    assert resolve_auth("bolt://db.example.org:7687") is None
    # and nothing is tried: no URI, no driver, one line that says why
    tried: list = []
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda *a, **k: tried.append(a))
    with pytest.raises(StoreError, match="not running") as err:
        resolve_uri()
    assert "\n" not in str(err.value)
    with pytest.raises(StoreError, match="not running"):
        connect()
    assert tried == []
    monkeypatch.undo()
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(base))
    for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_USER", "NEO4J_PASSWORD", "GRAPHLINK_NEO4J_CERT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NEO4J_AUTH", "alice/secret")                      # NEO4J_AUTH overrides, for any server
    assert resolve_auth("bolt://db.example.org:7687") == ("alice", "secret")
    assert resolve_auth("bolt://127.0.0.1:7687") == ("alice", "secret")
    monkeypatch.setenv("NEO4J_AUTH", "none")
    assert resolve_auth("bolt://127.0.0.1:7687") is None
