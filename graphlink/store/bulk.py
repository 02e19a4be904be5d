"""Bulk import: a new release's graph built offline by ``neo4j-admin database import full`` on the project's own
local server, instead of batched UNWIND transactions (``Store.load_release(..., bulk=...)``, ``graphlink load
--bulk auto|always|never``).

**The rule.** Community Edition has one user database, and the full importer can only build a store from scratch
(offline; the live store is then replaced). So graphlink bulk-imports only when that loses nothing:

* the store is the **project's local server** (the one ``graphlink neo4j start`` runs, recorded in its state file),
  never a ``NEO4J_URI`` server elsewhere, started by a launcher that can pause its database, and its password
  file works (the client reconnects after the swap);
* its ``neo4j`` database is **empty**: no node but the load's own lock (``Store.load_lock``), and no index or
  constraint but graphlink's own (the ``cypher/*schema.cypher`` files: releases, quasi-identifiers,
  fingerprinting).

``auto`` (the default) then also needs at least :func:`min_rows` disclosure rows (``GRAPHLINK_BULK_MIN_ROWS``,
default 200,000): below that, UNWIND is done before the importer's JVM has started. Otherwise ``auto`` loads with
UNWIND and says why; ``always`` ignores the size and fails (StoreError) instead of falling back; ``never`` always
uses UNWIND.

**How** (everything under the private ``.graphlink/neo4j/bulk/``; the importer's output is appended to
``home/logs/bulk-import.log``):

1. header + data CSV files of the graph model that ``cypher/load.cypher`` writes (Release, Location, Identified,
   Deidentified, Entity nodes; HAS_LOCATION, DISCLOSED_AT, APPEARS_AS), with the per-location sizes and totals its
   ``finalize`` statement computes, the content fingerprint, ``load_method: 'bulk-import'`` and status 'loading'.
   A pluggable step (:func:`load_files` takes the writer): :func:`write_files` for a release in memory (the local
   engine), :func:`graphlink.engines.spark.bulk.write_files` for one held by Spark (its executors write the CSV parts);
   both write the Release and Location files with :func:`write_release_nodes`. The rest is this module's;
2. the importer (``neo4j-admin database import full``: ``org.neo4j.cli.AdminTool``) builds a *staged* database in
   the job folder while the server keeps serving. It runs in the server's own JVM (``Neo4jLauncher.runImport``,
   asked through ``home/control/``), whose loaded classes and compiled code make a 1e6-row import take about 2 s
   instead of the 6 s of a new JVM, from the second import on (the first after a start loads the importer's
   classes: about as long as a JVM of its own). ``GRAPHLINK_BULK_IMPORTER=jvm``, or a launcher older than control
   protocol 2, runs it in a JVM of its own (``Neo4jLauncher admin ...``), which halts when this process dies;
3. the server's launcher is asked to pause (``home/control/``: it shuts its DBMS down but keeps its JVM), the
   staged store replaces the live ``neo4j`` database by two directory renames recorded in ``journal.json``, and the
   launcher opens the DBMS again on the same ports (the system database, hence the password, is untouched). A warm
   JVM reopens in about a second, where a new one spends most of a start loading classes;
4. the schema is applied and the counts are checked against the Release node, which is then marked 'loaded'.

**Safety.** Before the emptiness check, the size and mtime of the live transaction log files are noted; once the
DBMS has paused they are compared, so a transaction committed after the check (by another client) keeps the old
store, which is reopened as it was. A failed or killed importer leaves the live database untouched (it never
stopped serving). A crash during the renames leaves the launcher paused; it exits when it sees that its client died,
and the next ``graphlink neo4j start`` completes the renames before the server opens the store
(:func:`complete_swap`); a crash after them leaves the release 'loading', and loading it again only applies the
schema and marks it loaded (:func:`finish`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from graphlink import fileio
from graphlink.config import child_environ, get_config
from graphlink.errors import StoreError
from graphlink.store import cypherlib, server
from graphlink.store.bulkswap import _bulk_dir, _forget, _set_journal, _swap, journal
from graphlink.store.bulkswap import _swap_dirs as _swap_dirs
from graphlink.store.bulkswap import complete_swap as complete_swap

if TYPE_CHECKING:
    from graphlink.store.neo4j import Store

MODES = ("auto", "always", "never")
METHOD = "bulk-import"
DATABASE = "neo4j"
Progress = Callable[[float, str], None] | None
#: fills the given empty folder with the importer's input (:func:`write_files` or the Spark engine's)
Writer = Callable[[Path], "ImportFiles"]


def min_rows() -> int:
    """Smallest release (disclosure rows) that ``auto`` bulk-imports: ``GRAPHLINK_BULK_MIN_ROWS``, default 200,000."""
    return get_config().bulk_min_rows


def _note(progress: Progress, fraction: float, message: str) -> None:
    if progress:
        progress(fraction, message)


# ---------------------------------------------------------------------------------------------- the rule
def _own_schema() -> dict[str, set[str]]:
    """Names of graphlink's indexes and constraints, per schema file (``cypher/*schema.cypher``, by stem)."""
    out = {}
    for path in sorted(cypherlib.cypher_dir().glob("*schema.cypher")):
        text = path.read_text(encoding="utf-8")
        out[path.stem] = set(re.findall(r"CREATE\s+(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF\s+NOT\s+EXISTS", text, re.I))
    return out


