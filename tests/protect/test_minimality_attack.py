"""The attacker who knows keep-most (minimality attack, Wong et al. 2007; docs/unlink.md#keep-most): the brute force
of ``tests/minimality_oracle.py`` enumerates the originals a protected release could have been cut from, and on tiny
releases every record and person keeps at least k candidates over the originals keep-most can turn into it.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graphlink.core.release import read_release
from graphlink.errors import ReleaseError
from graphlink.protect.pipeline import unlink_keep
from tests.minimality_oracle import HIDDEN, Published, attack, originals, published, reaches
from tests.protect.test_unlink_properties import small_releases
from tests.unlink_oracle import is_k_unlinkable, union_edges


def _pairs(frame: pd.DataFrame, kind: str = "deidentified") -> set:
    part = frame[frame["kind"] == kind]
    return set(zip(part["location"], part["element"], strict=True))


def _release(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["location", "kind", "element"])


# Three people at two locations; record s1 is shown at A only, s2 at A and B.  One more disclosure was withheld.
PROTECTED = _release([("A", "identified", "p1"), ("A", "identified", "p2"), ("A", "identified", "p3"),
                      ("B", "identified", "p1"), ("B", "identified", "p2"),
                      ("A", "deidentified", "s1"), ("A", "deidentified", "s2"), ("B", "deidentified", "s2")])


def test_originals_add_exactly_the_printed_counts_and_fit_the_model():
    found = list(originals(Published(PROTECTED, 1, 0)))
    # the one withheld disclosure can only be s1 at B (A already shows two records and s2 is at both)
    assert len(found) == 1
    assert _pairs(found[0]) == _pairs(PROTECTED) | {("B", "s1")}
    assert _pairs(found[0], "identified") == _pairs(PROTECTED, "identified")


def test_originals_with_a_record_withheld_everywhere():
    found = list(originals(Published(PROTECTED, 1, 1)))
    # a third record disclosed at one location, A (which it fills) or B; either fits a person of its own
    shapes = sorted(tuple(sorted(c for c, e in _pairs(o) if e.startswith(HIDDEN))) for o in found)
    assert shapes == [("A",), ("B",)]
    for o in found:
        assert _pairs(PROTECTED) < _pairs(o)
        assert len(_pairs(o) - _pairs(PROTECTED)) == 1
        assert union_edges(o)[3] == 3                     # some complete one-to-one assignment fits


def test_originals_refuse_what_the_model_rules_out():
    # two withheld disclosures and no record withheld whole: s1 at B is the only free slot, so nothing fits
    assert list(originals(Published(PROTECTED, 2, 0))) == []
    # more records than people
    assert list(originals(Published(PROTECTED, 2, 2))) == []


def test_the_true_original_survives_and_keeps_its_owner():
    frame = _release([(c, "identified", f"p{i}") for c, people in (("A", "0123"), ("B", "013"), ("C", "12"))
                      for i in people]
                     + [(c, "deidentified", f"s{i}") for c, recs in (("A", "0123"), ("B", "01"), ("C", "12"))
                        for i in recs])
    res = unlink_keep(read_release(frame), 2, 0, side="deidentified", audit_before=False, multiplicity="one-to-one")
    assert reaches(frame, res.release.frame, 2, [0]) == 0
    found = attack(published(frame, res.release.frame), 2, range(2), truth=frame)
    assert found.truth
    for r, people in found.aware.partners.items():
        assert f"p{r[1:]}" in people                      # the truth is one of the consistent assignments
        assert people <= found.plain.partners[r]          # knowing the method never adds a candidate


def test_the_printed_counts_let_a_method_aware_attacker_narrow_below_k():
    """The smallest case the property test found: two full locations, three people, three records.  Keep-most
    withholds s3 at both locations; its summary says two disclosures and one record withheld at every location.
    The only original with those counts that keep-most turns into P is the true one, where each of s1 and s2 fits
    one person; the certificate (P alone) gives each two."""
    frame = _release([("H0", "identified", "p2"), ("H0", "identified", "p3"), ("H0", "deidentified", "s2"),
                      ("H0", "deidentified", "s3"), ("H1", "identified", "p1"), ("H1", "identified", "p3"),
                      ("H1", "deidentified", "s1"), ("H1", "deidentified", "s3")])
    res = unlink_keep(read_release(frame), 2, 0, side="deidentified", audit_before=False, multiplicity="one-to-one")
    protected = res.release.frame
    assert _pairs(protected) == {("H0", "s2"), ("H1", "s1")} and is_k_unlinkable(protected, 2)
    view = published(frame, protected)
    assert (view.withheld, view.whole) == (2, 1)
    told = attack(view, 2, range(4), truth=frame)
    assert told.originals == 3 and len(told.surviving) == 1 and told.truth
    assert told.plain.partners == {"s1": {"p1", "p3"}, "s2": {"p2", "p3"}}
    assert told.aware.partners == {"s1": {"p1"}, "s2": {"p2"}}
    # without the summary the attacker must allow every count, and P itself (nothing withheld) is one of them
    blind = attack(Published(protected, None, None), 2, range(4), truth=frame)
    assert blind.aware.partners == blind.plain.partners


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(max_people=5, max_locations=4), k=st.integers(2, 3), seed=st.integers(0, 3))
def test_keep_most_leaves_its_own_output_as_it_is(frame, k, seed):
    """Keep-most run again on its output P withholds nothing, whatever the ties.  So P is one of its own originals,
    and an attacker who has P but not the summary (who must allow every count of withheld disclosures, zero
    included) keeps every candidate of P's union of all maximum matchings: knowing the method gains nothing."""
    try:
        res = unlink_keep(read_release(frame), k, seed, side="deidentified", audit_before=False,
                          multiplicity="one-to-one")
    except ReleaseError:
        assume(False)
    protected = res.release.frame
    for again in (0, 1, 2):
        assert reaches(protected, protected, k, [again]) == again


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(max_people=4, max_locations=3), k=st.integers(2, 3), seed=st.integers(0, 2))
def test_method_aware_attacker_on_tiny_releases(frame, k, seed):
    """On tiny releases (up to 4 people, 3 locations), for the attacker with keep-most's summary and for the one
    without: the true original survives, every record keeps its true owner, and knowing the method only removes
    candidates.  Without the summary none is removed (P is its own original); with it, some can be (the test
    above), so that attacker is only checked for soundness here."""
    try:
        res = unlink_keep(read_release(frame), k, seed, side="deidentified", audit_before=False,
                          multiplicity="one-to-one")
    except ReleaseError:
        assume(False)
    protected = res.release.frame
    assert is_k_unlinkable(protected, k)
    for view in (published(frame, protected), Published(protected, None, None)):
        found = attack(view, k, sorted({seed, 0, 1}), truth=frame)
        assert found.truth                                # the seed that made P is among those tried
        for r, people in found.aware.partners.items():
            assert f"p{r[1:]}" in people
            assert people <= found.plain.partners[r]
    assert found.aware.partners == found.plain.partners
    assert found.aware.people == found.plain.people
