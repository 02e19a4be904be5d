"""What the Cypher console may run: checks on the text before it is sent and on the server's plan of it.

The console (``graphlink cypher``, the app's Cypher page, ``Store.run_cypher``/``run_file``) takes analyst-written
Cypher. One code path (:meth:`graphlink.store.neo4j.Store.run_cypher`) runs it behind these locks; any one of them
refuses the query (docs/security.md, "The Cypher console"):

1. :func:`check`, on **Neo4j's own reading of the text**: the query is parsed by the parser the server uses,
   in a Java worker on the local Neo4j runtime's class path (``docker/local/CypherCheck.java``, :class:`ParserWorker`):
   the pre-parser (``CYPHER`` options, ``EXPLAIN``/``PROFILE``), then the ANTLR Cypher 5 parser with its own
   ``\\uXXXX`` handling, the same calls as the server's parsing phase. There is no second lexer here that could
   end a comment or a string where Neo4j does not. The worker answers with facts of the syntax tree
   (:class:`Facts`), and this module decides on them:

   * size limits (:data:`LIMITS`): the length, the size and depth of the syntax tree, nested subqueries; a
     parser that overflows its (bounded) stack or takes too long refuses the query too. Deep trees make Neo4j
     5.26 overflow its stack after parsing and never answer, deeply nested subqueries make its planner run for
     minutes without looking at the transaction timeout;
   * an **allowlist of invoked names**: every procedure call must name one of :data:`PROCEDURES`, every function
     invocation a built-in function or one of :data:`~graphlink.store.plugins.PLUGIN_FUNCTIONS` (pure APOC
     helpers); families that run text as Cypher or reach files and URLs (:data:`~graphlink.store.plugins.NEVER`)
     are refused whatever else says so;
   * an **allowlist of clauses** (:data:`CLAUSES`) and statement kinds: ``LOAD CSV``, ``USE``, ``SHOW`` other than
     the schema listings, ``TERMINATE``, administration commands and several statements are refused; schema
     commands and ``CALL {...} IN TRANSACTIONS`` only with ``--write``.

   Without the local runtime (``scripts/setup-neo4j.sh``) the console refuses every query with one line: it never
   falls back to a reading of its own.

2. :func:`check_plan`, on the server's own plan (``EXPLAIN``): every operator must be one of :data:`READ_OPERATORS`
   (plus :data:`WRITE_OPERATORS` with ``--write``) on the configured database, and every ``ProcedureCall`` one of
   :data:`PROCEDURES`. Whatever spelling reached the server, this is what it would execute: ``LoadCSV``,
   ``ShowSettings``, ``ShowTransactions``, ``TerminateTransactions``, ``AdministrationCommand@system`` (users,
   roles, databases), ``db.stats.*`` are not on the lists, in any mode.

3. The query then runs in a session of the matching access mode (READ unless ``--write``), which the server
   enforces for writes, under a transaction timeout, and the client gives up when the server has not answered
   shortly after it (``Store.run_cypher``).

Neo4j Community has no role-based access control (``CREATE ROLE``/``GRANT`` are Enterprise features), so the console
cannot run as a less privileged database user: these locks are what keeps it to reading the graph.
Cost: one JVM start and a cold parse (seconds: docs/security.md, "What it costs") for the first :func:`check` of a
process, then O(length of the query) in the worker (milliseconds for a short query); O(plan operators) for
:func:`check_plan`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import select
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from graphlink.errors import StoreError
from graphlink.store.plugins import NEVER as NEVER  # re-exported: the console's rules in one place
from graphlink.store.plugins import PLUGIN_FUNCTIONS, never_allowed

#: what runs a write the console refused in read-only mode (the CLI and the app say it with their own controls)
READ_ONLY_REMEDY = "allow writes (write=True) to run it"


class QueryRefusedError(StoreError):
    """The console refused a query before running it (exit 2). ``reason`` is the rule that refused it; a write
    refused in read-only mode (``read_only``) carries a ``store-read-only`` diagnostic."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None, *,
                 read_only: bool = False) -> None:
        from graphlink.diagnostics import Diagnostic

        where = f" (line {line}, column {column})" if line is not None else ""
        self.reason = f"{reason}; {READ_ONLY_REMEDY}" if read_only else reason
        diagnostic = Diagnostic("store-read-only", f"refused{where}: {reason}", {"line": line, "column": column},
                                remedy=READ_ONLY_REMEDY) if read_only else None
        super().__init__(f"refused{where}: {self.reason}", diagnostic=diagnostic)


