"""Core CLI commands: ``trails``, ``reidentify``, ``audit`` (thin: parse, call the library, format)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from graphlink.cli.choices import MethodChoice
from graphlink.cli.options import (
    DeidKey,
    EngineO,
    EngineOpt,
    ExplainO,
    Fmt,
    IdKey,
    MasterO,
    Mult,
    MultO,
    MultOpt,
    QiLinks,
    ReleaseArg,
    ReservedO,
    ReservedOpt,
    StoreOpt,
)
from graphlink.display import flush_notes, markup_text, note, print_frame, print_rows, terminal_stream
from graphlink.errors import ModelAssumptionError
from graphlink.fileio import atomic_path, check_output

if TYPE_CHECKING:  # each command imports the library when it runs: --help stays fast (tests/cli/test_cold_start.py)
    from graphlink.analysis.results import ReidentifySummary
    from graphlink.core.release import Release
    from graphlink.core.trails import Trails
    from graphlink.engines.protocol import Engine
    from graphlink.io.trails import TrailOverview

err = Console(stderr=True)


class TrailsFmt(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"


class AuditFmt(StrEnum):
    table = "table"
    json = "json"


#: ``--method`` of reidentify: the registry's re-identification methods (graphlink/registry.py)
_METHOD = MethodChoice("reidentify")


@contextlib.contextmanager
def step(text: str) -> Iterator[None]:
    """A spinner on stderr while a possibly long step runs (silent when stderr is not a terminal)."""
    if err.is_terminal:
        with err.status(text):
            yield
    else:
        yield


def load(release: Path, id_key: str | None, deid_key: str | None, truth: Path | None = None) -> Release:
    from graphlink.core.release import read_release, read_truth

    split = (lambda s: [c.strip() for c in s.split(",") if c.strip()] if s else None)  # noqa: E731
    with step(f"reading {release}"):
        return read_release(release, id_key=split(id_key), deid_key=split(deid_key),
                            truth=read_truth(truth) if truth else None)


def _print_summary(summary: TrailOverview, name: str) -> None:
    """The trails summary (:class:`graphlink.io.trails.TrailOverview`) as a few small rich tables (never one row
    per element).  O(locations + top + preview)."""
    con = Console()
    sizes = summary.sizes
    shown = sizes if len(sizes) <= 40 else sizes[:20] + sizes[-20:]
    title = f"Per-location sizes of {name} ({len(sizes)} locations" + ("" if len(sizes) <= 40 else ", first and "
                                                                      "last 20") + ")"
    flush_notes()
    print_rows(["location", "identified", "deidentified"], [(c.location, c.identified, c.deidentified) for c in shown],
               title)
    for side_name in ("identified", "deidentified"):
        side = summary.side(side_name)
        con.print(f"[bold]{side_name}[/bold]: {side.elements:,} elements, {side.distinct:,} distinct trails")
        print_rows(["trail", "count"], [(c.trail, c.count) for c in side.common], f"Most common {side_name} trails")
        print_rows(["element", "trail"], [(r.element, r.trail) for r in side.preview], f"First {side_name} rows")
    con.print("Full matrices: [bold]--format csv|parquet --out FILE[/bold]")


def model_note(tr: Trails, explain: bool = False) -> None:
    """Say on stderr how the release is read (the model is decided, never silently guessed): one plain sentence
    (:func:`graphlink.cli.words.model_line`); with ``explain`` also the thesis notation, how it was decided and
    why.  The reason may quote element keys: they are escaped (:func:`graphlink.display.markup_text`).  The
    lines are held until the command succeeds or prints its result (:func:`graphlink.display.note`), so a
    refusal stays one line."""
    from graphlink.cli import words

    note("[bold]Model:[/bold] " + markup_text(words.model_reading(tr.model)))
    if explain:
        note(markup_text(words.model_details(tr.model)))


def _print_result_summary(err: Console, summary: ReidentifySummary) -> None:
    """The result's facts in plain lines (cli/words.py), each escaped for the console."""
    from graphlink.cli import words

    for line in words.summary_lines(summary):
        err.print(markup_text(line))


