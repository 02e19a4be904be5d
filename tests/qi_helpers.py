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
    """Non-uniform entropy straight from its definition, with strings and pandas."""
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
