"""Lifecycle of the project-local Neo4j Community 5.26 server (no Docker): start, stop, status.

The server is Neo4j's embedded DBMS with Bolt (and HTTP + Neo4j Browser) started by ``docker/local/Neo4jLauncher``
on a class path resolved from Maven Central by ``scripts/setup-neo4j.sh``. Everything lives under one git-ignored
folder, ``<project>/.graphlink/neo4j/`` (override with ``GRAPHLINK_NEO4J_DIR``)::

    runtime/   lib/ (jars), plugins/ (APOC), classes/ (launcher), VERSION      <- scripts/setup-neo4j.sh
    home/      conf/neo4j.conf, data/ (the database), logs/launcher.log     <- written by start()
               import/ (empty: the only folder LOAD CSV could read, and file URLs are off)
               certificates/bolt/ private.key (0600), public.crt: Bolt's TLS <- made by the launcher
    password   the password of the user ``neo4j`` (mode 0600)               <- a new one at every start()
    state.json pid, uri, ports, version, certificate of the running server  <- start() / stop()

The folder is private to its owner (mode 0700). The server listens only on 127.0.0.1 with authentication on and
TLS on Bolt: the launcher makes a self-signed certificate for 127.0.0.1 (kept in the home), and every client of
the project pins exactly that certificate (:func:`open_driver`), so the password is sent only after the TLS
handshake has proved that the listener holds the launcher's private key -- never to whatever else listens on the
port. Every :func:`start` writes a new random password (:func:`new_password`) that the launcher sets before the
database answers; :func:`local_auth` gives it to the CLI, the app, the tests and the benchmarks. There is no
default address: while the local server is not running, nothing connects anywhere unless ``NEO4J_URI`` says
where. ``LOAD CSV`` from file URLs is off, and no plugin procedure is loaded unless listed in
``GRAPHLINK_NEO4J_PROCEDURES`` (the project calls none; docs/security.md). Memory is kept small (heap
``GRAPHLINK_NEO4J_HEAP``, default 1g; page cache ``GRAPHLINK_NEO4J_PAGECACHE``, default 256m). ``stop()`` sends
SIGTERM, which runs the launcher's shutdown hook: the DBMS shuts down cleanly and the data is kept for the next
start.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from graphlink import fileio
from graphlink.config import child_environ, get_config
from graphlink.errors import StoreError, require

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BOLT_PORT = 7687
DEFAULT_HTTP_PORT = 7474
#: version of the launcher's control protocol, recorded in ``state.json``: 1 pause/reopen (``Neo4jLauncher.pauseLoop``),
#: 2 also runs the bulk importer in its JVM (``Neo4jLauncher.runImport``)
CONTROL_PROTOCOL = 2
USER = "neo4j"
#: plugin procedures/functions the server loads (``dbms.security.procedures.allowlist``): the project calls none
#: (it uses only built-in ``db.*``/``dbms.*`` procedures, which the allow-list does not govern)
PROCEDURE_ALLOWLIST: tuple[str, ...] = ()
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
]


def project_root() -> Path:
    """The checkout this package runs from (editable install), else the current directory."""
    if (PACKAGE_ROOT / "docker" / "local" / "pom.xml").is_file():
        return PACKAGE_ROOT
    return Path.cwd()


@dataclass(frozen=True)
class Paths:
    """Where the local server keeps its runtime, home (data + logs) and state file."""

    base: Path

    @classmethod
    def default(cls, base: str | Path | None = None) -> Paths:
        if base is None:
            base = get_config().neo4j_dir or project_root() / ".graphlink" / "neo4j"
        return cls(Path(base).resolve())

    @property
    def runtime(self) -> Path:
        return self.base / "runtime"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def state_file(self) -> Path:
        return self.base / "state.json"

    @property
    def log(self) -> Path:
        return self.home / "logs" / "launcher.log"

    @property
    def password_file(self) -> Path:
        return self.base / "password"

    @property
    def tls_dir(self) -> Path:
        return tls_dir(self.home)

    @property
    def certificate(self) -> Path:
        return self.tls_dir / "public.crt"


def tls_dir(home: Path) -> Path:
    """The folder of Bolt's key and certificate in a server home (``dbms.ssl.policy.bolt.base_directory``)."""
    return Path(home) / "certificates" / "bolt"


@dataclass
class ServerStatus:
    """What ``graphlink neo4j status`` prints."""

    running: bool
    uri: str | None = None
    http: str | None = None
    version: str | None = None
    pid: int | None = None
    home: str | None = None
    log: str | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------- prerequisites
def find_java() -> str | None:
    """``$JAVA_HOME/bin/java`` if set, else ``java`` on PATH."""
    java_home = get_config().java_home
    if java_home:
        cand = Path(java_home) / "bin" / "java"
        if cand.is_file():
            return str(cand)
    return shutil.which("java")


