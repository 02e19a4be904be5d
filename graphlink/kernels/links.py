"""Link tests on bit-packed trail words (thesis Definition 17): which reserved row can be which complete row.

The link test between a reserved row r and a complete row s is::

    ((s.ones ^ r.ones) & r.known) == 0        for every word

* :func:`class_links`: every linked (r, s) pair of two sets of rows (twin classes in practice), grouped by
  '*' pattern or by a parallel brute force (docs/algorithms.md#link-generation);
* :func:`first_links`: for every reserved row, one linked complete row or -1 (early exit): the cheap test behind
  the data-model decision (a record that can be nobody refutes a model);
* :func:`block_pairs`: trail-class edges refined by attribute blocks (attribute linkage sets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numba
import numpy as np

from graphlink.kernels.rows import fingerprint, row_classes

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
