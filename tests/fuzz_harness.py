"""The fuzz harness: a table of readers (strategy, how to write a case, reference oracle, library call,
CLI commands) and the checks every property shares.

Adding a reader (e.g. a hierarchy file for ``graphlink qi``) is one strategy in ``tests/fuzz_inputs.py``
and one :class:`Reader` entry in :data:`READERS`; both property tests in ``tests/core/test_fuzz_readers.py``
then cover it.  ``oracle``/``library`` may be None for a reader checked by the CLI contract only.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from graphlink.errors import ReleaseError
from tests import cli_runner
from tests import fuzz_inputs as fi
from tests import fuzz_oracle as fo
from tests.fixtures import FIG34_TRUTH, fig34

OUT = "{out}"          # placeholder in a command: a fresh output path in the case's folder
PATH = "{path}"        # placeholder: the case's input file or folder
FIG34 = "{fig34}"      # placeholder: a valid release (for readers of side files like truth)
SWEENEY = Path(__file__).resolve().parent.parent / "graphlink" / "data" / "qi" / "sweeney"
FIG3_TABLE = str(SWEENEY / "fig3_pt.csv")            # Sweeney's Figure 3 table (Race, ZIP) ...
FIG3_HIERARCHIES = str(SWEENEY / "fig3_hierarchies")  # ... and its Race / ZIP hierarchies


#: generated cases run per property in this session (printed at the end of each fuzz module)
CASES: Counter[str] = Counter()


def report_cases(request: Any) -> None:
    """Print the per-property case counts of this session on the terminal (even under ``-q``)."""
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and CASES:
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            reporter.write_line("")
            reporter.write_line(f"fuzz cases run: {sum(CASES.values()):,} in all; "
                                + ", ".join(f"{k} {v:,}" for k, v in sorted(CASES.items())))
        CASES.clear()


@dataclass(frozen=True)
class Outcome:
    """What a CLI run did."""

    code: int
    stdout: str
    stderr: str


def run_cli(argv: list[str]) -> Outcome:
    """Run ``graphlink`` in this process (fast) with ``argv``; capture exit code, stdout and stderr."""
    done = cli_runner.run_cli(*argv)
    return Outcome(done.returncode, done.stdout, done.stderr)


def check_contract(outcome: Outcome, argv: list[str]) -> None:
    """Exit 0, or exit 2 with exactly one line ``graphlink: error: ...`` on stderr; never a traceback."""
    assert "Traceback" not in outcome.stderr, f"traceback for {argv}:\n{outcome.stderr}"
    assert outcome.code in (0, 2), f"exit {outcome.code} for {argv}:\n{outcome.stderr}"
    if outcome.code == 2:
        lines = outcome.stderr.split("\n")
        assert lines[-1] == "" and len(lines) == 2, f"not one line for {argv}: {outcome.stderr!r}"
        assert lines[0].startswith("graphlink: error: "), f"{argv}: {outcome.stderr!r}"


def check_refusal(exc: ReleaseError, verdict: fo.Verdict) -> None:
    """The library's error names one of the defects the oracle found (same row and column, same file
    when the oracle knows which one), and its message is one line."""
    assert "\n" not in str(exc) and "\r" not in str(exc), repr(str(exc))
    named = (exc.row, exc.column)
    matches = [d for d in verdict.defects if (d.row, d.column) == named and (d.file is None or d.file == exc.file)]
    assert matches, f"error {exc} (row={exc.row}, column={exc.column}, file={exc.file}) is none of {verdict.defects}"


def read_with_warnings(fn: Callable[[], Any]) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return value, [str(w.message) for w in caught]


_COLLAPSED = re.compile(r"collapsed (\d+) exact duplicate (?:row|truth pair)\(s\) \(first repeat(?: at row|:) (.+)\)")


def check_acceptance(rows: list[tuple], messages: list[str], verdict: fo.Verdict) -> None:
    """No silent drop: exactly the oracle's rows, in order, and the duplicates reported as collapsed."""
    assert verdict.accepted, f"accepted input the oracle refuses: {verdict.defects}"
    assert rows == verdict.rows
    found = [m for m in (_COLLAPSED.search(x) for x in messages) if m]
    if verdict.duplicates:
        assert len(found) == 1, messages
        assert int(found[0].group(1)) == verdict.duplicates
        assert found[0].group(2) == str(verdict.first_repeat_row)
    else:
        assert not found, messages


