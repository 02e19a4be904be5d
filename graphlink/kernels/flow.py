"""Array kernels shared by the trail model decision, the link graph and the analyses.

Everything here works on bit-packed trail words (uint64, see :mod:`graphlink.trails`) and integer arrays only,
so the modules above it (trails, linkgraph, matching, reidit) can all use it without import cycles.

* twin grouping of identical rows and 64-bit row fingerprints (docs/algorithms.md#link-generation): plain NumPy, in
  :mod:`graphlink.kernels.rows`, re-exported here;
* class-level link generation (thesis Definition 17; see :func:`class_links`);
* :func:`first_links`: for every reserved-side row, one linked complete-side row or -1 (early exit): the
  cheap test behind the data-model decision (a record that can be nobody refutes a model).

The link test between a reserved row r and a complete row s is::

    ((s.ones ^ r.ones) & r.known) == 0        for every word
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numba
import numpy as np

from graphlink.kernels.rows import csr, fingerprint, members, row_classes  # noqa: F401  (re-exported)

Progress = Callable[[float, str], None]


@numba.njit(inline="always", cache=True)
def _linked(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, i: int, j: int) -> bool:  # pragma: no cover
    for w in range(r_known.shape[1]):  # noqa: SIM110  (numba: an early-exit loop, not a generator)
        if ((s_ones[j, w] ^ r_ones[i, w]) & r_known[i, w]) != 0:
            return False
    return True


@numba.njit(parallel=True, cache=True)
def _count_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray) -> np.ndarray:  # pragma: no cover
    n_r = r_known.shape[0]
    counts = np.zeros(n_r, np.int64)
    for i in numba.prange(n_r):
        c = 0
        for j in range(s_ones.shape[0]):
            if _linked(r_known, r_ones, s_ones, i, j):
                c += 1
        counts[i] = c
    return counts


@numba.njit(parallel=True, cache=True)
def _fill_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray,
                offsets: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    for i in numba.prange(r_known.shape[0]):
        pos = offsets[i]
        for j in range(s_ones.shape[0]):
            if _linked(r_known, r_ones, s_ones, i, j):
                out[pos] = j
                pos += 1


def _links_bruteforce(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = _count_links(r_known, r_ones, s_ones)
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.int64)
    _fill_links(r_known, r_ones, s_ones, offsets, out)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts), out


def _links_by_mask(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray,
                   progress: Progress | None) -> tuple[np.ndarray, np.ndarray]:
    mask_rep, mask_of = row_classes(r_known)
    out_r, out_s = [], []
    for t, m in enumerate(mask_rep):
        rs = np.flatnonzero(mask_of == t)
        K = r_known[m]
        masked = s_ones & K
        fs = fingerprint(masked)
        order = np.argsort(fs, kind="stable")
        fs_sorted = fs[order]
        fr = fingerprint(r_ones[rs])
        lo = np.searchsorted(fs_sorted, fr, side="left")
        hi = np.searchsorted(fs_sorted, fr, side="right")
        cnt = hi - lo
        if cnt.sum():
            rr = np.repeat(rs, cnt)
            starts = np.repeat(lo - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
            ss = order[np.arange(int(cnt.sum())) + starts]
            ok = np.all(masked[ss] == r_ones[rr], axis=1)        # verify: fingerprints may collide
            out_r.append(rr[ok].astype(np.int32))       # classes < 2^31: half the memory until concatenated
            out_s.append(ss[ok].astype(np.int32))
        if progress and (t % 16 == 0):
            progress((t + 1) / len(mask_rep), "linking (grouped by * pattern)")
    if not out_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_r, dtype=np.int64), np.concatenate(out_s, dtype=np.int64)


def class_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, *,
                method: Literal["auto", "mask", "bruteforce"] = "auto",
                progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All (r, s) with ((s.ones ^ r.ones) & r.known) == 0, as two int64 arrays (unsorted)."""
    n_r, n_s = r_known.shape[0], s_ones.shape[0]
    if n_r == 0 or n_s == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if method == "auto":
        n_masks = len(row_classes(r_known)[0])
        # mask path ≈ #K·|S|·~30 ns (hash + sort); brute force ≈ |R|·|S|·~0.5 ns on two cores
        method = "mask" if n_masks * 60 <= n_r else "bruteforce"
    if method == "mask":
        return _links_by_mask(r_known, r_ones, s_ones, progress)
    return _links_bruteforce(np.ascontiguousarray(r_known), np.ascontiguousarray(r_ones),
                             np.ascontiguousarray(s_ones))


