"""The bipartite link graph (thesis ch. 2 Definition 6, ch. 3 Definition 17, §4.2.4).

A de-identified trail n *links* an identified trail m when they agree at every location where neither is
``*`` (n ⪯ m, the subtrail relation; for unreserved data this is equality).  With the reserved side R
(the one with ``*``) and the complete side S, the test on packed words is::

    ((S.ones ^ R.ones) & R.known) == 0        for every word

Scale (algorithms.md §3): both sides are first compressed into *twin classes* (identical trails), links
are generated between classes, and element-level edges are expanded only on demand.  Class links use the
cheaper of two exact methods:

* **mask grouping** — when few distinct ``*`` patterns exist (``*`` arises because whole locations
  withhold): for each distinct known-mask K, hash ``S.ones & K`` and join with R's ones.
  O(#K · |S| log |S| + E).
* **numba brute force** — per-entry ``*``: every (R class, S class) pair checked with early exit,
  parallel over R.  O(|R|·|S|·W) at ~1-2 G pair checks/s on two cores.

Null trails (all ``*``, Definition 18) are never materialised: following §4.2.4 the reserved side is
padded with ``n_null = |S| − |R|`` symbolic null trails, each linked to every complete-side element.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numba
import numpy as np

from graphlink.errors import ModelAssumptionError
from graphlink.trails import Trails, TrailSide

Side = Literal["identified", "deidentified"]
Progress = Callable[[float, str], None]

#: Refuse to expand more element-level edges than this (memory ~16 B/edge); twin classes still work.
MAX_EXPANDED_EDGES = 300_000_000


def _row_classes(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _fingerprint(words: np.ndarray) -> np.ndarray:
    """64-bit row fingerprint (xor of word × odd constant, rotated per word); collisions are verified."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for w in range(words.shape[1]):
            x = words[:, w] * mult
            x ^= x >> np.uint64(29)
            h = (h * np.uint64(0xBF58476D1CE4E5B9)) ^ x
    return h


@numba.njit(parallel=True, cache=True)
def _count_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray) -> np.ndarray:  # pragma: no cover
    n_r, n_w = r_known.shape
    n_s = s_ones.shape[0]
    counts = np.zeros(n_r, np.int64)
    for i in numba.prange(n_r):
        c = 0
        for j in range(n_s):
            ok = True
            for w in range(n_w):
                if ((s_ones[j, w] ^ r_ones[i, w]) & r_known[i, w]) != 0:
                    ok = False
                    break
            if ok:
                c += 1
        counts[i] = c
    return counts


@numba.njit(parallel=True, cache=True)
def _fill_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray,
                offsets: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    n_r, n_w = r_known.shape
    n_s = s_ones.shape[0]
    for i in numba.prange(n_r):
        pos = offsets[i]
        for j in range(n_s):
            ok = True
            for w in range(n_w):
                if ((s_ones[j, w] ^ r_ones[i, w]) & r_known[i, w]) != 0:
                    ok = False
                    break
            if ok:
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
    mask_rep, mask_of = _row_classes(r_known)
    out_r, out_s = [], []
    for t, m in enumerate(mask_rep):
        rs = np.flatnonzero(mask_of == t)
        K = r_known[m]
        masked = s_ones & K
        fs = _fingerprint(masked)
        order = np.argsort(fs, kind="stable")
        fs_sorted = fs[order]
        fr = _fingerprint(r_ones[rs])
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
        n_masks = len(_row_classes(r_known)[0])
        # mask path ≈ #K·|S|·~30 ns (hash + sort); brute force ≈ |R|·|S|·~0.5 ns on two cores
        method = "mask" if n_masks * 60 <= n_r else "bruteforce"
    if method == "mask":
        return _links_by_mask(r_known, r_ones, s_ones, progress)
    return _links_bruteforce(np.ascontiguousarray(r_known), np.ascontiguousarray(r_ones),
                             np.ascontiguousarray(s_ones))


