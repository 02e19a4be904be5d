"""The release report (graphlink.report, graphlink.io.report_html, ``graphlink report``; docs/report.md).

Numbers are checked against the library's own analyses (audit, classification) and, for the exposure per
location, against a brute-force oracle that rebuilds every reduced release from its rows and enumerates every
maximum matching (tests/oracle.py, tests/unlink_oracle.py).  The HTML is parsed: no external URL, values from
the data escaped, every section present.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.analysis.audit import audit
from graphlink.analysis.matching import classify_edges
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.io.report_html import render_html
from graphlink.report import build_report
from tests import unlink_oracle
from tests.cli_runner import run_cli
from tests.fixtures import fig34
from tests.oracle import all_maximum_matchings

SECTIONS = ("summary", "risk", "exposure", "uniqueness", "protection", "reproduce")


def oracle_certain(frame: pd.DataFrame) -> int:
    """Certain pairs (in every maximum matching) of a one-to-one, de-identified-reserved release, from its rows:
    FillTrails by hand (unlink_oracle.trails), null trails materialised, every maximum matching enumerated."""
    M, mt, nt, z = unlink_oracle.trails(frame)
    N = list(nt)
    edges = [(i, j) for i, m in enumerate(M) for j, n in enumerate(N)
             if all(v is None or v == mt[m][c] for c, v in enumerate(nt[n]))]
    edges += [(i, len(N) + t) for i in range(len(M)) for t in range(z)]
    mms = all_maximum_matchings(len(M), len(N) + z, edges)
    common = set.intersection(*map(set, mms)) if mms else set()
    return sum(1 for (_, j) in common if j < len(N))


def without(frame: pd.DataFrame, location: str) -> pd.DataFrame:
    return frame[~((frame["location"] == location) & (frame["kind"] == "deidentified"))]


@st.composite
def releases(draw, withhold: bool = True) -> pd.DataFrame:
    """One-to-one releases where locations withhold de-identified records: each person visits some locations
    and their record is disclosed at a subset of them (at all of them with ``withhold=False``)."""
    n = draw(st.integers(1, 5))
    n_loc = draw(st.integers(1, 3))
    rows = []
    for i in range(n):
        visits = draw(st.lists(st.integers(0, n_loc - 1), min_size=1, max_size=n_loc, unique=True))
        shown = draw(st.lists(st.sampled_from(visits), max_size=len(visits), unique=True)) if withhold else visits
        rows += [(f"L{c}", "identified", f"p{i}") for c in visits]
        rows += [(f"L{c}", "deidentified", f"d{i}") for c in shown]
    frame = pd.DataFrame(rows, columns=["location", "kind", "element"])
    if not (frame["kind"] == "deidentified").any():
        frame = pd.concat([frame, pd.DataFrame([(rows[0][0], "deidentified", "d0")], columns=frame.columns)])
    return frame.reset_index(drop=True)


@settings(max_examples=60, deadline=None)
@given(releases())
def test_exposure_per_location_matches_the_brute_force_oracle(frame: pd.DataFrame) -> None:
    report = build_report(read_release(frame), 2, reserved="deidentified", multiplicity="one-to-one",
                          protection=False)
    assert report.certain == oracle_certain(frame)
    locations = list(pd.unique(frame["location"]))
    assert [e.location for e in report.exposure] == locations
    for e in report.exposure:
        assert e.certain_before == report.certain
        assert e.certain_after == oracle_certain(without(frame, e.location)), e.location
        assert 0 <= e.lost <= report.certain          # withholding never creates a certain pair (docs/report.md)


@settings(max_examples=60, deadline=None)
@given(releases())
def test_same_graph_says_exactly_when_withholding_a_table_leaves_the_link_graph(frame: pd.DataFrame) -> None:
    """The exposure's shortcut against the link graphs themselves: same element edges and null trails."""
    from graphlink.report.exposure import same_graph, without_location

    tr = build_trails(read_release(frame), "deidentified", "one-to-one")

    def element_graph(t):  # noqa: ANN001, ANN202
        g = build_linkgraph(t)
        keys_m, keys_n = t.identified.keys, t.deidentified.keys
        return {(str(keys_m[i]), str(keys_n[j])) for i, j in zip(g.ei, g.ej, strict=True)}, g.n_null

    full = element_graph(tr)
    for c in range(len(tr.locations)):
        assert same_graph(tr, c) == (element_graph(without_location(tr, c)) == full), tr.locations[c]


