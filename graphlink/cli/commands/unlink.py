"""``graphlink unlink`` — suppress records until the release is k-unlinkable (thesis ch. 7).

Writes the protected release in the same long format (the rows still disclosed: de-identified ones withheld, or,
by keep-most on the identified side and on one-to-many releases, identified ones) and prints a summary.  Every
written release has passed the core's exact audit; with ``--max-risk P`` the certificate is instead that no pair's
re-identification probability exceeds P (graphlink.protect.maxrisk).
"""

from __future__ import annotations

import json
import math
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from graphlink.catalog import KEEP_METHODS, KEEP_SIDES
from graphlink.cli.choices import MethodChoice
from graphlink.errors import GraphlinkError, ReleaseError

#: the method ``--method`` stands for when it is not given (without --max-risk)
DEFAULT_METHOD = "force-dedup"

FORMATS = ("table", "json")
#: ``--method`` as a choice of the registry's protection methods: checked (and listed in --help) before reading
_METHOD = MethodChoice("protect")
SideChoice = Enum("SideChoice", {m: m for m in KEEP_SIDES}, type=str)  # type: ignore[misc]


class SecureUnavailableError(GraphlinkError):
    """``--secure`` was requested but ``graphlink.secure.secure_unlink`` is not available (exit 2)."""

    exit_code = 2


def _secure_disclosure(release: Any, k: int, method: str, seed: int | None) -> tuple[Any, dict]:
    """Run the secure protocol; return the release it produced and its report (or raise a clear error)."""
    try:
        import graphlink.secure as secure
        fn = getattr(secure, "secure_unlink", None)
    except ImportError as exc:  # pragma: no cover - package always present
        raise SecureUnavailableError(f"--secure needs graphlink.secure ({exc})") from exc
    if fn is None:
        raise SecureUnavailableError(
            "--secure needs graphlink.secure.secure_unlink(release, k, method, seed), which this installation "
            "does not provide; run without --secure for the collaborative (non-secure) algorithms")
    out = fn(release, k, method, seed)
    report = getattr(out, "report", None)
    return getattr(out, "release", out), (report if isinstance(report, dict) else {})


def _write(release: Any, path: Path) -> None:
    """Atomically (graphlink.fileio): an interrupted run leaves the previous file, never a partial release."""
    from graphlink.fileio import write_with

    parquet = path.suffix.lower() in (".parquet", ".pq")
    write_with(path, release.to_parquet if parquet else release.to_csv)


def _reach_store() -> None:
    """Open and close the Neo4j store once, so that a server that cannot be reached stops the command before the
    protection runs (one line, exit 2)."""
    import contextlib

    from graphlink.store.neo4j import connect

    with contextlib.closing(connect()):
        pass


def _store_protected(release: Any, k: int, side: str, name: str, out: Path, multiplicity: str = "one-to-one") -> None:
    """Store the protected ``release`` in Neo4j under ``name`` with its link graph and its certificate: the exact
    audit at ``k``, recomputed on the release as written (read with the withholding ``side`` the protection
    used, and its ``multiplicity``).  The file is written first; a store that fails then says the file is there.
    O(audit)."""
    from graphlink.cli.commands.core import _engine, _store_result
    from graphlink.cli.options import EngineOpt
    from graphlink.core.trails import build_trails
    from graphlink.errors import StoreError

    engine = _engine(EngineOpt.local, None)
    trails = build_trails(release, side, multiplicity)
    audit, classes = engine.parts(release, trails).audit(k)
    if not audit.k_unlinkable:  # pragma: no cover - the protection was certified by the same audit
        raise ReleaseError("internal: the protected release did not pass the audit; nothing stored")
    try:
        _store_result(engine, release, trails, name, classes=classes, audit=audit)
    except StoreError as exc:
        raise StoreError(f"{exc} (the protected release was written to {out}; nothing was stored)") from None