def _apply_schema_files(store: Store, stems: set[str]) -> None:
    """Create the indexes and constraints of ``cypher/<stem>.cypher`` for each of ``stems`` (idempotent) in one
    transaction, so that their populations run side by side, then wait for them to come online. O(nodes)."""
    statements = [st.text for stem in sorted(stems)
                  for st in cypherlib.load_file(cypherlib.cypher_dir() / f"{stem}.cypher").statements]
    with store.conn.transaction() as tx:
        for text in statements:
            tx.run(text).consume()
    store.conn.query("CALL db.awaitIndexes(300)")


def _schema_names(store: Store) -> set[str]:
    """Names of the database's indexes (token lookup indexes aside) and constraints."""
    idx = store.conn.query("SHOW INDEXES YIELD name, type RETURN name, type")
    con = store.conn.query("SHOW CONSTRAINTS YIELD name RETURN name")
    return {r["name"] for r in idx if r["type"] != "LOOKUP"} | {r["name"] for r in con}


def not_local(store: Store, paths: server.Paths) -> str | None:
    """Why ``store`` is not the project's local server with a bulk importer (None: it is). No query."""
    local = server.local_uri(paths)
    if local is None or store.uri != local:
        where = "NEO4J_URI names another server" if get_config().neo4j_uri else "no local server runs"
        return f"{store.uri} is not the project's local server ({where})"
    if store.database != DATABASE:
        return f"NEO4J_DATABASE={store.database!r}: the local server has one user database, {DATABASE!r}"
    if not any((paths.runtime / "lib").glob("neo4j-import-tool-*.jar")):
        return "the local Neo4j runtime has no bulk importer (run `bash scripts/setup-neo4j.sh --force`)"
    if server.find_java() is None:
        return "Java is not found"
    if int((server.read_state(paths) or {}).get("control") or 0) < 1:
        return ("the local server was started by an older graphlink that cannot pause its database; restart it "
                "(`graphlink neo4j stop`, then `graphlink neo4j start`)")
    return None


def ineligible(store: Store, paths: server.Paths) -> str | None:
    """Why the importer may not rebuild this store's database (None: it may). A few small queries: O(1) for the
    data (``EXISTS``), O(indexes + constraints) for the schema."""
    why = not_local(store, paths)
    if why:
        return why
    try:
        answers = server.bolt_version(store.uri, auth=server.local_auth(paths),
                                      certificate=store.conn.certificate or server.pinned_certificate(store.uri, paths))
    except server.AuthRefusedError:
        return f"the local server refuses the password in {paths.password_file}"
    if not answers:
        return "the local server does not answer"
    # the load's own lock node (Store.load_lock) is not data; the import replaces it with the new store
    if store.conn.query("RETURN EXISTS { MATCH (n) WHERE NOT n:LoadLock } AS data")[0]["data"]:
        return "the local database already holds data"
    own = set().union(*_own_schema().values())
    foreign = sorted(_schema_names(store) - own)
    if foreign:
        return f"the local database has indexes or constraints that are not graphlink's ({', '.join(foreign)})"
    return None


