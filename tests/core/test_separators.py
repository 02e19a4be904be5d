"""Inputs as people have them: releases and truth files saved with ``;`` or tab separators (as spreadsheets in
many locales save CSV) read as their comma-separated twins; a file with another separator is refused with the
separator it was read with named (graphlink.core.tabular, "Comma-separated, unless ...")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.core.release import read_release, read_truth
from graphlink.errors import ReleaseError
from tests.cli_runner import run_cli
from tests.fixtures import FIG34_TRUTH, fig34

TEXT = st.text(st.sampled_from(list("ab ;,\t\"'xé")), min_size=1, max_size=6).filter(lambda s: s.strip())


@pytest.mark.filterwarnings("ignore::graphlink.core.release.ReleaseWarning")
@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(TEXT, st.sampled_from(["identified", "deidentified"]), TEXT), min_size=1,
                     max_size=8), sep=st.sampled_from([";", "\t"]))
def test_semicolon_and_tab_files_read_as_their_comma_twins(tmp_path_factory, rows, sep) -> None:
    d = tmp_path_factory.mktemp("sep")
    frame = pd.DataFrame(rows, columns=["location", "kind", "element"])
    frame.to_csv(d / "comma.csv", index=False)
    frame.to_csv(d / "other.csv", index=False, sep=sep)
    try:
        want = read_release(d / "comma.csv").frame
    except ReleaseError as exc:                   # the same refusal, whatever the separator
        with pytest.raises(ReleaseError) as other:
            read_release(d / "other.csv")
        assert str(exc).split(": ", 1)[1] == str(other.value).split(": ", 1)[1]
        return
    got = read_release(d / "other.csv").frame
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))


def test_truth_and_folder_tables_with_other_separators(tmp_path: Path) -> None:
    FIG34_TRUTH.to_csv(tmp_path / "truth.tsv.csv", index=False, sep="\t")
    truth = read_truth(tmp_path / "truth.tsv.csv")
    assert sorted(map(tuple, truth[["identified", "deidentified"]].to_numpy())) == sorted(
        map(tuple, FIG34_TRUTH.to_numpy()))
    folder = tmp_path / "release"
    for loc, part in fig34().groupby("location"):
        (folder / loc).mkdir(parents=True)
        for kind in ("identified", "deidentified"):
            names = part.loc[part["kind"] == kind, "element"]
            pd.DataFrame({"name": names}).assign(extra="x;y").to_csv(folder / loc / f"{kind}.csv", index=False,
                                                                    sep=";")
    rel = read_release(folder, id_key=["name"], deid_key=["name"])
    assert len(rel.frame) == len(fig34())


def test_a_row_in_a_semicolon_file_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('location;kind;element\nH1;identified;"Ann\nSmith"\nH1;identified;a;b\n', encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"row 4: this row has 4 fields but the header has 3"):
        read_release(path)


def test_other_separators_are_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "pipes.csv"
    path.write_text("location|kind|element\nH1|identified|Ann\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match="read as comma-separated: a file may use commas, semicolons or tabs"):
        read_release(path)
    short = tmp_path / "short.csv"
    short.write_text("location;kind\nH1;identified\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"found: location, kind; read as semicolon-separated"):
        read_release(short)


def test_cli_reads_a_semicolon_release(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    fig34().to_csv(path, index=False, sep=";")
    proc = run_cli("audit", path, "--k", "2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"true_loves": 4' in proc.stdout
