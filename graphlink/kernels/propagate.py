"""Walks on a bipartite class graph for REIDIT-I and the true loves' explanations.

* :func:`propagate_classes`: REIDIT-I unit propagation (thesis Alg. 4-6) on twin classes, element-exact;
* :func:`closure`: alternating reachability from a set of classes (the tight sets behind forced pairs,
  docs/algorithms.md#true-loves).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def closure(start: np.ndarray, a_ptr: np.ndarray, a_nb: np.ndarray, b_ptr: np.ndarray, b_nb: np.ndarray,
            n_s: int, n_r: int, skip_r: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Alternating reachability on a bipartite class graph (the tight sets behind forced pairs).

    From the S classes ``start``, S class x reaches the R classes ``a_nb[a_ptr[x]:a_ptr[x+1]]`` (except
    ``skip_r``), and R class y reaches the S classes ``b_nb[b_ptr[y]:b_ptr[y+1]]``.  Returns the reached S and R
    classes in discovery order.  O(classes + class edges reached).
    """
    seen_s = np.zeros(n_s, np.bool_)
    seen_r = np.zeros(n_r, np.bool_)
    out_s = np.empty(n_s, np.int64)
    out_r = np.empty(n_r, np.int64)
    ns = 0
    nr = 0
    for x in start:
        if not seen_s[x]:
            seen_s[x] = True
            out_s[ns] = x
            ns += 1
    head = 0
    while head < ns:
        x = out_s[head]
        head += 1
        for e in range(a_ptr[x], a_ptr[x + 1]):
            y = a_nb[e]
            if y == skip_r or seen_r[y]:
                continue
            seen_r[y] = True
            out_r[nr] = y
            nr += 1
            for f in range(b_ptr[y], b_ptr[y + 1]):
                z = b_nb[f]
                if not seen_s[z]:
                    seen_s[z] = True
                    out_s[ns] = z
                    ns += 1
    return out_s[:ns], out_r[:nr]


@numba.njit(inline="always", cache=True)
def _first_alive(ptr: np.ndarray, nb: np.ndarray, alive: np.ndarray, c: int) -> int:  # pragma: no cover - numba
    """The first neighbour of class ``c`` (CSR ``ptr``/``nb``) with an alive member, -1 if none."""
    for e in range(ptr[c], ptr[c + 1]):
        if alive[nb[e]] > 0:
            return nb[e]
    return -1


@numba.njit(cache=True)
def propagate_classes(r_ptr, r_nb, s_ptr, s_nb, r_size, s_size, r_mptr, r_mem, s_mptr, s_mem,
                       n_r_rows, n_s_rows, flip):  # pragma: no cover - numba
    """REIDIT-I unit propagation on twin classes (Alg. 4-6), element-exact without expanding edges.

    Twins share their neighbourhood, so every alive member of a class has the same degree: deg_r[c] is
    Σ alive S members over the class's S neighbours.  Taking an S member of class i lowers deg_r of every
    R class linked to i by one (one decrement per class edge, not per element edge); members are taken in
    row order.  O(|R| + |S| + Σ_pairs deg_class): each link touches its two classes' class edges.
    """
    n_rc, n_sc = len(r_size), len(s_size)
    alive_rc = r_size.copy()
    alive_sc = s_size.copy()
    next_r = r_mptr[:-1].copy()          # first untaken member of each class
    next_s = s_mptr[:-1].copy()
    deg_r = np.zeros(n_rc, np.int64)
    for c in range(n_rc):
        for e in range(r_ptr[c], r_ptr[c + 1]):
            deg_r[c] += s_size[r_nb[e]]
    deg_s = np.zeros(n_sc, np.int64)
    for c in range(n_sc):
        for e in range(s_ptr[c], s_ptr[c + 1]):
            deg_s[c] += r_size[s_nb[e]]
    alive_r = np.ones(n_r_rows, np.bool_)
    alive_s = np.ones(n_s_rows, np.bool_)
    partner_r = np.full(n_r_rows, -1, np.int64)
    partner_s = np.full(n_s_rows, -1, np.int64)
    conflict_r = np.zeros(n_r_rows, np.bool_)
    cap = n_r_rows + n_s_rows + n_rc + n_sc + 1
    queue = np.empty(cap, np.int64)
    qt = 0
    for c in range(n_rc):
        if deg_r[c] == 1:
            queue[qt] = c
            qt += 1
    if flip:
        for c in range(n_sc):
            if deg_s[c] == 1:
                queue[qt] = n_rc + c
                qt += 1
    m = min(n_r_rows, n_s_rows)
    out_r = np.empty(m, np.int64)
    out_s = np.empty(m, np.int64)
    out_flip = np.zeros(m, np.bool_)
    k = 0
    qh = 0
    while qh < qt:
        item = queue[qh]
        qh += 1
        if item < n_rc:
            rc = item
            if alive_rc[rc] == 0 or deg_r[rc] != 1:
                continue
            sc = _first_alive(r_ptr, r_nb, alive_sc, rc)
            via = False
        else:
            sc = item - n_rc
            if alive_sc[sc] == 0 or deg_s[sc] != 1:
                continue
            rc = _first_alive(s_ptr, s_nb, alive_rc, sc)
            via = True
        r = r_mem[next_r[rc]]
        s = s_mem[next_s[sc]]
        next_r[rc] += 1
        next_s[sc] += 1
        alive_rc[rc] -= 1
        alive_sc[sc] -= 1
        alive_r[r] = False
        alive_s[s] = False
        partner_r[r] = s
        partner_s[s] = r
        out_r[k] = r
        out_s[k] = s
        out_flip[k] = via
        k += 1
        if via and alive_sc[sc] > 0 and qt < cap:      # the class's next twin may be degree one too
            queue[qt] = n_rc + sc
            qt += 1
        for e in range(r_ptr[rc], r_ptr[rc + 1]):        # r is gone: S classes linked to rc lose one record
            c2 = r_nb[e]
            deg_s[c2] -= 1
            if flip and deg_s[c2] == 1 and alive_sc[c2] > 0 and qt < cap:
                queue[qt] = n_rc + c2
                qt += 1
        for e in range(s_ptr[sc], s_ptr[sc + 1]):        # s is taken: R classes linked to sc lose a candidate
            c2 = s_nb[e]
            deg_r[c2] -= 1
            if alive_rc[c2] > 0:
                if deg_r[c2] == 1 and qt < cap:
                    queue[qt] = c2
                    qt += 1
                elif deg_r[c2] == 0:                     # Hall violated: these records can be nobody
                    for p in range(next_r[c2], r_mptr[c2 + 1]):
                        conflict_r[r_mem[p]] = True
                        alive_r[r_mem[p]] = False
                    next_r[c2] = r_mptr[c2 + 1]
                    alive_rc[c2] = 0
    return out_r[:k], out_s[:k], out_flip[:k], partner_r, partner_s, alive_r, alive_s, conflict_r, deg_r
