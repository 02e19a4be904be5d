"""The store's facade returns frozen reports (graphlink/store/reports.py), not dictionaries: typed fields read from
the Release node, nothing changeable afterwards, and ``as_dict()`` giving the dictionary the store returned before.
No server needed (the live loads are in tests/store/test_store.py and tests/store/test_store_bulk.py)."""

from __future__ import annotations

import dataclasses

import pytest

from graphlink.store.reports import LoadReport, StoredResults

NODE = {"name": "fig34", "status": "loaded", "rows": 24, "locations": 4, "identified": 6, "deidentified": 6,
        "reserved": "none", "entities": 0, "fingerprint": "ab" * 32, "source": "fig34.csv", "load_method": "unwind",
        "loaded_at": "2026-01-01T00:00:00Z"}


def test_a_load_report_has_the_release_node_figures_as_typed_fields() -> None:
    r = LoadReport.from_node(NODE, seconds=1.23456, method="unwind", why="small", seconds_finalize=0.1)
    assert (r.name, r.rows, r.locations, r.identified, r.deidentified, r.reserved, r.status) == \
        ("fig34", 24, 4, 6, 6, "none", "loaded")
    assert r.seconds == 1.235 and not r.skipped and r.method == "unwind" and r.why == "small"
    assert r.as_dict() == {**NODE, "seconds": 1.235, "skipped": False, "method": "unwind", "why": "small",
                           "seconds_finalize": 0.1}


def test_a_skipped_load_says_so_and_names_no_method() -> None:
    r = LoadReport.from_node(NODE, skipped=True).timed(0.0123)
    assert r.skipped and r.method is None and r.seconds == 0.012
    assert r.as_dict() == {**NODE, "seconds": 0.012, "skipped": True}


def test_reports_cannot_be_changed() -> None:
    r = LoadReport.from_node(NODE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.rows = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.properties["rows"] = 0  # type: ignore[index]
    runs = {"audit": "audit-1"}
    s = StoredResults(r, runs, "unwind", "small", 2.0)
    runs["audit"] = "changed"                      # the caller's dictionary is not the report's
    assert s.runs == {"audit": "audit-1"}
    with pytest.raises(TypeError):
        s.runs["audit"] = "x"  # type: ignore[index]
    assert s.as_dict() == {"release": r.as_dict(), "runs": {"audit": "audit-1"}, "method": "unwind", "why": "small",
                           "seconds": 2.0}