def model_dict(tr: Trails) -> dict:
    return {"multiplicity": tr.multiplicity, "reserved": tr.reserved, "decided_by": tr.decided_by,
            "reason": tr.reason}


def qi_graph(tr: Trails, qi_links: Path, release: Path):
    """The ALS-constrained link graph (:func:`graphlink.qi.als.release_blocks`), with a note on stderr."""
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.qi.als import read_als, release_blocks

    als = read_als(qi_links)
    with step("building the ALS-constrained link graph"):
        graph = build_linkgraph(tr, blocks=release_blocks(als, tr.identified.keys, tr.deidentified.keys, release))
    note(f"[bold]qi-links:[/bold] {len(als.relations)} relation(s) "
         f"({markup_text(', '.join(r.name for r in als.relations))}) constrain the link graph")
    return graph


@contextlib.contextmanager
def _progress(title: str) -> Iterator:
    """A progress bar on stderr (``update(fraction, message)``) while a long write runs; silent when stderr is
    not a terminal."""
    if not err.is_terminal:
        yield None
        return
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(escape(title)), BarColumn(), TaskProgressColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=err, transient=True) as prog:
        task = prog.add_task("", total=1.0)
        yield lambda fraction, message: prog.update(task, completed=fraction, description=escape(message))


def _split(key: str | None) -> list[str] | None:
    return [c.strip() for c in key.split(",") if c.strip()] if key else None


def _engine(name: EngineOpt, master: str | None) -> Engine:
    from graphlink import engines

    return engines.get(name.value, master=master)


def _trails(engine: Engine, release: Path, id_key: str | None, deid_key: str | None, reserved: ReservedOpt,
            multiplicity: MultOpt, truth: Path | None = None, store: bool = False):
    """(release, trails) from the engine (:meth:`graphlink.engines.protocol.Engine.trails`)."""
    with step(f"reading {release} and building trails{engine.where}"):
        return engine.trails(release, id_key=_split(id_key), deid_key=_split(deid_key), reserved=reserved.value,
                             multiplicity=multiplicity.value, truth=truth, store=store)