@dataclass(frozen=True)
class LinkGraph:
    """Link edges of a release, twin-compressed, with symbolic null trails (thesis §4.2.4).

    Element-level edges (``ei`` identified row, ``ej`` de-identified row) are expanded lazily from the
    class edges; every analysis that can work on classes does so.
    """

    trails: Trails
    id_class: np.ndarray          # class of each identified row
    de_class: np.ndarray          # class of each de-identified row
    id_class_size: np.ndarray
    de_class_size: np.ndarray
    class_ei: np.ndarray          # class-level edges, sorted by (class_ej, class_ei)
    class_ej: np.ndarray
    n_null: int
    null_side: Side | None

    @property
    def n_identified(self) -> int:
        return len(self.trails.identified)

    @property
    def n_deidentified(self) -> int:
        return len(self.trails.deidentified)

    @property
    def n_expanded_edges(self) -> int:
        return int(np.sum(self.id_class_size[self.class_ei] * self.de_class_size[self.class_ej]))

    @cached_property
    def _expanded(self) -> tuple[np.ndarray, np.ndarray]:
        n_edges = self.n_expanded_edges
        if n_edges > MAX_EXPANDED_EDGES:
            raise ModelAssumptionError(
                f"the link graph has {n_edges:,} element-level edges (low-entropy trails); it is analysed "
                f"on {len(self.class_ei):,} twin-class edges instead, but this view needs the expansion")
        id_ptr, id_mem = _members(self.id_class, len(self.id_class_size))
        de_ptr, de_mem = _members(self.de_class, len(self.de_class_size))
        # vectorised block expansion: class edge e contributes a_e × b_e member pairs, enumerated as t in
        # [0, a_e·b_e) with member offsets (t // b_e, t % b_e); edges come out sorted by (ej, ei) after one sort
        a = self.id_class_size[self.class_ei]
        b = self.de_class_size[self.class_ej]
        counts = a * b
        edge = np.repeat(np.arange(len(counts)), counts)
        t = np.arange(n_edges, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        bb = b[edge]
        ei = id_mem[id_ptr[self.class_ei[edge]] + t // bb]
        ej = de_mem[de_ptr[self.class_ej[edge]] + t % bb]
        del edge, t, bb
        order = np.lexsort((ei, ej))
        return ei[order].astype(np.int64), ej[order].astype(np.int64)

    @property
    def ei(self) -> np.ndarray:
        """Identified row of every element-level link edge (edges sorted by (ej, ei))."""
        return self._expanded[0]

    @property
    def ej(self) -> np.ndarray:
        """De-identified row of every element-level link edge."""
        return self._expanded[1]

    @cached_property
    def _class_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple, tuple]:
        n_ic, n_dc = len(self.id_class_size), len(self.de_class_size)
        by_j = np.searchsorted(self.class_ej, np.arange(n_dc + 1))          # class edges are sorted by ej
        order = np.argsort(self.class_ei, kind="stable")
        by_i = np.searchsorted(self.class_ei[order], np.arange(n_ic + 1))
        return (by_j, by_i, order, self.class_ej[order], _members(self.id_class, n_ic),
                _members(self.de_class, n_dc))

    def neighbours_of_deidentified(self, j: int) -> np.ndarray:
        """Identified rows linked to de-identified row ``j`` (no null trails), from twin classes: never
        expands the element-level edge list.  O(degree)."""
        by_j, _, _, _, (ip, im), _ = self._class_csr
        cj = self.de_class[j]
        classes = self.class_ei[by_j[cj]:by_j[cj + 1]]
        return np.concatenate([im[ip[c]:ip[c + 1]] for c in classes]) if len(classes) else np.zeros(0, np.int64)

    def neighbours_of_identified(self, i: int) -> np.ndarray:
        """De-identified rows linked to identified row ``i`` (no null trails), from twin classes.  O(degree)."""
        _, by_i, _, cej_sorted, _, (dp, dm) = self._class_csr
        ci = self.id_class[i]
        classes = cej_sorted[by_i[ci]:by_i[ci + 1]]
        return np.concatenate([dm[dp[c]:dp[c + 1]] for c in classes]) if len(classes) else np.zeros(0, np.int64)

    def degrees(self) -> tuple[np.ndarray, np.ndarray]:
        """Element-level degrees (identified, de-identified) without null trails, from classes.  O(E_class)."""
        di_class = np.bincount(self.class_ei, weights=self.de_class_size[self.class_ej],
                               minlength=len(self.id_class_size))
        dj_class = np.bincount(self.class_ej, weights=self.id_class_size[self.class_ei],
                               minlength=len(self.de_class_size))
        return di_class[self.id_class].astype(np.int64), dj_class[self.de_class].astype(np.int64)


def _members(cls: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of class -> member rows."""
    order = np.argsort(cls, kind="stable")
    ptr = np.searchsorted(cls[order], np.arange(n_classes + 1))
    return ptr, order.astype(np.int64)


def build_linkgraph(trails: Trails, *, method: Literal["auto", "mask", "bruteforce"] = "auto",
                    progress: Progress | None = None) -> LinkGraph:
    """Link edges between identified and de-identified trails (Definition 17), twin-compressed.

    O(|M| log |M| + |N| log |N|) for the twin classes plus the class-link cost of :func:`class_links`.
    """
    M, N = trails.identified, trails.deidentified
    id_rep, id_class = _row_classes(M.known, M.ones)
    de_rep, de_class = _row_classes(N.known, N.ones)
    id_size = np.bincount(id_class, minlength=len(id_rep)).astype(np.int64)
    de_size = np.bincount(de_class, minlength=len(de_rep)).astype(np.int64)

    if trails.reserved == "identified":
        R, S, r_rep, s_rep = M, N, id_rep, de_rep
    else:
        R, S, r_rep, s_rep = N, M, de_rep, id_rep
    r_idx, s_idx = class_links(R.known[r_rep], R.ones[r_rep], S.ones[s_rep], method=method, progress=progress)
    if trails.reserved == "identified":
        cei, cej = r_idx, s_idx
    else:
        cei, cej = s_idx, r_idx
    order = np.lexsort((cei, cej))
    cei, cej = cei[order], cej[order]

    n_null, null_side = _null_padding(trails, len(M), len(N))
    return LinkGraph(trails, id_class, de_class, id_size, de_size, cei, cej, n_null, null_side)


def _null_padding(trails: Trails, n_m: int, n_n: int) -> tuple[int, Side | None]:
    """§4.2.4: pad the reserved side with null trails up to the complete side's size."""
    if trails.reserved == "deidentified" and n_m > n_n:
        return n_m - n_n, "deidentified"
    if trails.reserved == "identified" and n_n > n_m:
        return n_n - n_m, "identified"
    return 0, None


def side_arrays(graph: LinkGraph, side: Side) -> TrailSide:
    return graph.trails.identified if side == "identified" else graph.trails.deidentified
