"""Array kernels shared by the trail model decision, the link graph and the analyses.

Everything here works on bit-packed trail words (uint64, see :mod:`graphlink.trails`) and integer arrays only,
so the modules above it (trails, linkgraph, matching, reidit) can all use it without import cycles.

* twin grouping of identical rows and 64-bit row fingerprints (algorithms.md §3.2);
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

Progress = Callable[[float, str], None]


def row_classes(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group identical rows of the horizontally stacked uint64 arrays.

    Returns (representative row index per class, class id per row), classes in first-appearance order.
    O(n log n) via a structured view.
    """
    stacked = np.ascontiguousarray(np.hstack(arrays)) if len(arrays) > 1 else np.ascontiguousarray(arrays[0])
    n = stacked.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    view = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    # renumber classes in order of first appearance so results are deterministic and readable
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order].astype(np.int64), rank[inverse.ravel()].astype(np.int64)


def fingerprint(words: np.ndarray) -> np.ndarray:
    """64-bit row fingerprint (xor of word × odd constant, rotated per word); collisions are verified."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for w in range(words.shape[1]):
            x = words[:, w] * mult
            x ^= x >> np.uint64(29)
            h = (h * np.uint64(0xBF58476D1CE4E5B9)) ^ x
    return h


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
            out_r.append(rr[ok])
            out_s.append(ss[ok])
        if progress and (t % 16 == 0):
            progress((t + 1) / len(mask_rep), "linking (grouped by * pattern)")
    if not out_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_r).astype(np.int64), np.concatenate(out_s).astype(np.int64)


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


def members(cls: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of class -> member rows."""
    order = np.argsort(cls, kind="stable")
    ptr = np.searchsorted(cls[order], np.arange(n_classes + 1))
    return ptr, order.astype(np.int64)


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


def csr(src: np.ndarray, dst: np.ndarray, n_src: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, neighbours) of the directed edges src -> dst.  O(E log E)."""
    order = np.argsort(src, kind="stable")
    ptr = np.searchsorted(src[order], np.arange(n_src + 1)).astype(np.int64)
    return ptr, np.asarray(dst, np.int64)[order]


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
# Twin-class max-flow engine (algorithms.md §2.3): capacitated Hopcroft–Karp on the class graph + residual SCC.
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
