"""The Spark session graphlink runs on: one per process, created on first use, reused after.

The master is ``master`` > ``SPARK_MASTER`` > ``local[*]``; anything Spark reads (``spark.*`` settings in
``spark-defaults.conf``, ``SPARK_CONF_DIR``) still applies.  In local mode graphlink also

* runs the Python workers with this interpreter and this graphlink (``PYTHONPATH``), so ``applyInPandas`` runs
  the driver's code and numba kernels;
* sizes shuffles to the input (``GRAPHLINK_SPARK_PARTITIONS``; default 1 for a small input, see
  :func:`partitions`, else 4 × cores) and sets the driver heap
  (``GRAPHLINK_SPARK_MEMORY``, default a quarter of the machine's memory, 2g to 8g: the local executors share
  it, and 2g ran out building a broadcast join on a 1e5-subject households release) and the spill folder
  (``GRAPHLINK_SPARK_LOCAL_DIR``);
* starts fast on a small input (:func:`small`): the JIT compiler stops at C1 (``-XX:TieredStopAtLevel=1``:
  a run of a few dozen short jobs is over before C2's optimised code pays off), the serial garbage collector;
  everywhere: no web UI, no Hive catalogue (``spark.sql.catalogImplementation=in-memory``);
* logs errors only (``log4j2.properties`` next to this module, which also keeps the REPL logger from announcing
  its level), hides the console progress bar, and drops the JVM's one-line notice that Spark's launcher enables
  the ``jdk.incubator.vector`` module (every other line of the JVM's stderr is passed on: :func:`_forward`).

``neo4j=True`` adds the Neo4j Connector for Apache Spark (the setting ``neo4j_connector``, resolved from Maven
Central through Ivy at session start; ``spark.jars.packages``) — it must be known before the JVM starts, so ask
for it on the first call in a process.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from graphlink.config import export, export_path, get_config
from graphlink.errors import GraphlinkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# the Neo4j Connector for Apache Spark (Scala 2.13 build; its DataSource V2 write and read paths run on Spark 4)
# and the repository it comes from are the settings ``neo4j_connector`` and ``maven_repo`` (graphlink/config.py)
_HERE = Path(__file__).resolve().parent


class SparkUnavailable(GraphlinkError):
    """pyspark is not installed or no JVM can start (exit 2: the user must fix the environment)."""

    exit_code = 2


def quiet_pandas_warning() -> None:
    """pyspark 4.3 warns on every pandas conversion that pandas 3 is 'not yet fully supported' (and about a
    pandas keyword it still passes); graphlink's tests pin the conversions it uses, so these are noise."""
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated", module="pyspark")


def _ivy_settings() -> str:
    """An Ivy settings file that resolves from Maven Central only (Spark's default chain also asks
    repos.spark-packages.org for every parent POM, which prints a wall of errors where it is unreachable)."""
    path = Path(get_config().ivy_settings
                or Path(tempfile.gettempdir()) / f"graphlink-ivysettings-{os.getuid()}.xml")
    text = f"""<ivysettings>
  <settings defaultResolver="central"/>
  <resolvers>
    <ibiblio name="central" m2compatible="true" root="{get_config().maven_repo}"/>
  </resolvers>
</ivysettings>
"""
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(path)


def default_memory() -> str:
    """The local driver heap when ``GRAPHLINK_SPARK_MEMORY`` is unset: a quarter of physical memory, clamped to
    2g…8g (the heap is a ceiling, not a reservation)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):   # no sysconf (not POSIX)
        return "2g"
    return f"{min(8, max(2, total // 4 // 2**30))}g"


def _on_loopback(url: str) -> bool:
    """A ``spark://`` master on this machine's loopback (``127.x``, ``localhost``, ``[::1]``)."""
    from urllib.parse import urlsplit

    if not url.startswith("spark://"):
        return False
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"


def resolve_master(master: str | None = None) -> str:
    return master or get_config().spark_master or "local[*]"


#: the JVM's notice about the module Spark's launcher always adds (not something a user can act on)
_NOTICES = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


def input_bytes(source: object) -> int | None:
    """Size of a local input (a file, or the files of a folder tree) in bytes; None for a URI or anything else
    whose size is not known here. O(files)."""
    if not isinstance(source, str | os.PathLike) or "://" in str(source):
        return None
    path = Path(source)
    try:
        if path.is_file():
            return path.stat().st_size
        if path.is_dir():
            return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:
        return None
    return None


def partitions(cores: int, size: int | None) -> int:
    """Shuffle partitions of a local session: ``GRAPHLINK_SPARK_PARTITIONS``, else 1 for a small input (every
    further partition is another task in each of the few dozen stages a run has, for rows that fit in one),
    else 4 × cores."""
    config = get_config()
    if config.spark_partitions:
        return config.spark_partitions
    return 1 if small(size) else 4 * cores


