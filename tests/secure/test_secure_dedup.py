"""Greedy-/Force-Dedup-Secure (Alg. 12/14) and Contributor-Clean (Alg. 13) as property tests on random small
releases; the Definition 19 checker against a brute-force enumeration of all maximum matchings."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.secure.api import release_sets
from graphlink.secure.dedup_secure import contributor_clean, run_secure_dedup
from graphlink.secure.unlinkability import audit_graph, central_view, contributor_view, external_view


def _brute_union(nl, nr, edges):
    best, union = 0, set()

    def rec(i, used, chosen):
        nonlocal best, union
        if i == nl:
            size = len(chosen)
            if size > best:
                best, union = size, set(chosen)
            elif size == best:
                union |= set(chosen)
            return
        rec(i + 1, used, chosen)
        for (a, b) in edges:
            if a == i and b not in used:
                rec(i + 1, used | {b}, chosen + [(a, b)])

    rec(0, frozenset(), [])
    return union


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2), st.integers(0, 10**9), st.integers(1, 3))
def test_audit_graph_matches_brute_force_definition_19(nl, nr, n_full, seed, k):
    rng = random.Random(seed)
    edges = sorted({(a, b) for a in range(nl) for b in range(nr) if rng.random() < 0.45})
    null_right = np.array([rng.random() < 0.25 for _ in range(nr)], bool)
    ei = np.array([a for a, _ in edges], np.int64)
    ej = np.array([b for _, b in edges], np.int64)
    got = audit_graph("t", k, list(range(nl)), list(range(nr)), ei, ej, null_right=null_right, n_full_null=n_full)
    # oracle: materialise the full null trails as explicit right vertices
    all_edges = edges + [(a, nr + t) for a in range(nl) for t in range(n_full)]
    is_null = list(null_right) + [True] * n_full
    union = _brute_union(nl, nr + n_full, all_edges)
    bad_l, bad_r = [], []
    for a in range(nl):
        es = [(x, y) for x, y in union if x == a]
        real = [e for e in es if not is_null[e[1]]]
        if real and len(es) < k:
            bad_l.append(a)
    for b in range(nr):
        if not is_null[b] and sum(1 for _, y in union if y == b) < k:
            bad_r.append(b)
    assert got.violations_left == bad_l
    assert got.violations_right == bad_r
    assert got.k_unlinkable == (not bad_l and not bad_r)


def _random_release(seed):
    from graphlink.simulation.simulate import simulate_uniform

    rng = random.Random(seed)
    return simulate_uniform(rng.randint(6, 30), rng.randint(2, 5), rng.uniform(0.3, 0.8),
                            withhold=rng.uniform(0.0, 0.6), seed=seed)


@pytest.mark.parametrize("method", ["greedy-dedup", "force-dedup"])
@pytest.mark.parametrize("k", [2, 3])
def test_secure_dedup_properties_on_random_releases(method, k):
    """Outputs ⊆ input, deduplicated, each location ≥ k or 0 (Lemma 16), protectors disjoint and ≥ the
    protectees; external and central k-unlinkability hold on these releases (checked exactly)."""
    for seed in range(40):
        rel = _random_release(seed)
        locs, g, o = release_sets(rel)
        G = {c: set(g[c]) for c in locs}
        O = {c: set(o[c]) for c in locs}
        res = run_secure_dedup(method, G, O, k, seed)
        seen, prot_seen = set(), set()
        for c in locs:
            ret = set(res.returns[c])
            assert ret <= O[c]
            assert not ret & seen
            seen |= ret
            assert len(ret) == 0 or len(ret) >= k
            assert len(res.protectors[c]) >= len(ret)
            assert set(res.protectors[c]) <= G[c] and not set(res.protectors[c]) & prot_seen
            prot_seen |= set(res.protectors[c])
        n_m = len(set().union(*G.values()))
        assert external_view(locs, G, {c: set(v) for c, v in res.returns.items()}, k, n_m).k_unlinkable
        assert central_view(locs, G, O, res.returns, k).k_unlinkable


def test_contributor_clean_keeps_only_values_the_adversary_holds_when_bound_below_k():
    gamma = {"i": {"a", "b", "c"}, "j": {"a", "b", "c", "d"}}
    h = {"i": {"x", "y"}, "j": {"x", "z"}}
    # i vs j: max(|γi∖γj|=0, |γi|−|h(ωj)|=1, |h(ωi)∖h(ωj)|=1) = 1 < 2 ⇒ θi = θi ∩ h(ωj) = {x}
    theta = contributor_clean(gamma, h, 2)
    assert theta["i"] == {"x"}
    assert contributor_clean(gamma, h, 1)["i"] == {"x", "y"}


def test_contributor_k_unlinkability_gap_in_theorem_8():
    """Finding: Contributor-Clean's pairwise bound (Theorem 8) does not guarantee contributor
    k-unlinkability — another location's disclosures can consume the protectors the pairwise bound
    counted. A concrete release where GDS passes Contributor-Clean yet location L03 re-identifies
    s000005 (documented in docs/secure.md)."""
    gamma = {"L01": {"p2", "p3", "p4", "p5", "p6"}, "L02": {"p1", "p2", "p3", "p4", "p7"},
             "L03": {"p1", "p4", "p6", "p7"}, "L04": {"p2", "p4", "p5"}}
    disclosed = {"L01": {"s5", "s6"}, "L02": {"s2", "s3"}, "L03": {"s1", "s4", "s7"}, "L04": set()}
    omega = {"L01": {"s2", "s3", "s4", "s5", "s6"}, "L02": {"s1", "s2", "s3", "s4", "s7"},
             "L03": {"s1", "s4", "s6", "s7"}, "L04": {"s4", "s5"}}
    locs = list(gamma)
    assert contributor_clean(gamma, omega, 2)["L01"] == omega["L01"]  # the pairwise check lets L01 through
    tau3 = {f"p{i}": f"s{i}" for i in (1, 4, 6, 7)}
    ext = external_view(locs, gamma, disclosed, 2, 7)
    w3 = contributor_view(locs, gamma, disclosed, 2, tau3, 7)
    assert ext.k_unlinkable and not w3.k_unlinkable
    assert ("p5", "s5") in w3.reidentified
