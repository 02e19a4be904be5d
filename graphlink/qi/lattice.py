"""The full-domain generalization lattice and the exact optimal search over it.

A *node* gives every QI one generalization level (Samarati 2001; SW-A "attribute-level" generalization); the
lattice orders nodes componentwise, an edge raises one QI by one level (FP §2.3). ``N = Π (height_i + 1)``.

**k-anonymity with a record-suppression limit** (ARX semantics): a node is k-anonymous if the rows in its
equivalence classes smaller than k are at most ``limit = floor(max_suppression · n)``; those rows are removed.
This is monotone: generalizing merges classes, so a row in a class of size ≥ k stays in one, and the number
of rows to suppress never grows upward. Hence **predictive tagging** (OLA, El Emam et al. 2009; Flash,
Kohlmayer et al. 2012): a k-anonymous node makes every node above it k-anonymous (with at most as many
suppressed rows); a failing node makes every node below it fail.

:func:`optimal` finds a node of minimum objective exactly (any :class:`~graphlink.qi.metrics.Objective`:
Prec, Loss, DM, DM*, ARX's entropy or entropy-top, with ARX's weighting, aggregates and monotonic variants):

1. every node gets a lower bound from its levels alone (:func:`~graphlink.qi.metrics.objective_bounds`),
   nondecreasing along generalization and exact when the node suppresses nothing (Prec, Loss, entropies);
   nodes are visited from a priority queue in increasing bound order (then height; a node whose bound was
   raised since it was queued goes back in at its new bound) and the search stops once the smallest bound
   reaches the best value found (no node left can beat it);
2. a node whose status is unknown is decided Flash-style: a path is built upward from it through undecided
   nodes (for DM and DM*, up to the first node that cannot beat the best value) and binary-searched; each
   path first goes through the **pairwise necessary condition** (:class:`PairCondition`: rows rare in some
   pair of QIs are suppressed, so more of them than the limit refute a node and its down-set without
   grouping it). The condition is monotone like k-anonymity, so the refuted nodes are a prefix of the path:
   when the node itself is refuted a binary search finds the prefix's end, whose down-set is tagged
   failing, and nothing is evaluated; otherwise the Flash search evaluates path nodes, each tagging its
   whole up-set or down-set;
3. a node tagged k-anonymous above a node that suppressed nothing suppresses nothing either, so its value is
   its bound, without touching the data; for DM and DM* an evaluated node raises the bounds of its up-set to
   its DM* (DM* is monotone and DM ≥ DM*), and before a node is decided its bound is raised by the
   **refinement bound** of the finest grouped node kept above it (:class:`CoarserNodes`: each class of a
   coarser node splits into at most as many classes as the labels under it, so its DM* share is at least
   ``|F|²/fan-out``) — a node whose bound then reaches the best value is left undecided;
4. for a monotone objective (DM*, the monotonic variants) only *minimal* k-anonymous nodes are evaluated: a
   node with a k-anonymous direct predecessor is dominated by it (the predecessor comes first in the visiting
   order, since its bound is no larger and its height smaller).

ARX's Flash (Kohlmayer et al. 2012, as ARX runs it for a monotone criterion and metric — k-anonymity with
suppression and DM*) classifies every node and prunes nothing by bounds, so it evaluates at least every
minimal k-anonymous and every maximal failing node; steps 2-3 leave most of them undecided (docs/qi.md,
"ARX's own figures", has the counts on ARX's adult sample).

Evaluating a node is a gather per QI on the frequency table and one group-by
(:meth:`~graphlink.qi.table.QITable.groups`, rolled up from a grouped node below), O(d·m) for d distinct QI
combinations. Tagging writes a box of the lattice array (the up- or down-set as slices, no mask), O(N) at
most per decided node; a pairwise test is O(m²·d) bit operations, a refinement bound O(|w|·m) for the kept
node w; the whole search is O(N log N + checks · (d + N)·m).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from graphlink.catalog import QI_ROUNDINGS
from graphlink.errors import ReleaseError
from graphlink.qi import metrics as M
from graphlink.qi.metrics import Measures, Objective, group_value, node_measures, objective_bounds
from graphlink.qi.table import Groups, QITable

Progress = Callable[[float, str], None] | None
MAX_NODES = 5_000_000
SNAPSHOTS = 16          # grouped nodes kept to roll up from
PAIR_ALLOWANCE = 0.05   # CPU seconds the pairwise test may spend before it must have paid for itself
UNKNOWN, ANONYMOUS, FAILS = 0, 1, -1


class Lattice:
    """All full-domain nodes of QIs with the given hierarchy heights; node ids in C order (last QI fastest).

    Examples
    --------
    Four QIs with hierarchies of heights 2, 5, 2 and 3: (2+1)(5+1)(2+1)(3+1) full-domain nodes:

    >>> from graphlink.qi.lattice import Lattice
    >>> lattice = Lattice((2, 5, 2, 3))
    >>> lattice.size, lattice.levels[0].tolist(), lattice.levels[-1].tolist()
    (216, [0, 0, 0, 0], [2, 5, 2, 3])
    """

    def __init__(self, heights: Sequence[int]) -> None:
        self.heights = tuple(int(h) for h in heights)
        self.shape = tuple(h + 1 for h in self.heights)
        self.size = math.prod(self.shape)
        if self.size > MAX_NODES:
            raise ReleaseError(f"the generalization lattice has {self.size:,} nodes (more than {MAX_NODES:,}); "
                               "use fewer quasi-identifiers or shorter hierarchies")
        self.levels = np.indices(self.shape).reshape(len(self.shape), -1).T.astype(np.int64)
        self.height_sum = self.levels.sum(axis=1)
        self.strides = np.array([math.prod(self.shape[i + 1:]) for i in range(len(self.shape))], dtype=np.int64)

    @property
    def bottom(self) -> int:
        return 0

    @property
    def top(self) -> int:
        return self.size - 1

    def node(self, levels: Sequence[int]) -> int:
        return int(np.ravel_multi_index(tuple(int(x) for x in levels), self.shape))

    def up(self, v: int) -> tuple[slice, ...]:
        """The up-set of node ``v`` as slices of the lattice shaped ``shape`` (a view, no mask to build)."""
        return tuple(slice(int(x), None) for x in self.levels[v])

    def down(self, v: int) -> tuple[slice, ...]:
        """The down-set of node ``v`` as slices of the lattice shaped ``shape``."""
        return tuple(slice(0, int(x) + 1) for x in self.levels[v])

    def upset(self, v: int) -> np.ndarray:
        """Mask of the nodes that generalize node ``v`` (itself included)."""
        return (self.levels >= self.levels[v]).all(axis=1)

    def downset(self, v: int) -> np.ndarray:
        """Mask of the nodes that node ``v`` generalizes (itself included)."""
        return (self.levels <= self.levels[v]).all(axis=1)

    def successors(self, v: int) -> list[int]:
        lv = self.levels[v]
        return [v + int(self.strides[i]) for i in range(len(self.shape)) if lv[i] < self.heights[i]]


def suppression_limit(n: int, max_suppression: float, rounding: str = "arx") -> int:
    """How many rows a suppression fraction allows.

    ``arx`` (default): ``floor(s·n)`` computed in binary floating point, exactly as ARX's
    ``ARXConfiguration.initialize`` does (``(int) Math.floor(relMaxOutliers · numOutputRecords)``), so
    0.0725 × 400 = 28.999999999999996 allows 28 rows. ``decimal``: ``floor`` of the product of the fraction
    *as written* (its shortest decimal representation) and n, so 0.0725 × 400 allows 29.

    Examples
    --------
    >>> suppression_limit(400, 0.0725), suppression_limit(400, 0.0725, "decimal")
    (28, 29)
    """
    if not 0.0 <= max_suppression <= 1.0:
        raise ReleaseError(f"the suppression limit must be a fraction between 0 and 1, got {max_suppression}")
    if rounding == "arx":
        return int(math.floor(max_suppression * n))
    if rounding == "decimal":
        return int((Decimal(repr(float(max_suppression))) * n) // 1)
    raise ReleaseError(f"unknown rounding {rounding!r}; expected one of {', '.join(QI_ROUNDINGS)}")


def check_k(table: QITable, k: int) -> None:
    if k < 1:
        raise ReleaseError(f"k must be at least 1, got {k}", file=table.source)
    if k > table.n:
        raise ReleaseError(f"k = {k} is larger than the table ({table.n} rows); no generalization can reach it",
                           file=table.source)


@dataclass
class Node:
    """One evaluated lattice node: whether it is k-anonymous within the suppression limit, and its measures
    (with the rows of classes smaller than k suppressed).

    Examples
    --------
    Returned by :func:`evaluate` (and inside :class:`SearchResult`):

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.lattice import evaluate
    >>> node = evaluate(table, (1, 2, 0, 1), k=2, limit=0)
    >>> node.levels, node.anonymous, node.measures.k
    ((1, 2, 0, 1), True, 2)
    """

    levels: tuple[int, ...]
    anonymous: bool
    measures: Measures
    suppressed_freq: np.ndarray = field(repr=False)   # per frequency-table row: suppressed?

    @property
    def suppressed_rows(self) -> int:
        return self.measures.suppressed_rows

    def row_mask(self, table: QITable) -> np.ndarray:
        """Per input row: is it suppressed at this node?"""
        return self.suppressed_freq[table.row_freq]


def evaluate(table: QITable, levels: Sequence[int], k: int, limit: int) -> Node:
    """Evaluate one full-domain node: one gather per QI and one group-by on the frequency table, O(d·m).

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.lattice import evaluate

    Birth year instead of the date leaves two people alone in their class: 2-anonymous only when those two
    rows may be suppressed:

    >>> evaluate(table, (0, 2, 0, 0), k=2, limit=0).anonymous
    False
    >>> node = evaluate(table, (0, 2, 0, 0), k=2, limit=2)
    >>> node.anonymous, node.measures.suppressed_rows, node.measures.classes      # 7 classes, 2 of them removed
    (True, 2, 5)
    """
    sizes = table.class_sizes(levels)
    small = sizes < k
    meas = node_measures(table, levels, sizes, small)
    return Node(tuple(int(x) for x in levels), meas.suppressed_rows <= limit, meas, small)


@dataclass
class SearchStats:
    nodes: int
    evaluated: int = 0          # nodes whose classes were computed from the data
    tagged: int = 0             # nodes decided by predictive tagging (no data access)
    loss_from_bound: int = 0    # k-anonymous nodes whose loss was known without data access
    pair_refuted: int = 0       # nodes shown not k-anonymous by the pairwise condition (no grouping)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"nodes": self.nodes, "evaluated": self.evaluated, "tagged": self.tagged,
                "loss_from_bound": self.loss_from_bound, "pair_refuted": self.pair_refuted,
                "seconds": round(self.seconds, 4)}


class PairCondition:
    """Sweeney's necessary condition lifted to pairs of QIs, with a suppression limit: a cheap refutation of
    k-anonymity that needs no grouping of the node.

    At node ``levels`` every row whose values of two QIs ``i, j`` (at levels ``levels[i], levels[j]``) occur
    together fewer than k times lies in a class smaller than k (its class at the node is a subset of that
    pair's class), so it is suppressed. The rows rare in *any* pair are therefore at most the node's
    suppressed rows; when they exceed the limit the node is not k-anonymous, nor is anything below it
    (SW-K/SW-A's necessary condition is the single-QI case, implied here). Per pair and level pair the rare
    frequency-table rows are one ``bincount`` over the d distinct combinations, computed when first needed
    and kept (one bit per combination and level pair, within a byte budget); a test is O(P·d) boolean work
    for P = m(m−1)/2 pairs, against a hash group-by of the node.

    Parameters
    ----------
    table : QITable
        The encoded table (its frequency table is what the pairs are counted on).
    k : int
        The k of k-anonymity.
    limit : int
        Rows that may be suppressed (:func:`suppression_limit`).

    Examples
    --------
    >>> import pandas as pd
    >>> from graphlink.qi.table import encode
    >>> t = encode(pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["p", "q", "p", "q"]}), ["a", "b"])
    >>> PairCondition(t, 2, 3).refutes([0, 0]), PairCondition(t, 2, 4).refutes([0, 0])
    (True, False)
    """

    CACHE_BYTES = 64 << 20

    def __init__(self, table: QITable, k: int, limit: int) -> None:
        self.table, self.k, self.limit = table, k, limit
        self.weights = table.freq_counts
        m, d = table.m, len(self.weights)
        pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
        self.i = np.array([p[0] for p in pairs], dtype=np.int64)
        self.j = np.array([p[1] for p in pairs], dtype=np.int64)
        width = np.array([table.heights[j] + 1 for j in self.j], dtype=np.int64)
        sizes = np.array([(table.heights[i] + 1) * (table.heights[j] + 1) for i, j in pairs], dtype=np.int64)
        self.width = width
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        total = int(sizes.sum())
        self.rare_rows = np.full(total, -1, dtype=np.int64)   # rows rare in that pair at those levels
        packed = (d + 7) // 8
        self.masks = np.zeros((total, packed), dtype=np.uint8) if total * packed <= self.CACHE_BYTES else None

    def _labels(self, i: int, level: int) -> np.ndarray:
        col = self.table.bottom.columns[i]
        return col if level == 0 else self.table.hierarchies[i].ancestors[level][col]

    def _mask(self, p: int, li: int, lj: int) -> np.ndarray:
        """Per frequency-table row: is its (QI i, QI j) value pair at these levels rarer than k?"""
        i, j = int(self.i[p]), int(self.j[p])
        cj = self.table.hierarchies[j].cardinality(lj)
        pair = self._labels(i, li).astype(np.int64) * cj + self._labels(j, lj)
        size = np.bincount(pair, weights=self.weights, minlength=self.table.hierarchies[i].cardinality(li) * cj)
        return size[pair] < self.k

    def refutes(self, levels: Sequence[int] | np.ndarray) -> bool:
        """True if the rows rare in some pair of QIs exceed the suppression limit (so the node fails)."""
        if len(self.i) == 0:
            return False
        lv = np.asarray(levels, dtype=np.int64)
        idx = self.offset + lv[self.i] * self.width + lv[self.j]
        rare = self.rare_rows[idx]
        if (rare < 0).any():
            for p in np.flatnonzero(rare < 0):
                mask = self._mask(int(p), int(lv[self.i[p]]), int(lv[self.j[p]]))
                self.rare_rows[idx[p]] = int(self.weights[mask].sum())
                if self.masks is not None:
                    self.masks[idx[p]] = np.packbits(mask)
            rare = self.rare_rows[idx]
        if int(rare.max()) > self.limit:
            return True
        if int(rare.sum()) <= self.limit:
            return False            # the union is at most the sum: it cannot exceed the limit either
        if self.masks is not None:
            bits = np.bitwise_or.reduce(self.masks[idx], axis=0)
            union = np.unpackbits(bits, count=len(self.weights)).view(bool)
        else:
            union = np.zeros(len(self.weights), dtype=bool)
            for p in range(len(idx)):
                union |= self._mask(p, int(lv[self.i[p]]), int(lv[self.j[p]]))
        return int(self.weights @ union) > self.limit


class CoarserNodes:
    """Grouped nodes kept after evaluation (within a byte budget, oldest dropped first), and the DM* lower
    bound they give for any node *below* them without grouping it.

    If node ``w`` generalizes node ``v``, every class F of ``w`` is a union of classes of ``v``, at most
    ``fan(F) = Π_i`` (labels of QI i at level ``v_i`` present in the data under F's label at level ``w_i``)
    of them and at most ``|F|``. A sum of squares of ``c`` parts of ``|F|`` is at least ``|F|²/c``
    (Cauchy-Schwarz), so ``DM*(v) ≥ Σ_F |F|² / min(|F|, fan(F))``. With ``w`` the top this is the level-only
    bound ``n²/c``; with ``w`` a grouped node a step or two above ``v`` it is within a few percent of DM*
    (measured on ARX's adult sample: 93 % of DM* at median one step up). O(|w|·m) per bound.

    Parameters
    ----------
    table : QITable
        The encoded table whose grouped nodes (:meth:`QITable.groups`) are kept with :meth:`add`.

    Examples
    --------
    >>> import pandas as pd
    >>> from graphlink.qi.table import encode
    >>> t = encode(pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["p", "q", "p", "p"]}), ["a", "b"])
    >>> kept = CoarserNodes(t)
    >>> kept.add(t.groups((0, 1)))          # classes x (2 rows) and y (2 rows): b generalized away
    >>> kept.bound(np.array([0, 0]))        # each may split in 2 (b has 2 values): 2²/2 + 2²/2 ≤ DM* = 6
    4.0
    """

    BUDGET = 32 << 20

    def __init__(self, table: QITable) -> None:
        self.table = table
        self.groups: list[Groups | None] = []
        self.levels = np.zeros((64, table.m), dtype=np.int64)
        self.sizes = np.zeros(64, dtype=np.int64)      # classes per kept node; 0 once dropped
        self.bytes = 0
        self.oldest = 0

    def add(self, g: Groups) -> None:
        if len(g) <= 1:
            return      # the top: its bound is the level-only one
        slot = len(self.groups)
        if slot == len(self.sizes):
            self.levels = np.vstack([self.levels, np.zeros_like(self.levels)])
            self.sizes = np.concatenate([self.sizes, np.zeros_like(self.sizes)])
        self.groups.append(g)
        self.levels[slot] = g.levels
        self.sizes[slot] = len(g)
        self.bytes += g.columns.nbytes + g.counts.nbytes
        while self.bytes > self.BUDGET and self.oldest < slot:
            old = self.groups[self.oldest]
            self.groups[self.oldest], self.sizes[self.oldest] = None, 0
            self.bytes -= old.columns.nbytes + old.counts.nbytes
            self.oldest += 1

    def bound(self, levels: np.ndarray) -> float:
        """The largest DM* lower bound for node ``levels`` from a kept node strictly above it (0 if none);
        the finest such node (most classes) is used, as it bounds best."""
        used = len(self.groups)
        if used == 0:
            return 0.0
        kept = self.levels[:used]
        above = (kept >= levels).all(axis=1) & (kept != levels).any(axis=1) & (self.sizes[:used] > 0)
        if not above.any():
            return 0.0
        g = self.groups[int(np.argmax(np.where(above, self.sizes[:used], -1)))]
        fan = np.ones(len(g), dtype=np.float64)
        for i, (lv, lw) in enumerate(zip(levels, g.levels, strict=True)):
            if lv != lw:
                fan *= _sub_cardinality(self.table, i, int(lv), int(lw))[g.columns[i]]
        size = g.counts.astype(np.float64)
        return float((size * size / np.minimum(size, fan)).sum())


def _sub_cardinality(table: QITable, i: int, a: int, b: int) -> np.ndarray:
    """For QI ``i``: per level-``b`` code, how many level-``a`` labels present in the data lie under it
    (``a <= b``); cached on the table."""
    key = ("sub_cardinality", i, a, b)
    if key not in table._cache:
        h = table.hierarchies[i]
        present = np.unique(table.bottom.columns[i])
        la = np.unique(h.ancestors[a][present])                     # present level-a codes
        parent = table.level_map(i, a, b)[la]
        table._cache[key] = np.bincount(parent, minlength=h.cardinality(b)).astype(np.float64)
    return table._cache[key]


class _Search:
    """Shared state of the lattice traversals: status per node, tagging, Flash-style path probing, and the
    last grouped nodes (snapshots) that later nodes above them are rolled up from."""

    def __init__(self, table: QITable, k: int, limit: int, objective: Objective, progress: Progress) -> None:
        check_k(table, k)
        self.table, self.k, self.obj, self.progress = table, k, objective, progress
        self.limit = limit
        self.lat = Lattice(table.heights)
        n_nodes = self.lat.size
        self.status = np.zeros(n_nodes, dtype=np.int8)
        self.static = objective_bounds(table, objective, self.lat.levels, limit)
        self.bound = self.static.copy()
        self.loss_of = np.full(n_nodes, np.nan)
        self.s_up = np.full(n_nodes, table.n, dtype=np.int64)   # upper bound on suppressed rows
        # the same arrays shaped as the lattice: an up-set or down-set is a box of slices (views)
        self.status_nd = self.status.reshape(self.lat.shape)
        self.bound_nd = self.bound.reshape(self.lat.shape)
        self.s_up_nd = self.s_up.reshape(self.lat.shape)
        self.snapshots: list[Groups] = []
        self.stats = SearchStats(n_nodes)
        self.best, self.best_loss = -1, math.inf
        self.pairs = PairCondition(table, k, limit)
        self.coarse = CoarserNodes(table) if objective.name in M.SINGLE_DIMENSIONAL else None
        self.refutable = False      # classify() models Flash alone; the optimal search turns the test on
        self.pair_seconds = self.eval_seconds = 0.0   # CPU time in pairwise tests and in evaluations
        self.cut = False            # end probing paths at nodes whose bound reaches the best value

    def groups(self, levels: tuple[int, ...]) -> Groups:
        """The node's classes, rolled up from the smallest snapshot below it (else the frequency table)."""
        below = [g for g in self.snapshots if all(a <= b for a, b in zip(g.levels, levels, strict=True))]
        g = self.table.groups(levels, min(below, key=len) if below else None)
        if len(g) <= len(self.table.freq_counts) // 4:   # worth keeping: much smaller than the table
            self.snapshots = [*self.snapshots[-(SNAPSHOTS - 1):], g]
        return g

    def check(self, v: int) -> bool:
        """Evaluate node ``v`` from the data; tag its up-set or down-set; return whether it is anonymous."""
        t0 = time.process_time()
        levels = tuple(int(x) for x in self.lat.levels[v])
        grouped = self.groups(levels)
        suppressed, value, dm_star = group_value(self.table, self.obj, grouped, self.k)
        self.eval_seconds += time.process_time() - t0
        if self.coarse is not None:
            self.coarse.add(grouped)
        anonymous = suppressed <= self.limit
        self.stats.evaluated += 1
        was_unknown = int(self.status[v] == UNKNOWN)
        if anonymous:
            up = self.status_nd[self.lat.up(v)]
            self.stats.tagged += int((up == UNKNOWN).sum()) - was_unknown
            up[...] = ANONYMOUS
            s_up = self.s_up_nd[self.lat.up(v)]
            np.minimum(s_up, suppressed, out=s_up)
            self._record(v, value)
        else:
            down = self.status_nd[self.lat.down(v)]
            self.stats.tagged += int((down == UNKNOWN).sum()) - was_unknown
            down[...] = FAILS
        if self.obj.name in M.SINGLE_DIMENSIONAL:   # DM* is monotone and DM >= DM*: nothing above is below it
            self.raise_up(v, dm_star)
        if self.progress:
            done = int((self.status != UNKNOWN).sum())
            self.progress(done / self.lat.size, f"{self.stats.evaluated} nodes evaluated, {done:,} of "
                                                f"{self.lat.size:,} decided")
        return anonymous

    def refute(self, v: int, known: bool = False) -> bool:
        """Decide undecided node ``v`` as failing by the pairwise condition (no grouping; ``known``: already
        tested); tag its down-set."""
        if not known and not self.pairs.refutes(self.lat.levels[v]):
            return False
        down = self.status_nd[self.lat.down(v)]
        self.stats.tagged += int((down == UNKNOWN).sum()) - 1
        self.stats.pair_refuted += 1
        down[...] = FAILS
        return True

    def pair_test(self, v: int) -> bool:
        t0 = time.process_time()
        refuted = self.pairs.refutes(self.lat.levels[v])
        self.pair_seconds += time.process_time() - t0
        return refuted

    def pairs_pay(self) -> bool:
        """Whether the pairwise test still pays: its CPU time so far is at most what the nodes it refuted
        would have cost to evaluate (one average evaluation each, a floor: a refuted down-set usually spares
        more), plus a small allowance to find out. On large tables whose refutations are rare (many distinct
        combinations, each pair mask a pass over them) it switches itself off."""
        per_eval = self.eval_seconds / self.stats.evaluated if self.stats.evaluated else 0.0
        return self.pair_seconds <= PAIR_ALLOWANCE + self.stats.pair_refuted * per_eval

    def hopeless(self, v: int) -> bool:
        """Whether node ``v`` (and so its up-set) cannot beat the best value: its bound, raised first by the
        refinement bound of a grouped node above it (DM, DM*), reaches the best."""
        limit = self.best_loss - self._tol()
        if self.bound[v] < limit and self.coarse is not None:
            refined = self.coarse.bound(self.lat.levels[v])
            if refined > self.bound[v]:
                self.raise_up(v, refined)
        return bool(self.bound[v] >= limit)

    def raise_up(self, v: int, value: float) -> None:
        """Raise the bounds of node ``v``'s up-set to ``value`` (a lower bound valid for all of it)."""
        up = self.bound_nd[self.lat.up(v)]
        np.maximum(up, value, out=up)

    def _record(self, v: int, value: float) -> None:
        self.loss_of[v] = value
        if value < self.best_loss - self._tol():
            self.best, self.best_loss = v, value

    def _tol(self) -> float:
        """Values closer than this are equal (floating-point sums of the same terms in another order)."""
        return 1e-9 * max(1.0, abs(self.best_loss)) if math.isfinite(self.best_loss) else 0.0

    def probe(self, v: int) -> None:
        """Decide undecided node ``v``: binary search on an upward path of undecided nodes (Flash)."""
        path = [v]
        while True:
            nxt = [w for w in self.lat.successors(path[-1]) if self.status[w] == UNKNOWN]
            if not nxt:
                break
            w = min(nxt, key=lambda w: (self.static[w], w))
            if self.cut and self.hopeless(w):
                break   # w and everything above it cannot beat the best: evaluating them would only tag
            path.append(w)
        lo, hi = 0, len(path) - 1
        # The pairwise condition is monotone too (a pair rare at coarser levels is rare at finer ones), so the
        # refuted nodes are a prefix of the path: when v is refuted, binary-search the prefix's end and tag
        # its down-set (which holds v); nothing is evaluated.
        if self.refutable and self.pairs_pay() and self.pair_test(v):
            top, a, b = 0, 1, len(path) - 1
            while a <= b:
                mid = (a + b) // 2
                if self.pair_test(path[mid]):
                    top, a = mid, mid + 1
                else:
                    b = mid - 1
            self.refute(path[top], known=True)
            return
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.status[path[mid]] == UNKNOWN:
                self.check(path[mid])
            if self.status[path[mid]] == ANONYMOUS:
                hi = mid - 1
            else:
                lo = mid + 1

    def predecessors(self, v: int) -> list[int]:
        lv = self.lat.levels[v]
        return [v - int(self.lat.strides[i]) for i in range(len(lv)) if lv[i] > 0]

    def order(self) -> np.ndarray:
        """Nodes by increasing static bound, then height, then id."""
        ids = np.arange(self.lat.size)
        return np.lexsort((ids, self.lat.height_sum, self.static))


