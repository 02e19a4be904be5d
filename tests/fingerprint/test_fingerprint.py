"""k-anonymity fingerprinting (FP, Schrittwieser et al. 2011): FP's Tables 1-6 and §3.2/§4 examples exactly, then
properties against brute-force oracles on random tables (search, planning, attribution)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from graphlink.fingerprint import Plan, attribute, make_plan, plan_from_nodes, release_frame, table_fingerprint
from graphlink.fingerprint.plan import Discretisation, distinguishable, middle_search, node_loss, solutions
from graphlink.qi import hierarchy as H
from graphlink.qi.lattice import Lattice
from graphlink.qi.table import encode
from tests.fp_helpers import fp_frame, fp_table, fp_tables, minimal_sets, released_rows
from tests.qi_helpers import classes_oracle

QI = ["sex", "birthdate"]
A0B1, A1B1, A0B2, A1B2 = (0, 1), (1, 1), (0, 2), (1, 2)


def seed_plan(recipients: int = 2) -> Plan:
    """FP §3.3: k = 2, Samarati metric, 1 <= loss <= 2, clusters by equal loss."""
    return make_plan(fp_table(), 2, recipients, loss="samarati", l_min=1, l_max=2, discretisation="exact", seed=5)


# ---------------------------------------------------------------------------------------------- FP Tables 1-5
def test_table2_metrics_of_every_node() -> None:
    """FP Table 2, all six nodes: Sam, Prec (level ratios), DM* and the actual k."""
    table2 = {(0, 0): (0, 0.0, 4, 1), (1, 0): (1, 1.0, 4, 1), (0, 1): (1, 0.5, 8, 2),
              (0, 2): (2, 1.0, 8, 2), (1, 1): (2, 1.5, 8, 2), (1, 2): (3, 2.0, 16, 4)}
    t = fp_table()
    assert len(Lattice(t.heights).levels) == len(table2) == 6
    for levels, (sam, prec, dm_star, k) in table2.items():
        g = t.groups(levels)
        assert node_loss(t, g, 1, "samarati") == sam
        assert node_loss(t, g, 1, "precision") == pytest.approx(prec)
        assert node_loss(t, g, 1, "dm-star") == dm_star
        assert int(g.counts.min()) == k


def test_table3_and_the_search_walkthrough() -> None:
    """FP §3.3 steps 4-6: (a1, b0) is not 2-anonymous (Table 3: all 'p', four dates), ruling out (a0, b0);
    (a1, b1) is, tagging (a1, b2); restart at (a0, b1), which is, tagging (a0, b2). Six nodes, three tested."""
    t = fp_table()
    table3 = t.generalized_frame(np.array([1, 0]))[QI]
    assert table3.values.tolist() == [["p", "19.03.1970"], ["p", "20.03.1970"], ["p", "18.04.1970"],
                                      ["p", "21.04.1970"]]
    assert int(classes_oracle(table3, QI).min()) == 1
    s = middle_search(t, 2)
    assert s.trace == [((1, 0), False), ((1, 1), True), ((0, 1), True)]
    assert s.evaluated == 3 and s.tagged == 3
    status = {tuple(int(x) for x in s.lattice.levels[v]): bool(s.anonymous[v]) for v in range(6)}
    assert status == {(0, 0): False, (1, 0): False, A0B1: True, A0B2: True, A1B1: True, A1B2: True}


def test_table4_losses_and_k_and_the_bounds() -> None:
    """FP Table 4 (Samarati loss, actual k) and step 7's removal of (a1, b2) (loss 3 > l_max = 2)."""
    sol = seed_plan().solutions
    got = {(int(r.sex), int(r.birthdate)): (r.loss, r.k, bool(r.within_bounds)) for r in sol.itertuples()}
    assert got == {A0B1: (1, 2, True), A0B2: (2, 2, True), A1B1: (2, 2, True), A1B2: (3, 4, False)}


