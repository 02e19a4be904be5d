"""The one configuration object (graphlink/config.py): every setting's environment override, set_config and
config_context (nesting, restoring, one context per thread), bad values refused in one line naming the variable,
no module reading GRAPHLINK_* variables itself, and no variable read when graphlink is imported."""

from __future__ import annotations

import ast
import contextvars
import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as settings_hyp
from hypothesis import strategies as st

from graphlink import config
from graphlink.config import Config, ConfigError, config_context, get_config, set_config, settings
from graphlink.errors import StoreError

ROOT = Path(__file__).resolve().parents[2]

#: per setting: the variable's text and the value it must give (each unlike the default, so the override shows)
SAMPLES: dict[str, tuple[str, object]] = {
    "max_expanded_edges": ("1234", 1234),
    "many_expand": ("11", 11),
    "many_pairs": ("12", 12),
    "many_conflicts": ("13", 13),
    "element_links_max": ("14", 14),
    "neo4j_writers": ("5", 5),
    "cypher_timeout": ("2.5", 2.5),
    "cypher_max_rows": ("500", 500),
    "neo4j_tx_timeout": ("90", 90.0),
    "bulk_min_rows": ("1", 1),
    "bulk_importer": (" JVM ", "jvm"),
    "neo4j_import_memory": ("30%", "30%"),
    "neo4j_import_heap": ("2g", "2g"),
    "neo4j_dir": ("/srv/neo4j-home", "/srv/neo4j-home"),
    "neo4j_heap": ("3g", "3g"),
    "neo4j_pagecache": ("1g", "1g"),
    "neo4j_jvm_opts": ("-XX:TieredStopAtLevel=1  -Xss2m", ("-XX:TieredStopAtLevel=1", "-Xss2m")),
    "neo4j_procedures": ("apoc.coll.*, apoc.text.*,", ("apoc.coll.*", "apoc.text.*")),
    "neo4j_cert": ("/etc/ssl/neo4j.pem", "/etc/ssl/neo4j.pem"),
    "spark_memory": ("6g", "6g"),
    "spark_partitions": ("3", 3),
    "spark_small_bytes": ("1024", 1024),
    "spark_local_dir": ("/scratch/spark", "/scratch/spark"),
    "spark_storage": ("DISK_ONLY", "DISK_ONLY"),
    "spark_driver_elements": ("100", 100),
    "spark_driver_edges": ("200", 200),
    "spark_cc_driver_edges": ("300", 300),
    "spark_bucket_elements": ("400", 400),
    "spark_anchors": ("2", 2),
    "neo4j_connector": ("org.example:connector:1.0", "org.example:connector:1.0"),
    "maven_repo": ("https://maven.example/m2/", "https://maven.example/m2/"),
    "ivy_settings": ("/tmp/ivy.xml", "/tmp/ivy.xml"),
    "neo4j_batch": ("250", 250),
    "neo4j_rel_partitions": ("2", 2),
    "expose": ("yes", True),
    "cypher_console": ("1", True),
    "cypher_console_token": ("  s3cret  ", "s3cret"),
    "demo": (" Households", "households"),
    "neo4j_uri": ("bolt://db.example:7687", "bolt://db.example:7687"),
    "neo4j_auth": ("reader/s3cret", "reader/s3cret"),
    "neo4j_user": ("reader", "reader"),
    "neo4j_password": ("s3cret", "s3cret"),
    "neo4j_database": ("reports", "reports"),
    "spark_master": ("spark://cluster.example:7077", "spark://cluster.example:7077"),
    "java_home": ("/opt/jdk-17", "/opt/jdk-17"),
    "chromium": ("chromium-headless", "chromium-headless"),
}

#: the variables that keep their tools' names and are read at every get_config (docs/configuration.md)
CONNECTION = {"NEO4J_URI", "NEO4J_AUTH", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE", "SPARK_MASTER",
              "JAVA_HOME", "CHROMIUM"}