# ---------------------------------------------------------------------------------------------- allowlists
#: procedures a console query may CALL, in either mode: the schema listings and the index queries (all READ mode
#: in Neo4j 5.26). Everything else is refused: ``db.stats.*`` (other sessions' query texts), ``db.clearQueryCaches``,
#: every ``dbms.*``, every plugin procedure.
PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys",
    "db.schema.visualization", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
    "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes", "db.index.vector.queryRelationships",
})
_PROCEDURES_LOWER = {p.lower(): p for p in PROCEDURES}
#: built-in functions that have a namespace (Neo4j 5.26, ``SHOW FUNCTIONS``; a live test keeps this list honest).
#: Functions without a namespace are always built-in: Neo4j refuses to register a plugin function in the root
#: namespace.
BUILTIN_FUNCTIONS = frozenset({
    "date.realtime", "date.statement", "date.transaction", "date.truncate",
    "datetime.fromepoch", "datetime.fromepochmillis", "datetime.realtime", "datetime.statement",
    "datetime.transaction", "datetime.truncate",
    "duration.between", "duration.indays", "duration.inmonths", "duration.inseconds",
    "localdatetime.realtime", "localdatetime.statement", "localdatetime.transaction", "localdatetime.truncate",
    "localtime.realtime", "localtime.statement", "localtime.transaction", "localtime.truncate",
    "time.realtime", "time.statement", "time.transaction", "time.truncate",
    "point.distance", "point.withinbbox",
    "vector.similarity.cosine", "vector.similarity.euclidean",
})
#: plan operators a read-only console query may use (Neo4j 5.26 names, without the ``@database`` suffix)
READ_OPERATORS = frozenset({
    "ProduceResults", "EmptyResult", "Argument", "ArgumentTracker", "EmptyRow",
    "AllNodesScan", "NodeByLabelScan", "NodeByIdSeek", "NodeByElementIdSeek", "NodeIndexScan",
    "NodeIndexContainsScan", "NodeIndexEndsWithScan", "MultiNodeIndexSeek", "AssertingMultiNodeIndexSeek",
    "AssertingMultiRelationshipIndexSeek", "MultiNodeIndexSeek(Locking)", "AssertingMultiNodeIndexSeek(Locking)",
    "IntersectionNodeByLabelsScan", "SubtractionNodeByLabelsScan",
    "UnionNodeByLabelsScan", "NodeCountFromCountStore", "RelationshipCountFromCountStore",
    "Apply", "SemiApply", "AntiSemiApply", "LetSemiApply", "LetAntiSemiApply", "SelectOrSemiApply",
    "SelectOrAntiSemiApply", "LetSelectOrSemiApply", "LetSelectOrAntiSemiApply", "ConditionalApply",
    "AntiConditionalApply", "RollUpApply", "Anti", "Optional", "CartesianProduct", "NodeHashJoin",
    "ValueHashJoin", "NodeLeftOuterHashJoin", "NodeRightOuterHashJoin", "TriadicSelection", "TriadicBuild",
    "TriadicFilter", "ProjectEndpoints", "ShortestPath", "Repeat(Trail)", "Repeat(Walk)",
    "BidirectionalRepeat(Trail)", "NullifyMetadata", "PathPropagatingBFS",
    "Filter", "Projection", "CacheProperties", "Limit", "ExhaustiveLimit", "Skip", "Sort", "PartialSort", "Top",
    "PartialTop", "Distinct", "OrderedDistinct", "EagerAggregation", "OrderedAggregation", "Eager", "Union",
    "OrderedUnion", "Unwind", "AssertSameNode", "AssertSameRelationship", "PreserveOrder",
    "ProcedureCall", "ShowIndexes", "ShowConstraints", "ShowProcedures", "ShowFunctions",
})
#: operator families whose names carry a mode: index seeks, relationship scans and seeks, expands, shortest paths
_READ_OPERATOR_FAMILIES = re.compile(
    r"(Node|(Directed|Undirected)Relationship)(Unique)?IndexSeek(ByRange)?(\(Locking\))?"
    r"|(Directed|Undirected)(RelationshipIndex(Scan|ContainsScan|EndsWithScan)|RelationshipTypeScan"
    r"|UnionRelationshipTypesScan|AllRelationshipsScan|RelationshipBy(Id|ElementId)Seek)"
    r"|(Optional)?Expand\((All|Into)\)|(BFSPruning)?VarLengthExpand\((All|Into|Pruning)\)"
    r"|StatefulShortestPath\((All|Into)\)")
