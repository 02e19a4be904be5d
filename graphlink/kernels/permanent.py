"""Weighted matching counts of one block of a link graph: an exact forward-backward DP and a Markov chain.

Both work on *class* blocks: rows and columns come in twin classes (identical neighbourhoods), a row class
``r`` has ``a_r`` members laid out one after the other, a column class ``c`` has ``b_c`` members.  An
adjacency entry ``e`` of row class ``r`` names a column class and a weight; every member pair of the two
classes is an edge with that weight.  Rows may stay unmatched ("skip", weight ``skip_w[r]``); exactly
``slack = rows - columns`` of them do, so every column is covered (docs/risk.md#blocks).

* :func:`block_marginals` — exact: the DP runs over the rows, one member at a time, and its state is how many
  members of every column class are used (a mixed-radix number; 2^columns states when every class is a
  singleton, the subset DP of Ryser-style permanent algorithms).  Forward and backward tables give every
  row's marginals at once.  O((slack + 1) · T · (1 + d)) time and 2 · (slack + 1) · T floats, T = Π (b_c + 1)
  and d the row classes' mean degree.  Each layer is rescaled by its maximum, so counts like 200! stay finite.
* :func:`block_chain` — an estimate: a Markov chain on the perfect matchings of the block padded with
  ``slack`` dummy columns (linked to every row with the skip weight), mixing 2-swaps (an alternating 4-cycle)
  with truncated hole walks (any alternating cycle, the moves of Jerrum and Sinclair's chain; its trace on the
  perfect matchings is reversible, so truncation at a fixed length keeps the stationary law).  Ergodic averages
  of the class occupancies with batch means.
* :func:`random_perfect_matching` — a random perfect matching of the padded block (Kuhn's augmenting paths from
  random offsets), the start of every chain but the first, so independent chains begin far apart.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _digit(st: np.int64, stride: np.int64, base: np.int64) -> np.int64:
    return (st // stride) % base


@numba.njit(cache=True)
def block_marginals(row_class: np.ndarray, col_size: np.ndarray, rc_ptr: np.ndarray, rc_col: np.ndarray,
                    rc_w: np.ndarray, skip_w: np.ndarray, slack: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Exact marginals of the weighted matchings of one class block that cover every column.

    ``row_class[k]``: class of row member k (members of a class consecutive).  Row class ``r``'s adjacency
    entries are ``rc_ptr[r]:rc_ptr[r+1]`` with column class ``rc_col[e]`` and member-pair weight ``rc_w[e]``.
    Returns (per entry, the expected number of class-``r`` rows matched into that column class; per row class,
    the expected number left unmatched; whether any matching has positive weight).
    """
    n_rows = len(row_class)
    ncc = len(col_size)
    stride = np.ones(ncc + 1, np.int64)
    for c in range(ncc):
        stride[c + 1] = stride[c] * (col_size[c] + 1)
    T = stride[ncc]
    binary = True                              # singleton column classes: digits are bits (no division)
    for c in range(ncc):
        if col_size[c] != 1:
            binary = False
    used = np.zeros(T, np.int64)               # members used in state st
    for st in range(T):
        u = 0
        for c in range(ncc):
            u += _digit(st, stride[c], col_size[c] + 1)
        used[st] = u
    total_cols = used[T - 1]
    # states grouped by how many members they use
    uoff = np.zeros(total_cols + 2, np.int64)
    for st in range(T):
        uoff[used[st] + 1] += 1
    for u in range(total_cols + 1):
        uoff[u + 1] += uoff[u]
    ustates = np.empty(T, np.int64)
    fill = uoff[:-1].copy()
    for st in range(T):
        ustates[fill[used[st]]] = st
        fill[used[st]] += 1
    S1 = slack + 1
    F = np.zeros((S1, T))
    G = np.zeros((S1, T))
    F[0, 0] = 1.0
    for k in range(n_rows):
        r = row_class[k]
        # rescale layer k (complete now) by its maximum
        mx = 0.0
        for q in range(min(slack, k) + 1):
            u = k - q
            if u > total_cols:
                continue
            for t in range(uoff[u], uoff[u + 1]):
                if F[q, ustates[t]] > mx:
                    mx = F[q, ustates[t]]
        if mx == 0.0:
            return np.zeros(len(rc_col)), np.zeros(len(skip_w)), False
        for q in range(min(slack, k) + 1):
            u = k - q
            if u > total_cols:
                continue
            for t in range(uoff[u], uoff[u + 1]):
                st = ustates[t]
                v = F[q, st] / mx
                F[q, st] = v
                if v == 0.0:
                    continue
                if q < slack:
                    F[q + 1, st] += v * skip_w[r]
                for e in range(rc_ptr[r], rc_ptr[r + 1]):
                    c = rc_col[e]
                    d = (st >> c) & 1 if binary else _digit(st, stride[c], col_size[c] + 1)
                    if d < col_size[c]:
                        F[q, st + stride[c]] += v * rc_w[e] * (col_size[c] - d)
    if F[slack, T - 1] == 0.0:
        return np.zeros(len(rc_col)), np.zeros(len(skip_w)), False
    G[slack, T - 1] = 1.0
    marg = np.zeros(len(rc_col))
    skip = np.zeros(len(skip_w))
    tmp = np.zeros(len(rc_col))
    for k in range(n_rows - 1, -1, -1):
        r = row_class[k]
        tmp_skip = 0.0
        for e in range(rc_ptr[r], rc_ptr[r + 1]):
            tmp[e] = 0.0
        mx = 0.0
        for q in range(min(slack, k) + 1):
            u = k - q
            if u > total_cols:
                continue
            for t in range(uoff[u], uoff[u + 1]):
                st = ustates[t]
                f = F[q, st]
                val = 0.0
                if q < slack:
                    x = skip_w[r] * G[q + 1, st]
                    val += x
                    tmp_skip += f * x
                for e in range(rc_ptr[r], rc_ptr[r + 1]):
                    c = rc_col[e]
                    d = (st >> c) & 1 if binary else _digit(st, stride[c], col_size[c] + 1)
                    if d < col_size[c]:
                        x = rc_w[e] * (col_size[c] - d) * G[q, st + stride[c]]
                        val += x
                        tmp[e] += f * x
                G[q, st] = val
                if val > mx:
                    mx = val
        z = tmp_skip
        for e in range(rc_ptr[r], rc_ptr[r + 1]):
            z += tmp[e]
        if z > 0.0:
            skip[r] += tmp_skip / z
            for e in range(rc_ptr[r], rc_ptr[r + 1]):
                marg[e] += tmp[e] / z
        if mx > 0.0:
            for q in range(min(slack, k) + 1):
                u = k - q
                if u > total_cols:
                    continue
                for t in range(uoff[u], uoff[u + 1]):
                    G[q, ustates[t]] /= mx
    return marg, skip, True


