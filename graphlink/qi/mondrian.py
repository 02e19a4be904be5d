"""Mondrian: multidimensional k-anonymity (LeFevre, DeWitt & Ramakrishnan, ICDE 2006), for comparison.

Strict top-down partitioning: a partition is split at the (weighted) median of one QI, trying the QIs in
order of decreasing normalized span, if both halves keep at least k rows; a partition with no allowable cut
is a leaf. Values are ordered by their hierarchy (ground values sorted by their path from the top, so every
subtree is a contiguous range; builder hierarchies keep numeric order), and a leaf releases each QI as the
least common ancestor of its values in the hierarchy — a cell-level generalization whose Prec, DM* and
entropy are directly comparable with the full-domain algorithms. Runs on the frequency table (identical QI
rows are never separated). O(d log d · depth), depth ≈ log(n/k).
"""

from __future__ import annotations

import time

import numpy as np

from graphlink.qi.lattice import check_k
from graphlink.qi.result import Anonymization
from graphlink.qi.table import QITable


def _ranks(table: QITable, i: int) -> np.ndarray:
    """Rank of every ground value of QI ``i`` in hierarchy order (top-down path, then file order)."""
    h = table.hierarchies[i]
    keys = [h.ancestors[lv] for lv in range(h.height, -1, -1)]
    order = np.lexsort(tuple(reversed(keys)))
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def _median_cut(col: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray | None:
    """Left-side mask of the weighted-median cut of one QI, or None if a side would hold fewer than k rows."""
    order = np.argsort(col, kind="stable")
    cum = np.cumsum(weights[order])
    total = int(cum[-1])
    split = col[order][int(np.searchsorted(cum, total / 2.0))]
    left = col <= split
    if left.all():
        left = col < split
    lw = int(weights[left].sum())
    return left if lw >= k and total - lw >= k else None


def mondrian(table: QITable, k: int) -> Anonymization:
    """Strict Mondrian with median cuts and hierarchy (least-common-ancestor) recoding; k-anonymous output."""
    check_k(table, k)
    t0 = time.perf_counter()
    fc, w = table.freq_codes, table.freq_counts
    ranks = np.stack([_ranks(table, i)[fc[:, i]] for i in range(table.m)], axis=1)
    spread = np.maximum(ranks.max(axis=0) - ranks.min(axis=0), 1).astype(np.float64)
    leaves: list[np.ndarray] = []
    stack = [np.arange(len(w))]
    while stack:
        part = stack.pop()
        r = ranks[part]
        span = (r.max(axis=0) - r.min(axis=0)) / spread
        cut = None
        for i in np.argsort(-span, kind="stable"):
            if span[i] == 0:
                break
            cut = _median_cut(r[:, i], w[part], k)
            if cut is not None:
                break
        if cut is None:
            leaves.append(part)
        else:
            stack.extend([part[~cut], part[cut]])
    freq_levels = np.zeros((len(w), table.m), dtype=np.int64)
    for part in leaves:
        for i, h in enumerate(table.hierarchies):
            freq_levels[part, i] = h.lca_level(fc[part, i])
    return Anonymization(table, "mondrian", k, freq_levels[table.row_freq], np.zeros(table.n, dtype=bool),
                         time.perf_counter() - t0, {"partitions": len(leaves)})
