"""Strongly connected components of the residual graph of a class flow, and what they say about every edge.

The second half of the twin-class engine (:func:`graphlink.kernels.flow.twin_flow`; docs/algorithms.md#twin-classes):
an edge is in some maximum flow iff it carries flow or both its ends lie in one component of the residual graph,
and in every maximum flow iff it carries flow and its ends lie in different components.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(inline="always", cache=True)
def _tarjan_arc(v: int, w: int, st: np.ndarray, low: np.ndarray, acc: np.ndarray, n: int) -> bool:  # pragma: no cover
    """Tarjan's treatment of arc v → w; True when w is new (a tree arc to descend), else low/acc updated.

    ``st[w]``: -1 = not entered, < n = its index while on the stack, ≥ n = finished: n + 2·component + (reaches t)."""
    sw = st[w]
    if sw == -1:
        return True
    if sw < n:
        if sw < low[v]:
            low[v] = sw
    elif (sw - n) & 1:
        acc[v] = True
    return False


@numba.njit(cache=True)
def residual_scc(a: np.ndarray, b: np.ndarray, ptr: np.ndarray, nb: np.ndarray, f: np.ndarray, x: np.ndarray,
                 y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Strongly connected components of the residual graph of a class flow (:func:`class_max_flow`), plus which
    nodes s reaches and which nodes reach t.

    Nodes: 0 = s, 1..n_a = source classes, then the sink-side classes, last = t.  Residual arcs: s → u while
    x_u > 0, u → s while u sends flow, u → v while f < min(a_u, b_v), v → u while f > 0, v → t while y_v > 0,
    t → v while v receives flow.  Iterative Tarjan (1972), O(V + E), one read of a per-node state per arc that
    does not descend.  Started from s first, so the nodes s reaches are those numbered in the first tree;
    "reaches t" is a flag per component, final when the component is popped (every arc out of a component leads
    to a component finished earlier, or into its own).  Returns (component per node, reached from s, reaches t).
    """
    n_a = a.shape[0]
    n_b = b.shape[0]
    n = n_a + n_b + 2
    t_node = n - 1
    # backward arcs v -> u (edges with flow), as a CSR over the sink-side classes
    qptr = np.zeros(n_b + 1, np.int64)
    for k in range(nb.shape[0]):
        if f[k] > 0:
            qptr[nb[k] + 1] += 1
    for v in range(n_b):
        qptr[v + 1] += qptr[v]
    qcur = qptr[:-1].copy()
    qnb = np.empty(qptr[n_b], np.int64)
    for u in range(n_a):
        for k in range(ptr[u], ptr[u + 1]):
            if f[k] > 0:
                v = nb[k]
                qnb[qcur[v]] = u
                qcur[v] += 1
    st = np.full(n, -1, np.int64)
    low = np.empty(n, np.int64)
    acc = np.zeros(n, np.bool_)                 # some arc from this node leads to a finished component reaching t
    comp = np.empty(n, np.int64)
    it = np.empty(n, np.int64)
    sstack = np.empty(n, np.int64)
    cstack = np.empty(n, np.int64)
    counter = 0
    ncomp = 0
    sp = 0
    from_s = np.zeros(n, np.bool_)
    for root in range(n):
        if st[root] != -1:
            continue
        top = -1
        w = root                                              # the node to enter next, -1 = none
        while True:
            if w != -1:
                st[w] = counter
                low[w] = counter
                counter += 1
                sstack[sp] = w
                sp += 1
                acc[w] = w == t_node
                it[w] = 0 if (w == 0 or w == t_node) else (ptr[w - 1] if w <= n_a else qptr[w - 1 - n_a])
                top += 1
                cstack[top] = w
            v = cstack[top]
            w = -1
            p = it[v]
            if v == 0:                                        # s
                while p < n_a:
                    p += 1
                    if x[p - 1] > 0 and _tarjan_arc(v, p, st, low, acc, n):
                        w = p
                        break
            elif v == t_node:                                 # t
                while p < n_b:
                    p += 1
                    if y[p - 1] < b[p - 1] and _tarjan_arc(v, n_a + p, st, low, acc, n):
                        w = n_a + p
                        break
            elif v <= n_a:                                    # source class u: almost all of the arcs
                u = v - 1
                end = ptr[u + 1]
                au = a[u]
                lv = low[v]
                av = acc[v]
                while p < end:                                # the arc test of _tarjan_arc, kept in registers
                    c = nb[p]
                    fp = f[p]
                    p += 1
                    if fp != 0 and fp >= min(au, b[c]):
                        continue
                    sw = st[1 + n_a + c]
                    if sw == -1:
                        w = 1 + n_a + c
                        break
                    if sw < n:
                        if sw < lv:
                            lv = sw
                    elif (sw - n) & 1:
                        av = True
                low[v] = lv
                acc[v] = av
                if w == -1 and p == end:
                    p += 1
                    if x[u] < au and _tarjan_arc(v, 0, st, low, acc, n):
                        w = 0
            else:                                             # sink-side class c
                c = v - 1 - n_a
                end = qptr[c + 1]
                while p < end:
                    p += 1
                    if _tarjan_arc(v, 1 + qnb[p - 1], st, low, acc, n):
                        w = 1 + qnb[p - 1]
                        break
                if w == -1 and p == end:
                    p += 1
                    if y[c] > 0 and _tarjan_arc(v, t_node, st, low, acc, n):
                        w = t_node
            it[v] = p
            if w != -1:
                continue
            top -= 1                                          # v is finished
            if low[v] == st[v]:                               # v roots a component: the stack from v up
                q = sp - 1
                r = False
                while True:
                    r = r or acc[sstack[q]]
                    if sstack[q] == v:
                        break
                    q -= 1
                code = n + 2 * ncomp + (1 if r else 0)
                for z in range(q, sp):
                    comp[sstack[z]] = ncomp
                    st[sstack[z]] = code
                sp = q
                ncomp += 1
            if top < 0:
                break
            u = cstack[top]
            if low[v] < low[u]:
                low[u] = low[v]
            if st[v] >= n and (st[v] - n) & 1:
                acc[u] = True
        if root == 0:
            for v in range(n):
                from_s[v] = st[v] != -1
    to_t = np.empty(n, np.bool_)
    for v in range(n):
        to_t[v] = (st[v] - n) & 1 == 1
    return comp, from_s, to_t