def _table(summary: dict[str, Any], identified_rows: int) -> None:
    """The summary for people: records before / withheld / after per side, then the other measures; a warning in
    plain words when nothing de-identified is left disclosed."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    records = Table(title=f"unlink: {summary['method']}, k={summary['k']}: records", show_header=True)
    for name, justify in (("", "left"), ("before", "right"), ("withheld", "right"), ("after", "right")):
        records.add_column(name, justify=justify)  # type: ignore[arg-type]
    rows_before = summary["rows_disclosed"] + summary["rows_withheld"]
    elements_before = summary["disclosed"] + summary["withheld"]
    if summary.get("side") == "identified":        # keep-most withheld identified records (identified_rows: after)
        other = summary["deidentified_records_other"]
        lines = (("identified records (location, person)", rows_before, summary["rows_withheld"],
                  summary["rows_disclosed"]),
                 ("distinct identified people (withheld = at every location)", elements_before, summary["withheld"],
                  summary["disclosed"]),
                 ("de-identified records (location, record)", other, 0, other))
    else:
        lines = (("identified records (location, person)", identified_rows, 0, identified_rows),
                 ("de-identified records (location, record)", rows_before, summary["rows_withheld"],
                  summary["rows_disclosed"]),
                 ("distinct de-identified records (withheld = at every location)", elements_before,
                  summary["withheld"], summary["disclosed"]))
    for label, before, withheld, after in lines:
        records.add_row(label, f"{before:,}", f"{withheld:,}", f"{after:,}")
    con.print(records)
    t = Table(show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    rows = [
        ("certified k-unlinkable (exact audit)", "yes" if summary["certified"] else "NO"),
        ("locations disclosing", f"{summary['locations_disclosing']} of {summary['locations']}"),
        ("locations left with nothing to disclose", summary["locations_empty"]),
        ("withheld by Final-Clean", summary["final_clean_withheld"]),
        ("withheld because the audit failed", f"{summary['repair_withheld']} ({summary['repair_rounds']} rounds)")
        if summary.get("lower_bound") is None else
        ("audit rounds until certified", summary["repair_rounds"]),
        ("re-identified (true loves) before", summary["true_loves_before"]),
        ("re-identified (true loves) after", summary["true_loves_after"]),
    ]
    for a, b in rows:
        t.add_row(a, str(b))
    con.print(t)
    if rows_before and not summary["rows_disclosed"]:
        Console(stderr=True).print(
            f"[yellow]warning:[/yellow] nothing de-identified is left disclosed: all {rows_before:,} de-identified "
            "records were withheld, so the protected release holds the identified tables only (it is "
            f"{summary['k']}-unlinkable because nothing can be linked)")
    elif summary["rows_withheld"] * 2 > rows_before:
        Console(stderr=True).print(
            f"[yellow]note:[/yellow] more than half of the de-identified records were withheld "
            f"({summary['rows_withheld']:,} of {rows_before:,})")
    if summary["repair_withheld"]:
        Console(stderr=True).print(
            f"[yellow]note:[/yellow] the {summary['method']} output failed the exact audit; "
            f"{summary['repair_withheld']} more records were withheld until it passed")


def unlink_cmd(
    release_path: Path = typer.Argument(..., metavar="RELEASE", help="Release (long CSV/Parquet or folder)."),
    k: int | None = typer.Option(None, "--k", min=1, help="Protection level k: everyone keeps at least k "
                                 "candidates; with --max-risk the level the method starts at (default: 1/P "
                                 "rounded up, at least 2)."),
    max_risk: str | None = typer.Option(None, "--max-risk", metavar="P", help="Withhold until no person-record "
                                        "pair's re-identification probability exceeds P (0 < P < 1), certified "
                                        "by the pair probabilities of the written release (docs/risk.md)."),
    method: str | None = typer.Option(None, "--method", parser=_METHOD, metavar=_METHOD.metavar(),
                                      help="Protection method (default: force-dedup; keep-most with --max-risk)"),
    budget: float | None = typer.Option(None, "--budget", min=0.0, help="--max-risk: seconds the estimate may "
                                        "spend on each block too large to count exactly (default 1; raised up "
                                        "to 16 times when an estimate cannot yet rule a pair out)."),
    secure: bool = typer.Option(False, "--secure", help="Run the secure protocol (STRANON, Malin 2006): the "
                                "locations and a third party work on encrypted data."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Seed for the tie-breaking order (for simulated "
                                    "data; keep-most without it draws from the operating system, the Dedup "
                                    "methods use 0)."),
    out: Path = typer.Option(..., "--out", help="Where to write the protected release (.csv or .parquet)."),
    fmt: str = typer.Option("table", "--format", help="table | json"),
    store: str = typer.Option("none", "--store", metavar="<none|neo4j>", help="neo4j: also store the protected "
                              "release in Neo4j, with its link graph and its certificate (the exact audit at k)"),
    name: str | None = typer.Option(None, "--name", help="--store: the stored release's name (default: the "
                                    "release's file name with -protected-k<K>)"),
    multiplicity: str = typer.Option("auto", "--multiplicity",
                                     help="auto | one-to-one | one-to-many (one-to-many: keep-most only, which "
                                     "then withholds people's records)"),
    side: SideChoice = typer.Option("auto", "--side", help="keep-most: whose records may be withheld (auto: "
                                    "the side whose tables are never the larger)"),
    keep: Path | None = typer.Option(None, "--keep", help="keep-most: CSV of records that must stay disclosed "
                                     "(columns location, element)"),
    no_empty_location: bool = typer.Option(False, "--no-empty-location",
                                           help="keep-most: leave every location at least one record"),
    max_withheld: int | None = typer.Option(None, "--max-withheld-per-location", min=0,
                                            help="keep-most: withhold at most this many records per location"),
    time_budget: float | None = typer.Option(None, "--time-budget", min=0.0, metavar="SECONDS",
                                             help="keep-most: stop repairing after this many seconds and "
                                             "return the best certified result at hand (Flow-Dedup's if "
                                             "keep-most has none) [default: 60]"),
) -> None:
    """Withhold records, never alter any, until the release is k-unlinkable, certified by the exact audit
    (union of all maximum matchings).  The Dedup methods withhold whole de-identified records; keep-most
    withholds single (location, record) disclosures and prints how far it is from the least possible.  On a
    release read as one-to-many (households) keep-most withholds people's records instead, until every person
    could belong to k households and every household to k people, certified by the exact one-to-many audit.
    With --max-risk P: until no pair's re-identification probability exceeds P (docs/unlink.md)."""
    from graphlink.core.release import read_release, require_both_sides
    from graphlink.fileio import check_output
    from graphlink.protect import check_model, disclosed_of, finish, unlink

    if store not in ("none", "neo4j"):
        raise ReleaseError(f"--store must be none or neo4j, got {store!r}")
    if name is not None and store == "none":
        raise ReleaseError("--name is an option of --store neo4j (the stored release's name)")
    for flag, seconds in (("--time-budget", time_budget), ("--budget", budget)):
        if seconds is not None and not math.isfinite(seconds):
            raise ReleaseError(f"{flag} must be a number of seconds, got {seconds}")
    if max_risk is not None:
        _max_risk_cmd(release_path, max_risk, k, method, seed, out, fmt, multiplicity, budget,
                      {"--secure": secure, "--side": side.value != "auto", "--keep": keep is not None,
                       "--no-empty-location": no_empty_location,
                       "--max-withheld-per-location": max_withheld is not None, "--store": store != "none"})
        return
    if budget is not None:
        raise ReleaseError("--budget is an option of --max-risk (the time the probability estimate may take)")
    if k is None:
        raise ReleaseError("unlink needs --k (the protection level) or --max-risk (the highest probability a "
                           "re-identification may keep)")
    method = method or DEFAULT_METHOD
    keep_options = [name for name, given in (("--keep", keep is not None), ("--side", side.value != "auto"),
                                             ("--no-empty-location", no_empty_location),
                                             ("--max-withheld-per-location", max_withheld is not None),
                                             ("--time-budget", time_budget is not None)) if given]
    if keep_options and method not in KEEP_METHODS:
        raise ReleaseError(f"{keep_options[0]} is an option of --method keep-most, not of {method}")
    if secure and method in KEEP_METHODS:
        raise ReleaseError("--secure runs the Dedup methods (greedy-dedup, force-dedup); keep-most has no "
                           "secure protocol yet")
    if fmt not in FORMATS:
        raise ReleaseError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if multiplicity not in ("auto", "one-to-one", "one-to-many"):
        raise ReleaseError(f"--multiplicity must be auto, one-to-one or one-to-many, got {multiplicity!r}")
    if multiplicity == "one-to-many" and method not in KEEP_METHODS:
        raise ReleaseError(f"--multiplicity one-to-many: {method} protects one-to-one releases; use --method "
                           "keep-most, which withholds people's records on one-to-many data")
    check_output(out, inputs=[release_path])
    if store == "neo4j":
        _reach_store()                      # before the work: an unreachable server is said at once
    must_keep = _read_keep(keep) if keep is not None else []
    release = read_release(release_path)
    require_both_sides(len(release.elements("identified")), len(release.elements("deidentified")), release_path)
    report: dict = {}
    if method in KEEP_METHODS:
        from graphlink.protect.pipeline import KEEP_TIME_BUDGET, unlink_keep

        result = unlink_keep(release, k, seed, side=side.value, must_keep=must_keep,
                             no_empty_location=no_empty_location, cap=max_withheld, progress=_progress(),
                             multiplicity=multiplicity,
                             time_budget=KEEP_TIME_BUDGET if time_budget is None else time_budget)
    else:
        seed = 0 if seed is None else seed
        check_model(release, multiplicity)
        if secure:
            produced, report = _secure_disclosure(release, k, method, seed)
            result = finish(release, disclosed_of(produced), k, f"{method} (secure)", seed)
        else:
            result = unlink(release, k, method, seed, multiplicity="one-to-one")   # checked above
    if not result.certified:  # pragma: no cover - certify() either passes or raises
        raise ReleaseError("internal: the unlinked release did not pass the audit; nothing written")
    _write(result.release, out)
    summary = result.summary().as_dict()
    if store == "neo4j":
        _store_protected(result.release, k, summary["side"], name or f"{release_path.stem}-protected-k{k}", out,
                         summary["multiplicity"])
    summary["out"] = str(out)
    if summary["side"] == "identified":
        summary["deidentified_records_other"] = int((release.frame["kind"] == "deidentified").sum())
    summary["secure"] = secure
    if report:
        summary["secure_report"] = {key: v for key, v in report.items()
                                    if isinstance(v, (int, float, str, bool)) or v is None}
    summary["reidentified"] = {"before": summary["true_loves_before"], "after": summary["true_loves_after"]}
    if fmt == "json":
        typer.echo(json.dumps(summary, indent=2, default=str))
    else:
        _table(summary, int((release.frame["kind"] == "identified").sum()))
        if summary.get("lower_bound") is not None:
            typer.echo(_bound_line(summary))
        if summary.get("result_of") not in (None, summary["method"]) or summary.get("time_budget_hit"):
            typer.echo(f"returned: {summary['result_why']}")


