"""Results into Neo4j at bulk speed: the link graph (:mod:`graphlink.store.classgraph`), audit violations and
re-identification edges, written with the release in one go.

Two ways, one graph (the model of :mod:`graphlink.store.neo4j`; ``tests/store/test_store_writeback.py`` compares them
node by node and edge by edge, with each other and with plain per-row queries):

* **The bulk importer**, when the release is new to a local database that the importer may rebuild (the rule of
  :mod:`graphlink.store.bulk`, ``bulk='auto'`` from ``GRAPHLINK_BULK_MIN_ROWS`` rows *in all*: disclosures,
  classes, memberships, links, pairs): the release's CSV files (:func:`graphlink.store.bulk.write_files`) plus
  the results' (:func:`add_results`) go through one ``neo4j-admin database import``. A low-entropy release of
  150,000 subjects over 36 locations (1e6 disclosures, 3.8e6 class LINKs) and its audit take 16.6 s as a whole
  ``graphlink audit --store neo4j`` process on the idle two-core machine (the audit alone 1.5 s), where Cypher
  transactions create 1e4 to 4e4 relationships a second: the same results in UNWIND batches on three sessions,
  once the release is stored, take 170 s (``benchmarks/bench_neo4j_load.py --results``; docs/neo4j.md says
  where the import's time goes).
* **Parameterised UNWIND batches on a few concurrent sessions** otherwise (:class:`Batches`): a database that
  holds other data, a server that is not the project's local one, results of a release loaded before. Each batch
  is one managed transaction (retried on transient errors, deadlocks included); memberships are cut along the
  classes, and class LINKs go in rounds of lanes that reach disjoint classes at both ends
  (:func:`graphlink.store.classgraph.rounds`), so that concurrent transactions do not wait for each other's
  node locks; a batch that does not create exactly its rows fails (StoreError) instead of writing a partial
  graph unnoticed (:mod:`graphlink.store.batches`).

Idempotent and resumable as before: the release load is (``Store.load_release``), a link graph replaces the
release's previous one unless it is the same (same fingerprint, which the writers set after the last edge: it is
kept with its run; a write that was interrupted has none and is replaced by the next), and each audit or
re-identification run keeps its own Analysis node and edges. ``GRAPHLINK_NEO4J_WRITERS`` sets the number of
concurrent sessions (default 3: the server's transactions, not the client, are the limit on two cores).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlink.errors import StoreError
from graphlink.store.batches import Batches, run_id
from graphlink.store.reports import LoadReport, StoredResults

if TYPE_CHECKING:
    from graphlink.store.bulk import ImportFiles
    from graphlink.store.classgraph import Tables
    from graphlink.store.neo4j import Store

Progress = Callable[[float, str], None] | None
LABEL = {"identified": "Identified", "deidentified": "Deidentified"}
#: rows per UNWIND transaction of pairs and violators
PAIR_CHUNK = 20_000
#: the importer's header fields of the LINKs' pair probabilities (classgraph.PROBABILITY, typed)
PROBABILITY_HEADER = ["probability:double", "probability_exact:boolean", "probability_error:double"]


# ------------------------------------------------------------------------------------------ results as rows
@dataclass
class Analysis:
    """One Analysis node and the edges that hang off it, as rows both writers use."""

    kind: str
    method: str
    params: dict
    extra: dict
    run: str = field(default_factory=str)

    def properties(self, name: str) -> dict:
        return {"run": self.run, "release": name, "kind": self.kind, "method": self.method,
                "params": json.dumps(self.params, default=str, sort_keys=True)}


def audit_analysis(result: Any) -> tuple[Analysis, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """An ``audit.AuditResult`` as its Analysis and, per side, the violators' keys and union degrees."""
    k = int(result.k)
    viol = result.violations
    extra = {"k": k, "k_unlinkable": bool(result.k_unlinkable), "true_loves": int(result.true_loves),
             "maximum_matching_size": int(result.maximum_matching_size), "violations": len(viol)}
    sides = {}
    for kind in LABEL:
        part = viol[viol["side"] == kind]
        sides[kind] = (np.asarray([str(e) for e in part["element"]], dtype=object),
                       np.asarray(part["union_degree"], dtype=np.int64))
    return Analysis("audit", "k-unlinkability", {"k": k}, extra), sides


