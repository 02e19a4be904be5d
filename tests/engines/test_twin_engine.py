"""The numba twin-class engine (capacitated Hopcroft–Karp + residual Tarjan) against scipy's Dinic reference.

Allowed, vital, d_left and the class union-degrees are properties of the class graph alone (not of the
maximum flow found), so both engines must return them identically; the flows may differ but each must be a
valid maximum flow.  The element level is covered by the brute-force oracles of test_matching /
test_onetomany / test_lowentropy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.analysis.matching import twin_classify, twin_flow
from graphlink.kernels.flow import class_max_flow, group_pointers


@st.composite
def class_graphs(draw):
    """Random capacitated class graphs: empty sides, isolated classes, a huge class, every edge order."""
    n_a = draw(st.integers(0, 7))
    n_b = draw(st.integers(0, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.integers(1, draw(st.sampled_from([2, 3, 5])), n_a)
    b = rng.integers(1, draw(st.sampled_from([2, 3, 5])), n_b)
    if n_a and draw(st.booleans()):
        a[rng.integers(n_a)] = draw(st.sampled_from([50, 1000]))        # one huge class
    if n_b and draw(st.booleans()):
        b[rng.integers(n_b)] = draw(st.sampled_from([50, 1000]))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.9]))
    ci, cj = np.nonzero(rng.random((n_a, n_b)) < density)
    order = draw(st.sampled_from(["left", "right", "shuffled"]))
    if order == "right":
        o = np.lexsort((ci, cj))
    elif order == "shuffled":
        o = rng.permutation(len(ci))
    else:
        o = np.arange(len(ci))
    return a.astype(np.int64), b.astype(np.int64), ci[o].astype(np.int64), cj[o].astype(np.int64)


def _check_max_flow(a, b, ci, cj, flow, nu, nu_ref) -> None:
    assert nu == nu_ref
    assert np.all(flow >= 0) and np.all(flow <= np.minimum(a[ci], b[cj]))
    assert np.all(np.bincount(ci, weights=flow, minlength=len(a)) <= a)
    assert np.all(np.bincount(cj, weights=flow, minlength=len(b)) <= b)
    assert int(flow.sum()) == nu


def _same_as_scipy(a, b, ci, cj) -> None:
    ours = twin_classify(a, b, ci, cj)
    ref = twin_classify(a, b, ci, cj, method="scipy")
    _check_max_flow(a, b, ci, cj, ours["flow"], ours["nu"], ref["nu"])
    for key in ("allowed", "vital", "d_left", "degree_left", "degree_right"):
        assert np.array_equal(ours[key], ref[key]), key
    ok = ours["allowed"]
    assert np.array_equal(ours["degree_left"], np.bincount(ci[ok], weights=b[cj[ok]], minlength=len(a)))
    assert np.array_equal(ours["degree_right"], np.bincount(cj[ok], weights=a[ci[ok]], minlength=len(b)))
    assert twin_flow(a, b, ci, cj, classify=False)["nu"] == ref["nu"]


@settings(max_examples=400, deadline=None)
@given(class_graphs())
def test_numba_engine_equals_scipy_reference(g) -> None:
    _same_as_scipy(*g)


@pytest.mark.parametrize("seed", range(6))
def test_numba_engine_equals_scipy_on_larger_graphs(seed: int) -> None:
    """A few hundred classes, skewed sizes and degrees: several phases after the greedy start."""
    rng = np.random.default_rng(seed)
    n_a, n_b = int(rng.integers(100, 400)), int(rng.integers(100, 400))
    a = rng.geometric(0.5, n_a).astype(np.int64)
    b = rng.geometric(0.4, n_b).astype(np.int64)
    key = np.unique(rng.integers(0, n_a, 3 * n_a) * n_b + (rng.zipf(1.6, 3 * n_a) - 1) % n_b)
    ci, cj = key // n_b, key % n_b
    _same_as_scipy(a, b, ci, cj)
    o = np.lexsort((ci, cj))
    _same_as_scipy(a, b, ci[o], cj[o])


def test_degenerate_class_graphs() -> None:
    e = np.zeros(0, np.int64)
    r = twin_classify(e, e, e, e)
    assert r["nu"] == 0 and len(r["flow"]) == 0 and len(r["d_left"]) == 0
    r = twin_classify(np.array([3, 1]), np.array([2]), e, e)       # no edges: every left class can stay free
    assert r["nu"] == 0 and r["d_left"].tolist() == [True, True]
    # one huge left class against singletons: all matched, none vital, the huge class keeps free members
    r = twin_classify(np.array([1000]), np.ones(3, np.int64), np.zeros(3, np.int64), np.arange(3))
    assert r["nu"] == 3 and r["flow"].tolist() == [1, 1, 1] and not r["vital"].any() and r["d_left"].all()
    # singleton pair with nothing else: a true love; isolated classes around it change nothing
    r = twin_classify(np.array([1, 2]), np.array([4, 1]), np.array([0]), np.array([1]))
    assert r["vital"].tolist() == [True] and r["d_left"].tolist() == [False, True]


def test_unknown_method_rejected() -> None:
    with pytest.raises(ValueError, match="twin engine"):
        twin_classify(np.ones(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64),
                      method="dense")


def _ladder_with_detour(levels: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Layered trap for augmenting-path searches without dead-end removal.

    A ladder of levels + 1 rungs: right class R_k (size 2m) is filled by left classes A_k and B_k (size m each),
    and both also link to R_{k+1}, so the residual graph doubles the paths at every rung (2^levels of them down to
    the search depth), all dead ends.  A chain of ``levels`` links (l_k → r_{k-1} filled greedily, l_k → r_k
    free; sizes m) ends in r_levels, the only class with room.  One extra left class X (size m) lists the ladder
    before the chain, so the DFS enters the ladder first.  Every class ends saturated.
    Returns (a, b, ci, cj, ν), edges grouped by left class."""
    rungs = levels + 1
    ci, cj = [], []
    for k in range(rungs):                                  # A_k = 2k, B_k = 2k + 1; R_k = k
        for s in range(2):
            ci.append(2 * k + s)
            cj.append(k)
            if k + 1 < rungs:
                ci.append(2 * k + s)
                cj.append(k + 1)
    for k in range(1, levels + 1):                          # l_k = 2·rungs + k − 1; r_k = rungs + k
        ci += [2 * rungs + k - 1] * 2
        cj += [rungs + k - 1, rungs + k]
    x = 2 * rungs + levels
    ci += [x, x]
    cj += [0, rungs]
    a = np.full(x + 1, m, np.int64)
    b = np.concatenate([np.full(rungs, 2 * m), np.full(levels + 1, m)]).astype(np.int64)
    return a, b, np.array(ci, np.int64), np.array(cj, np.int64), int(b.sum())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("m", [1, 3])
def test_layered_trap_is_linear(m: int) -> None:
    """2^200 dead-end paths for a DFS without dead-end removal; the engine needs one phase of O(V + E)."""
    a, b, ci, cj, nu = _ladder_with_detour(200, m)
    ptr, grouped = group_pointers(ci, len(a))
    assert grouped
    f, _, y, value, phases = class_max_flow(a, b, ptr, cj)
    assert value == nu and phases >= 1 and not y.any()          # the DFS really ran, through the ladder
    for o in (np.arange(len(ci)), np.lexsort((ci, cj))):       # both orientations, against scipy's Dinic
        _same_as_scipy(a, b, ci[o], cj[o])