def test_exposure_of_sparse_trails_over_many_locations_equals_rebuilding_each_release() -> None:
    """Many locations, few visits each: some locations leave the link graph as it is (the shortcut), and every
    row equals the count of the release rebuilt from its rows without that location's de-identified table."""
    from graphlink.report.exposure import certain_count, location_exposure, same_graph
    from graphlink.simulation.simulate import simulate_uniform

    rel = simulate_uniform(400, 150, 0.02, withhold=0.1, seed=3)
    tr = build_trails(rel)
    certain, hall = certain_count(tr)
    rows = location_exposure(tr, certain, hall)
    frame = rel.frame
    for row in rows:
        reduced = read_release(without(frame, row.location))
        assert row.certain_after == certain_count(build_trails(reduced, "deidentified", "one-to-one"))[0]
    shortcut = sum(same_graph(tr, c) for c in range(len(tr.locations)) if tr.location_sizes.deidentified[c])
    assert certain > 0 and 0 < shortcut < len(rows)          # both paths taken
    assert any(row.lost for row in rows)


@settings(max_examples=25, deadline=None)
@given(releases(withhold=False))
def test_exposure_of_an_unreserved_release_matches_the_oracle(frame: pd.DataFrame) -> None:
    """Nothing withheld (both sides complete): withholding one table switches to the de-identified-reserved
    reading, as the oracle's FillTrails does by itself."""
    report = build_report(read_release(frame), 2, reserved="none", multiplicity="one-to-one", protection=False)
    assert report.model.reserved == "none"
    assert report.certain == oracle_certain(frame)
    for e in report.exposure:
        assert e.certain_after == oracle_certain(without(frame, e.location)), e.location


def test_thesis_example_numbers_agree_with_the_analyses() -> None:
    rel = read_release(fig34())
    classes = classify_edges(build_linkgraph(build_trails(rel)))
    for k in (1, 2, 3):
        report = build_report(rel, k)
        result = audit(classes, k)
        assert report.certain == classes.n_true_loves == 4          # Fig. 3.4: every pair is a true love
        assert report.k_unlinkable == result.k_unlinkable
        assert report.below_k == result.counts["violations_identified"]
        assert report.records_below_k == result.counts["violations_deidentified"]
        assert sum(b.people for b in report.histogram) + report.no_candidate == report.people == 4
        assert sum(u.people for u in report.uniqueness) == 4
        assert sum(u.certain for u in report.uniqueness) == report.certain
    # each exposure row is the count of the rebuilt reduced release
    for e in report.exposure:
        reduced = read_release(without(fig34(), e.location))
        assert e.certain_after == classify_edges(build_linkgraph(
            build_trails(reduced, "deidentified", "one-to-one"))).n_true_loves


def test_protection_options_are_certified_and_count_records() -> None:
    frame = fig34()
    report = build_report(read_release(frame), 2, source="fig34.csv")
    per_loc = frame[frame["kind"] == "deidentified"].groupby("location")["element"].nunique()
    assert [p.method for p in report.protection] == ["greedy-dedup", "force-dedup", "flow-dedup", "keep-most"]
    for p in report.protection:
        assert p.certified
        assert unlink_oracle.is_k_unlinkable(_protected(frame, p), 2)
        assert p.records_before == int(per_loc.sum())
        assert p.records_withheld == sum(r.withheld for r in p.per_location)
        assert p.locations_disclosing == sum(1 for r in p.per_location if r.after > 0)
        assert p.command.startswith("graphlink unlink fig34.csv --k 2 --method " + p.method)


def test_keep_most_out_of_time_in_a_report_says_whose_certified_result_it_shows(monkeypatch) -> None:
    """A report gives keep-most a short time budget (``REPORT_KEEP_BUDGET``); set to nothing, keep-most stops at
    its first failed audit on Figure 3.4 at k = 2, and the option is another certified result, said in words."""
    import graphlink.report.release as report_module

    monkeypatch.setattr(report_module, "REPORT_KEEP_BUDGET", 0.0)
    frame = fig34()
    report = build_report(read_release(frame), 2, source="fig34.csv")
    keep = next(p for p in report.protection if p.method == "keep-most")
    assert keep.certified and unlink_oracle.is_k_unlinkable(_protected(frame, keep, time_budget=0.0), 2)
    assert keep.returned == ("keep-most did not certify within 0 s (1 audit round); the result is the integer "
                             "program's solution, which passes the exact audit")
    assert f"{keep.label}: {keep.returned}." in report.next_steps
    assert all(p.returned is None for p in report.protection if p.method != "keep-most")


