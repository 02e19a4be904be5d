"""Information-loss measures of a generalization and the objectives the optimal search minimises.

Every measure is computed on *units*: the rows of a table (cell-level results such as MinGen, µ-Argus,
Mondrian) or the rows of its frequency table weighted by their counts (full-domain lattice nodes, which is
what makes the lattice search fast). ``n`` is always the size of the input table and ``m`` the number of QIs;
*suppressed* rows are removed from the release (ARX's record suppression). docs/qi.md has every formula.

**Reported measures** (:class:`Measures`, ARX's defaults where ARX has the measure):

* **Prec** (Sweeney 2002, SW-A precision metric; ARX ``MetricMDNMPrecision``): ``1 − Σ_cells h/|DGH| /
  (n·m)``, ``|DGH|`` including the suppression level; a suppressed row counts as every cell at the top.
* **Loss** (Iyengar, KDD 2002, as ARX ``MetricMDNMLoss`` computes it): per QI, each kept row is charged the
  *domain share* of its label — the fraction of the hierarchy's ground values the label stands for
  (ARX ``DomainShareMaterialized``) — and a suppressed row 1; the sum ``x_i`` is normalised to
  ``(x_i − n/|D_i|)/(n − n/|D_i|)`` (0 = nothing generalized) and the QIs combined by the geometric mean
  ``Π(x_i + 1)^{1/m} − 1`` (ARX's default aggregate for Loss).
* **DM** (Bayardo & Agrawal, ICDE 2005; ARX ``MetricSDNMDiscernability``): ``Σ_{kept E} |E|² + s·n``.
* **DM\\*** (El Emam et al., JAMIA 16(5) 2009; ARX ``MetricSDDiscernability``): ``Σ_E |E|²`` over all
  classes, suppressed ones included. Monotone along generalization.
* **Non-uniform entropy, ARX's** (Gionis & Tassa, IEEE TKDE 21(2) 2009, as ARX
  ``MetricMDNUNMEntropyPrecomputed`` computes it): ``Σ_rows Σ_QI log2(c(g)/c(v))`` over *all* rows at the
  node's labels (``c(v)`` rows of the input holding ground value ``v``, ``c(g)`` rows generalizing to label
  ``g``), plus, per QI, the suppressed rows as one class of their own:
  ``Σ_g c_S(g)·log2(S/c_S(g))`` with ``S`` suppressed rows and ``c_S(g)`` those among them labelled ``g``.
* **Entropy, suppressed cells at the top** (``entropy-top``; graphlink's earlier convention): the same first
  sum, but a suppressed row's cells count as the hierarchy's top label (``c(g) = n``).
* **Average class size** (LeFevre et al., ICDE 2006, C_AVG without the 1/k) and **height** (Samarati 2001).

**Objectives** (:class:`Objective`): any of ``prec``, ``loss``, ``dm``, ``dm-star``, ``entropy``,
``entropy-top``, with ARX's generalization/suppression weighting ``gs`` (``MetricConfiguration``'s
gs-factor: generalization weighted ``g = 1`` for gs ≤ ½ else ``2(1 − gs)``, suppression ``s = 2·gs`` for
gs < ½ else 1), the aggregate of the per-QI values (``arithmetic``, ``geometric``, ``max``, ``sum``; ARX
``AggregateFunction``) and the monotonic variants (ARX ``MetricMDPrecision``, ``MetricMDNUEntropy``: the
generalization term only, suppression not charged). Each objective has a lower bound per lattice node from
its levels alone (:func:`objective_bounds`), which the optimal search prunes with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from graphlink.catalog import QI_AGGREGATES, QI_LOSSES
from graphlink.errors import ReleaseError
from graphlink.qi.table import Groups, QITable, pack

LOSSES = QI_LOSSES          # what the optimal search can minimise
AGGREGATES = QI_AGGREGATES  # how per-QI values are combined
#: ARX's default aggregate per multi-dimensional metric (``__MetricV2``: Precision arithmetic mean, Loss
#: geometric mean, non-uniform entropy sum)
DEFAULT_AGGREGATE = {"prec": "arithmetic", "loss": "geometric", "entropy": "sum", "entropy-top": "sum"}
SINGLE_DIMENSIONAL = ("dm", "dm-star")
MONOTONE_ALWAYS = ("dm-star",)


@dataclass(frozen=True)
class Objective:
    """What the optimal search minimises: a measure and its ARX parameters (see the module docstring).

    Parameters
    ----------
    name : str
        One of :data:`LOSSES`.
    gs : float
        ARX's generalization/suppression factor in [0, 1]; 0.5 weighs both equally (ARX's default), 0 makes
        suppression free, 1 generalization free. Only ``prec``, ``loss`` and ``entropy`` have it.
    aggregate : str or None
        How per-QI values combine (:data:`AGGREGATES`); None is ARX's default for the measure.
    monotonic : bool
        The monotonic variant (suppression not charged); ``dm-star`` is DM's monotonic variant.

    Examples
    --------
    >>> Objective("loss").aggregate, Objective("loss", gs=0.25).factors
    ('geometric', (1.0, 0.5))
    """

    name: str = "prec"
    gs: float = 0.5
    aggregate: str | None = None
    monotonic: bool = False

    def __post_init__(self) -> None:
        if self.name not in LOSSES:
            raise ReleaseError(f"unknown loss {self.name!r}; expected one of {', '.join(LOSSES)}")
        if not 0.0 <= self.gs <= 1.0:
            raise ReleaseError(f"the generalization/suppression factor must lie in [0, 1], got {self.gs}")
        multi = self.name not in SINGLE_DIMENSIONAL
        if self.aggregate is None:
            object.__setattr__(self, "aggregate", DEFAULT_AGGREGATE.get(self.name, "sum"))
        elif self.aggregate not in AGGREGATES:
            raise ReleaseError(f"unknown aggregate {self.aggregate!r}; expected one of {', '.join(AGGREGATES)}")
        elif not multi and self.aggregate != "sum":
            raise ReleaseError(f"{self.name} is one number for the whole table; it has no per-attribute aggregate")
        if self.gs != 0.5 and self.name not in ("prec", "loss", "entropy"):
            raise ReleaseError(f"{self.name} has no generalization/suppression weighting (only prec, loss and "
                               "entropy have)")
        if self.monotonic and self.name in ("dm", "entropy-top"):
            better = "dm-star" if self.name == "dm" else "entropy"
            raise ReleaseError(f"{self.name} has no monotonic variant; {better} is the monotonic measure")

    @property
    def factors(self) -> tuple[float, float]:
        """ARX's ``(generalization factor, suppression factor)`` for ``gs`` (``MetricMDNMLoss``)."""
        g = 1.0 if self.gs <= 0.5 else 1.0 - 2.0 * (self.gs - 0.5)
        s = 2.0 * self.gs if self.gs < 0.5 else 1.0
        return g, s

    @property
    def monotone(self) -> bool:
        """Whether the value never decreases along generalization, suppression included."""
        return self.monotonic or self.name in MONOTONE_ALWAYS

    @property
    def exact_without_suppression(self) -> bool:
        """Whether :func:`objective_bounds` is the exact value of a node that suppresses nothing (and of every
        node, for the monotonic variants)."""
        return self.name not in SINGLE_DIMENSIONAL

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Measures:
    """The loss measures of one generalization (see the module docstring for every convention).

    Examples
    --------
    Returned by :func:`measure` (and in every :class:`~graphlink.qi.lattice.Node`); ``value`` gives a measure as the
    search minimises it (Prec as 1 − Prec):

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.metrics import measure
    >>> m = measure(table, (0, 0, 0, 0))
    >>> m.prec, m.value("prec"), m.dm
    (1.0, 0.0, 12)
    """

    k: int                  # smallest class among the released rows (0 when nothing is released)
    classes: int            # equivalence classes among the released rows
    suppressed_rows: int
    prec: float             # Sweeney's Prec (1 = unchanged)
    loss: float             # ARX's Loss: geometric mean, gs 0.5 (0 = unchanged)
    dm: int
    dm_star: int
    entropy: float          # ARX's non-uniform entropy (bits)
    entropy_top: float      # suppressed cells at the hierarchy's top (bits)
    avg_class_size: float
    height: int | None = None   # full-domain nodes only

    def value(self, name: str) -> float:
        """The value the optimal search minimises for ``name`` with ARX's default parameters (Prec as
        ``1 − Prec``)."""
        values = {"prec": 1.0 - self.prec, "loss": self.loss, "dm": float(self.dm), "dm-star": float(self.dm_star),
                  "entropy": self.entropy, "entropy-top": self.entropy_top}
        if name not in values:
            raise ValueError(f"unknown loss {name!r}; expected one of {', '.join(LOSSES)}")
        return values[name]

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------- tables
def entropy_table(table: QITable, i: int) -> np.ndarray:
    """``(levels, values)`` float array: bits lost by one cell of ground value ``v`` of QI ``i`` at each level,
    ``log2(c(g)/c(v))`` with counts over the input table; cached on the table."""
    key = ("entropy", i)
    if key not in table._cache:
        h = table.hierarchies[i]
        cv = np.bincount(table.bottom.columns[i], weights=table.freq_counts, minlength=len(h.values))
        rows = []
        for anc in h.ancestors:
            cg = np.bincount(anc, weights=cv)[anc]   # rows under each label
            with np.errstate(divide="ignore", invalid="ignore"):
                rows.append(np.where(cv > 0, np.log2(np.where(cv > 0, cg / np.maximum(cv, 1), 1.0)), 0.0))
        table._cache[key] = np.stack(rows)
    return table._cache[key]