@numba.njit(cache=True)
def classify_positions(a: np.ndarray, b: np.ndarray, ptr: np.ndarray, nb: np.ndarray, f: np.ndarray,
                       comp: np.ndarray) -> tuple:  # pragma: no cover - numba
    """Per edge position: allowed (f > 0 or both ends in one SCC), vital (one pair, matched, SCCs differ); and per
    class the union-degree of its members (Σ of the other side's class sizes over its allowed edges).  O(E)."""
    n_a = a.shape[0]
    comp_b = comp[1 + n_a:1 + n_a + b.shape[0]].astype(np.int32)      # the random reads: keep them small
    allowed = np.empty(nb.shape[0], np.bool_)
    vital = np.zeros(nb.shape[0], np.bool_)
    deg_a = np.zeros(n_a, np.int64)
    deg_b = np.zeros(b.shape[0], np.int64)
    for u in range(n_a):
        cu = comp[1 + u]
        au = a[u]
        du = 0
        for k in range(ptr[u], ptr[u + 1]):
            c = nb[k]
            same = comp_b[c] == cu
            fk = f[k]
            ok = same or fk > 0
            allowed[k] = ok
            if ok:
                du += b[c]
                deg_b[c] += au
                if fk == 1 and not same and au == 1 and b[c] == 1:
                    vital[k] = True
        deg_a[u] = du
    return allowed, vital, deg_a, deg_b


@numba.njit(cache=True)
def masked_class_degrees(ci: np.ndarray, cj: np.ndarray, mask: np.ndarray, a: np.ndarray,
                         b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Per class: Σ of the other side's class sizes over its class edges with ``mask`` set (the union-degree of
    each member when ``mask`` is the allowed set).  O(E)."""
    di = np.zeros(a.shape[0], np.int64)
    dj = np.zeros(b.shape[0], np.int64)
    for e in range(ci.shape[0]):
        if mask[e]:
            di[ci[e]] += b[cj[e]]
            dj[cj[e]] += a[ci[e]]
    return di, dj
