"""Link tests on bit-packed trail words (thesis Definition 17): which reserved row can be which complete row.

The link test between a reserved row r and a complete row s is::

    ((s.ones ^ r.ones) & r.known) == 0        for every word

* :func:`class_links`: every linked (r, s) pair of two sets of rows (twin classes in practice), grouped by
  '*' pattern or by a parallel brute force (docs/algorithms.md#link-generation);
* :func:`indexed_links`: the same pairs through posting lists (each reserved row scans only the complete rows
  that share its rarest known value), sorted for the link graph without a key sort;
* :func:`transpose_csr`: a CSR regrouped by its columns, by counting (no argsort);
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
#: how many of a reserved row's known values (the rarest) :func:`indexed_links` intersects posting lists for
MAX_DEPTH = 24


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


@numba.njit(cache=True)
def _row_elements(r_known: np.ndarray, r_ones: np.ndarray, rank: np.ndarray,
                  width: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Every reserved row's ``width`` rarest known values as element ranks (element ``2p + v``: bit p is v),
    ascending, in an (|R|, width) matrix padded with 0 (ranks are stored + 1, so a row sorts before its
    extensions); and how many values each row knows in all."""
    n_r, n_w = r_known.shape
    seq = np.zeros((n_r, width), np.int32)
    length = np.zeros(n_r, np.int64)
    row = np.empty(n_w * 64, np.int32)
    one = np.uint64(1)
    for i in range(n_r):
        c = 0
        for w in range(n_w):
            k, o = r_known[i, w], r_ones[i, w]
            if k == 0:
                continue
            for b in range(64):
                if (k >> np.uint64(b)) & one:
                    row[c] = rank[2 * (w * 64 + b) + np.int64((o >> np.uint64(b)) & one)] + 1
                    c += 1
        row[:c].sort()
        seq[i, :min(c, width)] = row[:min(c, width)]
        length[i] = c
    return seq, length


