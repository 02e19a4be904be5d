"""The generalization lattice and the optimal search: exact against exhaustive enumeration of every node."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink.qi.lattice import (
    CoarserNodes,
    Lattice,
    PairCondition,
    classify,
    enumerate_lattice,
    optimal,
    suppression_limit,
)
from graphlink.qi.metrics import AGGREGATES, LOSSES, Objective, group_value, objective_bounds
from graphlink.qi.table import QITable, encode
from tests.qi_helpers import classes_oracle, is_k_anonymous, objective_oracle, qi_tables, sweeney, sweeney_hierarchies


@st.composite
def objectives(draw: st.DrawFn) -> Objective:
    """Any objective the search offers: every measure, ARX's gs-factor, aggregate and monotonic variant."""
    name = draw(st.sampled_from(LOSSES))
    if name in ("dm", "dm-star", "entropy-top"):
        return Objective(name)
    return Objective(name, gs=draw(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])),
                     aggregate=draw(st.sampled_from(AGGREGATES)), monotonic=draw(st.booleans()))


def test_lattice_structure() -> None:
    lat = Lattice([1, 2])
    assert lat.size == 6 and lat.levels[lat.top].tolist() == [1, 2]
    v = lat.node([0, 1])
    assert sorted(map(tuple, lat.levels[lat.upset(v)].tolist())) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert sorted(map(tuple, lat.levels[lat.downset(v)].tolist())) == [(0, 0), (0, 1)]
    assert sorted(tuple(lat.levels[w]) for w in lat.successors(v)) == [(0, 2), (1, 1)]
    with pytest.raises(ReleaseError, match="nodes"):
        Lattice([9] * 8)


def test_swa_minimal_generalizations_and_minimal_distortion() -> None:
    """SW-A: for k = 2 the k-minimal generalizations of the Race × ZIP table are GT[1,0] and GT[0,1]; GT[0,1]
    is the minimal distortion (highest Prec)."""
    t = encode(sweeney("swa_race_zip"), ["Race", "ZIP"], sweeney_hierarchies())
    lat, anonymous, _ = classify(t, 2)
    nodes = {tuple(lat.levels[v]) for v in np.flatnonzero(anonymous)}
    minimal = {a for a in nodes if not any(b != a and all(x <= y for x, y in zip(b, a, strict=True)) for b in nodes)}
    assert minimal == {(1, 0), (0, 1)}
    assert optimal(t, 2).node.levels == (0, 1)
    assert optimal(t, 2).node.measures.prec == pytest.approx(5 / 6)


@settings(max_examples=200, deadline=None)
@given(qi_tables(max_rows=14, max_qi=3, max_height=3), objectives(), st.data())
def test_node_values_and_bounds_match_the_definitions(table, obj, data) -> None:
    """At any node the search's value (from its classes) is the oracle's, and the level-only bound is below
    it whatever the suppression, and equal to it when nothing is suppressed (or for a monotonic variant)."""
    levels = [data.draw(st.integers(0, h)) for h in table.heights]
    k = data.draw(st.integers(1, table.n))
    s, expected = objective_oracle(table, obj.name, levels, k, gs=obj.gs, aggregate=obj.aggregate,
                                   monotonic=obj.monotonic)
    got_s, got, _ = group_value(table, obj, table.groups(levels), k)
    assert got_s == s and got == pytest.approx(expected, rel=1e-9, abs=1e-9)
    bound = objective_bounds(table, obj, np.array([levels]), s)[0]
    assert bound <= expected + 1e-9 * max(1.0, abs(expected))
    if obj.exact_without_suppression and (s == 0 or obj.monotonic):
        assert bound == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(qi_tables(max_rows=14, max_qi=3, max_height=3), objectives(), st.data())
def test_optimal_equals_brute_force_for_every_objective(table, obj, data) -> None:
    """The oracle enumerates every node of the lattice and computes the objective from its definition
    (strings, pandas, loops: tests/qi_helpers.objective_oracle); the search's node has the minimum value."""
    k = data.draw(st.integers(1, table.n))
    sup = data.draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))
    limit = suppression_limit(table.n, sup)
    res = optimal(table, k, max_suppression=sup, loss=obj)
    values = {}
    for levels in Lattice(table.heights).levels.tolist():
        s, value = objective_oracle(table, obj.name, levels, k, gs=obj.gs, aggregate=obj.aggregate,
                                    monotonic=obj.monotonic)
        if s <= limit:
            values[tuple(levels)] = value
    best = min(values.values())
    assert res.node.anonymous and res.node.levels in values
    assert values[res.node.levels] == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert res.value == pytest.approx(best, rel=1e-9, abs=1e-9)
    mask = res.node.row_mask(table)   # the release: at most the limit removed, the rest k-anonymous
    assert mask.sum() <= limit
    assert is_k_anonymous(table.generalized_frame(np.array(res.node.levels), keep=~mask), list(table.qi), k)
    assert res.stats.evaluated <= res.stats.nodes


