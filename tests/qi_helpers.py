"""Shared fixtures for the quasi-identifier tests: Sweeney's tables and hypothesis strategies for random
hierarchies and tables, plus plain-pandas oracles that recompute what the encoded code computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from graphlink.qi import hierarchy as H
from graphlink.qi.table import QITable, encode, read_table

ROOT = Path(__file__).resolve().parent.parent
SWEENEY = ROOT / "graphlink" / "data" / "qi" / "sweeney"
QI4 = ["Race", "BirthDate", "Gender", "ZIP"]


def sweeney(name: str) -> pd.DataFrame:
    return read_table(SWEENEY / f"{name}.csv")


def sweeney_hierarchies(fig3: bool = False) -> dict[str, H.Hierarchy]:
    return H.read_dir(SWEENEY / ("fig3_hierarchies" if fig3 else "hierarchies"))


def fig4_table() -> QITable:
    return encode(sweeney("fig4_pt"), QI4, sweeney_hierarchies())


@st.composite
def hierarchies(draw: st.DrawFn, name: str, max_values: int = 6, max_height: int = 3) -> H.Hierarchy:
    """A random level-structured value tree: each level groups the previous level's labels, then ``*``."""
    n_values = draw(st.integers(1, max_values))
    labels = [f"{name}{i}" for i in range(n_values)]
    columns = [labels]
    for level in range(1, draw(st.integers(1, max_height)) + 1):
        prev = sorted(set(columns[-1]), key=columns[-1].index)
        groups = draw(st.lists(st.integers(0, max(len(prev) - 1, 0)), min_size=len(prev), max_size=len(prev)))
        parent = {p: f"{name}L{level}g{g}" for p, g in zip(prev, groups, strict=True)}
        columns.append([parent[v] for v in columns[-1]])
    return H.Hierarchy(name, [list(r) for r in zip(*columns, strict=True)])


@st.composite
def qi_tables(draw: st.DrawFn, max_rows: int = 30, max_qi: int = 3, max_values: int = 6,
              max_height: int = 3) -> QITable:
    """A random table over 1..max_qi QIs with random hierarchies, plus a sensitive column ``s``."""
    m = draw(st.integers(1, max_qi))
    names = [f"q{i}" for i in range(m)]
    hs = {q: draw(hierarchies(q, max_values, max_height)) for q in names}
    n = draw(st.integers(1, max_rows))
    data = {q: draw(st.lists(st.sampled_from(hs[q].values), min_size=n, max_size=n)) for q in names}
    data["s"] = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    return encode(pd.DataFrame(data), names, hs)


def classes_oracle(frame: pd.DataFrame, qi: list[str]) -> pd.Series:
    """Per row, the size of its class: a pandas group-by on the released strings."""
    return frame.groupby(qi, sort=False, dropna=False)[qi[0]].transform("size")


def is_k_anonymous(frame: pd.DataFrame, qi: list[str], k: int) -> bool:
    return len(frame) == 0 or int(classes_oracle(frame, qi).min()) >= k


def entropy_oracle(table: QITable, cell_levels: np.ndarray, suppressed: np.ndarray) -> float:
    """Non-uniform entropy with suppressed cells at the top (``entropy-top``) straight from its definition,
    with strings and pandas."""
    lv = np.broadcast_to(cell_levels, (table.n, table.m))
    total = 0.0
    for i, (q, h) in enumerate(zip(table.qi, table.hierarchies, strict=True)):
        ground = table.frame[q].astype(str).tolist()
        c_v = pd.Series(ground).value_counts()
        for r in range(table.n):
            level = h.height if suppressed[r] else int(lv[r, i])
            g = h.generalize(ground[r], level)
            under = sum(1 for x in ground if h.generalize(x, level) == g)
            total += np.log2(under / c_v[ground[r]])
    return total


