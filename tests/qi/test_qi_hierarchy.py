"""Hierarchies: ARX CSV round trips, malformed files, Sweeney's DGHs, the builders and IUPAC."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from tests.qi_helpers import hierarchies, sweeney, sweeney_hierarchies


@settings(max_examples=60, deadline=None)
@given(hierarchies("a"))
def test_arx_csv_round_trip(tmp_path_factory, h: H.Hierarchy) -> None:
    path = tmp_path_factory.mktemp("h") / "a.csv"
    h.to_csv(path)
    back = H.read_csv(path)
    assert back == h
    assert path.read_text().splitlines()[0] == ";".join(h.matrix[0])


@settings(max_examples=60, deadline=None)
@given(hierarchies("a"))
def test_codes_are_a_tree(h: H.Hierarchy) -> None:
    """Each level's code is a function of the level below, and the top is a single label."""
    for lo, hi in zip(h.ancestors, h.ancestors[1:], strict=False):
        pairs = set(zip(lo.tolist(), hi.tolist(), strict=True))
        assert len({a for a, _ in pairs}) == len(pairs)
    assert h.cardinality(h.height) == 1
    for r, v in enumerate(h.values):
        for level in range(h.height + 1):
            assert h.labels[level][h.ancestors[level][r]] == h.generalize(v, level)


def test_sweeney_dghs_include_suppression() -> None:
    hs = sweeney_hierarchies()
    assert {q: h.height for q, h in hs.items()} == {"Race": 2, "BirthDate": 5, "Gender": 2, "ZIP": 3}
    assert [hs["ZIP"].generalize("02138", lv) for lv in range(4)] == ["02138", "0213*", "021**", "*"]
    assert [hs["BirthDate"].generalize("10/23/1964", lv) for lv in range(6)] == [
        "10/23/1964", "1964-10", "1964", "1960-64", "1960-69", "*"]
    assert hs["Gender"].generalize("female", 1) == "human"
    # the labels SW-K's figures print are labels of these hierarchies
    gt3 = sweeney("fig5_gt3")
    for q in ("Race", "BirthDate", "Gender", "ZIP"):
        assert set(gt3[q]) <= set(hs[q].covers)


def test_meet_and_covers() -> None:
    hs = sweeney_hierarchies()
    assert hs["BirthDate"].meet("1964", "1960-69") == "1964"
    assert hs["BirthDate"].meet("1960-69", "10/23/1964") == "10/23/1964"
    assert hs["ZIP"].meet("0213*", "02141") is None
    assert hs["Race"].meet("person", "black") == "black"
    assert hs["Race"].meet("black", "white") is None


def test_non_singleton_top_gets_suppression() -> None:
    h = H.Hierarchy("sex", [["m", "male"], ["f", "female"]])
    assert h.height == 2 and h.matrix[:, -1].tolist() == ["*", "*"]
    assert H.Hierarchy("sex", [["m", "p"], ["f", "p"]]).height == 1   # a singleton top is the DGH's top


@pytest.mark.parametrize(("text", "row", "column", "what"), [
    ("a;x;*\nb;*\n", 2, None, "has 2 levels but row 1 has 3"),
    ("a;x;*\na;y;*\n", 2, "level 0", "value 'a' is listed twice (rows 1 and 2)"),
    ("a;x;*\nb;x;y\n", 2, "level 2", "label 'x' generalizes to 'y' here but to '*' in row 1"),
    ("a;;*\n", 1, "level 1", "empty label"),
])
def test_malformed_files_name_file_row_column(tmp_path, text: str, row: int, column: str | None, what: str) -> None:
    path = tmp_path / "zip.csv"
    path.write_text(text)
    with pytest.raises(ReleaseError) as err:
        H.read_csv(path)
    msg = str(err.value)
    assert str(path) in msg and f"row {row}" in msg and what in msg
    assert column is None or f"column '{column}'" in msg
    assert "\n" not in msg


def test_read_dir_and_empty_file(tmp_path) -> None:
    with pytest.raises(ReleaseError, match="not a folder"):
        H.read_dir(tmp_path / "nope")
    (tmp_path / "a.csv").write_text("")
    with pytest.raises(ReleaseError, match="no rows"):
        H.read_dir(tmp_path)


def test_digits_builder_matches_sweeney_zip() -> None:
    h = H.digits("ZIP", ["02138", "02139", "02141", "02142"], max_masked=2)
    assert h.matrix.tolist()[0] == ["02138", "0213*", "021**", "*"]
    assert h.cardinality(1) == 2 and h.cardinality(2) == 1   # 021** is already a singleton below *
    full = H.digits("ZIP", ["15213", "15217", "152"])
    assert full.generalize("15213", 5) == "*****" and full.height == 6


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-200, 200), min_size=1, max_size=40),
       st.sampled_from([(1, 5, 10), (2, 4), (5, 25, 100), (3,)]))
def test_intervals_contain_their_values(values: list[int], widths: tuple[int, ...]) -> None:
    h = H.intervals("x", values, widths=widths)
    for v in set(values):
        for level, w in enumerate(widths, start=1):
            m = re.fullmatch(r"\[?(-?\d+)(?:-|, )(-?\d+)\]?", h.generalize(str(v), level))
            lo, hi = int(m.group(1)), int(m.group(2))
            assert lo <= v <= hi and hi - lo + 1 == w and lo % w == 0


def test_intervals_reject_bad_input() -> None:
    with pytest.raises(ReleaseError, match="not a number"):
        H.intervals("age", ["1", "x"], widths=[5])
    with pytest.raises(ReleaseError, match="divide the next"):
        H.intervals("age", ["1"], widths=[5, 12])
    assert H.intervals("w", ["1.5", "7.25"], widths=[2.5]).generalize("7.25", 1) == "[5, 7.5)"


def test_dates_builder() -> None:
    h = H.dates("d", ["2001-02-03", "1999-12-31"], steps=("month", "year", 10))
    assert [h.generalize("1999-12-31", lv) for lv in range(5)] == ["1999-12-31", "1999-12", "1999", "1990-99", "*"]
    assert h.values == ["1999-12-31", "2001-02-03"]   # chronological order
    assert H.dates("d", ["1995-01-01"], steps=(20,)).generalize("1995-01-01", 1) == "1980-99"
    with pytest.raises(ReleaseError, match="not a date"):
        H.dates("d", ["soon"])


def test_categorical_builder() -> None:
    h = H.categorical("region", {"us": {"north": ["northeast", "midwest"], "south-west": ["south", "west"]}})
    assert h.height == 3 and h.generalize("west", 1) == "south-west" and h.generalize("west", 3) == "*"
    with pytest.raises(ReleaseError, match="different depths"):
        H.categorical("bad", {"x": ["a", {"y": ["b"]}]})
    assert H.flat("s", ["a", "b", "a"]).matrix.tolist() == [["a", "*"], ["b", "*"]]


def test_iupac_follows_iupac_not_the_seed_text() -> None:
    h = H.iupac()
    assert h.generalize("A", 1) == h.generalize("G", 1) == "R"      # purines
    assert h.generalize("C", 1) == h.generalize("T", 1) == "Y"      # pyrimidines
    code = {v: i for i, v in enumerate(h.values)}
    assert h.lca_level(np.array([code["A"], code["G"]])) == 1
    assert h.lca_level(np.array([code["C"], code["G"]])) == 2      # the thesis says "R"; IUPAC: only N
    assert h.lca_level(np.array([code["A"], code["T"]])) == 2
    assert h.generalize("T", 2) == "N" and h.height == 2
