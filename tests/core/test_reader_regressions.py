"""Regression tests, one per bug the fuzzers found: plain examples, no hypothesis.

They state behaviour through the public readers and the CLI (not pandas), so they hold for any reader
implementation.  Where the old behaviour is worth remembering it is in the test's docstring.
"""

from __future__ import annotations

import csv
import io
import resource
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphlink.core.release import read_release, read_truth
from graphlink.errors import ReleaseError
from tests.fixtures import fig34
from tests.fuzz_harness import check_contract, run_cli
from tests.fuzz_inputs import RICH_MARKUP, TERMINAL, flag_encrypted, zip_bomb

HEADER = "location,kind,element\n"


def csv_file(tmp_path: Path, content: str | bytes, name: str = "r.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


def refused(path: Path, **kw) -> ReleaseError:
    with pytest.raises(ReleaseError) as exc:
        read_release(path, **kw)
    assert "\n" not in str(exc.value)
    return exc.value


def rows(path: Path, **kw) -> list[tuple]:
    return [tuple(r) for r in read_release(path, **kw).frame.itertuples(index=False)]


# ------------------------------------------------------------------------------------------ CSV structure
@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_one_extra_field_on_every_row_is_refused_not_shifted(tmp_path: Path) -> None:
    """Was: the first field silently became the row index and every column shifted left."""
    err = refused(csv_file(tmp_path, HEADER + "H1,H9,identified,x\nH1,H9,deidentified,y\n"))
    assert err.row == 2 and "4 fields but the header has 3" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_ragged_row_is_named_by_its_line_past_quoted_breaks_and_blank_lines(tmp_path: Path) -> None:
    """Was: pandas' record count ("line 3") in a multi-line tokenizer message."""
    text = HEADER + 'H1,identified,"two\nlines"\n\nH1,deidentified,y,extra\n'
    err = refused(csv_file(tmp_path, text))
    assert err.row == 5 and "has 4 fields" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_rows_are_line_numbers_and_blank_rows_are_skipped(tmp_path: Path) -> None:
    text = "\n" + HEADER + "H1,identified,x\n,,\n   \nH1,secret,y\n"
    err = refused(csv_file(tmp_path, text))
    assert (err.row, err.column) == (6, "kind")
    assert rows(csv_file(tmp_path, "\n" + HEADER + "H1,identified,x\n,,\n \t\n", "ok.csv")) == [
        ("H1", "identified", "x")]


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_unterminated_quote_names_the_row_where_it_opens(tmp_path: Path) -> None:
    err = refused(csv_file(tmp_path, HEADER + 'H1,identified,x\nH1,identified,"y\nH1,deidentified,z\n'))
    assert err.row == 3 and "never closed" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_header_names_are_stripped(tmp_path: Path) -> None:
    """Was: a header cell 'element ' (trailing space) gave "missing column 'element'"."""
    assert rows(csv_file(tmp_path, " location , kind ,element \nH1,identified,x\n")) == [("H1", "identified", "x")]


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_repeated_required_column_is_refused(tmp_path: Path) -> None:
    """Was: the second 'element' column was renamed 'element.1' and silently ignored."""
    err = refused(csv_file(tmp_path, "location,kind,element,element\nH1,identified,x,y\n"))
    assert err.column == "element" and "appears 2 times" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_line_break_in_a_header_name_stays_on_one_line(tmp_path: Path) -> None:
    err = refused(csv_file(tmp_path, '"loc\nation",kind,element\nH1,identified,x\n'))
    assert "'loc\\nation'" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_spaces_before_a_quote_are_skipped_but_tabs_are_not(tmp_path: Path) -> None:
    assert rows(csv_file(tmp_path, HEADER + 'H1, identified, "a,b"\n')) == [("H1", "identified", "a,b")]
    assert refused(csv_file(tmp_path, HEADER + 'H1,identified,\t"a,b"\n', "tab.csv")).row == 2


# ---------------------------------------------------------------------------------------------- encodings
@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_utf16_without_bom_is_refused_as_nul_bytes(tmp_path: Path) -> None:
    """Was: header names full of invisible NULs: "missing column(s) ... (found: location, kind, element)"."""
    err = refused(csv_file(tmp_path, (HEADER + "H1,identified,x\n").encode("utf-16-le")))
    assert err.row == 1 and "NUL byte" in str(err) and "UTF-16" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_utf16_with_bom_and_latin1_are_refused_naming_the_row(tmp_path: Path) -> None:
    """Was: "cannot read it as CSV: 'utf-8' codec can't decode byte 0xe9 in position 31" (no row)."""
    assert "UTF-16" in str(refused(csv_file(tmp_path, (HEADER + "H1,identified,x\n").encode("utf-16"))))
    err = refused(csv_file(tmp_path, (HEADER + "H1,identified,x\nH1,identified,José\n").encode("latin-1"), "l.csv"))
    assert err.row == 3 and "0xe9" in str(err)


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_utf8_bom_is_skipped(tmp_path: Path) -> None:
    assert rows(csv_file(tmp_path, b"\xef\xbb\xbf" + HEADER.encode() + b"H1,identified,x\n")) == [
        ("H1", "identified", "x")]


@pytest.mark.usefixtures("csv_reader")   # the plain and the detailed reader
def test_kind_spelling_uses_plain_lower_casing(tmp_path: Path) -> None:
    """'İdentified' lower-cases to 'i̇dentified' (dotted i) in Python; Arrow's lower() said 'identified'."""
    assert rows(csv_file(tmp_path, HEADER + "H1,De-Identified,x\nH1,IDENTIFIED,y\n")) == [
        ("H1", "deidentified", "x"), ("H1", "identified", "y")]
    assert refused(csv_file(tmp_path, HEADER + "H1,İdentified,x\n", "i.csv")).column == "kind"


# ------------------------------------------------------------------------------------------------ Parquet
def parquet(tmp_path: Path, **columns: pa.Array) -> Path:
    p = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_arrays(list(columns.values()), names=list(columns)), p)
    return p


