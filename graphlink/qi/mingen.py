"""MinGen, Sweeney's preferred minimal generalization algorithm (SW-A §3.4), exact at cell level.

SW-A states MinGen as exhaustive enumeration: every cell-level generalization of PT (``Π (|DGH_i|+1)^|PT|``
of them), keep the k-anonymous ones, keep those of maximal Prec (the *k-minimal distortions*), let a
user-defined ``preferred()`` return one. Enumerating cells is hopeless beyond toy sizes, so we enumerate the
same optima through their structure:

* a k-anonymous cell-level generalization groups the rows into classes of size ≥ k, and within a class every
  cell of attribute i sits at one level with one label; the cheapest such level is the rows' least common
  ancestor in the hierarchy. So the minimal distortions are exactly the partitions of the rows into blocks of
  size ≥ k, each block generalized to its per-attribute least common ancestors, of minimal total distortion
  ``Σ_blocks |B| · Σ_i lca_i(B)/|DGH_i|``;
* a block of size ≥ 2k can be split into two blocks of size ≥ k without raising any least common ancestor,
  and if that leaves the distortion unchanged the labels (hence the table) are unchanged, so blocks of size
  k .. 2k−1 reach every distinct optimal table.

A dynamic program over subsets of rows (always placing the lowest remaining row) finds the optimum; all
optimal partitions are then enumerated and turned into tables (duplicates removed). Distortions are kept as
integers (scaled by the lcm of the heights), so ties are exact. Cost O(2^n · C(n, 2k−2)); ``max_rows``
(default 16) guards the exponential.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from functools import cache

import numpy as np

from graphlink.errors import ReleaseError
from graphlink.qi.lattice import check_k
from graphlink.qi.metrics import cell_class_sizes
from graphlink.qi.result import Anonymization
from graphlink.qi.table import QITable

Preference = Callable[[QITable, list[np.ndarray]], int]


def prefer_first(table: QITable, candidates: list[np.ndarray]) -> int:
    """Default ``preferred()``: the first minimal distortion in the enumeration order (deterministic)."""
    return 0


def prefer_fewest_attributes(table: QITable, candidates: list[np.ndarray]) -> int:
    """Prefer the minimal distortion that generalizes the fewest (then the rightmost) attributes at all."""
    def key(c: np.ndarray) -> tuple:
        touched = (c > 0).any(axis=0)
        return (int(touched.sum()), tuple(int(x) for x in touched))
    return min(range(len(candidates)), key=lambda j: key(candidates[j]))


def mingen(table: QITable, k: int, *, preferred: Preference = prefer_first, max_rows: int = 16,
           max_solutions: int = 10_000) -> Anonymization:
    """SW-A's MinGen: one k-minimal distortion of the table (cell-level), chosen by ``preferred``.

    ``info["minimal_distortions"]`` counts the distinct optimal tables found (at most ``max_solutions``);
    ``alternatives`` holds all their cell levels (what ``preferred`` chose from). Step 1: a table that is already
    k-anonymous is its own unique minimal distortion.
    """
    check_k(table, k)
    t0 = time.perf_counter()
    n, m = table.n, table.m
    if (cell_class_sizes(table, np.zeros(m, dtype=np.int64)) >= k).all():
        return Anonymization(table, "mingen", k, np.zeros((n, m), dtype=np.int64), np.zeros(n, dtype=bool),
                             time.perf_counter() - t0, {"minimal_distortions": 1})
    if n > max_rows:
        raise ReleaseError(f"mingen is exhaustive and limited to {max_rows} rows; the table has {n}. "
                           "Use the optimal algorithm for larger tables")
    scale = math.lcm(*table.heights)
    weight = [scale // h for h in table.heights]

    @cache
    def block(rows: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        idx = np.array(rows)
        lv = tuple(h.lca_level(table.codes[idx, i]) for i, h in enumerate(table.hierarchies))
        return len(rows) * sum(w * x for w, x in zip(weight, lv, strict=True)), lv

    def blocks(mask: int) -> list[tuple[int, ...]]:
        rest = [r for r in range(n) if mask >> r & 1]
        low, others = rest[0], rest[1:]
        out = []
        for size in range(k, 2 * k):
            if size > len(rest) or (len(rest) - size) and len(rest) - size < k:
                continue
            out.extend((low, *c) for c in itertools.combinations(others, size - 1))
        return out

    @cache
    def best(mask: int) -> int:
        if mask == 0:
            return 0
        options = [block(b)[0] + best(mask & ~_bits(b)) for b in blocks(mask)]
        return min(options) if options else 10**18

    full = (1 << n) - 1
    optimum = best(full)
    seen: dict[bytes, np.ndarray] = {}

    def walk(mask: int, cells: np.ndarray) -> None:
        if len(seen) >= max_solutions:
            return
        if mask == 0:
            ids = table.cell_ids(cells)
            seen.setdefault(ids.tobytes(), cells.copy())
            return
        for b in blocks(mask):
            cost, lv = block(b)
            rest = mask & ~_bits(b)
            if cost + best(rest) == best(mask):
                cells[list(b)] = lv
                walk(rest, cells)

    walk(full, np.zeros((n, m), dtype=np.int64))
    candidates = list(seen.values())
    choice = preferred(table, candidates)
    return Anonymization(table, "mingen", k, candidates[choice], np.zeros(n, dtype=bool), time.perf_counter() - t0,
                         {"minimal_distortions": len(candidates), "distortion": optimum / scale},
                         alternatives=candidates)


def _bits(rows: tuple[int, ...]) -> int:
    out = 0
    for r in rows:
        out |= 1 << r
    return out