# ------------------------------------------------------------------------------------------ the readers
@dataclass(frozen=True)
class Reader:
    """One reader under fuzz.

    ``write(case, folder)`` writes the case and returns its path; ``options(case)`` are the CLI options the
    case needs (e.g. ``--id-key``); ``oracle(case, path)`` is the reference verdict; ``library(case,
    path)`` calls the library reader and returns the kept rows as tuples; ``commands`` are CLI argument
    lists with the ``{path}``, ``{out}`` and ``{fig34}`` placeholders.
    """

    name: str
    inputs: st.SearchStrategy
    write: Callable[[Any, Path], Path]
    commands: list[list[str]]
    options: Callable[[Any], list[str]] = lambda case: []
    oracle: Callable[[Any, Path], fo.Verdict] | None = None
    library: Callable[[Any, Path], list[tuple]] | None = None
    examples: int = 100                  # default examples per property (GRAPHLINK_FUZZ_EXAMPLES overrides)


def _write_bytes(suffix: str) -> Callable[[bytes, Path], Path]:
    def write(data: bytes, folder: Path) -> Path:
        p = folder / f"input{suffix}"
        p.write_bytes(data)
        return p
    return write


def _write_parquet(case: fi.ParquetCase, folder: Path) -> Path:
    p = folder / "input.parquet"
    case.write(p)
    return p


def _write_folder(case: fi.FolderCase, folder: Path) -> Path:
    case.write(folder / "release")
    return folder / "release"


def _folder_options(case: fi.FolderCase) -> list[str]:
    out = []
    if case.id_key is not None:
        out += ["--id-key", ",".join(case.id_key)]
    if case.deid_key is not None:
        out += ["--deid-key", ",".join(case.deid_key)]
    return out


def _release_rows(case: Any, path: Path) -> list[tuple]:
    from graphlink.core.release import read_release

    kw = {"id_key": case.id_key, "deid_key": case.deid_key} if isinstance(case, fi.FolderCase) else {}
    return [tuple(r) for r in read_release(path, **kw).frame.itertuples(index=False)]


def _truth_rows(case: Any, path: Path) -> list[tuple]:
    from graphlink.core.release import read_truth

    return [tuple(r) for r in read_truth(path).itertuples(index=False)]


#: commands that read a release given as {path} (the options of the case are appended)
RELEASE_COMMANDS: list[list[str]] = [
    ["trails", PATH, "--format", "csv"],
    ["trails", PATH, "--format", "json"],
    ["trails", PATH],
    *[["reidentify", PATH, *m] for m in fi.REIDENTIFY_METHODS],
    ["reidentify", PATH, "--method", "true-loves", "--format", "json"],
    ["audit", PATH, "--k", "2"],
    ["audit", PATH, "--k", "1", "--format", "json"],
]
#: commands without --id-key/--deid-key (long files only)
LONG_ONLY_COMMANDS: list[list[str]] = [
    ["unlink", PATH, "--k", "2", "--method", "greedy-dedup", "--out", OUT],
    ["unlink", PATH, "--k", "2", "--method", "force-dedup", "--out", OUT],
    ["unlink", PATH, "--k", "2", "--method", "greedy-dedup", "--secure", "--out", OUT],
    ["advise", "--release", PATH],
    ["secure-demo", "--release", PATH, "--in-process", "--format", "json"],
]

GENPHEN = Path(__file__).resolve().parent.parent / "graphlink" / "data" / "genphen"
FP_DATA = Path(__file__).resolve().parent.parent / "graphlink" / "data" / "fingerprint"
_PLAN: dict = {}


def _base_plan() -> dict:
    """A valid two-recipient plan of FP's Table 1 (made once per session)."""
    if not _PLAN:
        from graphlink.fingerprint.plan import make_plan
        from graphlink.qi import hierarchy as H
        from graphlink.qi.table import encode, read_table

        cols = ["sex", "birthdate"]
        t = encode(read_table(FP_DATA / "table1.csv"), cols, H.read_dir(FP_DATA / "hierarchies", cols))
        _PLAN.update(make_plan(t, 2, 2, seed=1).to_dict())
    return _PLAN


def _write_plan(case: fi.PlanCase, folder: Path) -> Path:
    p = folder / "plan.json"
    p.write_bytes(case.text(_base_plan()))
    return p