def reid_analysis(result: Any) -> tuple[Analysis, dict[str, np.ndarray]]:
    """A ``reidit.Reidentification`` as its Analysis and the pairs (``i``, ``d``, ``reason``, strings)."""
    pairs = result.pairs
    summary = result.summary.as_dict()          # graphlink.analysis.results.ReidentifySummary
    reasons = pairs["reason"] if "reason" in pairs.columns else [""] * len(pairs)
    rows = {"i": np.asarray([str(x) for x in pairs["identified"]], dtype=object),
            "d": np.asarray([str(x) for x in pairs["deidentified"]], dtype=object),
            "reason": np.asarray([str(x) for x in reasons], dtype=object)}
    return Analysis("reidentification", str(result.method), summary, {"pairs": len(pairs)}), rows


# ------------------------------------------------------------------------------------------ UNWIND writers
def write_audit(store: Store, name: str, result: Any) -> str:
    """The audit's Analysis node, then its VIOLATES edges in batches (one session: every batch locks the
    Analysis node). Returns the run id. O(violators) writes."""
    a, sides = audit_analysis(result)
    run = store.new_analysis(name, a.kind, a.method, a.params, a.extra)
    out = Batches(store.conn, workers=1)
    for kind, (keys, degrees) in sides.items():
        out.run(f"""MATCH (a:Analysis {{run: $run}})
                    UNWIND range(0, size($e) - 1) AS i
                    MATCH (x:{LABEL[kind]} {{release: $release, key: $e[i]}})
                      USING INDEX SEEK x:{LABEL[kind]}(release, key)
                    CREATE (a)-[:VIOLATES {{side: $side, union_degree: $u[i]}}]->(x)
                    RETURN count(*) AS n""",
                ({"run": run, "release": name, "side": kind, "e": keys[lo:lo + PAIR_CHUNK].tolist(),
                  "u": degrees[lo:lo + PAIR_CHUNK].tolist()} for lo in range(0, len(keys), PAIR_CHUNK)), rows="e")
    return run


def write_reidentification(store: Store, name: str, result: Any, progress: Progress = None) -> str:
    """The re-identification's Analysis node, then its REIDENTIFIED edges in concurrent batches. Returns the
    run id. O(pairs) writes."""
    a, rows = reid_analysis(result)
    run = store.new_analysis(name, a.kind, a.method, a.params, a.extra)
    out = Batches(store.conn, progress, total=len(rows["i"]), what="pairs")
    out.run("""UNWIND range(0, size($i) - 1) AS n
               MATCH (i:Identified {release: $release, key: $i[n]}) USING INDEX SEEK i:Identified(release, key)
               MATCH (d:Deidentified {release: $release, key: $d[n]}) USING INDEX SEEK d:Deidentified(release, key)
               CREATE (i)-[:REIDENTIFIED {method: $method, run: $run, reason: $reason[n]}]->(d)
               RETURN count(*) AS n""",
            ({"release": name, "run": run, "method": a.method, "i": rows["i"][lo:lo + PAIR_CHUNK].tolist(),
              "d": rows["d"][lo:lo + PAIR_CHUNK].tolist(), "reason": rows["reason"][lo:lo + PAIR_CHUNK].tolist()}
             for lo in range(0, len(rows["i"]), PAIR_CHUNK)), rows="i")
    return run


