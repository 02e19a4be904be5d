"""Appendix D (Lemmas 20–21) and the Theorem 8 / Alg. 13 quantity, as property tests on random set systems."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.secure.bounds import pairwise_bounds, regions, true_regions


def _instance(rng: random.Random, universe: int = 12, reserved: bool = True):
    people = [f"p{i}" for i in range(universe)]
    truth = {p: f"s{p[1:]}" for p in people}
    gi = {p for p in people if rng.random() < 0.55}
    gj = {p for p in people if rng.random() < 0.55}
    if reserved:
        oi = {truth[p] for p in gi if rng.random() < 0.6}
        oj = {truth[p] for p in gj if rng.random() < 0.6}
    else:
        oi, oj = {truth[p] for p in gi}, {truth[p] for p in gj}
    return gi, gj, oi, oj, truth


def test_appendix_d_worked_example():
    gi, gj = set(range(1, 7)), set(range(4, 10))
    oi, oj = {"s1", "s2", "s4", "s5"}, {"s4", "s7", "s8"}
    r = regions(gi, gj, oi, oj)
    assert (r.common, r.one, r.j_only, r.three) == (3, 3, 3, 1)
    assert (r.two_min, r.four_max, r.four_min) == (0, 2, 0)
    assert r.underestimate == 2
    assert r.six_terms == (2, 2, 2, 3, 3, 3)
    assert min(r.six_terms) == 2
    assert r.worst_case_protectors == 3 == r.contributor_clean_quantity


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**9))
def test_lemma_20_underestimate_is_min_of_six_terms(seed):
    gi, gj, oi, oj, truth = _instance(random.Random(seed))
    r = regions(gi, gj, oi, oj)
    assert r.underestimate == min(r.six_terms)
    assert r.underestimate >= 0


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**9))
def test_true_region_four_lies_within_bounds(seed):
    """The real ④ (known only with the truth) is within [④min, ④max]; ② ≥ ②min; and Contributor-Clean's
    worst-case protector count never exceeds the true one (it is a sound under-estimate)."""
    gi, gj, oi, oj, truth = _instance(random.Random(seed))
    r = regions(gi, gj, oi, oj)
    t = true_regions(gi, gj, oi, oj, truth)
    assert r.four_min <= t["four"] <= r.four_max
    assert t["two"] >= r.two_min
    assert t["three"] == r.three
    assert r.worst_case_protectors <= t["protectors"]
    assert t["protectors"] - r.worst_case_protectors <= r.underestimate


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**9))
def test_alg13_line3_equals_worst_case_protectors(seed):
    """Alg. 13 line 3 max(|γi∖γj|, |γi|−|h(ωj)|, |h(ωi)∖h(ωj)|) = |γi| − |③| − |④max|
    (docs/algorithms.md#errata-and-decisions)."""
    gi, gj, oi, oj, _ = _instance(random.Random(seed))
    r = regions(gi, gj, oi, oj)
    assert r.contributor_clean_quantity == r.worst_case_protectors


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**9))
def test_lemma_21_unreserved_has_no_underestimate(seed):
    gi, gj, oi, oj, truth = _instance(random.Random(seed), reserved=False)
    r = regions(gi, gj, oi, oj)
    assert r.two_min == 0 and r.four_max == 0 and r.four_min == 0 and r.underestimate == 0
    assert true_regions(gi, gj, oi, oj, truth)["protectors"] == r.worst_case_protectors


def test_pairwise_table_covers_ordered_pairs():
    g = {"a": {1, 2, 3}, "b": {2, 3, 4}, "c": {5}}
    h = {"a": {"x"}, "b": {"x", "y"}, "c": set()}
    rows = pairwise_bounds(g, h)
    assert len(rows) == 6 and {(r["i"], r["j"]) for r in rows} == {(i, j) for i in g for j in g if i != j}
