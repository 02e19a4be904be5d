"""Bulk import without a server: the importer's CSV input and the transaction-log comparison.

The end-to-end checks (the imported graph equals the UNWIND one) are in ``tests/store/test_store_bulk.py``; these
pin what can be checked offline, quickly.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd

from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import bulk


def _read(folder, names: list[str]) -> list[dict]:
    """A header file + data files read back the way the importer reads them (RFC 4180, `"` doubled)."""
    header = (folder / names[0]).read_text(encoding="utf-8").rstrip("\n").split(",")
    rows = []
    for name in names[1:]:
        with (folder / name).open(encoding="utf-8", newline="") as fh:
            rows += [dict(zip(header, row, strict=True)) for row in csv.reader(fh)]
    return rows


def test_files_hold_the_graph_load_cypher_builds(tmp_path):
    rel = simulate_uniform(50, 4, 0.5, withhold=0.2, seed=3)
    frame = rel.frame.astype(str).drop_duplicates(ignore_index=True)
    frame.loc[frame["element"] == frame["element"].iloc[0], "element"] = 'odd, "quoted"\nkey'
    truth = rel.truth.astype(str)
    files = bulk.write_files(tmp_path, frame, truth, "r,1", None, "f" * 64)
    assert files.multiline  # a key holds a newline: the importer must be told
    nodes = {label: _read(tmp_path, names) for label, names in files.nodes}
    rels = {kind: _read(tmp_path, names) for kind, names in files.relationships}

    (release,) = nodes["Release"]
    assert release["name"] == "r,1" and release["status"] == "loading" and release["load_method"] == "bulk-import"
    assert release["source"] == ""  # no source: an empty unquoted field, which the importer leaves unset
    locations = list(dict.fromkeys(frame["location"]))
    assert [r["name"] for r in nodes["Location"]] == locations
    assert [int(r["index:long"]) for r in nodes["Location"]] == list(range(len(locations)))
    sizes = frame.groupby(["location", "kind"]).size()
    for r in nodes["Location"]:
        assert int(r["identified:long"]) == sizes.get((r["name"], "identified"), 0)
        assert int(r["deidentified:long"]) == sizes.get((r["name"], "deidentified"), 0)
    for label, kind in (("Identified", "identified"), ("Deidentified", "deidentified")):
        assert sorted(r["key"] for r in nodes[label]) == sorted(frame.loc[frame["kind"] == kind, "element"].unique())
        assert {r["release"] for r in nodes[label]} == {"r,1"}
    assert int(release["rows:long"]) == len(frame) == len(rels["DISCLOSED_AT"])

    # every relationship joins the right nodes: map the integer ids back to keys and compare with the frame
    ids = {r[":ID"]: (label, r.get("key") or r.get("name") or r.get("id"))
           for label, rows in nodes.items() for r in rows}
    assert len(ids) == sum(len(rows) for rows in nodes.values())  # one id space, no clash
    got = {(ids[r[":START_ID"]][1], ids[r[":START_ID"]][0].lower(), ids[r[":END_ID"]][1])
           for r in rels["DISCLOSED_AT"]}
    assert got == set(zip(frame["element"], frame["kind"], frame["location"], strict=True))
    assert {ids[r[":END_ID"]][1] for r in rels["HAS_LOCATION"]} == set(locations)
    entity_ids = (truth["identified"] + "|" + truth["deidentified"]).unique()
    assert sorted(r["id"] for r in nodes["Entity"]) == sorted(entity_ids)
    appears = {(ids[r[":START_ID"]][1], ids[r[":END_ID"]][1]) for r in rels["APPEARS_AS"]}
    present = set(frame["element"])
    expected = {(f"{i}|{d}", k) for i, d in zip(truth["identified"], truth["deidentified"], strict=True)
                for k in (i, d) if k in present}
    assert appears == expected


def test_reserved_direction_follows_finalize(tmp_path):
    frame = pd.DataFrame({"location": ["a", "a", "a", "b", "b"],
                          "kind": ["identified", "identified", "deidentified", "identified", "deidentified"],
                          "element": ["i1", "i2", "d1", "i1", "d1"]})
    files = bulk.write_files(tmp_path, frame, None, "r", "src.csv", "0" * 64)
    assert files.summary["reserved"] == "deidentified" and not files.multiline
    assert files.summary["entities"] == 0 and "Entity" not in dict(files.nodes)
    flipped = frame.assign(kind=np.where(frame["kind"] == "identified", "deidentified", "identified"))
    assert bulk.write_files(tmp_path, flipped, None, "r", None, "0" * 64).summary["reserved"] == "identified"


def test_written_since_ignores_pruning_but_not_commits():
    before = {"neostore.transaction.db.3": (100, 1), "neostore.transaction.db.4": (50, 2)}
    assert not bulk.written_since(before, dict(before))
    pruned = {"neostore.transaction.db.4": (50, 2)}  # a checkpoint deleted the older file
    assert not bulk.written_since(before, pruned)
    assert bulk.written_since(before, {**before, "neostore.transaction.db.4": (80, 3)})  # appended
    assert bulk.written_since(before, {**pruned, "neostore.transaction.db.5": (10, 4)})  # rotated
    assert bulk.written_since(before, {"neostore.transaction.db.3": (100, 1), "neostore.transaction.db.4": (50, 9)})


def test_node_ids_are_record_ids_in_file_order(tmp_path):
    """``--id-type=actual`` makes each node's input id its record id, so the release's and the results' node files,
    read in the order the importer is given them, must number their nodes 0, 1, 2, ... without a gap or a
    repeat; and every relationship must end on one of those ids."""
    from graphlink.analysis.reidit import LocalParts, reidentify
    from graphlink.core.trails import build_trails
    from graphlink.store import classgraph, writeback

    rel = simulate_uniform(300, 6, 0.4, withhold=0.3, seed=11)
    frame = rel.frame.astype(str).drop_duplicates(ignore_index=True)
    trails = build_trails(rel, multiplicity="one-to-one")
    result, classes = LocalParts(trails).audit(2)
    table = classgraph.tables(classes)
    link = (table, writeback.Analysis("link-graph", "link-graph", {}, table.analysis, run="link-graph-x"))
    audit = writeback.audit_analysis(result)
    audit[0].run = "audit-x"
    reid = writeback.reid_analysis(reidentify(rel, "complete"))
    reid[0].run = "reidentification-x"
    files = bulk.write_files(tmp_path, frame, rel.truth.astype(str), "r", None, "f" * 64)
    writeback.add_results(files, "r", link=link, audit=audit, reid=reid)

    assert files.id_type == "actual"
    assert f"--id-type={files.id_type}" in bulk.importer_options(files)
    ids = [int(r[":ID"]) for _, names in files.nodes for r in _read(tmp_path, names)]
    assert ids == list(range(files.next_id))
    labels = [label for label, _ in files.nodes]
    assert labels[:2] == ["Release", "Location"] and {"TrailClass", "Analysis", "Entity"} <= set(labels)
    ends = {int(r[key]) for _, names in files.relationships for r in _read(tmp_path, names)
            for key in (":START_ID", ":END_ID")}
    assert ends <= set(ids) and len(ends) > len(frame["location"].unique())