# ------------------------------------------------------------------------------------------ importer files
def _typed(key: str, value: Any) -> tuple[str, Any] | None:
    """A property as an importer header field and its value, typed as the driver would send it (None: not
    set, as ``SET a += {key: null}`` leaves it)."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return f"{key}:boolean", bool(value)
    if isinstance(value, int | np.integer):
        return f"{key}:long", int(value)
    if isinstance(value, float | np.floating):
        return f"{key}:double", float(value)
    if isinstance(value, str):
        return key, value
    raise StoreError(f"cannot bulk-write the analysis property {key}={value!r}")


def _element_ids(files: ImportFiles, kind: str, keys: np.ndarray) -> np.ndarray:
    index, base = files.ids[kind]
    pos = index.get_indexer(keys)
    if len(pos) and pos.min() < 0:
        raise StoreError(f"a result names {kind} element(s) the release does not have")
    return base + pos.astype(np.int64)


def _group(files: ImportFiles, stem: str, header: list[str], columns: list[Any], *, label: str | None = None,
           kind: str | None = None) -> None:
    from graphlink.store import bulk

    data = bulk._write_group(files, stem, header, columns)
    if label is not None:
        files.nodes.append((label, [f"{stem}.header.csv", data]))
    else:
        files.relationships.append((str(kind), [f"{stem}.header.csv", data]))


def _analysis_node(files: ImportFiles, name: str, a: Analysis, at: str) -> int:
    """The Analysis node (and its ON edge to the Release, node 0); returns its node id."""
    node = files.next_id
    files.next_id += 1
    fields = [_typed(k, v) for k, v in {**a.properties(name), **a.extra}.items()]
    fields = [f for f in fields if f is not None]
    header = [":ID", *[h for h, _ in fields], "at:datetime"]
    _group(files, f"Analysis-{a.kind}", header, [[node], *[[v] for _, v in fields], [at]], label="Analysis")
    _group(files, f"ON-{a.kind}", [":START_ID", ":END_ID"], [[node], [0]], kind="ON")
    return node


def add_results(files: ImportFiles, name: str, *, link: tuple[Tables, Analysis] | None = None,
                audit: tuple[Analysis, dict] | None = None, reid: tuple[Analysis, dict] | None = None) -> None:
    """Append the results' node and relationship groups to the release's importer files (after
    :func:`graphlink.store.bulk.write_files`, whose element ids they refer to). The same nodes, edges,
    properties and types as the UNWIND writers. O(rows of the results)."""
    from graphlink.store import bulk

    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if link is not None:
        t, a = link
        _analysis_node(files, name, a, at)
        base = {}
        for side in ("identified", "deidentified"):
            n = len(t.size[side])
            base[side] = files.next_id
            ids = files.next_id + np.arange(n, dtype=np.int64)
            files.next_id += n
            files.multiline = files.multiline or bulk._has_newline(t.trail[side])
            _group(files, f"TrailClass-{side}",
                   [":ID", "release", "side", "cid:long", "trail", "size:long", "null_degree:long", "run"],
                   [ids, bulk._constant(name, n), bulk._constant(side, n), np.arange(n, dtype=np.int64),
                    bulk._strings(t.trail[side]), t.size[side], t.null[side], bulk._constant(a.run, n)],
                   label="TrailClass")
            _group(files, f"IN_CLASS-{side}", [":START_ID", ":END_ID"],
                   [_element_ids(files, side, t.keys[side]), base[side] + t.cid[side]], kind="IN_CLASS")
        m = len(t.ci)
        # the pair probabilities, when written, as the UNWIND writer sets them (absent otherwise)
        p_head, p_cols = ([], []) if t.probability is None else (
            PROBABILITY_HEADER, [t.probability, t.probability_exact, t.probability_error])
        _group(files, "LINK-classes",
               [":START_ID", ":END_ID", "allowed:boolean", "vital:boolean", "flow:long", "run", *p_head],
               [base["identified"] + t.ci, base["deidentified"] + t.cj, t.allowed, t.vital, t.flow,
                bulk._constant(a.run, m), *p_cols], kind="LINK")
        if t.elements is not None:
            el = t.elements
            ep_head = PROBABILITY_HEADER if "probability" in el else []
            _group(files, "LINK-elements",
                   [":START_ID", ":END_ID", "allowed:boolean", "vital:boolean", "matched:boolean", "run", *ep_head],
                   [_element_ids(files, "identified", el["i"]), _element_ids(files, "deidentified", el["d"]),
                    el["allowed"], el["vital"], el["matched"], bulk._constant(a.run, len(el["i"])),
                    *[el[k] for k in ("probability", "probability_exact", "probability_error") if ep_head]],
                   kind="LINK")
    if audit is not None:
        a, sides = audit
        node = _analysis_node(files, name, a, at)
        for kind, (keys, degrees) in sides.items():
            _group(files, f"VIOLATES-{kind}", [":START_ID", ":END_ID", "side", "union_degree:long"],
                   [np.full(len(keys), node, np.int64), _element_ids(files, kind, keys),
                    bulk._constant(kind, len(keys)), degrees], kind="VIOLATES")
    if reid is not None:
        a, rows = reid
        _analysis_node(files, name, a, at)
        n = len(rows["i"])
        files.multiline = files.multiline or bulk._has_newline(rows["reason"])
        _group(files, "REIDENTIFIED", [":START_ID", ":END_ID", "method", "run", "reason"],
               [_element_ids(files, "identified", rows["i"]), _element_ids(files, "deidentified", rows["d"]),
                bulk._constant(a.method, n), bulk._constant(a.run, n), bulk._strings(rows["reason"])],
               kind="REIDENTIFIED")


# ------------------------------------------------------------------------------------------ the entry point
def write_results(store: Store, release: Any, name: str | None = None, *, classes: Any = None, audit: Any = None,
                  reidentification: Any = None, bulk: str = "auto", progress: Progress = None,
                  risk: Any = None) -> StoredResults:
    """Load ``release`` (if it is not stored yet) and write its results: the link graph of ``classes``
    (``matching.EdgeClasses`` / ``onetomany.ManyClasses``), an ``audit.AuditResult``, a
    ``reidit.Reidentification``; any of them may be None. ``risk``, the ``RiskResult`` of the same link graph
    (:func:`graphlink.analysis.risk.pair_probabilities`), puts ``probability``, ``probability_exact`` and
    ``probability_error`` on every LINK of it (:mod:`graphlink.store.classgraph`).

    A release new to a database the bulk importer may rebuild goes in with its results through one import (module
    docstring); otherwise the release is loaded as :meth:`Store.load_release` does and the results follow in
    concurrent UNWIND batches. Under the release's load lock throughout. ``progress(fraction, message)``.

    Returns
    -------
    StoredResults
        ``release``: the LoadReport; ``runs``: run id per written result (``link_graph``, ``audit``,
        ``reidentification``); ``method``: ``bulk-import`` or ``unwind``; ``why``: the reason; ``seconds``.

    Examples
    --------
    Needs a running server (the live tests cover these calls):

    >>> import graphlink as gl                                                  # doctest: +SKIP
    >>> from graphlink.store.writeback import write_results                    # doctest: +SKIP
    >>> rel = gl.thesis_example()                                              # doctest: +SKIP
    >>> with gl.connect() as store:                                            # doctest: +SKIP
    ...     write_results(store, rel, "fig34", reidentification=gl.reidentify(rel, "complete"))
    """
    import time

    from graphlink.store import bulk as bulk_import
    from graphlink.store import classgraph

    t0 = time.perf_counter()
    frame, truth, source, name, fp = store.prepare(release, name)
    table = classgraph.tables(classes, risk) if classes is not None else None
    link = (table, Analysis("link-graph", "link-graph", {"class_edges": table.analysis["class_edges"]},
                            {**table.analysis, "fingerprint": table.fingerprint()})) if table is not None else None
    aud = audit_analysis(audit) if audit is not None else None
    reid = reid_analysis(reidentification) if reidentification is not None else None
    with store.load_lock(name):
        done, existing = store.before_load(name, fp)
        if done is None and existing is None:
            for a in (link[1] if link else None, aud[0] if aud else None, reid[0] if reid else None):
                if a is not None:
                    a.run = run_id(a.kind)
            rows = (len(frame) + (table.rows if table is not None else 0)
                    + (sum(len(k) for k, _ in aud[1].values()) if aud else 0) + (len(reid[1]["i"]) if reid else 0))

            def write(folder: Any) -> Any:
                files = bulk_import.write_files(folder, frame, truth, name, source, fp)
                add_results(files, name, link=link, audit=aud, reid=reid)
                return files

            ok, why = bulk_import.load_files(store, write, rows, name, fp, mode=bulk, progress=progress)
            if ok:
                if table is not None:
                    classgraph.set_model(store, name, table.model)
                runs = {"link_graph": link[1].run if link else None, "audit": aud[0].run if aud else None,
                        "reidentification": reid[0].run if reid else None}
                seconds = time.perf_counter() - t0
                loaded = LoadReport.from_node(store.release_info(name), seconds=seconds, method=bulk_import.METHOD,
                                              why=why)
                return StoredResults(loaded, {k: v for k, v in runs.items() if v}, bulk_import.METHOD, why,
                                     round(seconds, 3))
        else:
            why = "the release is stored already" if done is not None else "the release is partly loaded already"
        info = store.load_release(release, name, progress, bulk="never")
        runs = {}
        if table is not None:
            runs["link_graph"] = classgraph.write(store, name, classes, progress, table=table)
        if audit is not None:
            runs["audit"] = write_audit(store, name, audit)
        if reidentification is not None:
            runs["reidentification"] = write_reidentification(store, name, reidentification, progress)
        return StoredResults(info, runs, "unwind", why, round(time.perf_counter() - t0, 3))