def test_every_setting_has_a_variable_a_default_and_words():
    names = [f.name for f in settings()]
    envs = [f.metadata["env"] for f in settings()]
    assert sorted(names) == sorted(SAMPLES)                     # a new setting gets a sample here
    assert len(set(envs)) == len(envs) and all(e.startswith("GRAPHLINK_") or e in CONNECTION for e in envs)
    assert {f.metadata["env"] for f in settings() if f.metadata["live"]} == CONNECTION
    assert all(f.metadata["doc"].strip() and f.metadata["area"] for f in settings())
    Config()                                                    # the defaults are valid


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_variable_overrides_its_setting(name, monkeypatch):
    text, want = SAMPLES[name]
    env = dataclasses.fields(Config)[[f.name for f in settings()].index(name)].metadata["env"]
    assert getattr(Config(), name) != want
    assert config.from_environ({env: text}) == dataclasses.replace(Config(), **{name: want})  # nothing else moves
    monkeypatch.delenv(env, raising=False)
    before = get_config()                       # whatever else this process's environment sets
    monkeypatch.setenv(env, text)
    config.reload()
    assert get_config() == dataclasses.replace(before, **{name: want})


def test_the_environment_is_read_once(monkeypatch):
    monkeypatch.setenv("GRAPHLINK_NEO4J_WRITERS", "4")
    config.reload()
    assert get_config().neo4j_writers == 4
    # a change of the environment after the first read is not seen (os.environ directly: no reload)
    monkeypatch.setitem(__import__("os").environ, "GRAPHLINK_NEO4J_WRITERS", "7")
    assert get_config().neo4j_writers == 4
    config.reload()
    assert get_config().neo4j_writers == 7


def test_empty_variables_count_as_unset():
    assert config.from_environ({"GRAPHLINK_SPARK_DRIVER_ELEMENTS": "", "GRAPHLINK_NEO4J_WRITERS": "  "}) == Config()


@pytest.mark.parametrize(("env", "text", "error", "words"), [
    ("GRAPHLINK_NEO4J_WRITERS", "many", StoreError, "must be a whole number, got 'many'"),
    ("GRAPHLINK_NEO4J_WRITERS", "0", StoreError, "must be a whole number ≥ 1, got 0"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "-1", StoreError, "must be a number of seconds above 0 and at most 86400"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "inf", StoreError, "at most 86400 (one day), got inf"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "nan", StoreError, "at most 86400 (one day), got nan"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "1e308", StoreError, "at most 86400 (one day), got 1e+308"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "0", StoreError, "above 0"),
    ("GRAPHLINK_CYPHER_TIMEOUT", "soon", StoreError, "got 'soon'"),
    ("GRAPHLINK_NEO4J_TX_TIMEOUT", "-inf", StoreError, "above 0 and at most 86400"),
    ("GRAPHLINK_CYPHER_MAX_ROWS", "0", StoreError, "must be a whole number ≥ 1, got 0"),
    ("GRAPHLINK_MANY_PAIRS", "1e5", ConfigError, "must be a whole number, got '1e5'"),
    ("GRAPHLINK_SPARK_STORAGE", "disk", ConfigError, "must be a StorageLevel name such as DISK_ONLY"),
    ("GRAPHLINK_BULK_IMPORTER", "docker", StoreError, "must be server or jvm, got 'docker'"),
    ("NEO4J_URI", "localhost:7687", StoreError, "must be a Bolt URI such as bolt://host:7687"),
    ("NEO4J_URI", "http://db.example:7474", StoreError, "(scheme bolt, bolt+s, bolt+ssc, neo4j, neo4j+s, neo4j+ssc)"),
    ("NEO4J_DATABASE", "my_db!", StoreError, "must be a Neo4j database name"),
    ("NEO4J_DATABASE", "db", StoreError, "3 to 63 letters"),
    ("NEO4J_AUTH", "s3cretpassword", StoreError, "must be user/password or none"),
])
def test_a_bad_value_is_one_line_naming_the_variable(env, text, error, words):
    with pytest.raises(error) as refused:
        config.from_environ({env: text})
    msg = str(refused.value)
    assert env in msg and words in msg and "\n" not in msg
    assert refused.value.exit_code == 2
    if env == "NEO4J_AUTH":
        assert text not in msg                                  # a credential is never echoed


