"""Open-addressing hash tables in numba and the Arrow-native ingest pass built on them.

* :func:`dedupe_strings`: distinct byte strings of an Arrow string array (codes in order of first appearance);
* :func:`gather_codes`, :func:`factorize_rows`, :func:`pack_rows`: rows of codes to the numbering trails use and
  to bit-packed trail words, finding exact repeats (:mod:`graphlink.core.ingest`);
* :func:`group_rows`: identical rows of two packed matrices (REIDIT-C's exact matches).

Every hit is verified byte for byte or word for word, so hash collisions cost time, never correctness.

:func:`dedupe_strings` and :func:`group_rows` are *partitioned*: every row is hashed, the rows are split by the top
bits of their hash into partitions of about 4,096 rows (a stable counting sort that carries the hashes along), and
each partition is grouped by hash in its own small table, which stays in the processor's cache; then every row is
compared once with the first row of its hash, in row order, and only a difference (a 64-bit collision) makes
its partition be searched for the first row really equal to it.  One table over millions of rows, comparing rows
while probing, misses the cache on nearly every probe and reads the rows at random: on the 2 M element keys and
2 M trails of the end-to-end benchmark the partitioned kernels take 0.03 s and 0.08 s instead of 0.22 s and
0.20 s.  A row's group is the first row equal to it (partitions keep the input order), and groups are numbered
by first appearance in one last pass, so the output is exactly that of one table over all rows.  They run on
one thread: a version with two threads (numba ``prange`` over partitions) was no faster on the project's 2-core
machine (the work is bound by memory latency, not by arithmetic) and slower while another process held a core,
and what is left (0.1 s) would not repay a thread pool's start.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

#: rows per partition of the partitioned kernels, about (a table of 8,192 slots: 128 KiB)
PARTITION_ROWS = 4096


@numba.njit(cache=True)
def _table_size(n: int) -> int:  # pragma: no cover - numba
    """Slots of a table for ``n`` ids: at least 1.5n + 2, a power of two (load factor at most 2/3)."""
    size = 1
    while size < n + n // 2 + 2:
        size *= 2
    return size


@numba.njit(cache=True)
def _hash_table(n: int) -> np.ndarray:  # pragma: no cover - numba
    """An empty open-addressing table for ``n`` ids (:func:`_table_size` slots); slot s is (hash, id + 1) at
    [2s, 2s + 1] (side by side: one cache line per probe), id + 1 = 0 when empty."""
    return np.zeros(2 * _table_size(n), np.uint64)


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
def _partition(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Rows by the top bits of their hash ``h`` (about ``PARTITION_ROWS`` rows per partition, at most 4,096
    partitions): (row indices, their hashes, partition pointers), each partition's rows in increasing order (a
    stable counting sort).  The hashes travel with the rows so that the tables read them in order.  Row indices
    are int32 (as the codes of :func:`dedupe_strings` are): half the memory to fault in.  O(n)."""
    n = h.shape[0]
    if n > 2**31 - 1:
        raise ValueError("too many rows for int32 row indices")
    bits = 1
    while bits < 12 and n >> bits > PARTITION_ROWS:
        bits += 1
    shift = np.uint64(64 - bits)
    ptr = np.zeros((1 << bits) + 1, np.int64)
    for i in range(n):
        ptr[np.int64(h[i] >> shift) + 1] += 1
    for p in range(1 << bits):
        ptr[p + 1] += ptr[p]
    at = ptr[:-1].copy()
    order = np.empty(n, np.int32)
    hashes = np.empty(n, np.uint64)
    for i in range(n):
        p = np.int64(h[i] >> shift)
        order[at[p]] = i
        hashes[at[p]] = h[i]
        at[p] += 1
    return order, hashes, ptr


