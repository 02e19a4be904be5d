"""The generalization lattice and the optimal search: exact against exhaustive enumeration of every node."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink.qi.lattice import Lattice, classify, enumerate_lattice, optimal, suppression_limit
from graphlink.qi.metrics import LOSSES
from graphlink.qi.table import encode
from tests.qi_helpers import is_k_anonymous, qi_tables, sweeney, sweeney_hierarchies

LOSS_COLUMN = {"prec": lambda df: 1 - df["prec"], "dm-star": lambda df: df["dm_star"],
               "entropy": lambda df: df["entropy"]}


def test_lattice_structure() -> None:
    lat = Lattice([1, 2])
    assert lat.size == 6 and lat.levels[lat.top].tolist() == [1, 2]
    v = lat.node([0, 1])
    assert sorted(map(tuple, lat.levels[lat.upset(v)].tolist())) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert sorted(map(tuple, lat.levels[lat.downset(v)].tolist())) == [(0, 0), (0, 1)]
    assert sorted(tuple(lat.levels[w]) for w in lat.successors(v)) == [(0, 2), (1, 1)]
    with pytest.raises(ReleaseError, match="nodes"):
        Lattice([9] * 8)


def test_swa_minimal_generalizations_and_minimal_distortion() -> None:
    """SW-A: for k = 2 the k-minimal generalizations of the Race × ZIP table are GT[1,0] and GT[0,1]; GT[0,1]
    is the minimal distortion (highest Prec)."""
    t = encode(sweeney("swa_race_zip"), ["Race", "ZIP"], sweeney_hierarchies())
    lat, anonymous, _ = classify(t, 2)
    nodes = {tuple(lat.levels[v]) for v in np.flatnonzero(anonymous)}
    minimal = {a for a in nodes if not any(b != a and all(x <= y for x, y in zip(b, a, strict=True)) for b in nodes)}
    assert minimal == {(1, 0), (0, 1)}
    assert optimal(t, 2).node.levels == (0, 1)
    assert optimal(t, 2).node.measures.prec == pytest.approx(5 / 6)


@settings(max_examples=150, deadline=None)
@given(qi_tables(max_rows=25, max_qi=3, max_height=3), st.data())
def test_optimal_equals_exhaustive_enumeration(table, data) -> None:
    k = data.draw(st.integers(1, table.n))
    sup = data.draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))
    loss = data.draw(st.sampled_from(LOSSES))
    res = optimal(table, k, max_suppression=sup, loss=loss)
    every = enumerate_lattice(table, k, max_suppression=sup)
    ok = every[every.anonymous]
    best = LOSS_COLUMN[loss](ok).min()
    assert res.node.anonymous
    assert res.node.measures.loss(loss) == pytest.approx(best, rel=1e-9, abs=1e-9)
    row = every[(every[list(table.qi)] == list(res.node.levels)).all(axis=1)].iloc[0]
    assert LOSS_COLUMN[loss](row.to_frame().T).iloc[0] == pytest.approx(best, rel=1e-9, abs=1e-9)
    # the release: at most the limit removed, the rest k-anonymous
    mask = res.node.row_mask(table)
    assert mask.sum() <= suppression_limit(table.n, sup)
    assert is_k_anonymous(table.generalized_frame(np.array(res.node.levels), keep=~mask), list(table.qi), k)
    assert res.stats.evaluated <= res.stats.nodes


@settings(max_examples=80, deadline=None)
@given(qi_tables(max_rows=25), st.data())
def test_classify_equals_enumeration_and_is_monotone(table, data) -> None:
    k = data.draw(st.integers(1, table.n))
    sup = data.draw(st.sampled_from([0.0, 0.1, 0.3]))
    lat, anonymous, stats = classify(table, k, max_suppression=sup)
    every = enumerate_lattice(table, k, max_suppression=sup)
    assert np.array_equal(anonymous, every["anonymous"].to_numpy())
    for v in np.flatnonzero(anonymous):   # predictive tagging is sound: everything above is anonymous too
        assert anonymous[lat.upset(v)].all()
    assert stats.evaluated + stats.tagged == lat.size


def test_predictive_tagging_saves_evaluations() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(15000, 15300, n).astype(str),
                       "sex": rng.choice(["f", "m"], n), "edu": rng.integers(0, 20, n)})
    hs = {"age": H.intervals("age", df.age, widths=[5, 10, 20, 40, 80]), "zip": H.digits("zip", df.zip),
          "edu": H.intervals("edu", df.edu, widths=[2, 4, 8, 16, 32])}
    t = encode(df, ["age", "zip", "sex", "edu"], hs)
    res = optimal(t, 10, max_suppression=0.01)
    lat, _, cls = classify(t, 10, max_suppression=0.01)
    assert res.stats.evaluated < lat.size / 4 and cls.evaluated < lat.size / 4
    every = enumerate_lattice(t, 10, max_suppression=0.01)
    assert 1 - res.node.measures.prec == pytest.approx((1 - every.loc[every.anonymous, "prec"]).min())


def test_bad_parameters() -> None:
    t = encode(sweeney("swa_race_zip"), ["Race", "ZIP"], sweeney_hierarchies())
    with pytest.raises(ReleaseError, match="larger than the table"):
        optimal(t, 9)
    with pytest.raises(ReleaseError, match="at least 1"):
        optimal(t, 0)
    with pytest.raises(ReleaseError, match="between 0 and 1"):
        optimal(t, 2, max_suppression=1.5)
    with pytest.raises(ReleaseError, match="unknown loss"):
        optimal(t, 2, loss="height")