def test_credentials_stay_out_of_the_settings_repr():
    shown = repr(config.from_environ({"NEO4J_AUTH": "reader/s3cret", "NEO4J_PASSWORD": "hunter22",
                                      "GRAPHLINK_CYPHER_CONSOLE_TOKEN": "console-secret-0123456789"}))
    assert "s3cret" not in shown and "hunter22" not in shown and "neo4j_database='neo4j'" in shown
    assert "console-secret" not in shown


def test_connection_variables_are_read_when_used(monkeypatch):
    """Unlike the GRAPHLINK_* settings, the connection variables are read at every get_config (a notebook or a
    test may point at another server mid-process, as before); set_config wins over them until it is given None."""
    for env in CONNECTION:
        monkeypatch.delenv(env, raising=False)
    assert (get_config().neo4j_database, get_config().neo4j_uri) == ("neo4j", None)
    monkeypatch.setenv("NEO4J_DATABASE", "reports")
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://db.example")
    assert (get_config().neo4j_database, get_config().neo4j_uri) == ("reports", "neo4j+s://db.example")
    set_config(neo4j_database="archive")
    assert get_config().neo4j_database == "archive"
    monkeypatch.setenv("NEO4J_DATABASE", "reports2")
    assert get_config().neo4j_database == "archive"             # chosen by set_config: the variable waits
    with config_context(neo4j_database=None):                   # None: follow the variable again
        assert get_config().neo4j_database == "reports2"
        monkeypatch.setenv("NEO4J_DATABASE", "reports3")
        assert get_config().neo4j_database == "reports3"
    assert get_config().neo4j_database == "archive"
    config.reload()
    assert get_config().neo4j_database == "reports3"
    monkeypatch.setenv("NEO4J_DATABASE", "bad name")
    with pytest.raises(StoreError, match="NEO4J_DATABASE"):
        get_config()


def test_changing_neo4j_database_after_import_is_honoured(monkeypatch):
    """graphlink.store.neo4j used to read NEO4J_DATABASE once, when it was imported: a later change went unseen.
    Now every Store asks when it is made, and the Spark connector writes to the Store's database."""
    from graphlink.store import neo4j

    monkeypatch.setenv("NEO4J_DATABASE", "reports")
    assert neo4j.database() == "reports"
    assert neo4j.Store(None, "bolt://db.example:7687").database == "reports"
    monkeypatch.delenv("NEO4J_DATABASE")
    assert neo4j.Store(None, "bolt://db.example:7687").database == "neo4j"
    assert not hasattr(neo4j, "DATABASE")                       # no copy taken at import for others to use


def test_credentials_and_uri_come_from_the_settings(monkeypatch):
    from graphlink.store.neo4j import env_auth, resolve_uri

    for env in CONNECTION:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("NEO4J_USER", "reader")
    monkeypatch.setenv("NEO4J_PASSWORD", "pw")
    assert env_auth() == ("reader", "pw")
    monkeypatch.setenv("NEO4J_AUTH", "none")
    assert env_auth() is None
    with config_context(neo4j_auth="admin/x", neo4j_uri="bolt://db.example:7687"):
        assert (env_auth(), resolve_uri()) == (("admin", "x"), "bolt://db.example:7687")


@settings_hyp(max_examples=300, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**400, 10**400),
                 st.text(max_size=12), st.sampled_from(["inf", "-inf", "nan", "1e308", "0", "-0.0", "86400",
                                                        "86400.0001", "1e-300", "Infinity", "NaN"])))
