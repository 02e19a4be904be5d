"""Suppression-based trail unlinking: Greedy-Dedup, Force-Dedup and Flow-Dedup (thesis ch. 7).

Problem (Definition 21, k-unlinkable trails via suppression in one matrix): the identified databases
Γ = {γ_c} are published untouched; each location c may only *withhold* de-identified records, disclosing
ω'_c ⊆ ω_c, so that the link graph of Γ and Ω' is k-unlinkable (Definition 19: every vertex has at least
k edges in the union of all maximum matchings, or all its union edges go to null trails).

The thesis heuristics build *deduplicated* solutions (Lemmas 8-12): every disclosed element is disclosed
by exactly one location, and each disclosing location c is given a private set P_c ⊆ γ_c of *protectors*
(identified elements), disjoint across locations, with |P_c| ≥ max(k, |ω'_c|).  Each ω'_c then forms a
complete bipartite block with P_c, so every disclosed element has ≥ k allowed partners.

Public building blocks (also used by the secure STRANON half, ``graphlink/secure``), all on plain
per-location sets so they work on encrypted tokens as well as on element keys:

* :func:`explicit_clean` — Procedure 8,
* :func:`reduce_databases` — Procedure 9 (``Reduce``),
* :func:`least_frequent` — the least-frequent-first ("maximum likelihood") selection with seeded ties,
* :func:`greedy_dedup_sets`, :func:`force_dedup_sets`, :func:`flow_dedup_sets` — Algorithms 7, 10 and
  the §7.4-inspired third method, returning :class:`Allocation`,
* :func:`final_clean` — the null-trail correction of Algorithm 10 line 19 (the thesis names but never
  prints it; our reading is documented on the function).

:func:`unlink` runs a method on a :class:`~graphlink.release.Release`, writes the suppressed release and
**certifies it with the core's exact audit** (:func:`graphlink.audit.audit`, union of all maximum
matchings).  If the audit finds a violation (the thesis's proof has gaps, e.g. Lemma 13), more records are
withheld until it passes and the result says so (``repair_withheld``).  A release returned by
:func:`unlink` is always certified k-unlinkable.

Utility metrics (§7.2.1): records withheld (eq. 7.1, distinct de-identified elements not disclosed),
locations left with nothing to disclose (eq. 7.2), distinct de-identified elements still disclosed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from graphlink.errors import ModelAssumptionError, ReleaseError

METHODS = ("greedy-dedup", "force-dedup", "flow-dedup")
FLOW_LP_LIMIT = 600_000   # Flow-Dedup solves its exact LP only up to this many variables (Σ|γ_c| + Σ|ω_c|)

Sets = Mapping[Hashable, Iterable[Hashable]]


# ---------------------------------------------------------------------------------------------------
# Set-level public primitives (Procedures 8 and 9, least-frequent selection)
# ---------------------------------------------------------------------------------------------------

def explicit_clean(gamma: Mapping[Hashable, set], omega: Mapping[Hashable, set], k: int,
                   only: Iterable[Hashable] | None = None) -> tuple[dict, dict]:
    """Explicit-Clean (thesis Procedure 8): empty every location that cannot disclose safely.

    A location with fewer than ``k`` remaining protectors (|γ_c| < k) or with nothing left to protect
    (|ω_c| = 0) gets γ_c ← ∅ and ω_c ← ∅: any protectee it disclosed would be linked to fewer than k
    identities.  ``only`` restricts the check to some locations (Force-Dedup's force phase applies it to
    the not-yet-allocated locations only).  Returns new dicts of sets; inputs are not modified.
    O(|C| + Σ|γ_c| + Σ|ω_c|) (copying).
    """
    check = set(gamma) if only is None else set(only)
    g = {c: set(v) for c, v in gamma.items()}
    w = {c: set(omega.get(c, ())) for c in gamma}
    for c in check:
        if len(g.get(c, ())) < k or len(w.get(c, ())) == 0:
            g[c] = set()
            w[c] = set()
    return g, w


def reduce_databases(gamma_suppress: Iterable[Hashable], omega_suppress: Iterable[Hashable],
                     gamma: Mapping[Hashable, set], omega: Mapping[Hashable, set]) -> tuple[dict, dict]:
    """Reduce (thesis Procedure 9): remove allocated protectors / protectees from every location.

    γ_j ← γ_j \\ GammaSuppress and ω_j ← ω_j \\ OmegaSuppress for every location j, so an allocated
    element is never allocated again (this is what makes the output deduplicated, Lemma 8 / Corollary 4).
    Returns new dicts of sets.  O(Σ|γ_j| + Σ|ω_j|).
    """
    gs, ws = set(gamma_suppress), set(omega_suppress)
    return ({c: set(v) - gs for c, v in gamma.items()}, {c: set(v) - ws for c, v in omega.items()})


def least_frequent(candidates: Iterable[Hashable], databases: Mapping[Hashable, set], count: int,
                   rng: np.random.Generator | None = None) -> list[Hashable]:
    """The thesis's allocation rule: ``count`` candidates that appear in the fewest ``databases``.

    An element in fewer databases has the lowest probability of being observed in a randomly chosen
    submission (§7.3.1, "maximum likelihood estimation").  Ties are broken by a random order drawn from
    ``rng`` (seeded: the thesis reports means over 25 runs), or by sorted order when ``rng`` is None.
    O(Σ|databases| + n log n).
    """
    cand = list(dict.fromkeys(candidates))
    if count <= 0 or not cand:
        return []
    freq: dict[Hashable, int] = dict.fromkeys(cand, 0)
    for elems in databases.values():
        for e in elems:
            if e in freq:
                freq[e] += 1
    if rng is None:
        tie = {e: i for i, e in enumerate(sorted(cand, key=repr))}
    else:
        perm = rng.permutation(len(cand))
        tie = {e: int(perm[i]) for i, e in enumerate(cand)}
    return sorted(cand, key=lambda e: (freq[e], tie[e]))[:count]


# ---------------------------------------------------------------------------------------------------
# Allocation result
# ---------------------------------------------------------------------------------------------------

@dataclass
class Allocation:
    """A deduplicated allocation: what each location discloses (ω'_c) and its protectors (P_c ⊆ γ_c).

    ``final_clean_withheld`` counts records Final-Clean withdrew after allocation; ``steps`` is the
    allocation order (location, phase, protectees added, protectors added) for explanations.
    """

    locations: list[Hashable]
    disclosed: dict[Hashable, list[Hashable]]
    protectors: dict[Hashable, list[Hashable]]
    method: str
    k: int
    seed: int | None
    steps: list[tuple[Hashable, str, int, int]] = field(default_factory=list)
    final_clean_withheld: list[Hashable] = field(default_factory=list)

    def n_disclosed(self) -> int:
        return sum(len(v) for v in self.disclosed.values())

    def locations_disclosing(self) -> int:
        return sum(1 for v in self.disclosed.values() if v)


# ---------------------------------------------------------------------------------------------------
# Integer engine: the same procedures with incremental counts (used on real releases)
# ---------------------------------------------------------------------------------------------------

def _csr(rows: np.ndarray, cols: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return indptr, cols[order].astype(np.int64)


@dataclass
class Instance:
    """Per-location sets in integer form: γ_c (identified) and ω_c (de-identified).

    ``g_ptr/g_idx``: CSR location → identified element codes; ``w_ptr/w_idx``: location → de-identified
    codes; ``gl_ptr/gl_idx`` and ``wl_ptr/wl_idx``: the transposes (element → locations).
    """

    locations: list[Hashable]
    id_keys: np.ndarray
    de_keys: np.ndarray
    g_ptr: np.ndarray
    g_idx: np.ndarray
    w_ptr: np.ndarray
    w_idx: np.ndarray
    gl_ptr: np.ndarray
    gl_idx: np.ndarray
    wl_ptr: np.ndarray
    wl_idx: np.ndarray

    @property
    def n_locations(self) -> int:
        return len(self.locations)

    @property
    def n_identified(self) -> int:
        return len(self.id_keys)

    @property
    def n_deidentified(self) -> int:
        return len(self.de_keys)

    def gamma(self, c: int) -> np.ndarray:
        return self.g_idx[self.g_ptr[c]:self.g_ptr[c + 1]]

    def omega(self, c: int) -> np.ndarray:
        return self.w_idx[self.w_ptr[c]:self.w_ptr[c + 1]]

    @classmethod
    def from_pairs(cls, locations: list[Hashable], id_loc: np.ndarray, id_code: np.ndarray, id_keys: Any,
                   de_loc: np.ndarray, de_code: np.ndarray, de_keys: Any) -> Instance:
        n_loc = len(locations)
        id_keys = np.asarray(id_keys, dtype=object)
        de_keys = np.asarray(de_keys, dtype=object)
        id_loc, id_code = np.asarray(id_loc, np.int64), np.asarray(id_code, np.int64)
        de_loc, de_code = np.asarray(de_loc, np.int64), np.asarray(de_code, np.int64)
        g_ptr, g_idx = _csr(id_loc, id_code, n_loc)
        w_ptr, w_idx = _csr(de_loc, de_code, n_loc)
        gl_ptr, gl_idx = _csr(id_code, id_loc, len(id_keys))
        wl_ptr, wl_idx = _csr(de_code, de_loc, len(de_keys))
        return cls(list(locations), id_keys, de_keys, g_ptr, g_idx, w_ptr, w_idx, gl_ptr, gl_idx,
                   wl_ptr, wl_idx)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, locations: list[Hashable] | None = None) -> Instance:
        """From the long release table (location, kind, element).  O(rows)."""
        if locations is None:
            locations = list(pd.unique(frame["location"]))
        loc_index = pd.Index(locations)
        parts = []
        for kind in ("identified", "deidentified"):
            part = frame[frame["kind"] == kind].drop_duplicates(["location", "element"])
            codes, keys = pd.factorize(part["element"], sort=False)
            parts.append((loc_index.get_indexer(part["location"]), codes, np.asarray(keys, dtype=object)))
        (il, ic, ik), (dl, dc, dk) = parts
        return cls.from_pairs(locations, il, ic, ik, dl, dc, dk)

    @classmethod
    def from_sets(cls, gamma: Sets, omega: Sets) -> Instance:
        """From ``{location: identified elements}`` and ``{location: de-identified elements}``."""
        locations = list(dict.fromkeys([*gamma.keys(), *omega.keys()]))
        rows = [(c, kind, e) for kind, sets in (("identified", gamma), ("deidentified", omega))
                for c in locations for e in sets.get(c, ())]
        frame = pd.DataFrame(rows, columns=["location", "kind", "element"])
        return cls.from_frame(frame, locations)


class _State:
    """Working copies Γ' and Ω of Algorithms 7/10 with O(1) size queries.

    ``alive_*`` is False once Reduce removed an element everywhere; ``active[c]`` is False once
    Explicit-Clean emptied location c.  |γ'_c| = #alive members of γ_c when active, else 0; element
    frequencies count the active databases that still hold the element.
    """

    def __init__(self, inst: Instance, seed: int | None) -> None:
        self.inst = inst
        rng = np.random.default_rng(seed)
        self.tie_loc = rng.permutation(inst.n_locations)
        self.tie_id = rng.permutation(inst.n_identified)
        self.tie_de = rng.permutation(inst.n_deidentified)
        self.alive_id = np.ones(inst.n_identified, bool)
        self.alive_de = np.ones(inst.n_deidentified, bool)
        self.active = np.ones(inst.n_locations, bool)
        self.gsize = np.diff(inst.g_ptr).astype(np.int64)
        self.wsize = np.diff(inst.w_ptr).astype(np.int64)
        self.freq_id = np.diff(inst.gl_ptr).astype(np.int64)
        self.freq_de = np.diff(inst.wl_ptr).astype(np.int64)

    # Procedure 9
    def reduce(self, protectors: np.ndarray, protectees: np.ndarray) -> None:
        """Reduce: drop allocated elements from every location.  O(Σ locations of the elements)."""
        inst = self.inst
        for elems, alive, ptr, idx, size in ((protectors, self.alive_id, inst.gl_ptr, inst.gl_idx, self.gsize),
                                             (protectees, self.alive_de, inst.wl_ptr, inst.wl_idx, self.wsize)):
            elems = np.asarray(elems, np.int64)
            elems = elems[alive[elems]]
            if len(elems) == 0:
                continue
            alive[elems] = False
            locs = _gather(ptr, idx, elems)
            locs = locs[self.active[locs]]
            size -= np.bincount(locs, minlength=len(size))

    # Procedure 8
    def explicit_clean(self, k: int, only: np.ndarray | None = None) -> None:
        """Explicit-Clean on the active locations (optionally restricted by mask ``only``).  O(Σ|γ_c|+|ω_c|)."""
        bad = self.active & ((self.gsize < k) | (self.wsize == 0))
        if only is not None:
            bad &= only
        if not bad.any():
            return
        inst = self.inst
        for c in np.flatnonzero(bad):
            g = inst.gamma(c)
            self.freq_id[g[self.alive_id[g]]] -= 1
            w = inst.omega(c)
            self.freq_de[w[self.alive_de[w]]] -= 1
        self.active[bad] = False
        self.gsize[bad] = 0
        self.wsize[bad] = 0

    def pick_location(self, mask: np.ndarray) -> int:
        """argmin |γ'_c| over ``mask``, ties by the seeded location order."""
        cand = np.flatnonzero(mask)
        order = np.lexsort((self.tie_loc[cand], self.gsize[cand]))
        return int(cand[order[0]])

    def least_frequent_id(self, c: int, count: int) -> np.ndarray:
        g = self.inst.gamma(c)
        g = g[self.alive_id[g]]
        return g[np.lexsort((self.tie_id[g], self.freq_id[g]))[:max(count, 0)]]

    def least_frequent_de(self, c: int, count: int) -> np.ndarray:
        w = self.inst.omega(c)
        w = w[self.alive_de[w]]
        return w[np.lexsort((self.tie_de[w], self.freq_de[w]))[:max(count, 0)]]


def _gather(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenate CSR rows ``rows`` (vectorised)."""
    starts, ends = ptr[rows], ptr[rows + 1]
    lens = ends - starts
    if lens.sum() == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return idx[np.arange(lens.sum()) + offs]


@dataclass
class _IntAllocation:
    disclosed: list[list[np.ndarray]]
    protectors: list[list[np.ndarray]]
    steps: list[tuple[int, str, int, int]]

    @classmethod
    def empty(cls, n_loc: int) -> _IntAllocation:
        return cls([[] for _ in range(n_loc)], [[] for _ in range(n_loc)], [])

    def add(self, c: int, phase: str, de: np.ndarray, prot: np.ndarray) -> None:
        self.disclosed[c].append(de)
        self.protectors[c].append(prot)
        self.steps.append((c, phase, len(de), len(prot)))

    def disclosed_arrays(self) -> list[np.ndarray]:
        return [np.concatenate(v) if v else np.zeros(0, np.int64) for v in self.disclosed]

    def protector_arrays(self) -> list[np.ndarray]:
        return [np.concatenate(v) if v else np.zeros(0, np.int64) for v in self.protectors]


def _greedy(inst: Instance, k: int, seed: int | None) -> _IntAllocation:
    """Greedy-Dedup (Algorithm 7) on the integer engine.  O(|C|² + rows·log rows)."""
    st = _State(inst, seed)
    out = _IntAllocation.empty(inst.n_locations)
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


def _force(inst: Instance, k: int, seed: int | None) -> _IntAllocation:
    """Force-Dedup (Algorithm 10, force and boost phases) on the integer engine.  O(|C|² + rows·log rows).

    Force phase: repeatedly take the available location with the fewest remaining protectors (≥ k) and
    give it min(|ω_p|, k) protectees and exactly k protectors; Explicit-Clean is applied to the
    locations not yet allocated (as Algorithm 14 line 12 does; Algorithm 10 as printed omits it, which
    would let a location with no protectees left consume k protectors).  Boost phase: each allocated
    location, fewest remaining protectors first, gets a = min(|ω_p|, |γ'_p|) further protectees and a
    further protectors.  Final-Clean is applied by the caller.
    """
    st = _State(inst, seed)
    out = _IntAllocation.empty(inst.n_locations)
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


def _at_risk(inst: Instance, counts: np.ndarray, z: int, k: int) -> np.ndarray:
    """Identified elements m with 1 ≤ r(m) < k − z, r(m) = Σ_{c ∋ m} |ω'_c| (see :func:`final_clean`)."""
    loc_of = np.repeat(np.arange(inst.n_locations), np.diff(inst.g_ptr))
    r = np.bincount(inst.g_idx, weights=counts[loc_of], minlength=inst.n_identified)
    return np.flatnonzero((r >= 1) & (r < k - z))


def _final_clean(inst: Instance, alloc: _IntAllocation, k: int, seed: int | None) -> list[int]:
    """Final-Clean on the integer engine; returns the de-identified codes it withdrew."""
    disclosed = alloc.disclosed_arrays()
    counts = np.array([len(d) for d in disclosed], dtype=np.int64)
    z = inst.n_identified - int(counts.sum())
    rng = np.random.default_rng(None if seed is None else seed + 7919)
    tie_loc = rng.permutation(inst.n_locations)
    freq_de = np.diff(inst.wl_ptr)
    withdrawn: list[int] = []
    while z < k - 1 and len(_at_risk(inst, counts, z, k)):
        cand = np.flatnonzero(counts > 0)
        if len(cand) == 0:
            break
        # withdraw from the largest allocation (keeps small locations disclosing), most-frequent element
        c = int(cand[np.lexsort((tie_loc[cand], -counts[cand]))[0]])
        d = disclosed[c]
        j = int(np.lexsort((np.arange(len(d)), -freq_de[d]))[0])
        withdrawn.append(int(d[j]))
        disclosed[c] = np.delete(d, j)
        counts[c] -= 1
        z += 1
    alloc.disclosed = [[d] if len(d) else [] for d in disclosed]
    return withdrawn


def _flow(inst: Instance, k: int, seed: int | None) -> _IntAllocation:
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
    from graphlink.optimal import assign_given_locations, feasible_locations

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
    out = _IntAllocation.empty(inst.n_locations)
    if chosen_set == set(chosen):
        # Force-Dedup's allocation is optimal for its locations if it reaches the trivial upper bound
        # min(|∪ω_c|, |∪γ_c|) over the chosen locations: keep it and skip the LP.
        sel = np.asarray(chosen, np.int64)
        n_de = len(np.unique(_gather(inst.w_ptr, inst.w_idx, sel))) if len(sel) else 0
        n_id = len(np.unique(_gather(inst.g_ptr, inst.g_idx, sel))) if len(sel) else 0
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


_ENGINES: dict[str, Callable[[Instance, int, int | None], _IntAllocation]] = {
    "greedy-dedup": _greedy, "force-dedup": _force, "flow-dedup": _flow}
_FINAL_CLEAN = {"greedy-dedup": False, "force-dedup": True, "flow-dedup": True}


def allocate(inst: Instance, k: int, method: str = "force-dedup", seed: int | None = 0,
             final_clean_step: bool | None = None) -> Allocation:
    """Run one unlinking heuristic on an :class:`Instance`; returns its :class:`Allocation`.

    ``final_clean_step`` defaults to the thesis: Force-Dedup (and Flow-Dedup) end with Final-Clean,
    Greedy-Dedup (Algorithm 7) does not — any violation it leaves is caught by the exact audit in
    :func:`unlink`.
    """
    if method not in _ENGINES:
        raise ReleaseError(f"unknown unlinking method {method!r}; choose one of {', '.join(METHODS)}")
    if k < 1:
        raise ReleaseError(f"k must be a positive integer, got {k}")
    alloc = _ENGINES[method](inst, k, seed)
    withdrawn: list[int] = []
    if _FINAL_CLEAN[method] if final_clean_step is None else final_clean_step:
        withdrawn = _final_clean(inst, alloc, k, seed)
    locs = inst.locations
    dis, prot = alloc.disclosed_arrays(), alloc.protector_arrays()
    return Allocation(
        locations=list(locs),
        disclosed={locs[c]: inst.de_keys[dis[c]].tolist() for c in range(len(locs))},
        protectors={locs[c]: inst.id_keys[prot[c]].tolist() for c in range(len(locs))},
        method=method, k=k, seed=seed,
        steps=[(locs[c], ph, a, b) for c, ph, a, b in alloc.steps],
        final_clean_withheld=inst.de_keys[np.asarray(withdrawn, np.int64)].tolist())


def greedy_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Greedy-Dedup (thesis Algorithm 7) on per-location sets ``{c: γ_c}``, ``{c: ω_c}``.

    Repeatedly: Explicit-Clean; take the location p with the smallest non-null γ'_p; disclose the
    min(|ω_p|, |γ'_p|) least-frequent protectees of ω_p, allocate the max(|ω'_p|, k) least-frequent
    protectors of γ'_p; Reduce.  O(|C|² + rows·log rows) with incremental counts (the thesis states
    O(|C|²) location steps, assuming elements pre-sorted by frequency).
    """
    return allocate(Instance.from_sets(gamma, omega), k, "greedy-dedup", seed)


def force_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Force-Dedup (thesis Algorithm 10: force phase, boost phase, Final-Clean) on per-location sets.

    O(|C|² + rows·log rows).  See :func:`_force` for the reading of the printed pseudocode.
    """
    return allocate(Instance.from_sets(gamma, omega), k, "force-dedup", seed)


def flow_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Flow-Dedup (this project, after thesis §7.4) on per-location sets; see :func:`_flow`."""
    return allocate(Instance.from_sets(gamma, omega), k, "flow-dedup", seed)


def final_clean(gamma: Sets, disclosed: Mapping[Hashable, Iterable[Hashable]], k: int,
                n_identified: int | None = None,
                frequency: Mapping[Hashable, int] | None = None) -> dict[Hashable, list[Hashable]]:
    """Final-Clean (Algorithm 10 line 19, "correct for null trail constraints") on sets.

    The thesis names but does not print this step; our reading, which is exact for deduplicated
    allocations: let z = |M| − Σ|ω'_c| be the number of null trails (withheld elements, padded) and
    r(m) = Σ_{c ∋ m} |ω'_c| the number of disclosed elements identity m links to.  An identity that can
    be left unmatched (all non-tight protectors and every unallocated identity) has union degree
    r(m) + z, so it violates Definition 19 exactly when 1 ≤ r(m) < k − z (identities in a tight block
    have r(m) ≥ k).  While such an m exists, withdraw one record — from the largest allocation, its most
    frequent element (``frequency``: number of databases holding it) — which raises z by one.
    At most k − 1 withdrawals; O(k·Σ|γ_c|).  ``n_identified`` defaults to |∪γ_c|.

    For allocations that satisfy Lemmas 8-10 this never fires: z = |M − ∪P| + Σ_c (|P_c| − |ω'_c|)
    because protector sets are disjoint, so a protector m ∈ P_c has r(m) + z ≥ |P_c| ≥ k and an
    unallocated identity at a disclosing location c has r(m) + z ≥ |P_c| + 1.  It is kept as the
    thesis's step (and a guard for allocations built by other code, e.g. the secure variants); the
    property tests confirm it withdraws nothing for our three methods.
    """
    members = set().union(*[set(v) for v in gamma.values()]) if gamma else set()
    n_id = len(members) if n_identified is None else n_identified
    dis = {c: list(v) for c, v in disclosed.items()}
    freq = frequency or {}
    while True:
        counts = {c: len(v) for c, v in dis.items()}
        z = n_id - sum(counts.values())
        if z >= k - 1:
            break
        r: dict[Hashable, int] = dict.fromkeys(members, 0)
        for c, g in gamma.items():
            for m in g:
                r[m] += counts.get(c, 0)
        if not any(1 <= v < k - z for v in r.values()):
            break
        c = max((c for c in dis if dis[c]), key=lambda c: counts[c])
        e = max(dis[c], key=lambda e: freq.get(e, 0))
        dis[c].remove(e)
    return dis


# ---------------------------------------------------------------------------------------------------
# Releases: apply, certify, repair, measure
# ---------------------------------------------------------------------------------------------------

def utility(omega: Sets, omega_prime: Sets) -> dict[str, int]:
    """Utility metrics of §7.2.1 for original Ω and disclosed Ω'.

    ``withheld`` = |∪ω_c| − |∪ω'_c| (eq. 7.1, deduplication), ``locations_empty`` = |{c : ω'_c = ∅}|
    (eq. 7.2), ``disclosed`` = |∪ω'_c| (distinct de-identified elements still disclosed),
    ``locations_disclosing`` = |C| − eq. 7.2, and record-level (location, element) counts.  O(rows).
    """
    all_e = set().union(*[set(v) for v in omega.values()]) if omega else set()
    dis_e = set().union(*[set(v) for v in omega_prime.values()]) if omega_prime else set()
    locs = set(omega) | set(omega_prime)
    empty = sum(1 for c in locs if not list(omega_prime.get(c, ())))
    rows_before = sum(len(set(v)) for v in omega.values())
    rows_after = sum(len(set(v)) for v in omega_prime.values())
    return {"disclosed": len(dis_e), "withheld": len(all_e) - len(dis_e), "total": len(all_e),
            "locations": len(locs), "locations_disclosing": len(locs) - empty, "locations_empty": empty,
            "rows_disclosed": rows_after, "rows_withheld": rows_before - rows_after}


@dataclass
class UnlinkResult:
    """Outcome of :func:`unlink`: the certified release plus everything needed to explain it."""

    release: Any                          # graphlink.release.Release (suppressed, certified)
    allocation: Allocation
    k: int
    method: str
    seed: int | None
    certified: bool
    metrics: dict[str, int]
    repair_withheld: list[Hashable]       # records withheld because the exact audit failed
    repair_rounds: int
    audit: Any                            # graphlink.audit.AuditResult of the final release
    before: dict[str, int]
    after: dict[str, int]
    timings: dict[str, float]

    def summary(self) -> dict[str, Any]:
        """The CLI's json summary."""
        return {
            "k": self.k, "method": self.method, "seed": self.seed,
            "disclosed": self.metrics["disclosed"], "withheld": self.metrics["withheld"],
            "locations_disclosing": self.metrics["locations_disclosing"],
            "locations_empty": self.metrics["locations_empty"], "locations": self.metrics["locations"],
            "rows_disclosed": self.metrics["rows_disclosed"], "rows_withheld": self.metrics["rows_withheld"],
            "certified": self.certified,
            "final_clean_withheld": len(self.allocation.final_clean_withheld),
            "repair_withheld": len(self.repair_withheld), "repair_rounds": self.repair_rounds,
            "true_loves_before": self.before.get("true_loves"), "true_loves_after": self.after.get("true_loves"),
            "violations_before": self.before.get("violations"), "violations_after": self.after.get("violations"),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


def check_model(release: Any) -> None:
    """Definition 21 needs Ω reserved to Γ (or unreserved): |ω_c| ≤ |γ_c| at every location."""
    sizes = release.sizes()
    bad = sizes.index[sizes["deidentified"] > sizes["identified"]].tolist()
    if bad:
        raise ModelAssumptionError(
            "unlink suppresses de-identified records only (thesis Definition 21), which needs every location "
            f"to disclose at most as many de-identified as identified records; violated at: "
            f"{', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''}")


def apply_disclosure(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]]) -> Any:
    """The release with all identified rows and exactly the de-identified rows in ``disclosed``.

    Row order of the input is kept.  O(rows) with integer pair keys (no per-row Python objects).
    """
    frame = release.frame
    deid = (frame["kind"] == "deidentified").to_numpy()
    locs = [c for c, es in disclosed.items() for _ in es]
    elems = [e for es in disclosed.values() for e in es]
    loc_index = pd.Index(pd.unique(frame["location"]))
    el_index = pd.Index(pd.unique(frame.loc[deid, "element"]))
    n_el = max(len(el_index), 1)
    row_key = (loc_index.get_indexer(frame.loc[deid, "location"]).astype(np.int64) * n_el
               + el_index.get_indexer(frame.loc[deid, "element"]).astype(np.int64))
    lk = loc_index.get_indexer(pd.Index(locs, dtype=object)).astype(np.int64)
    ek = el_index.get_indexer(pd.Index(elems, dtype=object)).astype(np.int64)
    ok = (lk >= 0) & (ek >= 0)
    keep = ~deid
    keep[np.flatnonzero(deid)] = np.isin(row_key, lk[ok] * n_el + ek[ok])
    return release.select(keep)


def audit_release(release: Any, k: int, reserved: str = "deidentified") -> tuple[Any, Any]:
    """Exact k-unlinkability audit of a release by the core (Definition 19): (AuditResult, EdgeClasses)."""
    from graphlink.audit import audit
    from graphlink.linkgraph import build_linkgraph
    from graphlink.matching import classify_edges
    from graphlink.trails import build_trails

    classes = classify_edges(build_linkgraph(build_trails(release, reserved)))
    return audit(classes, k), classes


def _violating_records(result: Any, classes: Any) -> set[Hashable]:
    """De-identified elements to withhold so that the audit's violations go away.

    A de-identified violator is withheld itself; an identified violator loses every disclosed record it
    is linked to in the union of maximum matchings (it then only has null-trail edges, Def. 19 clause 2).
    """
    viol = result.violations
    out: set[Hashable] = set(viol.loc[viol["side"] == "deidentified", "element"].tolist())
    id_viol = viol.loc[viol["side"] == "identified", "element"].tolist()
    if id_viol:
        graph = classes.graph
        keys_m = graph.trails.identified.keys
        keys_n = graph.trails.deidentified.keys
        pos = {key: i for i, key in enumerate(keys_m)}
        allowed_n = _allowed_neighbours(classes, [pos[m] for m in id_viol if m in pos])
        out.update(keys_n[allowed_n].tolist())
        if not allowed_n.size:        # no real neighbour to cut: fall back to every neighbour
            for m in id_viol:
                if m in pos:
                    out.update(keys_n[graph.neighbours_of_identified(pos[m])].tolist())
    return out


def _allowed_neighbours(classes: Any, rows: list[int]) -> np.ndarray:
    """De-identified rows joined to identified ``rows`` by an allowed (max-matching) edge.

    Works on the twin classes of the link graph (an allowed class edge means every member pair is
    allowed, by the twin-swap symmetry).  O(E_class + |N|).
    """
    graph = classes.graph
    if not rows:
        return np.zeros(0, np.int64)
    cls_m = np.unique(graph.id_class[np.asarray(rows, np.int64)])
    sel = np.isin(graph.class_ei, cls_m) & np.asarray(classes.class_allowed, bool)
    return np.flatnonzero(np.isin(graph.de_class, np.unique(graph.class_ej[sel])))


def _counts(result: Any) -> dict[str, int]:
    viol = result.violations
    return {"true_loves": int(result.true_loves), "violations": int(len(viol)),
            "violations_deidentified": int((viol["side"] == "deidentified").sum()) if len(viol) else 0,
            "violations_identified": int((viol["side"] == "identified").sum()) if len(viol) else 0,
            "k_unlinkable": bool(result.k_unlinkable)}


def disclosed_of(release: Any) -> dict[Hashable, list[Hashable]]:
    """``{location: de-identified elements}`` of a release (every location, possibly empty).  O(rows)."""
    return _omega_sets(release.frame)


def certify(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]], k: int, *,
            max_rounds: int = 1000, progress: Callable[[str], None] | None = None
            ) -> tuple[Any, dict[Hashable, list[Hashable]], Any, list[Hashable], int]:
    """Certify a suppression of ``release`` with the core's exact audit, withholding more until it passes.

    ``disclosed`` must be a subset of the release's de-identified rows (Definition 21).  Loop: build the
    suppressed release, audit it (:func:`graphlink.audit.audit`, Definition 19); on failure withhold
    :func:`_violating_records` (or, if that is empty, everything left) and repeat.  Withholding every
    de-identified record leaves only null trails, which Definition 19 clause 2 always accepts, so the loop
    ends.  Returns (release, disclosed, AuditResult, records withheld by the repair, repair rounds).
    O(rounds · audit).
    """
    omega = _omega_sets(release.frame)
    allowed = {(c, e) for c, es in omega.items() for e in es}
    disclosed = {c: list(dict.fromkeys(es)) for c, es in disclosed.items()}
    extra = [(c, e) for c, es in disclosed.items() for e in es if (c, e) not in allowed]
    if extra:
        raise ModelAssumptionError(f"a suppression may only withhold records, but {len(extra)} disclosed records "
                                   f"are not in the release (first: {extra[0]})")
    repair: list[Hashable] = []
    rounds = 0
    out = apply_disclosure(release, disclosed)
    while True:
        result, classes = audit_release(out, k)
        if result.k_unlinkable:
            return out, disclosed, result, repair, rounds
        rounds += 1
        remaining = {e for es in disclosed.values() for e in es}
        if not remaining:
            raise ModelAssumptionError(
                f"the audit reports {len(result.violations)} violations even with every de-identified record "
                f"withheld: this release cannot be made {k}-unlinkable by suppressing de-identified records")
        drop = _violating_records(result, classes) & remaining
        if not drop or rounds > max_rounds:
            drop = remaining
        if progress:
            progress(f"audit failed ({len(result.violations)} violations); withholding {len(drop)} more records")
        repair.extend(sorted(drop, key=repr))
        disclosed = {c: [e for e in es if e not in drop] for c, es in disclosed.items()}
        out = apply_disclosure(release, disclosed)