@numba.njit(cache=True)
def _find(rc_ptr: np.ndarray, rc_col: np.ndarray, r: np.int64, c: np.int64) -> np.int64:
    lo, hi = rc_ptr[r], rc_ptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if rc_col[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    if lo < rc_ptr[r + 1] and rc_col[lo] == c:
        return lo
    return -1


@numba.njit(cache=True)
def _pick(rc_ptr: np.ndarray, rc_cum: np.ndarray, col_ptr: np.ndarray, rc_col: np.ndarray,
          r: np.int64) -> tuple[np.int64, np.int64]:
    """A uniformly random column member linked to row class r: (column element, adjacency entry)."""
    lo, hi = rc_ptr[r], rc_ptr[r + 1]
    total = rc_cum[hi - 1]
    t = np.random.randint(0, total)
    a, b = lo, hi - 1
    while a < b:                                   # first entry with cum > t
        mid = (a + b) // 2
        if rc_cum[mid] > t:
            b = mid
        else:
            a = mid + 1
    before = rc_cum[a - 1] if a > lo else 0
    return col_ptr[rc_col[a]] + (t - before), a


@numba.njit(cache=True)
def _flush(e: np.int64, t: np.int64, occ: np.ndarray, acc: np.ndarray, last: np.ndarray) -> None:
    acc[e] += occ[e] * (t - last[e])
    last[e] = t


@numba.njit(cache=True)
def block_chain(row_class: np.ndarray, col_class: np.ndarray, col_ptr: np.ndarray, rc_ptr: np.ndarray,
                rc_col: np.ndarray, rc_cum: np.ndarray, rc_lw: np.ndarray, mate_row: np.ndarray,
                per_batch: int, burn: int, batches: int, walks: int,
                seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ergodic averages of the class occupancies under the weighted law on the block's perfect matchings.

    Columns include the dummy class (last id, linked to every row with the skip weight); ``col_ptr[c]`` is the
    first member of column class ``c`` (members consecutive).  ``mate_row`` is a perfect matching to start
    from (changed in place); ``rc_cum[e]`` the running sum of column class sizes along a row class's entries;
    ``rc_lw`` log weights.  Each sweep is ``rows`` 2-swap attempts plus ``walks`` hole walks, each truncated
    at ``rows + 1`` picks.  After ``burn`` sweeps, ``batches`` batches of ``per_batch`` sweeps each.  Returns per
    entry, over the batch means of the number of the row class's members matched into that column class:
    their sum, the sum of their squares, the sum of the products of consecutive ones (the lag-1
    autocovariance, which says whether the batches are too short to be independent), the first and the last
    (the caller pools calls that continue from ``mate_row`` into batch means and their standard errors).
    O((burn + batches · per_batch) · rows · log d) time, O(entries + rows + columns) memory.
    """
    np.random.seed(seed)
    n = len(row_class)
    n_cols = len(col_class)
    ne = len(rc_col)
    mate_col = np.full(n_cols, -1, np.int64)
    cur = np.empty(n, np.int64)
    occ = np.zeros(ne, np.int64)
    for x in range(n):
        y = mate_row[x]
        mate_col[y] = x
        e = _find(rc_ptr, rc_col, row_class[x], col_class[y])
        cur[x] = e
        occ[e] += 1
    acc = np.zeros(ne)
    last = np.zeros(ne, np.int64)
    s1 = np.zeros(ne)
    s2 = np.zeros(ne)
    s12 = np.zeros(ne)
    first = np.zeros(ne)
    prev = np.zeros(ne)
    done = 0
    K = n + 1
    rec_row = np.empty(2 * K + 2, np.int64)
    rec_col = np.empty(2 * K + 2, np.int64)
    rec_e = np.empty(2 * K + 2, np.int64)
    lost = np.empty(K + 1, np.int64)
    gained = np.empty(K + 1, np.int64)
    total = burn + per_batch * batches
    t = 0
    for sweep in range(total):
        if sweep >= burn and (sweep - burn) % per_batch == 0:
            for e in range(ne):                    # a batch starts: nothing before counts
                acc[e] = 0.0
                last[e] = t
        for _ in range(n):
            t += 1
            x = np.random.randint(0, n)
            y2, e_new = _pick(rc_ptr, rc_cum, col_ptr, rc_col, row_class[x])
            x2 = mate_col[y2]
            if x2 == x:
                continue
            y = mate_row[x]
            e2 = _find(rc_ptr, rc_col, row_class[x2], col_class[y])
            if e2 < 0:
                continue
            d = rc_lw[e_new] + rc_lw[e2] - rc_lw[cur[x]] - rc_lw[cur[x2]]
            if d < 0.0 and np.random.random() >= np.exp(d):
                continue
            for e in (cur[x], cur[x2], e_new, e2):
                _flush(e, t, occ, acc, last)
            occ[cur[x]] -= 1
            occ[cur[x2]] -= 1
            occ[e_new] += 1
            occ[e2] += 1
            mate_row[x], mate_row[x2] = y2, y
            mate_col[y2], mate_col[y] = x, x2
            cur[x], cur[x2] = e_new, e2
        # hole walks (any alternating cycle of at most K rows)
        for _w in range(walks):
            t += 1
            x = np.random.randint(0, n)
            v = mate_row[x]
            nrec = 0
            nl = 0
            ng = 0
            rec_row[nrec], rec_col[nrec], rec_e[nrec] = x, v, cur[x]
            nrec += 1
            lost[nl] = cur[x]
            nl += 1
            d = -rc_lw[cur[x]]
            mate_row[x] = -1
            mate_col[v] = -1
            u = x
            closed = False
            for _ in range(K):
                y, e = _pick(rc_ptr, rc_cum, col_ptr, rc_col, row_class[u])
                rec_row[nrec], rec_col[nrec], rec_e[nrec] = u, -1, -1
                nrec += 1
                gained[ng] = e
                ng += 1
                d += rc_lw[e]
                if y == v:
                    mate_row[u] = v
                    mate_col[v] = u
                    cur[u] = e
                    closed = True
                    break
                x2 = mate_col[y]
                rec_row[nrec], rec_col[nrec], rec_e[nrec] = x2, y, cur[x2]
                nrec += 1
                lost[nl] = cur[x2]
                nl += 1
                d -= rc_lw[cur[x2]]
                mate_row[u] = y
                mate_col[y] = u
                cur[u] = e
                mate_row[x2] = -1
                u = x2
            if closed and (d >= 0.0 or np.random.random() < np.exp(d)):
                for i in range(nl):
                    _flush(lost[i], t, occ, acc, last)
                    occ[lost[i]] -= 1
                for i in range(ng):
                    _flush(gained[i], t, occ, acc, last)
                    occ[gained[i]] += 1
            else:
                for i in range(nrec - 1, -1, -1):
                    row = rec_row[i]
                    mate_row[row] = rec_col[i]
                    cur[row] = rec_e[i]
                    if rec_col[i] >= 0:
                        mate_col[rec_col[i]] = row
        if sweep >= burn and (sweep - burn + 1) % per_batch == 0:
            for e in range(ne):
                _flush(e, t, occ, acc, last)
                m = acc[e] / (per_batch * (n + walks))
                s1[e] += m
                s2[e] += m * m
                if done == 0:
                    first[e] = m
                else:
                    s12[e] += prev[e] * m
                prev[e] = m
            done += 1
    return s1, s2, s12, first, prev


@numba.njit(cache=True)
def random_perfect_matching(row_class: np.ndarray, col_ptr: np.ndarray, rc_ptr: np.ndarray, rc_col: np.ndarray,
                            rc_lw: np.ndarray, seed: int) -> np.ndarray:
    """A random perfect matching of a padded class block, to start a Markov chain from (``block_chain``'s layout).

    Rows are taken in a random order and each is matched by a breadth-first search for an augmenting path (Kuhn's
    method) that scans its adjacency entries and their column members from random offsets, so different seeds give
    different, widely spread matchings; edges of weight 0 (log weight −inf) are not used.  Not uniform: it is an
    over-dispersed start for independent chains (Gelman and Rubin 1992), not a sample.  Returns the column of every
    row, or an array of -1 when the positive-weight edges admit no perfect matching.  O(rows · element edges) time,
    O(rows + columns) memory.
    """
    np.random.seed(seed)
    n = len(row_class)
    n_cols = col_ptr[len(col_ptr) - 1]
    mate_row = np.full(n, -1, np.int64)
    mate_col = np.full(n_cols, -1, np.int64)
    order = np.random.permutation(n)
    seen = np.full(n_cols, -1, np.int64)          # the search (root) that reached a column last
    parent = np.empty(n_cols, np.int64)           # the row the search reached a column from
    queue = np.empty(n, np.int64)
    for root in order:
        head = 0
        tail = 0
        queue[tail] = root
        tail += 1
        found = -1
        while head < tail and found < 0:
            u = queue[head]
            head += 1
            r = row_class[u]
            lo, hi = rc_ptr[r], rc_ptr[r + 1]
            k = hi - lo
            if k == 0:
                continue
            off = np.random.randint(0, k)
            for i in range(k):
                e = lo + (off + i) % k
                if rc_lw[e] == -np.inf:
                    continue
                c = rc_col[e]
                a, b = col_ptr[c], col_ptr[c + 1]
                m = b - a
                off2 = np.random.randint(0, m)
                for j in range(m):
                    y = a + (off2 + j) % m
                    if seen[y] == root:
                        continue
                    seen[y] = root
                    parent[y] = u
                    if mate_col[y] < 0:
                        found = y
                        break
                    queue[tail] = mate_col[y]
                    tail += 1
                if found >= 0:
                    break
        if found < 0:
            return np.full(n, -1, np.int64)
        y = found                                  # flip the augmenting path back to the root
        while True:
            u = parent[y]
            prev = mate_row[u]
            mate_row[u] = y
            mate_col[y] = u
            if u == root:
                break
            y = prev
    return mate_row