def register(app: typer.Typer) -> None:
    app.command("unlink")(unlink_cmd)


def _max_risk_cmd(release_path: Path, max_risk: str, k: int | None, method: str | None, seed: int | None, out: Path,
                  fmt: str, multiplicity: str, budget: float | None, options: dict[str, bool]) -> None:
    """``unlink --max-risk P``: protect until no pair's probability exceeds P (graphlink.protect.maxrisk)."""
    from graphlink.core.release import read_release, require_both_sides
    from graphlink.fileio import check_output
    from graphlink.protect.maxrisk import DEFAULT_METHOD as RISK_METHOD
    from graphlink.protect.maxrisk import check_max_risk, unlink_max_risk

    p = check_max_risk(max_risk)
    given = [name for name, on in options.items() if on]
    if given:
        raise ReleaseError(f"{given[0]} is not available with --max-risk (it protects with the method's defaults)")
    if fmt not in FORMATS:
        raise ReleaseError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if multiplicity not in ("auto", "one-to-one"):
        raise ReleaseError("--multiplicity must be auto or one-to-one: protection by suppression is defined for "
                           "one-to-one data")
    check_output(out, inputs=[release_path])
    release = read_release(release_path)
    require_both_sides(len(release.elements("identified")), len(release.elements("deidentified")), release_path)
    result = unlink_max_risk(release, p, method or RISK_METHOD, seed, k=k, budget=1.0 if budget is None else budget,
                             multiplicity=multiplicity,
                             progress=_progress("max-risk"))
    _write(result.release, out)
    summary = {**result.as_dict(), "out": str(out)}
    if fmt == "json":
        typer.echo(json.dumps(summary, indent=2, default=str))
        return
    for line in _risk_lines(summary, int(result.risk.summary().people)):
        typer.echo(line)