@settings(max_examples=80, deadline=None)
@given(qi_tables(max_rows=25), st.data())
def test_classify_equals_enumeration_and_is_monotone(table, data) -> None:
    k = data.draw(st.integers(1, table.n))
    sup = data.draw(st.sampled_from([0.0, 0.1, 0.3]))
    lat, anonymous, stats = classify(table, k, max_suppression=sup)
    every = enumerate_lattice(table, k, max_suppression=sup)
    assert np.array_equal(anonymous, every["anonymous"].to_numpy())
    for v in np.flatnonzero(anonymous):   # predictive tagging is sound: everything above is anonymous too
        assert anonymous[lat.upset(v)].all()
    assert stats.evaluated + stats.tagged == lat.size


def _skewed_table(n: int, seed: int) -> QITable:
    """Ages, ZIPs, sex and years of education drawn at random: 4 QIs, a few hundred lattice nodes, many rare rows."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(15000, 15300, n).astype(str),
                       "sex": rng.choice(["f", "m"], n), "edu": rng.integers(0, 20, n)})
    hs = {"age": H.intervals("age", df.age, widths=[5, 10, 20, 40, 80]), "zip": H.digits("zip", df.zip),
          "edu": H.intervals("edu", df.edu, widths=[2, 4, 8, 16, 32])}
    return encode(df, ["age", "zip", "sex", "edu"], hs)


def test_predictive_tagging_saves_evaluations() -> None:
    t = _skewed_table(4000, seed=0)
    res = optimal(t, 10, max_suppression=0.01)
    lat, _, cls = classify(t, 10, max_suppression=0.01)
    assert res.stats.evaluated < lat.size / 4 and cls.evaluated < lat.size / 4
    every = enumerate_lattice(t, 10, max_suppression=0.01)
    assert 1 - res.node.measures.prec == pytest.approx((1 - every.loc[every.anonymous, "prec"]).min())


def test_bad_parameters() -> None:
    t = encode(sweeney("swa_race_zip"), ["Race", "ZIP"], sweeney_hierarchies())
    with pytest.raises(ReleaseError, match="larger than the table"):
        optimal(t, 9)
    with pytest.raises(ReleaseError, match="at least 1"):
        optimal(t, 0)
    with pytest.raises(ReleaseError, match="between 0 and 1"):
        optimal(t, 2, max_suppression=1.5)
    with pytest.raises(ReleaseError, match="unknown loss"):
        optimal(t, 2, loss="height")
    with pytest.raises(ReleaseError, match="no monotonic variant"):
        optimal(t, 2, loss=Objective("dm", monotonic=True))
    with pytest.raises(ReleaseError, match="no generalization/suppression"):
        Objective("dm-star", gs=0.2)
    with pytest.raises(ReleaseError, match="no per-attribute aggregate"):
        Objective("dm", aggregate="max")


def test_suppression_limit_rounding() -> None:
    """ARX computes ``floor(s·n)`` in binary floating point (ARXConfiguration.initialize): 0.0725 × 400 is
    28.999999999999996 there, so 28 rows; the decimal reading of the fraction as written allows 29."""
    assert 0.0725 * 400 < 29
    assert suppression_limit(400, 0.0725) == 28
    assert suppression_limit(400, 0.0725, "decimal") == 29
    assert suppression_limit(100, 0.07) == 7 and suppression_limit(100, 0.07, "decimal") == 7
    assert suppression_limit(1000, 0.01) == 10 and suppression_limit(1000, 0.0) == 0
    with pytest.raises(ReleaseError, match="unknown rounding"):
        suppression_limit(10, 0.1, "up")


def test_the_suppression_rule_changes_the_optimum() -> None:
    """The 0.0725 × 400 case: 29 rows allow a node that 28 rows do not; the search follows the rule given."""
    rows = [("a", "x")] * 371 + [(f"u{i}", "x") for i in range(29)]
    t = encode(pd.DataFrame(rows, columns=["name", "c"]), ["name", "c"])
    arx = optimal(t, 2, max_suppression=0.0725)
    dec = optimal(t, 2, max_suppression=0.0725, rounding="decimal")
    assert arx.limit == 28 and dec.limit == 29
    assert dec.node.levels == (0, 0) and dec.node.suppressed_rows == 29
    assert arx.node.levels == (1, 0) and arx.node.suppressed_rows == 0


def _suppressed_oracle(table, levels, k) -> int:
    """Rows in classes smaller than k at a node, from the released strings (pandas group-by)."""
    sizes = classes_oracle(table.generalized_frame(np.array(levels)), list(table.qi))
    return int((sizes < k).sum())


@settings(max_examples=150, deadline=None)
@given(qi_tables(max_rows=25, max_qi=4), st.data())
def test_pair_condition_refutes_only_failing_nodes(table, data) -> None:
    """The pairwise necessary condition never refutes a k-anonymous node: whenever it says "fails", the
    node's suppressed rows (counted from the strings) exceed the limit."""
    k = data.draw(st.integers(1, table.n))
    limit = data.draw(st.integers(0, table.n))
    levels = [data.draw(st.integers(0, h)) for h in table.heights]
    if PairCondition(table, k, limit).refutes(levels):
        assert _suppressed_oracle(table, levels, k) > limit