@numba.njit(parallel=True, cache=True)
def _first_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray,
                 s_order: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    n_r = r_known.shape[0]
    out = np.full(n_r, -1, np.int64)
    for i in numba.prange(n_r):
        for t in range(s_order.shape[0]):
            if _linked(r_known, r_ones, s_ones, i, s_order[t]):
                out[i] = s_order[t]
                break
    return out


def first_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray) -> np.ndarray:
    """For every reserved row, the index of one linked complete row, or -1 if it links none.

    Complete rows are scanned in decreasing number of ones: a supertrail has at least as many ones as its
    subtrail, so the likely partners come first and the scan usually stops early.  Worst case (a row that
    links nothing) O(|S|·W); O(|R|·|S|·W) overall, parallel over R.
    """
    if r_known.shape[0] == 0:
        return np.zeros(0, np.int64)
    if s_ones.shape[0] == 0:
        return np.full(r_known.shape[0], -1, np.int64)
    pop = np.bitwise_count(s_ones).sum(axis=1)
    order = np.argsort(-pop, kind="stable").astype(np.int64)
    return _first_links(np.ascontiguousarray(r_known), np.ascontiguousarray(r_ones),
                        np.ascontiguousarray(s_ones), order)


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
def _blocks_agree(ci: np.ndarray, cj: np.ndarray, a: int, b: int) -> bool:  # pragma: no cover - numba
    for r in range(ci.shape[1]):  # noqa: SIM110  (numba: an early-exit loop)
        x, y = ci[a, r], cj[b, r]
        if x >= 0 and y >= 0 and x != y:
            return False
    return True


@numba.njit(cache=True)
def _block_pairs(t_ei: np.ndarray, t_ej: np.ndarray, ptr_i: np.ndarray, sub_i: np.ndarray, ptr_j: np.ndarray,
                 sub_j: np.ndarray, codes_i: np.ndarray, codes_j: np.ndarray,
                 out_i: np.ndarray, out_j: np.ndarray, fill: bool) -> int:  # pragma: no cover - numba
    n = 0
    for e in range(t_ei.shape[0]):
        for p in range(ptr_i[t_ei[e]], ptr_i[t_ei[e] + 1]):
            a = sub_i[p]
            for q in range(ptr_j[t_ej[e]], ptr_j[t_ej[e] + 1]):
                b = sub_j[q]
                if _blocks_agree(codes_i, codes_j, a, b):
                    if fill:
                        out_i[n] = a
                        out_j[n] = b
                    n += 1
    return n