def test_table5_generalization_results() -> None:
    """FP Table 5: the three candidate outputs, row for row."""
    t = fp_table()
    table5 = {A0B1: [["m", "03.1970"], ["m", "03.1970"], ["f", "04.1970"], ["f", "04.1970"]],
              A1B1: [["p", "03.1970"], ["p", "03.1970"], ["p", "04.1970"], ["p", "04.1970"]],
              A0B2: [["m", "1970"], ["m", "1970"], ["f", "1970"], ["f", "1970"]]}
    for levels, rows in table5.items():
        assert t.generalized_frame(np.array(levels))[QI].values.tolist() == rows


def test_clusters_and_the_pattern_list() -> None:
    """FP §3.3: C1 = {(a0, b1)} with loss 1, C2 = {(a1, b1), (a0, b2)} with loss 2; two recipients take C2,
    R1 (a1, b1) and R2 (a0, b2). FP Table 1's two anonymized sets are their releases (the 'First Set' prints
    sex F, M, F, M — garbled: the original is m, m, f, f)."""
    plan = seed_plan()
    assert [(c["lo"], c["nodes"]) for c in plan.clusters] == [(1.0, 1), (2.0, 2)]
    assert plan.cluster == {"lo": 2.0, "hi": 2.0, "nodes": 2}
    assert [(r.name, r.levels) for r in plan.recipients] == [("R1", A1B1), ("R2", A0B2)]
    assert plan.loss_spread["spread"] == 0
    frame = fp_frame()
    second = release_frame(plan, frame, "R1", shuffle=False)
    first = release_frame(plan, frame, "R2", shuffle=False)
    assert second[["sex", "birthdate", "disease"]].values.tolist() == [
        ["p", "03.1970", "chest pain"], ["p", "03.1970", "short breath"], ["p", "04.1970", "obesity"],
        ["p", "04.1970", "short breath"]]
    assert first[["sex", "birthdate"]].values.tolist() == [["m", "1970"], ["m", "1970"], ["f", "1970"], ["f", "1970"]]
    # one recipient: the lowest-loss cluster C1; three: no cluster of equal loss is big enough
    assert [r.levels for r in seed_plan(1).recipients] == [A0B1]
    with pytest.raises(ReleaseError, match="3 recipients need 3 distinct"):
        seed_plan(3)


def test_capacity_upper_bound() -> None:
    """FP §4: F = Π nᵢ (nᵢ the levels of QI i, the original included): 2 · 3 = 6 for sex and birthdate,
    2 · 3 · 3 with Table 6's ZIP (1004 → 100X → *)."""
    assert seed_plan().capacity["upper_bound"] == 6
    t6 = fp_table("table6")
    assert make_plan(t6, 1, 2, seed=0).capacity["upper_bound"] == 2 * 3 * 3


# ---------------------------------------------------------------------------------------------- FP §3.2, §4, Table 6
def test_leak_example_of_section_3_2() -> None:
    """D1 = (a1, b1) to R1, D2 = (a0, b2) to R2; a record with sex at original granularity and birthdate at the
    year is R2's. Coarser than both (p, 1970): either could have written it, so no attribution."""
    plan = seed_plan()
    res = attribute(plan, pd.DataFrame({"sex": ["m"], "birthdate": ["1970"], "disease": ["obesity"]}))
    assert res.recipients == ["R2"] and res.exact and res.explained_rows == 1
    res = attribute(plan, pd.DataFrame({"sex": ["p", "p"], "birthdate": ["04.1970", "03.1970"]}))
    assert res.recipients == ["R1"] and res.exact and res.explained_rows == 2
    both = attribute(plan, pd.DataFrame({"sex": ["p"], "birthdate": ["1970"]}))
    assert both.recipients == [] and not both.exact and both.explained_rows == 0
    assert both.candidates == [["R1"], ["R2"]] and "cannot be attributed" in both.reason
    finer = attribute(plan, pd.DataFrame({"sex": ["m"], "birthdate": ["19.03.1970"]}))
    assert finer.recipients == [] and finer.unexplained_rows == [0] and "no recipient received" in finer.reason