# ---------------------------------------------------------------------------------------------- CSV files
@dataclass
class ImportFiles:
    """The importer's input: per label / relationship type a header file then data files (names in ``folder``)."""

    folder: Path
    nodes: list[tuple[str, list[str]]] = field(default_factory=list)
    relationships: list[tuple[str, list[str]]] = field(default_factory=list)
    multiline: bool = False
    summary: dict = field(default_factory=dict)
    #: per kind, the element keys (an Index) and the node id of the first: further groups refer to elements by it
    ids: dict[str, tuple[pd.Index, int]] = field(default_factory=dict)
    next_id: int = 0
    #: the importer's ``--id-type``: ``actual`` when the node ids are exactly 0, 1, ... in the order of ``nodes``
    #: (rows within a file, files within a group, groups in list order), so that each id is the node's record id
    #: and the importer builds and consults no id map (two fifths of its relationship phase on a low-entropy
    #: release's class LINKs); ``integer`` otherwise (the Spark engine's parts)
    id_type: str = "integer"

    def arguments(self, *, absolute: bool = False) -> list[str]:
        """The importer's ``--nodes`` / ``--relationships`` options; a node group of label ``""`` takes its labels
        from its ``:LABEL`` column. File names are relative to ``folder`` unless ``absolute``."""
        def files(names: list[str]) -> str:
            return ",".join(str(self.folder / n) if absolute else n for n in names)

        return ([f"--nodes={label + '=' if label else ''}{files(names)}" for label, names in self.nodes]
                + [f"--relationships={kind}={files(names)}" for kind, names in self.relationships])


def write_header(files: ImportFiles, stem: str, header: list[str]) -> str:
    """Write ``stem.header.csv``: the one header line of a group (``:ID``, ``:START_ID``, ``name:type`` ...)."""
    (files.folder / f"{stem}.header.csv").write_text(",".join(header) + "\n", encoding="utf-8")
    return f"{stem}.header.csv"