def _risk_lines(s: dict[str, Any], people: int) -> list[str]:
    """The ``--max-risk`` result in plain words: what was withheld, the highest remaining probability and how sure
    it is, the expected correct re-identifications left."""
    side = "identified" if s["side"] == "identified" else "de-identified"
    share = 100.0 * s["rows_withheld"] / s["rows_before"] if s["rows_before"] else 0.0
    lines = [f"Withheld {s['rows_withheld']:,} of {s['rows_before']:,} {side} records (location, record) "
             f"({share:.1f} %): {s['withheld_by_method']:,} by {s['method']} at k = {s['k']}, "
             f"{s['withheld_by_rounds']:,} more where a pair was still above {s['max_risk']:g}; "
             f"{s['records_withheld']:,} of {s['records_before']:,} records are withheld at every location."]
    how = "exact" if s["highest_exact"] else f"estimated, ± {s['highest_error']:.3f}"
    lines.append(f"Highest remaining probability that a record is a given person: {s['highest']:.3f} ({how}); "
                 f"no pair's probability exceeds {s['max_risk']:g}"
                 + (" (every probability exact)." if s["exact"] else
                    f" (estimated pairs counted by their 95 % upper bound, at most {s['highest_upper']:.3f})."))
    lines.append(f"Expected people re-identified correctly by an attacker who names each person's most likely "
                 f"record: {s['expected_correct']:,.1f} of {people:,}.")
    lines.append(f"The written release is {'' if s['k_unlinkable'] else 'NOT '}{s['k']}-unlinkable by the exact "
                 "audit" + ("." if s["k_unlinkable"] else " (the rounds after the method left some person with "
                            "fewer candidates; the probability bound above still holds)."))
    return lines