def test_table6_collusion() -> None:
    """FP Table 6: sets 1-3; the leaked record {03.1970, p, 1015, short breath} needs sets one and two (month of
    birth only in set 2, the full ZIP only in set 1 — FP's text swaps the two)."""
    t6 = fp_table("table6")
    plan = plan_from_nodes(t6, 1, {"set 1": {"sex": 1, "birthdate": 2, "zip": 0},
                                   "set 2": {"sex": 1, "birthdate": 1, "zip": 1},
                                   "set 3": {"sex": 0, "birthdate": 2, "zip": 1}})
    frame = fp_frame("table6")
    sets = {name: release_frame(plan, frame, name, shuffle=False)[["sex", "birthdate", "zip", "disease"]]
            for name in plan.names}
    assert sets["set 1"].values.tolist() == [["p", "1970", "1004", "chest pain"], ["p", "1970", "1015", "short breath"],
                                             ["p", "1970", "1004", "obesity"], ["p", "1970", "1015", "short breath"]]
    assert sets["set 2"]["birthdate"].tolist() == ["03.1970", "03.1970", "04.1970", "04.1970"]
    assert sets["set 2"]["zip"].tolist() == sets["set 3"]["zip"].tolist() == ["100X", "101X", "100X", "101X"]
    assert sets["set 3"]["sex"].tolist() == ["m", "m", "f", "f"]
    leak = pd.DataFrame({"birthdate": ["03.1970"], "sex": ["p"], "zip": ["1015"], "disease": ["short breath"]})
    res = attribute(plan, leak)
    assert res.recipients == ["set 1", "set 2"] and not res.exact and res.minimum_size == 2
    assert "birthdate at level 1 ('03.1970') only from set 2" in res.reason and "zip at level 0" in res.reason
    assert {frozenset(res.recipients)} == set(minimal_sets(plan, t6, leak))


def test_robustness_example_of_section_4() -> None:
    """FP §4: U1 got (a1, b2), U2 (a2, b1); U2 coarsening to (a3, b1) is still caught; to evade, the leaker must
    go to (a2, b2), which both could have produced."""
    a = H.digits("a", ["123", "124", "135", "246"])           # 123 → 12* → 1** → *** → *  (height 4)
    b = H.digits("b", ["12", "13", "24", "25"])               # 12 → 1* → ** → *          (height 3)
    frame = pd.DataFrame({"a": ["123", "124", "135", "246"], "b": ["12", "13", "24", "25"]})
    t = encode(frame, ["a", "b"], {"a": a, "b": b})
    plan = plan_from_nodes(t, 1, {"U1": (1, 2), "U2": (2, 1)})
    caught = attribute(plan, pd.DataFrame({"a": ["***"], "b": ["1*"]}))
    assert caught.recipients == ["U2"] and not caught.exact and "generalized further" in caught.reason
    evaded = attribute(plan, pd.DataFrame({"a": ["1**"], "b": ["**"]}))
    assert evaded.recipients == [] and sorted(map(tuple, evaded.candidates)) == [("U1",), ("U2",)]


def test_collusion_exposure_of_complementary_releases() -> None:
    """Two 2-anonymous copies of FP Table 6 — (m/f, 1970, *) and (p, 1970, 100X/101X) — whose holders, linking
    them, know (sex, year, 100X/101X): four singletons (SW-K §4's complementary releases)."""
    t6 = fp_table("table6")
    plan = plan_from_nodes(t6, 2, {"x": (0, 2, 2), "y": (1, 2, 1)})
    assert [r.k for r in plan.recipients] == [2, 2]
    meet = t6.generalized_frame(np.array([0, 2, 1]))[["sex", "birthdate", "zip"]]
    assert int(classes_oracle(meet, ["sex", "birthdate", "zip"]).max()) == 1
    assert plan.collusion == {"pairs": 1, "pairs_below_k": 1, "examples": [{"recipients": ["x", "y"],
                                                                            "meet": [0, 2, 1]}]}