#: operators ``--write`` adds: data changes, schema (indexes, constraints) and CALL {...} IN TRANSACTIONS
WRITE_OPERATORS = frozenset({
    "Create", "Merge", "LockingMerge", "Delete", "DetachDelete", "SetLabels", "RemoveLabels", "SetProperty",
    "SetProperties", "SetPropertiesFromMap", "SetNodePropertiesFromMap", "SetRelationshipPropertiesFromMap",
    "SetNodeProperty", "SetRelationshipProperty", "SetNodeProperties", "SetRelationshipProperties",
    "SetDynamicProperty", "Foreach", "SubqueryForeach", "TransactionApply", "TransactionForeach",
    "CreateIndex", "CreateConstraint", "DropIndex", "DropConstraint", "DoNothingIfExists(INDEX)",
    "DoNothingIfExists(CONSTRAINT)",
})


@dataclass(frozen=True)
class Limits:
    """Bounds on a console query (see the module doc; the figures are in docs/security.md), measured on Neo4j's own
    syntax tree of it (:class:`Facts`).

    ``chars``: its length; ``nodes``: the nodes of its syntax tree; ``depth``: the longest path from the
    statement down to a leaf of that tree (expressions inside each other: brackets that build something, ``CASE``,
    ``NOT``, signs, ``.key`` and ``[i]`` accesses, each term of a sum); ``subqueries``: ``CALL``, ``EXISTS``,
    ``COUNT``, ``COLLECT`` subqueries inside each other; ``seconds``: how long the parser may take.
    """

    chars: int = 64_000
    nodes: int = 20_000
    depth: int = 100
    subqueries: int = 4
    seconds: float = 20.0


LIMITS = Limits()

#: clauses a console query may hold (Neo4j 5.26's class names): reading, writing (the plan check and the READ
#: session refuse writes in read-only mode), subqueries, and the four schema listings. Every other clause is
#: refused: ``LoadCSV``, ``UseGraph``, ``ShowSettingsClause``, ``ShowTransactionsClause``,
#: ``TerminateTransactionsClause``, ``ShowServers``-like commands, and any clause a later Neo4j adds.
CLAUSES = frozenset({
    "Match", "With", "Return", "Unwind", "Yield", "UnresolvedCall", "SubqueryCall", "ImportingWithSubqueryCall",
    "ScopeClauseSubqueryCall", "Create", "Merge", "SetClause", "Remove", "Delete", "Foreach", "Finish",
    "ShowIndexesClause", "ShowConstraintsClause", "ShowProceduresClause", "ShowFunctionsClause",
})
_WRITE_CLAUSES = frozenset({"Create", "Merge", "SetClause", "Remove", "Delete", "Foreach"})
# ---------------------------------------------------------------------------------------------- Neo4j's parser
@dataclass(frozen=True)
class Facts:
    """What Neo4j's parser read in a query (``docker/local/CypherCheck.java``).

    ``error``: None, ``"syntax"`` (``message`` is the parser's), ``"overflow"`` (its stack ran out) or another
    failure; ``statements``: how many; ``kind``: ``query``, ``schema``, ``administration`` or ``other``;
    ``statement``: the class of the statement; ``clauses``: classes of its clauses; ``functions`` and
    ``procedures``: (full name, ``line:column``) of every invocation; ``ranges``: every ``range()`` call as
    (``line:column``, ``unwind`` or ``expression``, each argument's integer literal or ``?``);
    ``in_transactions``: a ``CALL {...} IN TRANSACTIONS``; ``nodes``, ``depth``, ``subqueries``: the size measures
    of :class:`Limits`; ``opaque``: tree nodes whose children the worker could not list (refused).
    """

    error: str | None = None
    message: str = ""
    version: str = "default"
    statements: int = 1
    kind: str = ""
    statement: str = ""
    clauses: tuple[tuple[str, str], ...] = ()
    functions: tuple[tuple[str, str], ...] = ()
    procedures: tuple[tuple[str, str], ...] = ()
    ranges: tuple[tuple[str, ...], ...] = ()
    in_transactions: bool = False
    nodes: int = 0
    depth: int = 0
    subqueries: int = 0
    opaque: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        """The statement changes data or the schema (a write clause, a schema command)."""
        return self.kind == "schema" or any(name in _WRITE_CLAUSES for name, _ in self.clauses)