def unlink(release: Any, k: int, method: str = "force-dedup", seed: int | None = 0, *,
           certify_output: bool = True, audit_before: bool = True, max_rounds: int = 1000,
           progress: Callable[[str], None] | None = None) -> UnlinkResult:
    """Unlink a release by suppression (Definition 21) and certify it with the exact audit.

    Runs ``method`` (greedy-dedup, force-dedup, flow-dedup) with seeded tie-breaking, writes the release
    (every identified row, the de-identified rows still disclosed), audits it with
    :func:`graphlink.audit.audit` (union of all maximum matchings, Definition 19 incl. the null-trail
    clause) and, if it fails, withholds more records until it passes (:func:`certify`); the result reports
    how many (``repair_withheld``).  ``audit_before`` also audits the input to report re-identifications
    (true loves) before/after.  Complexity: the heuristic is O(|C|² + rows·log rows); each audit is the
    core's O(E·√V) on the twin-compressed link graph.
    """
    if not hasattr(release, "frame"):
        from graphlink.release import read_release
        release = read_release(release)
    check_model(release)
    t0 = time.perf_counter()
    inst = Instance.from_frame(release.frame)
    alloc = allocate(inst, k, method, seed)
    timings = {"allocate": time.perf_counter() - t0}
    return finish(release, alloc.disclosed, k, method, seed, alloc, timings=timings, certify_output=certify_output,
                  audit_before=audit_before, max_rounds=max_rounds, progress=progress)


