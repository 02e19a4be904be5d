"""``graphlink report`` — the release report as one self-contained HTML file (docs/report.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graphlink.cli.commands.core import err, load, step
from graphlink.cli.options import DeidKey, IdKey, MultO, MultOpt, QiLinks, ReleaseArg, ReservedO, ReservedOpt
from graphlink.display import markup_text


def report_cmd(release: ReleaseArg,
               out: Annotated[Path, typer.Option(
                   "--out", help="Where to write the report: .html, or .pdf for a PDF")],
               k: Annotated[int, typer.Option("--k", min=1, help="Protection level the verdict and the "
                                              "protection options are for")] = 2,
               reserved: ReservedO = ReservedOpt.auto, multiplicity: MultO = MultOpt.auto,
               seed: Annotated[int, typer.Option("--seed", min=0, help="Tie-breaking seed of the protection "
                                                 "methods")] = 0,
               exposure: Annotated[bool, typer.Option(
                   "--exposure/--no-exposure", help="Leave-one-location-out exposure per location")] = True,
               protection: Annotated[bool, typer.Option(
                   "--protection/--no-protection", help="Compare the protection methods")] = True,
               qi_links: QiLinks = None, id_key: IdKey = None, deid_key: DeidKey = None,
               title: Annotated[str | None, typer.Option(
                   "--title", help="The report's title (default: 'Re-identification risk report: NAME')")] = None,
               purpose: Annotated[str | None, typer.Option(
                   "--purpose", help="What the release is for, in a sentence, for the first page")] = None,
               prepared_by: Annotated[str | None, typer.Option(
                   "--prepared-by", help="Who prepared the report")] = None,
               recipient: Annotated[list[str] | None, typer.Option(
                   "--recipient", help="Who receives which tables, e.g. 'Genome consortium: the DNA tables' "
                   "(repeat for each)")] = None) -> None:
    """Write a re-identification risk report a privacy officer can forward: one HTML file with no external
    assets (opens offline, prints to PDF), or a PDF when --out ends in .pdf (printed by headless Chromium)."""
    from graphlink.core.release import require_both_sides
    from graphlink.fileio import check_output, write_text
    from graphlink.io.report_html import render_html
    from graphlink.report import build_report

    pdf = out.suffix.lower() == ".pdf"
    if pdf:
        from graphlink.io.report_pdf import find_chromium

        if find_chromium() is None:     # before the work, not after it
            from graphlink.io.report_pdf import write_pdf

            write_pdf("", out)          # raises the one-line error naming what is missing

    check_output(out, inputs=[release, qi_links])
    rel = load(release, id_key, deid_key)
    require_both_sides(len(rel.elements("identified")), len(rel.elements("deidentified")), release)
    options = {"k": k, "reserved": reserved.value, "multiplicity": multiplicity.value, "seed": seed,
               "exposure": exposure, "protection": protection}
    if id_key:
        options["id_key"] = id_key
    if deid_key:
        options["deid_key"] = deid_key
    if qi_links is not None:
        options["qi_links"] = str(qi_links)
    with step("computing the report"):
        report = build_report(rel, k, reserved=reserved.value, multiplicity=multiplicity.value, seed=seed,
                              source=release, options=options, exposure=exposure, protection=protection,
                              qi_links=qi_links, title=title, purpose=purpose, prepared_by=prepared_by,
                              recipients=recipient or ())
    if pdf:
        from graphlink.io.report_pdf import write_pdf

        with step("printing the PDF"):
            write_pdf(render_html(report), out)
    else:
        write_text(out, render_html(report))
    err.print(f"wrote the report to {markup_text(out)}: {report.certain:,} of {report.people:,} people "
              f"certainly re-identifiable, {report.below_k:,} with fewer than {k} candidates.")
    err.print(markup_text(report.verdict))


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
