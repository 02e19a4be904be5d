"""The fast paths of ``read_release`` (graphlink.core.ingest: Arrow, plain) against the detailed reader.

A fast path only vouches for well-formed files and otherwise hands over to the detailed reader, so on any
input every path must end the same way: the same rows in the same order, the same warnings, or the same error
message.  The differential tests set the size thresholds so that one path takes every file and feed it the
fuzz generators of ``tests/fuzz_inputs.py``; the other tests pin the cases the fast paths handle themselves
(Parquet dictionaries and integers, values to strip, repeats, CR line ends), the kernels they rely on, and the
``graphlink trails`` output, which is the same whichever path read the release.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlink.core.ingest as ingest
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.errors import ReleaseError
from tests import fuzz_inputs as fi
from tests.fuzz_harness import read_with_warnings

SETTINGS = settings(max_examples=fi.examples(150), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example,
                                           HealthCheck.function_scoped_fixture])


#: (FAST_MIN_ROWS, FAST_MIN_BYTES, PLAIN_MAX_BYTES) making each path take every file it vouches for
PATHS = {"arrow": (0, 0, 0), "plain": (1 << 62, 1 << 62, 1 << 62), "detailed": (1 << 62, 1 << 62, 0)}


def _use(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every release file to the path ``how`` (a key of ``PATHS``)."""
    for name, value in zip(("FAST_MIN_ROWS", "FAST_MIN_BYTES", "PLAIN_MAX_BYTES"), PATHS[how], strict=True):
        monkeypatch.setattr(ingest, name, value)