@numba.njit(cache=True)
def _column_bits(s_ones: np.ndarray, n_bits: int) -> np.ndarray:  # pragma: no cover - numba
    """The complete side transposed: for every bit position p, a bitset of the complete rows whose bit p is 1."""
    n_s = s_ones.shape[0]
    out = np.zeros((n_bits, (n_s + 63) // 64), np.uint64)
    one = np.uint64(1)
    for j in range(n_s):
        word, bit = j // 64, one << np.uint64(j % 64)
        for w in range(n_bits // 64):
            x = s_ones[j, w]
            if x == 0:                  # sparse trails: most words of a row hold no 1
                continue
            for b in range(64):
                if (x >> np.uint64(b)) & one:
                    out[w * 64 + b, word] |= bit
    return out


@numba.njit(inline="always", cache=True)
def _has(cols: np.ndarray, element: int, j: int) -> bool:  # pragma: no cover - numba
    bit = (cols[element // 2, j // 64] >> np.uint64(j % 64)) & np.uint64(1)
    return bit == np.uint64(element % 2)


@numba.njit(cache=True)
def _trie_chunk(seq: np.ndarray, length: np.ndarray, order: np.ndarray, lo_row: int, hi_row: int,
                element: np.ndarray, cols: np.ndarray, n_s: int, offsets: np.ndarray, fill: bool,
                out: np.ndarray, counts: np.ndarray, r_known: np.ndarray, r_ones: np.ndarray,
                s_ones: np.ndarray, one_ptr: np.ndarray, one_rows: np.ndarray) -> None:  # pragma: no cover - numba
    # its own function, not the body of the prange: numba hoists allocations of a prange body out of the loop,
    # which would share this stack between threads
    cap = 2 * n_s + 64
    buf = np.empty(cap, np.int32)
    ends = np.zeros(seq.shape[1] + 1, np.int64)     # the list of depth d is buf[ends[d - 1]:ends[d]]
    depth = 0
    prev = -1
    for k in range(lo_row, hi_row):
        i = order[k]
        n = min(length[i], seq.shape[1])
        verify = length[i] > n          # values past the sequence's width: test the candidates on the words
        common = 0
        if prev >= 0:
            while common < depth and common < n and seq[prev, common] == seq[i, common]:
                common += 1
        for t in range(common, n):
            e = element[seq[i, t] - 1]
            base = ends[t]
            need = base + (n_s if t == 0 else ends[t] - ends[t - 1])
            if need > cap:
                cap = max(2 * cap, need)
                grown = np.empty(cap, np.int32)
                grown[:base] = buf[:base]
                buf = grown
            pos = base
            if t == 0 and e % 2 == 1:   # "bit p is 1": its posting list, ascending, as the scan below gives it
                for q in range(one_ptr[e // 2], one_ptr[e // 2 + 1]):
                    buf[pos] = one_rows[q]
                    pos += 1
            elif t == 0:
                for j in range(n_s):
                    if _has(cols, e, j):
                        buf[pos] = j
                        pos += 1
            else:
                for q in range(ends[t - 1], ends[t]):
                    j = buf[q]
                    if _has(cols, e, j):
                        buf[pos] = j
                        pos += 1
            ends[t + 1] = pos
        depth = n
        prev = i
        if n == 0:
            counts[i] = n_s
            if fill:
                for j in range(n_s):
                    out[offsets[i] + j] = j
        elif verify:
            c = 0
            for q in range(ends[n - 1], ends[n]):
                if _linked(r_known, r_ones, s_ones, i, buf[q]):
                    if fill:
                        out[offsets[i] + c] = buf[q]
                    c += 1
            counts[i] = c
        else:
            counts[i] = ends[n] - ends[n - 1]
            if fill:
                for q in range(ends[n - 1], ends[n]):
                    out[offsets[i] + q - ends[n - 1]] = buf[q]


@numba.njit(parallel=True, cache=True)
def _trie_links(seq: np.ndarray, length: np.ndarray, order: np.ndarray, bounds: np.ndarray, element: np.ndarray,
                cols: np.ndarray, n_s: int, offsets: np.ndarray, fill: bool, out: np.ndarray, r_known: np.ndarray,
                r_ones: np.ndarray, s_ones: np.ndarray, one_ptr: np.ndarray,
                one_rows: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Count (``fill`` False) or fill every reserved row's partners: the complete rows holding all of its
    elements.  Rows are visited in lexicographic order of their element sequences (``order``), in chunks
    ``bounds``; along each chunk a stack holds the candidates of every prefix of the current sequence, so rows
    that share a prefix share its intersections, and each step only filters the previous list by one bitset."""
    counts = np.zeros(seq.shape[0], np.int64)
    for chunk in numba.prange(len(bounds) - 1):
        _trie_chunk(seq, length, order, bounds[chunk], bounds[chunk + 1], element, cols, n_s, offsets, fill, out,
                    counts, r_known, r_ones, s_ones, one_ptr, one_rows)
    return counts


@numba.njit(cache=True)
def _transpose(offsets: np.ndarray, s_idx: np.ndarray, n_s: int,
               out: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """The reserved row of every edge of a CSR (reserved row -> complete rows), regrouped by complete row: a
    counting sort, so the reserved rows stay ascending within each complete row.  It writes the rows themselves,
    where :func:`graphlink.kernels.flow.counting_order` and a gather would hold an edge-sized permutation too."""
    start = np.zeros(n_s + 1, np.int64)
    for e in range(s_idx.shape[0]):
        start[s_idx[e] + 1] += 1
    for j in range(n_s):
        start[j + 1] += start[j]
    for i in range(offsets.shape[0] - 1):
        for e in range(offsets[i], offsets[i + 1]):
            j = s_idx[e]
            out[start[j]] = i
            start[j] += 1
    return out


def transpose_csr(ptr: np.ndarray, cols: np.ndarray, n_cols: int,
                  dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """The transpose of a CSR (row ``r``'s columns are ``cols[ptr[r]:ptr[r + 1]]``): for every column, its rows,
    ascending, as ``dtype``.  A counting sort: 8 bytes per edge besides the input (4 as int32), where an argsort
    and its gather hold 16 (and sort).  O(E + rows + columns).

    Examples
    --------
    >>> import numpy as np
    >>> col_ptr, rows = transpose_csr(np.array([0, 2, 3]), np.array([1, 2, 1]), 3)
    >>> col_ptr.tolist(), rows.tolist()
    ([0, 0, 2, 3], [0, 1, 0])
    """
    cols = np.asarray(cols, np.int64)
    col_ptr = np.zeros(n_cols + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=n_cols), out=col_ptr[1:])
    return col_ptr, _transpose(np.asarray(ptr, np.int64), cols, n_cols, np.empty(len(cols), dtype))


@numba.njit(cache=True)
def _bit_counts(s_ones: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Complete rows with bit p set, for every bit position p = 64·word + bit.  O(|S|·W) words, 64 bit tests per
    non-zero word (one pass over the rows, where 64·W vectorised passes read the matrix 64·W times)."""
    n_s, n_w = s_ones.shape
    one = np.uint64(1)
    counts = np.zeros(n_w * 64, np.int64)
    for j in range(n_s):
        for w in range(n_w):
            x = s_ones[j, w]
            if x != 0:
                for b in range(64):
                    if (x >> np.uint64(b)) & one:
                        counts[w * 64 + b] += 1
    return counts


def indexed_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, *,
                  by: Literal["reserved", "complete"] = "reserved") -> tuple[np.ndarray, np.ndarray]:
    """All (r, s) with ((s.ones ^ r.ones) & r.known) == 0, through posting lists, sorted for the link graph.

    Every reserved row r fixes the value of each of its known bits, so each of its partners lies in the posting
    list "complete rows whose bit p is v" of every known bit p of r: r scans only the shortest of them (all
    complete rows when r knows nothing) and tests each candidate on the packed words.  Exact, the same pairs as
    the brute force; on releases where withheld records leave ``*`` per entry (the scaling experiment's
    populations: the identified side knows only its ones) the shortest list is the complete rows that visited
    the rarest location r discloses, a small fraction of them.

    Two passes (count, fill), parallel over reserved rows.  ``by="reserved"``: sorted by (r, s), 16 bytes per
    edge; ``by="complete"``: sorted by (s, r), by a counting sort that holds 16 bytes per edge at its peak (the
    forward list and the regrouped one; the repeated row numbers are made after the forward list is gone), where
    a key sort needs 24.  Posting lists: 8 bytes per (complete row, list used).
    O(|S|·W·64 + Σ_r |shortest list of r|·W + E).

    Returns
    -------
    r_idx, s_idx : numpy.ndarray
        int64 pairs, sorted as ``by`` says.

    Examples
    --------
    >>> import numpy as np
    >>> known = np.array([[0b011], [0b000]], np.uint64)   # r0 knows bits 0 and 1, r1 knows nothing
    >>> ones = np.array([[0b001], [0b000]], np.uint64)    # r0: bit 0 is 1, bit 1 is 0
    >>> s = np.array([[0b001], [0b011], [0b101]], np.uint64)
    >>> [a.tolist() for a in indexed_links(known, ones, s)]
    [[0, 0, 1, 1, 1], [0, 2, 0, 1, 2]]
    """
    n_r, n_s = r_known.shape[0], s_ones.shape[0]
    if n_r == 0 or n_s == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    r_known, r_ones, s_ones = (np.ascontiguousarray(a, np.uint64) for a in (r_known, r_ones, s_ones))
    n_bits = r_known.shape[1] * 64
    ones = _bit_counts(s_ones)
    sizes = np.empty(2 * n_bits, np.int64)
    sizes[0::2], sizes[1::2] = n_s - ones, ones                  # list 2p + v: complete rows whose bit p is v
    by_size = np.argsort(sizes, kind="stable")
    rank = np.empty_like(by_size)
    rank[by_size] = np.arange(len(by_size))
    # the trie goes MAX_DEPTH values deep (the rarest); a row that knows more tests its last candidates on the
    # words, so the sequences and their sort stay small when every location is known
    width = min(MAX_DEPTH, int(np.bitwise_count(r_known).sum(axis=1).max()))
    seq, length = _row_elements(r_known, r_ones, rank, max(width, 1))
    order = np.lexsort(seq.T[::-1]) if width else np.arange(n_r)   # lexicographic: shared prefixes adjacent
    n_chunks = max(1, min(n_r, 16 * numba.get_num_threads()))
    bounds = np.linspace(0, n_r, n_chunks + 1).astype(np.int64)
    cols = _column_bits(s_ones, n_bits)
    args = (seq, length, order, bounds, by_size, cols, n_s)
    offsets = np.zeros(n_r + 1, np.int64)
    one_ptr, one_rows = _one_lists(s_ones, np.arange(n_s, dtype=np.int64))    # the depth-0 lists of value 1
    words = (r_known, r_ones, s_ones, one_ptr, one_rows)
    counts = _trie_links(*args, offsets, False, np.zeros(0, np.int64), *words)
    np.cumsum(counts, out=offsets[1:])
    s_idx = np.empty(int(offsets[-1]), np.int64)
    _trie_links(*args, offsets, True, s_idx, *words)
    del seq, cols
    if by == "reserved":
        return np.repeat(np.arange(n_r, dtype=np.int64), counts), s_idx
    s_ptr, r_idx = transpose_csr(offsets, s_idx, n_s)
    del s_idx
    return r_idx, np.repeat(np.arange(n_s, dtype=np.int64), np.diff(s_ptr))


def link_method(r_known: np.ndarray, method: Literal["auto", "mask", "bruteforce", "index"] = "auto") -> str:
    """The class-link method ``auto`` stands for: grouping by '*' pattern when few patterns exist (whole
    locations withhold), else the posting-list join of :func:`indexed_links`."""
    if method != "auto":
        return method
    n_masks = len(row_classes(r_known)[0]) if r_known.shape[0] else 0
    # mask path ≈ #K·|S|·~30 ns (hash + sort); the posting-list join's cost follows the candidates it filters
    return "mask" if n_masks * 60 <= r_known.shape[0] else "index"


def class_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, *,
                method: Literal["auto", "mask", "bruteforce", "index"] = "auto",
                progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All (r, s) with ((s.ones ^ r.ones) & r.known) == 0, as two int64 arrays (any order).

    ``method``: ``mask`` groups by '*' pattern, ``index`` is :func:`indexed_links`, ``bruteforce`` tests every
    pair in parallel (kept as the plain reference); ``auto`` picks by :func:`link_method`.
    """
    n_r, n_s = r_known.shape[0], s_ones.shape[0]
    if n_r == 0 or n_s == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    method = link_method(r_known, method)
    if method == "mask":
        return _links_by_mask(r_known, r_ones, s_ones, progress)
    if method == "index":
        return indexed_links(r_known, r_ones, s_ones)
    return _links_bruteforce(np.ascontiguousarray(r_known), np.ascontiguousarray(r_ones),
                             np.ascontiguousarray(s_ones))


@numba.njit(cache=True)
def _one_lists(s_ones: np.ndarray, s_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Posting lists of the complete side as a CSR: for every bit position p, the complete rows whose bit p is 1,
    in the order ``s_order``.  O(|S|·W·64) bit tests, O(ones) memory."""
    n_s, n_w = s_ones.shape
    one = np.uint64(1)
    ptr = np.zeros(n_w * 64 + 1, np.int64)
    for j in range(n_s):
        for w in range(n_w):
            x = s_ones[j, w]
            if x != 0:
                for b in range(64):
                    if (x >> np.uint64(b)) & one:
                        ptr[w * 64 + b + 1] += 1
    for p in range(n_w * 64):
        ptr[p + 1] += ptr[p]
    fill = ptr[:-1].copy()
    rows = np.empty(ptr[-1], np.int64)
    for t in range(n_s):
        j = s_order[t]
        for w in range(n_w):
            x = s_ones[j, w]
            if x != 0:
                for b in range(64):
                    if (x >> np.uint64(b)) & one:
                        rows[fill[w * 64 + b]] = j
                        fill[w * 64 + b] += 1
    return ptr, rows


@numba.njit(cache=True)
def _first_link(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, s_order: np.ndarray,
                ptr: np.ndarray, rows: np.ndarray, i: int) -> int:  # pragma: no cover
    # its own function, not the body of the prange (numba may treat a prange body's scalars as reductions)
    n_w = r_known.shape[1]
    one = np.uint64(1)
    best = -1                            # the shortest posting list among the bits r knows to be 1
    best_len = s_order.shape[0] + 1
    for w in range(n_w):
        x = r_known[i, w] & r_ones[i, w]
        if x != 0:
            for b in range(64):
                if (x >> np.uint64(b)) & one:
                    p = w * 64 + b
                    if ptr[p + 1] - ptr[p] < best_len:
                        best = p
                        best_len = ptr[p + 1] - ptr[p]
    if best < 0:                         # r knows no 1: every complete row is a candidate
        for t in range(s_order.shape[0]):
            if _linked(r_known, r_ones, s_ones, i, s_order[t]):
                return s_order[t]
        return -1
    for q in range(ptr[best], ptr[best + 1]):
        if _linked(r_known, r_ones, s_ones, i, rows[q]):
            return rows[q]
    return -1


@numba.njit(parallel=True, cache=True)
def _first_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, s_order: np.ndarray,
                 ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:  # pragma: no cover
    n_r = r_known.shape[0]
    out = np.full(n_r, -1, np.int64)
    for i in numba.prange(n_r):
        out[i] = _first_link(r_known, r_ones, s_ones, s_order, ptr, rows, i)
    return out


def first_links(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray,
                lists: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """For every reserved row, the index of one linked complete row, or -1 if it links none.

    Complete rows are taken in decreasing number of ones (a supertrail has at least as many ones as its
    subtrail, so the likely partners come first and the scan usually stops early), and the first linked one is
    returned.  A reserved row that knows some bit p to be 1 scans only the posting list of its rarest such bit
    (the complete rows whose bit p is 1, kept in the same order): every partner is on it, so the answer is the
    one a scan of every complete row gives.  That matters for the rows that link nothing (the data-model
    decision's orphans), which a full scan tests against every complete row: O(|R|·|S|·W), where the lists
    make it O(|S|·W·64 + Σ_r |shortest list of r|·W).  Parallel over R; rows that know no 1 scan everything.
    ``lists``: :func:`complete_lists` of ``s_ones``, made once by a caller that asks many times.

    Examples
    --------
    >>> import numpy as np
    >>> known = np.array([[0b011], [0b100]], np.uint64)   # r0 knows bits 0 and 1, r1 knows bit 2
    >>> ones = np.array([[0b001], [0b100]], np.uint64)    # r0: bit 0 is 1, bit 1 is 0; r1: bit 2 is 1
    >>> s = np.array([[0b011], [0b001]], np.uint64)
    >>> first_links(known, ones, s).tolist()
    [1, -1]
    """
    if r_known.shape[0] == 0:
        return np.zeros(0, np.int64)
    if s_ones.shape[0] == 0:
        return np.full(r_known.shape[0], -1, np.int64)
    r_known, r_ones, s_ones = (np.ascontiguousarray(a, np.uint64) for a in (r_known, r_ones, s_ones))
    return _first_links(r_known, r_ones, s_ones, *(lists if lists is not None else complete_lists(s_ones)))


def complete_lists(s_ones: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`first_links` builds on the complete side (its scan order and posting lists), for callers that
    test many sets of reserved rows against one complete side.  O(|S|·W·64)."""
    s_ones = np.ascontiguousarray(s_ones, np.uint64)
    pop = np.bitwise_count(s_ones).sum(axis=1, dtype=np.int64)     # signed: -pop of an unsigned sum wraps
    order = np.argsort(-pop, kind="stable").astype(np.int64)
    return (order, *_one_lists(s_ones, order))


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