def small(size: int | None) -> bool:
    """Inputs up to the setting ``spark_small_bytes`` (``GRAPHLINK_SPARK_SMALL_BYTES``, default 4 MB, about 1e5
    rows of CSV) start the JVM for short work (C1 JIT, serial GC) and shuffle into one partition."""
    return size is not None and size <= get_config().spark_small_bytes


def _forward(stream: IO[bytes]) -> None:
    """Copy the JVM's stderr to ours line by line, without :data:`_NOTICES`; returns at end of file."""
    out = getattr(sys.stderr, "buffer", None)
    for line in iter(stream.readline, b""):
        if line.rstrip().startswith(_NOTICES):
            continue
        try:
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode(errors="replace"))
        except (OSError, ValueError):  # our stderr is gone: keep draining, so the JVM never blocks on it
            continue


def _start(conf: Any) -> Any:
    """A SparkContext on a JVM launched here (``spark-submit`` through pyspark's own launcher), whose stderr
    goes through :func:`_forward`."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(target=_forward, args=(gateway.proc.stderr,), name="graphlink-spark-stderr",
                     daemon=True).start()
    return SparkContext(conf=conf, gateway=gateway)


def get_session(master: str | None = None, *, neo4j: bool = False, size: int | None = None) -> SparkSession:
    """The process's Spark session (created on first call; see the module docstring).  ``size``: the input's
    size in bytes when known (:func:`input_bytes`), which tunes a new local session for it.  Raises
    :class:`SparkUnavailable` (one line) when pyspark is missing or the JVM does not start."""
    try:
        from pyspark import SparkConf
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable("the Spark engine needs pyspark: pip install 'graphlink[spark]' (and Java 17)") \
            from None
    quiet_pandas_warning()
    active = SparkSession.getActiveSession()
    if active is not None:
        want = resolve_master(master) if master else None
        if want and active.sparkContext.master != want:
            raise SparkUnavailable(f"a Spark session on {active.sparkContext.master} is already running in this "
                                   f"process; cannot switch to {want}")
        if neo4j and get_config().neo4j_connector not in (active.conf.get("spark.jars.packages", "") or ""):
            raise SparkUnavailable("the running Spark session was started without the Neo4j connector; start it "
                                   "with get_session(neo4j=True) first")
        return active
    url = resolve_master(master)
    java = [f"-Dlog4j2.configurationFile=file:{_HERE / 'log4j2.properties'}"]
    conf = {"spark.ui.showConsoleProgress": "false", "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.catalogImplementation": "in-memory"}
    if url.startswith("local"):
        export("PYSPARK_PYTHON", sys.executable)
        export("PYSPARK_DRIVER_PYTHON", sys.executable)
        # the workers import the graphlink this driver runs (a checkout, not whichever one is installed)
        export_path("PYTHONPATH", str(_HERE.parents[2]))
        cores = os.cpu_count() or 2
        if url.startswith("local[") and url[6:-1].isdigit():
            cores = int(url[6:-1])
        conf.update({"spark.sql.shuffle.partitions": str(partitions(cores, size)),
                     "spark.driver.memory": get_config().spark_memory or default_memory(),
                     "spark.ui.enabled": "false",
                     # local mode needs no address but loopback: the driver's RPC and block manager listen there
                     "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
        if small(size):
            java += ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
            conf["spark.default.parallelism"] = "1"      # pandas frames made into Spark ones: one slice
        if get_config().spark_local_dir:
            conf["spark.local.dir"] = get_config().spark_local_dir
    elif _on_loopback(url):
        # a cluster on this machine (the tests' standalone cluster): the driver listens on loopback only, and the
        # executors run this interpreter (with this graphlink) unless the user chose another
        conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                     "spark.ui.enabled": "false"})
        export("PYSPARK_PYTHON", sys.executable)
    conf["spark.driver.extraJavaOptions"] = " ".join(java)
    if neo4j:
        conf.update({"spark.jars.packages": get_config().neo4j_connector, "spark.jars.ivySettings": _ivy_settings()})
    try:
        _start(SparkConf().setMaster(url).setAppName("graphlink").setAll(list(conf.items())))
        spark = SparkSession.builder.getOrCreate()
    except Exception as exc:  # JVM missing, Ivy cannot resolve the connector, bad master URL
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkUnavailable(f"cannot start Spark on {url}: {first[:300]}") from None
    # a cluster: shuffles sized to the input and the cores the executors have (Spark's default is 200 partitions
    # whatever the data: 200 tasks a stage for 20,000 rows), unless the user's Spark settings say otherwise
    chosen = dict(spark.sparkContext.getConf().getAll())
    if not url.startswith("local") and "spark.sql.shuffle.partitions" not in chosen:
        cores = max(1, spark.sparkContext.defaultParallelism)
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions(cores, size)))
    spark.sparkContext.setLogLevel("ERROR")
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):   # pyspark logs every analysis error
        logging.getLogger(name).disabled = True                          # as JSON; graphlink reports its own
    return spark