def _outcome(path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """('ok', rows, warnings, coded?) or ('error', message) of read_release on one path."""
    _use(how, monkeypatch)
    try:
        rel, messages = read_with_warnings(lambda: read_release(path))
    except ReleaseError as exc:
        return ("error", str(exc))
    return ("ok", [tuple(r) for r in rel.frame.itertuples(index=False)], messages, rel.coded is not None)


def _same(path: Path, monkeypatch: pytest.MonkeyPatch, how: str = "arrow") -> bool:
    """The fast path ``how`` and the detailed reader agree on ``path``; returns whether the fast path kept the
    release on codes."""
    fast, slow = _outcome(path, how, monkeypatch), _outcome(path, "detailed", monkeypatch)
    assert fast[:3] == slow[:3]
    assert slow[0] == "error" or not slow[3]
    return fast[0] == "ok" and fast[3]


@pytest.mark.slow
@SETTINGS
@given(data=fi.LONG_CSV)
def test_fast_csv_path_agrees_with_the_detailed_reader(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.csv"
        path.write_bytes(data)
        _same(path, monkeypatch, "arrow")
        _same(path, monkeypatch, "plain")


@SETTINGS
@given(case=fi.parquet_case())
def test_fast_parquet_path_agrees_with_the_detailed_reader(case: fi.ParquetCase,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fuzz_harness import _write_parquet

    with tempfile.TemporaryDirectory() as d:
        _same(_write_parquet(case, Path(d)), monkeypatch)


def _release_table(n: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    loc = rng.integers(0, 7, n)
    who = rng.integers(0, n // 3 + 1, n)
    kind = rng.integers(0, 2, n)
    return pd.DataFrame({"location": [f"H{c}" for c in loc],
                         "kind": np.where(kind == 0, "identified", "De-Identified"),
                         "element": [f"{'p' if k == 0 else 's'}{w}" for k, w in zip(kind, who, strict=True)]})


def _check_both(path: Path, monkeypatch: pytest.MonkeyPatch, how: str = "arrow") -> None:
    """Fast path ``how`` taken, and the release, sizes and trails equal the detailed reader's."""
    assert _same(path, monkeypatch, how)
    _use(how, monkeypatch)
    fast, _ = read_with_warnings(lambda: read_release(path))
    _use("detailed", monkeypatch)
    slow, _ = read_with_warnings(lambda: read_release(path))
    assert fast.locations == slow.locations
    pd.testing.assert_frame_equal(fast.sizes(), slow.sizes())
    assert list(fast.elements("deidentified")) == list(slow.elements("deidentified"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                    # "--reserved none although sizes differ"
        tf, ts = build_trails(fast, "none"), build_trails(slow, "none")
    for a, b in ((tf.identified, ts.identified), (tf.deidentified, ts.deidentified)):
        assert list(a.keys) == list(b.keys)
        assert np.array_equal(a.ones, b.ones) and np.array_equal(a.known, b.known)


@pytest.mark.parametrize("layout", ["plain", "dictionary", "integers", "chunks"])
def test_parquet_layouts_take_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    df = _release_table(3000)
    df.loc[5] = df.loc[2]                                   # an exact repeat, reported like the detailed reader
    df.loc[7, "location"] = "  H1 "                         # stripped onto an existing location
    table = pa.Table.from_pandas(df, preserve_index=False)
    if layout == "dictionary":
        table = table.set_column(0, "location", pc_encode(table.column(0)))
    if layout == "integers":
        ids = pa.array(np.arange(len(df)) % 500)
        table = table.set_column(2, "element", ids)
    path = tmp_path / "r.parquet"
    pq.write_table(table, path, row_group_size=700 if layout == "chunks" else None)
    _check_both(path, monkeypatch)


def _write_parts(table: pa.Table, folder: Path, cuts: list[int]) -> Path:
    """``table`` as a Parquet folder, split at the row positions ``cuts``, with the files Spark adds beside its
    parts (``_SUCCESS``, ``.crc``); part names sort in row order."""
    folder.mkdir()
    bounds = [0, *cuts, table.num_rows]
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        pq.write_table(table.slice(lo, hi - lo), folder / f"part-{i:05d}-x.snappy.parquet")
        (folder / f".part-{i:05d}-x.snappy.parquet.crc").write_bytes(b"crc")
    (folder / "_SUCCESS").write_bytes(b"")
    return folder


def test_a_parquet_folder_reads_as_its_parts_in_name_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table written as parts (as Spark writes one) is the same release as the table in one file, on the Arrow
    path and on the detailed reader; one part dictionary-encoded, another not."""
    df = _release_table(3000)
    df = df.drop_duplicates(ignore_index=True)
    df.loc[len(df) - 10] = df.loc[40]                       # a repeat across parts, reported at its folder row
    table = pa.Table.from_pandas(df, preserve_index=False)
    folder = _write_parts(table, tmp_path / "r.parquet", [1000, 2000])
    pq.write_table(pq.read_table(folder / "part-00001-x.snappy.parquet").set_column(
        0, "location", pc_encode(pq.read_table(folder / "part-00001-x.snappy.parquet").column(0))),
        folder / "part-00001-x.snappy.parquet")
    one = tmp_path / "one.parquet"
    pq.write_table(table, one)
    _check_both(folder, monkeypatch)
    for how in ("arrow", "detailed"):
        _use(how, monkeypatch)
        parts, said = read_with_warnings(lambda: read_release(folder))
        whole, _ = read_with_warnings(lambda: read_release(one))
        assert parts.frame.equals(whole.frame) and parts.locations == whole.locations
        assert (parts.coded is not None) == (how == "arrow")
        assert said == [f"{folder}: collapsed 1 exact duplicate row(s) (first repeat at row {len(df) - 9})"]


def test_a_parquet_folder_refuses_parts_that_differ_naming_the_part(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    df = _release_table(300)
    table = pa.Table.from_pandas(df, preserve_index=False)
    folder = _write_parts(table, tmp_path / "rel", [100])
    pq.write_table(table.slice(100).rename_columns(["location", "kind", "key"]), folder / "part-00001-x.snappy.parquet")
    for how in ("arrow", "detailed"):
        _use(how, monkeypatch)
        with pytest.raises(ReleaseError, match=r"part-00001-x\.snappy\.parquet: its columns \(location, kind, key\) "
                                               r"differ from those of part-00000"):
            read_release(folder)


def test_an_error_in_a_parquet_folder_names_the_folder_and_its_record(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Row N of a Parquet folder is its N-th record over the parts in name order: the same message as for the
    table in one file, but for the file named."""
    df = _release_table(3000)
    df.loc[2500, "kind"] = "someone"
    table = pa.Table.from_pandas(df, preserve_index=False)
    folder = _write_parts(table, tmp_path / "rel", [1200])
    one = tmp_path / "one.parquet"
    pq.write_table(table, one)
    for how in ("arrow", "detailed"):
        _use(how, monkeypatch)
        with pytest.raises(ReleaseError) as in_parts:
            read_release(folder)
        with pytest.raises(ReleaseError) as in_one:
            read_release(one)
        assert "row 2501" in str(in_parts.value)
        assert str(in_parts.value).replace(str(folder), "F") == str(in_one.value).replace(str(one), "F")


@SETTINGS
@given(case=fi.parquet_case(), cut=st.floats(0, 1))
def test_fast_parquet_folder_path_agrees_with_the_detailed_reader(case: fi.ParquetCase, cut: float,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzzed Parquet files, each split in two parts (a damaged file as the only part)."""
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "parts"
        if case.raw is not None:
            folder.mkdir()
            (folder / "part-0.parquet").write_bytes(case.raw)
        else:
            table = pa.Table.from_arrays(case.columns, names=case.names)
            _write_parts(table, folder, [int(cut * table.num_rows)])
        _same(folder, monkeypatch)


def pc_encode(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pa.chunked_array([c.dictionary_encode() for c in column.chunks])


@pytest.mark.parametrize("how", ["arrow", "plain"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_plain_csv_takes_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: str,
                                       how: str) -> None:
    df = _release_table(2000)
    lines = ["extra,location, kind ,element"] + [f"x,{a}, {b},{c} " for a, b, c in df.itertuples(index=False)]
    lines.insert(9, lines[4])                               # a repeat: its row number counts the header line
    path = tmp_path / "r.csv"
    path.write_bytes(("\ufeff" + newline.join(lines) + newline).encode())
    _check_both(path, monkeypatch, how)


@pytest.mark.parametrize("text", ['location,kind,element\n"a,b",identified,x\n',
                                  "location,kind,element\na,identified\n",
                                  "location,kind,element\na,someone,x\n",
                                  "location,kind,element\n\na,identified,x\n",
                                  "location,kind,element\n , ,\na,identified,x\n",
                                  "location,kind,element\na,identified,x\n\n",
                                  "location,kind,element\na,identified,x,\n",
                                  "location,kind\na,identified\n",
                                  "location,kind,element,kind\na,identified,x,y\n",
                                  "location,kind,element\n",
                                  "location,kind,element\na,identified,x\na,deidentified,\xe9\n"])
@pytest.mark.parametrize("how", ["arrow", "plain"])
def test_what_the_fast_path_does_not_vouch_for_goes_to_the_detailed_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, how: str) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(text.encode("latin-1" if "\xe9" in text else "utf-8"))
    assert not _same(path, monkeypatch, how)


def test_small_plain_files_take_the_plain_path(tmp_path: Path) -> None:
    """Under ``PLAIN_MAX_BYTES`` a plain CSV is read in Python (keys as a NumPy object array, no Arrow)."""
    path = tmp_path / "r.csv"
    _release_table(300).drop_duplicates().to_csv(path, index=False)
    coded = read_release(path).coded
    assert coded is not None and isinstance(coded.keys[0], np.ndarray) and coded.keys[0].dtype == object


def _cli(argv: list[str], how: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    from tests.fuzz_harness import run_cli

    _use(how, monkeypatch)
    out = run_cli(argv)
    return out.code, out.stdout, out.stderr


@pytest.mark.parametrize("fmt", ["json", "table"])
@pytest.mark.parametrize("example", ["thesis", "repeats"])
def test_trails_output_is_the_same_on_the_plain_and_the_detailed_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, example: str) -> None:
    """``graphlink trails`` prints the same summary (JSON or tables) and the same notes and warnings whichever
    path read the release."""
    if example == "thesis":
        path = Path(__file__).resolve().parents[2] / "graphlink" / "data" / "thesis_fig3_4.csv"
    else:
        df = _release_table(600).drop_duplicates()
        path = tmp_path / "r.csv"
        pd.concat([df, df.iloc[[4, 9]]]).to_csv(path, index=False)      # two repeats: a warning
    argv = ["trails", str(path), "--format", fmt, "--reserved", "none"]
    plain, detailed = _cli(argv, "plain", monkeypatch), _cli(argv, "detailed", monkeypatch)
    assert plain == detailed
    assert plain[0] == 0 and ("collapsed 2 exact duplicate" in plain[2]) == (example == "repeats")


@pytest.mark.parametrize("text", ["location,kind\nA,identified\n",
                                  "location,kind,element\nA,identified,x\nA,secret,y\n",
                                  "location,kind,element\nA,identified,x\nA,deidentified,  \n",
                                  "location,kind,element,kind\nA,identified,x,y\n",
                                  "location,kind,element\nA,identified,x\nA,identified,x,z\n",
                                  "location,kind,element\n", ""])
def test_trails_errors_are_the_same_on_the_plain_and_the_detailed_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Missing or repeated column, unknown kind, empty key, ragged row, empty release or file: one message."""
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    plain = _cli(["trails", str(path), "--format", "json"], "plain", monkeypatch)
    assert plain == _cli(["trails", str(path), "--format", "json"], "detailed", monkeypatch)
    assert plain[0] == 2 and plain[2].startswith("graphlink: error: ") and "bad.csv" in plain[2]


@SETTINGS
@given(st.lists(st.text(max_size=6), max_size=60))
def test_dedupe_strings_numbers_distinct_values_in_first_appearance_order(values: list[str]) -> None:
    arr = pa.array(values, pa.large_string())
    codes, distinct = ingest._dedupe(arr)
    expected = list(dict.fromkeys(values))
    assert distinct.to_pylist() == expected
    assert [expected[c] for c in codes] == values


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=80))
def test_group_rows_groups_exactly_equal_rows(rows: list[tuple[int, int]]) -> None:
    from graphlink.kernels.hashing import group_rows

    words = np.array(rows, dtype=np.uint64).reshape(len(rows), 2)
    half = len(rows) // 2
    group, n = group_rows(words[:half], words[half:])
    firsts = list(dict.fromkeys(rows))
    assert n == len(firsts)
    assert [firsts[g] for g in group] == rows


@SETTINGS
@given(st.lists(st.text(alphabet="ab", max_size=3), max_size=60), st.sampled_from([0, 1, 62]))
def test_kernels_stay_exact_when_every_hash_collides(values: list[str], shift: int) -> None:
    """Rows with equal hashes but different contents (a 64-bit collision) are told apart: the kernels given
    colliding hashes (a few values, equal for equal rows) number exactly as first appearance does."""
    from graphlink.kernels.hashing import _dedupe_hashed, _group_hashed

    h = np.array([(len(v) % 2) << shift for v in values], np.uint64)
    codes, first = _dedupe_hashed(*ingest._buffers(pa.array(values, pa.large_string())), h)
    expected = {v: c for c, v in enumerate(dict.fromkeys(values))}
    assert codes.tolist() == [expected[v] for v in values]
    assert [values[i] for i in first] == list(expected)
    words = np.array([[ord(c) for c in v.ljust(3)] for v in values], np.uint64).reshape(len(values), 3)
    group, n_groups = _group_hashed(words[:len(values) // 3], words[len(values) // 3:], h)
    assert n_groups == len(expected) and group.tolist() == [expected[v] for v in values]


def test_partitioned_kernels_match_first_appearance_numbering_across_many_partitions() -> None:
    """Past ``PARTITION_ROWS`` rows the kernels split the rows into many hash partitions: the codes and groups
    are still those of numbering in order of first appearance over all rows (checked with a dict)."""
    from graphlink.kernels.hashing import PARTITION_ROWS, dedupe_strings, group_rows

    rng = np.random.default_rng(7)
    n = 40 * PARTITION_ROWS
    values = [f"k{v}" for v in rng.integers(0, n // 3, n)]
    arr = pa.array(values, pa.large_string())
    codes, first = dedupe_strings(*ingest._buffers(arr))
    expected = {v: c for c, v in enumerate(dict.fromkeys(values))}
    assert codes.tolist() == [expected[v] for v in values]
    assert [values[i] for i in first] == list(expected)
    words = rng.integers(0, 4, (n, 3)).astype(np.uint64) << np.uint64(62)
    group, n_groups = group_rows(words[:n // 2], words[n // 2:])
    rows = [tuple(r) for r in words.tolist()]
    seen = {r: g for g, r in enumerate(dict.fromkeys(rows))}
    assert n_groups == len(seen) and group.tolist() == [seen[r] for r in rows]


@SETTINGS
@given(st.lists(st.text(alphabet='ab,"\r\né€', max_size=4), min_size=1, max_size=20), st.integers(0, 5),
       st.sampled_from(["string", "large_string"]))
def test_the_quoting_check_on_bytes_agrees_with_the_pattern(values: list[str], cut: int, kind: str) -> None:
    """The byte search that decides whether Arrow may write the pairs unquoted finds exactly the values the
    regular expression finds, on sliced chunks too (the bytes before a slice are not looked at)."""
    import pyarrow.compute as pc

    from graphlink.io.pairs import _NEEDS_QUOTES, _needs_quotes

    column = pa.chunked_array([pa.array(values, getattr(pa, kind)()).slice(min(cut, len(values) - 1))])
    assert _needs_quotes(column) == pc.any(pc.match_substring_regex(column, _NEEDS_QUOTES)).as_py()


@pytest.mark.parametrize("keys", [["p1", "p2", "p 3"], ["p1", "a,b", "c\"d"], ["x\ry", "z", "w"]])
def test_pairs_csv_in_bulk_is_what_the_table_writer_writes(keys: list[str]) -> None:
    """REIDIT-C's pairs written by Arrow are byte for byte those of graphlink.core.tabular.write_csv."""
    import io

    from graphlink.analysis.reidit import PairColumns, Reidentification
    from graphlink.core.tabular import write_csv
    from graphlink.io.pairs import write_pairs_csv

    ident = pa.array(keys, pa.large_string())
    deident = np.array([k.upper() for k in keys], dtype=object)
    result = Reidentification("complete", PairColumns(ident, deident, lambda: pa.array(["r"] * len(keys))))
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    write_pairs_csv(result, ["identified", "deidentified"], stream)
    stream.flush()
    expected = io.StringIO(newline="")
    write_csv(pd.DataFrame({"identified": keys, "deidentified": list(deident)}), expected)
    assert raw.getvalue().decode() == expected.getvalue()
