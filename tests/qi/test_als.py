"""Attribute linkage sets (TR02 Definition 3.1): relations, block codes, the ALS-constrained link graph and its
true loves against brute force, ALS-only re-identification, fraud mode."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.analysis.matching import classify_edges
from graphlink.analysis.reidit import true_loves
from graphlink.core.linkgraph import Blocks, build_linkgraph
from graphlink.core.trails import trails_from_dense
from graphlink.errors import ReleaseError
from graphlink.qi import als
from tests.analysis.test_matching import instances
from tests.oracle import link, oracle_from_edges


def agree(ci: np.ndarray, cj: np.ndarray) -> bool:
    return all(a < 0 or b < 0 or a == b for a, b in zip(ci, cj, strict=True))


@st.composite
def with_blocks(draw):
    M, N, reserved = draw(instances())
    r = draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    codes = st.integers(-1, k - 1)
    ci = np.array(draw(st.lists(st.lists(codes, min_size=r, max_size=r), min_size=len(M), max_size=len(M))))
    cj = np.array(draw(st.lists(st.lists(codes, min_size=r, max_size=r), min_size=len(N), max_size=len(N))))
    return M, N, reserved, ci.reshape(len(M), r), cj.reshape(len(N), r)


@settings(max_examples=250, deadline=None)
@given(with_blocks())
def test_constrained_link_graph_and_true_loves_equal_brute_force(inst) -> None:
    """An edge needs trail compatibility and agreeing blocks; allowed/vital edges of the constrained graph equal
    the enumeration of every maximum matching of exactly those edges (null trails included)."""
    M, N, reserved, ci, cj = inst
    g = build_linkgraph(trails_from_dense(M, N, reserved=reserved), blocks=Blocks(ci, cj))
    want = {(i, j) for i in range(len(M)) for j in range(len(N)) if link(M[i], N[j]) and agree(ci[i], cj[j])}
    assert set(zip(g.ei.tolist(), g.ej.tolist(), strict=True)) == want
    o = oracle_from_edges(len(M), len(N), want, g.null_side, g.n_null)
    for engine in ("elements", "twins"):
        c = classify_edges(g, engine=engine)
        pairs = list(zip(g.ei.tolist(), g.ej.tolist(), strict=True))
        assert {p for p, a in zip(pairs, c.allowed, strict=True) if a} == o["allowed"], engine
        assert set(zip(*(x.tolist() for x in c.true_love_pairs), strict=False)) == o["vital"], engine
        assert c.nu == o["nu"], engine


@settings(max_examples=200, deadline=None)
@given(with_blocks())
def test_als_only_is_mutual_uniqueness(inst) -> None:
    """TR02 §3: a pair is re-identified by the ALS alone iff each is the other's only agreeing record."""
    M, N, _, ci, cj = inst
    ik = np.array([f"m{i}" for i in range(len(M))], dtype=object)
    jk = np.array([f"n{j}" for j in range(len(N))], dtype=object)
    got = als.als_only(Blocks(ci, cj), ik, jk)
    want = set()
    for i in range(len(M)):
        ys = [j for j in range(len(N)) if agree(ci[i], cj[j])]
        if len(ys) == 1 and sum(agree(ci[x], cj[ys[0]]) for x in range(len(M))) == 1:
            want.add((f"m{i}", f"n{ys[0]}"))
    assert set(zip(got["identified"], got["deidentified"], strict=True)) == want


def test_relations_map_both_sides_into_one_domain(tmp_path) -> None:
    geo = tmp_path / "geo.csv"
    geo.write_text("ip,zip\n10.0.0.1,15213\n10.0.0.2,02139\n")
    spec = tmp_path / "als.yaml"
    spec.write_text("relations:\n"
                    "  - {identified: gender, deidentified: sex}\n"
                    "  - {identified: dob, deidentified: yob, map: year}\n"
                    "  - {identified: zip, deidentified: ip, lookup: geo.csv}\n"
                    "  - {identified: dob, deidentified: age, age_at: '2006-06-01'}\n")
    a = als.read_als(spec)
    ident = pd.DataFrame({"gender": ["f", "m", None], "dob": ["1970-06-02", "1965-01-31", "1990-12-12"],
                          "zip": ["15213", "02139", "15213"]}, index=["ann", "bob", "cy"])
    deid = pd.DataFrame({"sex": ["f", "m", "m"], "yob": ["1970", "1965", "1990"], "ip": ["10.0.0.1", "10.0.0.2",
                                                                                          "10.0.0.9"],
                         "age": ["35", "41", "15"]}, index=["s1", "s2", "s3"])
    b = als.blocks(a, ident, deid, np.array(["ann", "bob", "cy"], dtype=object),
                   np.array(["s1", "s2", "s3"], dtype=object))
    ok = [[agree(b.identified[i], b.deidentified[j]) for j in range(3)] for i in range(3)]
    # ann: f, 1970, 15213, 35 (birthday on June 2nd, not yet reached on June 1st 2006) -> s1 only
    # bob: m, 1965, 02139, 41 -> s2 only; cy: gender unknown, 1990, 15213, 15 -> s3 (ip unknown to the table)
    assert ok == [[True, False, False], [False, True, False], [False, False, True]]
    assert "year" in b.names[1] and "lookup" in b.names[2] and "age" in b.names[3]