@numba.njit(cache=True)
def _partition_table(ptr: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """One table's memory, big enough for the largest partition (every partition reuses its front)."""
    largest = 0
    for p in range(ptr.shape[0] - 1):
        largest = max(largest, ptr[p + 1] - ptr[p])
    return _hash_table(largest)


@numba.njit(inline="always", cache=True)
def _clear_table(memory: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - numba
    """The front of ``memory`` (:func:`_partition_table`) as an empty table for ``n`` ids."""
    table = memory[:2 * _table_size(n)]
    table[:] = 0
    return table


@numba.njit(cache=True)
def _first_same_hash(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """For every row i, the first row whose hash equals ``h[i]`` (i itself when none comes before), by hash
    partition (:func:`_partition`), one small table per partition; plus the partition's (row order, pointers)
    for the callers' collision checks.  Rows are not compared here: the callers compare each row once with the
    row found, in row order (reading the rows in order, not at random), and look again in the partition only
    when the two differ (a 64-bit collision).  O(n) expected."""
    order, hashes, ptr = _partition(h)
    memory = _partition_table(ptr)
    first = np.empty(h.shape[0], np.int32)
    for part in range(ptr.shape[0] - 1):
        table = _clear_table(memory, ptr[part + 1] - ptr[part])
        mask = table.shape[0] // 2 - 1
        for q in range(ptr[part], ptr[part + 1]):     # rows in increasing order: a hash's first row first
            i, hq = order[q], hashes[q]
            slot, j = _probe(table, hq, np.int64(hq & np.uint64(mask)))
            if j < 0:
                table[2 * slot] = hq
                table[2 * slot + 1] = np.uint64(i + 1)
                j = i
            first[i] = j
    return first, order, ptr


def _same(a: np.ndarray, b: np.ndarray, i: int, j: int) -> bool:
    """Rows i and j equal: :func:`_same_bytes` on strings (1-d offsets, bytes), :func:`_same_stacked` on packed
    words (two 2-d arrays); numba picks one by the argument types at compile time (:func:`_same_impl`)."""
    raise NotImplementedError("numba only")


@overload(_same)
def _same_impl(a, b, i, j):  # noqa: ANN001, ANN202 - numba typing hook
    if a.ndim == 1:
        def same_strings(a, b, i, j):  # noqa: ANN001, ANN202
            return _same_bytes(a, b, i, j)
        return same_strings

    def same_words(a, b, i, j):  # noqa: ANN001, ANN202
        return _same_stacked(a, b, i, j)
    return same_words


@numba.njit(cache=True)
def _first_equal(h: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """For every row i, the first row equal to it (i itself when none comes before), where rows are strings
    (``a``, ``b`` the offsets and bytes of an Arrow string array) or packed words (``a``, ``b`` two 2-d arrays
    stacked), compared by :func:`_same`, and ``h`` hashes them (equal rows, equal hashes).  Grouped by hash
    (:func:`_first_same_hash`), then each row compared once with the first row of its hash, in row order; on a
    difference (a 64-bit collision, rare) the row's partition is searched for the first row really equal to it.
    O(n) expected."""
    first, order, ptr = _first_same_hash(h)
    shift = _partition_shift(ptr)
    for i in range(h.shape[0]):
        if first[i] != i and not _same(a, b, first[i], i):
            q = ptr[np.int64(h[i] >> shift)]
            while order[q] < i and (h[order[q]] != h[i] or not _same(a, b, order[q], i)):
                q += 1
            first[i] = order[q]                     # rows in order: the first equal one, or i itself
    return first


@numba.njit(cache=True)
def _partition_shift(ptr: np.ndarray) -> np.uint64:  # pragma: no cover - numba
    """The shift that turns a hash into its partition (:func:`_partition`), from the partition pointers."""
    bits = 0
    while (1 << bits) < ptr.shape[0] - 1:
        bits += 1
    return np.uint64(64 - bits)


@numba.njit(cache=True)
def _number_groups(first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Groups numbered in order of first appearance, from ``first[i]``, the first row equal to row i (so
    ``first[i] <= i``): (group of every row, written over ``first``; first row of every group).  O(n)."""
    n = first.shape[0]
    heads = np.empty(n, np.int64)
    g = 0
    for i in range(n):
        f = first[i]
        if f == i:
            first[i] = g
            heads[g] = i
            g += 1
        else:
            first[i] = first[f]                     # f < i: already its group
    return first, heads[:g]


@numba.njit(inline="always", cache=True)
def _bytes_hash(offsets: np.ndarray, data: np.ndarray, i: int) -> np.uint64:  # pragma: no cover - numba
    """64-bit hash of string ``i``: FNV-1a over its bytes, then a mixing step (the top bits pick partitions)."""
    h = np.uint64(14695981039346656037)
    for p in range(offsets[i], offsets[i + 1]):
        h = (h ^ np.uint64(data[p])) * np.uint64(1099511628211)
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


@numba.njit(cache=True)
def dedupe_strings(offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Distinct byte strings of an Arrow (large) string array given as its ``offsets`` and ``data`` buffers.

    Returns (int32 code of every string, in order of first appearance; index of the first string of every
    code).  Grouped on a 64-bit hash of the bytes, partitioned (module docstring), every string then compared
    byte for byte with the first of its group, so the codes are exact.  O(total bytes) expected.
    """
    n = offsets.shape[0] - 1
    h = np.empty(n, np.uint64)
    for i in range(n):
        h[i] = _bytes_hash(offsets, data, i)
    return _dedupe_hashed(offsets, data, h)


@numba.njit(cache=True)
def _dedupe_hashed(offsets: np.ndarray, data: np.ndarray,
                   h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """:func:`dedupe_strings` with the hashes given (any hashes, equal for equal strings: the tests pass
    colliding ones).  O(total bytes) expected."""
    return _number_groups(_first_equal(h, offsets, data))


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
    global element code of every identified element, of every de-identified element).  The row indexes are
    written over ``loc`` and ``elem`` (returned as the second and third value): no fresh 4 bytes a row each,
    whose page faults cost more than the pass itself.  O(rows + n_elem).
    """
    n = elem.shape[0]
    loc_rank = np.full(n_loc_codes, -1, np.int32)
    loc_order = np.empty(n_loc_codes, np.int32)
    local = np.full((2, n_elem), -1, np.int32)
    keys = np.empty((2, n_elem), np.int32)
    count = np.zeros(2, np.int64)
    n_loc = 0
    row_loc = loc
    row_elem = elem
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
    return loc_order[:n_loc], row_loc, row_elem, keys[0, :count[0]], keys[1, :count[1]]   # views: no copy


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
    rows share a group iff they are equal; groups numbered in order of first appearance.  Returns (int32 group
    per row, number of groups).

    Grouped on a 64-bit hash of the row, partitioned (module docstring), every row then compared word for word
    with the first of its group (so collisions cost time, never correctness).  O(n·W) expected.
    """
    n_top = top.shape[0]
    h = np.empty(n_top + bottom.shape[0], np.uint64)
    for i in range(h.shape[0]):
        h[i] = _row_hash(top, i) if i < n_top else _row_hash(bottom, i - n_top)
    return _group_hashed(top, bottom, h)


@numba.njit(inline="always", cache=True)
def _same_stacked(top: np.ndarray, bottom: np.ndarray, i: int, j: int) -> bool:  # pragma: no cover - numba
    """Rows i and j of ``top`` and ``bottom`` stacked are equal."""
    n_top = top.shape[0]
    a, r = (top, i) if i < n_top else (bottom, i - n_top)
    b, s = (top, j) if j < n_top else (bottom, j - n_top)
    return _same_row(a, r, b, s)


@numba.njit(cache=True)
def _group_hashed(top: np.ndarray, bottom: np.ndarray,
                  h: np.ndarray) -> tuple[np.ndarray, int]:  # pragma: no cover - numba
    """:func:`group_rows` with the row hashes given (any hashes, equal for equal rows: the tests pass colliding
    ones).  O(n·W) expected."""
    group, heads = _number_groups(_first_equal(h, top, bottom))
    return group, heads.shape[0]