def java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    for token in out.split('"')[1:2]:
        head = token.split(".")[0]
        if head == "1":  # 1.8.0_xyz
            return 8
        if head.isdigit():
            return int(head)
    return None


def runtime_version(paths: Paths) -> str | None:
    """Neo4j version of a complete runtime (``runtime/VERSION`` is written last by the setup script)."""
    vf = paths.runtime / "VERSION"
    classes = paths.runtime / "classes"
    if vf.is_file() and all((classes / c).is_file() for c in ("Neo4jLauncher.class", "CypherCheck.class")):
        return vf.read_text().strip() or None
    return None


def setup_script() -> Path:
    return project_root() / "scripts" / "setup-neo4j.sh"


def launcher_stale(paths: Paths) -> bool:
    """A compiled class is older than its source, ``docker/local/Neo4jLauncher.java`` or ``CypherCheck.java`` (the
    console's parser worker): the setup script rebuilds them."""
    for name in ("Neo4jLauncher", "CypherCheck"):
        source = project_root() / "docker" / "local" / f"{name}.java"
        compiled = paths.runtime / "classes" / f"{name}.class"
        try:
            if compiled.stat().st_mtime <= source.stat().st_mtime:
                return True
        except OSError:
            continue  # no source checkout (installed package) or no runtime: nothing to compare
    return False


def ensure_runtime(paths: Paths, echo: Callable[[str], None] = print) -> str:
    """Resolve the jars with Maven (first start only; progress streamed through ``echo``) and recompile a stale
    launcher; return the version."""
    version = runtime_version(paths)
    if version and not launcher_stale(paths):
        return version
    script = setup_script()
    if not script.is_file():
        raise StoreError(f"the Neo4j jars are missing in {paths.runtime} and {script} is not there to fetch them; "
                         "set NEO4J_URI to use another Neo4j")
    if not shutil.which("mvn"):
        raise StoreError(f"the Neo4j jars are missing in {paths.runtime} and Maven (mvn) is not installed: "
                         "install Maven 3.8+ and run `bash scripts/setup-neo4j.sh`, or set NEO4J_URI")
    echo(f"Resolving the Neo4j jars from Maven Central into {paths.runtime} (first start only)...")
    env = child_environ(GRAPHLINK_NEO4J_DIR=str(paths.base))
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        echo(line.rstrip())
    if proc.wait() != 0 or not runtime_version(paths):
        raise StoreError(f"resolving the Neo4j jars failed (exit {proc.returncode}); run "
                         f"`bash {script}` to see why")
    return runtime_version(paths) or "?"


def check_java() -> str:
    java = find_java()
    if not java:
        raise StoreError("Java not found: Neo4j 5.26 needs Java 17 or 21 (Debian/Ubuntu: "
                         "apt-get install openjdk-17-jdk-headless), or set NEO4J_URI to another Neo4j")
    major = java_major(java)
    if major is not None and major < 17:
        raise StoreError(f"{java} is Java {major}; Neo4j 5.26 needs Java 17 or 21 (set JAVA_HOME)")
    return java


# ---------------------------------------------------------------------------------------------- authentication
def ensure_password(password_file: Path) -> str:
    """The local server's password: read from ``password_file``, or generated (32 random URL-safe bytes) and
    written there with mode 0600 on first use. A file others could read is narrowed to 0600."""
    if password_file.is_file():
        if password_file.stat().st_mode & 0o077:
            password_file.chmod(0o600)
        password = password_file.read_text(encoding="utf-8").strip()
        if password:
            return password
    password = secrets.token_urlsafe(32)
    password_file.parent.mkdir(parents=True, exist_ok=True)
    with fileio.atomic_open(password_file, "w", mode=0o600) as fh:
        fh.write(password + "\n")
    return password


def new_password(password_file: Path) -> str:
    """Write a new random password (32 random URL-safe bytes) to ``password_file`` (mode 0600, atomically)."""
    password = secrets.token_urlsafe(32)
    password_file.parent.mkdir(parents=True, exist_ok=True)
    fileio.write_text(password_file, password + "\n", mode=0o600)
    return password


def local_auth(paths: Paths | None = None) -> tuple[str, str] | None:
    """``("neo4j", password)`` of the local server if its password file exists, else None."""
    paths = paths or Paths.default()
    try:
        password = paths.password_file.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return (USER, password) if password else None


