"""Files an ARX user brings: ``;``- and tab-separated tables, ARX's hierarchy file names, and a quasi-identifier
without a hierarchy refused (not run flat with a warning)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink.qi.table import read_table, sniff_separator
from tests.cli.test_qi_cli import run
from tests.qi_helpers import QI4, SWEENEY

QI = ",".join(QI4)


def _arx_copy(tmp_path: Path, sep: str) -> tuple[Path, Path]:
    """SW-K Fig. 4 as ARX ships its samples: a ``sep``-separated table and ``fig4_hierarchy_<column>.csv``."""
    frame = pd.read_csv(SWEENEY / "fig4_pt.csv", dtype=str, keep_default_na=False)
    table = tmp_path / "fig4.csv"
    frame.to_csv(table, sep=sep, index=False)
    folder = tmp_path / "arx"
    folder.mkdir()
    for q in QI4:
        shutil.copy(SWEENEY / "hierarchies" / f"{q}.csv", folder / f"fig4_hierarchy_{q}.csv")
    return table, folder


@pytest.mark.parametrize("sep", [";", "\t", ","])
def test_separators_are_detected_and_give_the_same_answer(tmp_path: Path, sep: str) -> None:
    table, folder = _arx_copy(tmp_path, sep)
    assert sniff_separator(table) == sep
    assert read_table(table).equals(read_table(SWEENEY / "fig4_pt.csv"))
    out = run("anonymize", str(table), "--qi", QI, "--k", "2", "--hierarchies", str(folder), "--out",
              str(tmp_path / "o.csv"), "--format", "json")
    assert out.returncode == 0, out.stderr
    ref = run("anonymize", str(SWEENEY / "fig4_pt.csv"), "--qi", QI, "--k", "2", "--hierarchies",
              str(SWEENEY / "hierarchies"), "--out", str(tmp_path / "r.csv"), "--format", "json")
    got, want = json.loads(out.stdout), json.loads(ref.stdout)
    assert got["levels"] == want["levels"] and got["prec"] == want["prec"]


def test_separator_sniffing_ignores_quoted_text(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text('"a;b;c",d\n"1;2;3",4\n', encoding="utf-8")
    assert sniff_separator(p) == ","
    p.write_text("\n\nx;y\n1;2\n", encoding="utf-8")
    assert sniff_separator(p) == ";"
    assert read_table(p).to_dict("list") == {"x": ["1"], "y": ["2"]}


def test_a_refusal_names_the_separator_found(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("a|b|c\n1|2|3\n", encoding="utf-8")
    out = run("check", str(p), "--qi", "a,b")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "read as comma-separated" in out.stderr and "a|b|c" in out.stderr
    p.write_text("a;b\n1;2;3\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match="semicolon-separated"):
        read_table(p)


def test_arx_hierarchy_names(tmp_path: Path) -> None:
    _, folder = _arx_copy(tmp_path, ";")
    assert H.column_of(folder / "fig4_hierarchy_BirthDate.csv") == "BirthDate"
    assert H.column_of("adult_hierarchy_marital-status.csv") == "marital-status"
    assert H.column_of("ZIP.csv") == "ZIP"
    hs = H.read_dir(folder, QI4)
    assert sorted(hs) == sorted(QI4) and hs["ZIP"] == H.read_csv(SWEENEY / "hierarchies" / "ZIP.csv", "ZIP")
    shutil.copy(folder / "fig4_hierarchy_ZIP.csv", folder / "ZIP.csv")
    with pytest.raises(ReleaseError, match="two hierarchy files for column 'ZIP'"):
        H.read_dir(folder, QI4)


def test_a_named_qi_without_a_hierarchy_is_an_error(tmp_path: Path) -> None:
    """Pointing --hierarchies at a folder without a file for a QI used to warn and run it flat (exit 0, a
    different answer); now it is one line and exit 2, unless --flat names the column."""
    table, folder = _arx_copy(tmp_path, ";")
    (folder / "fig4_hierarchy_Race.csv").unlink()
    args = ("anonymize", str(table), "--qi", QI, "--k", "2", "--hierarchies", str(folder), "--out",
            str(tmp_path / "o.csv"))
    out = run(*args)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "no hierarchy file for Race" in out.stderr and "--flat Race" in out.stderr
    assert not (tmp_path / "o.csv").exists()
    ok = run(*args, "--flat", "Race", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["levels"]["Race"] in (0, 1)
    bad = run(*args, "--flat", "Age")
    assert bad.returncode == 2 and "--flat names Age" in bad.stderr
