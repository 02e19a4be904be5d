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
