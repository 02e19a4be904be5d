"""Loss measures: SW-A's Race×ZIP Prec values, the FP paper's Table 2, and definitions recomputed with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.qi import hierarchy as H
from graphlink.qi.lattice import enumerate_lattice, evaluate
from graphlink.qi.metrics import measure
from graphlink.qi.table import encode
from tests.qi_helpers import (
    arx_entropy_oracle,
    classes_oracle,
    entropy_oracle,
    loss_oracle,
    qi_tables,
    sweeney,
    sweeney_hierarchies,
)


def test_swa_race_zip_generalizations() -> None:
    """SW-A "examples of generalized tables": k and Prec of GT[race level, ZIP level] (heights with suppression:
    Race 2, ZIP 3)."""
    t = encode(sweeney("swa_race_zip"), ["Race", "ZIP"], sweeney_hierarchies())
    got = {lv: measure(t, np.array(lv)) for lv in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]}
    assert {lv: m.k for lv, m in got.items()} == {(0, 0): 1, (1, 0): 2, (0, 1): 2, (1, 1): 4, (0, 2): 4}
    assert got[(0, 0)].prec == 1.0
    assert got[(1, 0)].prec == pytest.approx(0.75)
    assert got[(0, 1)].prec == pytest.approx(5 / 6)
    assert got[(1, 1)].prec == pytest.approx(7 / 12)
    assert got[(0, 2)].prec == pytest.approx(2 / 3)
    assert measure(t, np.array([2, 3])).prec == 0.0


def test_fp_table_2() -> None:
    """Schrittwieser et al. Table 2: Samarati height, FP's level-ratio Prec (= m·(1 − Sweeney Prec) with these
    suppression-free hierarchies), DM* and the actual k of the six nodes."""
    sex = H.categorical("sex", {"p": ["m", "f"]}, suppress=False)
    dates = ["19.03.1970", "20.03.1970", "18.04.1970", "21.04.1970"]
    birth = H.Hierarchy("birth", [[d, d[3:], d[6:]] for d in dates])
    t = encode(pd.DataFrame({"sex": ["m", "m", "f", "f"], "birth": dates}), ["sex", "birth"],
               {"sex": sex, "birth": birth})
    table2 = {(0, 0): (0, 0, 4, 1), (1, 0): (1, 1, 4, 1), (0, 1): (1, 0.5, 8, 2), (0, 2): (2, 1, 8, 2),
              (1, 1): (2, 1.5, 8, 2), (1, 2): (3, 2, 16, 4)}
    for node, expected in table2.items():
        m = measure(t, np.array(node))
        assert (m.height, pytest.approx(2 * (1 - m.prec)), m.dm_star, m.k) == expected
    lat = enumerate_lattice(t, 2)
    assert sorted(map(tuple, lat.loc[lat.anonymous, ["sex", "birth"]].to_numpy().tolist())) == [
        (0, 1), (0, 2), (1, 1), (1, 2)]


@settings(max_examples=80, deadline=None)
@given(qi_tables(max_rows=18), st.data())
def test_cell_level_measures_match_definitions(table, data) -> None:
    lv = np.array([[data.draw(st.integers(0, h)) for h in table.heights] for _ in range(table.n)])
    frame = table.generalized_frame(lv)
    class_of = frame.groupby(list(table.qi), sort=False).ngroup().to_numpy()
    dropped = data.draw(st.sets(st.integers(0, int(class_of.max()))))   # algorithms remove whole classes
    sup = np.isin(class_of, list(dropped))
    m = measure(table, lv, sup)
    sizes = classes_oracle(frame, list(table.qi)).to_numpy()
    n, q = table.n, table.m
    heights = np.array(table.heights)
    assert m.suppressed_rows == sup.sum()
    assert m.prec == pytest.approx(1 - ((lv[~sup] / heights).sum() + sup.sum() * q) / (n * q))
    assert m.dm_star == int(sizes.sum())            # Σ_E |E|² = Σ_rows |E(row)|
    assert m.dm == int(sizes[~sup].sum()) + sup.sum() * n
    kept = frame[~sup]
    assert m.classes == (kept.groupby(list(table.qi)).ngroups if len(kept) else 0)
    assert m.k == (int(sizes[~sup].min()) if (~sup).any() else 0)
    assert m.entropy_top == pytest.approx(entropy_oracle(table, lv, sup), abs=1e-9)
    assert m.entropy == pytest.approx(arx_entropy_oracle(table, lv, sup), abs=1e-9)
    per = np.array(loss_oracle(table, lv, sup))
    assert m.loss == pytest.approx(np.prod(per + 1) ** (1 / q) - 1, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(qi_tables(), st.data())
def test_node_fast_path_equals_the_row_level_measures(table, data) -> None:
    """The lattice's frequency-table evaluation gives exactly the measures of the materialized node."""
    levels = [data.draw(st.integers(0, h)) for h in table.heights]
    k = data.draw(st.integers(1, table.n))
    node = evaluate(table, levels, k, limit=table.n)
    rows = node.row_mask(table)
    slow = measure(table, np.array(levels), rows)
    assert node.measures.k == slow.k and node.measures.dm == slow.dm and node.measures.dm_star == slow.dm_star
    assert node.measures.prec == pytest.approx(slow.prec) and node.measures.entropy == pytest.approx(slow.entropy)
    assert node.measures.entropy_top == pytest.approx(slow.entropy_top)
    assert node.measures.loss == pytest.approx(slow.loss)
    assert node.measures.classes == slow.classes and node.measures.suppressed_rows == slow.suppressed_rows
    frame = table.generalized_frame(np.array(levels))
    assert np.array_equal(rows, classes_oracle(frame, list(table.qi)).to_numpy() < k)
