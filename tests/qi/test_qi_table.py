"""The encoded QI table: codes, gathers and group-bys agree with plain pandas on strings; clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink.qi.table import as_labels, encode, pack, read_table
from tests.qi_helpers import QI4, SWEENEY, classes_oracle, qi_tables, sweeney, sweeney_hierarchies


@settings(max_examples=80, deadline=None)
@given(qi_tables(), st.data())
def test_class_sizes_match_a_pandas_groupby(table, data) -> None:
    levels = [data.draw(st.integers(0, h)) for h in table.heights]
    frame = table.generalized_frame(np.array(levels))
    oracle = classes_oracle(frame, list(table.qi)).to_numpy()
    assert np.array_equal(table.class_sizes(levels)[table.row_freq], oracle)
    for i, q in enumerate(table.qi):   # equal codes <=> equal generalized labels
        codes = table.column_codes(q, levels[i])
        labels = frame[q].to_numpy()
        assert np.array_equal(codes[:, None] == codes[None, :], labels[:, None] == labels[None, :])


@settings(max_examples=40, deadline=None)
@given(qi_tables())
def test_frequency_table_is_the_distinct_rows(table) -> None:
    assert table.freq_counts.sum() == table.n
    assert np.array_equal(table.freq_codes[table.row_freq], table.codes)
    assert len(np.unique(table.freq_codes, axis=0)) == len(table.freq_codes)


def test_pack_survives_overflowing_key_spaces() -> None:
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 2**20, 500) for _ in range(6)]        # 2^120 possible keys
    cols = [np.concatenate([c, c[:50]]) for c in cols]              # 50 exact repeats
    keys, bound = pack(cols, [2**20] * 6)
    tuples = list(zip(*[c.tolist() for c in cols], strict=True))
    assert len(np.unique(keys)) == len(set(tuples)) == 500
    assert keys.max() < bound


def test_labels_of_dataframe_columns() -> None:
    s = pd.Series([34.0, np.nan, 7.0])
    assert as_labels(s).tolist() == ["34", "NA", "7"]
    assert as_labels(pd.Series([1.5, 2.0])).tolist() == ["1.5", "2.0"]
    assert as_labels(pd.Series(["02138", None])).tolist() == ["02138", "NA"]


def test_csv_keeps_leading_zeros() -> None:
    pt = read_table(SWEENEY / "fig4_pt.csv")
    assert pt["ZIP"].iloc[0] == "02141"
    t = encode(pt, QI4, sweeney_hierarchies())
    assert t.heights == (2, 5, 2, 3) and t.n == 12 and len(t.freq_counts) == 12


def test_errors_name_file_row_column_value(tmp_path) -> None:
    pt = sweeney("fig4_pt")
    with pytest.raises(ReleaseError) as err:
        encode(pt, ["Race", "Zip"], source="pt.csv")
    assert "pt.csv" in str(err.value) and "column 'Zip'" in str(err.value) and "ZIP" in str(err.value)
    bad = pt.copy()
    bad.loc[4, "ZIP"] = "02199"
    hs = sweeney_hierarchies()
    with pytest.raises(ReleaseError) as err:
        encode(bad, QI4, hs, source="pt.csv")
    msg = str(err.value)
    assert "pt.csv, row 6, column 'ZIP'" in msg and "'02199'" in msg and "ZIP.csv" in msg
    with pytest.raises(ReleaseError, match="no rows"):
        encode(pt.iloc[:0], QI4, hs)
    with pytest.raises(ReleaseError, match="no quasi-identifier"):
        encode(pt, [], hs)
    with pytest.raises(ReleaseError, match="repeat"):
        encode(pt, ["Race", "Race"], hs)
    (tmp_path / "x.csv").write_bytes(b"\xff\xfe\x00garbage\x00")
    with pytest.raises(ReleaseError):
        read_table(tmp_path / "missing.csv")


def test_qi_without_hierarchy_is_flat_and_missing_is_na() -> None:
    df = pd.DataFrame({"a": ["x", None, "x"], "b": [1, 2, 3]})
    t = encode(df, ["a", "b"], {"b": H.intervals("b", [1, 2, 3], widths=[2])})
    assert t.hierarchy("a").values == ["x", "NA"] and t.hierarchy("a").height == 1
    assert t.generalized_frame(np.array([1, 1]))["b"].tolist() == ["0-1", "2-3", "2-3"]