def test_pair_condition_sees_what_single_qis_miss() -> None:
    """Each value of a and b occurs twice, but every (a, b) pair once: no single QI refutes 2-anonymity,
    the pair does (and the node indeed suppresses every row)."""
    t = encode(pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["p", "q", "p", "q"]}), ["a", "b"])
    assert PairCondition(t, 2, 3).refutes([0, 0]) and _suppressed_oracle(t, [0, 0], 2) == 4
    assert not PairCondition(t, 2, 4).refutes([0, 0])
    assert not PairCondition(t, 2, 0).refutes([1, 0])


@settings(max_examples=150, deadline=None)
@given(qi_tables(max_rows=25, max_qi=3), st.data())
def test_refinement_bound_is_below_dm_star(table, data) -> None:
    """A grouped node w above v bounds DM*(v) from below (Σ_F |F|²/min(|F|, fan-out)); DM* counted from
    the strings. With no kept node above, the bound is 0."""
    lat = Lattice(table.heights)
    v = data.draw(st.integers(0, lat.size - 1))
    above = np.flatnonzero(lat.upset(v))
    w = int(data.draw(st.sampled_from(above.tolist())))
    kept = CoarserNodes(table)
    kept.add(table.groups(tuple(lat.levels[w])))
    sizes = classes_oracle(table.generalized_frame(lat.levels[v]), list(table.qi))
    bound = kept.bound(lat.levels[v])
    assert bound <= float(sizes.sum()) + 1e-9     # Σ_rows |class| = Σ_E |E|²
    if w == v:
        assert bound == 0.0


def test_up_and_down_slices_are_the_masks() -> None:
    lat = Lattice([2, 1, 3])
    status = np.zeros(lat.size, dtype=np.int8)
    for v in range(lat.size):
        box = np.zeros(lat.size, dtype=bool)
        box.reshape(lat.shape)[lat.up(v)] = True
        assert np.array_equal(box, lat.upset(v))
        box[:] = False
        box.reshape(lat.shape)[lat.down(v)] = True
        assert np.array_equal(box, lat.downset(v))
    assert not status.any()


def test_dm_star_search_evaluates_fewer_nodes_than_flash() -> None:
    """Flash (ARX's setting for a monotone criterion and metric: k-anonymity with suppression and DM*)
    decides every node, so it evaluates at least every minimal k-anonymous and every maximal failing node;
    the DM* and DM searches, exact all the same, evaluate fewer nodes than Flash's classification and, with
    the pairwise condition and the refinement bound, no more than about that floor on a skewed table."""
    t = _skewed_table(3000, seed=3)
    for k in (2, 5):
        every = enumerate_lattice(t, k, max_suppression=0.02)
        lat, anon, flash = classify(t, k, max_suppression=0.02)
        assert np.array_equal(anon, every["anonymous"].to_numpy())
        minimal = sum(1 for v in np.flatnonzero(anon) if not any(anon[p] for p in _predecessors(lat, v)))
        maximal = sum(1 for v in np.flatnonzero(~anon) if not any(not anon[w] for w in lat.successors(v)))
        for loss, column in (("dm-star", "dm_star"), ("dm", "dm")):
            res = optimal(t, k, max_suppression=0.02, loss=loss)
            assert res.value == every.loc[anon, column].min()
            assert res.stats.evaluated < flash.evaluated
            if loss == "dm-star":
                assert res.stats.evaluated <= 1.05 * (minimal + maximal)


def _predecessors(lat: Lattice, v: int) -> list[int]:
    lv = lat.levels[v]
    return [v - int(lat.strides[i]) for i in range(len(lv)) if lv[i] > 0]
