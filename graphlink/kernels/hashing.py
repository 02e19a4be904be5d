"""Open-addressing hash tables in numba and the Arrow-native ingest pass built on them.

* :func:`dedupe_strings`: distinct byte strings of an Arrow string array (codes in order of first appearance);
* :func:`gather_codes`, :func:`factorize_rows`, :func:`pack_rows`: rows of codes to the numbering trails use and
  to bit-packed trail words, finding exact repeats (:mod:`graphlink.core.ingest`);
* :func:`group_rows`: identical rows of two packed matrices (REIDIT-C's exact matches).

Every hit is verified byte for byte or word for word, so hash collisions cost time, never correctness.
"""

from __future__ import annotations

import numba
import numpy as np


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
