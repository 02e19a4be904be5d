"""Checks of a released table: k-anonymity, equivalence classes, Sweeney's necessary condition, ℓ-diversity
and t-closeness. They read the values as released (no hierarchies): two cells are equal iff their labels are.

* k-anonymity (SW-K Def. 3): every sequence of QI values occurs at least k times; the table's k is the size
  of its smallest equivalence class.
* Necessary condition (SW-K/SW-A theorem): in a k-anonymous table every value of every single QI attribute
  occurs at least k times (Datafly and µ-Argus generalize single attributes until it holds).
* Distinct and entropy ℓ-diversity (Machanavajjhala et al., ICDE 2006 / TKDD 2007): the fewest distinct
  sensitive values in a class, and ``min_E exp(H_E)`` with ``H_E`` the class's sensitive-value entropy in nats
  (a table is entropy ℓ-diverse iff ``H_E ≥ log ℓ`` for every class).
* t-closeness (Li, Li & Venkatasubramanian, ICDE 2007): the largest Earth Mover's Distance between a class's
  sensitive distribution and the table's; ordered distance ``|i−j|/(M−1)`` over the M sorted values for a
  numeric column, equal distance (total variation) otherwise.

Every check is O(n log n) (one sort-based group-by), vectorised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.qi.table import as_labels, check_columns, pack


@dataclass(frozen=True)
class Classes:
    """Equivalence classes of a table over a QI: ``class_of[r]`` numbers row r's class, ``sizes[c]`` counts it,
    ``values[c]`` is its QI sequence.

    Examples
    --------
    Returned by :func:`equivalence_classes`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> frame = read_table(SWEENEY / "fig2.csv")                        # SW-K Figure 2, 2-anonymous
    >>> qi = ["Race", "Birth", "Gender", "ZIP"]
    >>> from graphlink.qi.checks import equivalence_classes
    >>> classes = equivalence_classes(frame, qi)
    >>> classes.class_of[:4].tolist(), classes.values.iloc[0].tolist()
    ([0, 0, 1, 1], ['Black', '1965', 'm', '0214*'])
    """

    qi: tuple[str, ...]
    class_of: np.ndarray
    sizes: np.ndarray
    values: pd.DataFrame

    @property
    def k(self) -> int:
        return int(self.sizes.min()) if len(self.sizes) else 0

    def rows(self, c: int) -> list[int]:
        return np.flatnonzero(self.class_of == c).tolist()

    def smallest(self, top: int = 10) -> list[dict]:
        """The ``top`` smallest classes (ties by first row): ``{values, size, rows}`` with 0-based row positions."""
        order = np.lexsort((np.arange(len(self.sizes)), self.sizes))[:top]
        return [{"values": {q: str(v) for q, v in self.values.iloc[c].items()}, "size": int(self.sizes[c]),
                 "rows": self.rows(c)} for c in order]


def equivalence_classes(frame: pd.DataFrame, qi: Sequence[str], *, source: str | None = None) -> Classes:
    """Group the rows by their QI values (classes numbered by first appearance). O(n log n).

    Examples
    --------
    SW-K Figure 2 (Sweeney's 2-anonymous example): five classes, the smallest of two rows:

    >>> from graphlink.qi.checks import equivalence_classes
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> classes = equivalence_classes(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"])
    >>> classes.sizes.tolist(), classes.k
    ([2, 2, 2, 3, 2], 2)
    """
    qi = tuple(qi)
    check_columns(frame, qi, source)
    if len(frame) == 0:
        raise ReleaseError("the table has no rows", file=source)
    cols, cards, labels = [], [], []
    for c in qi:
        codes, uniq = pd.factorize(as_labels(frame[c]))
        cols.append(codes.astype(np.int64))
        cards.append(len(uniq))
        labels.append(uniq)
    keys, _ = pack(cols, cards)
    class_of, _ = pd.factorize(keys)
    sizes = np.bincount(class_of)
    first = np.full(len(sizes), len(keys))
    np.minimum.at(first, class_of, np.arange(len(keys)))
    values = pd.DataFrame({c: np.asarray(labels[i], dtype=object)[cols[i][first]] for i, c in enumerate(qi)})
    return Classes(qi, class_of.astype(np.int64), sizes.astype(np.int64), values)


def k_anonymity(frame: pd.DataFrame, qi: Sequence[str]) -> int:
    """The largest k for which the table is k-anonymous over ``qi`` (its smallest class size).

    Examples
    --------
    >>> from graphlink.qi.checks import k_anonymity
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> k_anonymity(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"])
    2
    """
    return equivalence_classes(frame, qi).k


def necessary_condition(frame: pd.DataFrame, qi: Sequence[str], k: int) -> dict[str, dict]:
    """Per QI attribute: its rarest value count and the values occurring fewer than ``k`` times.

    If any list is non-empty the table cannot be k-anonymous (the theorem's contrapositive); the converse
    does not hold (combinations can be rare while every single value is common).
    """
    out = {}
    for c in qi:
        counts = as_labels(frame[c]).value_counts()
        below = counts[counts < k]
        out[c] = {"min_count": int(counts.min()), "below_k": sorted(map(str, below.index))}
    return out


def _pairs(classes: Classes, sensitive: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (class, sensitive code) pairs with counts, sorted by class then code; plus the codes' totals."""
    s_codes = sensitive.to_numpy()
    keys = classes.class_of * (int(s_codes.max()) + 1) + s_codes
    uniq, counts = np.unique(keys, return_counts=True)
    base = int(s_codes.max()) + 1
    totals = np.bincount(s_codes, minlength=base)
    return uniq // base, uniq % base, counts, totals


@dataclass(frozen=True)
class Diversity:
    distinct: int            # distinct ℓ-diversity of the table
    entropy: float           # entropy ℓ-diversity: min over classes of exp(H_E)
    t_closeness: float       # max over classes of the EMD to the table's distribution
    ordered: bool            # numeric (ordered distance) or categorical (equal distance)


def diversity(frame: pd.DataFrame, qi: Sequence[str], sensitive: str, *, classes: Classes | None = None,
              source: str | None = None) -> Diversity:
    """ℓ-diversity (distinct, entropy) and t-closeness of ``sensitive`` over the classes of ``qi``. O(n log n).

    Examples
    --------
    In SW-K Figure 2 one class holds a single problem (both rows: hypertension), so the table is only 1-diverse:

    >>> from graphlink.qi.checks import diversity
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> diversity(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"], "Problem").distinct
    1
    """
    check_columns(frame, [sensitive], source, role="sensitive")
    if sensitive in qi:
        raise ReleaseError("the sensitive column is also a quasi-identifier", file=source, column=sensitive)
    classes = classes or equivalence_classes(frame, qi, source=source)
    raw = frame[sensitive]
    numeric = pd.to_numeric(raw, errors="coerce")
    ordered = bool(numeric.notna().all())
    if ordered:
        sorted_vals = np.unique(numeric.to_numpy(dtype=np.float64))
        codes = pd.Series(np.searchsorted(sorted_vals, numeric.to_numpy(dtype=np.float64)))
    else:
        codes = pd.Series(pd.factorize(as_labels(raw))[0])
    cls, val, cnt, totals = _pairs(classes, codes)
    n_cls = len(classes.sizes)
    distinct = np.bincount(cls, minlength=n_cls)
    p = cnt / classes.sizes[cls]
    ent = np.bincount(cls, weights=-p * np.log(p), minlength=n_cls)
    q = totals / totals.sum()
    emd = _emd_ordered(cls, val, p, q, n_cls) if ordered else _emd_equal(cls, val, p, q, n_cls)
    return Diversity(int(distinct.min()), float(np.exp(ent).min()), float(emd.max()), ordered)


def _emd_equal(cls: np.ndarray, val: np.ndarray, p: np.ndarray, q: np.ndarray, n_cls: int) -> np.ndarray:
    """Equal ground distance: EMD = ½ Σ_v |p_v − q_v| (values absent from a class contribute q_v)."""
    per_pair = np.abs(p - q[val]) - q[val]
    return 0.5 * (np.bincount(cls, weights=per_pair, minlength=n_cls) + 1.0)


def _emd_ordered(cls: np.ndarray, val: np.ndarray, p: np.ndarray, q: np.ndarray, n_cls: int) -> np.ndarray:
    """Ordered ground distance: EMD = 1/(M−1) Σ_{i<M−1} |CP(i) − CQ(i)|, CP/CQ cumulative distributions.

    CP of a class is a step function, constant between the class's own values, so each constant stretch
    [a, b) costs O(log M): split it where the monotone CQ crosses the constant and use prefix sums of CQ.
    """
    mvals = len(q)
    if mvals < 2:
        return np.zeros(n_cls)
    cq = np.cumsum(q)[:-1]                            # CQ(i) for i = 0 .. M-2
    prefix = np.concatenate([[0.0], np.cumsum(cq)])
    cp = np.empty_like(p)
    starts = np.r_[0, np.flatnonzero(np.diff(cls)) + 1]
    csum = np.cumsum(p)
    cp[:] = csum - np.repeat(np.r_[0.0, csum[starts[1:] - 1]], np.diff(np.r_[starts, len(p)]))
    # stretches: [0, first value) at CP = 0, then [v_j, v_{j+1}) at CP_j, the last one up to M-1
    nxt = np.r_[val[1:], mvals - 1]
    last = np.r_[cls[1:] != cls[:-1], True]
    nxt = np.where(last, mvals - 1, nxt)
    seg_cls = np.r_[cls[starts], cls]
    seg_a = np.r_[np.zeros(len(starts), dtype=np.int64), val]
    seg_b = np.r_[val[starts], nxt]
    seg_p = np.r_[np.zeros(len(starts)), cp]
    seg_a, seg_b = np.minimum(seg_a, mvals - 1), np.minimum(seg_b, mvals - 1)
    t = np.clip(np.searchsorted(cq, seg_p, side="left"), seg_a, seg_b)
    cost = (seg_p * (t - seg_a) - (prefix[t] - prefix[seg_a]) + (prefix[seg_b] - prefix[t]) - seg_p * (seg_b - t))
    return np.bincount(seg_cls, weights=cost, minlength=n_cls) / (mvals - 1)


@dataclass
class CheckReport:
    """What ``graphlink qi check`` reports (``to_dict`` gives its JSON).

    Examples
    --------
    Returned by :func:`check`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> frame = read_table(SWEENEY / "fig2.csv")                        # SW-K Figure 2, 2-anonymous
    >>> qi = ["Race", "Birth", "Gender", "ZIP"]
    >>> from graphlink.qi.checks import check
    >>> report = check(frame, qi, k=2)
    >>> report.k, len(report.classes.sizes), report.to_dict()["k"]
    (2, 5, 2)
    """

    k: int
    rows: int
    classes: Classes
    necessary: dict[str, dict]
    diversity: Diversity | None = None
    top: int = 10
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {
            "k": self.k,
            "rows": self.rows,
            "classes": int(len(self.classes.sizes)),
            "smallest_classes": [{"values": c["values"], "size": c["size"]} for c in self.classes.smallest(self.top)],
            "necessary_condition": self.necessary,
        }
        if self.diversity is not None:
            out["l_diversity"] = {"distinct": self.diversity.distinct, "entropy": round(self.diversity.entropy, 6)}
            out["t_closeness"] = round(self.diversity.t_closeness, 6)
        return out


def check(frame: pd.DataFrame, qi: Sequence[str], *, sensitive: str | None = None, k: int | None = None,
          top: int = 10, source: str | None = None) -> CheckReport:
    """Everything ``qi check`` prints: the table's k, its classes, the smallest ones (and who is in them), the
    necessary condition for ``k`` (default: 2, the smallest meaningful protection) and, with a sensitive
    column, ℓ-diversity and t-closeness.

    Examples
    --------
    >>> from graphlink.qi.checks import check
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.table import read_table
    >>> report = check(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"], sensitive="Problem", k=2)
    >>> report.k, report.rows, report.diversity.distinct
    (2, 11, 1)
    """
    classes = equivalence_classes(frame, qi, source=source)
    div = diversity(frame, qi, sensitive, classes=classes, source=source) if sensitive else None
    nec = necessary_condition(frame, qi, k if k is not None else 2)
    return CheckReport(classes.k, len(frame), classes, nec, div, top)
