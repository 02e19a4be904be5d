"""The ``risk`` command: how likely each re-identification is (thin: parse, call the library, format)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from graphlink.cli.commands.core import _progress, load, model_dict, model_note, step
from graphlink.cli.options import (
    DeidKey,
    ExplainO,
    Fmt,
    IdKey,
    MultO,
    MultOpt,
    ReleaseArg,
    ReservedO,
    ReservedOpt,
    StoreOpt,
)
from graphlink.display import flush_notes, markup_text, note, print_rows, terminal_stream


class ReadingOpt(StrEnum):
    uniform = "uniform"
    weighted = "weighted"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def risk_cmd(release: ReleaseArg,
             fmt: Annotated[Fmt, typer.Option("--format", help="table: each person's most likely record; "
                                                  "csv: one row per link edge; json: the release's figures")]
             = Fmt.table,
             threshold: Annotated[float, typer.Option("--threshold", min=0.0, max=1.0,
                                                      help="Count the people whose most likely record has at "
                                                           "least this probability")] = 0.5,
             truth: Annotated[Path | None, typer.Option("--truth", help="Truth CSV: how many most likely "
                                                        "records are right")] = None,
             reading: Annotated[ReadingOpt, typer.Option(
                 "--reading", help="uniform: every consistent assignment equally likely; weighted: by the "
                 "likelihood of the withholding it implies (the same numbers where the model holds)")]
             = ReadingOpt.uniform,
             top: Annotated[int, typer.Option("--top", min=0, help="People shown in the table, most at risk "
                                              "first (0: everyone)")] = 50,
             budget: Annotated[float, typer.Option("--budget", min=0.0, help="Seconds the estimate may spend "
                                                   "on each block too large to count exactly")] = 1.0,
             sweeps: Annotated[int | None, typer.Option(
                 "--sweeps", min=20, help="Run the estimate for this many sweeps (at least 50 per row of a "
                 "block) instead of a time budget: the same numbers on every machine for a seed")] = None,
             seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the estimate")] = 0,
             store: Annotated[StoreOpt, typer.Option("--store", help="Write the link graph with each link's "
                                                  "probability to Neo4j")] = StoreOpt.none,
             name: Annotated[str | None, typer.Option("--name", help="Release name in the store")] = None,
             reserved: ReservedO = ReservedOpt.auto, multiplicity: MultO = MultOpt.auto,
             id_key: IdKey = None, deid_key: DeidKey = None, explain: ExplainO = False) -> None:
    """How likely each re-identification is: a pair's share of the assignments consistent with the release.

    Exact where a block of interchangeable people is small enough, estimated (with a 95 % error bound)
    beyond; docs/risk.md."""
    from graphlink.analysis.risk import one_to_many_refusal, pair_probabilities
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_truth
    from graphlink.core.trails import build_trails
    from graphlink.errors import ModelAssumptionError

    rel = load(release, id_key, deid_key)
    truth_frame = read_truth(truth) if truth is not None else None
    with step("building trails"):
        tr = build_trails(rel, reserved.value, multiplicity.value)
    if tr.one_to_many:
        raise ModelAssumptionError(diagnostic=one_to_many_refusal())
    model_note(tr, explain)
    with step("computing pair probabilities"):
        chain = {"budget": budget} if sweeps is None else {"budget": None, "sweeps": sweeps}
        risk = pair_probabilities(build_linkgraph(tr), reading=reading.value, seed=seed, **chain)
        summary = risk.summary(threshold, truth_frame)
    if store is StoreOpt.neo4j:
        _store(rel, name or rel.name, risk)
    flush_notes()
    if fmt is Fmt.csv:
        from graphlink.core.tabular import write_csv

        write_csv(risk.pairs(), terminal_stream(sys.stdout))
        return
    if fmt is Fmt.json:
        typer.echo(json.dumps({**summary.as_dict(), "model": model_dict(tr)}, indent=2, default=str))
        return
    people = risk.people().sort_values(["probability", "identified"], ascending=[False, True], kind="stable")
    shown = people if top == 0 else people.head(top)
    # no possible record: None or NaN (NaN is the one value unequal to itself)
    rows = [(r.identified, r.deidentified if r.deidentified is not None and r.deidentified == r.deidentified
             else "(none possible)",
             f"{r.probability:.3f}", "exact" if r.exact else f"± {r.error:.3f}",
             str(r.tied) if r.tied > 1 else "") for r in shown.itertuples(index=False)]
    title = (f"Most likely record per person ({len(shown):,} of {len(people):,}, most at risk first)"
             if len(shown) < len(people) else "Most likely record per person")
    print_rows(["person", "most likely record", "probability", "exact", "tied records"], rows, title,
               right=(2,))
    con = Console()
    for line in _lines(summary):
        con.print(markup_text(line))


def register(app: typer.Typer) -> None:
    app.command("risk")(risk_cmd)


def _store(rel, name: str, risk) -> None:
    """The release and its link graph with the pair probabilities on every LINK, at bulk speed
    (:func:`graphlink.store.writeback.write_results`); says where and how."""
    import contextlib

    from graphlink.store.neo4j import connect
    from graphlink.store.writeback import write_results

    with _progress("writing to Neo4j") as update, contextlib.closing(connect()) as st:
        out = write_results(st, rel, name, classes=risk.classes, risk=risk, progress=update)
    how = "one bulk import with the release" if out.method == "bulk-import" else "batched transactions"
    note(f"stored the link graph with its probabilities as run {markup_text(out.runs['link_graph'])} in "
         f"{markup_text(st.uri)} by {markup_text(how)} ({markup_text(out.why)}), {out.seconds:.1f} s")


def _lines(s) -> list[str]:
    """The release's figures in plain words."""
    # where the chains estimate, the figure is cross-fitted and carries its own 95 % bound (docs/risk.md#figures)
    err = f" ± {s.expected_correct_best_error:,.1f}" if s.expected_correct_best_error > 0 else ""
    out = [f"Expected people re-identified correctly: {s.expected_correct_best:,.1f}{err} of {s.people:,} when an "
           f"attacker names each person's most likely record; {s.expected_correct_random:,.1f} when they draw one "
           "consistent assignment at random.",
           f"People whose most likely record has at least {_pct(s.threshold)} probability: {s.above_threshold:,}; "
           f"highest {_pct(s.highest)}, average {_pct(s.average)}.",
           f"Counting every candidate of a record as equally likely (the thesis's reading) would say "
           f"{s.thesis_expected_correct_best:,.1f} expected correct and {s.thesis_above_threshold:,} people at or "
           f"above the threshold; its guesses are worth {s.thesis_guess_expected_correct:,.1f}."]
    if s.exact:
        out.append(f"Every probability is exact ({s.blocks_exact:,} independent blocks).")
    else:
        out.append(f"{s.blocks_estimated:,} block(s) too large to count exactly (largest: {s.largest_estimated_block:,}"
                   f" people and records) were estimated; the largest 95 % error bound is ± {s.max_error:.3f} (see "
                   f"--budget). The other {s.blocks_exact:,} blocks are exact.")
    if not s.model_ok:
        out.append("Warning: no assignment covers every person and record, so the release does not fit the model "
                   "and these figures describe a model that does not hold.")
    if s.correct_best is not None:
        out.append(f"Against the truth: {s.correct_best:,} of {s.truth_people:,} most likely records are right "
                   f"(the thesis's reading: {s.thesis_correct_best:,}).")
    return out