def test_a_time_limit_is_a_real_number_of_seconds_up_to_a_day(value):
    """Oracle: a time limit is usable exactly when it reads as a finite number above 0 and at most one day; every
    other value -- from the environment (text) or from set_config (a number) -- is one line naming the variable,
    never an OverflowError."""
    import math

    try:
        number = float(value)
        usable = math.isfinite(number) and 0 < number <= 86_400
    except (ValueError, OverflowError):
        usable = False
    text = str(value)
    if text.strip() and not isinstance(value, str):
        text = repr(value)
    for source in ("environment", "set_config"):
        want_usable = usable or (source == "environment" and not text.strip())   # empty: the default
        try:
            if source == "environment":
                got = config.from_environ({"GRAPHLINK_CYPHER_TIMEOUT": text}).cypher_timeout
            else:
                with config_context(cypher_timeout=value) as cfg:
                    got = cfg.cypher_timeout
        except StoreError as exc:
            assert not want_usable, exc
            msg = str(exc)
            assert "GRAPHLINK_CYPHER_TIMEOUT" in msg and "\n" not in msg and "at most 86400" in msg
            continue
        assert want_usable and 0 < got <= 86_400


def test_a_bad_variable_fails_the_cli_in_one_line(tmp_path):
    from graphlink.io.examples import DATA

    env = {**_clean_env(), "GRAPHLINK_MAX_EXPANDED_EDGES": "lots"}
    proc = subprocess.run([sys.executable, "-m", "graphlink.cli", "audit", str(DATA / "thesis_fig3_4.csv"),
                           "--k", "2"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and proc.stderr.strip().splitlines() == [
        "graphlink: error: GRAPHLINK_MAX_EXPANDED_EDGES (max_expanded_edges) must be a whole number, got 'lots'"]


def test_set_config_lasts_until_reload_and_checks_first():
    set_config(spark_anchors=2, neo4j_writers="6")             # text is read as the variable's would be
    assert (get_config().spark_anchors, get_config().neo4j_writers) == (2, 6)
    with pytest.raises(ConfigError, match="unknown setting"):
        set_config(spark_anchors=1, no_such_setting=1)
    with pytest.raises(StoreError, match="GRAPHLINK_NEO4J_WRITERS"):
        set_config(spark_anchors=1, neo4j_writers=0)
    with pytest.raises(ConfigError, match="GRAPHLINK_MANY_PAIRS"):
        set_config(many_pairs=2.5)                              # a whole number, not a float
    assert get_config().spark_anchors == 2                      # a refused change changes nothing
    config.reload()
    assert get_config().spark_anchors == Config().spark_anchors


def test_config_contexts_nest_and_restore():
    outer_default = get_config()
    with config_context(spark_anchors=2, bulk_min_rows=5) as a:
        assert a is get_config() and (a.spark_anchors, a.bulk_min_rows) == (2, 5)
        with config_context(spark_anchors=1) as b:
            assert (b.spark_anchors, b.bulk_min_rows) == (1, 5)  # the inner block starts from the outer one
            set_config(bulk_min_rows=9)                          # inside a block: until the block ends
            assert get_config().bulk_min_rows == 9
        assert (get_config().spark_anchors, get_config().bulk_min_rows) == (2, 5)
        with pytest.raises(RuntimeError), config_context(spark_anchors=3):
            raise RuntimeError("restored even when the block fails")
        assert get_config().spark_anchors == 2
    assert get_config() == outer_default


def test_a_context_belongs_to_its_thread():
    seen: dict[str, int] = {}
    inside, checked = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait(10)
        seen["other"] = get_config().spark_anchors              # the process-wide value, not the block's
        checked.set()

    t = threading.Thread(target=other)
    t.start()
    with config_context(spark_anchors=1):
        inside.set()
        checked.wait(10)
        carried = contextvars.copy_context()
    t.join(10)
    assert seen["other"] == Config().spark_anchors
    assert carried.run(lambda: get_config().spark_anchors) == 1  # copy_context carries a block into a thread


def test_settings_reach_the_modules_at_call_time():
    """Each module asks for its setting when it runs: a context changes what it does, without re-importing."""
    from graphlink.store import batches, bulk, server
    from graphlink.store.neo4j import console_timeout

    with config_context(neo4j_writers=7, bulk_min_rows=3, cypher_timeout=9, neo4j_procedures=("apoc.x.*",),
                        neo4j_heap="3g", neo4j_jvm_opts=("-Xfoo",), neo4j_dir="/srv/n4j"):
        assert (batches.writers(), bulk.min_rows(), console_timeout()) == (7, 3, 9.0)
        assert "apoc.x.*" in server.procedure_allowlist()
        cmd = server.launcher_command("java", server.Paths(Path("/srv/n4j")), Path("/srv/n4j/home"))
        assert "-Xmx3g" in cmd and "-Xfoo" in cmd
        assert server.Paths.default().base == Path("/srv/n4j").resolve()
    assert batches.writers() == Config().neo4j_writers


def test_the_documented_table_is_the_settings():
    """docs/configuration.md has one row per setting: its name, variable and what it does."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line for line in text.splitlines()
            if line.startswith("| `") and line.split("|")[2].strip(" `") in {f.metadata["env"] for f in settings()}}
    assert sorted(rows) == sorted(f.name for f in settings())
    for f in settings():
        assert f"`{f.metadata['env']}`" in rows[f.name] and f.metadata["doc"] in rows[f.name]


def _reads(node: ast.AST) -> list[str]:
    """GRAPHLINK_* names an expression reads: ``os.environ.get/[...]/in``, ``os.getenv``, or any call given the
    name as an argument (a helper that reads it, like ``_flag("GRAPHLINK_EXPOSE")``).  Names written for a child
    process (``dict(os.environ, GRAPHLINK_X=...)``, dict keys) are not reads."""
    found = []
    for sub in ast.walk(node):
        args: list[ast.AST] = []
        if isinstance(sub, ast.Call):
            args = list(sub.args)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load) and "environ" in ast.unparse(sub.value):
            args = [sub.slice]
        elif isinstance(sub, ast.Compare) and any("environ" in ast.unparse(c) for c in sub.comparators):
            args = [sub.left]
        found += [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                  and a.value.startswith("GRAPHLINK_")]
    return found


_ENVIRON = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def environ_access(tree: ast.AST) -> list[tuple[int, str]]:
    """Every place a module touches the process environment: ``os.environ`` (read, written, copied, iterated),
    ``os.getenv``/``putenv``/``unsetenv``, and ``from os import environ`` (then any use of the name)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _ENVIRON:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, f"from os import {a.name}") for a in node.names if a.name in _ENVIRON]
    return sorted(set(found))


