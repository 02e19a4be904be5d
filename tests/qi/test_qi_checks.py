"""k-anonymity, classes, the necessary condition, ℓ-diversity and t-closeness against SW-K Fig. 2 and oracles."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from graphlink.errors import ReleaseError
from graphlink.qi.checks import check, diversity, equivalence_classes, k_anonymity, necessary_condition
from tests.qi_helpers import sweeney

FIG2_QI = ["Race", "Birth", "Gender", "ZIP"]


def test_swk_figure_2_is_2_anonymous_with_the_printed_groups() -> None:
    fig2 = sweeney("fig2")
    cl = equivalence_classes(fig2, FIG2_QI)
    groups = sorted(sorted(fig2["id"].iloc[cl.rows(c)]) for c in range(len(cl.sizes)))
    assert groups == sorted(sorted(g) for g in [["t1", "t2"], ["t3", "t4"], ["t5", "t6"], ["t7", "t8", "t9"],
                                                ["t10", "t11"]])
    assert cl.k == k_anonymity(fig2, FIG2_QI) == 2
    # SW-K Example 4's value counts (the text's "m 6, f 5" is garbled: the table has 7 and 4)
    counts = {q: fig2[q].value_counts().to_dict() for q in FIG2_QI}
    assert counts == {"Race": {"Black": 6, "White": 5}, "Birth": {"1964": 5, "1965": 4, "1967": 2},
                      "Gender": {"m": 7, "f": 4}, "ZIP": {"0213*": 9, "0214*": 2}}
    nec = necessary_condition(fig2, FIG2_QI, 2)
    assert all(not v["below_k"] for v in nec.values())
    nec3 = necessary_condition(fig2, FIG2_QI, 3)
    assert nec3["Birth"]["below_k"] == ["1967"] and nec3["ZIP"]["below_k"] == ["0214*"]


def test_figure_2_is_2_anonymous_but_not_2_diverse() -> None:
    """{t3, t4} both have hypertension and {t10, t11} chest pain: the homogeneity attack ℓ-diversity fixes."""
    rep = check(sweeney("fig2"), FIG2_QI, sensitive="Problem")
    d = rep.to_dict()
    assert d["k"] == 2 and d["classes"] == 5 and d["l_diversity"] == {"distinct": 1, "entropy": 1.0}
    assert d["smallest_classes"][0] == {"values": {"Race": "Black", "Birth": "1965", "Gender": "m", "ZIP": "0214*"},
                                        "size": 2}
    assert [c["size"] for c in d["smallest_classes"]] == [2, 2, 2, 2, 3]
    # categorical t-closeness: class {t3,t4} = all hypertension (2 of 11 in the table): TV = 1 - 2/11
    assert d["t_closeness"] == pytest.approx(1 - 2 / 11)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 40))
    return pd.DataFrame({
        "a": draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n)),
        "b": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
        "s": draw(st.lists(st.sampled_from([0.5, 1.0, 3.0, 10.0, 11.0]), min_size=n, max_size=n)),
        "c": draw(st.lists(st.sampled_from(["flu", "hiv", "cold"]), min_size=n, max_size=n)),
    })


@settings(max_examples=120, deadline=None)
@given(frames())
def test_diversity_and_closeness_against_direct_definitions(df: pd.DataFrame) -> None:
    groups = df.groupby(["a", "b"])
    distinct = min(g.nunique() for _, g in groups["s"])
    ent = min(math.exp(-sum(p * math.log(p) for p in g.value_counts(normalize=True))) for _, g in groups["s"])
    values = np.sort(df["s"].unique())
    pos = {v: i / max(len(values) - 1, 1) for i, v in enumerate(values)}
    # ordered EMD with ground distance |i-j|/(M-1) is the 1-D Wasserstein distance on rank positions
    emd = max(wasserstein_distance([pos[v] for v in g], [pos[v] for v in df["s"]]) for _, g in groups["s"])
    d = diversity(df, ["a", "b"], "s")
    assert d.ordered and d.distinct == distinct
    assert d.entropy == pytest.approx(ent) and d.t_closeness == pytest.approx(emd, abs=1e-12)
    table_p = df["c"].value_counts(normalize=True)
    tv = max(0.5 * (g.value_counts(normalize=True).reindex(table_p.index, fill_value=0) - table_p).abs().sum()
             for _, g in groups["c"])
    dc = diversity(df, ["a", "b"], "c")
    assert not dc.ordered and dc.t_closeness == pytest.approx(tv)


def test_check_errors() -> None:
    fig2 = sweeney("fig2")
    with pytest.raises(ReleaseError, match="column 'Age'"):
        check(fig2, ["Age"])
    with pytest.raises(ReleaseError, match="sensitive column is also"):
        check(fig2, FIG2_QI, sensitive="ZIP")
    with pytest.raises(ReleaseError, match="no such sensitive column"):
        check(fig2, FIG2_QI, sensitive="Diagnosis")
