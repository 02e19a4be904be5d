"""Kernels of the keep-most protection (:mod:`graphlink.protect.keep`): per-record subset search on bit masks.

A record r of the withheld side is disclosed at a few locations D(r); a person p of the other side is a
candidate for r once every location r still discloses is one p visited (the link test of Malin 2006,
Definition 17, on the locations where r is 1).  With the positions of D(r) numbered 0..d−1, each person has a
*pattern*, the bit mask of the positions of D(r) they visited.  A kept set K ⊆ D(r) has as many candidates as
there are persons whose pattern contains K: the superset sums of the pattern histogram (the "sum over subsets"
transform, O(2^d · d)).  The kernels here compute those sums per record and pick the largest K with enough
candidates (:func:`best_subsets`), and count each person's candidates for given kept sets
(:func:`candidate_counts`).

Records with more than ``dmax`` positions are skipped here (``-2`` in the output) and handled by the greedy in
:mod:`graphlink.protect.keep`; 2^dmax is the size of the one histogram kept alive.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _popcount(x: np.int64) -> int:  # pragma: no cover - numba
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@numba.njit(cache=True)
def best_subsets(r_ptr: np.ndarray, r_loc: np.ndarray, forced: np.ndarray, target: np.ndarray,
                 g_ptr: np.ndarray, g_idx: np.ndarray, n_persons: int, dmax: int, rnd: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """For every record r: the kept mask K ⊆ D(r) (bits over r's positions in ``r_loc``) of largest size with at
    least ``target[r]`` candidates and K ⊇ ``forced`` bits; among those the most candidates (fewer tight
    Hall sets for the audit to find), remaining ties broken by ``rnd[r]`` (a random 63-bit word);
    and that largest size.  ``-1``: no such K (forced positions admit too few candidates); ``-2``: d > dmax.

    ``forced`` holds one 0/1 per entry of ``r_loc``.  Persons at none of D(r) have pattern 0, which contains only
    K = ∅ (the record withheld everywhere, a null trail that everybody can be).
    O(Σ_r (Σ_{c∈D(r)} |γ_c| + 2^{d_r}·d_r)).
    """
    n_rec = len(r_ptr) - 1
    chosen = np.full(n_rec, -1, np.int64)
    size = np.full(n_rec, -1, np.int64)
    pat = np.zeros(n_persons, np.int64)
    touched = np.empty(n_persons, np.int64)
    cnt = np.zeros(1 << dmax, np.int64)
    for r in range(n_rec):
        a, b = r_ptr[r], r_ptr[r + 1]
        d = b - a
        if d > dmax:
            chosen[r] = -2
            size[r] = -2
            continue
        f = 0
        for j in range(d):
            if forced[a + j]:
                f |= 1 << j
        nt = 0
        for j in range(d):
            c = r_loc[a + j]
            for q in range(g_ptr[c], g_ptr[c + 1]):
                p = g_idx[q]
                if pat[p] == 0:
                    touched[nt] = p
                    nt += 1
                pat[p] |= 1 << j
        full = 1 << d
        for s in range(full):
            cnt[s] = 0
        cnt[0] = n_persons - nt
        for i in range(nt):
            cnt[pat[touched[i]]] += 1
            pat[touched[i]] = 0
        for j in range(d):                          # superset sums: cnt[K] = #persons whose pattern ⊇ K
            bit = 1 << j
            for s in range(full):
                if not s & bit:
                    cnt[s] += cnt[s | bit]
        best, best_c, best_n, pick = -1, 0, 0, -1
        state = rnd[r] | 1
        for s in range(full):
            if (s & f) != f or (cnt[s] < target[r] and s != 0):   # K = ∅: a null trail, exempt
                continue
            pc = _popcount(s)
            if pc > best or (pc == best and cnt[s] > best_c):
                best, best_c, best_n, pick = pc, cnt[s], 1, s
            elif pc == best and cnt[s] == best_c:   # reservoir sampling: each maximiser equally likely
                best_n += 1
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                if (state & 0x7FFFFFFFFFFFFFFF) % best_n == 0:
                    pick = s
        chosen[r] = pick
        size[r] = best
    return chosen, size


@numba.njit(cache=True)
def candidate_counts(r_ptr: np.ndarray, r_loc: np.ndarray, kept: np.ndarray, g_ptr: np.ndarray,
                     g_idx: np.ndarray, n_persons: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Per person, how many records with a non-empty kept set they are a candidate for, and per record how many
    candidates it has.  ``kept`` holds one 0/1 per entry of ``r_loc`` (any d).  Records kept nowhere (null
    trails) are left out of the persons' counts (the caller adds them) and get ``n_persons``.
    O(Σ_r Σ_{c∈K(r)} |γ_c|)."""
    n_rec = len(r_ptr) - 1
    per_person = np.zeros(n_persons, np.int64)
    per_record = np.zeros(n_rec, np.int64)
    hits = np.zeros(n_persons, np.int64)
    touched = np.empty(n_persons, np.int64)
    for r in range(n_rec):
        need = 0
        nt = 0
        for q in range(r_ptr[r], r_ptr[r + 1]):
            if not kept[q]:
                continue
            need += 1
            c = r_loc[q]
            for t in range(g_ptr[c], g_ptr[c + 1]):
                p = g_idx[t]
                if hits[p] == 0:
                    touched[nt] = p
                    nt += 1
                hits[p] += 1
        if need == 0:
            per_record[r] = n_persons
            continue
        n = 0
        for i in range(nt):
            p = touched[i]
            if hits[p] == need:
                per_person[p] += 1
                n += 1
            hits[p] = 0
        per_record[r] = n
    return per_person, per_record