def test_bad_leaks_and_plans() -> None:
    plan = seed_plan()
    with pytest.raises(ReleaseError, match="value 'x' occurs at no level .* fits no node"):
        attribute(plan, pd.DataFrame({"sex": ["m", "x"], "birthdate": ["1970", "1970"]}), source="leak.csv")
    with pytest.raises(ReleaseError, match="no rows"):
        attribute(plan, pd.DataFrame({"sex": [], "birthdate": []}))
    with pytest.raises(ReleaseError, match="another table"):
        release_frame(plan, fp_frame("table6"), "R1")
    with pytest.raises(ReleaseError, match="no recipient 'R9'"):
        release_frame(plan, fp_frame(), "R9")
    with pytest.raises(ReleaseError, match="unknown discretisation"):
        Discretisation.parse("round:x")


def test_plan_file_round_trip(tmp_path) -> None:
    plan = seed_plan()
    plan.save(tmp_path / "plan.json")
    back = Plan.load(tmp_path / "plan.json")
    assert back.recipients == plan.recipients and back.qi == plan.qi and back.seed == plan.seed
    assert all(back.hierarchies[q] == plan.hierarchies[q] for q in QI)
    assert release_frame(back, fp_frame(), "R1").equals(release_frame(plan, fp_frame(), "R1"))
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    with pytest.raises(ReleaseError, match="not a fingerprint plan"):
        Plan.load(tmp_path / "bad.json")


def test_table_fingerprint_ignores_order_only() -> None:
    f = fp_frame()
    assert table_fingerprint(f) == table_fingerprint(f.iloc[::-1][f.columns[::-1]])
    g = f.copy()
    g.loc[0, "disease"] = "cough"
    assert table_fingerprint(g) != table_fingerprint(f)


def test_releases_are_shuffled_per_recipient() -> None:
    """SW-K §4's unsorted-matching remedy: the recipients' row orders differ, the content does not."""
    t = fp_table("table6")
    plan = make_plan(t, 1, 4, seed=3)
    frame = fp_frame("table6")
    orders = {tuple(release_frame(plan, frame, r)["name"]) for r in plan.names}
    assert len(orders) > 1
    assert all(sorted(o) == sorted(frame["name"]) for o in orders)


# ---------------------------------------------------------------------------------------------- properties
def _oracle_anonymous(t, levels, k, limit) -> tuple[bool, int, int]:
    """Pandas on the released strings: (k-anonymous within the limit, suppressed rows, actual k)."""
    sizes = classes_oracle(t.generalized_frame(np.array(levels)), list(t.qi))
    small = sizes < k
    kept = sizes[~small]
    return int(small.sum()) <= limit, int(small.sum()), int(kept.min()) if len(kept) else 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=fp_tables(), k=st.integers(1, 3), sup=st.sampled_from([0.0, 0.2]),
       loss=st.sampled_from(["samarati", "precision", "dm-star"]))
def test_search_and_solutions_match_brute_force(t, k, sup, loss) -> None:
    """Every node's k-anonymity as the middle-height search decides it, and every solution's loss and k, equal
    a pandas group-by on the generalized strings of every node."""
    assume(k <= t.n)
    limit = int(np.floor(sup * t.n + 1e-9))
    s = middle_search(t, k, max_suppression=sup)
    assert s.evaluated + s.tagged == s.lattice.size
    sol = solutions(t, s, k, loss).set_index("node")
    heights = np.array(t.heights, dtype=float)
    for v, levels in enumerate(s.lattice.levels):
        ok, suppressed, k_actual = _oracle_anonymous(t, levels, k, limit)
        assert bool(s.anonymous[v]) == ok
        if not ok:
            continue
        row = sol.loc[v]
        assert (row["k"], row["suppressed_rows"]) == (k_actual, suppressed)
        ratio = float((levels / heights).sum())
        sizes = classes_oracle(t.generalized_frame(levels), list(t.qi))
        expected = {"samarati": float(levels.sum()), "precision": ratio + suppressed * (t.m - ratio) / t.n,
                    "dm-star": float(sizes.sum())}[loss]   # Σ_E |E|² = Σ over rows of |E|
        assert row["loss"] == pytest.approx(expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=fp_tables(), k=st.integers(1, 2), r=st.integers(1, 4), loss=st.sampled_from(["samarati", "precision"]),
       disc=st.sampled_from(["auto", "exact", "width:0.5"]))
