"""Information-loss measures of a generalization, with their conventions written down.

Every measure is computed on *units*: the rows of a table (cell-level results such as MinGen, µ-Argus,
Mondrian) or the rows of its frequency table weighted by their counts (full-domain lattice nodes, which is
what makes the lattice search fast). ``n`` is always the size of the input table and ``m`` the number of QIs;
*suppressed* rows are removed from the release (ARX's record suppression).

* **Prec** (Sweeney, SW-A Def. "precision metric"): ``1 − Σ_cells h/|DGH| / (n·m)`` with ``h`` the level of
  the cell's value and ``|DGH|`` the attribute's hierarchy height *including the suppression level*
  (SW-A §3.1: DGHs include suppression unless noted). A suppressed row counts as every cell at the top
  (``h = |DGH|``) and the denominator stays the input's ``n·m``. 1 = nothing generalized, 0 = all suppressed.
* **DM** (Bayardo & Agrawal, ICDE 2005): ``Σ_{kept classes E} |E|² + s·n`` — each suppressed row is charged
  the table size.
* **DM\\*** (El Emam et al., JAMIA 16(5) 2009; FP §2.2): ``Σ_E |E|²`` over *all* equivalence classes of the
  generalized table, those later suppressed included with their own size (no ``n`` penalty: OLA bounds
  suppression separately). Monotone along generalization.
* **Non-uniform entropy** (Gionis & Tassa, IEEE TKDE 21(2) 2009; ARX): ``Σ_rows Σ_QI log2(c(g)/c(v))`` with
  ``c(v)`` the rows of the input holding ground value ``v`` and ``c(g)`` the rows of the input whose value
  generalizes to the released label ``g``; a suppressed row's cells are released as the top label
  (``c = n``). In bits; 0 = nothing generalized.
* **Average class size** (LeFevre et al., ICDE 2006, C_AVG without the 1/k): kept rows / kept classes.
* **Height** (Samarati 2001): Σ of the generalization levels of a full-domain node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from graphlink.catalog import QI_LOSSES
from graphlink.qi.table import Groups, QITable, pack

LOSSES = QI_LOSSES   # what the optimal search can minimise


@dataclass(frozen=True)
class Measures:
    """The loss measures of one generalization (see the module docstring for every convention)."""

    k: int                  # smallest class among the released rows (0 when nothing is released)
    classes: int            # equivalence classes among the released rows
    suppressed_rows: int
    prec: float
    dm: int
    dm_star: int
    entropy: float
    avg_class_size: float
    height: int | None = None   # full-domain nodes only

    def loss(self, name: str) -> float:
        """The value the optimal search minimises for ``name`` in :data:`LOSSES` (Prec as ``1 − Prec``)."""
        if name == "prec":
            return 1.0 - self.prec
        if name == "dm-star":
            return float(self.dm_star)
        if name == "entropy":
            return self.entropy
        raise ValueError(f"unknown loss {name!r}; expected one of {', '.join(LOSSES)}")

    def to_dict(self) -> dict:
        return asdict(self)


def entropy_table(table: QITable, i: int) -> np.ndarray:
    """``(levels, values)`` float array: bits lost by one cell of ground value ``v`` of QI ``i`` at each level.

    ``log2(c(g)/c(v))`` with counts over the input table (module docstring); cached on the table.
    """
    key = ("entropy", i)
    if key not in table._cache:
        h = table.hierarchies[i]
        cv = np.bincount(table.bottom.columns[i], weights=table.freq_counts, minlength=len(h.values))
        rows = []
        for level, anc in enumerate(h.ancestors):
            cg = np.bincount(anc, weights=cv, minlength=h.cardinality(level))[anc]   # rows under each label
            with np.errstate(divide="ignore", invalid="ignore"):
                rows.append(np.where(cv > 0, np.log2(np.where(cv > 0, cg / np.maximum(cv, 1), 1.0)), 0.0))
        table._cache[key] = np.stack(rows)
    return table._cache[key]


def measure_units(table: QITable, *, codes: np.ndarray, weights: np.ndarray, cell_levels: np.ndarray,
                  sizes: np.ndarray, suppressed: np.ndarray, height: int | None = None) -> Measures:
    """Measures from per-unit arrays: ground ``codes`` (u, m), ``weights`` (u,), ``cell_levels`` (u, m) or
    (m,), class ``sizes`` (u,) in the generalized table, and the ``suppressed`` mask (u,). O(u·m)."""
    n, m = table.n, table.m
    heights = np.asarray(table.heights, dtype=np.float64)
    cell_levels = np.asarray(cell_levels, dtype=np.int64)
    kept = ~suppressed
    w = weights.astype(np.int64)
    s = int(w[suppressed].sum())
    bits = np.zeros(len(w), dtype=np.float64)
    if cell_levels.ndim == 1:   # a full-domain node: one level per QI, gathers on whole columns
        prec_loss = (n - s) * float((cell_levels / heights).sum()) + s * m
        for i, h in enumerate(table.hierarchies):
            ent, col = entropy_table(table, i), codes[:, i]
            b = ent[cell_levels[i]][col]
            bits += np.where(suppressed, ent[h.height][col], b) if s else b
    else:
        prec_loss = float((w[kept] * (cell_levels[kept] / heights).sum(axis=1)).sum()) + s * m
        for i, h in enumerate(table.hierarchies):
            li = np.where(suppressed, h.height, cell_levels[:, i])
            bits += entropy_table(table, i)[li, codes[:, i]]
    classes = float((w[kept] / sizes[kept]).sum())
    return Measures(
        k=int(sizes[kept].min()) if kept.any() else 0,
        classes=int(round(classes)),
        suppressed_rows=s,
        prec=1.0 - prec_loss / (n * m),
        dm=int((w[kept] * sizes[kept]).sum()) + s * n,
        dm_star=int((w * sizes).sum()),
        entropy=float((w * bits).sum()),
        avg_class_size=(n - s) / classes if classes else 0.0,
        height=height,
    )


def cell_class_sizes(table: QITable, cell_levels: np.ndarray) -> np.ndarray:
    """Per row, the size of its equivalence class in a cell-level generalization (labels compared as
    (level, label) pairs, so ``*`` equals only ``*``). O(n·m)."""
    ids = table.cell_ids(np.broadcast_to(np.asarray(cell_levels), (table.n, table.m)))
    keys, _ = pack([ids[:, i] for i in range(table.m)], [table.label_space(i) for i in range(table.m)])
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[inverse].astype(np.int64)


def measure(table: QITable, cell_levels: np.ndarray | Sequence[int], suppressed: np.ndarray | None = None,
            ) -> Measures:
    """Measures of any generalization of ``table``: per-cell levels ``(n, m)`` (or one node ``(m,)``) and the
    removed rows, which must be whole equivalence classes (as every algorithm here removes them). The classes
    behind DM* are those of the generalized table before rows are removed."""
    lv = np.asarray(cell_levels, dtype=np.int64)
    sup = np.zeros(table.n, dtype=bool) if suppressed is None else np.asarray(suppressed, dtype=bool)
    height = int(lv.sum()) if lv.ndim == 1 else None
    return measure_units(table, codes=table.codes, weights=np.ones(table.n, dtype=np.int64), cell_levels=lv,
                         sizes=cell_class_sizes(table, lv), suppressed=sup, height=height)


def node_measures(table: QITable, levels: Sequence[int], sizes: np.ndarray, suppressed: np.ndarray) -> Measures:
    """Measures of a full-domain node from its frequency-table class sizes (O(d·m), d distinct combinations)."""
    return measure_units(table, codes=table.bottom.columns.T, weights=table.freq_counts,
                         cell_levels=np.asarray(levels, dtype=np.int64), sizes=sizes, suppressed=suppressed,
                         height=int(sum(levels)))


def static_bounds(table: QITable, levels: np.ndarray, loss: str) -> np.ndarray:
    """A lower bound of ``loss`` for every node (rows of ``levels``), from the levels alone, monotone along
    generalization, and *exact* for a node that suppresses nothing.

    Prec: ``Σ_i l_i/|DGH_i| / m`` (a suppressed row only adds loss). Entropy: ``Σ_i E_i(l_i)`` with
    ``E_i(l)`` the bits of column ``i`` at level ``l`` (suppression only raises cells to the top). DM*: ``n``
    (every class a singleton); the search raises it with monotonicity as nodes are evaluated. O(N·m).
    """
    levels = np.asarray(levels, dtype=np.int64)
    if loss == "prec":
        total = np.zeros(len(levels))
        for i, h in enumerate(table.heights):
            total += levels[:, i] / float(h)
        return total / table.m
    if loss == "entropy":
        total = np.zeros(len(levels))
        for i in range(table.m):
            col_bits = entropy_table(table, i)[:, table.freq_codes[:, i]] @ table.freq_counts.astype(np.float64)
            total += col_bits[levels[:, i]]
        return total
    if loss == "dm-star":
        return np.full(len(levels), float(table.n))
    raise ValueError(f"unknown loss {loss!r}; expected one of {', '.join(LOSSES)}")


def suppression_bits(table: QITable, i: int, level: int) -> np.ndarray:
    """Per level-``level`` code of QI ``i``: the bits one cell of that label loses more when suppressed,
    ``log2(n / c(g))`` (its entropy term goes from ``log2(c(g)/c(v))`` to ``log2(n/c(v))``); cached."""
    key = ("suppression_bits", i, level)
    if key not in table._cache:
        h = table.hierarchies[i]
        cover = np.bincount(h.ancestors[level][table.codes[:, i]], minlength=h.cardinality(level)).astype(np.float64)
        with np.errstate(divide="ignore"):
            table._cache[key] = np.where(cover > 0, np.log2(table.n / np.maximum(cover, 1)), 0.0)
    return table._cache[key]


def group_loss(table: QITable, groups: Groups, k: int, loss: str, bound: float) -> tuple[int, float]:
    """``(suppressed rows, loss)`` of a full-domain node from its classes alone (no per-row data), with the
    rows of classes smaller than k suppressed; ``bound`` is the node's :func:`static_bounds` value.

    Prec: ``B + s·(1 − B)/n`` (B the bound, exact at s = 0); DM*: ``Σ |E|²``; entropy: the bound plus
    ``log2(n/c(g))`` per suppressed cell. O(g·m) for g classes.
    """
    small = groups.counts < k
    s = int(groups.counts[small].sum())
    if loss == "prec":
        return s, bound + s * (1.0 - bound) / table.n
    if loss == "dm-star":
        return s, float((groups.counts.astype(np.float64) ** 2).sum())
    extra = np.zeros(int(small.sum()))
    for i, lv in enumerate(groups.levels):
        extra += suppression_bits(table, i, lv)[groups.columns[i][small]]
    return s, bound + float((groups.counts[small] * extra).sum())
