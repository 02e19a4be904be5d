"""Exact true loves / union of maximum matchings against a brute-force oracle (all maximum matchings)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from graphlink.analysis.matching import classify_edges, maximum_matching
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.trails import trails_from_dense
from tests.fixtures import A14_M, A14_N
from tests.oracle import oracle_from_dense


@st.composite
def instances(draw):
    """Small random trail instances: both reserved directions and unreserved, clean and dirty."""
    c = draw(st.integers(1, 4))
    nm = draw(st.integers(1, 6))
    reserved = draw(st.sampled_from(["deidentified", "identified", "none"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    M = rng.integers(0, 2, (nm, c))
    nn = nm if reserved == "none" else int(rng.integers(1, nm + 1))
    N = M[rng.choice(nm, nn, replace=False)].copy() if draw(st.booleans()) else rng.integers(0, 2, (nn, c))
    if reserved != "none":
        N = np.where(rng.random(N.shape) < draw(st.sampled_from([0.2, 0.5])), -1, N)
    return (N, M, reserved) if reserved == "identified" else (M, N, reserved)


def _check(M, N, reserved, engine):
    g = build_linkgraph(trails_from_dense(M, N, reserved=reserved))
    o = oracle_from_dense(M, N, g.null_side, g.n_null)
    c = classify_edges(g, engine=engine)
    pairs = list(zip(g.ei.tolist(), g.ej.tolist(), strict=True))
    assert {p for p, a in zip(pairs, c.allowed, strict=True) if a} == o["allowed"]
    assert {p for p, v in zip(pairs, c.vital, strict=True) if v} == o["vital"]
    assert set(zip(*(x.tolist() for x in c.true_love_pairs), strict=False)) == o["vital"]
    assert c.nu == o["nu"]
    di = np.zeros(len(M), int)
    dj = np.zeros(len(N), int)
    for i, j in o["allowed"]:
        di[i] += 1
        dj[j] += 1
    assert np.array_equal(c.union_degree_identified, di)
    assert np.array_equal(c.union_degree_deidentified, dj)
    if g.null_side == "deidentified":
        assert set(np.flatnonzero(c.null_allowed).tolist()) == o["null_allowed_identified"]
    if g.null_side == "identified":
        assert set(np.flatnonzero(c.null_allowed).tolist()) == o["null_allowed_deidentified"]


@settings(max_examples=300, deadline=None)
@given(instances())
def test_element_engine_equals_oracle(inst) -> None:
    _check(*inst, engine="elements")


@settings(max_examples=300, deadline=None)
@given(instances())
def test_twin_engine_equals_oracle(inst) -> None:
    _check(*inst, engine="twins")


def test_worked_example_a14() -> None:
    """docs/algorithms.md#a-five-location-example: m3–n3 is the only true love; REIDIT-I finds nothing there."""
    g = build_linkgraph(trails_from_dense(A14_M, A14_N, reserved="deidentified"))
    c = classify_edges(g)
    assert set(zip(*(x.tolist() for x in c.true_love_pairs), strict=False)) == {(2, 2)}
    assert c.union_degree_deidentified.tolist() == [2, 2, 1, 2]
    assert c.union_degree_identified.tolist() == [2, 2, 1, 0, 1, 1]
    assert g.n_null == 2 and set(np.flatnonzero(c.null_allowed).tolist()) == {3, 4, 5}
    assert c.hall_ok


def test_hall_violation_reported() -> None:
    # two de-identified trails that can only be the same identified person: the model is broken
    M = np.array([[1, 0], [0, 1]])
    N = np.array([[1, -1], [1, 0]])
    c = classify_edges(build_linkgraph(trails_from_dense(M, N, reserved="deidentified")))
    assert not c.hall_ok and len(c.unmatched) == 1


@pytest.mark.parametrize("seed", range(5))
def test_hk_equals_scipy_structural_rank(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nl, nr = 400, 300
    el = rng.integers(0, nl, 1500)
    er = rng.integers(0, nr, 1500)
    mate_l, mate_r, nu = maximum_matching(nl, nr, el, er)
    B = sp.csr_matrix((np.ones(len(el)), (el, er)), shape=(nl, nr))
    assert nu == int((maximum_bipartite_matching(B, perm_type="column") >= 0).sum())
    ok = mate_l >= 0
    assert np.all(mate_r[mate_l[ok]] == np.flatnonzero(ok))
    assert B[np.flatnonzero(ok), mate_l[ok]].min() > 0       # matched pairs are edges


def test_hk_layered_graph_is_fast() -> None:
    """scipy/scipy#26147: scipy's HK takes exponential time on ladders; ours is O(E·√V)."""
    levels = 2000
    el, er = [], []
    for lv in range(levels):            # every level: two left vertices adjacent to both right vertices
        for a in range(2):
            for b in range(2):
                el.append(2 * lv + a)
                er.append(2 * lv + b)
            if lv + 1 < levels:
                el.append(2 * lv + a)
                er.append(2 * (lv + 1))
    el.append(2 * levels)               # one extra left vertex hanging off the top
    er.append(0)
    _, _, nu = maximum_matching(2 * levels + 1, 2 * levels, np.array(el), np.array(er))
    assert nu == 2 * levels


def test_class_neighbour_lookup_equals_expanded_edges() -> None:
    from graphlink.core.trails import build_trails
    from graphlink.simulation.simulate import simulate_uniform

    g = build_linkgraph(build_trails(simulate_uniform(300, 6, 0.3, withhold=0.3, seed=1)))
    assert (g.id_class_size > 1).any()                                     # twins present
    for j in range(g.n_deidentified):
        assert set(g.neighbours_of_deidentified(j).tolist()) == set(g.ei[g.ej == j].tolist())
    for i in range(g.n_identified):
        assert set(g.neighbours_of_identified(i).tolist()) == set(g.ej[g.ei == i].tolist())
