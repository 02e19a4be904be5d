"""Greedy-Dedup (thesis Algorithm 7), Force-Dedup (Algorithm 10) and Flow-Dedup (ours, after §7.4).

Each engine runs on an :class:`~graphlink.protect.instance.Instance` and returns an :class:`IntAllocation`
(per location: the de-identified codes it discloses and its protector codes, plus the allocation steps).
:func:`graphlink.protect.allocate.allocate` picks the engine, applies Final-Clean and maps codes back to keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphlink.catalog import PROTECT_METHODS
from graphlink.protect.flow import assign_given_locations, feasible_locations
from graphlink.protect.instance import Instance, gather
from graphlink.protect.procedures import State

#: the protection methods registered when this module was imported (:mod:`graphlink.registry`: each one's spec
#: names its function below and whether Final-Clean ends it)
METHODS = PROTECT_METHODS
FLOW_LP_LIMIT = 600_000   # Flow-Dedup solves its exact LP only up to this many variables (Σ|γ_c| + Σ|ω_c|)


@dataclass
class IntAllocation:
    """An allocation in element codes: per location the disclosed and protector code arrays of each step."""

    disclosed: list[list[np.ndarray]]
    protectors: list[list[np.ndarray]]
    steps: list[tuple[int, str, int, int]]

    @classmethod
    def empty(cls, n_loc: int) -> IntAllocation:
        return cls([[] for _ in range(n_loc)], [[] for _ in range(n_loc)], [])

    def add(self, c: int, phase: str, de: np.ndarray, prot: np.ndarray) -> None:
        self.disclosed[c].append(de)
        self.protectors[c].append(prot)
        self.steps.append((c, phase, len(de), len(prot)))

    def disclosed_arrays(self) -> list[np.ndarray]:
        return [np.concatenate(v) if v else np.zeros(0, np.int64) for v in self.disclosed]

    def protector_arrays(self) -> list[np.ndarray]:
        return [np.concatenate(v) if v else np.zeros(0, np.int64) for v in self.protectors]


def _greedy(inst: Instance, k: int, seed: int | None) -> IntAllocation:
    """Greedy-Dedup (Algorithm 7) on the integer engine.  O(|C|² + rows·log rows)."""
    st = State(inst, seed)
    out = IntAllocation.empty(inst.n_locations)
    st.explicit_clean(k)                                            # line 3
    while st.active.any():                                          # line 4: some γ'_c non-null
        p = st.pick_location(st.active)                             # line 5
        a = int(min(st.wsize[p], st.gsize[p]))
        de = st.least_frequent_de(p, a)                             # line 6
        prot = st.least_frequent_id(p, max(a, k))                   # line 7
        out.add(p, "greedy", de, prot)
        st.reduce(prot, de)                                         # line 8
        st.explicit_clean(k)                                        # line 9
        if st.active[p]:                                            # p is exhausted by construction
            only = np.zeros(inst.n_locations, bool)
            only[p] = True
            st.wsize[p] = 0
            st.explicit_clean(k, only)
    return out


def _force(inst: Instance, k: int, seed: int | None) -> IntAllocation:
    """Force-Dedup (Algorithm 10, force and boost phases) on the integer engine.  O(|C|² + rows·log rows).

    Force phase: repeatedly take the available location with the fewest remaining protectors (≥ k) and
    give it min(|ω_p|, k) protectees and exactly k protectors; Explicit-Clean is applied to the
    locations not yet allocated (as Algorithm 14 line 12 does; Algorithm 10 as printed omits it, which
    would let a location with no protectees left consume k protectors).  Boost phase: each allocated
    location, fewest remaining protectors first, gets a = min(|ω_p|, |γ'_p|) further protectees and a
    further protectors.  Final-Clean is applied by the caller.
    """
    st = State(inst, seed)
    out = IntAllocation.empty(inst.n_locations)
    st.explicit_clean(k)
    avail = np.ones(inst.n_locations, bool)
    while True:                                                     # FORCE PHASE
        cand = avail & st.active & (st.gsize >= k) & (st.wsize > 0)
        if not cand.any():
            break
        p = st.pick_location(cand)
        avail[p] = False
        de = st.least_frequent_de(p, int(min(st.wsize[p], k)))
        prot = st.least_frequent_id(p, k)
        out.add(p, "force", de, prot)
        st.reduce(prot, de)
        st.explicit_clean(k, avail)
    allocated = ~avail
    boosted = np.zeros(inst.n_locations, bool)
    while True:                                                     # BOOST PHASE
        cand = allocated & ~boosted & st.active & (np.minimum(st.gsize, st.wsize) > 0)
        if not cand.any():
            break
        p = st.pick_location(cand)
        boosted[p] = True
        a = int(min(st.wsize[p], st.gsize[p]))
        de = st.least_frequent_de(p, a)
        prot = st.least_frequent_id(p, a)
        out.add(p, "boost", de, prot)
        st.reduce(prot, de)
    return out


def _flow(inst: Instance, k: int, seed: int | None) -> IntAllocation:
    """Flow-Dedup: protectors not tied to one location in advance (thesis §7.4), assigned by optimisation.

    1. Start from the locations Force-Dedup lets disclose (same seed).
    2. Try to add every other location (fewest identified first): keep it if each chosen location can
       still get k disjoint protectors and one protectee of its own (two bipartite b-matchings, max-flow).
    3. For the chosen set U, solve exactly the max number of deduplicated records subject to the same
       family constraints (disjoint protectors, |P_c| ≥ max(k, |ω'_c|), |ω'_c| ≥ 1 for c ∈ U): a network
       flow with lower bounds, solved as an LP/MILP with HiGHS (integral: the matrix is a network matrix).
    The result is in the thesis's solution family, so Lemmas 8-12 apply, and it is certified anyway.
    Complexity: |C| max-flow feasibility checks of O(E·√V) plus one LP on Σ|γ_c| + Σ|ω_c| variables; above
    ``FLOW_LP_LIMIT`` variables the LP is skipped and Force-Dedup's allocation is returned (the steps say so).
    """
    force = _force(inst, k, seed)
    chosen = [c for c in range(inst.n_locations) if any(len(d) for d in force.disclosed[c])]
    order = np.lexsort((np.random.default_rng(seed).permutation(inst.n_locations), np.diff(inst.g_ptr)))
    chosen_set = set(chosen)
    for c in order:
        c = int(c)
        if c in chosen_set or np.diff(inst.g_ptr)[c] < k or np.diff(inst.w_ptr)[c] == 0:
            continue
        if feasible_locations(inst, sorted(chosen_set | {c}), k):
            chosen_set.add(c)
    out = IntAllocation.empty(inst.n_locations)
    if chosen_set == set(chosen):
        # Force-Dedup's allocation is optimal for its locations if it reaches the trivial upper bound
        # min(|∪ω_c|, |∪γ_c|) over the chosen locations: keep it and skip the LP.
        sel = np.asarray(chosen, np.int64)
        n_de = len(np.unique(gather(inst.w_ptr, inst.w_idx, sel))) if len(sel) else 0
        n_id = len(np.unique(gather(inst.g_ptr, inst.g_idx, sel))) if len(sel) else 0
        if sum(len(d) for ds in force.disclosed for d in ds) >= min(n_de, n_id):
            for c, ds in enumerate(force.disclosed):
                for d, p in zip(ds, force.protectors[c], strict=True):
                    out.add(c, "flow", d, p)
            return out
    sel = np.asarray(sorted(chosen_set), np.int64)
    n_vars = int(np.diff(inst.w_ptr)[sel].sum() + np.diff(inst.g_ptr)[sel].sum())
    if n_vars > FLOW_LP_LIMIT:
        # Too large for the exact LP on this machine: keep Force-Dedup's allocation (still in the family,
        # still certified) and say so in the allocation steps.
        for c, ds in enumerate(force.disclosed):
            for d, p in zip(ds, force.protectors[c], strict=True):
                out.add(c, "force (flow LP skipped: size)", d, p)
        return out
    disclosed, protectors = assign_given_locations(inst, sorted(chosen_set), k)
    for c in sorted(chosen_set):
        out.add(c, "flow", disclosed[c], protectors[c])
    return out