def finish(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]], k: int, method: str,
           seed: int | None, allocation: Allocation | None = None, *, timings: dict[str, float] | None = None,
           certify_output: bool = True, audit_before: bool = True, max_rounds: int = 1000,
           progress: Callable[[str], None] | None = None) -> UnlinkResult:
    """Certify (:func:`certify`) and measure any suppression of ``release`` — used by :func:`unlink` and by
    the CLI for the secure protocol's output."""
    timings = dict(timings or {})
    disclosed = {c: list(v) for c, v in disclosed.items()}
    if allocation is None:
        allocation = Allocation(list(disclosed), disclosed, {}, method, k, seed)
    before: dict[str, int] = {}
    if audit_before:
        t1 = time.perf_counter()
        res0, _ = audit_release(release, k, "auto")
        before = _counts(res0)
        timings["audit_before"] = time.perf_counter() - t1
    result = None
    repair: list[Hashable] = []
    rounds = 0
    if certify_output:
        t2 = time.perf_counter()
        out, disclosed, result, repair, rounds = certify(release, disclosed, k, max_rounds=max_rounds,
                                                         progress=progress)
        timings["certify"] = time.perf_counter() - t2
    else:
        out = apply_disclosure(release, disclosed)
    metrics = utility(_omega_sets(release.frame), disclosed)
    after = _counts(result) if result is not None else {}
    return UnlinkResult(out, allocation, k, method, seed, result is not None and result.k_unlinkable, metrics,
                        repair, rounds, result, before, after, timings)


def _omega_sets(frame: pd.DataFrame) -> dict[Hashable, list[Hashable]]:
    part = frame[frame["kind"] == "deidentified"]
    sets: dict[Hashable, list[Hashable]] = {c: [] for c in pd.unique(frame["location"])}
    for c, grp in part.groupby("location", sort=False)["element"]:
        sets[c] = grp.tolist()
    return sets