@pytest.mark.parametrize("bad", [pa.array([1.0]), pa.array([True]), pa.array([b"x"]), pa.array([["x"]]),
                                 pa.array([{"v": "x"}])], ids=["float", "bool", "binary", "list", "struct"])
def test_parquet_key_column_that_is_not_text_is_refused(tmp_path: Path, bad: pa.Array) -> None:
    """Was: silently stringified ('1.0', 'True', "b'x'", "['x']", "{'v': 'x'}")."""
    err = refused(parquet(tmp_path, location=pa.array(["H1"]), kind=pa.array(["identified"]), element=bad))
    assert err.column == "element" and "is not text" in str(err)


def test_parquet_integers_and_dictionaries_are_text_and_nulls_are_empty(tmp_path: Path) -> None:
    p = parquet(tmp_path, location=pa.array(["H1", "H1"]).dictionary_encode(),
                kind=pa.array(["identified", "deidentified"]), element=pa.array([7, 8], type=pa.int16()))
    assert rows(p) == [("H1", "identified", "7"), ("H1", "deidentified", "8")]
    p = parquet(tmp_path, location=pa.array(["H1", "H1"]), kind=pa.array(["identified", "identified"]),
                element=pa.array(["x", None]))
    err = refused(p)
    assert (err.row, err.column) == (2, "element")


def test_parquet_repeated_column_is_one_line(tmp_path: Path) -> None:
    """Was: pyarrow's multi-line 'Multiple matches for FieldRef.Name(location)' with the schema."""
    p = parquet(tmp_path, location=pa.array(["H1"]), kind=pa.array(["identified"]), element=pa.array(["x"]))
    t = pq.read_table(p)
    pq.write_table(pa.Table.from_arrays([*t.columns, t.column(0)], names=[*t.column_names, "location"]), p)
    assert refused(p).column == "location"


# ------------------------------------------------------------------------------------------------- truth
def test_truth_null_or_missing_value_is_refused(tmp_path: Path) -> None:
    """Was: a null in a Parquet truth file became the string 'None' and was accepted as a key."""
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"identified": ["Ali", "Bob"], "deidentified": ["actg", None]}), p)
    with pytest.raises(ReleaseError) as exc:
        read_truth(p)
    assert (exc.value.row, exc.value.column) == (2, "deidentified")
    with pytest.raises(ReleaseError) as exc:
        read_truth(csv_file(tmp_path, "identified,deidentified\nAli,actg\nBob\n"))
    assert (exc.value.row, exc.value.column) == (3, "deidentified")


