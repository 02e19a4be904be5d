"""Release readers and validation: every bad input names file, row and column; nothing silently dropped."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from graphlink.core.release import ReleaseWarning, read_release, read_truth
from graphlink.errors import ReleaseError
from tests.fixtures import fig34

pytestmark = pytest.mark.usefixtures("csv_reader")      # every test on both readers of small CSV releases


def write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_long_csv_roundtrip_and_sizes(tmp_path: Path) -> None:
    p = tmp_path / "fig.csv"
    fig34().to_csv(p, index=False)
    rel = read_release(p)
    assert rel.name == "fig"
    assert rel.locations == ["H1", "H2", "H3", "H4"]
    sizes = rel.sizes()
    assert sizes.loc["H1"].tolist() == [3, 2]
    assert sizes.loc["H2"].tolist() == [3, 3]
    assert list(rel.elements("deidentified")) == ["actg", "tgac", "ctga", "gatc"]


def test_parquet_and_dataframe_agree(tmp_path: Path) -> None:
    p = tmp_path / "fig.parquet"
    fig34().to_parquet(p, index=False)
    a = read_release(p).frame
    b = read_release(fig34()).frame
    pd.testing.assert_frame_equal(a, b)


def test_extra_columns_ignored_and_kind_spellings(tmp_path: Path) -> None:
    p = write(tmp_path, "location,kind,element,note\nA,identified,x,hi\nA,De-Identified,y,\n")
    rel = read_release(p)
    assert rel.frame["kind"].tolist() == ["identified", "deidentified"]
    assert list(rel.frame.columns) == ["location", "kind", "element"]


def test_missing_column_names_file_and_column(tmp_path: Path) -> None:
    p = write(tmp_path, "location,kind\nA,identified\n")
    with pytest.raises(ReleaseError, match=r"r\.csv.*missing column\(s\) 'element'"):
        read_release(p)


def test_unknown_kind_names_row_and_column(tmp_path: Path) -> None:
    p = write(tmp_path, "location,kind,element\nA,identified,x\nA,secret,y\n")
    with pytest.raises(ReleaseError) as exc:
        read_release(p)
    assert exc.value.row == 3 and exc.value.column == "kind"
    assert "unknown kind 'secret'" in str(exc.value)


def test_empty_key_names_row(tmp_path: Path) -> None:
    p = write(tmp_path, "location,kind,element\nA,identified,x\nA,deidentified,  \n")
    with pytest.raises(ReleaseError) as exc:
        read_release(p)
    assert exc.value.row == 3 and exc.value.column == "element"


def test_empty_release_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="empty"):
        read_release(write(tmp_path, "location,kind,element\n"))
    with pytest.raises(ReleaseError, match="empty"):
        read_release(write(tmp_path, "", "e.csv"))


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="no such file"):
        read_release(tmp_path / "nope.csv")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(ReleaseError, match="cannot read it as Parquet"):
        read_release(bad)


def test_duplicates_collapsed_with_warning(tmp_path: Path) -> None:
    p = write(tmp_path, "location,kind,element\nA,identified,x\nA,identified,x\nA,deidentified,y\n")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rel = read_release(p)
    assert len(rel) == 2
    assert any(issubclass(x.category, ReleaseWarning) and "1 exact duplicate" in str(x.message) for x in w)


def test_folder_with_composite_keys(tmp_path: Path) -> None:
    for loc, ids, dna in (("H1", [("Ali", "1970"), ("Bob", "1980")], ["actg"]), ("H2", [("Ali", "1970")], ["actg"])):
        d = tmp_path / "rel" / loc
        d.mkdir(parents=True)
        pd.DataFrame(ids, columns=["name", "dob"]).to_csv(d / "identified.csv", index=False)
        pd.DataFrame({"dna": dna, "other": "z"}).to_csv(d / "deidentified.csv", index=False)
    rel = read_release(tmp_path / "rel", id_key=["name", "dob"], deid_key=["dna"])
    assert set(rel.elements("identified")) == {"Ali|1970", "Bob|1980"}
    assert rel.sizes().loc["H1"].tolist() == [2, 1]
    with pytest.raises(ReleaseError, match="name them as the identified key column") as info:
        read_release(tmp_path / "rel")
    assert info.value.diagnostic.code == "folder-key-missing" and info.value.diagnostic.data["side"] == "identified"
    from graphlink.cli.words import say

    assert "name them with --id-key" in say(info.value)
    with pytest.raises(ReleaseError, match="missing key column"):
        read_release(tmp_path / "rel", id_key=["surname"], deid_key=["dna"])


def test_folder_missing_table(tmp_path: Path) -> None:
    (tmp_path / "rel" / "H1").mkdir(parents=True)
    (tmp_path / "rel" / "H1" / "identified.csv").write_text("element\nAli\n")
    with pytest.raises(ReleaseError, match="no deidentified.csv"):
        read_release(tmp_path / "rel")


def test_truth_validation(tmp_path: Path) -> None:
    t = read_truth(write(tmp_path, "identified,deidentified\nAli,actg\n", "t.csv"))
    assert t.values.tolist() == [["Ali", "actg"]]
    with pytest.raises(ReleaseError, match="truth file is missing"):
        read_truth(write(tmp_path, "name,dna\nAli,actg\n", "t2.csv"))
