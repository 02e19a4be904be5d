"""One configuration object: every tunable setting of graphlink, its default, and the environment variable that
overrides it (docs/configuration.md has the table).

The pattern is scikit-learn's ``get_config`` / ``set_config`` / ``config_context``:

* :func:`get_config` returns the settings in force, a frozen :class:`Config`.  Modules call it when they need a
  value, never at import: ``import graphlink`` reads no environment variable.
* The ``GRAPHLINK_*`` environment variables are overrides of the defaults, read **once**, at the first
  :func:`get_config` of the process (a process's environment is set when it starts; the CLI, the app and the
  Spark driver each read theirs then).  An empty variable counts as unset.  A value that does not parse is
  refused there, in one line naming the variable and what it expects (exit 2).
* The connection settings (``NEO4J_URI``, ``NEO4J_AUTH``, ``NEO4J_USER``, ``NEO4J_PASSWORD``,
  ``NEO4J_DATABASE``, ``SPARK_MASTER``) and the tools' own variables (``JAVA_HOME``, ``CHROMIUM``) keep the names
  their tools read and are read at **every** :func:`get_config`, unless :func:`set_config` or
  :func:`config_context` set them: which server to use may change while a process runs (a notebook, the tests),
  as it always could.  Their values are checked the same way, in one line naming the variable.
* This is the one module that touches ``os.environ``: what other modules hand to child processes or to the
  libraries they load goes through :func:`child_environ`, :func:`export` and :func:`export_path`, and
  :func:`environ_has_prefix` answers the one question about the user's allocator variables
  (``tests/foundation/test_config.py`` scans the tree for any other access).
* :func:`set_config` changes settings for the rest of the process (inside a :func:`config_context`: until that
  context ends); :func:`config_context` changes them for a ``with`` block and restores them after, nested
  blocks included.  The active context lives in a :class:`contextvars.ContextVar`, so concurrent threads and
  asyncio tasks each see their own block; a new thread starts from the process-wide settings (run it in
  ``contextvars.copy_context()`` to carry a block into it).

Examples
--------
>>> from graphlink.config import config_context, get_config
>>> with config_context(neo4j_writers=5):
...     get_config().neo4j_writers
5
>>> get_config().neo4j_writers == 5
False
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphlink.errors import GraphlinkError, StoreError

__all__ = ["Config", "ConfigError", "child_environ", "config_context", "environ_has_prefix", "export", "export_path",
           "get_config", "reload", "set_config", "settings"]

TRUE = {"1", "true", "yes", "on"}


class ConfigError(GraphlinkError):
    """A setting (or the environment variable behind it) that does not parse or is out of range (exit 2)."""

    exit_code = 2


def _flag(raw: str) -> bool:
    # lenient on purpose: the flags switch features on, and anything but a yes leaves them off
    return raw.strip().lower() in TRUE


def _words(raw: str) -> tuple[str, ...]:
    return tuple(raw.split())


def _names(raw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in raw.split(",") if p.strip()))


def _setting(default: Any, env: str, doc: str, *, parse: Callable[[str], Any] = str,
             check: Callable[[Any], bool] | None = None, expect: str = "", error: type[GraphlinkError] = ConfigError,
             area: str = "", live: bool = False, secret: bool = False) -> Any:
    """A :class:`Config` field: its default, the variable that overrides it, how its text is read (``parse``),
    what a valid value is (``check``, ``expect``: words for the refusal), the error a bad value raises (the
    store's settings raise :class:`~graphlink.errors.StoreError`, as they always have) and its area.  ``live``:
    read at every :func:`get_config` (the connection variables); ``secret``: never shown (not in ``repr``, not
    echoed by a refusal)."""
    return field(default=default, repr=not secret,
                 metadata={"env": env, "doc": doc, "parse": parse, "check": check, "expect": expect, "error": error,
                           "area": area, "live": live, "secret": secret})


def _whole(default: int | None, env: str, doc: str, *, low: int = 0, **kw: Any) -> Any:
    """A setting that is a whole number of at least ``low``."""
    return _setting(default, env, doc, parse=int, check=_at_least(low), expect=f"a whole number ≥ {low}", **kw)


def _at_least(low: float) -> Callable[[Any], bool]:
    return lambda v: v >= low


def _positive(v: float) -> bool:
    return v > 0


_WHOLE = "a whole number"

#: the URI schemes of the Neo4j Python driver (docs/neo4j.md)
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def _bolt_uri(v: str) -> bool:
    scheme, sep, rest = v.partition("://")
    return bool(sep) and scheme.lower() in BOLT_SCHEMES and bool(rest.strip("/"))


def _auth_text(v: str) -> bool:
    return v.lower() == "none" or "/" in v


def _database_name(v: str) -> bool:
    # Neo4j's rule for database names (3-63 characters: an ASCII letter, then letters, digits, dots, dashes)
    return 3 <= len(v) <= 63 and v[0].isascii() and v[0].isalpha() \
        and all(c.isascii() and (c.isalnum() or c in ".-") for c in v)

#: the longest time limit a console statement or a server transaction may be given: one day, in seconds
CYPHER_TIMEOUT_MAX = 86_400.0
TIMEOUT_EXPECT = "a number of seconds above 0 and at most 86400 (one day)"


def timeout_ok(value: Any, maximum: float = CYPHER_TIMEOUT_MAX) -> bool:
    """``value`` is a usable time limit in seconds: a real number (not a bool), finite, above 0 and at most
    ``maximum``.  ``inf``, ``nan``, ``1e308``, 0 and negatives are not: the driver turns the seconds into
    milliseconds with ``int()``, and ``inf`` overflows there, ``nan`` compares false with everything."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return 0 < value <= maximum  # False for nan too


@dataclass(frozen=True)
class Config:
    """Every setting of graphlink (frozen: change it with :func:`set_config` or :func:`config_context`).

    Each field's metadata holds the environment variable that overrides it and what it does; :func:`settings`
    lists them, and docs/configuration.md is the same table in words.

    Examples
    --------
    Read with :func:`get_config`; change with :func:`set_config` or, for a block, :func:`config_context`:

    >>> from graphlink.config import config_context, get_config
    >>> with config_context(max_expanded_edges=1000):
    ...     get_config().max_expanded_edges
    1000
    """

    # --- analyses -------------------------------------------------------------------------------------------
    max_expanded_edges: int = _whole(
        300_000_000, "GRAPHLINK_MAX_EXPANDED_EDGES", "Most element-level link edges the link graph materialises; "
        "beyond it the analyses stay on twin classes (low-entropy releases).", area="analyses")
    many_expand: int = _whole(
        5_000_000, "GRAPHLINK_MANY_EXPAND", "One-to-many search: most element-level candidate pairs of one "
        "component expanded for the checks and propagation; a larger component is refused.", area="analyses")
    many_pairs: int = _whole(
        200_000, "GRAPHLINK_MANY_PAIRS", "One-to-many search: most candidate pairs left after propagation in "
        "one component that go to the SAT solver.", area="analyses")
    many_conflicts: int = _whole(
        20_000, "GRAPHLINK_MANY_CONFLICTS", "One-to-many search: most solver conflicts for one component, all "
        "calls together (deterministic, unlike a time limit).", area="analyses")

    # --- Neo4j store ----------------------------------------------------------------------------------------
    element_links_max: int = _whole(
        100_000, "GRAPHLINK_ELEMENT_LINKS_MAX", "Most element-level LINK edges written with a release's class "
        "graph (analysts browse them on small releases; larger ones keep the class level only).",
        error=StoreError, area="store")
    neo4j_writers: int = _whole(
        3, "GRAPHLINK_NEO4J_WRITERS", "Concurrent sessions of a write-back in UNWIND batches.",
        low=1, error=StoreError, area="store")
    cypher_timeout: float = _setting(
        120.0, "GRAPHLINK_CYPHER_TIMEOUT", "Seconds each statement of `graphlink cypher` and the app's console "
        "may run (at most 86,400: one day); the server stops it then.",
        parse=float, check=lambda v: timeout_ok(v, CYPHER_TIMEOUT_MAX), expect=TIMEOUT_EXPECT, error=StoreError,
        area="store")
    cypher_max_rows: int = _whole(
        100_000, "GRAPHLINK_CYPHER_MAX_ROWS", "Most rows `graphlink cypher` and the app's console read from one "
        "statement; a larger result is refused (add LIMIT).", low=1, error=StoreError, area="store")
    bulk_min_rows: int = _whole(
        200_000, "GRAPHLINK_BULK_MIN_ROWS", "Smallest release (disclosure rows) that bulk mode `auto` loads "
        "with the bulk importer instead of UNWIND batches.", error=StoreError, area="store")
    bulk_importer: str = _setting(
        "server", "GRAPHLINK_BULK_IMPORTER", "Where the bulk importer runs: `server` (inside the running "
        "launcher) or `jvm` (a JVM of its own).",
        parse=lambda s: s.strip().lower(), check=lambda v: v in ("server", "jvm"), expect="server or jvm",
        error=StoreError, area="store")
    neo4j_import_memory: str = _setting(
        "50%", "GRAPHLINK_NEO4J_IMPORT_MEMORY", "The bulk importer's off-heap memory cap "
        "(neo4j-admin's `max-off-heap-memory`).", error=StoreError, area="store")
    neo4j_import_heap: str = _setting(
        "1g", "GRAPHLINK_NEO4J_IMPORT_HEAP", "Heap of the bulk importer's own JVM (`jvm` importer).",
        error=StoreError, area="store")
    neo4j_dir: str | None = _setting(
        None, "GRAPHLINK_NEO4J_DIR", "Folder of the project-local Neo4j server (runtime, home, state); "
        "default `<project>/.graphlink/neo4j`.", error=StoreError, area="store")
    neo4j_heap: str = _setting(
        "1g", "GRAPHLINK_NEO4J_HEAP", "Heap of the local Neo4j server's JVM.", error=StoreError, area="store")
    neo4j_tx_timeout: float = _setting(
        3600.0, "GRAPHLINK_NEO4J_TX_TIMEOUT", "Seconds any transaction on the local Neo4j server may run unless "
        "its client sets its own limit (`db.transaction.timeout`; at most 86,400).",
        parse=float, check=lambda v: timeout_ok(v, CYPHER_TIMEOUT_MAX), expect=TIMEOUT_EXPECT, error=StoreError,
        area="store")
    neo4j_pagecache: str = _setting(
        "256m", "GRAPHLINK_NEO4J_PAGECACHE", "Page cache of the local Neo4j server.", error=StoreError,
        area="store")
    neo4j_jvm_opts: tuple[str, ...] = _setting(
        (), "GRAPHLINK_NEO4J_JVM_OPTS", "Extra JVM flags for the local Neo4j server (space-separated).",
        parse=_words, error=StoreError, area="store")
    neo4j_procedures: tuple[str, ...] = _setting(
        (), "GRAPHLINK_NEO4J_PROCEDURES", "Plugin procedures the local server allows besides its own "
        "(comma-separated, e.g. `apoc.coll.*`; the project calls none, docs/security.md).",
        parse=_names, error=StoreError, area="store")
    neo4j_cert: str | None = _setting(
        None, "GRAPHLINK_NEO4J_CERT", "PEM certificate to pin for a server named by `NEO4J_URI` that uses a "
        "private certificate (the local server's is found by itself).", error=StoreError, area="store")

    # --- Spark engine ---------------------------------------------------------------------------------------
    spark_memory: str | None = _setting(
        None, "GRAPHLINK_SPARK_MEMORY", "Driver heap of a local Spark session; default a quarter of physical "
        "memory, 2g to 8g.", area="spark")
    spark_partitions: int | None = _whole(
        None, "GRAPHLINK_SPARK_PARTITIONS", "Shuffle partitions of a local session; default 1 for a small input, "
        "else 4 × cores.", low=1, area="spark")
    spark_small_bytes: int = _whole(
        4 << 20, "GRAPHLINK_SPARK_SMALL_BYTES", "Inputs up to this many bytes start Spark for short work "
        "(C1 JIT, serial GC, one partition).", area="spark")
    spark_local_dir: str | None = _setting(
        None, "GRAPHLINK_SPARK_LOCAL_DIR", "Spark's scratch folder (`spark.local.dir`).", area="spark")
    spark_storage: str = _setting(
        "MEMORY_AND_DISK", "GRAPHLINK_SPARK_STORAGE", "Where cached stages live (a pyspark StorageLevel name; "
        "DISK_ONLY for releases larger than the cluster's memory).",
        check=lambda v: v.isidentifier() and v.isupper(), expect="a StorageLevel name such as DISK_ONLY",
        area="spark")
    spark_driver_elements: int | None = _whole(
        None, "GRAPHLINK_SPARK_DRIVER_ELEMENTS", "Most elements the `auto` split runs on the driver; default "
        "what 40 % of physical memory holds.", area="spark")
    spark_driver_edges: int = _whole(
        50_000_000, "GRAPHLINK_SPARK_DRIVER_EDGES", "Most class-graph edges the `auto` split runs on the "
        "driver.", area="spark")
    spark_cc_driver_edges: int = _whole(
        1_000_000, "GRAPHLINK_SPARK_CC_DRIVER_EDGES", "Class graphs up to this many edges get their connected "
        "components on the driver, larger ones in Spark.", area="spark")
    spark_bucket_elements: int = _whole(
        250_000, "GRAPHLINK_SPARK_BUCKET_ELEMENTS", "About this many elements per bucket of components on the "
        "component split.", low=1, area="spark")
    spark_anchors: int = _whole(
        3, "GRAPHLINK_SPARK_ANCHORS", "Most anchor locations REIDIT-C's class links in Spark may use.",
        low=1, area="spark")
    neo4j_connector: str = _setting(
        "org.neo4j:neo4j-connector-apache-spark_2.13:5.3.8_for_spark_3", "GRAPHLINK_NEO4J_CONNECTOR",
        "Maven coordinates of the Neo4j Connector for Apache Spark.", area="spark")
    maven_repo: str = _setting(
        "https://repo1.maven.org/maven2/", "GRAPHLINK_MAVEN_REPO", "The Maven repository Spark resolves the "
        "connector from.", area="spark")
    ivy_settings: str | None = _setting(
        None, "GRAPHLINK_IVY_SETTINGS", "Where the Ivy settings file Spark resolves with is written; default "
        "a per-user file in the temporary folder.", area="spark")
    neo4j_batch: int = _whole(
        5000, "GRAPHLINK_NEO4J_BATCH", "Rows per transaction of the Spark connector's writes.",
        low=1, area="spark")
    neo4j_rel_partitions: int = _whole(
        1, "GRAPHLINK_NEO4J_REL_PARTITIONS", "Partitions of the Spark connector's relationship writes (more "
        "than one may deadlock on shared nodes).", low=1,
        area="spark")

    # --- connection (the names their tools read; read at every get_config) -----------------------------------
    neo4j_uri: str | None = _setting(
        None, "NEO4J_URI", "The Neo4j server to use (a Bolt URI such as `bolt://host:7687`); unset: the project's "
        "local server.", check=_bolt_uri, expect="a Bolt URI such as bolt://host:7687 (scheme "
        + ", ".join(BOLT_SCHEMES) + ")", error=StoreError, area="connection", live=True)
    neo4j_auth: str | None = _setting(
        None, "NEO4J_AUTH", "Credentials for `NEO4J_URI` as `user/password`, or `none`; unset: `NEO4J_USER` / "
        "`NEO4J_PASSWORD`, else the local server's own.", check=_auth_text, expect="user/password or none",
        error=StoreError, area="connection", live=True, secret=True)
    neo4j_user: str = _setting(
        "neo4j", "NEO4J_USER", "User name that goes with `NEO4J_PASSWORD` (when `NEO4J_AUTH` is unset).",
        error=StoreError, area="connection", live=True)
    neo4j_password: str | None = _setting(
        None, "NEO4J_PASSWORD", "Password for `NEO4J_USER` (when `NEO4J_AUTH` is unset).", error=StoreError,
        area="connection", live=True, secret=True)
    neo4j_database: str = _setting(
        "neo4j", "NEO4J_DATABASE", "The database every query runs on (the project's local server has one, "
        "`neo4j`).", check=_database_name, expect="a Neo4j database name (3 to 63 letters, digits, dots or "
        "dashes, starting with a letter)", error=StoreError, area="connection", live=True)
    spark_master: str | None = _setting(
        None, "SPARK_MASTER", "Spark master URL the Spark engine connects to when none is given; unset: "
        "`local[*]`.", area="connection", live=True)
    java_home: str | None = _setting(
        None, "JAVA_HOME", "The Java 17 installation the local Neo4j server and the bulk importer run on; "
        "unset: `java` on the PATH.", error=StoreError, area="connection", live=True)
    chromium: str | None = _setting(
        None, "CHROMIUM", "The Chromium (or Chrome) program the report's PDF is printed with; unset: `chromium` "
        "on the PATH.", area="connection", live=True)

    # --- app ------------------------------------------------------------------------------------------------
    demo: str = _setting(
        "thesis", "GRAPHLINK_DEMO", "The demo release the app opens on: `thesis`, `simulated`, `households` or "
        "`none` (any other value: none).", parse=lambda s: s.strip().lower(), area="app")
    expose: bool = _setting(
        False, "GRAPHLINK_EXPOSE", "The app is reachable from other machines (say so behind a proxy; "
        "`scripts/app.sh` then listens on every interface).", parse=_flag, area="app")
    cypher_console: bool = _setting(
        False, "GRAPHLINK_CYPHER_CONSOLE", "Turn the app's Cypher console on for everyone who can open the app.",
        parse=_flag, area="app")
    cypher_console_token: str | None = _setting(
        None, "GRAPHLINK_CYPHER_CONSOLE_TOKEN", "Turn the app's Cypher console on behind this secret, which the "
        "page asks for.", parse=lambda s: s.strip() or None, area="app", secret=True)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check(f, getattr(self, f.name), getattr(self, f.name))


def settings() -> tuple[dataclasses.Field, ...]:
    """The fields of :class:`Config`, each with ``metadata``: ``env``, ``doc``, ``area`` (the table of
    docs/configuration.md).

    Examples
    --------
    >>> from graphlink.config import settings
    >>> field = next(f for f in settings() if f.name == "max_expanded_edges")
    >>> field.metadata["env"], field.metadata["area"]
    ('GRAPHLINK_MAX_EXPANDED_EDGES', 'analyses')
    """
    return dataclasses.fields(Config)


_FIELDS = {f.name: f for f in dataclasses.fields(Config)}


def _refuse(f: dataclasses.Field, raw: Any, expect: str) -> GraphlinkError:
    got = "" if f.metadata["secret"] else f", got {raw!r}"          # a password is never echoed
    return f.metadata["error"](f"{f.metadata['env']} ({f.name}) must be {expect}{got}")


def _check(f: dataclasses.Field, value: Any, raw: Any) -> None:
    check, expect, parse = f.metadata["check"], f.metadata["expect"] or "valid", f.metadata["parse"]
    if value is None:
        return
    if parse is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _refuse(f, raw, expect)
    if parse is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise _refuse(f, raw, expect)
    try:
        ok = check is None or check(value)
    except TypeError:
        ok = False
    if not ok:
        raise _refuse(f, raw, expect)


def _coerce(f: dataclasses.Field, raw: Any) -> Any:
    """A value for ``f`` from text (the environment, or a string given to :func:`set_config`), else as given."""
    if not isinstance(raw, str) or f.metadata["parse"] is str:
        return raw
    try:
        return f.metadata["parse"](raw)
    except ValueError:
        expect = _WHOLE if f.metadata["parse"] is int else (f.metadata["expect"] or "valid")
        raise _refuse(f, raw, expect) from None


_LIVE = tuple(f for f in dataclasses.fields(Config) if f.metadata["live"])


def _from(environ: Mapping[str, str], fields: Iterable[dataclasses.Field]) -> dict[str, Any]:
    values = {}
    for f in fields:
        raw = environ.get(f.metadata["env"], "")
        if raw.strip():
            values[f.name] = _coerce(f, raw)
    return values


def from_environ(environ: Mapping[str, str]) -> Config:
    """The defaults overridden by the variables of ``environ`` (empty ones count as unset), the connection
    variables included."""
    return Config(**_from(environ, dataclasses.fields(Config)))


_lock = threading.RLock()
_process: Config | None = None                      # the process-wide settings, once the environment is read
#: the connection settings set_config chose for the process (they then win over their variables)
_process_set: frozenset[str] = frozenset()
#: the innermost config_context: its settings and the connection settings it (or set_config inside it) chose
_active: contextvars.ContextVar[tuple[Config, frozenset[str]] | None] = contextvars.ContextVar(
    "graphlink_config", default=None)
#: the last connection settings applied: ((settings, chosen, the variables' snapshot), result): one check per change
_last_live: tuple[tuple[Config, frozenset[str], tuple[Any, ...]], Config] | None = None


def _base() -> Config:
    global _process
    if _process is None:
        with _lock:
            if _process is None:
                _process = Config(**_from(os.environ, (f for f in dataclasses.fields(Config)
                                                       if not f.metadata["live"])))
    return _process


def _with_live(config: Config, chosen: frozenset[str]) -> Config:
    """``config`` with the connection settings nobody chose read from the environment now (a few dictionary
    look-ups; the values are parsed and checked only when their text changed)."""
    global _last_live
    snapshot = _live_snapshot()
    last = _last_live
    if last is not None and last[0][0] is config and last[0][1] == chosen and last[0][2] == snapshot:
        return last[1]
    texts = {f.name: "" if v is None else os.fsdecode(v) for f, v in zip(_LIVE, snapshot, strict=True)}
    values = {f.name: (_coerce(f, texts[f.name]) if texts[f.name].strip() else f.default)
              for f in _LIVE if f.name not in chosen}
    live = dataclasses.replace(config, **values) if values else config
    _last_live = ((config, chosen, snapshot), live)
    return live


_live_keys: tuple[Any, ...] | None = None


def _live_snapshot() -> tuple[Any, ...]:
    """The connection variables as the environment holds them, to tell whether one changed: the raw values of
    ``os.environ``'s own table under its own encoding of the names (``encodekey``), eight dictionary look-ups
    (half a microsecond; ``os.environ.get`` decodes and raises for each unset one, thirty times that), else,
    where the mapping is not CPython's, its ``get``."""
    global _live_keys
    data, encode = getattr(os.environ, "_data", None), getattr(os.environ, "encodekey", None)
    if not isinstance(data, dict) or encode is None:
        return tuple(os.environ.get(f.metadata["env"]) for f in _LIVE)
    if _live_keys is None:
        _live_keys = tuple(encode(f.metadata["env"]) for f in _LIVE)
    return tuple(map(data.get, _live_keys))


def get_config() -> Config:
    """The settings in force here: the innermost :func:`config_context`, else the process's (defaults, the
    environment's overrides read at the first call, then :func:`set_config`'s), with the connection settings
    nobody set read from their variables now.  After the first call: a dictionary look-up per connection
    variable (about a microsecond in all), and a check of their values only when one of them changed.

    Returns
    -------
    Config
        Frozen; read its fields (``get_config().neo4j_writers``).

    Examples
    --------
    >>> from graphlink.config import get_config
    >>> get_config().spark_storage in ("MEMORY_AND_DISK", "DISK_ONLY", "MEMORY_ONLY")
    True
    """
    active = _active.get()
    if active is not None:
        return _with_live(*active)
    return _with_live(_base(), _process_set)


def _replaced(config: Config, changes: Mapping[str, Any]) -> Config:
    unknown = sorted(set(changes) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"unknown setting(s): {', '.join(unknown)} (graphlink.config.Config lists them)")
    return dataclasses.replace(config, **{k: _coerce(_FIELDS[k], v) for k, v in changes.items()})


def _chosen(before: frozenset[str], changes: Mapping[str, Any]) -> frozenset[str]:
    # a connection setting given a value wins over its variable from now on; given None it follows it again
    live = {f.name for f in _LIVE}
    return frozenset((before | {k for k, v in changes.items() if k in live and v is not None})
                     - {k for k, v in changes.items() if k in live and v is None})


def set_config(**changes: Any) -> Config:
    """Change settings: for the rest of the process, or, inside a :func:`config_context`, until it ends.

    Parameters
    ----------
    **changes
        Field names of :class:`Config` and their new values (text is read as the environment variable's
        would be).  An unknown name or a bad value raises :class:`ConfigError` (the store's settings
        :class:`~graphlink.errors.StoreError`) and changes nothing.

    Returns
    -------
    Config
        The settings now in force.

    Examples
    --------
    >>> from graphlink.config import config_context, get_config, set_config
    >>> with config_context():
    ...     _ = set_config(bulk_min_rows=10)
    ...     get_config().bulk_min_rows
    10
    """
    global _process, _process_set
    active = _active.get()
    if active is not None:
        new = _replaced(active[0], changes)
        _active.set((new, _chosen(active[1], changes)))
        return get_config()
    with _lock:
        _process = _replaced(_base(), changes)
        _process_set = _chosen(_process_set, changes)
        return get_config()


@contextlib.contextmanager
def config_context(**changes: Any) -> Iterator[Config]:
    """Settings changed for a ``with`` block (nested blocks stack; each restores what it found).

    Parameters
    ----------
    **changes
        As for :func:`set_config`.

    Returns
    -------
    contextlib.AbstractContextManager[Config]
        A context manager; ``with`` gives the settings in force inside the block.

    Examples
    --------
    >>> from graphlink.config import config_context, get_config
    >>> with config_context(spark_anchors=2):
    ...     with config_context(spark_anchors=1):
    ...         inner = get_config().spark_anchors
    ...     outer = get_config().spark_anchors
    >>> inner, outer
    (1, 2)
    """
    outer = _active.get()
    config, chosen = outer if outer is not None else (_base(), _process_set)
    token = _active.set((_replaced(config, changes), _chosen(chosen, changes)))
    try:
        yield get_config()
    finally:
        _active.reset(token)


def reload() -> None:
    """Forget :func:`set_config`'s changes: the next :func:`get_config` reads the environment again (tests, and a
    long-lived process whose environment was changed on purpose).  Open :func:`config_context` blocks keep
    their settings."""
    global _process, _process_set
    with _lock:
        _process, _process_set = None, frozenset()


# ---------------------------------------------------------------------------------- the environment of others
def child_environ(**extra: str) -> dict[str, str]:
    """A copy of this process's environment with ``extra`` set: what a child process (the Neo4j launcher, the
    bulk importer, a set-up script) is started with.  O(size of the environment)."""
    return {**os.environ, **extra}


def export(name: str, value: str, *, replace: bool = False) -> None:
    """Set ``name`` for the libraries this process loads and the children it starts (NumPy, numba and PySpark
    read their own variables); the user's value wins unless ``replace``."""
    if replace:
        os.environ[name] = value
    else:
        os.environ.setdefault(name, value)


def export_path(name: str, entry: str) -> None:
    """Put ``entry`` first on the path-list variable ``name`` (``PYTHONPATH`` of Spark's Python workers), once."""
    paths = [p for p in os.environ.get(name, "").split(os.pathsep) if p]
    if entry not in paths:
        os.environ[name] = os.pathsep.join([entry, *paths])


def environ_has_prefix(prefixes: tuple[str, ...]) -> bool:
    """Does any variable's name start with one of ``prefixes`` (the allocator's own ``MALLOC_*``: the user's
    choice then wins over the CLI's)?"""
    return any(k.startswith(prefixes) for k in os.environ)
