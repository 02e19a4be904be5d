"""Final-Clean (thesis Algorithm 10 line 19, "correct for null trail constraints").

The thesis names but never prints this step; our reading is documented on :func:`final_clean` (on sets) and
applied by :func:`final_clean_codes` (on an allocation in integer form, what :func:`graphlink.protect.allocate`
runs after Force- and Flow-Dedup).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np

from graphlink.protect.instance import Instance, Sets
from graphlink.protect.methods import IntAllocation


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

    Examples
    --------
    Two people at one location protecting one disclosed record: k = 2 holds, nothing is withdrawn:

    >>> from graphlink.protect import final_clean
    >>> final_clean({"A": {"a", "b"}}, {"A": ["x"]}, 2)
    {'A': ['x']}
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


def _at_risk(inst: Instance, counts: np.ndarray, z: int, k: int) -> np.ndarray:
    """Identified elements m with 1 ≤ r(m) < k − z, r(m) = Σ_{c ∋ m} |ω'_c| (see :func:`final_clean`)."""
    loc_of = np.repeat(np.arange(inst.n_locations), np.diff(inst.g_ptr))
    r = np.bincount(inst.g_idx, weights=counts[loc_of], minlength=inst.n_identified)
    return np.flatnonzero((r >= 1) & (r < k - z))


def final_clean_codes(inst: Instance, alloc: IntAllocation, k: int, seed: int | None) -> list[int]:
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