def test_only_the_configuration_touches_the_environment():
    """Every variable graphlink and the app read is a setting of graphlink/config.py (read at use time, checked in
    one line); what goes to children or libraries passes through its helpers. No other module touches os.environ."""
    files = [*sorted((ROOT / "graphlink").rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
             ROOT / "streamlit_app.py"]
    offenders = [f"{path.relative_to(ROOT)}:{line}: {text}"
                 for path in files if path != ROOT / "graphlink" / "config.py"
                 for line, text in environ_access(ast.parse(path.read_text(encoding="utf-8")))]
    assert offenders == []


def test_the_environment_scan_finds_what_it_looks_for():
    """The lines the old tree had (graphlink/store/neo4j.py read NEO4J_DATABASE at import) and their disguises."""
    sample = """import os
import os as system
from os import environ, getenv
DATABASE = os.environ.get("NEO4J_DATABASE", "neo4j")
user = os.environ["NEO4J_USER"]
master = os.getenv("SPARK_MASTER")
env = dict(os.environ, NEO4J_HOME="h")
os.environ.setdefault("PYSPARK_PYTHON", "python")
home = system.environ.get("JAVA_HOME")
path = os.path.join("a", "b")
"""
    assert [line for line, _ in environ_access(ast.parse(sample))] == [3, 3, 4, 5, 6, 7, 8, 9]


def test_no_module_reads_graphlink_variables_itself():
    files = [*sorted((ROOT / "graphlink").rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
             ROOT / "streamlit_app.py"]
    offenders = []
    for path in files:
        if path == ROOT / "graphlink" / "config.py":
            continue
        offenders += [f"{path.relative_to(ROOT)}: {name}"
                      for name in _reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert offenders == []
    # the scan finds what it looks for
    sample = ('import os\nos.environ.get("GRAPHLINK_A")\nos.environ["GRAPHLINK_B"]\nos.getenv("GRAPHLINK_C")\n'
              '"GRAPHLINK_D" in os.environ\n_flag("GRAPHLINK_E")\ndict(os.environ, GRAPHLINK_F="1")\n'
              'x = {"GRAPHLINK_G": 1}\n')
    assert _reads(ast.parse(sample)) == ["GRAPHLINK_A", "GRAPHLINK_B", "GRAPHLINK_C", "GRAPHLINK_D",
                                         "GRAPHLINK_E"]


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("GRAPHLINK_")} | {"GRAPHLINK_NEO4J_HEAP": "2g"}


RECORDER = r'''
import collections.abc, json, os, pkgutil, sys
reads = []
ours = (os.path.join(os.getcwd(), "graphlink"), os.path.join(os.getcwd(), "app"))

def record(key):
    # who asked: the first frame outside this recorder and the mapping machinery (os, _collections_abc)
    frame = sys._getframe(2)
    while frame.f_code.co_filename.endswith(("os.py", "_collections_abc.py", "<frozen os>",
                                             "<frozen _collections_abc>")):
        frame = frame.f_back
    reads.append((key, frame.f_code.co_filename.startswith(ours)))

class Recorder(collections.abc.MutableMapping):
    def __init__(self, real): self.real = real
    def __getitem__(self, key): record(key); return self.real[key]
    def __setitem__(self, key, value): self.real[key] = value
    def __delitem__(self, key): del self.real[key]
    def __iter__(self): record("<every variable>"); return iter(dict(self.real))
    def __len__(self): return len(self.real)
    def __contains__(self, key): record(key); return key in self.real
    def copy(self): record("<every variable>"); return dict(self.real)

os.environ = Recorder(os.environ)
import graphlink
bare = list(reads)
for mod in pkgutil.walk_packages(graphlink.__path__, "graphlink."):
    if not mod.name.endswith("__main__"):
        __import__(mod.name)
import graphlink_app.components.exposure
modules = [key for key, by_us in reads if by_us]
del reads[:]
from graphlink.config import get_config
heap = get_config().neo4j_heap
first = [key for key, by_us in reads if by_us]
del reads[:]
get_config()
again = [key for key, by_us in reads if by_us]
print(json.dumps({"bare": bare, "modules": modules, "first": first, "again": again, "heap": heap}))
'''


def test_importing_graphlink_reads_no_variable():
    """``import graphlink`` reads no environment variable; importing every module of graphlink and the app's
    exposure rules reads no GRAPHLINK_* one from their code (libraries they import, e.g. numba, read their own;
    nor any other variable, the connection ones included); the first get_config() reads each setting's variable,
    and later calls read only the connection variables again (which server to use may change)."""
    proc = subprocess.run([sys.executable, "-c", RECORDER], capture_output=True, text=True, env=_clean_env(),
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["bare"] == [] and got["modules"] == [] and sorted(got["again"]) == sorted(CONNECTION)
    assert sorted(got["first"]) == sorted(f.metadata["env"] for f in settings())
    assert got["heap"] == "2g"                                  # the recorder passes the values through


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e308", "-1", "0", "86401", "soon", ""])
def test_cypher_timeout_option_and_variable_refuse_in_one_line(tmp_path, value):
    """``graphlink cypher --timeout X`` and ``GRAPHLINK_CYPHER_TIMEOUT=X`` with X no usable time limit: exit 2, one
    line saying what is expected (a day at most), no traceback; refused before any server is asked (none runs)."""
    from tests.cli_runner import run_cli

    query = tmp_path / "q.cypher"
    query.write_text("RETURN 1 AS one;\n")
    no_server = {"NEO4J_URI": None, "GRAPHLINK_NEO4J_DIR": str(tmp_path / "none")}
    runs = [run_cli("cypher", query, "--timeout", value, env=no_server)]
    if value.strip():
        runs.append(run_cli("cypher", query, env={**no_server, "GRAPHLINK_CYPHER_TIMEOUT": value}))
    for done in runs:
        assert done.returncode == 2, (done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr and "Overflow" not in done.stderr, done.stderr
        assert "at most 86400 (one day)" in lines[0], lines
