"""Row operations on packed trail words and integer arrays in plain NumPy (no numba, no scipy).

Bit packing of trail words (bit c of word c // 64, see :mod:`graphlink.core.trails`), twin grouping of identical
rows, 64-bit row fingerprints (docs/algorithms.md#link-generation) and CSR groupings.  They live apart from
the numba kernels of this package so that commands on small releases (reading, trails, their summary) start
without numba: loading numba and its cached kernels costs about half a second to a second per process.
"""

from __future__ import annotations

import numpy as np


def n_words(n_locations: int) -> int:
    return max(1, (n_locations + 63) // 64)


def pack_columns(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_locations: int) -> np.ndarray:
    """Set bit ``cols[k]`` of row ``rows[k]`` in an (n_rows, W) uint64 array.  O(len(rows))."""
    out = np.zeros((n_rows, n_words(n_locations)), dtype=np.uint64)
    if len(rows):
        cols = np.asarray(cols, dtype=np.int64)
        bits = np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64))
        np.bitwise_or.at(out, (np.asarray(rows, dtype=np.int64), cols // 64), bits)
    return out


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


def members(cls: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of class -> member rows."""
    order = np.argsort(cls, kind="stable")
    ptr = np.searchsorted(cls[order], np.arange(n_classes + 1))
    return ptr, order.astype(np.int64)


def csr(src: np.ndarray, dst: np.ndarray, n_src: int, *, presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, neighbours) of the directed edges src -> dst, neighbours in edge order (a stable sort).
    ``presorted``: ``src`` is sorted already and ``dst`` is returned as it is (no copy).  Pointers by counting,
    so at most one sort order and one gather (16 bytes per edge) are alive.  O(E log E)."""
    ptr = np.zeros(n_src + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n_src), out=ptr[1:])
    if presorted:
        return ptr, np.asarray(dst, np.int64)
    return ptr, np.asarray(dst, np.int64)[np.argsort(src, kind="stable")]


def weighted_degrees(ptr: np.ndarray, nb: np.ndarray, weight: np.ndarray, chunk: int = 1 << 24) -> np.ndarray:
    """Σ ``weight[nb[e]]`` over each CSR row's edges (a twin class's degree counted in members), a chunk of edges
    at a time, so no temporary has the edge count (1e6 subjects × 72 locations: 4.5e8 class edges).
    O(E + rows · E / chunk).

    Examples
    --------
    >>> import numpy as np
    >>> weighted_degrees(np.array([0, 2, 2, 3]), np.array([0, 1, 1]), np.array([5, 7])).tolist()
    [12, 0, 7]
    """
    out = np.zeros(len(ptr) - 1, np.int64)
    for lo in range(0, len(nb), chunk):
        hi = min(len(nb), lo + chunk)
        first = int(np.searchsorted(ptr, lo, side="right")) - 1
        last = int(np.searchsorted(ptr, hi, side="left"))
        rows = np.searchsorted(ptr[first:last + 1], np.arange(lo, hi), side="right") - 1
        out[first:last] += np.bincount(rows, weights=weight[nb[lo:hi]], minlength=last - first).astype(np.int64)
    return out
