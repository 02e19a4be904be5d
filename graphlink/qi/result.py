"""The result of every anonymization algorithm: which level each cell is released at and which rows are removed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graphlink.qi.metrics import Measures, cell_class_sizes, measure, node_measures
from graphlink.qi.table import QITable


@dataclass
class Anonymization:
    """A generalization of ``table``: ``cell_levels`` is ``(m,)`` for a full-domain node (one level per QI) or
    ``(n, m)`` per cell; ``suppressed`` marks the removed rows. ``measures`` are computed once, on creation.

    Examples
    --------
    Returned by :func:`graphlink.qi.algorithms.anonymize`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.algorithms import anonymize
    >>> release = anonymize(table, 2, "datafly")
    >>> release.frame()["BirthDate"].tolist()[:3], release.measures.k
    (['1965', '1965', '1965'], 2)
    """

    table: QITable
    algorithm: str
    k_requested: int
    cell_levels: np.ndarray
    suppressed: np.ndarray
    seconds: float = 0.0
    info: dict = field(default_factory=dict)
    alternatives: list[np.ndarray] = field(default_factory=list, repr=False)   # other equally good cell levels
    measures: Measures | None = None   # computed on creation unless the algorithm already has them

    def __post_init__(self) -> None:
        self.cell_levels = np.asarray(self.cell_levels, dtype=np.int64)
        self.suppressed = np.asarray(self.suppressed, dtype=bool)
        if self.measures is not None:
            return
        if self.full_domain:   # on the frequency table: suppressed rows are whole classes, hence whole entries
            t = self.table
            self.measures = node_measures(t, self.cell_levels, t.class_sizes(self.cell_levels),
                                          self.suppressed[t.freq_first])
        else:
            self.measures = measure(self.table, self.cell_levels, self.suppressed)

    @property
    def full_domain(self) -> bool:
        return self.cell_levels.ndim == 1

    @property
    def levels(self) -> dict[str, int] | None:
        """Per QI, its level (full-domain results only)."""
        if not self.full_domain:
            return None
        return {q: int(lv) for q, lv in zip(self.table.qi, self.cell_levels, strict=True)}

    @property
    def k(self) -> int:
        """The k of the released table (its smallest class)."""
        return self.measures.k

    def frame(self) -> pd.DataFrame:
        """The released table: same columns, QI cells replaced by their generalized labels, removed rows gone."""
        return self.table.generalized_frame(self.cell_levels, keep=~self.suppressed)

    def unprotected_rows(self) -> np.ndarray:
        """Released rows whose class is smaller than the requested k (empty for a correct output)."""
        t = self.table
        if self.full_domain:
            sizes = t.class_sizes(self.cell_levels)[t.row_freq]
        else:
            sizes = cell_class_sizes(t, self.cell_levels)
        return np.flatnonzero((sizes < self.k_requested) & ~self.suppressed)

    def summary(self) -> dict:
        """JSON-ready summary (the keys of ``graphlink qi anonymize --format json``)."""
        m = self.measures
        return {"k": m.k, "k_requested": self.k_requested, "algorithm": self.algorithm, "levels": self.levels,
                "suppressed_rows": m.suppressed_rows, "rows": self.table.n, "classes": m.classes,
                "prec": round(m.prec, 6), "loss": round(m.loss, 6), "dm": m.dm, "dm_star": m.dm_star,
                "entropy": round(m.entropy, 4), "entropy_top": round(m.entropy_top, 4),
                "avg_class_size": round(m.avg_class_size, 4), "seconds": round(self.seconds, 4), **self.info}