def test_bad_als_files_and_attribute_conflicts_are_clear(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("relations:\n  - {identified: dob}\n")
    with pytest.raises(ReleaseError, match="relation 1: needs keys"):
        als.read_als(bad)
    bad.write_text("relations:\n  - {identified: dob, deidentified: yob, map: decade}\n")
    with pytest.raises(ReleaseError, match="unknown map 'decade'"):
        als.read_als(bad)
    bad.write_text(": : :\n")
    with pytest.raises(ReleaseError, match="YAML"):
        als.read_als(bad)
    frame = pd.DataFrame({"location": ["A", "B"], "kind": ["identified", "identified"], "element": ["x", "x"],
                          "dob": ["1970-01-01", "1971-01-01"]})
    with pytest.raises(ReleaseError, match="two values of 'dob'"):
        als.attribute_tables(frame, "r.csv")
    a = als.LinkageSet((als.Relation("dob", "yob", map="year"),))
    with pytest.raises(ReleaseError, match="does not have"):
        als.blocks(a, pd.DataFrame({"dob": []}), pd.DataFrame({"age": []}), np.array([], dtype=object),
                   np.array([], dtype=object))


def test_constraint_makes_more_pairs_certain_and_none_wrong() -> None:
    """Thesis Figure 3.4 with genders: the constraint removes gatc–Ali, and the unique perfect matching stays."""
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails
    from tests.fixtures import FIG34_TRUTH, fig34

    rel = read_release(fig34(), truth=FIG34_TRUTH)
    tr = build_trails(rel)
    plain = build_linkgraph(tr)
    ident = pd.DataFrame({"gender": ["m", "m", "m", "m"]}, index=["Ali", "Bob", "Charlie", "Dan"])
    deid = pd.DataFrame({"gender": ["m", "m", "m", "m"]}, index=["actg", "tgac", "ctga", "gatc"])
    ident.loc["Ali", "gender"] = "f"
    deid.loc["actg", "gender"] = "f"
    a = als.LinkageSet((als.Relation("gender", "gender"),))
    g = build_linkgraph(tr, blocks=als.blocks(a, ident, deid, tr.identified.keys, tr.deidentified.keys))
    assert g.n_expanded_edges == plain.n_expanded_edges - 1          # gatc–Ali is gone
    tl = true_loves(g)
    reasons = dict(zip(tl.pairs["deidentified"], tl.pairs["reason"], strict=True))
    assert reasons["gatc"] == "gatc is only compatible with Dan"       # no tight set needed any more
    assert len(tl) == 4


def test_fraud_mode_flags_unrelated_cards_on_one_face() -> None:
    pairs = pd.DataFrame({"identified": ["card1", "card2", "card3", "card4", "card5"],
                          "deidentified": ["face1", "face1", "face2", "face2", "face3"]})
    family = pd.Series({"card1": "smith", "card2": "smith", "card3": "jones", "card4": "lee", "card5": "x"})
    out = als.fraud_flags(pairs, family).set_index("face")
    assert list(out.index) == ["face1", "face2"]
    assert not out.loc["face1", "flagged"] and out.loc["face2", "flagged"]
    assert "identity theft" in out.loc["face2", "reason"]


def test_hierarchy_relation_uses_the_qi_hierarchies(tmp_path) -> None:
    """<dob, dob generalized to the year level of an ARX hierarchy>: the relation maps through graphlink.qi."""
    from graphlink.qi import hierarchy

    dobs = ["1970-06-02", "1965-01-31", "1990-12-12"]
    h = hierarchy.dates("dob", dobs)
    h.to_csv(tmp_path / "dob.csv")
    level = next(lv for lv in range(h.height) if h.generalize("1970-06-02", lv) == "1970")
    (tmp_path / "als.yaml").write_text(f"relations:\n  - {{identified: dob, deidentified: yob, hierarchy: dob.csv, "
                                       f"level: {level}}}\n")
    a = als.read_als(tmp_path / "als.yaml")
    ident = pd.DataFrame({"dob": dobs}, index=["ann", "bob", "cy"])
    deid = pd.DataFrame({"yob": ["1990", "1970", "1965"]}, index=["s1", "s2", "s3"])
    b = als.blocks(a, ident, deid, np.array(["ann", "bob", "cy"], dtype=object),
                   np.array(["s1", "s2", "s3"], dtype=object))
    assert [[agree(b.identified[i], b.deidentified[j]) for j in range(3)] for i in range(3)] == \
        [[False, True, False], [False, False, True], [True, False, False]]
    bad = pd.DataFrame({"dob": ["1999-01-01"]}, index=["dee"])
    with pytest.raises(ReleaseError, match="not in its hierarchy"):
        als.blocks(a, bad, deid, np.array(["dee"], dtype=object), np.array(["s1", "s2", "s3"], dtype=object))
