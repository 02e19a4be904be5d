"""Fuzzing every reader and every CLI entry point that reads a file.

Two properties per reader of ``tests/fuzz_harness.READERS``:

* ``test_reader_agrees_with_oracle``: the library reader keeps exactly the rows the independent reference
  reader (``tests/fuzz_oracle.py``) keeps, in order, reporting collapsed duplicates; or refuses the input
  with a one-line ``ReleaseError`` naming a row and column where the reference found a defect.  Nothing
  accepted is silently dropped and nothing malformed is silently accepted.
* ``test_cli_contract``: each CLI command reading that input exits 0, or exits 2 with exactly one line
  ``graphlink: error: ...`` on stderr; never a traceback, never exit 1.  Input the reference refuses
  must exit 2; a successful ``trails`` lists every element kept, and ``unlink --out`` writes a release
  that reads back with every identified row and a subset of the de-identified ones.

Budget: ``GRAPHLINK_FUZZ_EXAMPLES`` examples per property (default below, sized for CI); e.g.
``GRAPHLINK_FUZZ_EXAMPLES=5000 pytest tests/core/test_fuzz_readers.py`` for a long local run.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from tests import fuzz_inputs as fi
from tests import fuzz_oracle as fo
from tests.fuzz_harness import (
    CASES,
    READERS,
    Reader,
    check_acceptance,
    check_contract,
    check_refusal,
    materialise,
    read_with_warnings,
    report_cases,
    run_cli,
)
from tests.fuzz_inputs import examples

csv.field_size_limit(2**31 - 1)      # the generated fields may be huge; parsing the CLI's output must not fail

SETTINGS = settings(max_examples=examples(100), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example])


@pytest.fixture(scope="module", autouse=True)
def _cases(request: pytest.FixtureRequest):
    yield
    report_cases(request)


@pytest.mark.slow
@pytest.mark.parametrize("reader", [r for r in READERS if r.oracle is not None], ids=lambda r: r.name)
def test_reader_agrees_with_oracle(reader: Reader) -> None:
    @settings(SETTINGS, max_examples=examples(reader.examples))
    @given(case=reader.inputs)
    def prop(case) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = reader.write(case, Path(d))
            verdict = reader.oracle(case, path)
            CASES[f"oracle[{reader.name}]"] += 1
            event("accepted" if verdict.accepted else "refused")
            try:
                rows, messages = read_with_warnings(lambda: reader.library(case, path))
            except ReleaseError as exc:
                check_refusal(exc, verdict)
                return
            check_acceptance(rows, messages, verdict)

    prop()


@pytest.mark.slow
@SETTINGS
@given(data=fi.LONG_CSV)
def test_written_release_reads_back(data: bytes) -> None:
    """What graphlink writes (``unlink --out``, ``Release.to_csv`` / ``to_parquet``) reads back row for
    row, whatever the values hold (quotes, commas, line breaks, lone carriage returns)."""
    from graphlink.core.release import read_release

    CASES["reads-back"] += 1
    verdict = fo.expect_long_csv(data)
    if not verdict.accepted:
        return
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "in.csv"
        src.write_bytes(data)
        rel, _ = read_with_warnings(lambda: read_release(src))
        for out in (Path(d) / "out.csv", Path(d) / "out.parquet"):
            rel.to_csv(out) if out.suffix == ".csv" else rel.to_parquet(out)
            again = [tuple(r) for r in read_release(out).frame.itertuples(index=False)]
            assert again == verdict.rows


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_cli_contract(reader: Reader) -> None:
    @settings(SETTINGS, max_examples=examples(reader.examples))
    @given(case=reader.inputs, which=st.integers(0, len(reader.commands) - 1))
    def prop(case, which: int) -> None:
        with tempfile.TemporaryDirectory() as d:
            path, argv = materialise(reader, case, Path(d), reader.commands[which])
            verdict = reader.oracle(case, path) if reader.oracle is not None else None
            outcome = run_cli(argv)
            CASES[f"cli[{reader.name}]"] += 1
            event(f"{argv[0]} exit {outcome.code}")
            check_contract(outcome, argv)
            if verdict is None:
                return
            if not verdict.accepted:
                assert outcome.code == 2, f"{argv} accepted input with defects {verdict.defects}"
                return
            if outcome.code == 0:
                _check_output(argv, outcome.stdout, Path(d) / "out.csv", verdict)

    prop()


def _check_output(argv: list[str], stdout: str, out: Path, verdict: fo.Verdict) -> None:
    """Downstream no-drop checks on a successful run."""
    from graphlink.core.release import read_release

    if argv[0] == "trails" and "csv" in argv:
        listed = {(r[0], r[1]) for r in list(csv.reader(io.StringIO(stdout, newline="")))[1:]}
        assert listed == {(kind, element) for _, kind, element in verdict.rows}
    if argv[0] == "trails" and "json" in argv:
        data = json.loads(stdout)
        assert set(data["locations"]) == {loc for loc, _, _ in verdict.rows}
    if argv[0] == "unlink":
        written = [tuple(r) for r in read_release(out).frame.itertuples(index=False)]
        assert {r for r in written if r[1] == "identified"} == {r for r in verdict.rows if r[1] == "identified"}
        assert {r for r in written if r[1] == "deidentified"} <= {r for r in verdict.rows if r[1] == "deidentified"}


@SETTINGS
@given(data=fi.zip_upload(), truth=st.one_of(st.none(), fi.TRUTH_CSV))
def test_upload_contract(data: bytes, truth: bytes | None) -> None:
    """The app's zip upload: a Release or a one-line GraphlinkError, never another exception; a zip of
    one long CSV reads exactly as that CSV does."""
    from graphlink.errors import GraphlinkError
    from graphlink_app.upload import read_upload

    CASES["upload"] += 1
    try:
        rel, messages = read_with_warnings(
            lambda: read_upload("upload.zip", data, None if truth is None else ("truth.csv", truth)))
    except GraphlinkError as exc:
        event("refused")
        assert "\n" not in str(exc) and "\r" not in str(exc) and "graphlink-upload-" not in str(exc), str(exc)
        return
    event("accepted")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        if len(names) == 1 and "/" not in names[0] and names[0].lower().endswith(".csv"):
            verdict = fo.expect_long_csv(zf.read(names[0]))
            check_acceptance([tuple(r) for r in rel.frame.itertuples(index=False)], messages, verdict)