def _private_dir(path: Path) -> None:
    """Create ``path`` (and parents) and make it readable by its owner only: it holds data, logs and the password."""
    path.mkdir(parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


# ---------------------------------------------------------------------------------------------- ports / conf
def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pick_port(preferred: int) -> int:
    """``preferred`` if free, else any free port (0 means any)."""
    return preferred if preferred and port_free(preferred) else free_port()


def procedure_allowlist() -> list[str]:
    """:data:`PROCEDURE_ALLOWLIST` plus the comma-separated ``GRAPHLINK_NEO4J_PROCEDURES`` (e.g. ``apoc.coll.*``),
    never a family of :data:`graphlink.store.plugins.NEVER` (dynamic Cypher, files, URLs): an entry naming one is
    dropped, and a pattern that covers one (``apoc.*``, ``*``) becomes the pure helper families it covers
    (:data:`graphlink.store.plugins.PLUGIN_FUNCTIONS`). So the server does not even register those procedures and
    functions, whatever the setting says. O(entries × families)."""
    return safe_allowlist([*PROCEDURE_ALLOWLIST, *get_config().neo4j_procedures])


def safe_allowlist(entries: list[str]) -> list[str]:
    """``entries`` of ``dbms.security.procedures.allowlist`` (names or ``*``/``?`` patterns) without the refused
    families; see :func:`procedure_allowlist`."""
    from fnmatch import fnmatchcase

    from graphlink.store.plugins import NEVER, PLUGIN_FUNCTIONS, never_allowed

    out: list[str] = []
    for entry in (e.strip() for e in entries):
        if not entry or never_allowed(entry.replace("*", "").replace("?", "") or "*"):
            continue
        if any(fnmatchcase(family + "x", entry) or fnmatchcase(family.rstrip("."), entry) for family in NEVER):
            out += [family + "*" for family in PLUGIN_FUNCTIONS if fnmatchcase(family + "x", entry)]
        else:
            out.append(entry)
    return list(dict.fromkeys(out))


#: share of the heap one transaction may hold (``db.memory.transaction.max``) and all of them together
#: (``db.memory.transaction.total.max``): the rest stays for Bolt, the page cache's bookkeeping and the planner
TX_MEMORY_SHARE = 0.5
TX_MEMORY_TOTAL_SHARE = 0.7
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def size_bytes(size: str) -> int:
    """A JVM memory size (``1g``, ``512m``, ``2048M``, ``1024k``, plain bytes) in bytes; StoreError otherwise."""
    text = str(size).strip().lower()
    number, unit = (text[:-1], text[-1]) if text[-1:] in "kmgt" and text[-1:] else (text, "")
    if not number.isdigit() or int(number) == 0:
        raise StoreError(f"the Neo4j heap must be a size such as 1g or 512m (GRAPHLINK_NEO4J_HEAP), got {size!r}")
    return int(number) * _UNITS[unit]


def memory_limits(heap: str) -> tuple[str, str]:
    """``(db.memory.transaction.max, db.memory.transaction.total.max)`` for a server with ``heap``: half the heap
    per transaction, 70 % for all of them (in MiB). The server stops a transaction that would hold more
    (``Neo.TransientError.General.MemoryPoolOutOfMemoryError``) instead of the JVM running out of heap."""
    mib = size_bytes(heap) >> 20
    return f"{max(1, int(mib * TX_MEMORY_SHARE))}m", f"{max(1, int(mib * TX_MEMORY_TOTAL_SHARE))}m"


def write_conf(home: Path, runtime: Path, bolt_port: int, http_port: int | None,
               pagecache: str | None = None, heap: str | None = None) -> Path:
    """Write ``<home>/conf/neo4j.conf`` (strict validation is on: every key exists in 5.26).

    Hardening (docs/security.md): loopback only, authentication on, TLS on Bolt with the launcher's certificate
    (required; optional only while HTTP serves Neo4j Browser, whose web page cannot trust a self-signed
    certificate), ``LOAD CSV`` file URLs off, the import folder pinned to the empty ``<home>/import``, plugin
    procedures limited to :func:`procedure_allowlist`. Limits: every transaction stops after
    ``GRAPHLINK_NEO4J_TX_TIMEOUT`` seconds unless its client asks for another limit (``db.transaction.timeout``;
    the console always does), and holds at most the memory :func:`memory_limits` gives for ``heap`` (default
    ``GRAPHLINK_NEO4J_HEAP``, the heap :func:`launcher_command` gives the JVM).
    """
    config = get_config()
    pagecache = pagecache or config.neo4j_pagecache
    tx_max, tx_total = memory_limits(heap or config.neo4j_heap)
    import_dir = home / "import"
    import_dir.mkdir(parents=True, exist_ok=True)
    plugins_dir = home / "plugins"  # empty: no plugin jar is even loaded unless plugin procedures are asked for
    plugins_dir.mkdir(exist_ok=True)
    lines = [
        "# written by graphlink/store/server.py on every start; edits are overwritten",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        "server.bolt.enabled=true",
        f"server.bolt.listen_address=127.0.0.1:{bolt_port}",
        f"server.bolt.advertised_address=127.0.0.1:{bolt_port}",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.routing.enabled=false",
        "dbms.usage_report.enabled=false",
        f"server.memory.pagecache.size={pagecache}",
        # limits the server enforces on every client, the console's and any other (docs/security.md)
        f"db.transaction.timeout={config.neo4j_tx_timeout * 1000:.0f}ms",
        f"db.memory.transaction.max={tx_max}",
        f"db.memory.transaction.total.max={tx_total}",
        "db.tx_log.rotation.retention_policy=2 files",
        "db.tx_log.rotation.size=64m",
        "db.tx_log.preallocate=false",
        # Bolt's event loops shut down without netty's 5 s quiet period (twice): a clean stop takes ~1 s, not ~11 s
        "internal.dbms.bolt.netty_server_shutdown_quiet_period=0",
        f"server.directories.plugins={runtime / 'plugins' if plugins_requested() else plugins_dir}",
        f"server.directories.import={import_dir}",
        "dbms.security.allow_csv_import_from_file_urls=false",
        f"dbms.security.procedures.allowlist={','.join(procedure_allowlist())}",
        # Bolt over TLS with the key and self-signed certificate the launcher keeps in certificates/bolt/
        "dbms.ssl.policy.bolt.enabled=true",
        f"dbms.ssl.policy.bolt.base_directory={tls_dir(home)}",
        "dbms.ssl.policy.bolt.private_key=private.key",
        "dbms.ssl.policy.bolt.public_certificate=public.crt",
        "dbms.ssl.policy.bolt.client_auth=NONE",
        f"server.bolt.tls_level={'OPTIONAL' if http_port else 'REQUIRED'}",
    ]
    if http_port:
        lines += ["server.http.enabled=true", f"server.http.listen_address=127.0.0.1:{http_port}",
                  f"server.http.advertised_address=127.0.0.1:{http_port}"]
    else:
        lines += ["server.http.enabled=false"]
    conf = home / "conf" / "neo4j.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    with fileio.atomic_open(conf, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return conf


def plugins_requested() -> bool:
    """Plugin procedures (APOC) are asked for: ``GRAPHLINK_NEO4J_PROCEDURES`` is set (the project needs none)."""
    return bool(procedure_allowlist())


def class_path(paths: Paths) -> str:
    """The launcher's class path: its class and the Neo4j jars (incl. neo4j-admin); with plugin procedures asked
    for (:func:`plugins_requested`) also the plugins, which APOC needs both in the plugins dir (the procedures)
    and on the class path (its extension factories).

    With the plugins, ``hadoop-common`` (Neo4j ships it for its Parquet importer, which graphlink does not use,
    without its own dependencies) is left out: APOC's URL handler looks for Hadoop and fails on the half-present
    library the first time the JDK's crypto starts, i.e. when Bolt's TLS does.
    """
    classes, lib = str(paths.runtime / "classes"), paths.runtime / "lib"
    if not plugins_requested():
        return os.pathsep.join([classes, str(lib / "*")])
    jars = [str(j) for j in sorted(lib.glob("*.jar")) if not j.name.startswith("hadoop-common-")]
    return os.pathsep.join([classes, str(paths.runtime / "plugins" / "*"), *jars])


def launcher_command(java: str, paths: Paths, home: Path, *, heap: str | None = None,
                     exit_on_stdin_eof: bool = False, quick_start: bool = False,
                     password_file: Path | None = None, reset_password: bool = False,
                     tls: bool = True) -> list[str]:
    """The JVM command line. ``GRAPHLINK_NEO4J_JVM_OPTS`` adds flags; ``quick_start`` compiles with C1 only
    (``-XX:TieredStopAtLevel=1``): starts about twice as fast, fine for short test sessions, slower for big loads.
    ``password_file``: the launcher sets the password of ``neo4j`` from it before Bolt opens (first start) and on
    every later start of the database; ``reset_password``: it sets it on an existing database with Bolt and HTTP
    off, then exits; ``tls``: it makes Bolt's key and certificate in ``certificates/bolt/`` if they are missing.
    """
    heap = heap or get_config().neo4j_heap
    cp = class_path(paths)
    flags = ["-Xms256m", f"-Xmx{heap}", *JVM_FLAGS]
    if exit_on_stdin_eof:
        flags.append("-Dneo4j.exitOnStdinEof=true")
    if quick_start:
        flags.append("-XX:TieredStopAtLevel=1")
    if password_file is not None:
        flags.append(f"-Dgraphlink.passwordFile={password_file}")
        if not reset_password:  # set at every start, not only as the initial password of a new database
            flags.append("-Dgraphlink.setPassword=true")
    if reset_password:
        flags.append("-Dgraphlink.resetPassword=true")
    if tls and not reset_password:
        flags.append(f"-Dgraphlink.tlsDir={tls_dir(home)}")
    flags += get_config().neo4j_jvm_opts
    return [java, *flags, "-cp", cp, "Neo4jLauncher", str(home)]


def make_certificate(folder: Path, paths: Paths | None = None) -> Path:
    """A key and self-signed certificate like the launcher's, in ``folder`` (``Neo4jLauncher certificate``):
    ``private.key`` (0600) and ``public.crt``, kept if valid for 30 more days. Returns the certificate."""
    paths = paths or Paths.default()
    ensure_runtime(paths, echo=lambda line: None)
    cmd = [check_java(), "-cp", class_path(paths), "Neo4jLauncher", "certificate", str(folder)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise StoreError(f"making a certificate failed (exit {proc.returncode}): {proc.stdout[-300:]}"
                         f"{proc.stderr[-300:]}")
    return Path(folder) / "public.crt"


# ---------------------------------------------------------------------------------------------- readiness
class AuthRefusedError(StoreError):
    """A Bolt server answers but refuses the credentials (exit 2)."""


#: certificates pinned for servers this process started (EphemeralServer): Bolt URI -> public.crt
_PINNED: dict[str, Path] = {}


def pin(uri: str, certificate: Path) -> None:
    """Pin ``certificate`` for ``uri`` in this process (a server it started itself)."""
    _PINNED[uri] = Path(certificate)


def pinned_certificate(uri: str, paths: Paths | None = None) -> Path | None:
    """The certificate a client must pin to talk to ``uri``, or None (then TLS is as ``uri`` says).

    A server this process started (:func:`pin`); else the project's local server when ``uri`` is the one in its
    state file and its launcher runs (the certificate recorded there); else ``GRAPHLINK_NEO4J_CERT`` (a PEM file,
    for a server named by ``NEO4J_URI`` that uses a private certificate).
    """
    if uri in _PINNED:
        return _PINNED[uri]
    paths = paths or Paths.default()
    state = read_state(paths)
    if state and state.get("uri") == uri and state.get("pid") and _is_our_launcher(int(state["pid"]), paths.home):
        cert = state.get("certificate")
        if not cert:
            raise StoreError("the local Neo4j server was started by an older graphlink, without TLS; restart it "
                             "(`graphlink neo4j stop`, then `graphlink neo4j start`)")
        return Path(cert)
    env = get_config().neo4j_cert
    return Path(env) if env else None


@dataclass(frozen=True)
class LocalServer:
    """The project's running local server as one read of its state file found it: its URI, the password
    (None without a password file) and the bytes of the certificate its clients pin (None when the state file
    names none or the file cannot be read)."""

    uri: str
    auth: tuple[str, str] | None
    certificate: bytes | None


def local_server(paths: Paths | None = None) -> LocalServer | None:
    """The running local server (:class:`LocalServer`), or None when its launcher does not run.

    One read of ``state.json``, the password file and the certificate, together: a client holds on to what it
    got here, so a server stopping (and something else taking its port) between two reads cannot leave it with
    the password but without the certificate that must guard it. O(1) file reads.
    """
    paths = paths or Paths.default()
    state = read_state(paths)
    if not (state and state.get("pid") and state.get("uri") and _is_our_launcher(int(state["pid"]), paths.home)):
        return None
    cert = None
    if state.get("certificate"):
        with contextlib.suppress(OSError):
            cert = Path(state["certificate"]).read_bytes() or None
    return LocalServer(str(state["uri"]), local_auth(paths), cert)


def read_certificate(path: Path | str, uri: str) -> bytes:
    """The PEM bytes of the certificate pinned for ``uri``; StoreError (one line) if the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        data = b""
    if not data.strip():
        raise StoreError(f"the certificate pinned for {uri} is missing ({path}); the client does not send "
                         "credentials to a server it cannot verify")
    return data


def tls_context(certificate: bytes):  # -> ssl.SSLContext
    """A client TLS context that trusts exactly ``certificate`` (PEM bytes held in memory, never read again):
    the server must present it, or a certificate it signed, for the host it is reached at. TLS 1.2 or later."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        context.load_verify_locations(cadata=certificate.decode("ascii"))
    except (ssl.SSLError, UnicodeDecodeError, ValueError):
        raise StoreError("the pinned certificate is not a PEM certificate; the client does not send credentials "
                         "to a server it cannot verify") from None
    return context


def open_driver(uri: str, auth=None, *, certificate: Path | bytes | None = None, **config):
    """A Neo4j driver for ``uri`` that verifies the server before it sends ``auth``.

    With a pinned certificate (``certificate``: a file, or its PEM bytes; else :func:`pinned_certificate`) the
    connection is TLS and the server must present exactly a certificate signed by that one (the launcher's is
    self-signed, so: that certificate) for 127.0.0.1; the credentials travel only inside that TLS session, after
    the handshake. A listener without the launcher's private key (a process that took the port while the server
    was down) sees a TLS ClientHello and nothing else. Bytes are used as they are (a :class:`LocalServer` read
    them once); a file is read now, once. ``uri`` must then use the plain scheme (``bolt://``, ``neo4j://``):
    the driver refuses ``+s``/``+ssc`` together with a custom trust. ``config`` goes to the driver.
    StoreError if the pinned certificate file is missing.
    """
    driver = require("neo4j", "neo4j", "the Neo4j store")

    cert = certificate if certificate is not None else pinned_certificate(uri)
    if cert is not None:
        pem = cert if isinstance(cert, bytes) else read_certificate(cert, uri)
        config.update(ssl_context=tls_context(pem))
    return driver.GraphDatabase.driver(uri, auth=auth, **config)


def bolt_version(uri: str, auth=None, timeout: float = 3.0, certificate: Path | bytes | None = None) -> str | None:
    """Neo4j version string if a Bolt server answers at ``uri``, else None; AuthRefusedError if it refuses ``auth``.
    The connection is made by :func:`open_driver` (TLS with the pinned certificate, if any)."""
    exceptions = require("neo4j.exceptions", "neo4j", "the Neo4j store")

    try:
        with open_driver(uri, auth, certificate=certificate, connection_timeout=timeout) as drv:
            drv.verify_connectivity()
            with drv.session(database="system") as session:  # a plain session: no managed-transaction retries
                rec = session.run("CALL dbms.components() YIELD versions RETURN versions[0] AS v").single()
            return str(rec["v"]) if rec else None
    except exceptions.AuthError:
        raise AuthRefusedError(f"Neo4j at {uri} refused the credentials") from None
    except Exception:
        return None


def _password_hint(paths: Paths) -> str:
    return (f"the local server refuses the password in {paths.password_file}; if that file was lost or replaced, "
            "restart the server (`graphlink neo4j stop`, then `graphlink neo4j start` sets a new password)")


def _said_ready(log: Path, offset: int) -> bool:
    """The launcher wrote ``NEO4J_READY`` to ``log`` after byte ``offset`` (where this start's output begins)."""
    try:
        with log.open("rb") as fh:
            fh.seek(offset)
            return b"NEO4J_READY" in fh.read()
    except OSError:
        return False


def wait_ready(uri: str, *, proc: subprocess.Popen | None = None, log: Path | None = None,
               timeout: float = 180.0, echo: Callable[[str], None] | None = None, auth=None,
               certificate: Path | None = None, ready_from: int | None = None) -> str:
    """Poll until Bolt answers ``auth`` (over TLS verified against ``certificate``, or the pinned one); raise
    StoreError with the log tail if the launcher dies or time runs out, AuthRefusedError if the server refuses
    ``auth``. With ``ready_from`` (the size of ``log`` when the launcher started) nothing is tried before the
    launcher has written ``NEO4J_READY`` there: it does so once its server listens and has taken the password
    of this start. Even then, nothing but a TLS ClientHello goes out until the server proves it holds the key of
    the pinned certificate."""
    t0 = time.monotonic()
    last_note = t0
    while time.monotonic() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2500:] if log and log.is_file() else ""
            raise StoreError(f"the Neo4j launcher exited with code {proc.returncode} before it was ready; "
                             f"log {log}:\n{tail}")
        ready = ready_from is None or log is None or _said_ready(log, ready_from)
        version = bolt_version(uri, auth=auth, timeout=2.0, certificate=certificate) if ready else None
        if version:
            return version
        if echo and time.monotonic() - last_note > 5:
            echo(f"  waiting for Neo4j at {uri} ({time.monotonic() - t0:.0f} s)...")
            last_note = time.monotonic()
        time.sleep(0.5)
    raise StoreError(f"Neo4j at {uri} did not answer within {timeout:.0f} s; see {log}")


# ---------------------------------------------------------------------------------------------- state / pid
def read_state(paths: Paths) -> dict | None:
    try:
        return json.loads(paths.state_file.read_text())
    except (OSError, ValueError):
        return None


def _is_our_launcher(pid: int, home: Path) -> bool:
    """True if ``pid`` is alive and is the launcher serving ``home`` (guards against PID reuse)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): trust the state file
    args = [a.decode(errors="replace") for a in cmdline]
    return "Neo4jLauncher" in args and str(home) in args


def status(paths: Paths | None = None) -> ServerStatus:
    """State of the local server: running or not, URI, version, PID."""
    paths = paths or Paths.default()
    state = read_state(paths)
    rv = runtime_version(paths)
    if not state:
        msg = ("not running" if rv else
               "not running; the jars are not resolved yet (`graphlink neo4j start` fetches them)")
        return ServerStatus(False, version=rv, home=str(paths.home), message=msg)
    pid = int(state.get("pid", 0))
    if not pid or not _is_our_launcher(pid, paths.home):
        return ServerStatus(False, uri=state.get("uri"), version=rv, home=str(paths.home), log=str(paths.log),
                            message="not running (stale state file: the process is gone)")
    try:
        version = bolt_version(state["uri"], auth=local_auth(paths),
                               certificate=pinned_certificate(state["uri"], paths))
        message = "running" if version else "process alive but Bolt does not answer (starting?)"
    except AuthRefusedError:
        version, message = None, "running, but " + _password_hint(paths)
    except StoreError as exc:  # started by an older graphlink: no certificate to pin
        version, message = None, f"running, but {exc}"
    return ServerStatus(True, uri=state["uri"], http=state.get("http"), version=version or state.get("version"),
                        pid=pid, home=str(paths.home), log=str(paths.log), message=message,
                        extra={"password_file": str(paths.password_file)})


def local_uri(paths: Paths | None = None) -> str | None:
    """Bolt URI of the local server from its state file if its process is alive, else None."""
    paths = paths or Paths.default()
    state = read_state(paths)
    if state and state.get("pid") and _is_our_launcher(int(state["pid"]), paths.home):
        return state.get("uri")
    return None


def start(*, port: int = DEFAULT_BOLT_PORT, http_port: int | None = DEFAULT_HTTP_PORT,
          paths: Paths | None = None, timeout: float = 180.0,
          echo: Callable[[str], None] = print) -> ServerStatus:
    """Start the local server in the background (idempotent: returns the status if it already runs).

    Resolves the jars on first use, completes the renames of an interrupted bulk import
    (:func:`graphlink.store.bulkswap.complete_swap`), writes a new password (the launcher sets it before the
    database answers, so a password that ever leaked stops working at the next start), takes ``port`` (a free port
    if taken), waits until Bolt answers over TLS with the launcher's certificate, writes ``state.json``.
    ``http_port=None`` disables HTTP/Browser.
    """
    paths = paths or Paths.default()
    current = status(paths)
    if current.running:
        current.message = "already running"
        return current
    java = check_java()
    version = ensure_runtime(paths, echo)
    home = paths.home
    _private_dir(paths.base)
    from graphlink.store import bulkswap  # a bulk import interrupted during its renames: finish them first

    finished = bulkswap.complete_swap(paths)
    if finished:
        echo(finished)
    (home / "logs").mkdir(parents=True, exist_ok=True)
    new_password(paths.password_file)
    bolt = pick_port(port)
    if bolt != port:
        echo(f"port {port} is taken; using {bolt}")
    http = pick_port(http_port) if http_port else None
    if http == bolt:
        http = free_port()
    write_conf(home, paths.runtime, bolt, http)
    cmd = launcher_command(java, paths, home, password_file=paths.password_file)
    log_start = paths.log.stat().st_size if paths.log.is_file() else 0
    with paths.log.open("ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=str(home), start_new_session=True)
    uri = f"bolt://127.0.0.1:{bolt}"
    http_url = f"http://127.0.0.1:{http}/browser/" if http else None
    # control: the launcher pauses its DBMS on request (control/ files; graphlink.store.bulk swaps a store in)
    state = {"pid": proc.pid, "uri": uri, "http": http_url, "bolt_port": bolt, "http_port": http,
             "version": version, "home": str(home), "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
             "control": CONTROL_PROTOCOL, "certificate": str(paths.certificate)}
    fileio.write_text(paths.state_file, json.dumps(state, indent=2))
    echo(f"starting Neo4j {version} (pid {proc.pid}, data in {home / 'data'})...")
    try:
        served = wait_ready(uri, proc=proc, log=paths.log, timeout=timeout, echo=echo, auth=local_auth(paths),
                            certificate=paths.certificate, ready_from=log_start)
    except AuthRefusedError:
        _kill_and_forget(proc, paths)
        raise AuthRefusedError(_password_hint(paths)) from None
    except BaseException:  # includes Ctrl-C: never leave a half-started JVM behind
        _kill_and_forget(proc, paths)
        raise
    state["version"] = served
    fileio.write_text(paths.state_file, json.dumps(state, indent=2))
    return ServerStatus(True, uri=uri, http=http_url, version=served, pid=proc.pid, home=str(home),
                        log=str(paths.log), message="started", extra={"password_file": str(paths.password_file)})


def _kill_and_forget(proc: subprocess.Popen, paths: Paths) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    paths.state_file.unlink(missing_ok=True)


def reset_password(paths: Paths | None = None, timeout: float = 300.0,
                   echo: Callable[[str], None] = print) -> Path:
    """Give the stopped local server a new generated password (the way back from a lost password file).

    Replaces the password file, then runs the launcher once with Bolt and HTTP off to set that password in the
    system database. Returns the password file. StoreError if the server is running or the launcher fails.
    """
    paths = paths or Paths.default()
    if status(paths).running:
        raise StoreError("the local server is running; stop it first (`graphlink neo4j stop`)")
    if not (paths.home / "data" / "databases").is_dir():
        raise StoreError(f"no local database in {paths.home} yet; `graphlink neo4j start` creates it with a "
                         "generated password")
    java = check_java()
    ensure_runtime(paths, echo)
    _private_dir(paths.base)
    fileio.write_text(paths.password_file, secrets.token_urlsafe(32) + "\n", mode=0o600)
    state = read_state(paths) or {}
    write_conf(paths.home, paths.runtime, int(state.get("bolt_port") or DEFAULT_BOLT_PORT), None)
    cmd = launcher_command(java, paths, paths.home, password_file=paths.password_file, reset_password=True,
                           tls=False)
    echo("setting a new password on the local database (connectors off)...")
    with paths.log.open("ab") as log:
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                  cwd=str(paths.home), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise StoreError(f"resetting the password did not finish within {timeout:.0f} s; see {paths.log}") \
                from None
    if proc.returncode != 0 or "NEO4J_PASSWORD_RESET" not in paths.log.read_text(errors="replace")[-4000:]:
        raise StoreError(f"resetting the password failed (exit {proc.returncode}); see {paths.log}")
    return paths.password_file


def stop(paths: Paths | None = None, timeout: float = 90.0) -> ServerStatus:
    """Stop the local server cleanly (SIGTERM -> shutdown hook); SIGKILL only after ``timeout`` seconds."""
    paths = paths or Paths.default()
    state = read_state(paths)
    if not state or not state.get("pid") or not _is_our_launcher(int(state["pid"]), paths.home):
        paths.state_file.unlink(missing_ok=True)
        return ServerStatus(False, home=str(paths.home), message="not running")
    pid = int(state["pid"])
    os.kill(pid, signal.SIGTERM)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and _alive(pid):
        time.sleep(0.2)
    forced = _alive(pid)
    if forced:
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)
    paths.state_file.unlink(missing_ok=True)
    msg = (f"stopped (pid {pid}) after {time.monotonic() - t0:.1f} s" if not forced else
           f"did not stop within {timeout:.0f} s; killed pid {pid} (the store recovers on next start)")
    return ServerStatus(False, pid=pid, home=str(paths.home), log=str(paths.log), message=msg)


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reap if it is our child (same process started it)
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return Path(f"/proc/{pid}/status").read_text().find("State:\tZ") < 0
    except OSError:
        return True


# ---------------------------------------------------------------------------------------------- ephemeral (tests)
class EphemeralServer:
    """A throw-away server on a free port in ``home`` (tests): exits when this process closes its stdin or dies.

    HTTP off, page cache 128m, quick-start JIT (see :func:`launcher_command`). Authentication and TLS are on, as
    on the project's server: the password is generated into ``home/password`` (0600) and kept there, so a new
    EphemeralServer on the same ``home`` (a restart) uses it again; ``auth`` is what a client passes; the
    certificate (``certificate``) is pinned for ``uri`` in this process (:func:`pin`), and a child process pins it
    through ``GRAPHLINK_NEO4J_CERT``.
    """

    def __init__(self, home: Path, paths: Paths | None = None, timeout: float = 180.0) -> None:
        self.paths = paths or Paths.default()
        if not runtime_version(self.paths):
            raise StoreError(f"no Neo4j runtime in {self.paths.runtime}: run `bash scripts/setup-neo4j.sh`")
        ensure_runtime(self.paths, echo=lambda line: None)  # recompiles a stale launcher
        java = check_java()
        self.home = Path(home)
        _private_dir(self.home)
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        self.password_file = self.home / "password"
        self.auth = (USER, ensure_password(self.password_file))
        port = free_port()
        write_conf(self.home, self.paths.runtime, port, None, pagecache="128m")
        self.log = self.home / "logs" / "launcher.log"
        log_start = self.log.stat().st_size if self.log.is_file() else 0
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                launcher_command(java, self.paths, self.home, exit_on_stdin_eof=True, quick_start=True,
                                 password_file=self.password_file),
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=str(self.home))
        self.port = port
        self.uri = f"bolt://127.0.0.1:{port}"
        self.certificate = tls_dir(self.home) / "public.crt"
        pin(self.uri, self.certificate)
        try:
            self.version = wait_ready(self.uri, proc=self.proc, log=self.log, timeout=timeout, auth=self.auth,
                                      certificate=self.certificate, ready_from=log_start)
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            raise

    def client_env(self) -> dict[str, str]:
        """Environment for a child process (the CLI) to use this server: its URI, credentials and certificate."""
        return {"NEO4J_URI": self.uri, "NEO4J_AUTH": f"{self.auth[0]}/{self.auth[1]}",
                "GRAPHLINK_NEO4J_CERT": str(self.certificate)}

    def kill(self) -> None:
        """SIGKILL the server (a crash: no shutdown hook; the next start on this home runs recovery)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 60.0) -> None:
        if self.proc.poll() is None and self.proc.stdin:
            self.proc.stdin.close()  # the launcher exits on stdin EOF -> clean shutdown
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


if __name__ == "__main__":  # pragma: no cover - manual use: python -m graphlink.store.server start|stop|status
    cmd = sys.argv[1] if len(sys.argv) > 1 else "status"
    print(json.dumps({"start": start, "stop": stop, "status": status}[cmd]().to_dict(), indent=2))