def block_pairs(t_ei: np.ndarray, t_ej: np.ndarray, ptr_i: np.ndarray, sub_i: np.ndarray, ptr_j: np.ndarray,
                sub_j: np.ndarray, codes_i: np.ndarray, codes_j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Refine trail-class edges by attribute blocks (attribute linkage sets, TR02 Def. 3.1).

    Trail class t has sub-classes ``sub[ptr[t]:ptr[t+1]]`` (its members split by block codes); for every trail
    edge (t_ei[e], t_ej[e]) the sub-class pairs whose codes agree on every relation (equal, or -1 = unknown on
    either side) become edges.  Two passes (count, fill).  O(Σ_e |sub(t_i)|·|sub(t_j)|·R): at most the element
    edge count times the number of relations.
    """
    args = (np.asarray(t_ei, np.int64), np.asarray(t_ej, np.int64), ptr_i.astype(np.int64), sub_i.astype(np.int64),
            ptr_j.astype(np.int64), sub_j.astype(np.int64), np.ascontiguousarray(codes_i, np.int64),
            np.ascontiguousarray(codes_j, np.int64))
    n = _block_pairs(*args, np.zeros(0, np.int64), np.zeros(0, np.int64), False)
    out_i, out_j = np.empty(n, np.int64), np.empty(n, np.int64)
    _block_pairs(*args, out_i, out_j, True)
    return out_i, out_j


# ---------------------------------------------------------------------------------------------------------------
# Twin-class max-flow engine (docs/algorithms.md#twin-classes): capacitated Hopcroft–Karp + residual SCC.
#
# Network: s → source class u (capacity a_u) → sink-side class v (capacity min(a_u, b_v)) → t (capacity b_v).
# Arcs at s and t are not stored: a source class's residual s-arc is its unsent supply x_u = a_u − out_u, a
# sink-side class's residual t-arc its spare room y_v = b_v − in_v.  Class edges are grouped by source class
# (CSR ``ptr``; ``nb[k]`` is the sink-side class of position k, flow ``f[k]``), so the forward scans — nearly all
# of the work — read memory sequentially.  The backward arcs v → u are the edges with positive flow only; a class
# v has at most b_v of them (each carries at least one unit), so they fit in b_v preallocated slots per class
# (Σ b_v in all), appended when an edge's flow becomes positive and dropped lazily (compacted when full).
# Either side of the class graph can be the source side: the engine is run on whichever side the edges are
# already grouped by, so no E-sized permutation is built.
# ---------------------------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def group_pointers(key: np.ndarray, n_keys: int) -> tuple[np.ndarray, bool]:  # pragma: no cover - numba
    """CSR pointers of ``key`` when it is non-decreasing (edges grouped by that class), else (empty, False)."""
    ptr = np.zeros(n_keys + 1, np.int64)
    for e in range(key.shape[0]):
        if e > 0 and key[e] < key[e - 1]:
            return np.zeros(0, np.int64), False
        ptr[key[e] + 1] += 1
    for u in range(n_keys):
        ptr[u + 1] += ptr[u]
    return ptr, True


@numba.njit(cache=True)
def counting_order(key: np.ndarray, n_keys: int) -> np.ndarray:  # pragma: no cover - numba
    """Stable permutation sorting ``key`` (counting sort, O(E + n_keys))."""
    ptr = np.zeros(n_keys + 1, np.int64)
    for e in range(key.shape[0]):
        ptr[key[e] + 1] += 1
    for u in range(n_keys):
        ptr[u + 1] += ptr[u]
    order = np.empty(key.shape[0], np.int64)
    for e in range(key.shape[0]):
        order[ptr[key[e]]] = e
        ptr[key[e]] += 1
    return order


@numba.njit(inline="always", cache=True)
def _add_back_arc(v: int, k: int, u: int, f: np.ndarray, roff: np.ndarray, rcnt: np.ndarray, rk: np.ndarray,
                  ru: np.ndarray, listed: np.ndarray, rcur: np.ndarray) -> None:  # pragma: no cover - numba
    """Record that edge k (u → v) now carries flow, i.e. the residual arc v → u exists."""
    if listed[k]:
        return
    if rcnt[v] == roff[v + 1] - roff[v]:       # slots full: drop the edges whose flow went back to zero
        w = roff[v]
        for s in range(roff[v], roff[v] + rcnt[v]):
            if f[rk[s]] > 0:
                rk[w] = rk[s]
                ru[w] = ru[s]
                w += 1
            else:
                listed[rk[s]] = 0
        rcnt[v] = w - roff[v]
        rcur[v] = roff[v]                       # slots moved: rescan this class's arcs (still correct)
    s = roff[v] + rcnt[v]
    rk[s] = k
    ru[s] = u
    rcnt[v] += 1
    listed[k] = 1


@numba.njit(cache=True)
def class_max_flow(a: np.ndarray, b: np.ndarray, ptr: np.ndarray, nb: np.ndarray) -> tuple:  # pragma: no cover
    """Maximum flow of the twin-class network: Hopcroft–Karp generalised to capacities (Dinic on the bipartite
    class graph).

    Greedy warm start (one pass over the edges), then phases: a BFS from the source classes with unsent supply
    builds the layered residual graph up to the first layer holding a class with spare room (as in
    Hopcroft–Karp 1973), and a DFS with current-arc pointers sends a blocking flow through it, each path carrying
    its bottleneck (supply, arc residuals, room).  Dead ends leave the layered graph (the step whose absence makes
    scipy's matching exponential on ladders, scipy/scipy#26147), so a phase costs O(V + E) plus O(path length)
    per augmentation; O(√V) phases on unit-capacity networks (Even–Tarjan 1975; Dinic's bound O(V²E) in
    general).  The loop stops as soon as either side is saturated, so the usual case (Hall's condition) needs no
    final unsuccessful BFS.  Integral throughout.

    ``a``: supply per source class, ``b``: room per sink-side class, ``ptr``/``nb``: edges grouped by source
    class.  Returns (f per edge position (int32), unsent supply x, spare room y, flow value, phases).
    """
    n_a = a.shape[0]
    n_b = b.shape[0]
    n_e = nb.shape[0]
    big = np.iinfo(np.int64).max
    f = np.zeros(n_e, np.int32)
    x = a.astype(np.int64)
    y = b.astype(np.int64)
    roff = np.zeros(n_b + 1, np.int64)
    for v in range(n_b):
        roff[v + 1] = roff[v] + b[v]
    rcnt = np.zeros(n_b, np.int64)
    rk = np.empty(roff[n_b], np.int64)
    ru = np.empty(roff[n_b], np.int64)
    listed = np.zeros(n_e, np.uint8)
    rcur = np.zeros(n_b, np.int64)
    sum_x = 0
    for u in range(n_a):
        sum_x += x[u]
    sum_y = 0
    for v in range(n_b):
        sum_y += y[v]
    # greedy warm start: every source class sends what it can along its edges in order
    for u in range(n_a):
        for k in range(ptr[u], ptr[u + 1]):
            if x[u] == 0:
                break
            v = nb[k]
            if y[v] > 0:
                d = min(x[u], y[v], a[u], b[v])
                f[k] = d
                x[u] -= d
                y[v] -= d
                sum_x -= d
                sum_y -= d
                _add_back_arc(v, k, u, f, roff, rcnt, rk, ru, listed, rcur)
    dl = np.empty(n_a, np.int64)
    dr = np.empty(n_b, np.int64)
    queue = np.empty(n_a, np.int64)
    lcur = np.empty(n_a, np.int64)
    st_node = np.empty(2 * n_a + 2, np.int64)
    st_edge = np.empty(2 * n_a + 2, np.int64)
    phases = 0
    while sum_x > 0 and sum_y > 0:
        # BFS: layers of source classes; a sink-side class takes the layer of the class that first reaches it
        qt = 0
        for u in range(n_a):
            if x[u] > 0:
                dl[u] = 0
                queue[qt] = u
                qt += 1
            else:
                dl[u] = big
        for v in range(n_b):
            dr[v] = big
        limit = big
        qh = 0
        while qh < qt:
            u = queue[qh]
            qh += 1
            d = dl[u]
            if d > limit:
                break
            au = a[u]
            for k in range(ptr[u], ptr[u + 1]):
                v = nb[k]
                if dr[v] != big or f[k] >= min(au, b[v]):
                    continue
                dr[v] = d
                if y[v] > 0:
                    limit = d
                elif limit == big:
                    for s in range(roff[v], roff[v] + rcnt[v]):
                        if f[rk[s]] > 0:
                            w = ru[s]
                            if dl[w] == big:
                                dl[w] = d + 1
                                queue[qt] = w
                                qt += 1
        if limit == big:
            break
        phases += 1
        for u in range(n_a):
            lcur[u] = ptr[u]
        for v in range(n_b):
            rcur[v] = roff[v]
        # DFS: blocking flow in the layered graph, restarting from the root after every augmentation
        for root in range(n_a):
            while x[root] > 0 and dl[root] == 0:
                top = 0
                st_node[0] = root
                augmented = False
                while top >= 0:
                    w = st_node[top]
                    if top % 2 == 0:                                  # a source class
                        d = dl[w]
                        aw = a[w]
                        found = -1
                        k = lcur[w]
                        while k < ptr[w + 1]:
                            v = nb[k]
                            if dr[v] == d and (d < limit or y[v] > 0) and f[k] < min(aw, b[v]):
                                found = k
                                break
                            k += 1
                        lcur[w] = k
                        if found < 0:
                            dl[w] = big                               # dead end for this phase
                            top -= 1
                            if top >= 0:
                                rcur[st_node[top]] += 1
                            continue
                        v = nb[found]
                        st_edge[top] = found
                        top += 1
                        st_node[top] = v
                        if y[v] > 0:                                   # room at v: augment along the stack
                            delta = min(x[root], y[v])
                            for t in range(0, top, 2):
                                delta = min(delta, min(a[st_node[t]], b[st_node[t + 1]]) - f[st_edge[t]])
                            for t in range(1, top, 2):
                                delta = min(delta, f[st_edge[t]])
                            x[root] -= delta
                            y[v] -= delta
                            sum_x -= delta
                            sum_y -= delta
                            for t in range(1, top, 2):
                                f[st_edge[t]] -= delta
                            for t in range(0, top, 2):
                                kk = st_edge[t]
                                f[kk] += delta
                                _add_back_arc(st_node[t + 1], kk, st_node[t], f, roff, rcnt, rk, ru, listed, rcur)
                            if y[v] == 0:
                                dr[v] = big
                            augmented = True
                            break
                    else:                                             # a sink-side class without room
                        d = dr[w]
                        found = -1
                        if d < limit:
                            s = rcur[w]
                            while s < roff[w] + rcnt[w]:
                                if f[rk[s]] > 0 and dl[ru[s]] == d + 1:
                                    found = s
                                    break
                                s += 1
                            rcur[w] = s
                        if found < 0:
                            dr[w] = big
                            top -= 1
                            lcur[st_node[top]] += 1
                            continue
                        st_edge[top] = rk[found]
                        top += 1
                        st_node[top] = ru[found]
                if not augmented:
                    break
    value = 0
    for v in range(n_b):
        value += b[v] - y[v]
    return f, x, y, value, phases


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


@numba.njit(cache=True)
def pair_members(ci: np.ndarray, cj: np.ndarray, flow: np.ndarray, lptr: np.ndarray, lmem: np.ndarray,
                 rptr: np.ndarray, rmem: np.ndarray, n_left: int,
                 n_right: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Element-level matching from an integral class flow: class edge e pairs the next ``flow[e]`` unused members
    of its two classes, in order.  Returns (mate_left, mate_right), -1 = free.  O(V + E)."""
    lnext = lptr[:-1].copy()
    rnext = rptr[:-1].copy()
    mate_l = np.full(n_left, -1, np.int64)
    mate_r = np.full(n_right, -1, np.int64)
    for e in range(ci.shape[0]):
        fl = flow[e]
        if fl <= 0:
            continue
        i = ci[e]
        j = cj[e]
        for t in range(fl):
            x = lmem[lnext[i] + t]
            y = rmem[rnext[j] + t]
            mate_l[x] = y
            mate_r[y] = x
        lnext[i] += fl
        rnext[j] += fl
    return mate_l, mate_r


def twin_flow(a: np.ndarray, b: np.ndarray, ci: np.ndarray, cj: np.ndarray, *, classify: bool = True) -> dict:
    """The numba twin-class engine behind :func:`graphlink.matching.twin_classify` (same contract).

    1. Maximum flow of s → i (a_i) → j (min(a_i, b_j)) → t (b_j) by :func:`graphlink.kernels.flow.class_max_flow`:
       Hopcroft–Karp (1973) generalised to capacities — Dinic's blocking flows on the bipartite class graph,
       BFS layers cut at the first class with room, DFS with current arcs and dead-end removal, greedy warm
       start, early exit once one side is saturated.  Each phase is O(V + E); O(√V) phases on unit-capacity
       networks.  (REIDIT-I's pairs are not used as a warm start: the greedy pass already routes nearly all
       of the flow, and it needs no proof that its pairs extend to a maximum flow.)
    2. Strongly connected components of the residual graph, s and t included (iterative Tarjan 1972, O(V + E),
       :func:`graphlink.kernels.flow.residual_scc`), and reachability from s (d_left).
    3. allowed = f > 0 or same SCC; vital = f = 1, a_i = b_j = 1, SCCs differ; class union-degrees in the
       same pass.  O(E).

    The engine runs on the side the class edges are grouped by (``LinkGraph`` keeps them sorted by the
    de-identified class), so no E-sized permutation is built: reversing every arc of the network swaps the
    roles of the sides and leaves flows and SCCs unchanged, and "reachable from s" becomes "reaches t".
    Unsorted input is counting-sorted once.  ``flow`` is int32 (class sizes fit), which halves the largest
    array: the peak is about 6–7 bytes per class edge besides the inputs (97 MiB measured on a 1.6e7-edge
    class graph; the scipy path needs about 125 bytes per edge).  With ``classify=False`` only the flow is
    computed (flow, nu).
    """
    a = np.ascontiguousarray(a, np.int64)
    b = np.ascontiguousarray(b, np.int64)
    ci = np.ascontiguousarray(ci, np.int64)
    cj = np.ascontiguousarray(cj, np.int64)
    n_a, n_b = len(a), len(b)
    order = None
    ptr, grouped = group_pointers(ci, n_a)
    if grouped:
        transposed, src_cap, dst_cap, nb = False, a, b, cj
    else:
        ptr, grouped = group_pointers(cj, n_b)
        if grouped:
            transposed, src_cap, dst_cap, nb = True, b, a, ci
        else:
            order = counting_order(ci, n_a)
            ptr, _ = group_pointers(ci[order], n_a)
            transposed, src_cap, dst_cap, nb = False, a, b, cj[order]
    f, x, y, value, _ = class_max_flow(src_cap, dst_cap, ptr, nb)
    out: dict = {"flow": f, "nu": int(value)}
    if classify:
        comp, from_s, to_t = residual_scc(src_cap, dst_cap, ptr, nb, f, x, y)
        out["allowed"], out["vital"], deg_src, deg_dst = classify_positions(src_cap, dst_cap, ptr, nb, f, comp)
        n_src = len(src_cap)
        out["d_left"] = to_t[1 + n_src:1 + n_src + n_a] if transposed else from_s[1:1 + n_a]
        out["degree_left"], out["degree_right"] = (deg_dst, deg_src) if transposed else (deg_src, deg_dst)
    if order is not None:
        for key in ("flow", "allowed", "vital"):
            if key in out:
                back = np.empty_like(out[key])
                back[order] = out[key]
                out[key] = back
    return out


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


# ---------------------------------------------------------------------------------------------------------------
# Arrow-native ingest (graphlink.ingest): distinct strings straight from Arrow buffers, rows to codes and trails.
# ---------------------------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _hash_table(n: int) -> np.ndarray:  # pragma: no cover - numba
    """An empty open-addressing table of at least 1.5n + 2 slots, a power of two (load factor at most 2/3);
    slot s is (hash, id + 1) at [2s, 2s + 1] (side by side: one cache line per probe), id + 1 = 0 when empty."""
    size = 1
    while size < n + n // 2 + 2:
        size *= 2
    return np.zeros(2 * size, np.uint64)


@numba.njit(inline="always", cache=True)
def _probe(table: np.ndarray, h: np.uint64, slot: int) -> tuple[int, int]:  # pragma: no cover - numba
    """From ``slot`` on (wrapping), the first slot that is empty or holds hash ``h``: (slot, its id or -1)."""
    mask = table.shape[0] // 2 - 1
    while True:
        ident = np.int64(table[2 * slot + 1]) - 1
        if ident < 0 or table[2 * slot] == h:
            return slot, ident
        slot = (slot + 1) & mask


@numba.njit(inline="always", cache=True)
def _same_bytes(offsets: np.ndarray, data: np.ndarray, i: int, j: int) -> bool:  # pragma: no cover - numba
    a, b = offsets[i], offsets[j]
    n = offsets[i + 1] - a
    if offsets[j + 1] - b != n:
        return False
    for q in range(n):  # noqa: SIM110  (numba: an early-exit loop)
        if data[a + q] != data[b + q]:
            return False
    return True


@numba.njit(cache=True)
def dedupe_strings(offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Distinct byte strings of an Arrow (large) string array given as its ``offsets`` and ``data`` buffers.

    Returns (code of every string, in order of first appearance; index of the first string of every code).
    Open addressing on a 64-bit hash of the bytes (:func:`_hash_table`), every hit verified byte for byte, so
    the codes are exact.  O(total bytes) expected.
    """
    n = offsets.shape[0] - 1
    table = _hash_table(n)
    mask = table.shape[0] // 2 - 1
    codes = np.empty(n, np.int32)
    first = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        h = np.uint64(14695981039346656037)
        for p in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[p])) * np.uint64(1099511628211)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
        slot = np.int64(h & np.uint64(mask))
        while True:
            slot, j = _probe(table, h, slot)
            if j < 0:                                   # new string: code k
                table[2 * slot] = h
                table[2 * slot + 1] = np.uint64(k + 1)
                first[k] = i
                codes[i] = k
                k += 1
                break
            if _same_bytes(offsets, data, first[j], i):
                codes[i] = j
                break
            slot = (slot + 1) & mask
    return codes, first[:k]


@numba.njit(cache=True)
def gather_codes(entry_codes: np.ndarray, start: int, idx: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[i] = entry_codes[start + idx[i]]``: a dictionary chunk's indices to codes, without the int64 copy of
    the indices that ``np.take`` makes.  Arrow guarantees the indices are in range.  O(len(idx))."""
    for i in range(idx.shape[0]):
        out[i] = entry_codes[start + idx[i]]


@numba.njit(cache=True)
def factorize_rows(elem: np.ndarray, kind: np.ndarray, loc: np.ndarray, n_elem: int,
                   n_loc_codes: int) -> tuple:  # pragma: no cover - numba
    """Rows (element code, kind 0/1, location code) to the numbering trails use, in one pass.

    Locations are renumbered in order of first appearance; elements per kind in order of first appearance among
    that kind's rows (so the same text may be one identified and one de-identified element).  Returns
    (location codes in first-appearance order, row location index, row element index within its kind,
    global element code of every identified element, of every de-identified element).  O(rows + n_elem).
    """
    n = elem.shape[0]
    loc_rank = np.full(n_loc_codes, -1, np.int32)
    loc_order = np.empty(n_loc_codes, np.int32)
    local = np.full((2, n_elem), -1, np.int32)
    keys = np.empty((2, n_elem), np.int32)
    count = np.zeros(2, np.int64)
    n_loc = 0
    row_loc = np.empty(n, np.int32)
    row_elem = np.empty(n, np.int32)
    for r in range(n):
        c = loc[r]
        if loc_rank[c] < 0:
            loc_rank[c] = n_loc
            loc_order[n_loc] = c
            n_loc += 1
        row_loc[r] = loc_rank[c]
        k = kind[r]
        e = elem[r]
        if local[k, e] < 0:
            local[k, e] = count[k]
            keys[k, count[k]] = e
            count[k] += 1
        row_elem[r] = local[k, e]
    return loc_order[:n_loc], row_loc, row_elem, keys[0, :count[0]].copy(), keys[1, :count[1]].copy()


@numba.njit(cache=True)
def pack_rows(row_elem: np.ndarray, kind: np.ndarray, row_loc: np.ndarray, n_identified: int, n_deidentified: int,
              n_loc: int, n_words: int) -> tuple:  # pragma: no cover - numba
    """Bit-pack rows into the two ``ones`` matrices (bit c of word c // 64 of element row) and find repeats.

    A row whose bit is already set repeats an earlier row exactly (same element, kind and location).  Returns
    (identified ones, de-identified ones, per-row repeat flags, per location × kind count of distinct rows).
    O(rows + (|M| + |N|)·W).
    """
    ones_i = np.zeros((n_identified, n_words), np.uint64)
    ones_d = np.zeros((n_deidentified, n_words), np.uint64)
    repeat = np.zeros(row_elem.shape[0], np.bool_)
    sizes = np.zeros((n_loc, 2), np.int64)
    for r in range(row_elem.shape[0]):
        c = row_loc[r]
        bit = np.uint64(1) << np.uint64(c % 64)
        w = c // 64
        if kind[r] == 0:
            old = ones_i[row_elem[r], w]
            ones_i[row_elem[r], w] = old | bit
        else:
            old = ones_d[row_elem[r], w]
            ones_d[row_elem[r], w] = old | bit
        if old & bit:
            repeat[r] = True
        else:
            sizes[c, kind[r]] += 1
    return ones_i, ones_d, repeat, sizes


@numba.njit(inline="always", cache=True)
def _row_hash(words: np.ndarray, i: int) -> np.uint64:  # pragma: no cover - numba
    h = np.uint64(0x9E3779B97F4A7C15)
    for k in range(words.shape[1]):
        x = words[i, k] * np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(31)
        h = (h ^ x) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(29))


@numba.njit(inline="always", cache=True)
def _same_row(a: np.ndarray, i: int, b: np.ndarray, j: int) -> bool:  # pragma: no cover - numba
    for k in range(a.shape[1]):  # noqa: SIM110  (numba: an early-exit loop)
        if a[i, k] != b[j, k]:
            return False
    return True


@numba.njit(cache=True)
def group_rows(top: np.ndarray, bottom: np.ndarray) -> tuple[np.ndarray, int]:  # pragma: no cover - numba
    """Group id of every row of the two (n, W) uint64 arrays stacked (``top`` first, never copied) such that
    rows share a group iff they are equal; groups numbered in order of first appearance.  Returns (group per
    row, number of groups).

    Open addressing on a 64-bit hash of the row (:func:`_hash_table`, the slot id is the group's first row),
    every hit verified word for word (so collisions cost time, never correctness).  O(n·W) expected.
    """
    n_top = top.shape[0]
    n = n_top + bottom.shape[0]
    table = _hash_table(n)
    mask = table.shape[0] // 2 - 1
    group = np.empty(n, np.int64)
    g = 0
    for i in range(n):
        src, r = (top, i) if i < n_top else (bottom, i - n_top)
        h = _row_hash(src, r)
        slot = np.int64(h & np.uint64(mask))
        while True:
            slot, f = _probe(table, h, slot)
            if f < 0:                                   # a new row: group g, first seen at i
                table[2 * slot] = h
                table[2 * slot + 1] = np.uint64(i + 1)
                group[i] = g
                g += 1
                break
            fsrc, fr = (top, f) if f < n_top else (bottom, f - n_top)
            if _same_row(fsrc, fr, src, r):
                group[i] = group[f]
                break
            slot = (slot + 1) & mask
    return group, g