def arx_entropy_oracle(table: QITable, cell_levels: np.ndarray, suppressed: np.ndarray, *, g: float = 1.0,
                       s_factor: float = 1.0, per_attribute: bool = False) -> float | list[float]:
    """ARX's non-monotonic non-uniform entropy from its definition (Gionis & Tassa 2009 as ARX computes it):
    every row at its released label, ``log2(c(g)/c(v))`` per cell, times ``g``; plus, per QI, the suppressed
    rows as one class of their own: ``Σ_labels c·log2(S/c)``, times ``s_factor``. Strings and loops only."""
    lv = np.broadcast_to(cell_levels, (table.n, table.m))
    out = []
    for i, (q, h) in enumerate(zip(table.qi, table.hierarchies, strict=True)):
        ground = table.frame[q].astype(str).tolist()
        c_v = pd.Series(ground).value_counts()
        total = 0.0
        for r in range(table.n):
            label = h.generalize(ground[r], int(lv[r, i]))
            under = sum(1 for x in ground if h.generalize(x, int(lv[r, i])) == label)
            total += g * np.log2(under / c_v[ground[r]])
        sup_labels = [(int(lv[r, i]), h.generalize(ground[r], int(lv[r, i]))) for r in range(table.n) if suppressed[r]]
        for c in pd.Series(sup_labels, dtype=object).value_counts().tolist():
            total += s_factor * c * np.log2(len(sup_labels) / c)
        out.append(total)
    return out if per_attribute else float(sum(out))


def loss_oracle(table: QITable, cell_levels: np.ndarray, suppressed: np.ndarray, *, g: float = 1.0,
                s_factor: float = 1.0) -> list[float]:
    """ARX's Loss per QI from its definition (Iyengar 2002 as ARX ``MetricMDNMLoss`` computes it): the
    domain share of a label is the fraction of the hierarchy's ground values it covers; a kept row costs
    ``g·share``, a suppressed row ``share + s_factor·(1 − share)``; the sum is normalised to
    ``(x − g·n/|D|)/(n − g·n/|D|)``, at least 0. Strings and loops only."""
    lv = np.broadcast_to(cell_levels, (table.n, table.m))
    out = []
    for i, (q, h) in enumerate(zip(table.qi, table.hierarchies, strict=True)):
        values = h.values
        ground = table.frame[q].astype(str).tolist()
        x = 0.0
        for r in range(table.n):
            label = h.generalize(ground[r], int(lv[r, i]))
            share = sum(1 for v in values if h.generalize(v, int(lv[r, i])) == label) / len(values)
            x += share + s_factor * (1 - share) if suppressed[r] else g * share
        lo, hi = g * table.n / len(values), float(table.n)
        out.append(max((x - lo) / (hi - lo), 0.0) if hi > lo else 0.0)
    return out


def aggregate_oracle(values: list[float], how: str) -> float:
    """ARX's aggregate functions written out (all weights 1)."""
    if how == "arithmetic":
        return sum(values) / len(values)
    if how == "geometric":
        prod = 1.0
        for v in values:
            prod *= v + 1.0
        return prod ** (1.0 / len(values)) - 1.0
    if how == "max":
        return max(values)
    return sum(values)


def arx_factors(gs: float) -> tuple[float, float]:
    """ARX's generalization and suppression factors for a gs-factor (``MetricMDNMLoss`` constructor)."""
    return (1.0 if gs <= 0.5 else 1.0 - 2.0 * (gs - 0.5)), (2.0 * gs if gs < 0.5 else 1.0)


def objective_oracle(table: QITable, name: str, levels: list[int], k: int, *, gs: float = 0.5,
                     aggregate: str | None = None, monotonic: bool = False) -> tuple[int, float]:
    """``(suppressed rows, value)`` of an objective at a full-domain node, from the definitions: the node
    materialized as strings, classes by a pandas group-by, rows of classes smaller than k suppressed."""
    frame = table.generalized_frame(np.array(levels))
    sizes = classes_oracle(frame, list(table.qi)).to_numpy()
    sup = sizes < k
    n, s = table.n, int(sup.sum())
    g, sf = arx_factors(gs)
    if name == "dm-star":
        return s, float(sizes.sum())
    if name == "dm":
        return s, float(sizes[~sup].sum() + s * n)
    if name == "entropy-top":
        return s, entropy_oracle(table, np.array(levels), sup)
    none = np.zeros(n, dtype=bool)
    if name == "prec":
        per = [g * lv / h if monotonic else (g * (n - s) * lv / h + sf * s) / n
               for lv, h in zip(levels, table.heights, strict=True)]
    elif name == "loss":
        per = loss_oracle(table, np.array(levels), none if monotonic else sup, g=g, s_factor=sf)
    else:
        per = arx_entropy_oracle(table, np.array(levels), none if monotonic else sup, g=g, s_factor=sf,
                                 per_attribute=True)
    default = {"prec": "arithmetic", "loss": "geometric", "entropy": "sum"}[name]
    return s, aggregate_oracle(per, aggregate or default)