def _write_group(files: ImportFiles, stem: str, header: list[str], columns: list[Any]) -> str:
    """Write ``stem.header.csv`` (one line) and ``stem.csv`` (the rows; strings always quoted); return the data
    file's name."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    write_header(files, stem, header)
    table = pa.table({f"c{i}": col for i, col in enumerate(columns)})
    pacsv.write_csv(table, files.folder / f"{stem}.csv",
                    write_options=pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    return f"{stem}.csv"


def _constant(value: str, n: int) -> Any:
    """A string column of ``n`` copies of ``value`` (dictionary-encoded: no n Python strings)."""
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


def _strings(values: Any) -> Any:
    import pyarrow as pa

    return pa.array(np.asarray(values, dtype=object), type=pa.string())


def _has_newline(values: Any) -> bool:
    return bool(pd.Series(np.asarray(values, dtype=object), dtype=object).str.contains("[\r\n]", regex=True).any())


def write_files(folder: Path, frame: pd.DataFrame, truth: pd.DataFrame | None, name: str, source: str | None,
                fingerprint: str) -> ImportFiles:
    """The release as importer input (``frame``: the de-duplicated long table ``location, kind, element``).

    Node ids are integers in one space: 0 the Release, then the locations (in first-appearance order, which is
    ``Location.index``), the identified, the de-identified elements and the entities. Sizes and totals are those of
    ``finalize`` in ``cypher/load.cypher``. The ids run without a gap in the order of ``files.nodes``, so the
    importer takes them as record ids (``id_type`` ``actual``); groups appended later must continue from
    ``files.next_id`` in order (as :func:`graphlink.store.writeback.add_results` does). O(rows).
    """
    files = ImportFiles(folder)
    loc_codes, locations = pd.factorize(frame["location"].to_numpy(dtype=object), sort=False)
    n_loc = len(locations)
    kinds = frame["kind"].to_numpy(dtype=object)
    elements = frame["element"].to_numpy(dtype=object)
    rel_files: list[str] = []
    sizes: dict[str, np.ndarray] = {}
    keys: dict[str, tuple[pd.Index, int]] = {}
    next_id = 1 + n_loc
    multiline = False
    for kind, label in (("identified", "Identified"), ("deidentified", "Deidentified")):
        mask = kinds == kind
        codes, uniques = pd.factorize(elements[mask], sort=False)
        multiline = multiline or _has_newline(uniques)
        ids = next_id + np.arange(len(uniques), dtype=np.int64)
        data = _write_group(files, label, [":ID", "release", "key"],
                            [ids, _constant(name, len(uniques)), _strings(uniques)])
        files.nodes.append((label, [f"{label}.header.csv", data]))
        rel_files.append(_write_group(files, f"DISCLOSED_AT-{label}", [":START_ID", ":END_ID"],
                                      [next_id + codes.astype(np.int64), 1 + loc_codes[mask].astype(np.int64)]))
        sizes[kind] = np.bincount(loc_codes[mask], minlength=n_loc).astype(np.int64)
        keys[kind] = (pd.Index(uniques), next_id)
        next_id += len(uniques)

    entities = 0
    if truth is not None and len(truth):
        tr = truth[["identified", "deidentified"]].astype(str)
        ent_codes, ent_ids = pd.factorize((tr["identified"] + "|" + tr["deidentified"]).to_numpy(dtype=object))
        entities = len(ent_ids)
        multiline = multiline or _has_newline(ent_ids)
        data = _write_group(files, "Entity", [":ID", "release", "id"],
                            [next_id + np.arange(entities, dtype=np.int64), _constant(name, entities),
                             _strings(ent_ids)])
        files.nodes.append(("Entity", ["Entity.header.csv", data]))
        starts, ends = [], []
        for kind in ("identified", "deidentified"):  # MERGE semantics of statement truth: one edge per pair
            index, base = keys[kind]
            pos = index.get_indexer(tr[kind].to_numpy(dtype=object))
            pairs = np.unique(np.stack([ent_codes[pos >= 0], pos[pos >= 0]], axis=1), axis=0)
            starts.append(next_id + pairs[:, 0].astype(np.int64))
            ends.append(base + pairs[:, 1].astype(np.int64))
        appears = _write_group(files, "APPEARS_AS", [":START_ID", ":END_ID"],
                               [np.concatenate(starts), np.concatenate(ends)])
        files.relationships.append(("APPEARS_AS", ["APPEARS_AS.header.csv", appears]))

    write_release_nodes(files, name, source, fingerprint, locations, sizes["identified"], sizes["deidentified"],
                        len(keys["identified"][0]), len(keys["deidentified"][0]), entities)
    files.relationships.insert(1, ("DISCLOSED_AT", ["DISCLOSED_AT-Identified.header.csv", *rel_files]))
    files.multiline = files.multiline or multiline
    files.ids, files.next_id = keys, next_id + entities
    files.id_type = "actual"     # ids 0 (Release), 1.. (Location), then the groups above, in the order of nodes
    return files


def write_release_nodes(files: ImportFiles, name: str, source: str | None, fingerprint: str, locations: Any,
                        gi: np.ndarray, gd: np.ndarray, identified: int, deidentified: int, entities: int) -> None:
    """The Release node, its Location nodes (ids 0 and ``1 + Location.index``) and HAS_LOCATION, put first in
    ``files``; ``gi``/``gd``: disclosures per location, in ``locations`` order. Sets ``files.summary``. Shared by
    both engines' writers, so a release's provenance and totals are written by one piece of code. O(locations).
    """
    n_loc = len(locations)
    files.multiline = files.multiline or _has_newline(locations) or _has_newline([name, source or ""])
    reserved = ("none" if np.array_equal(gi, gd) else "deidentified" if (gd <= gi).all()
                else "identified" if (gi <= gd).all() else "mixed")
    summary = {"locations": n_loc, "identified": int(identified), "deidentified": int(deidentified),
               "rows": int(gi.sum() + gd.sum()), "reserved": reserved, "entities": int(entities)}
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    release = _write_group(
        files, "Release",
        [":ID", "name", "status", "source", "fingerprint", "load_method", "created_at:datetime",
         "locations:long", "identified:long", "deidentified:long", "rows:long", "reserved", "entities:long"],
        [[0], _strings([name]), _strings(["loading"]), _strings([source]), _strings([fingerprint]),
         _strings([METHOD]), _strings([created]), *([summary[k]] for k in
                                                     ("locations", "identified", "deidentified", "rows")),
         _strings([reserved]), [summary["entities"]]])
    location = _write_group(files, "Location", [":ID", "release", "name", "index:long", "identified:long",
                                                "deidentified:long"],
                            [1 + np.arange(n_loc, dtype=np.int64), _constant(name, n_loc), _strings(locations),
                             np.arange(n_loc, dtype=np.int64), gi.astype(np.int64), gd.astype(np.int64)])
    has = _write_group(files, "HAS_LOCATION", [":START_ID", ":END_ID"],
                       [np.zeros(n_loc, dtype=np.int64), 1 + np.arange(n_loc, dtype=np.int64)])
    files.nodes[:0] = [("Release", ["Release.header.csv", release]), ("Location", ["Location.header.csv", location])]
    files.relationships[:0] = [("HAS_LOCATION", ["HAS_LOCATION.header.csv", has])]
    files.summary = summary


# ---------------------------------------------------------------------------------------------- importer
def importer_options(files: ImportFiles, *, absolute: bool = False) -> list[str]:
    """``database import full neo4j`` and its options for ``files`` (relative to their folder unless
    ``absolute``). ``--bad-tolerance=0``: any bad entry fails the import. ``GRAPHLINK_NEO4J_IMPORT_MEMORY``: the
    importer's off-heap cap (default 50%)."""
    memory = get_config().neo4j_import_memory
    report = files.folder / "import.report" if absolute else "import.report"
    return ["database", "import", "full", DATABASE, f"--id-type={files.id_type}", "--bad-tolerance=0",
            f"--report-file={report}", f"--multiline-fields={'true' if files.multiline else 'false'}",
            f"--max-off-heap-memory={memory}", *files.arguments(absolute=absolute)]