def _check_out(out: str, inputs: list[Path | None]) -> None:
    """``--out`` checked by its kind of name, the same for every engine (:func:`graphlink.io.pairs.check_pairs_out`),
    before any engine starts."""
    from graphlink.io.pairs import check_pairs_out

    try:
        check_pairs_out(out, inputs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--out") from None


def _certain_or_refuse(summary: ReidentifySummary) -> None:
    """No pair is certain when the model's assumptions fail: say why (exit 2) instead of printing guesses."""
    if summary.model_ok is False:
        raise ModelAssumptionError(str(summary.diagnostic or "the data breaks the model"),
                                   diagnostic=summary.diagnostic)


def _both_sides(tr, release: Path) -> None:
    """Refuse a release with one side empty (:func:`graphlink.core.release.require_both_sides`): its audit would
    claim k-unlinkability of records that do not exist."""
    from graphlink.core.release import require_both_sides

    sides = (getattr(tr, "identified", None), getattr(tr, "deidentified", None))
    if all(hasattr(side, "__len__") for side in sides):   # an engine's own trail type may not count its sides
        require_both_sides(len(sides[0]), len(sides[1]), release)


def _local_only(qi_links: Path | None, engine: Engine) -> None:
    if qi_links is not None and not engine.constrains_links:
        raise typer.BadParameter(f"--qi-links runs on the local engine only (drop --engine {engine.name})",
                                 param_hint="--qi-links")


def _store_result(engine: Engine, rel, tr, name: str | None, **result) -> None:
    """Write one result to Neo4j through the engine and say where (and how, when the engine chose a way)."""
    with _progress("writing to Neo4j") as update:
        stored = engine.store(rel, tr, name or rel.name, progress=update, **result)
    if stored.method is None:
        note(f"stored as run {markup_text(stored.run)} in {markup_text(stored.uri)}")
        return
    how = "one bulk import with the release" if stored.method == "bulk-import" else "batched transactions"
    how = f"{how} ({stored.detail['why']}), {stored.detail['seconds']:.1f} s"
    note(f"stored as run {markup_text(stored.run)} in {markup_text(stored.uri)} by {markup_text(how)}")


def trails_cmd(release: ReleaseArg, reserved: ReservedO = ReservedOpt.auto, multiplicity: MultO = MultOpt.auto,
               fmt: Annotated[TrailsFmt, typer.Option("--format", help="table/json: a summary; csv/parquet: the "
                                                      "full matrices (csv to stdout unless --out)")]
               = TrailsFmt.table,
               out: Annotated[Path | None, typer.Option("--out", help="Write the full matrices here")] = None,
               top: Annotated[int, typer.Option("--top", min=1, help="Most common trails shown")] = 10,
               id_key: IdKey = None, deid_key: DeidKey = None, engine: EngineO = EngineOpt.local,
               spark_master: MasterO = None, explain: ExplainO = False) -> None:
    """Build every element's trail: where it was seen, not seen, or may have been withheld.

    The table and json formats summarise them (sizes, model, distinct and most common trails, a preview);
    csv and parquet write the full matrices, streamed in chunks (FillTrails, Malin 2006, Alg. 1)."""
    from graphlink.io import trails as trailsio

    if fmt is TrailsFmt.parquet and out is None:
        raise typer.BadParameter("parquet output needs --out FILE", param_hint="--out")
    if out is not None:
        check_output(out, inputs=[release])
    eng = _engine(engine, spark_master)
    rel, tr = _trails(eng, release, id_key, deid_key, reserved, multiplicity)
    model_note(tr, explain)
    if fmt in (TrailsFmt.csv, TrailsFmt.parquet):
        tr = tr.matrices()                      # Spark's trails collect theirs; the local engine's are here
        with step("writing the trail matrices"):
            if fmt is TrailsFmt.parquet:
                with atomic_path(out) as tmp:
                    rows = trailsio.write_parquet(tr, tmp)
            elif out is not None:
                with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
                    rows = trailsio.write_csv(tr, fh)
            else:
                rows = trailsio.write_csv(tr, terminal_stream(sys.stdout))
        if out is not None:
            flush_notes()
            err.print(f"wrote {rows:,} trails ({len(tr.locations)} locations) to {markup_text(out)}")
        return
    summary = trailsio.overview(tr, top=top)    # each kind of trails gives its own (Spark's from its classes)
    if fmt is TrailsFmt.json:
        typer.echo(json.dumps({"reserved": tr.reserved, "reason": tr.reason, **summary.to_dict()}, indent=2,
                              default=str))
        return
    _print_summary(summary, rel.name)


def reidentify_cmd(release: ReleaseArg,
                   method: Annotated[str, typer.Option("--method", parser=_METHOD, metavar=_METHOD.metavar(),
                                                       help="REIDIT algorithm or true loves")],
                   k: Annotated[int | None, typer.Option("--k", min=1, help="k for incomplete-k")] = None,
                   reserved: ReservedO = ReservedOpt.auto, multiplicity: MultO = MultOpt.auto,
                   truth: Annotated[Path | None, typer.Option("--truth", help="Truth CSV")] = None,
                   explain: Annotated[bool, typer.Option("--explain", help="Always compute full reasons; also "
                                                         "say how the data model was decided")] = False,
                   fmt: Annotated[Fmt, typer.Option("--format")] = Fmt.table,
                   store: Annotated[StoreOpt, typer.Option("--store", help="Write results to Neo4j")] = StoreOpt.none,
                   name: Annotated[str | None, typer.Option("--name", help="Release name in the store")] = None,
                   id_key: IdKey = None, deid_key: DeidKey = None, qi_links: QiLinks = None,
                   engine: EngineO = EngineOpt.local, spark_master: MasterO = None,
                   out: Annotated[str | None, typer.Option(
                       "--out", help="Write the pairs here instead of to stdout: a CSV file (Parquet if the name "
                       "ends in .parquet); a name ending in / is a new folder of parts. With --engine spark a "
                       ".csv or .parquet name is the same one file, joined from the parts Spark writes (REIDIT-C's, "
                       "and true loves' on the component split, straight from the executors, never collected); "
                       "any other name, or a URI, is a folder of parts")]
                       = None) -> None:
    """Re-identify elements from their trails; every pair carries its reason."""
    from graphlink import registry
    from graphlink.analysis.reidit import check_method, reidentify
    from graphlink.cli.words import say

    m = method
    try:
        spec = registry.validate(m, "reidentify", k=k)
    except registry.MethodError as exc:
        raise typer.BadParameter(say(exc), param_hint="--k") from None
    if out is not None and fmt is Fmt.json:
        raise typer.BadParameter("--out writes the pairs as CSV or Parquet (by its name); drop --format json",
                                 param_hint="--out")
    eng = _engine(engine, spark_master)
    if out is not None:
        _check_out(out, [release, truth, qi_links])
    if spec.input == "trails" and qi_links is not None:
        others = ", ".join(s.name for s in registry.specs("reidentify") if s.input != "trails")
        raise typer.BadParameter(f"{spec.label} matches whole trails only; with --qi-links use --method "
                                 f"{others}", param_hint="--qi-links")
    _local_only(qi_links, eng)
    rel, tr = _trails(eng, release, id_key, deid_key, reserved, multiplicity, truth, store is StoreOpt.neo4j)
    check_method(tr, m)             # a refusal is one line, before the model note
    model_note(tr, explain)
    graph = None if qi_links is None else qi_graph(tr, qi_links, release)
    parts = eng.parts(rel, tr, graph=graph)
    write = parts.writer(spec) if out is not None and store is StoreOpt.none and truth is None else None
    if write is not None:
        with step(f"running {m}; the pairs are written where they are computed"):
            summary = write(out, explain=explain)
        _certain_or_refuse(summary)             # nothing was written when no pair is certain
        flush_notes()
        err.print(f"wrote {summary.reidentified:,} pair(s) to {markup_text(out)} (from the Spark "
                  "executors)")
        return
    with step(f"running {m}"):
        result = reidentify(parts, m, k=k, explain=explain or None)
    _certain_or_refuse(result.summary)
    if store is StoreOpt.neo4j:
        _store_result(eng, rel, tr, name, reidentification=result)
    cols = ["identified", "deidentified"] + (["reason"] if explain else [])
    if out is not None:
        with step(f"writing the pairs to {out}"):
            eng.write_pairs(tr, result, cols, out)
        flush_notes()                       # the last step that can fail is done: the notes, then the result
        err.print(f"wrote {len(result):,} pair(s) to {markup_text(out)}")
        _print_result_summary(err, result.summary)
    elif fmt is Fmt.csv:
        from graphlink.io.pairs import write_pairs_csv

        flush_notes()
        write_pairs_csv(result, cols, terminal_stream(sys.stdout))
        if truth is not None:               # the pairs on stdout, the comparison with the truth on stderr
            sys.stdout.flush()
            _print_result_summary(err, result.summary)
    elif fmt is Fmt.json:
        flush_notes()
        typer.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        flush_notes()
        print_frame(result.pairs, title=f"{m}: {len(result.pairs)} pair(s)")
        _print_result_summary(err, result.summary)


def audit_cmd(release: ReleaseArg, k: Annotated[int, typer.Option("--k", min=1, help="Protection level")],
              reserved: ReservedO = ReservedOpt.auto, multiplicity: MultO = MultOpt.auto,
              fmt: Annotated[AuditFmt, typer.Option("--format")] = AuditFmt.table,
              store: Annotated[StoreOpt, typer.Option("--store")] = StoreOpt.none,
              name: Annotated[str | None, typer.Option("--name")] = None,
              id_key: IdKey = None, deid_key: DeidKey = None, qi_links: QiLinks = None,
              engine: EngineO = EngineOpt.local, spark_master: MasterO = None, explain: ExplainO = False) -> None:
    """Exact check that every person and every record has at least k candidates (k-unlinkability).

    Malin 2006, Definition 19, decided through the union of all maximum matchings (docs/algorithms.md)."""
    eng = _engine(engine, spark_master)
    _local_only(qi_links, eng)
    rel, tr = _trails(eng, release, id_key, deid_key, reserved, multiplicity, store=store is StoreOpt.neo4j)
    _both_sides(tr, release)
    model_note(tr, explain)
    graph = None if qi_links is None else qi_graph(tr, qi_links, release)
    with step("classifying edges (maximum matching + SCC)"):
        result, classes = eng.parts(rel, tr, graph=graph).audit(k)     # the audit runs on the parts
    if store is StoreOpt.neo4j:
        _store_result(eng, rel, tr, name, classes=classes, audit=result)
    flush_notes()                           # nothing after this can fail: the notes, then the result
    if fmt is AuditFmt.json:
        typer.echo(json.dumps({**result.to_dict(), "model": model_dict(tr)}, indent=2))
        return
    short = len(result.violations)
    if result.k_unlinkable:
        verdict = f"[green]k-unlinkable[/green]: every person and every record has at least {k} candidates"
    else:
        who = "person or record has" if short == 1 else "people or records have"
        verdict = f"[red]NOT k-unlinkable[/red]: {short:,} {who} fewer than {k} candidates"
    Console().print(f"k = {k}: {verdict}.\nCertain re-identifications (true loves): {result.true_loves:,}; "
                    f"largest one-to-one assignment (maximum matching): {result.maximum_matching_size:,} pairs.")
    if not result.hall_ok:
        err.print("[yellow]warning: the data do not fit the model (no assignment covers every element), so the "
                  "audit describes a model that does not hold. Unmatched: "
                  + markup_text(", ".join(map(str, result.unmatched[:20]))))
    if len(result.violations):
        print_frame(result.violations.head(200), title="Violations (first 200)")


def advise_cmd(multiplicity: Annotated[Mult | None, typer.Option(
                   "--multiplicity", help="Data multiplicity (default: detected from --release, else one-to-one)")]
               = None,
               reserved: ReservedO = ReservedOpt.auto,
               release: Annotated[Path | None, typer.Option("--release", help="Detect the tactic from it")] = None,
               ) -> None:
    """Which re-identification methods apply to a multiplicity and disclosure tactic, and which finds the most."""
    from graphlink.analysis.advisor import advise

    tactic, mult = reserved.value, multiplicity.value if multiplicity else None
    if tactic == "auto" or mult is None:
        if release is None:
            if tactic == "auto":
                raise typer.BadParameter("give --reserved or --release to detect it", param_hint="--reserved")
        else:
            from graphlink.core.trails import build_trails

            tr = build_trails(load(release, None, None), tactic)
            model_note(tr)
            tactic, mult = tr.reserved, mult or tr.multiplicity
    a = advise(mult or "one-to-one", tactic)
    typer.echo(f"recommended: {', '.join(a.methods)}" + (f" (dominant: {a.dominant})" if a.dominant else ""))
    typer.echo(a.note)


def register(app: typer.Typer) -> None:
    app.command("advise")(advise_cmd)
    app.command("trails")(trails_cmd)
    app.command("reidentify")(reidentify_cmd)
    app.command("audit")(audit_cmd)
