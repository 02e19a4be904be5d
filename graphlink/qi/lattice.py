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
   nodes and binary-searched, each evaluated node tagging its whole up-set or down-set;
3. a node tagged k-anonymous above a node that suppressed nothing suppresses nothing either, so its value is
   its bound, without touching the data; an evaluated node raises the bounds of its up-set to its DM*
   (DM* is monotone and DM ≥ DM*);
4. for a monotone objective (DM*, the monotonic variants) only *minimal* k-anonymous nodes are evaluated: a
   node with a k-anonymous direct predecessor is dominated by it (the predecessor comes first in the visiting
   order, since its bound is no larger and its height smaller).

Evaluating a node is a gather per QI on the frequency table and one group-by
(:meth:`~graphlink.qi.table.QITable.groups`, rolled up from a grouped node below), O(d·m) for d distinct QI
combinations. Tagging is O(N·m) per evaluated node; the whole search is O(N log N + checks · (d + N)·m).
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
from graphlink.qi.metrics import Measures, Objective, group_value, node_measures, objective_bounds
from graphlink.qi.table import Groups, QITable

Progress = Callable[[float, str], None] | None
MAX_NODES = 5_000_000
SNAPSHOTS = 16          # grouped nodes kept to roll up from
UNKNOWN, ANONYMOUS, FAILS = 0, 1, -1


class Lattice:
    """All full-domain nodes of QIs with the given hierarchy heights; node ids in C order (last QI fastest)."""

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
    (with the rows of classes smaller than k suppressed)."""

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
    """Evaluate one full-domain node: one gather per QI and one group-by on the frequency table, O(d·m)."""
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
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"nodes": self.nodes, "evaluated": self.evaluated, "tagged": self.tagged,
                "loss_from_bound": self.loss_from_bound, "seconds": round(self.seconds, 4)}


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
        self.snapshots: list[Groups] = []
        self.stats = SearchStats(n_nodes)
        self.best, self.best_loss = -1, math.inf

    def groups(self, levels: tuple[int, ...]) -> Groups:
        """The node's classes, rolled up from the smallest snapshot below it (else the frequency table)."""
        below = [g for g in self.snapshots if all(a <= b for a, b in zip(g.levels, levels, strict=True))]
        g = self.table.groups(levels, min(below, key=len) if below else None)
        if len(g) <= len(self.table.freq_counts) // 4:   # worth keeping: much smaller than the table
            self.snapshots = [*self.snapshots[-(SNAPSHOTS - 1):], g]
        return g

    def check(self, v: int) -> bool:
        """Evaluate node ``v`` from the data; tag its up-set or down-set; return whether it is anonymous."""
        levels = tuple(int(x) for x in self.lat.levels[v])
        suppressed, value, dm_star = group_value(self.table, self.obj, self.groups(levels), self.k)
        anonymous = suppressed <= self.limit
        self.stats.evaluated += 1
        if anonymous:
            up = self.lat.upset(v)
            self.stats.tagged += int((self.status[up] == UNKNOWN).sum()) - int(self.status[v] == UNKNOWN)
            self.status[up] = ANONYMOUS
            np.minimum(self.s_up, np.where(up, suppressed, self.table.n), out=self.s_up)
            self._record(v, value)
        else:
            down = self.lat.downset(v)
            self.stats.tagged += int((self.status[down] == UNKNOWN).sum()) - int(self.status[v] == UNKNOWN)
            self.status[down] = FAILS
        if self.obj.name in ("dm", "dm-star"):   # DM* is monotone and DM >= DM*: nothing above is below it
            up = self.lat.upset(v)
            self.bound[up] = np.maximum(self.bound[up], dm_star)
        if self.progress:
            done = int((self.status != UNKNOWN).sum())
            self.progress(done / self.lat.size, f"{self.stats.evaluated} nodes evaluated, {done:,} of "
                                                f"{self.lat.size:,} decided")
        return anonymous

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
            path.append(min(nxt, key=lambda w: (self.static[w], w)))
        lo, hi = 0, len(path) - 1
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
    suppressed."""

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
    s.check(s.lat.top)          # the top holds all rows in one class: always k-anonymous when k <= n
    exact = obj.exact_without_suppression
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
        if s.status[v] == UNKNOWN:
            s.probe(v)
        if s.status[v] == ANONYMOUS and math.isnan(s.loss_of[v]):
            if exact and (obj.monotonic or s.s_up[v] == 0):
                s.stats.loss_from_bound += 1
                s._record(v, float(s.static[v]))
            else:
                s.check(v)
    best = evaluate(table, s.lat.levels[s.best], k, s.limit)
    s.stats.seconds = time.perf_counter() - t0
    return SearchResult(best, obj, s.best_loss, k, s.limit, s.stats, s.lat)


def classify(table: QITable, k: int, *, max_suppression: float = 0.0, rounding: str = "arx",
             progress: Progress = None) -> tuple[Lattice, np.ndarray, SearchStats]:
    """Which nodes are k-anonymous (within the suppression limit): a boolean per node, decided with Flash
    probing and predictive tagging, so only a fraction of the nodes is evaluated."""
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
    per node: the levels per QI, ``height``, ``anonymous`` and every measure."""
    check_k(table, k)
    limit = suppression_limit(table.n, max_suppression, rounding)
    lat = Lattice(table.heights)
    rows = []
    for v in range(lat.size):
        node = evaluate(table, lat.levels[v], k, limit)
        rows.append({**dict(zip(table.qi, node.levels, strict=True)), "anonymous": node.anonymous,
                     **node.measures.to_dict()})
    return pd.DataFrame(rows)