@dataclass
class SearchResult:
    """The optimal node, its evaluation and how the search got there.

    ``value`` is the objective's value at the node (what was minimised); ``limit`` the rows that could be
    suppressed.

    Examples
    --------
    Returned by :func:`optimal`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.lattice import optimal
    >>> result = optimal(table, 2)
    >>> result.node.levels, result.node.anonymous, round(result.value, 4)
    ((1, 2, 0, 1), True, 0.3083)
    """

    node: Node
    objective: Objective
    value: float
    k: int
    limit: int
    stats: SearchStats
    lattice: Lattice

    @property
    def loss(self) -> str:
        return self.objective.name


def as_objective(loss: str | Objective) -> Objective:
    """An :class:`Objective` from a name (ARX's default parameters) or as given."""
    return loss if isinstance(loss, Objective) else Objective(loss)


def optimal(table: QITable, k: int, *, max_suppression: float = 0.0, loss: str | Objective = "prec",
            rounding: str = "arx", progress: Progress = None) -> SearchResult:
    """The full-domain generalization of minimum ``loss`` that is k-anonymous within the suppression limit.

    Exact (see the module docstring for the algorithm and its cost): no k-anonymous node has a smaller value;
    among equal values the first reached (smallest bound, then height, then id) is returned. ``loss`` is a
    name of :data:`~graphlink.qi.metrics.LOSSES` or an :class:`~graphlink.qi.metrics.Objective`;
    ``rounding`` turns the fraction into rows (:func:`suppression_limit`). Raises ReleaseError for k < 1 or
    k > n, an unknown loss or an oversized lattice.

    Examples
    --------
    >>> import pandas as pd
    >>> from graphlink.qi.table import encode
    >>> t = encode(pd.DataFrame({"zip": ["02138", "02139", "02141", "02142"]}), ["zip"])
    >>> optimal(t, 2).node.levels
    (1,)
    """
    t0 = time.perf_counter()
    obj = as_objective(loss)
    s = _Search(table, k, suppression_limit(table.n, max_suppression, rounding), obj, progress)
    s.refutable = True
    s.cut = obj.name in M.SINGLE_DIMENSIONAL   # elsewhere the nodes above tag suppression-free up-sets
    # The top holds all n rows in one class: k-anonymous when k <= n, nothing suppressed, so its value is
    # known without grouping it: n² for DM and DM*, its (exact) level-only bound for the others.
    exact = obj.exact_without_suppression
    # a node that suppresses nothing has exactly its level-only bound for a limit of 0 rows (the bound for the
    # actual limit can be lower: Prec's suppression charge may be cheaper than generalization)
    unsuppressed = objective_bounds(table, obj, s.lat.levels, 0) if exact else None
    s.status[s.lat.top], s.s_up[s.lat.top] = ANONYMOUS, 0
    s._record(s.lat.top, float(unsuppressed[s.lat.top]) if exact else float(table.n) ** 2)
    heap = list(zip(s.static.tolist(), s.lat.height_sum.tolist(), range(s.lat.size), strict=True))
    heapq.heapify(heap)
    while heap:
        key, height, v = heapq.heappop(heap)
        if key >= s.best_loss - s._tol():
            break   # no node left can beat the best: every key is a lower bound and keys only grow
        if s.status[v] == FAILS or not math.isnan(s.loss_of[v]):
            continue
        if s.bound[v] > key:                 # raised since it was queued: visit it in its new place
            heapq.heappush(heap, (float(s.bound[v]), height, v))
            continue
        if obj.monotone and any(s.status[p] == ANONYMOUS for p in s.predecessors(v)):
            continue    # dominated by a k-anonymous node below it, visited before it
        if s.coarse is not None and s.status[v] != FAILS:
            refined = s.coarse.bound(s.lat.levels[v])
            if refined > key:            # a grouped node above v bounds its DM*: raise v and its up-set
                s.raise_up(v, refined)
                heapq.heappush(heap, (float(s.bound[v]), height, v))
                continue
        if s.status[v] == UNKNOWN:
            s.probe(v)
        if s.status[v] == ANONYMOUS and math.isnan(s.loss_of[v]):
            if exact and (obj.monotonic or s.s_up[v] == 0):
                s.stats.loss_from_bound += 1
                s._record(v, float(s.static[v] if obj.monotonic else unsuppressed[v]))
            else:
                s.check(v)
    best = evaluate(table, s.lat.levels[s.best], k, s.limit)
    s.stats.seconds = time.perf_counter() - t0
    return SearchResult(best, obj, s.best_loss, k, s.limit, s.stats, s.lat)


