"""The two real-world systems Sweeney compares against (SW-A §4): Datafly and µ-Argus (her reconstruction).

Both generalize at attribute level; Datafly then removes whole rows, µ-Argus blanks single cells.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence

import numpy as np

from graphlink.errors import ReleaseError
from graphlink.qi.lattice import check_k
from graphlink.qi.result import Anonymization
from graphlink.qi.table import QITable, pack


def datafly(table: QITable, k: int, *, max_suppressed: int | None = None) -> Anonymization:
    """Datafly's core algorithm (SW-A §4.1, Fig. "core Datafly algorithm").

    1. ``freq`` = the distinct QI sequences with their counts;
    2. while the sequences occurring fewer than k times account for more than ``max_suppressed`` rows
       (Sweeney: more than k), generalize *every* value of the attribute with the most distinct values one
       level (first QI on ties);
    3. suppress the rows of the sequences still occurring fewer than k times.

    Step 4 (complementary suppression so that the suppressed tuples, released as all-``*`` rows, are k
    themselves) is moot here: suppressed rows are removed (ARX semantics). Full-domain output; not minimal
    (SW-A: "crude decisions"). ``freq`` is rolled up from step to step, so a step costs O(|freq|·m) and
    ``freq`` shrinks as it goes; steps ≤ Σ heights.
    """
    check_k(table, k)
    t0 = time.perf_counter()
    limit = k if max_suppressed is None else int(max_suppressed)
    freq = table.bottom
    steps = []
    while True:
        outliers = int(freq.counts[freq.counts < k].sum())
        if outliers <= limit:
            break
        distinct = [int(np.count_nonzero(np.bincount(freq.columns[i]))) if lv < h else -1
                    for i, (lv, h) in enumerate(zip(freq.levels, table.heights, strict=True))]
        j = int(np.argmax(distinct))
        steps.append({"attribute": table.qi[j], "distinct": distinct[j], "outlier_rows": outliers})
        freq = table.groups([lv + (i == j) for i, lv in enumerate(freq.levels)], freq)
    suppressed = (table.class_sizes(freq.levels) < k)[table.row_freq]
    return Anonymization(table, "datafly", k, np.array(freq.levels), suppressed, time.perf_counter() - t0,
                         {"max_suppressed_rows": limit, "steps": steps})


def _outliers(table: QITable, levels: np.ndarray, combo: tuple[int, ...], k: int) -> np.ndarray:
    """Rows whose values on the attributes ``combo`` (at ``levels``) occur fewer than k times."""
    cols = [table.hierarchies[i].ancestors[levels[i]][table.codes[:, i]] for i in combo]
    keys, _ = pack(cols, [table.hierarchies[i].cardinality(levels[i]) for i in combo])
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[inverse] < k


def mu_argus(table: QITable, k: int, *, identifying: Mapping[str, int] | None = None, max_combination: int = 3,
             generalize: Sequence[str] = ()) -> Anonymization:
    """µ-Argus as reconstructed by Sweeney (SW-A §4.2, Fig. "µ-Argus algorithm").

    ``identifying`` gives each QI its class: 1 identifying, 2 more identifying, 3 most identifying (0: never
    tested; default all 1).

    1. generalize each attribute until every one of its values occurs at least k times (the necessary
       condition);
    2. ``generalize``: the data holder's further attribute-level choices, applied in order;
    3. test the combinations of 2 .. ``max_combination`` identifying attributes and store each cell
       combination occurring fewer than k times as an outlier;
    4. per row, suppress the value occurring in most of its outlier combinations (ties: the more identifying
       attribute, then QI order) until none is left.

    **Documented failure** (SW-A): combinations larger than those tested are never examined, so unique larger
    combinations survive and the output need not be k-anonymous; and k is not enforced on suppressed cells.
    SW-A reports that the actual program does not even test every combination it should: with
    ``max_combination=2`` (pairs only) Sweeney's example keeps ``[white, 1964, male, 02138]`` unique, as the
    real program's output did. Cost O(C(m, ≤c) · n log n).
    """
    check_k(table, k)
    if max_combination < 1:
        raise ReleaseError(f"max_combination must be at least 1, got {max_combination}")
    t0 = time.perf_counter()
    ident = {q: 1 for q in table.qi} | dict(identifying or {})
    unknown = sorted(set(ident) - set(table.qi))
    if unknown:
        raise ReleaseError(f"identifying classes name non-QI column(s) {', '.join(unknown)}")
    levels = np.zeros(table.m, dtype=np.int64)
    for i, h in enumerate(table.hierarchies):   # step 1: the necessary condition, attribute by attribute
        while levels[i] < h.height and np.bincount(h.ancestors[levels[i]][table.codes[:, i]]).min() < k:
            levels[i] += 1
    for q in generalize:                        # step 2: the data holder's choices
        i = table.qi.index(q)
        levels[i] = min(levels[i] + 1, table.heights[i])
    tested = [i for i, q in enumerate(table.qi) if ident[q] > 0]
    combos = [c for size in range(2, max_combination + 1) for c in itertools.combinations(tested, size)]
    outlier = np.zeros((len(combos), table.n), dtype=bool)
    for j, combo in enumerate(combos):          # step 3
        outlier[j] = _outliers(table, levels, combo, k)
    cells = np.broadcast_to(levels, (table.n, table.m)).copy()
    precedence = [(ident[q], -i) for i, q in enumerate(table.qi)]
    suppressed_cells = 0
    for r in np.flatnonzero(outlier.any(axis=0)):   # step 4: greedy local suppression per outlier row
        open_combos = [combos[j] for j in np.flatnonzero(outlier[:, r])]
        while open_combos:
            hits = np.bincount([i for c in open_combos for i in c], minlength=table.m)
            i = max(range(table.m), key=lambda a: (hits[a], *precedence[a]))
            cells[r, i] = table.heights[i]
            suppressed_cells += 1
            open_combos = [c for c in open_combos if i not in c]
    res = Anonymization(table, "mu-argus", k, cells, np.zeros(table.n, dtype=bool), time.perf_counter() - t0,
                        {"attribute_levels": {q: int(lv) for q, lv in zip(table.qi, levels, strict=True)},
                         "combinations_tested": len(combos), "suppressed_cells": suppressed_cells})
    res.info["unprotected_rows"] = int(len(res.unprotected_rows()))
    return res