class ParserWorker:
    """One JVM running ``CypherCheck`` on the local Neo4j runtime's class path, started on first use and kept.

    Requests are serialised (a lock). Each query gets :attr:`Limits.seconds`; a worker that does not answer in
    time is killed and the next request starts a new one. The JVM's heap and the parser thread's stack are
    bounded. O(length of the query) per request after a start of a few seconds.
    """

    #: stack of the parser's thread: half the JVM's default of 1 MiB, the stack of the server's threads, so a
    #: query that parses here parses on the server
    STACK = 512 * 1024

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    def command(self) -> list[str]:
        """The worker's command line; refuses (one line) when Java or the runtime is missing."""
        from graphlink.store import server

        runtime = server.Paths.default().runtime
        java = server.find_java()
        if not (runtime / "classes" / "CypherCheck.class").is_file() or not (runtime / "lib").is_dir():
            raise QueryRefusedError("the console reads queries with Neo4j's own parser, which is not installed: run "
                                    "bash scripts/setup-neo4j.sh (or scripts/bootstrap.sh)")
        if java is None:
            raise QueryRefusedError("the console reads queries with Neo4j's own parser, which needs Java 17 "
                                    "(install openjdk-17-jre-headless)")
        classpath = os.pathsep.join([str(runtime / "classes"), str(runtime / "lib" / "*")])
        return [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                f"-Dgraphlink.parseStack={self.STACK}", "-cp", classpath, "CypherCheck"]

    def read(self, query: str, seconds: float) -> dict:
        """The worker's answer for ``query`` as a dict; ``{"error": "timeout"}`` when it took longer than
        ``seconds``."""
        body = query.encode("utf-8")
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None
            try:
                proc.stdin.write(b"%d\n" % len(body) + body)
                proc.stdin.flush()
                line = self._line(seconds)
            except (OSError, ValueError):
                line = None
            if line is None:
                self.close()
                return {"error": "timeout"}
            return json.loads(line)

    def _start(self) -> None:
        self.close()
        self._proc = subprocess.Popen(self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        self._buffer = b""
        if self._line(120.0) is None:
            self.close()
            raise QueryRefusedError("Neo4j's parser (the console's Java worker) did not start; see "
                                    "bash scripts/setup-neo4j.sh")

    def _line(self, seconds: float) -> bytes | None:
        """The next line of the worker's output, or None at its end or after ``seconds``."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """Stop the worker (it also stops by itself when this process's end closes its stdin)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()


WORKER = ParserWorker()
atexit.register(WORKER.close)


def read(query: str, *, limits: Limits = LIMITS) -> Facts:
    """Neo4j's reading of ``query`` (:class:`Facts`), by its own parser in :data:`WORKER`. Refuses text that is
    not valid Unicode (Bolt could not send it either)."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryRefusedError(f"the query holds a character that is not text (position {exc.start + 1})") from None
    raw = WORKER.read(query, limits.seconds)
    return Facts(error=raw.get("error"), message=str(raw.get("message", "")), version=raw.get("version", "default"),
                 statements=int(raw.get("statements", 1)), kind=raw.get("kind", ""),
                 statement=raw.get("statement", ""), clauses=tuple((n, w) for n, w in raw.get("clauses", ())),
                 functions=tuple((n, w) for n, w in raw.get("functions", ())),
                 procedures=tuple((n, w) for n, w in raw.get("procedures", ())),
                 ranges=tuple(tuple(map(str, r)) for r in raw.get("ranges", ())),
                 in_transactions=bool(raw.get("in_transactions")), nodes=int(raw.get("nodes", 0)),
                 depth=int(raw.get("depth", 0)), subqueries=int(raw.get("subqueries", 0)),
                 opaque=tuple(raw.get("opaque", ())))


# ---------------------------------------------------------------------------------------------- the static check
def _words(class_name: str) -> str:
    """``ShowSettingsClause`` -> ``SHOW SETTINGS``: a Neo4j class name as the command's words."""
    name = re.sub(r"(Clause|Command)$", "", class_name)
    return " ".join(re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)).upper()


def _at(where: str) -> tuple[int, int]:
    """(line, column) of the worker's ``line:column``."""
    line, _, column = where.partition(":")
    return int(line), int(column)


def _syntax(message: str) -> QueryRefusedError:
    """Neo4j's syntax error as one line, at its position."""
    m = re.search(r"\(line (\d+), column (\d+)", message)
    first = message.splitlines()[0] if message else "the query cannot be parsed"
    first = re.sub(r"\s*\(line \d+, column \d+ \(offset: \d+\)\)", "", first).strip()
    line, column = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    return QueryRefusedError(f"Neo4j cannot parse it: {first[:300]}", line, column)


def check(query: str, *, write: bool = False, limits: Limits = LIMITS) -> None:
    """Refuse (raise :class:`QueryRefusedError`, one line) what the console must never run; see the module doc.

    ``query`` is read by Neo4j's own parser (:func:`read`), exactly as the server will read it: its escapes,
    comments, strings and line breaks are the server's. ``write=False`` adds the read-only rules. Passing this
    check is necessary, not sufficient: the caller still plans the query with ``EXPLAIN`` (:func:`check_plan`)
    and runs it in a session of the matching access mode. O(len(query)) in the worker.
    """
    if len(query) > limits.chars:
        raise QueryRefusedError(f"the query has {len(query):,} characters (the console's limit is "
                                f"{limits.chars:,}); split the query or simplify it")
    facts = read(query, limits=limits)
    too_big = "split the query or simplify it"
    if facts.error == "syntax":
        raise _syntax(facts.message)
    if facts.error in ("overflow", "timeout", "memory"):
        raise QueryRefusedError(f"the query is nested too deeply or is too large for Neo4j's parser ({facts.error}); "
                                + too_big)
    if facts.error is not None:
        raise QueryRefusedError(f"Neo4j's parser failed on the query ({facts.message[:200] or facts.error})")
    if facts.statements != 1:
        raise QueryRefusedError("one statement at a time: put each statement on lines of its own, ending in ';'")
    if facts.version not in ("default", "5"):
        raise QueryRefusedError(f"the console runs Cypher 5 only, not CYPHER {facts.version}")
    if facts.opaque:
        raise QueryRefusedError(f"the console cannot inspect {', '.join(facts.opaque)} in this query")
    if facts.kind == "administration" or facts.kind not in ("query", "schema"):
        raise QueryRefusedError(f"{_words(facts.statement)} is an administration command; the console does not "
                                "administer the server")
    if facts.kind == "schema" and not write:
        raise QueryRefusedError(f"schema commands ({_words(facts.statement)}) change the schema in read-only mode",
                                read_only=True)
    for measure, limit, what in ((facts.nodes, limits.nodes, "has more than {limit:,} parts"),
                                 (facts.depth, limits.depth, "is nested more than {limit} deep"),
                                 (facts.subqueries, limits.subqueries, "has subqueries nested more than {limit} deep")):
        if measure > limit:
            raise QueryRefusedError(f"the query {what.format(limit=limit)} (the console's limit); {too_big}")
    for clause, where in sorted(facts.clauses, key=lambda c: _at(c[1])):
        if clause in CLAUSES:
            continue
        if clause == "LoadCSV":
            raise QueryRefusedError("LOAD CSV reads files and URLs on the server; load releases with "
                                    "`graphlink load`", *_at(where))
        if clause == "UseGraph":
            raise QueryRefusedError("USE switches database; the console runs on the configured database "
                                    "(quote a variable named `use` in backticks)", *_at(where))
        raise QueryRefusedError(f"{_words(clause)} is an administration command (the console lists only indexes, "
                                "constraints, procedures and functions)", *_at(where))
    if facts.in_transactions and not write:
        raise QueryRefusedError("CALL {...} IN TRANSACTIONS commits batches on its own; it is refused in "
                                "read-only mode")
    for name, where in facts.procedures:
        if name.lower() not in _PROCEDURES_LOWER or never_allowed(name):
            raise QueryRefusedError(f"procedure {name} is not one the console runs (it runs only "
                                    f"{', '.join(sorted(PROCEDURES))})", *_at(where))
    for name, where in facts.functions:
        if not function_allowed(name):
            raise QueryRefusedError(f"function {name} is not one the console runs (built-in functions and "
                                    f"{', '.join(p + '*' for p in PLUGIN_FUNCTIONS[:3])}, ... only)", *_at(where))
    _check_ranges(facts)


def function_allowed(name: str) -> bool:
    """A built-in function (no namespace, or one of :data:`BUILTIN_FUNCTIONS`) or a pure plugin helper of
    :data:`PLUGIN_FUNCTIONS`, and never one of :data:`NEVER`."""
    low = ".".join(p.strip() for p in name.lower().split("."))
    if never_allowed(low):
        return False
    return "." not in low or low in BUILTIN_FUNCTIONS or low.startswith(PLUGIN_FUNCTIONS)




#: most values all ``range()`` calls outside ``UNWIND`` may give together (their product: they may nest)
RANGE_VALUES_MAX = 100_000
_INTEGER = re.compile(r"-?[0-9]+")


def _check_ranges(facts: Facts) -> None:
    """Refuse ``range()`` inside an expression unless its bounds are whole-number literals and all such ranges
    together (their product, since they may nest) give at most :data:`RANGE_VALUES_MAX` values.

    Why: Neo4j 5.26 looks at the transaction timeout and the memory limits between rows, never while it evaluates
    one expression. ``reduce(s = 0, x IN range(1, 3000000000) | s + x)`` kept a server core busy long after its
    time limit, and ``[x IN range(1, 100000000) | x]`` filled the heap untracked until the server stopped
    answering. ``UNWIND range(...)`` makes rows, where both limits apply, so it is left alone. The calls, their
    arguments and whether each is an ``UNWIND``'s expression come from Neo4j's parser (:class:`Facts`).
    O(range calls)."""
    why = ("range() inside an expression is evaluated without the time and memory limits (Neo4j checks them "
           "between rows); use UNWIND range(...) to make rows, or give it whole-number literal bounds")
    product = 1
    for where, use, *args in facts.ranges:
        if use == "unwind":
            continue
        if len(args) not in (2, 3) or any(not re.fullmatch(r"-?\d+", a) for a in args) or (
                len(args) == 3 and int(args[2]) == 0):
            raise QueryRefusedError(why, *_at(where))
        first, last = int(args[0]), int(args[1])
        step = int(args[2]) if len(args) == 3 else 1
        product *= max(0, (last - first) // step + 1)
        if product > RANGE_VALUES_MAX:
            raise QueryRefusedError(f"{why} spanning at most {RANGE_VALUES_MAX:,} values in all (this query's ranges "
                                    f"give {product:,})", *_at(where))


# ---------------------------------------------------------------------------------------------- the plan check
def operators(plan: dict | None) -> Iterator[tuple[str, str, str | None]]:
    """Every operator of a plan as the Python driver returns it (``summary.plan``): (name, database, details).
    Iterative, so a deep plan does not exhaust Python's recursion limit."""
    stack = [plan] if plan else []
    while stack:
        node = stack.pop()
        name, _, database = str(node.get("operatorType", "")).partition("@")
        details = (node.get("args") or node.get("arguments") or {}).get("Details")
        yield name, database, None if details is None else str(details)
        stack.extend(node.get("children") or [])


def _operator_allowed(name: str, write: bool) -> bool:
    return (name in READ_OPERATORS or _READ_OPERATOR_FAMILIES.fullmatch(name) is not None
            or (write and name in WRITE_OPERATORS))


def check_plan(plan: dict | None, *, write: bool, database: str) -> None:
    """Refuse a query whose ``EXPLAIN`` plan uses an operator outside the allowlists or runs on another database.

    ``plan`` is ``ResultSummary.plan`` of ``EXPLAIN <query>``. Every operator must be one of
    :data:`READ_OPERATORS` (or of their families: index seeks, expands, ...), or of :data:`WRITE_OPERATORS` when
    ``write``; every operator must run on ``database``; every ``ProcedureCall`` must call one of
    :data:`PROCEDURES` (its name is the start of the operator's details, as the server prints it).
    O(operators).
    """
    if not plan:
        raise QueryRefusedError("the server gave no plan for this query, so the console does not run it")
    for name, db, details in operators(plan):
        if db != database:
            raise QueryRefusedError(f"the server's plan runs {name} on database {db or '?'!r}; the console runs "
                                    f"only on {database!r}")
        if not _operator_allowed(name, write):
            what = "with writes allowed either" if name not in WRITE_OPERATORS and write else (
                "in read-only mode" if name in WRITE_OPERATORS else "in any mode")
            raise QueryRefusedError(f"the server's plan uses {name}, which the console does not run {what}",
                                    read_only=name in WRITE_OPERATORS and not write)
        if name == "ProcedureCall":
            called = (details or "").split("(", 1)[0].strip()
            if called.lower() not in _PROCEDURES_LOWER:
                raise QueryRefusedError(f"the server's plan calls procedure {called or '?'}, which the console "
                                        f"does not run (it runs only {', '.join(sorted(PROCEDURES))})")