def _bound_line(summary: dict[str, Any]) -> str:
    """The keep-most result in one sentence: withheld records, their share, and the lower bound."""
    before = summary["rows_disclosed"] + summary["rows_withheld"]
    share = 100.0 * summary["rows_withheld"] / before if before else 0.0
    side = "identified" if summary.get("side") == "identified" else "de-identified"
    bound = summary["lower_bound"]
    tail = ("the least possible" if summary["rows_withheld"] == bound
            else f"at least {bound:,} are needed (lower bound)")
    reading = (" (read as one-to-many: people may withhold)" if summary.get("multiplicity") == "one-to-many"
               else "")
    return (f"withheld {summary['rows_withheld']:,} of {before:,} {side} records ({share:.1f} %), {tail}; "
            f"certified {summary['k']}-unlinkable by the exact audit{reading}")


def _read_keep(path: Path) -> list[tuple[str, str]]:
    """The records that must stay disclosed: a CSV with columns location and element (one line, exit 2 if not)."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"--keep: cannot read the file as CSV ({type(exc).__name__})") from exc
    missing = [c for c in ("location", "element") if c not in frame.columns]
    if missing:
        raise ReleaseError(f"--keep expects a CSV with columns location and element; missing: {', '.join(missing)}")
    return list(zip(frame["location"], frame["element"], strict=True))


def _progress(name: str = "keep-most") -> Any:
    """Progress lines for a long run on stderr (keep-most's phases and audit rounds, the --max-risk rounds)."""
    import sys

    def say(message: str) -> None:
        print(f"{name}: {message}", file=sys.stderr, flush=True)

    return say