def importer_command(java: str, paths: server.Paths, files: ImportFiles) -> list[str]:
    """``neo4j-admin database import full neo4j ...`` in a JVM of its own (run with ``cwd=files.folder``). O(1).

    C1-only JIT (``-XX:TieredStopAtLevel=1``): an import of ~1e6 rows is over before C2 pays off (7 instead of
    12 CPU-seconds here). ``GRAPHLINK_NEO4J_IMPORT_HEAP`` (default 1g) sizes its heap.
    """
    heap = get_config().neo4j_import_heap
    return [java, f"-Xmx{heap}", *server.JVM_FLAGS, "-XX:TieredStopAtLevel=1", "-cp", server.class_path(paths),
            "Neo4jLauncher", "admin", *importer_options(files)]


def in_server(paths: server.Paths, files: ImportFiles) -> bool:
    """Whether the running launcher runs the importer itself (``Neo4jLauncher.runImport``, control protocol 2):
    unless ``GRAPHLINK_BULK_IMPORTER=jvm`` asks for a JVM of its own, or a file name holds a comma or line break
    (the in-server importer gets absolute names, and those characters would split them). O(1)."""
    if get_config().bulk_importer == "jvm":
        return False
    if int((server.read_state(paths) or {}).get("control") or 0) < 2:
        return False
    return not any(ch in str(files.folder) for ch in ",\n\r")


def _stage(paths: server.Paths, job: Path, where: str) -> tuple[Path, Path]:
    """The importer's home (whose ``conf/neo4j.conf`` names the staged data folder ``job/data``) and its log,
    whose new section is headed by this job's name."""
    home = job / "home"
    (home / "conf").mkdir(parents=True, exist_ok=True)
    fileio.write_text(home / "conf" / "neo4j.conf",
                      f"server.directories.data={job / 'data'}\nserver.directories.logs={home / 'logs'}\n")
    log = paths.home / "logs" / "bulk-import.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        fh.write(f"\n--- {datetime.now(UTC).isoformat()} neo4j-admin database import full ({job.name}, "
                 f"{where})\n".encode())
    return home, log


def _run_importer(paths: server.Paths, job: Path, files: ImportFiles) -> int:
    """Run the importer into the staged ``job/data`` and return its exit code: in the running server's warm JVM
    when :func:`in_server` (about a second of 1e6 rows' import, where a new JVM spends six), else in a JVM of
    its own, which halts by itself if this process dies (stdin EOF). Ctrl-C stops waiting: the caller then
    deletes the job folder, which fails an import still running in the server."""
    server_side = in_server(paths, files)
    home, log = _stage(paths, job, "in the server's JVM" if server_side else "in a JVM of its own")
    if server_side:
        return _import_in_server(paths, home, log, files)
    java = server.check_java()
    with log.open("ab") as fh:
        proc = subprocess.Popen(importer_command(java, paths, files), cwd=str(files.folder), stdin=subprocess.PIPE,
                                stdout=fh, stderr=subprocess.STDOUT,
                                env=child_environ(NEO4J_HOME=str(home), NEO4J_CONF=str(home / "conf")))
    _set_journal(paths, importer_pid=proc.pid)
    try:
        return proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if proc.stdin:
            proc.stdin.close()