def test_plan_nodes_are_distinct_anonymous_and_tightest(t, k, r, loss, disc) -> None:
    """The recipients get distinct k-anonymous nodes; with ``auto`` no r usable nodes have a smaller loss spread
    (brute force over every r-subset); with a partition all nodes share one cluster."""
    assume(k <= t.n)
    try:
        plan = make_plan(t, k, r, loss=loss, discretisation=disc, seed=1)
    except ReleaseError:
        sol = solutions(t, middle_search(t, k), k, loss)
        usable = distinguishable(t, sol[list(t.qi)].to_numpy(), k)
        if disc == "auto":
            assert usable.sum() < r
        return
    nodes = [rec.levels for rec in plan.recipients]
    assert len(set(nodes)) == r
    for rec in plan.recipients:
        ok, _, k_actual = _oracle_anonymous(t, rec.levels, k, 0)
        assert ok and rec.k == k_actual
    below = sum(not _oracle_anonymous(t, np.minimum(a.levels, b.levels), k, 0)[0]
                for a, b in itertools.combinations(plan.recipients, 2))
    assert plan.collusion["pairs_below_k"] == below
    usable = plan.solutions[plan.solutions["usable"]]
    losses = sorted(usable["loss"])
    if disc == "auto" and len(losses) <= 10:
        best = min(max(c) - min(c) for c in itertools.combinations(losses, r))
        assert plan.loss_spread["spread"] == pytest.approx(best)
    if disc != "auto":
        d = Discretisation.parse(disc)
        keys = d.keys(np.array([rec.loss for rec in plan.recipients]), 0.0)
        assert len(set(keys.tolist())) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=fp_tables(max_rows=10), r=st.integers(2, 4), data=st.data())
def test_attribution_against_brute_force(t, r, data) -> None:
    """Every recipient's own release is attributed to it exactly; so is every single record of it that is in
    no other recipient's release; a record or a table two recipients could only write together is covered by a
    smallest set, equal to what brute force over all recipient subsets finds."""
    try:
        plan = make_plan(t, 1, r, loss=data.draw(st.sampled_from(["samarati", "precision"])), seed=2)
    except ReleaseError:
        assume(False)
        return
    rows = released_rows(plan, t)
    for name in plan.names:
        whole = release_frame(plan, t.frame, name)
        res = attribute(plan, whole)
        assert res.recipients == [name] and res.exact and res.explained_rows == len(whole)
        others = set().union(*(rows[x] for x in plan.names if x != name))
        for rec in rows[name] - others:
            one = attribute(plan, pd.DataFrame([rec], columns=list(plan.qi)))
            assert one.recipients == [name] and one.exact
    a, b = data.draw(st.lists(st.sampled_from(plan.names), min_size=2, max_size=2, unique=True))
    la, lb = np.array(plan.recipient(a).levels), np.array(plan.recipient(b).levels)
    src = data.draw(st.integers(0, t.n - 1))
    meet = np.minimum(la, lb)
    combined = pd.DataFrame([[plan.hierarchies[q].generalize(str(t.frame[q].iloc[src]), int(lv))
                              for q, lv in zip(plan.qi, meet, strict=True)]], columns=list(plan.qi))
    mixed = pd.concat([release_frame(plan, t.frame, a).head(1), release_frame(plan, t.frame, b).head(1)])
    for leak in (combined, mixed):
        res = attribute(plan, leak)
        brute = minimal_sets(plan, t, leak)
        assert brute and res.minimum_size == len(next(iter(brute)))
        if res.exact:
            assert len(res.recipients) == 1 and frozenset(res.recipients) in brute
        elif res.recipients:
            assert brute == [frozenset(res.recipients)]
        else:
            assert {frozenset(c) for c in res.candidates} == set(brute)
