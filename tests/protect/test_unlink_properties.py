"""Property tests on random small releases: unlinking outputs are subsets of the input, pass the exact
audit, and the core audit agrees with a brute-force enumeration of all maximum matchings (Definition 19).
Also: the exact family optimum (graphlink.protect.optimal) against brute force over the family and the heuristics.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlink.core.release import read_release
from graphlink.protect import METHODS, Instance, allocate, audit_release, unlink
from graphlink.protect.optimal import optimal_dedup
from tests.unlink_oracle import is_k_unlinkable

#: the methods that allocate disclosures per location (the Dedup family); keep-most (a whole-release method, its own
#: tests in tests/protect/test_unlink_keep.py) is not one of them
DEDUP = tuple(m for m in METHODS if __import__("graphlink.registry", fromlist=["get"]).get(m).input == "instance")


@st.composite
def small_releases(draw, max_people: int = 6, max_locations: int = 4):
    """One-to-one releases: person i is identified ``p{i}`` and de-identified ``s{i}``; the de-identified
    record is disclosed at a subset of the visited locations (reserved) or at all of them (unreserved)."""
    n = draw(st.integers(2, max_people))
    L = draw(st.integers(1, max_locations))
    visits = np.array(draw(st.lists(st.lists(st.booleans(), min_size=L, max_size=L), min_size=n, max_size=n)))
    reserved = draw(st.booleans())
    shown = visits.copy()
    if reserved:
        shown &= np.array(draw(st.lists(st.lists(st.booleans(), min_size=L, max_size=L), min_size=n,
                                        max_size=n)))
    rows = []
    for c in range(L):
        rows += [(f"H{c}", "identified", f"p{i}") for i in range(n) if visits[i, c]]
        rows += [(f"H{c}", "deidentified", f"s{i}") for i in range(n) if shown[i, c]]
    if not rows:
        rows = [("H0", "identified", "p0")]
    return pd.DataFrame(rows, columns=["location", "kind", "element"])


def _deid_pairs(frame: pd.DataFrame) -> set:
    d = frame[frame.kind == "deidentified"]
    return set(zip(d.location, d.element, strict=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(), k=st.integers(1, 4), seed=st.integers(0, 3))
def test_unlink_outputs_are_certified_subsets(frame, k, seed):
    release = read_release(frame)
    for method in DEDUP:
        result = unlink(release, k, method, seed, audit_before=False, multiplicity="one-to-one")
        out = result.release.frame
        assert result.certified
        assert _deid_pairs(out) <= _deid_pairs(release.frame)
        ident = release.frame[release.frame.kind == "identified"].reset_index(drop=True)
        pd.testing.assert_frame_equal(out[out.kind == "identified"].reset_index(drop=True), ident)
        assert is_k_unlinkable(out, k)                 # brute force agrees with the certificate
        # Theorem 6 under our reading: deduplicated family members never need a repair or Final-Clean
        assert not result.repair_withheld and not result.allocation.final_clean_withheld


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(), k=st.integers(1, 4), data=st.data())
def test_core_audit_agrees_with_brute_force_definition_19(frame, k, data):
    """On the input and on random suppressions of it (Definition 21), core audit == enumeration."""
    release = read_release(frame)
    deid = frame[frame.kind == "deidentified"]
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(deid), max_size=len(deid))), bool)
    sub = pd.concat([frame[frame.kind == "identified"], deid[keep]])
    for f in (frame, sub):
        rel = read_release(f)
        if (rel.sizes()["deidentified"] > rel.sizes()["identified"]).any():
            continue
        res, _ = audit_release(rel, k, "deidentified")
        assert res.k_unlinkable == is_k_unlinkable(rel.frame, k)
    assert release is not None


# ------------------------------------------------------------------------------------------------ optimum

def _family_feasible(gamma: dict, counts: dict, k: int) -> bool:
    """Disjoint protectors P_c ⊆ γ_c with |P_c| ≥ max(k, X_c) for every disclosing c (b-matching, networkx)."""
    g = nx.DiGraph()
    need = 0
    for c, x in counts.items():
        if x == 0:
            continue
        d = max(k, x)
        need += d
        g.add_edge("s", ("c", c), capacity=d)
        for m in gamma[c]:
            g.add_edge(("c", c), ("m", m), capacity=1)
            g.add_edge(("m", m), "t", capacity=1)
    if need == 0:
        return True
    if "t" not in g:
        return False
    return nx.maximum_flow_value(g, "s", "t") == need


def _brute_force_family(frame: pd.DataFrame, k: int) -> tuple[int, int]:
    """Max records and max locations over every deduplicated assignment (element -> one location or none)."""
    locs = list(pd.unique(frame.location))
    gamma = {c: set(frame[(frame.location == c) & (frame.kind == "identified")].element) for c in locs}
    de = frame[frame.kind == "deidentified"]
    elems = list(pd.unique(de.element))
    options = [[None, *sorted(de[de.element == e].location)] for e in elems]
    best_r = best_l = 0
    for choice in itertools.product(*options):
        counts = {c: 0 for c in locs}
        for c in choice:
            if c is not None:
                counts[c] += 1
        r = sum(counts.values())
        nl = sum(1 for v in counts.values() if v)
        if (r <= best_r and nl <= best_l) or not _family_feasible(gamma, counts, k):
            continue
        best_r, best_l = max(best_r, r), max(best_l, nl)
    return best_r, best_l


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(max_people=5, max_locations=3), k=st.integers(1, 3))
def test_optimal_matches_brute_force_family_and_bounds_heuristics(frame, k):
    release = read_release(frame)
    inst = Instance.from_frame(release.frame)
    best_r = optimal_dedup(inst, k, "records")
    best_l = optimal_dedup(inst, k, "locations")
    assert best_r.optimal and best_l.optimal
    bf_r, bf_l = _brute_force_family(release.frame, k)
    assert best_r.records == bf_r and best_l.locations_disclosing == bf_l
    # the null-trail condition is implied by the family constraints (see graphlink.protect.optimal)
    assert optimal_dedup(inst, k, "records", null_condition=True).records == bf_r
    for opt in (best_r, best_l):
        from graphlink.protect import apply_disclosure
        assert is_k_unlinkable(apply_disclosure(release, opt.disclosed).frame, k)
    for method in DEDUP:
        a = allocate(inst, k, method, 0)
        assert a.n_disclosed() <= best_r.records
        assert a.locations_disclosing() <= best_l.locations_disclosing


def _b_matching(sets: dict, demand: int) -> bool:
    """Every location of ``sets`` gets ``demand`` elements of its own set, no element to two locations (networkx
    max flow, written from the definition)."""
    g = nx.DiGraph()
    for c, members in sets.items():
        g.add_edge("s", ("c", c), capacity=demand)
        for m in members:
            g.add_edge(("c", c), ("m", m), capacity=1)
            g.add_edge(("m", m), "t", capacity=1)
    return "t" in g and nx.maximum_flow_value(g, "s", "t") == demand * len(sets)


@settings(max_examples=60, deadline=None)
@given(frame=small_releases(max_people=6, max_locations=4), k=st.integers(1, 3), data=st.data())
def test_flow_dedup_feasibility_is_the_b_matching_of_its_definition(frame, k, data):
    """Flow-Dedup's feasibility test (two b-matchings on the capacitated Hopcroft–Karp of graphlink.kernels.flow):
    k disjoint protectors and one protectee of its own for every chosen location."""
    from graphlink.protect.flow import feasible_locations

    release = read_release(frame)
    inst = Instance.from_frame(release.frame)
    locs = sorted(data.draw(st.sets(st.integers(0, inst.n_locations - 1))))
    gamma = {c: set(inst.gamma(c).tolist()) for c in locs}
    omega = {c: set(inst.omega(c).tolist()) for c in locs}
    expected = not locs or (_b_matching(gamma, k) and _b_matching(omega, 1))
    assert feasible_locations(inst, locs, k) == expected