def share_codes(table: QITable, i: int, level: int) -> np.ndarray:
    """Per level-``level`` code of QI ``i``: its domain share, the fraction of the hierarchy's ground values
    (its rows, in the data or not) that the label stands for (ARX ``DomainShareMaterialized``); cached."""
    key = ("share", i, level)
    if key not in table._cache:
        h = table.hierarchies[i]
        anc = h.ancestors[level]
        table._cache[key] = np.bincount(anc, minlength=h.cardinality(level)) / float(len(anc))
    return table._cache[key]


def share_table(table: QITable, i: int) -> np.ndarray:
    """``(levels, values)``: the domain share of each ground value's label at each level; cached."""
    key = ("share_table", i)
    if key not in table._cache:
        h = table.hierarchies[i]
        table._cache[key] = np.stack([share_codes(table, i, lv)[h.ancestors[lv]] for lv in range(h.height + 1)])
    return table._cache[key]


def column_totals(table: QITable, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Per level of QI ``i``: the entropy bits and the summed domain shares of all ``n`` rows at that level
    (the generalization terms of entropy and Loss, which depend on the level alone); cached."""
    key = ("totals", i)
    if key not in table._cache:
        codes, counts = table.freq_codes[:, i], table.freq_counts.astype(np.float64)
        table._cache[key] = (entropy_table(table, i)[:, codes] @ counts, share_table(table, i)[:, codes] @ counts)
    return table._cache[key]


def present_cardinality(table: QITable, i: int, level: int) -> int:
    """How many distinct level-``level`` labels of QI ``i`` the data holds; cached."""
    key = ("present", i, level)
    if key not in table._cache:
        anc = table.hierarchies[i].ancestors[level]
        table._cache[key] = int(len(np.unique(anc[table.freq_codes[:, i]])))
    return table._cache[key]


def domain_size(table: QITable, i: int) -> int:
    """``|D_i|``: the ground values of QI ``i``'s hierarchy (ARX's ``getDomainSize``)."""
    return len(table.hierarchies[i].values)


# ---------------------------------------------------------------------------------------------- aggregation
def aggregate(values: np.ndarray, how: str) -> np.ndarray:
    """Combine per-QI values (last axis) as ARX's ``ILMultiDimensional*`` do, all weights 1: arithmetic mean,
    geometric mean of ``v + 1`` minus 1 (so zeros stay usable for pruning), maximum or sum."""
    v = np.asarray(values, dtype=np.float64)
    m = v.shape[-1]
    if how == "arithmetic":
        return v.sum(axis=-1) / m
    if how == "geometric":
        return np.exp(np.log1p(v).sum(axis=-1) / m) - 1.0
    if how == "max":
        return v.max(axis=-1)
    if how == "sum":
        return v.sum(axis=-1)
    raise ValueError(f"unknown aggregate {how!r}")


def loss_normalise(table: QITable, i: int, raw: np.ndarray | float, g: float) -> np.ndarray | float:
    """ARX ``MetricMDNMLoss.normalizeGeneralized``: ``(x − g·n/|D|)/(n − g·n/|D|)``, at least 0 (0 when the
    domain has one value and the range is empty)."""
    lo, hi = g * table.n / domain_size(table, i), float(table.n)
    if hi - lo <= 0:
        return np.zeros_like(raw) if isinstance(raw, np.ndarray) else 0.0
    return np.maximum((raw - lo) / (hi - lo), 0.0)


# ---------------------------------------------------------------------------------------------- per node
@dataclass(frozen=True)
class Suppressed:
    """The suppressed rows of a full-domain node, seen per QI: their count ``s`` and, per QI, the level codes
    of the suppressed classes with their sizes (what every suppression term needs)."""

    s: int
    codes: list[np.ndarray]     # per QI: codes (at the node's level) of the suppressed classes
    counts: np.ndarray          # sizes of the suppressed classes


def _suppression_entropy(codes: np.ndarray, counts: np.ndarray, s: int) -> float:
    """``Σ_g c_S(g)·log2(S/c_S(g))``: the suppressed rows as one class, labels grouped (ARX's NM entropy)."""
    if s == 0:
        return 0.0
    c = np.bincount(codes, weights=counts)
    c = c[c > 0]
    return float((c * np.log2(s / c)).sum())


def attribute_values(table: QITable, obj: Objective, levels: Sequence[int], sup: Suppressed) -> np.ndarray:
    """The per-QI values of a multi-dimensional objective at a full-domain node (before aggregation). O(g·m)."""
    g, sf = obj.factors
    n, s = table.n, sup.s
    out = np.empty(table.m)
    for i, lv in enumerate(levels):
        lv = int(lv)
        ent, shares = column_totals(table, i)
        if obj.name == "prec":
            ratio = lv / table.heights[i] if table.heights[i] else 0.0
            out[i] = g * ratio if obj.monotonic else (g * (n - s) * ratio + sf * s) / n
        elif obj.name == "loss":
            if obj.monotonic or s == 0:
                raw = g * shares[lv]
            else:
                ss = float((share_codes(table, i, lv)[sup.codes[i]] * sup.counts).sum())
                raw = g * (shares[lv] - ss) + ss + sf * (s - ss)
            out[i] = loss_normalise(table, i, raw, g)
        elif obj.name == "entropy":
            out[i] = g * ent[lv] + (0.0 if obj.monotonic else sf * _suppression_entropy(sup.codes[i], sup.counts, s))
        else:   # entropy-top
            extra = suppression_bits(table, i, lv)[sup.codes[i]] if s else np.zeros(0)
            out[i] = ent[lv] + float((sup.counts * extra).sum())
    return out


def group_value(table: QITable, obj: Objective, groups: Groups, k: int) -> tuple[int, float, float]:
    """``(suppressed rows, objective value, DM*)`` of a full-domain node from its classes alone, the rows of
    classes smaller than k suppressed. O(g·m) for g classes."""
    counts = groups.counts
    small = counts < k
    s = int(counts[small].sum())
    dm_star = float((counts.astype(np.float64) ** 2).sum())
    if obj.name == "dm-star":
        return s, dm_star, dm_star
    if obj.name == "dm":
        kept = counts[~small].astype(np.float64)
        return s, float((kept ** 2).sum()) + float(s) * table.n, dm_star
    sup = Suppressed(s, [c[small] for c in groups.columns], counts[small])
    return s, float(aggregate(attribute_values(table, obj, groups.levels, sup), obj.aggregate)), dm_star


def objective_bounds(table: QITable, obj: Objective, levels: np.ndarray, limit: int) -> np.ndarray:
    """A lower bound of the objective for every node (rows of ``levels``) from the levels alone, whatever
    rows (at most ``limit``) the node suppresses; nondecreasing along generalization; exact for a node that
    suppresses nothing when :attr:`Objective.exact_without_suppression` (and for every node of a monotonic
    variant).

    * Prec: per QI the value at 0 or at ``limit`` suppressed rows, whichever is smaller (it is linear in s);
    * Loss, entropy: the generalization term over all n rows (suppression only adds: a suppressed row's
      charge ``share + s(1 − share)`` is at least ``g·share``; the entropy suppression term is ≥ 0);
    * entropy-top: the bits of all rows at the node's level;
    * DM, DM*: ``n²/c`` with ``c`` an upper bound on the classes (the product of the labels present per QI,
      at most the distinct QI combinations): ``Σ|E|² ≥ n²/c`` (Cauchy-Schwarz), and DM ≥ DM*.

    O(N·m).

    Examples
    --------
    Prec's bound is exact for a node that suppresses nothing, so it matches :func:`measure` there:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.lattice import Lattice
    >>> from graphlink.qi.metrics import Objective, measure, objective_bounds
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> lattice = Lattice(table.heights)
    >>> bounds = objective_bounds(table, Objective("prec"), lattice.levels, 0)
    >>> node = lattice.node((1, 2, 0, 1))
    >>> round(float(bounds[node]), 6), round(measure(table, (1, 2, 0, 1)).value("prec"), 6)
    (0.308333, 0.308333)
    """
    levels = np.asarray(levels, dtype=np.int64)
    n, big = float(table.n), len(levels)
    if obj.name in SINGLE_DIMENSIONAL:
        classes = np.ones(big)
        for i, h in enumerate(table.hierarchies):
            card = np.array([present_cardinality(table, i, lv) for lv in range(h.height + 1)], dtype=np.float64)
            classes *= card[levels[:, i]]
        classes = np.minimum(classes, float(len(table.freq_counts)))
        return n * n / classes
    g, sf = obj.factors
    per = np.empty((big, table.m))
    s_max = float(min(limit, table.n))
    for i, h in enumerate(table.hierarchies):
        ent, shares = column_totals(table, i)
        lv = levels[:, i]
        if obj.name == "prec":
            ratio = lv / float(h.height) if h.height else np.zeros(big)
            zero = g * ratio
            per[:, i] = zero if obj.monotonic else np.minimum(zero, (g * (n - s_max) * ratio + sf * s_max) / n)
        elif obj.name == "loss":
            per[:, i] = loss_normalise(table, i, g * shares[lv], g)
        elif obj.name == "entropy":
            per[:, i] = g * ent[lv]
        else:
            per[:, i] = ent[lv]
    return aggregate(per, obj.aggregate)


def suppression_bits(table: QITable, i: int, level: int) -> np.ndarray:
    """Per level-``level`` code of QI ``i``: the bits one cell of that label loses more when charged as the
    top (entropy-top): its term goes from ``log2(c(g)/c(v))`` to ``log2(n/c(v))``, i.e. ``+log2(n/c(g))``."""
    key = ("suppression_bits", i, level)
    if key not in table._cache:
        h = table.hierarchies[i]
        cover = np.bincount(h.ancestors[level][table.codes[:, i]], minlength=h.cardinality(level)).astype(np.float64)
        with np.errstate(divide="ignore"):
            table._cache[key] = np.where(cover > 0, np.log2(table.n / np.maximum(cover, 1)), 0.0)
    return table._cache[key]


def static_bounds(table: QITable, levels: np.ndarray, loss: str) -> np.ndarray:
    """:func:`objective_bounds` of ``loss`` with ARX's default parameters and no suppression limit."""
    return objective_bounds(table, Objective(loss), levels, 0)


def group_loss(table: QITable, groups: Groups, k: int, loss: str, bound: float | None = None) -> tuple[int, float]:
    """``(suppressed rows, value)`` of ``loss`` (ARX's default parameters) at a full-domain node from its
    classes; ``bound`` is accepted for compatibility and not needed."""
    s, value, _ = group_value(table, Objective(loss), groups, k)
    return s, value


# ---------------------------------------------------------------------------------------------- reported
def measure_units(table: QITable, *, codes: np.ndarray, weights: np.ndarray, cell_levels: np.ndarray,
                  sizes: np.ndarray, suppressed: np.ndarray, height: int | None = None) -> Measures:
    """Measures from per-unit arrays: ground ``codes`` (u, m), ``weights`` (u,), ``cell_levels`` (u, m) or
    (m,), class ``sizes`` (u,) in the generalized table, and the ``suppressed`` mask (u,). O(u·m)."""
    n, m = table.n, table.m
    cell_levels = np.asarray(cell_levels, dtype=np.int64)
    lv_all = np.broadcast_to(cell_levels, (len(weights), m))
    kept = ~suppressed
    w = weights.astype(np.int64)
    wf = w.astype(np.float64)
    s = int(w[suppressed].sum())
    prec_loss, ent, ent_top = 0.0, 0.0, 0.0
    loss_per = np.empty(m)
    for i, h in enumerate(table.hierarchies):
        col, lv = codes[:, i], lv_all[:, i]
        bits = entropy_table(table, i)[lv, col]
        ent += float((wf * bits).sum())
        ent_top += float((wf * np.where(suppressed, entropy_table(table, i)[h.height, col], bits)).sum())
        if s:   # ARX: the suppressed rows as one class, labels at their (cell) level grouped
            offs = np.cumsum([0] + [h.cardinality(x) for x in range(h.height)])
            stacked = np.stack(h.ancestors)
            label = offs[lv[suppressed]] + stacked[lv[suppressed], col[suppressed]]
            ent += _suppression_entropy(label, wf[suppressed], s)
        prec_loss += float((wf[kept] * lv[kept]).sum()) / h.height if h.height else 0.0
        share = share_table(table, i)[lv, col]
        loss_per[i] = loss_normalise(table, i, float((wf[kept] * share[kept]).sum()) + s, 1.0)
    prec_loss += s * m
    classes = float((w[kept] / sizes[kept]).sum())
    return Measures(
        k=int(sizes[kept].min()) if kept.any() else 0,
        classes=int(round(classes)),
        suppressed_rows=s,
        prec=1.0 - prec_loss / (n * m),
        loss=float(aggregate(loss_per, "geometric")),
        dm=int((w[kept] * sizes[kept]).sum()) + s * n,
        dm_star=int((w * sizes).sum()),
        entropy=ent,
        entropy_top=ent_top,
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
    behind DM* are those of the generalized table before rows are removed.

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.metrics import measure
    >>> m = measure(table, (0, 0, 0, 0))             # the table as it is: every row its own class
    >>> m.k, m.classes, m.prec
    (1, 12, 1.0)
    """
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


def objective_of_node(table: QITable, obj: Objective, levels: Sequence[int], k: int) -> float:
    """The objective's value at one full-domain node (rows of classes smaller than k suppressed)."""
    return group_value(table, obj, table.groups(levels), k)[1]