def classify(table: QITable, k: int, *, max_suppression: float = 0.0, rounding: str = "arx",
             progress: Progress = None) -> tuple[Lattice, np.ndarray, SearchStats]:
    """Which nodes are k-anonymous (within the suppression limit): a boolean per node, decided with Flash
    probing and predictive tagging, so only a fraction of the nodes is evaluated.

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.lattice import classify
    >>> lattice, anonymous, stats = classify(table, 2)
    >>> lattice.size, int(anonymous.sum()), stats.evaluated < lattice.size      # most nodes tagged, not evaluated
    (216, 102, True)
    """
    t0 = time.perf_counter()
    s = _Search(table, k, suppression_limit(table.n, max_suppression, rounding), Objective("prec"), progress)
    for v in np.lexsort((np.arange(s.lat.size), s.lat.height_sum)):
        if s.status[int(v)] == UNKNOWN:
            s.probe(int(v))
    s.stats.seconds = time.perf_counter() - t0
    return s.lat, s.status == ANONYMOUS, s.stats


def enumerate_lattice(table: QITable, k: int, *, max_suppression: float = 0.0, rounding: str = "arx"
                      ) -> pd.DataFrame:
    """Every node evaluated from the data (exhaustive; the input of plans that need all solutions). One row
    per node: the levels per QI, ``height``, ``anonymous`` and every measure.

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.lattice import enumerate_lattice
    >>> every = enumerate_lattice(table, 2)
    >>> len(every), int(every["anonymous"].sum())                   # the 102 k-anonymous nodes classify finds
    (216, 102)
    """
    check_k(table, k)
    limit = suppression_limit(table.n, max_suppression, rounding)
    lat = Lattice(table.heights)
    rows = []
    for v in range(lat.size):
        node = evaluate(table, lat.levels[v], k, limit)
        rows.append({**dict(zip(table.qi, node.levels, strict=True)), "anonymous": node.anonymous,
                     **node.measures.to_dict()})
    return pd.DataFrame(rows)