def _write_als(data: bytes, folder: Path) -> Path:
    """The fuzzed ALS next to a copy of FP's sex hierarchy (which its 'hierarchy:' relations name)."""
    (folder / "sex.csv").write_bytes((FP_DATA / "hierarchies" / "sex.csv").read_bytes())
    p = folder / "als.yaml"
    p.write_bytes(data)
    return p


def _write_hierarchy(data: bytes, folder: Path) -> Path:
    """A --hierarchies folder: the fuzzed ZIP.csv next to Sweeney's Race.csv."""
    d = folder / "hierarchies"
    d.mkdir()
    (d / "ZIP.csv").write_bytes(data)
    (d / "Race.csv").write_bytes((Path(FIG3_HIERARCHIES) / "Race.csv").read_bytes())
    return d


READERS: list[Reader] = [
    Reader("long-csv", fi.LONG_CSV, _write_bytes(".csv"), RELEASE_COMMANDS + LONG_ONLY_COMMANDS,
           oracle=lambda data, path: fo.expect_long_csv(data, str(path)), library=_release_rows),
    Reader("long-parquet", fi.parquet_case(), _write_parquet, RELEASE_COMMANDS + LONG_ONLY_COMMANDS,
           oracle=lambda case, path: fo.expect_long_parquet(path), library=_release_rows),
    Reader("folder", fi.folder_case(), _write_folder, RELEASE_COMMANDS, options=_folder_options,
           oracle=lambda case, path: fo.expect_folder(path, case.id_key, case.deid_key), library=_release_rows,
           examples=50),
    Reader("truth-csv", fi.TRUTH_CSV, _write_bytes(".csv"),
           [["reidentify", FIG34, "--method", "true-loves", "--truth", PATH],
            ["reidentify", FIG34, "--method", "incomplete", "--truth", PATH, "--format", "json"]],
           oracle=lambda data, path: fo.expect_truth_csv(data, str(path)), library=_truth_rows, examples=60),
    Reader("qi-table", fi.QI_CSV, _write_bytes(".csv"),
           [["qi", "check", PATH, "--qi", "Race,ZIP", "--k", "2"],
            ["qi", "check", PATH, "--qi", "Race", "--sensitive", "disease", "--format", "json"],
            ["qi", "anonymize", PATH, "--qi", "Race,ZIP", "--k", "2", "--hierarchies", FIG3_HIERARCHIES,
             "--out", OUT]]),
    Reader("hierarchy-csv", fi.hierarchy_csv(), _write_hierarchy,
           [["qi", "anonymize", FIG3_TABLE, "--qi", "Race,ZIP", "--k", "2", "--hierarchies", PATH, "--out", OUT],
            ["qi", "anonymize", FIG3_TABLE, "--qi", "Race,ZIP", "--k", "2", "--hierarchies", PATH,
             "--algorithm", "datafly", "--out", OUT]]),
    Reader("als-yaml", fi.als_yaml(), _write_als,
           [["qi", "links", str(GENPHEN / "release.csv"), "--als", PATH],
            ["reidentify", str(GENPHEN / "release.csv"), "--method", "true-loves", "--qi-links", PATH]],
           examples=60),
    Reader("plan-json", fi.plan_case(), _write_plan,
           [["fingerprint", "release", PATH, str(FP_DATA / "table1.csv"), "--recipient", "R1", "--out", OUT],
            ["fingerprint", "attribute", PATH, str(FP_DATA / "table1.csv"), "--format", "json"]], examples=60),
    Reader("popularity-csv", fi.popularity_csv(), _write_bytes(".csv"),
           [["simulate", "--probabilities", PATH, "--subjects", "5", "--seed", "1", "--out", OUT],
            ["simulate", "--probabilities", PATH, "--subjects", "5", "--population", "100", "--out", OUT]]),
]


def materialise(reader: Reader, case: Any, folder: Path, command: list[str]) -> tuple[Path, list[str]]:
    """Write the case (and a valid Figure 3.4 release when the command needs one); the argv to run."""
    path = reader.write(case, folder)
    fig = folder / "fig34.csv"
    if FIG34 in command:
        fig34().to_csv(fig, index=False)
    argv = [a.replace(PATH, str(path)).replace(OUT, str(folder / "out.csv")).replace(FIG34, str(fig))
            for a in command]
    if command[0] in ("trails", "reidentify", "audit"):
        argv += reader.options(case)
    return path, argv


__all__ = ["FIG34_TRUTH", "READERS", "Reader", "check_acceptance", "check_contract", "check_refusal",
           "materialise", "read_with_warnings", "run_cli"]