def _import_in_server(paths: server.Paths, home: Path, log: Path, files: ImportFiles) -> int:
    """The request of ``Neo4jLauncher.runImport`` (``control/import``, renamed into place), then its answer
    (``control/import.done``: the request id and the exit code). StoreError (abandoned) if the server exits."""
    control = _control(paths)
    control.mkdir(parents=True, exist_ok=True)
    rid = uuid.uuid4().hex
    done = control / "import.done"
    done.unlink(missing_ok=True)          # an answer left by an abandoned request
    lines = [rid, str(home), str(log), *importer_options(files, absolute=True)]
    fileio.write_text(control / "import", "\n".join(lines) + "\n")       # atomic: temporary file, then rename
    pid = int((server.read_state(paths) or {}).get("pid") or 0)
    while True:
        with contextlib.suppress(OSError):
            answer = done.read_text().split()
            if answer and answer[0] == rid:
                done.unlink(missing_ok=True)
                return int(answer[1])
        if not pid or not server._alive(pid):
            (control / "import").unlink(missing_ok=True)
            raise _Abandoned("the local server exited during the bulk import; the database was not changed")
        time.sleep(0.05)


def _log_tail(paths: server.Paths, chars: int = 1500) -> str:
    try:
        text = (paths.home / "logs" / "bulk-import.log").read_text(errors="replace")
    except OSError:
        return ""
    return text[-chars:]