def test_the_printed_keep_most_command_reproduces_the_option_under_the_reports_budget(monkeypatch, tmp_path) -> None:
    """The command the report prints for keep-most carries the report's time budget, so running it as printed
    writes the release the option describes, also when the budget decided the result (budget 0 here)."""
    import shlex

    import graphlink.report.release as report_module

    monkeypatch.setattr(report_module, "REPORT_KEEP_BUDGET", 0.0)
    frame = fig34()
    frame.to_csv(tmp_path / "fig34.csv", index=False)
    keep = next(p for p in build_report(read_release(frame), 2, source="fig34.csv").protection
                if p.method == "keep-most")
    assert "--time-budget 0 " in keep.command
    argv = shlex.split(keep.command)[1:]
    done = run_cli(*argv, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = pd.read_csv(tmp_path / "protected-keep-most.csv", dtype=str)
    kept = out[out["kind"] == "deidentified"].groupby("location")["element"].nunique()
    assert {r.location: r.after for r in keep.per_location} == {c: int(kept.get(c, 0)) for c in
                                                                 (r.location for r in keep.per_location)}


def _protected(frame: pd.DataFrame, option, time_budget: float | None = 60.0) -> pd.DataFrame:
    """The release the option's command writes, rebuilt by running it."""
    from graphlink.protect import unlink

    out = unlink(read_release(frame), 2, option.method, 0, time_budget=time_budget).release.frame
    kept = out[out["kind"] == "deidentified"].groupby("location")["element"].nunique()
    for r in option.per_location:
        assert int(kept.get(r.location, 0)) == r.after
    return out


def test_uniqueness_counts_shared_trails() -> None:
    # p0 and p1 share a trail (both at A only); p2 is alone at A+B
    frame = pd.DataFrame([("A", "identified", "p0"), ("A", "identified", "p1"), ("A", "identified", "p2"),
                          ("B", "identified", "p2"), ("A", "deidentified", "d0"), ("B", "deidentified", "d2")],
                         columns=["location", "kind", "element"])
    report = build_report(read_release(frame), 2, reserved="deidentified", multiplicity="one-to-one",
                          protection=False)
    rows = {u.locations: u for u in report.uniqueness}
    assert (rows[1].people, rows[1].unique) == (2, 0)
    assert (rows[2].people, rows[2].unique, rows[2].certain) == (1, 1, 1)    # d2 is at B: only p2 fits


class Parsed(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.ids: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "data", "poster") and value:
                self.urls.append(value)
            if name == "id":
                self.ids.add(value)

    def handle_data(self, data) -> None:
        self.text.append(data)


def parse(page: str) -> Parsed:
    p = Parsed()
    p.feed(page)
    p.close()
    return p


HOSTILE_ELEMENT = '<script>alert("x")</script>'
HOSTILE_LOCATION = "Tom & Jerry's \"<b>clinic</b>\""


def hostile_frame() -> pd.DataFrame:
    return pd.DataFrame([(HOSTILE_LOCATION, "identified", HOSTILE_ELEMENT), (HOSTILE_LOCATION, "identified", "Bo"),
                         (HOSTILE_ELEMENT, "identified", "Bo"), (HOSTILE_LOCATION, "deidentified", "x&y"),
                         (HOSTILE_ELEMENT, "deidentified", "x&y")], columns=["location", "kind", "element"])


def test_html_escapes_values_from_the_data_and_has_no_external_asset() -> None:
    rel = read_release(hostile_frame(), name='rel<img src="http://example.org/x.png">&')
    page = render_html(build_report(rel, 2, reserved="deidentified", multiplicity="one-to-one",
                                    options={"note": "<i>o</i>&"}))
    parsed = parse(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    for raw in (HOSTILE_ELEMENT, "<b>clinic</b>", "<img", "<i>o</i>", "Tom & Jerry"):
        assert raw not in page
    assert not [u for u in parsed.urls if u.lower().startswith(("http:", "https:", "//"))]
    assert not parsed.urls                                 # no link or asset at all
    assert "link" not in parsed.tags and "iframe" not in parsed.tags
    text = "".join(parsed.text)
    assert HOSTILE_LOCATION in text and HOSTILE_ELEMENT in text   # shown as text, after unescaping
    assert 'rel<img src="http://example.org/x.png">&' in text
    assert "note: <i>o</i>&" in text
    assert set(SECTIONS) <= parsed.ids
    assert "<style>" in page and "<svg" in page


def test_cli_writes_a_self_contained_report(tmp_path: Path) -> None:
    src = tmp_path / "fig34.csv"
    fig34().to_csv(src, index=False)
    out = tmp_path / "report.html"
    proc = run_cli("report", src, "--out", out, "--k", "2")
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    parsed = parse(page)
    assert set(SECTIONS) <= parsed.ids and not parsed.urls
    import hashlib

    text = "".join(parsed.text)
    assert hashlib.sha256(src.read_bytes()).hexdigest() in text
    assert "k: 2" in text and "tie-breaking seed: 0" in text
    assert "4 of 4 people certainly re-identifiable" in " ".join(proc.stderr.split())


def test_cli_refuses_a_refuted_model_in_one_line(tmp_path: Path) -> None:
    # a de-identified record at A and B, but nobody identified is at both: no assignment covers it
    frame = pd.DataFrame([("A", "identified", "p"), ("B", "identified", "q"), ("A", "deidentified", "d"),
                          ("B", "deidentified", "d")], columns=["location", "kind", "element"])
    src = tmp_path / "bad.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "r.html"
    proc = run_cli("report", src, "--out", out, "--reserved", "deidentified", "--multiplicity", "one-to-one")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "does not hold" in proc.stderr
    assert not out.exists()


def test_nothing_certain_means_no_exposure() -> None:
    # two people with the same trail and their two records: nothing is certain
    frame = pd.DataFrame([("A", "identified", "p"), ("A", "identified", "q"), ("A", "deidentified", "d"),
                          ("A", "deidentified", "e")], columns=["location", "kind", "element"])
    report = build_report(read_release(frame), 2, protection=False)
    assert report.certain == 0 and [e.lost for e in report.exposure] == [0]
    assert report.k_unlinkable and np.all([b.candidates >= 2 for b in report.histogram if b.people])


GENPHEN = Path(__file__).resolve().parents[2] / "graphlink" / "data" / "genphen"


def test_trails_and_quasi_identifiers_section() -> None:
    """Malin 2006 App. B.2 (GENPHEN): the combined count is REIDIT's true loves on the ALS-constrained graph; the
    k-anonymity figures are recomputed from the release's rows with pandas."""
    from graphlink.analysis.reidit import reidentify
    from graphlink.qi.als import read_als, release_blocks

    src = GENPHEN / "release.csv"
    rel = read_release(src)
    report = build_report(rel, 2, source=src, qi_links=GENPHEN / "als.yaml", protection=False)
    q = report.qi
    assert q is not None and q.qi == ("age", "gender", "visit_date")
    tr = build_trails(rel)
    graph = build_linkgraph(tr, blocks=release_blocks(read_als(GENPHEN / "als.yaml"), tr.identified.keys,
                                                      tr.deidentified.keys, src))
    assert q.certain_combined == len(reidentify(graph, "true-loves").pairs)
    assert q.certain_trails == report.certain == classify_edges(build_linkgraph(tr)).n_true_loves
    rows = pd.read_csv(src, dtype=str).fillna("")
    de = rows[rows["kind"] == "deidentified"].drop_duplicates("element")[["age", "gender", "visit_date"]]
    sizes = de.groupby(["age", "gender", "visit_date"]).size()
    assert (q.records, q.classes, q.smallest_class) == (len(de), len(sizes), sizes.min())
    assert q.records_below_k == int(sizes[sizes < 2].sum())
    assert q.prosecutor_average == pytest.approx(len(sizes) / len(de))
    assert q.prosecutor_highest == pytest.approx(1 / sizes.min())
    page = render_html(report)
    assert "qi" in parse(page).ids and "Trails and quasi-identifiers together" in page


def test_one_to_many_release_counts_and_says_why_sections_are_left_out() -> None:
    from graphlink.analysis.reidit import reidentify
    from graphlink.simulation.simulate import simulate_households

    rel = simulate_households(households=30, probabilities=0.3, locations=6, withhold=0.2, seed=3)
    report = build_report(rel, 2)
    assert report.model.multiplicity == "one-to-many"
    assert report.certain == reidentify(rel, "true-loves").pairs["identified"].nunique()
    result = audit(build_linkgraph(build_trails(rel)), 2)
    assert report.below_k == result.counts["violations_identified"]
    assert report.exposure == () and "one-to-many" in report.exposure_note
    assert report.protection == () and report.protection_note
    page = render_html(report)
    assert page.count("Not shown:") == 2


def test_identified_withholding_leaves_protection_out() -> None:
    # the identified side is the smaller one at A: identified records were withheld there
    frame = pd.DataFrame([("A", "identified", "p"), ("A", "deidentified", "d"), ("A", "deidentified", "e"),
                          ("B", "identified", "p"), ("B", "identified", "q"), ("B", "deidentified", "d"),
                          ("B", "deidentified", "e")], columns=["location", "kind", "element"])
    report = build_report(read_release(frame), 2, reserved="identified", multiplicity="one-to-one")
    assert report.model.reserved == "identified"
    assert "identified records withheld" in report.exposure_note and report.protection_note
    assert report.certain == classify_edges(build_linkgraph(build_trails(read_release(frame), "identified",
                                                                         "one-to-one"))).n_true_loves
