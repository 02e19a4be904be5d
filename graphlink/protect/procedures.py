"""Procedures 8 (Explicit-Clean) and 9 (Reduce) and the least-frequent allocation rule (thesis §7.3).

Two forms of the same steps: on plain per-location sets (:func:`explicit_clean`, :func:`reduce_databases`,
:func:`least_frequent`; they work on encrypted tokens as well as on element keys, so the secure STRANON half
can reuse them) and on an :class:`~graphlink.protect.instance.Instance` with incremental counts
(:class:`State`, what Greedy-, Force- and Flow-Dedup run on real releases).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np

from graphlink.protect.instance import Instance, gather


def explicit_clean(gamma: Mapping[Hashable, set], omega: Mapping[Hashable, set], k: int,
                   only: Iterable[Hashable] | None = None) -> tuple[dict, dict]:
    """Explicit-Clean (thesis Procedure 8): empty every location that cannot disclose safely.

    A location with fewer than ``k`` remaining protectors (|γ_c| < k) or with nothing left to protect
    (|ω_c| = 0) gets γ_c ← ∅ and ω_c ← ∅: any protectee it disclosed would be linked to fewer than k
    identities.  ``only`` restricts the check to some locations (Force-Dedup's force phase applies it to
    the not-yet-allocated locations only).  Returns new dicts of sets; inputs are not modified.
    O(|C| + Σ|γ_c| + Σ|ω_c|) (copying).

    Examples
    --------
    At k = 3 location B, with two people, cannot protect anything and is emptied:

    >>> from graphlink.protect import explicit_clean
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> g, w = explicit_clean(gamma, omega, 3)
    >>> sorted(g["A"]), sorted(g["B"]), sorted(w["B"])
    (['a', 'b', 'c'], [], [])
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

    Examples
    --------
    >>> from graphlink.protect import reduce_databases
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> g, w = reduce_databases({"c"}, {"z"}, gamma, omega)
    >>> sorted(g["A"]), sorted(g["B"]), sorted(w["B"])
    (['a', 'b'], ['d'], [])
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

    Examples
    --------
    a is held by one location, c by two:

    >>> from graphlink.protect import least_frequent
    >>> least_frequent(["c", "a"], {"A": {"a", "b", "c"}, "B": {"c", "d"}}, 1)
    ['a']
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


class State:
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
            locs = gather(ptr, idx, elems)
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
