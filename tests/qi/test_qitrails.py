"""Trails behind a k-anonymous table (graphlink.qi.qitrails): what each attack names is true, k-anonymity holds
against the QI join, and the quasi-identifiers only ever add certain pairs to the trails'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.qi.qitrails import expose, trail_release


def pairs(r) -> set[tuple[str, str]]:
    return set(zip(r.pairs["identified"], r.pairs["deidentified"], strict=True))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(1, 4), st.integers(1, 8), st.floats(0.1, 0.9), st.integers(0, 1000))
def test_every_attack_names_only_true_pairs(n, values, locations, p, seed) -> None:
    rng = np.random.default_rng(seed)
    released = pd.DataFrame({"a": rng.integers(0, values, n).astype(str), "b": rng.integers(0, 2, n).astype(str)})
    e = expose(released, ["a", "b"], locations=locations, p=p, seed=seed)
    truth = {(f"p{i}", f"s{i}") for i in range(n)}
    for r in (e.qi_only, e.trails_only, e.both):
        assert pairs(r) <= truth and r.summary.wrong == 0
    assert pairs(e.trails_only) <= pairs(e.both)                 # a constraint only removes edges
    sizes = released.groupby(["a", "b"]).size()
    unique_rows = {f"p{i}" for i, (a, b) in enumerate(zip(released["a"], released["b"], strict=True))
                   if sizes[(a, b)] == 1}
    assert {m for m, _ in pairs(e.qi_only)} <= unique_rows       # the QI join names only unique records


def test_k_anonymous_table_names_nobody_but_trails_do() -> None:
    released = pd.DataFrame({"age": ["30-39"] * 6 + ["40-49"] * 6, "sex": ["F", "M"] * 6})   # 3-anonymous
    e = expose(released, ["age", "sex"], locations=12, p=0.5, seed=3)
    assert len(e.qi_only) == 0 and len(e.both) >= len(e.trails_only) > 0


def test_trail_release_shape_and_bad_input() -> None:
    released = pd.DataFrame({"q": ["x", "y", "z"]})
    frame, truth = trail_release(released, ["q"], locations=4, p=1.0, seed=0)
    assert len(frame) == 2 * 3 * 4 and set(frame["kind"]) == {"identified", "deidentified"}
    assert list(truth["identified"]) == ["p0", "p1", "p2"]
    assert (frame.groupby("element")["q"].nunique() == 1).all()
    with pytest.raises(ValueError):
        trail_release(released, ["q"], locations=4, p=0.0)
