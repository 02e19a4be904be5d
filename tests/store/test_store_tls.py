"""Credentials go only to the project's own Neo4j, with real sockets and a real server.

A *squatter* is a process that listens on the Bolt port while the server is down, or takes the port between
``graphlink neo4j start``'s port check and the server binding it. Before, the client sent it the exact password.
Now every client of the project pins the launcher's self-signed certificate (graphlink/store/server.py,
``open_driver``): the squatter gets a TLS ClientHello and nothing after it -- not the Bolt handshake, let alone
the password -- whether it speaks TLS with a certificate of its own or only records bytes. The password itself is
checked byte for byte in everything the squatter received.

Later report: a Store still open after ``graphlink neo4j stop`` looked the certificate up again for every new
driver (the console's, a reconnect); with the launcher gone it found none and sent the local password over plain
Bolt to whoever held the port. The same window existed inside ``connect()``, which read the state file once for
the address, again for the password and again for the certificate. Now a Store pins the certificate's bytes when
it is made, from the one look ``connect()`` takes, and never uses the local password without them.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphlink.errors import StoreError
from graphlink.store import server
from graphlink.store.neo4j import Store, connect

pytestmark = pytest.mark.neo4j

BOLT_MAGIC = bytes.fromhex("6060b017")
BOLT_5_4 = bytes([0, 0, 4, 5])
SECRET = "squatters-never-see-this-password-7f3a9c"


class Squatter:
    """Listens on a free loopback port (or ``port``) and records every byte each connection sends (TLS: every
    byte that arrives after the handshake, decrypted, when ``tls`` holds a certificate and key of its own). To a
    plain Bolt handshake it answers as a server would (version 5.4), so a client that trusts it goes on to log on."""

    def __init__(self, tls: tuple[Path, Path] | None = None, port: int = 0) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # a port a server just left
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.uri = f"bolt://127.0.0.1:{self.port}"
        self.received: list[bytes] = []   # raw bytes per connection (TLS records when tls is None)
        self.after_handshake: list[bytes] = []
        self.context = None
        if tls:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(str(tls[0]), str(tls[1]))
        self._stop = threading.Event()
        self._records: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            record = threading.Thread(target=self._record, args=(conn,), daemon=True)
            self._records.append(record)
            record.start()

    def _record(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        try:
            if self.context is None:
                answered = False
                while chunk := conn.recv(65536):
                    data += chunk
                    if not answered and len(data) >= 20 and data.startswith(BOLT_MAGIC):
                        conn.sendall(BOLT_5_4)       # agree to Bolt 5.4: a client would now log on
                        answered = True
            else:
                with self.context.wrap_socket(conn, server_side=True) as tls:
                    while chunk := tls.recv(65536):
                        data += chunk
                    self.after_handshake.append(data)
                    return
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()
        self.received.append(data)

    def settle(self, timeout: float = 10.0) -> None:
        """Wait for the connections accepted so far to be recorded: a recorder appends when its connection
        closes, which may come after the client has already given up (a race on a loaded machine)."""
        for record in list(self._records):
            record.join(timeout)

    def everything(self) -> bytes:
        self.settle()
        return b"".join(self.received + self.after_handshake)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def squatter() -> Iterator[Squatter]:
    sq = Squatter()
    yield sq
    sq.close()


@pytest.fixture(scope="module")
def stranger_certificate(tmp_path_factory: pytest.TempPathFactory, neo4j_server) -> tuple[Path, Path]:
    """A key and certificate for 127.0.0.1 made exactly as the launcher makes its own, but not the pinned one."""
    folder = tmp_path_factory.mktemp("stranger")
    cert = server.make_certificate(folder)
    return cert, folder / "private.key"


def _pinned(neo4j_server) -> Path:
    cert = server.pinned_certificate(neo4j_server[0])
    if cert is None:
        pytest.skip("this server was not started by the project's launcher (NEO4J_URI without a pinned certificate)")
    return cert


def _assert_nothing_useful(sq: Squatter) -> None:
    data = sq.everything()
    assert SECRET.encode() not in data and BOLT_MAGIC not in data
    assert all(not chunk for chunk in sq.after_handshake)  # nothing at all after a completed TLS handshake
    for chunk in sq.received:
        assert not chunk or chunk[:1] == b"\x16"             # a TLS handshake record, nothing else


def test_a_recording_squatter_gets_a_tls_hello_and_nothing_else(neo4j_server, squatter: Squatter) -> None:
    server.pin(squatter.uri, _pinned(neo4j_server))          # the client believes this is the local server
    with pytest.raises(StoreError, match="did not prove") as err:
        connect(squatter.uri, ("neo4j", SECRET))
    assert "\n" not in str(err.value) and SECRET not in str(err.value)
    squatter.settle()
    assert squatter.received, "the client did connect"
    _assert_nothing_useful(squatter)


def test_a_tls_squatter_with_its_own_certificate_gets_nothing(neo4j_server, stranger_certificate) -> None:
    sq = Squatter(tls=stranger_certificate)
    try:
        server.pin(sq.uri, _pinned(neo4j_server))
        with pytest.raises(StoreError, match="did not prove"):
            connect(sq.uri, ("neo4j", SECRET))
    finally:
        sq.close()
    _assert_nothing_useful(sq)


def test_the_pinned_certificate_comes_from_the_environment_for_child_processes(neo4j_server, squatter,
                                                                              tmp_path) -> None:
    """What the CLI does with NEO4J_URI + GRAPHLINK_NEO4J_CERT: the same refusal, in one line, exit 2."""
    env = {"NEO4J_URI": squatter.uri, "NEO4J_AUTH": f"neo4j/{SECRET}",
           "GRAPHLINK_NEO4J_CERT": str(_pinned(neo4j_server))}
    qf = tmp_path / "q.cypher"
    qf.write_text("RETURN 1 AS one;\n")
    res = subprocess.run([sys.executable, "-m", "graphlink.cli", "cypher", str(qf)], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "did not prove" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    _assert_nothing_useful(squatter)


def test_the_real_server_with_a_foreign_pin_gets_no_password(neo4j_server, stranger_certificate) -> None:
    """The other way round: our server, but the client pins another certificate: refused before authenticating
    (a wrong password would also have been refused, but it is never sent)."""
    uri, auth, _ = neo4j_server
    _pinned(neo4j_server)
    with server.open_driver(uri, auth, certificate=stranger_certificate[0], connection_timeout=5) as drv, \
            pytest.raises(Exception, match="(?i)certificate|ssl|connect"):
        drv.verify_connectivity()


@pytest.mark.slow
def test_start_race_squatter_never_receives_the_password(tmp_path, neo4j_runtime, monkeypatch) -> None:
    """As reported: ``graphlink neo4j start`` checks the port, then the server binds it; a squatter that takes the
    port in between used to receive the new password. Reproduced by letting the squatter own the port the start
    picks: the launcher cannot bind and says so, start fails, and the squatter got no password (start waits for
    the launcher's own word that its server listens, and even then talks TLS with the pinned certificate only:
    the tests above)."""
    paths = server.Paths(tmp_path / "neo4j")
    paths.base.mkdir()
    (paths.base / "runtime").symlink_to(neo4j_runtime.runtime, target_is_directory=True)
    for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_PASSWORD", "GRAPHLINK_NEO4J_CERT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAPHLINK_NEO4J_DIR", str(paths.base))
    monkeypatch.setenv("GRAPHLINK_NEO4J_JVM_OPTS", "-XX:TieredStopAtLevel=1")
    server.make_certificate(paths.tls_dir, paths)  # as after an earlier start
    sq = Squatter()
    monkeypatch.setattr(server, "pick_port", lambda preferred: sq.port)   # the port is "free" when checked ...
    try:
        with pytest.raises(StoreError, match="launcher exited"):          # ... and taken when the server binds
            server.start(port=sq.port, http_port=None, paths=paths, timeout=240, echo=lambda line: None)
    finally:
        sq.close()
        server.stop(paths, timeout=30)
    password = paths.password_file.read_text().strip()
    data = sq.everything()
    assert password.encode() not in data and BOLT_MAGIC not in data
    assert all(not chunk or chunk[:1] == b"\x16" for chunk in sq.received)
    assert not server.status(paths).running


@pytest.fixture(scope="module")
def local(tmp_path_factory, neo4j_server):
    """The project's local server, started as ``graphlink neo4j start`` does (state file, generated password,
    launcher certificate) in a private folder; no NEO4J_* variables, nothing pinned in this process for it."""
    paths = server.Paths.default()
    if not server.runtime_version(paths) or not server.find_java():
        pytest.skip("no local Neo4j runtime (the session's server came from NEO4J_URI or a container)")
    mine = server.Paths(tmp_path_factory.mktemp("local") / "neo4j")
    mine.base.mkdir()
    (mine.base / "runtime").symlink_to(paths.runtime, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        for var in ("NEO4J_URI", "NEO4J_AUTH", "NEO4J_PASSWORD", "GRAPHLINK_NEO4J_CERT"):
            mp.delenv(var, raising=False)
        mp.setenv("GRAPHLINK_NEO4J_DIR", str(mine.base))
        mp.setenv("GRAPHLINK_NEO4J_JVM_OPTS", "-XX:TieredStopAtLevel=1")
        server.start(port=server.free_port(), http_port=None, paths=mine, echo=lambda line: None)
        try:
            yield mine
        finally:
            server.stop(mine, timeout=60)


def _assert_no_password(sq: Squatter, password: str) -> None:
    data = sq.everything()
    assert password.encode() not in data and BOLT_MAGIC not in data
    for chunk in sq.received:
        assert not chunk or chunk[:1] == b"\x16"             # a TLS handshake record, nothing else


@pytest.mark.slow
@pytest.mark.parametrize("looks", [1, 2])
def test_connect_reads_address_password_and_certificate_at_once(local, monkeypatch, looks) -> None:
    """The launcher goes (its state file with it) right after ``connect()`` has looked at it ``looks`` times,
    and a squatter holds the address the state file named. Before, connect() read the file again for the password
    and again for the certificate: after two looks it had the password but no certificate, and sent the password
    in plain Bolt. Now one look gives all three: the squatter gets a TLS hello, the caller a one-line error."""
    password = server.local_auth(local)[1]
    real = server.read_state(local)
    sq = Squatter()
    calls = {"n": 0}

    def vanishing(paths: server.Paths) -> dict | None:
        calls["n"] += 1
        return {**real, "uri": sq.uri} if calls["n"] <= looks else None

    monkeypatch.setattr(server, "read_state", vanishing)
    try:
        with pytest.raises(StoreError) as err:
            connect()
    finally:
        sq.close()
    assert "\n" not in str(err.value) and password not in str(err.value)
    assert sq.received, "the client did connect"
    _assert_no_password(sq, password)


@pytest.mark.slow
def test_without_a_readable_certificate_the_local_password_stays_home(local, monkeypatch, tmp_path) -> None:
    """The state file names a certificate that cannot be read: connect() refuses in one line and opens no
    connection at all (no fallback to plain Bolt)."""
    real = server.read_state(local)
    sq = Squatter()
    monkeypatch.setattr(server, "read_state",
                        lambda paths: {**real, "uri": sq.uri, "certificate": str(tmp_path / "gone.crt")})
    try:
        with pytest.raises(StoreError, match="certificate") as err:
            connect()
    finally:
        sq.close()
    assert "\n" not in str(err.value) and not sq.received


def test_the_local_password_is_never_used_without_its_certificate(tmp_path) -> None:
    """The rule itself, without a server: a connection target holding the local password but no certificate is
    refused before any driver exists."""
    from graphlink.store import neo4j

    target = neo4j.Target("bolt://127.0.0.1:1", ("neo4j", SECRET), None, True)
    with pytest.raises(StoreError, match="password is not sent") as err:
        neo4j._open_driver(target)
    assert "\n" not in str(err.value) and SECRET not in str(err.value)


@pytest.mark.slow
def test_a_store_open_across_neo4j_stop_sends_the_squatter_nothing(local) -> None:
    """As reported: a Store (the app's, a notebook's) stays open, ``graphlink neo4j stop`` runs, another program
    takes the port. Using the store again -- the console's driver is opened only now -- fails in one line, and
    the squatter receives a TLS hello and nothing else: not the Bolt handshake, not the password. (Stops the
    module's local server: the last test of the file that uses it.)"""
    password = server.local_auth(local)[1]
    store = connect()                                       # the local server: its generated password
    try:
        assert isinstance(store, Store) and store.list_releases() is not None
        port = int(server.read_state(local)["bolt_port"])
        server.stop(local, timeout=60)
        assert server.read_state(local) is None              # the launcher and its state file are gone
        sq = Squatter(port=port)
        try:
            for use in (lambda: store.run_cypher("RETURN 1 AS one"), store.list_releases):
                with pytest.raises(StoreError) as err:
                    use()
                assert "\n" not in str(err.value) and password not in str(err.value)
        finally:
            sq.close()
    finally:
        store.close()
    assert sq.received, "the store did connect to the squatter"
    _assert_no_password(sq, password)