def test_truth_duplicates_are_reported_and_empty_file_names_its_header(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = read_truth(csv_file(tmp_path, "identified,deidentified\nAli,actg\nAli,actg\n"))
    assert len(t) == 1 and any("collapsed 1 exact duplicate truth pair" in str(w.message) for w in caught)
    with pytest.raises(ReleaseError, match="expected a header row: identified,deidentified"):
        read_truth(csv_file(tmp_path, "", "empty.csv"))


# ------------------------------------------------------------------------------------------------ folders
def folder(tmp_path: Path, tables: dict[str, tuple[str, str]]) -> Path:
    root = tmp_path / "rel"
    for loc, (ident, deident) in tables.items():
        (root / loc).mkdir(parents=True)
        (root / loc / "identified.csv").write_text(ident)
        (root / loc / "deidentified.csv").write_text(deident)
    return root


def test_folder_duplicate_warning_names_file_and_row(tmp_path: Path) -> None:
    """Was: 'first at row 1', a position in the concatenation of all the tables."""
    root = folder(tmp_path, {"H1": ("element\nAli\n", "element\nactg\n"), "H2": ("element\nBob\n\nBob\n", "element\n")})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_release(root)
    assert any(f"{root / 'H2' / 'identified.csv'} row 4" in str(w.message) for w in caught)


def test_folder_composite_key_part_with_separator_is_refused(tmp_path: Path) -> None:
    """Was: ('a|b', 'c') and ('a', 'b|c') both became the element 'a|b|c'."""
    root = folder(tmp_path, {"H1": ("name,dob\na|b,c\na,b|c\n", "dna\nx\n")})
    err = refused(root, id_key=["name", "dob"], deid_key=["dna"])
    assert (err.row, err.column) == (2, "name") and "'|'" in str(err)


def test_folder_locations_clashing_after_strip_or_blank_are_refused(tmp_path: Path) -> None:
    """Was: folders 'H1' and 'H1 ' silently merged into one location; a blank name gave 'row 0'."""
    root = folder(tmp_path, {"H1": ("element\nA\n", "element\n"), "H1 ": ("element\nB\n", "element\n")})
    assert "both named 'H1'" in str(refused(root))
    assert "blank" in str(refused(folder(tmp_path / "b", {" ": ("element\nA\n", "element\n")})))


def test_folder_symlinks_followed_broken_refused_stray_files_warned(tmp_path: Path) -> None:
    """Was: a broken link (or a link loop) and stray files were skipped without a word."""
    root = folder(tmp_path, {"H1": ("element\nA\n", "element\nx\n")})
    (root / "H2").symlink_to(root / "H1")
    (root / "README.txt").write_text("notes")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert read_release(root).locations == ["H1", "H2"]
    assert any("README.txt: skipped" in str(w.message) for w in caught)
    (root / "H3").symlink_to(root / "nowhere")
    assert "broken or looping symbolic link" in str(refused(root))


def test_qi_table_with_one_extra_field_is_refused_not_shifted(tmp_path: Path) -> None:
    """Was: ``graphlink qi check`` read 'Asian,02138,x' under 'Race,ZIP' as Race=02138, ZIP=x (the first
    field became the index) and reported k on the wrong columns."""
    p = csv_file(tmp_path, "Race,ZIP\nAsian,02138,x\nBlack,02139,y\n")
    argv = ["qi", "check", str(p), "--qi", "Race,ZIP", "--k", "1"]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and "row 2" in out.stderr and "3 fields" in out.stderr
    from graphlink.qi.table import read_table

    frame = read_table(csv_file(tmp_path, "Race,ZIP\nAsian, 02138\nBlack,\n", "ok.csv"))
    assert frame["ZIP"].tolist()[0] == "02138" and pd.isna(frame["ZIP"].tolist()[1])


# ------------------------------------------------------------------------------------------------ writing
def test_written_release_with_a_carriage_return_reads_back(tmp_path: Path) -> None:
    """Was: pandas left a value with a lone CR unquoted, so ``unlink --out`` wrote a file that split it."""
    frame = pd.DataFrame({"location": ["cr\rcr", "H1"], "kind": ["identified", "deidentified"], "element": ["a", "b"]})
    rel = read_release(frame)
    rel.to_csv(tmp_path / "out.csv")
    assert rows(tmp_path / "out.csv") == [("cr\rcr", "identified", "a"), ("H1", "deidentified", "b")]


def test_trails_csv_quotes_carriage_returns(tmp_path: Path) -> None:
    frame = fig34().replace({"H1": "H\r1"})
    frame.to_csv(tmp_path / "r.csv", index=False, quoting=csv.QUOTE_ALL)
    out = run_cli(["trails", str(tmp_path / "r.csv"), "--format", "csv"])
    assert out.code == 0 and next(csv.reader(io.StringIO(out.stdout, newline=""))) == [
        "side", "element", "H\r1", "H2", "H3", "H4"]


def test_reidentify_csv_quotes_carriage_returns(tmp_path: Path) -> None:
    frame = fig34().replace({"Ali": "A\rli"})
    frame.to_csv(tmp_path / "r.csv", index=False, quoting=csv.QUOTE_ALL)
    out = run_cli(["reidentify", str(tmp_path / "r.csv"), "--method", "true-loves", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(out.stdout, newline="")))
    assert out.code == 0 and ["A\rli", "actg"] in rows


# -------------------------------------------------------------------------------------------------- CLI
def test_secure_demo_prints_location_names_as_text(tmp_path: Path) -> None:
    """Was: a location named '[/b]' crashed the tables with rich's MarkupError (exit 1)."""
    p = csv_file(tmp_path, HEADER + "[/b],identified,A\n[/b],deidentified,x\nH2,identified,A\nH2,deidentified,x\n")
    out = run_cli(["secure-demo", "--release", str(p), "--in-process"])
    assert out.code == 0, out.stderr
    assert "[/b] received" in out.stdout


@pytest.mark.parametrize("value", RICH_MARKUP)
def test_table_output_prints_markup_as_text(tmp_path: Path, value: str) -> None:
    """Was: '[/bold]' raised MarkupError and '[red]x' printed as 'x' (table cells were read as rich markup)."""
    p = csv_file(tmp_path, HEADER + f'H1,identified,"{value}"\nH1,deidentified,x\n')
    out = run_cli(["reidentify", str(p), "--method", "true-loves"])
    assert out.code == 0 and value in out.stdout, out.stderr[-300:]


def test_missing_choice_option_is_one_line_of_words() -> None:
    """Was: click's "Choose from:" list over lines, escaped to a literal ``\\n\\t`` between the choices."""
    out = subprocess.run([sys.executable, "-m", "graphlink.cli", "reidentify", "x.csv"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    (line,) = out.stderr.splitlines()
    assert "\\n" not in line and "\\t" not in line
    assert "Choose from: complete, incomplete, incomplete-k, multiple, true-loves" in line, line


def test_usage_error_is_one_line_in_a_real_process() -> None:
    """Was: four lines (Usage / Try ... --help / blank / Error)."""
    out = subprocess.run([sys.executable, "-m", "graphlink.cli", "audit", "x.csv", "--k", "0"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "graphlink: error: audit: Invalid value for '--k': Input should be greater than or equal to 1 "
        "(see 'graphlink audit --help')"]


def test_unwritable_output_is_exit_2_not_a_traceback(tmp_path: Path) -> None:
    """Was: IsADirectoryError traceback, exit 1."""
    fig34().to_csv(tmp_path / "r.csv", index=False)
    argv = ["unlink", str(tmp_path / "r.csv"), "--k", "2", "--out", str(tmp_path)]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and "is a folder" in out.stderr


def test_warnings_are_held_back_when_the_command_fails(tmp_path: Path) -> None:
    """Was: the duplicate-row warning line printed before the error line."""
    text = "".join([HEADER, *[f"{a},{b},{c}\n" for a, b, c in fig34().itertuples(index=False)], "H1,identified,Ali\n"])
    p = csv_file(tmp_path, text)
    out = run_cli(["unlink", str(p), "--k", "2", "--out", str(tmp_path)])          # --out is a folder: fails
    assert out.code == 2 and len(out.stderr.splitlines()) == 1
    out = run_cli(["audit", str(p), "--k", "2"])
    assert out.code == 0 and "graphlink: warning:" in out.stderr and "collapsed 1 exact duplicate" in out.stderr


def test_control_characters_from_a_file_are_escaped_in_the_message(tmp_path: Path) -> None:
    """Was: a header name's escape sequence went to the terminal raw ("found: location, <ESC>[31mkind")."""
    p = csv_file(tmp_path, "location,\x1b[31mkind,element\nH1,identified,x\n")
    out = run_cli(["trails", str(p)])
    assert out.code == 2 and "\x1b" not in out.stderr and "\\x1b[31mkind" in out.stderr


def test_out_of_memory_is_exit_2_in_a_real_process(tmp_path: Path) -> None:
    """Was: a MemoryError traceback.  The address space is capped so the draw cannot be allocated."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    out = subprocess.run([sys.executable, "-m", "graphlink.cli", "simulate", "--subjects", "20000000",
                          "--locations", "20", "--p", "0.5", "--out", str(tmp_path / "s.csv")],
                         capture_output=True, text=True, timeout=300, preexec_fn=cap,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    assert out.returncode == 2, out.stderr[-500:]
    assert out.stderr.splitlines() == ["graphlink: error: not enough memory for this input (try a smaller release "
                                       "or options)"]


@pytest.mark.parametrize("args, needle", [
    (["--subjects", "5", "--locations", "3", "--p", "0.5", "--seed", "-1"], "seed must be a non-negative"),
    (["--subjects", "10000000000000", "--locations", "3", "--p", "0.5"], "more than the generator draws"),
    (["--subjects", "5", "--locations", "3", "--p", "0.5", "--repeat", "100000000000"], "more than the generator"),
    (["--subjects", "5", "--locations", "3", "--p", "0"], "released nothing"),
    (["--subjects", "5", "--locations", "3", "--p", "0.5", "--population", "10"], "--population only applies"),
])
def test_simulate_bad_numbers(tmp_path: Path, args: list[str], needle: str) -> None:
    """Was: ValueError / MemoryError tracebacks, an unreadable empty release, an ignored --population."""
    argv = ["simulate", *args, "--out", str(tmp_path / "s.csv")]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and needle in out.stderr and not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("content, row, column", [
    ("location,p\nA,0.5\n ,0.2\n", 3, "location"),
    ("location,visitors,purchasers\nA,10,x\n", 2, "purchasers"),
    ("location,p\nA,0.5\nB,0.5,9\n", 3, None),
])
def test_popularity_csv_names_row_and_column(tmp_path: Path, content: str, row: int, column: str | None) -> None:
    """Was: a blank location read as 'nan'; a bad purchasers value became 0% withholding; pandas' messages."""
    from graphlink.simulation.simulate import read_popularities

    with pytest.raises(ReleaseError) as exc:
        read_popularities(csv_file(tmp_path, content), population=100)
    assert (exc.value.row, exc.value.column) == (row, column)


@pytest.mark.parametrize("args", [["--seed", "-1"], ["--workers", "0"], ["--out", "@FILE@"]])
def test_experiment_bad_option_is_refused_before_running(tmp_path: Path, args: list[str]) -> None:
    """Was: the experiment started and failed later (numpy's seed error, the pool's max_workers error)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = ["experiment", "dedup", *[a.replace("@FILE@", str(blocker)) for a in args]]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2


def test_cypher_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """Was: a UnicodeDecodeError traceback from ``graphlink cypher`` (the file is parsed before any query)."""
    from graphlink.store.cypherlib import load_file

    p = tmp_path / "q.cypher"
    p.write_bytes("// about\nRETURN 'é' AS e;\n".encode("latin-1"))
    with pytest.raises(ReleaseError) as exc:
        load_file(p)
    assert exc.value.row == 2 and "0xe9" in str(exc.value)


# ---------------------------------------------------------------------------------------------- app upload
def zip_of(members: dict[str, bytes], *, symlink: str | None = None, encrypted: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            if name == symlink:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, data)
    return flag_encrypted(buf.getvalue()) if encrypted else buf.getvalue()


GOOD = (HEADER + "H1,identified,x\nH1,deidentified,y\n").encode()


@pytest.mark.parametrize("data, needle", [
    (zip_of({}), "expected one sub-folder per location"),                     # was FileNotFoundError
    (zip_of({"r.csv": GOOD}, encrypted=True), "encrypted member"),          # was RuntimeError
    (zip_of({"../r.csv": GOOD}), "unsafe path"),
    (zip_of({"inner.zip": zip_of({"r.csv": GOOD})}), "nested zip archive"),
    (zip_of({"H1/identified.csv": b"/etc/passwd"}, symlink="H1/identified.csv"), "symbolic link"),
    (zip_of({"r.csv": GOOD})[:-30], "not a valid zip archive"),
    (zip_bomb(8 << 20), "more than 1,048,576 bytes"),
])
def test_upload_refuses_unsafe_or_broken_zips(data: bytes, needle: str) -> None:
    from graphlink_app.upload import read_upload

    with pytest.raises(ReleaseError) as exc:
        read_upload("up.zip", data, max_unzipped_bytes=1 << 20)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_upload_errors_name_the_upload_not_the_temporary_copy() -> None:
    """Was: '/tmp/graphlink-upload-xyz/release/H1/identified.csv, row 2 ...'."""
    from graphlink_app.upload import read_upload

    with pytest.raises(ReleaseError) as exc:
        read_upload("mine.zip", zip_of({"H1/identified.csv": b'element\nAli\n"Bob\n', "H1/deidentified.csv": b"x\n"}))
    assert str(exc.value).startswith("mine.zip/H1/identified.csv, row 3")
    with pytest.raises(ReleaseError) as exc:
        read_upload("rel.csv", GOOD, ("my truth.csv", b"identified,deidentified\nx,\n"))
    assert str(exc.value).startswith("my truth.csv, row 2")
    assert read_upload("rel.zip", zip_of({"r.csv": GOOD})).locations == ["H1"]


# ----------------------------------------------------------------------------------------- terminal output
#: a one-to-many release whose model note quotes the de-identified element (its reason names the orphan)
ORPHAN = "H1,identified,p0\nH1,deidentified,{v}\nH2,identified,p2\nH2,deidentified,{v}\nH3,identified,p0\n" \
         "H3,identified,p1\nH3,deidentified,{v}\n"
HOSTILE = ["[/bold]", "[link=http://127.0.0.1:9/]click[/link]", "\x1b[2J\x1b[H",
           "\x1b]8;;http://127.0.0.1:9/\x1b\\hidden\x1b]8;;\x1b\\", "\u202eevil"]


def _quoted(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _escaped(value: str) -> str:
    """How a value must look on the terminal: control and format characters as Python escapes."""
    import unicodedata

    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch)[0] == "C" else ch
                   for ch in value)


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("command", [["trails"], ["reidentify", "--method", "true-loves"], ["audit", "--k", "2"]])
def test_values_reach_the_terminal_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str],
                                           value: str) -> None:
    """Was: '[/bold]' in an element crashed trails/reidentify/audit in the model line (MarkupError, exit 1),
    '[link=...]' became a hyperlink, and ESC/OSC sequences went to the terminal raw (screen clears, hidden
    links).  Now (rich forced to think it writes to a terminal): exit 0, markup printed as text, every
    control character shown as an escape."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    p = csv_file(tmp_path, HEADER + ORPHAN.format(v=_quoted(value)))
    argv = [command[0], str(p), *command[1:], "--explain"]     # the model's details quote the orphan element
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 0, out.stderr
    both = out.stdout + out.stderr
    assert "\x1b]8;" not in both, "a hyperlink (OSC 8) reached the terminal"
    assert "\u202e" not in both and "\x1b[2J" not in both and "\x1b\\" not in both
    assert _escaped(value) in out.stderr, out.stderr          # the model line quotes the element as itself


@pytest.mark.parametrize("value", [*RICH_MARKUP, *TERMINAL])
def test_qi_tables_print_values_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """qi check's tables (and the necessary-condition line) print data values as text."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    p = csv_file(tmp_path, f"name,zip\nA,{_quoted(value)}\nB,02139\nC,02139\n")
    argv = ["qi", "check", str(p), "--qi", "zip"]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 0, out.stderr
    assert "\x1b]8;" not in out.stdout and "\x1b[2J" not in out.stdout and "\u202e" not in out.stdout
    assert "\x9b" not in out.stdout and "\x7f" not in out.stdout
    assert _escaped(value) in out.stdout


def test_a_refusal_is_one_line_without_the_model_note(tmp_path: Path) -> None:
    """Was: 'model: ...' then the error (two lines) when a command failed after deciding the model."""
    p = csv_file(tmp_path, HEADER + ORPHAN.format(v="x"))
    als = tmp_path / "als.yaml"
    als.write_text("relations: [{identified: a, deidentified: b}]\n")
    argv = ["reidentify", str(p), "--method", "true-loves", "--qi-links", str(als)]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and "Model:" not in out.stderr and "qi-links:" not in out.stderr


# --------------------------------------------------------------------- side files: hierarchies, ALS, plans
DATA = Path(__file__).resolve().parents[2] / "graphlink" / "data"
TABLE1 = str(DATA / "fingerprint" / "table1.csv")
GENPHEN = str(DATA / "genphen" / "release.csv")


def _one_line_naming(argv: list[str], path: Path, why: str) -> None:
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and str(path) in out.stderr and why in out.stderr, out.stderr


def test_hierarchy_label_over_the_csv_field_limit(tmp_path: Path) -> None:
    """Was: _csv.Error traceback ('field larger than field limit (131072)')."""
    d = tmp_path / "h"
    d.mkdir()
    (d / "sex.csv").write_text("m;" + "x" * 200_000 + ";*\nf;p;*\n")
    _one_line_naming(["qi", "anonymize", TABLE1, "--qi", "sex", "--k", "2", "--hierarchies", str(d), "--out",
                      str(tmp_path / "o.csv")], d / "sex.csv", "longer than 131,072 characters")


@pytest.mark.parametrize(("text", "why"), [
    ("relations:\n  - {identified: gender, deidentified: gender, map: 'prefix:" + "9" * 5000 + "'}\n",
     "needs a whole number of characters"),
    ("relations:\n  - {identified: gender, deidentified: gender, map: 'prefix:x'}\n", "needs a whole number"),
    ("relations:\n  - {identified: gender, deidentified: gender, hierarchy: sex.csv, level: x}\n",
     "is not a whole number"),
    ("relations: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested more than 32 levels"),
    ("r: &r {identified: gender, deidentified: gender}\nrelations: [*r]\n", "anchors and aliases"),
])
def test_als_files_that_crashed(tmp_path: Path, text: str, why: str) -> None:
    """Was: ValueError tracebacks (int() of 'x' or of 5,000 digits) and a RecursionError with 2,992 lines of
    stderr for deep nesting."""
    (tmp_path / "sex.csv").write_bytes((DATA / "fingerprint" / "hierarchies" / "sex.csv").read_bytes())
    als = tmp_path / "als.yaml"
    als.write_text(text)
    _one_line_naming(["qi", "links", GENPHEN, "--als", str(als)], als, why)


def test_als_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    """Was: 109 s and 4 GB before the memory cap.  Aliases are refused on the event stream, before any expansion."""
    import time

    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    als = tmp_path / "laughs.yaml"
    als.write_text(text + "relations: [*i]\n")
    t0 = time.monotonic()
    _one_line_naming(["qi", "links", GENPHEN, "--als", str(als)], als, "anchors and aliases")
    assert time.monotonic() - t0 < 30


def test_als_file_size_is_capped(tmp_path: Path) -> None:
    als = tmp_path / "big.yaml"
    als.write_text("relations:\n" + "# padding\n" * 200_000)
    _one_line_naming(["qi", "links", GENPHEN, "--als", str(als)], als, "larger than 1,048,576 bytes")


@pytest.fixture(scope="module")
def plan_dict(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import json

    p = tmp_path_factory.mktemp("plan") / "plan.json"
    argv = ["fingerprint", "plan", TABLE1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "2",
            "--hierarchies", str(DATA / "fingerprint" / "hierarchies"), "--out", str(p)]
    assert run_cli(argv).code == 0
    return json.loads(p.read_text())


@pytest.mark.parametrize(("change", "why"), [
    (lambda d: d.pop("table"), "no field 'table'"),
    (lambda d: d.update(k="two"), "field 'k' must be a whole number"),
    (lambda d: d.update(k=float("nan")), "NaN, which is not a JSON number"),
    (lambda d: d.update(seed=-5), "seed must be at least 0"),
    (lambda d: d["recipients"][0].update(levels="x"), "field 'levels' must be an object"),
    (lambda d: d.update(max_suppression=float("inf")), "Infinity, which is not a JSON number"),
])
def test_plan_files_that_crashed(tmp_path: Path, plan_dict: dict, change, why: str) -> None:
    """Was: KeyError / ValueError tracebacks (exit 1) for a missing table, a string k, NaN; a negative seed
    crashed numpy when releasing."""
    import copy
    import json

    d = copy.deepcopy(plan_dict)
    change(d)
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(d, allow_nan=True))
    _one_line_naming(["fingerprint", "release", str(p), TABLE1, "--recipient", "R1", "--out",
                      str(tmp_path / "o.csv")], p, why)
    assert not (tmp_path / "o.csv").exists()


def test_deeply_nested_plan_json(tmp_path: Path) -> None:
    """Was: RecursionError traceback."""
    p = tmp_path / "plan.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    _one_line_naming(["fingerprint", "release", str(p), TABLE1, "--recipient", "R1", "--out",
                      str(tmp_path / "o.csv")], p, "nested too deeply")


@pytest.mark.parametrize("argv", [
    ["unlink", "{rel}", "--k", "1", "--seed", "-1", "--out", "{out}"],
    ["fingerprint", "plan", TABLE1, "--qi", "sex", "--k", "2", "--recipients", "1", "--seed", "-1", "--out",
     "{out}"],
])
def test_negative_seeds(tmp_path: Path, argv: list[str]) -> None:
    """Was: numpy's 'expected non-negative integer' traceback."""
    fig34().to_csv(tmp_path / "r.csv", index=False)
    argv = [a.format(rel=tmp_path / "r.csv", out=tmp_path / "o.csv") for a in argv]
    out = run_cli(argv)
    check_contract(out, argv)
    assert out.code == 2 and "--seed" in out.stderr


# ------------------------------------------------------------------------ special files inside input folders
def _run_with_timeout(argv: list[str]) -> subprocess.CompletedProcess:
    """In a real process with a timeout: a reader that opens a FIFO would block forever."""
    return subprocess.run([sys.executable, "-m", "graphlink.cli", *argv], capture_output=True, text=True,
                          timeout=120)


def test_fifo_inside_a_parquet_folder_is_refused_without_opening_it(tmp_path: Path) -> None:
    """Was: the reader opened the FIFO and blocked forever."""
    folder = tmp_path / "release.parquet"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(fig34(), preserve_index=False), folder / "part-0.parquet")
    fifo = folder / "part-1.parquet"
    os_mkfifo(fifo)
    out = _run_with_timeout(["trails", str(folder)])
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert str(fifo) in out.stderr and "not a regular file" in out.stderr


def test_fifo_in_a_hierarchy_folder_or_location_folder_is_refused(tmp_path: Path) -> None:
    hier = tmp_path / "h"
    hier.mkdir()
    os_mkfifo(hier / "sex.csv")
    out = _run_with_timeout(["qi", "anonymize", TABLE1, "--qi", "sex", "--k", "2", "--hierarchies", str(hier),
                             "--out", str(tmp_path / "o.csv")])
    assert out.returncode == 2 and "sex.csv" in out.stderr and "not a regular file" in out.stderr
    rel = tmp_path / "rel"
    for loc in ("H1", "H2"):
        (rel / loc).mkdir(parents=True)
        (rel / loc / "identified.csv").write_text("name\nAli\n")
    (rel / "H2" / "deidentified.csv").write_text("dna\nactg\n")
    os_mkfifo(rel / "H1" / "deidentified.csv")
    out = _run_with_timeout(["trails", str(rel)])
    assert out.returncode == 2 and "deidentified.csv is not a regular file" in out.stderr, out.stderr


def os_mkfifo(path: Path) -> None:
    import os

    os.mkfifo(path)


@pytest.mark.parametrize("value", HOSTILE)
def test_unlink_and_secure_demo_print_names_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    value: str) -> None:
    """unlink's table and secure-demo's per-party tables, with a location and an element named ``value``."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    frame = fig34().replace({"H1": value, "Ali": value})
    frame.to_csv(tmp_path / "r.csv", index=False)
    for argv in (["unlink", str(tmp_path / "r.csv"), "--k", "2", "--out", str(tmp_path / "o.csv")],
                 ["secure-demo", "--release", str(tmp_path / "r.csv"), "--in-process"]):
        out = run_cli(argv)
        check_contract(out, argv)
        assert out.code == 0, out.stderr
        both = out.stdout + out.stderr
        assert "\x1b]8;" not in both and "\x1b[2J" not in both and "\u202e" not in both
    assert _escaped(value) in out.stdout                   # secure-demo names the location as itself


@pytest.mark.parametrize("rest", [b"\n", b"location,kind,element\nA,identified,x\nA,deidentified,n\n"])
def test_a_byte_order_mark_after_blank_lines_stays_in_the_header(tmp_path: Path, rest: bytes) -> None:
    """Found by the folder fuzzer: a header line that starts with a byte-order mark after blank lines
    (``b"\\n\\xef\\xbb\\xbf\\n"`` in a folder's de-identified table) crashed the reader with pandas'
    EmptyDataError, because pandas drops a BOM that starts its input.  Only the file's first bytes may carry a
    BOM; later it is part of the first column's name, so the header lacks ``location`` and the file is refused in
    one line naming it, as the reading rules say."""
    path = csv_file(tmp_path, b"\n\xef\xbb\xbf" + rest)
    exc = refused(path)
    assert exc.file == str(path) and "location" in str(exc) and "\n" not in str(exc)
    at_start = b"\xef\xbb\xbf" + HEADER.encode() + b"A,identified,x\nA,deidentified,n\n"
    assert len(rows(csv_file(tmp_path, at_start, "ok.csv"))) == 2      # at the file's start it marks the encoding