# ---------------------------------------------------------------------------------------------- journal, swap
@contextlib.contextmanager
def _locked(paths: server.Paths) -> Iterator[None]:
    """One bulk import at a time per local server (a second one waits, then finds the database not empty)."""
    _bulk_dir(paths).mkdir(parents=True, exist_ok=True)
    with (_bulk_dir(paths) / "lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _clean_stale(paths: server.Paths) -> None:
    """Drop what an earlier, interrupted run left behind, unless it still has renames to finish."""
    j = journal(paths)
    if j and j.get("phase") == "swapping":
        raise StoreError(f"an interrupted bulk import left {paths.home / 'data'} half swapped, yet the server "
                         "runs; stop it (`graphlink neo4j stop`) and start it again to complete the swap")
    for job in _bulk_dir(paths).glob("job-*"):
        shutil.rmtree(job, ignore_errors=True)
    _forget(paths)


def _txlog_snapshot(paths: server.Paths) -> dict[str, tuple[int, int]]:
    """(size, mtime) of the live database's transaction log files: a commit appends to the newest one (or, when
    it is full, starts a new one). Checkpoints are written to ``checkpoint.*`` files, not these."""
    folder = paths.home / "data" / "transactions" / DATABASE
    return {f.name: (f.stat().st_size, f.stat().st_mtime_ns)
            for f in sorted(folder.glob("neostore.transaction.db*"))}


def written_since(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> bool:
    """Whether a transaction was committed between two :func:`_txlog_snapshot` s: a file changed or a new one
    appeared. A file that disappeared was pruned by a checkpoint (``db.tx_log.rotation.retention_policy``):
    that happens on its own, some time after a large write, and is not a commit."""
    return any(before.get(name) != stat for name, stat in after.items())


# ---------------------------------------------------------------------------------------------- the import
class _Abandoned(StoreError):
    """The import did not replace the live database, which is as before and served again."""


def _control(paths: server.Paths) -> Path:
    return paths.home / "control"


def _pause(paths: server.Paths, timeout: float = 120.0) -> None:
    """Ask the running launcher to shut its DBMS down (``control/pause`` holding our PID) and wait until it has
    (``control/paused``); its JVM stays up. StoreError if it exits or does not pause within ``timeout``."""
    pid = int((server.read_state(paths) or {}).get("pid") or 0)
    control = _control(paths)
    fileio.write_text(control / "pause", f"{os.getpid()}\n")
    t0 = time.monotonic()
    while not (control / "paused").exists():
        if not pid or not server._alive(pid):
            (control / "pause").unlink(missing_ok=True)
            raise _Abandoned("the local server exited before it paused for the swap; the database was not changed")
        if time.monotonic() - t0 > timeout:
            (control / "pause").unlink(missing_ok=True)
            raise _Abandoned(f"the local server did not pause within {timeout:.0f} s; the database was not changed")
        time.sleep(0.05)


def _resume(store: Store, paths: server.Paths, timeout: float = 180.0) -> None:
    """Let the paused launcher open its DBMS again (on the store now in place); wait until Bolt answers and
    reconnect ``store``."""
    (_control(paths) / "pause").unlink(missing_ok=True)
    server.wait_ready(store.uri, log=paths.log, timeout=timeout, auth=server.local_auth(paths),
                      certificate=store.conn.certificate or server.pinned_certificate(store.uri, paths))
    store.reconnect()


def _import(store: Store, paths: server.Paths, snapshot: dict, write: Writer, rows: int, name: str, fp: str,
            progress: Progress) -> None:
    """Steps 1-3 of the module docstring, up to the server answering again on the new store; ``write`` makes
    the files (step 1) in the folder it is given."""
    job = _bulk_dir(paths) / f"job-{uuid.uuid4().hex[:12]}"
    (job / "csv").mkdir(parents=True)
    _set_journal(paths, phase="importing", job=job.name, release=name, fingerprint=fp,
                 started_at=datetime.now(UTC).isoformat())
    _note(progress, 0.05, f"writing the import files for {rows:,} rows")
    try:
        files = write(job / "csv")
    except BaseException:  # nothing was imported: only the job folder to drop
        _forget(paths, job)
        raise
    _note(progress, 0.2, "importing (neo4j-admin database import; the server keeps serving)")
    try:
        code = _run_importer(paths, job, files)
    except BaseException:  # Ctrl-C or the server died: no import; the live database was never touched
        _forget(paths, job)
        raise
    if code != 0:
        _forget(paths, job)
        raise _Abandoned(f"the bulk importer failed (exit {code}) and the local database was not changed; "
                         f"from {paths.home / 'logs' / 'bulk-import.log'}:\n{_log_tail(paths)}")
    _note(progress, 0.75, "swapping the new store in (the database pauses, the server stays up)")
    try:
        _pause(paths)
    except BaseException:
        _forget(paths, job)
        raise
    try:
        written = written_since(snapshot, _txlog_snapshot(paths))
        if not written:
            _set_journal(paths, phase="swapping")
            _swap(paths, job)
    except BaseException:  # the store may be half swapped: never open it; the next start completes the swap
        with contextlib.suppress(Exception):
            server.stop(paths)
        raise
    _resume(store, paths)
    if written:
        _forget(paths, job)
        raise _Abandoned("the local database was written to while the import ran, so it was kept as it was")
    store.restore_lock(name)  # the new store has no lock node: this load's, with its token, before anyone else's


_CHECK_ONE = """MATCH (r:Release {name: $name})
WITH r, COUNT { (:Identified {release: $name}) } AS i, COUNT { (:Deidentified {release: $name}) } AS d,
     COUNT { (:Entity {release: $name}) } AS x,
     COLLECT { MATCH (r)-[:HAS_LOCATION]->(l) RETURN COUNT { (l)<-[:DISCLOSED_AT]-() } } AS sizes
WHERE r.identified = i AND r.deidentified = d AND r.entities = x AND size(sizes) = r.locations
  AND reduce(n = 0, s IN sizes | n + s) = r.rows
SET r.status = 'loaded', r.loaded_at = datetime()
RETURN r.name AS name"""


def _counts_match_alone(store: Store, name: str) -> bool:
    """The database holds just this release: its totals against the count store (O(1) per label or type)."""
    def count(pattern: str) -> int:
        return int(store.conn.query(f"MATCH {pattern} RETURN count(*) AS n")[0]["n"])

    info = store.release_info(name)
    if info is None:
        return False
    expected = {"(:Release)": 1, "(:Location)": info.locations, "()-[:HAS_LOCATION]->()": info.locations,
                "(:Identified)": info.identified, "(:Deidentified)": info.deidentified,
                "(:Entity)": info.entities, "()-[:DISCLOSED_AT]->()": info.rows}
    return all(count(pattern) == n for pattern, n in expected.items())


def finish(store: Store, name: str, schemas: Iterable[str] = (), *, alone: bool = False) -> bool:
    """Schema, then status 'loaded', for a bulk-imported release whose node and relationship counts match its
    Release node (an import is all or nothing); False (nothing marked) if they do not.

    ``schemas``: stems of further ``cypher/*schema.cypher`` files to re-create (those the database had before the
    import replaced it). ``alone``: the database holds nothing but this release (right after its import), so the
    counts come from the count store, O(1); else per release, O(nodes of the release) index entries and
    O(locations) degree lookups. Plus index population, O(nodes).
    """
    _apply_schema_files(store, {"schema", *schemas})
    store.mark_schema_applied()
    if alone:
        ok = _counts_match_alone(store, name) and bool(store.as_owner(
            name, "MATCH (r:Release {name: $name}) SET r.status = 'loaded', r.loaded_at = datetime() RETURN r.name",
            {"name": name}))
    else:
        ok = bool(store.as_owner(name, _CHECK_ONE, {"name": name}))
    paths = server.Paths.default()
    j = journal(paths)
    if j and j.get("release") == name and j.get("phase") == "swapped":
        _forget(paths, _bulk_dir(paths) / j["job"])
    return ok


def load(store: Store, frame: pd.DataFrame, truth: pd.DataFrame | None, name: str, source: str | None, fp: str,
         mode: str = "auto", progress: Progress = None) -> tuple[bool, str]:
    """Bulk-import the release (the local engine's: ``frame`` in memory, files by :func:`write_files`) if the rule
    (module docstring) allows: ``(True, why)`` once it is loaded, else ``(False, why not)`` for the caller to load
    it with UNWIND. With ``mode='always'`` a refusal or a failed import is a StoreError instead (the live database
    is then as before).

    Cost: O(rows) to write the CSV files and for the importer (which sorts relationships by node id, O(rows log
    rows) at worst), O(nodes) index population; the database is paused only for two renames and a reopen.
    """
    return load_files(store, lambda folder: write_files(folder, frame, truth, name, source, fp), len(frame), name,
                      fp, mode, progress)


def load_files(store: Store, write: Writer, rows: int, name: str, fp: str, mode: str = "auto",
               progress: Progress = None, *, other: str = "UNWIND") -> tuple[bool, str]:
    """:func:`load` for any writer of the importer's files: ``write(folder)`` fills the empty ``folder`` and
    returns its :class:`ImportFiles` (the local engine's :func:`write_files`, or the Spark engine's
    :func:`graphlink.engines.spark.bulk.write_files`); it runs only once the rule allows the import. ``rows``: the
    release's distinct disclosures (for ``auto``); ``other``: the caller's way to load without the importer,
    named in the reasons. The checks, the import, the swap and :func:`finish` are this module's whatever wrote
    the files. Cost: ``write``'s, then as :func:`load`.
    """
    if mode not in MODES:
        raise StoreError(f"bulk mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "never":
        return False, f"{other} was asked for (bulk: never)"
    if mode == "auto" and rows < min_rows():
        return False, f"{rows:,} rows < {min_rows():,} (GRAPHLINK_BULK_MIN_ROWS): {other} is quicker"
    paths = server.Paths.default()

    def refuse(why: str) -> tuple[bool, str]:
        if mode == "always":
            from graphlink.diagnostics import Diagnostic

            raise StoreError(diagnostic=Diagnostic("store-bulk-refused", f"cannot bulk-import: {why}",
                                                   {"why": why, "other": other},
                                                   remedy=f"load with bulk import set to auto ({other}) instead"))
        return False, why

    why = not_local(store, paths)
    if why:
        return refuse(why)
    # no heartbeat of the load's own lock may write between the snapshot and the swap: it would count as a write
    with _locked(paths), store.heartbeats_paused():
        _clean_stale(paths)
        snapshot = _txlog_snapshot(paths)
        time.sleep(0.05)  # a later commit lands in a later clock tick than the snapshot's mtimes
        why = ineligible(store, paths) or (None if snapshot else "the local transaction logs are not found")
        if why:
            return refuse(why)
        present = _schema_names(store)
        schemas = {stem for stem, names in _own_schema().items() if names & present}
        try:
            _import(store, paths, snapshot, write, rows, name, fp, progress)
        except _Abandoned as exc:
            return refuse(str(exc))
        _note(progress, 0.9, "creating the indexes and constraints")
        if not finish(store, name, schemas, alone=True):
            raise StoreError(f"the bulk-imported release {name!r} does not have the counts it should; "
                             f"see {paths.home / 'logs' / 'bulk-import.log'}")
    return True, "the local database was empty"
