"""SW-K §4's three attacks reproduced exactly on Figures 3-5 and Example 7, and their remedies."""

from __future__ import annotations

import pandas as pd
import pytest

from graphlink.errors import ReleaseError
from graphlink.qi.attacks import link, shuffle
from graphlink.qi.checks import k_anonymity
from tests.qi_helpers import QI4, sweeney, sweeney_hierarchies

UNIQUE = [{"Race": "white", "BirthDate": "1964", "Gender": "male", "ZIP": "02138"},
          {"Race": "white", "BirthDate": "1965", "Gender": "female", "ZIP": "02139"}]


def test_unsorted_matching_reconstructs_pt() -> None:
    """SW-K Fig. 3: GT1 and GT2 are each 2-anonymous over {Race, ZIP}; joined row by row they give PT back."""
    gt1, gt2, pt = sweeney("fig3_gt1"), sweeney("fig3_gt2"), sweeney("fig3_pt")
    assert k_anonymity(gt1, ["Race", "ZIP"]) >= 2 and k_anonymity(gt2, ["Race", "ZIP"]) >= 2
    res = link(gt1, gt2, ["Race", "ZIP"], attack="unsorted", hierarchies=sweeney_hierarchies(fig3=True))
    pd.testing.assert_frame_equal(res.linked[["Race", "ZIP"]], pt, check_dtype=False)
    assert res.k_linked == 1 and len(res.disclosed()) == 12 and res.incompatible == 0
    assert res.to_dict()["remedy"].startswith("shuffle")


def test_shuffling_defeats_unsorted_matching() -> None:
    gt1, gt2, pt = sweeney("fig3_gt1"), sweeney("fig3_gt2"), sweeney("fig3_pt")
    hs = sweeney_hierarchies(fig3=True)
    for seed in range(20):
        res = link(gt1, shuffle(gt2, seed), ["Race", "ZIP"], attack="unsorted", hierarchies=hs)
        true_rows = pt.iloc[res.linked["row_first"]].reset_index(drop=True)
        right = (res.linked[["Race", "ZIP"]] == true_rows).all(axis=1).sum()
        assert right < 12 and res.incompatible > 0    # position no longer says who is who


def test_complementary_release_gives_lt() -> None:
    """SW-K Example 6: GT1 and GT3 (Fig. 5), both 2-anonymous, linked on Problem give LT (Fig. 4), where
    [white, 1964, male, 02138] and [white, 1965, female, 02139] are unique."""
    gt1, gt3 = sweeney("fig5_gt1"), sweeney("fig5_gt3")
    assert k_anonymity(gt1, QI4) == 2 and k_anonymity(gt3, QI4) == 2
    res = link(gt1, gt3, QI4, hierarchies=sweeney_hierarchies())
    assert res.on == ("Problem",)
    lt = res.linked.sort_values("row_first").reset_index(drop=True)[QI4 + ["Problem"]]
    pd.testing.assert_frame_equal(lt, sweeney("fig4_lt"), check_dtype=False)
    assert [d["values"] for d in res.disclosed()] == UNIQUE and res.k_linked == 1
    assert res.incompatible > 0    # Problem repeats (chest pain, obesity, ...): the hierarchy rules pairs out


def test_temporal_attack_and_its_remedy() -> None:
    """SW-K Example 7: GT1 at t0 and GT_t1 = GT3 ∪ two new rows at t1 reveal the same unique tuples; basing
    the t1 release on GT1 (GT1 ∪ the two new rows generalized) reveals nothing."""
    gt1, hs = sweeney("fig5_gt1"), sweeney_hierarchies()
    gt_t1 = sweeney("ex7_gt_t1")
    assert k_anonymity(gt_t1, QI4) == 2
    res = link(gt1, gt_t1, QI4, attack="temporal", hierarchies=hs)
    assert [d["values"] for d in res.disclosed()] == UNIQUE
    remedy = sweeney("ex7_remedy")
    assert k_anonymity(remedy, QI4) == 2
    safe = link(gt1, remedy, QI4, attack="temporal", hierarchies=hs)
    assert safe.disclosed() == [] and safe.k_linked == 2
    # remedy for complementary releases: a release derived from GT1 adds nothing either
    assert link(gt1, gt1, QI4, hierarchies=hs).disclosed() == []


def test_attack_errors() -> None:
    gt1, gt3 = sweeney("fig5_gt1"), sweeney("fig5_gt3")
    hs = sweeney_hierarchies()
    with pytest.raises(ReleaseError, match="by position"):
        link(gt1, gt3.iloc[:5], QI4, attack="unsorted", hierarchies=hs)
    with pytest.raises(ReleaseError, match="share no column"):
        link(gt1[QI4], gt3[QI4], QI4, hierarchies=hs)
    bad = gt3.copy()
    bad.loc[2, "ZIP"] = "9999*"
    with pytest.raises(ReleaseError, match="'9999\\*' is not in the hierarchy for ZIP"):
        link(gt1, bad, QI4, hierarchies=hs, sources=("gt1.csv", "gt3.csv"))
    with pytest.raises(ReleaseError, match="unknown attack"):
        link(gt1, gt3, QI4, attack="fancy")
