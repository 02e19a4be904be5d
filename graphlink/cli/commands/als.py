"""``graphlink qi links`` and ``graphlink qi fraud``: attribute linkage sets on their own (TR02 §3, §7).

The ALS-constrained link graph itself is ``graphlink reidentify|audit RELEASE --qi-links ALS.yaml``
(:mod:`graphlink.cli.commands.core`); these two commands are the ALS's other uses.  They are sub-commands of
``graphlink qi``, which :func:`graphlink.cli.commands.qi.register` builds.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from graphlink.display import print_frame, terminal_stream, terminal_text

if TYPE_CHECKING:  # each command imports the library when it runs: --help stays fast (tests/cli/test_cold_start.py)
    import pandas as pd

Fmt = StrEnum("Fmt", {"table": "table", "json": "json", "csv": "csv"})  # type: ignore[misc]
ReleaseArg = Annotated[Path, typer.Argument(help="Release: long-format CSV/Parquet or a folder", show_default=False)]
FmtOpt = Annotated[Fmt, typer.Option("--format", help="Output format")]


def _emit(frame: pd.DataFrame, fmt: Fmt, title: str, summary: dict, lines: list[str]) -> None:
    """The rows as a table (``lines``: the summary in words under it), CSV, or JSON with every summary field."""
    if fmt is Fmt.csv:
        frame.to_csv(terminal_stream(sys.stdout), index=False)
    elif fmt is Fmt.json:
        typer.echo(json.dumps({**summary, "rows": frame.to_dict(orient="records")}, indent=2, default=str))
    else:
        print_frame(frame, title)
        for line in lines:
            typer.echo(terminal_text(line))


def _truth_line(summary: dict) -> list[str]:
    if summary.get("correct") is None:
        return []
    return [f"Against the truth: {summary['correct']:,} correct, {summary['wrong']:,} wrong (precision "
            f"{100 * summary['precision']:.1f} %, recall {100 * summary['recall']:.1f} % of "
            f"{summary['truth_pairs']:,} true pairs)."]


def links_cmd(release: ReleaseArg,
              als_file: Annotated[Path, typer.Option("--als", help="Attribute linkage set (YAML)", show_default=False)],
              truth: Annotated[Path | None, typer.Option("--truth", help="Truth CSV (adds correct/wrong)")] = None,
              fmt: FmtOpt = Fmt.table) -> None:
    """ALS-only re-identification (TR02 §3): pairs whose declared relations agree with each other and with no
    other record on either side (|X| = |Y| = 1). No trails are used; compare with reidentify --qi-links."""
    import numpy as np

    from graphlink.core.release import read_release, read_truth
    from graphlink.qi.als import als_only, read_als, release_blocks

    als = read_als(als_file)
    rel = read_release(release, truth=read_truth(truth) if truth else None)
    id_keys = np.asarray(rel.elements("identified"), dtype=object)
    de_keys = np.asarray(rel.elements("deidentified"), dtype=object)
    pairs = als_only(release_blocks(als, id_keys, de_keys, release), id_keys, de_keys)
    summary: dict = {"reidentified": len(pairs), "identified": len(id_keys), "deidentified": len(de_keys),
                     "relations": [r.name for r in als.relations]}
    if rel.truth is not None:
        from graphlink.analysis.reidit import Reidentification, evaluate

        summary.update(evaluate(Reidentification("als-only", pairs, {}), rel.truth).as_dict())
    lines = [f"Attributes alone: {len(pairs):,} of {len(id_keys):,} identified people re-identified "
             f"(relations: {'; '.join(map(str, summary.get('relations', ()))) or 'none'})."] + _truth_line(summary)
    _emit(pairs, fmt, f"ALS-only: {len(pairs)} pair(s)", summary, lines)


def fraud_cmd(release: ReleaseArg,
              related: Annotated[str | None, typer.Option(
                  "--related", help="Identified attribute declaring a relation between card holders (a family, an "
                                    "account); cards that share it are explained, not flagged")] = None,
              als_file: Annotated[Path | None, typer.Option(
                  "--qi-links", help="Attribute linkage set (YAML) constraining the links; also where the "
                                     "attributes live when it names attribute files")] = None,
              fmt: FmtOpt = Fmt.table) -> None:
    """Fraud mode (TR02 §7): cards (identified, reserved: used only when buying) and faces from store cameras
    (de-identified, complete) read one-to-many; a face that REIDIT-M links with certainty to several cards whose
    holders share no declared relation is flagged (possible identity theft)."""
    from graphlink.analysis.reidit import reidit_m
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails
    from graphlink.errors import ReleaseError
    from graphlink.qi.als import LinkageSet, element_attributes, read_als, release_blocks

    als = read_als(als_file) if als_file else None
    rel = read_release(release)
    tr = build_trails(rel, "identified", "one-to-many")
    blocks = release_blocks(als, tr.identified.keys, tr.deidentified.keys, release) if als else None
    graph = build_linkgraph(tr, blocks=blocks)
    pairs = reidit_m(graph).pairs
    rel_values = None
    if related:
        ident = element_attributes(als or LinkageSet(()), release)["identified"]
        if related not in ident.columns:
            raise ReleaseError(f"no identified attribute {related!r} (identified attributes: "
                               f"{', '.join(map(str, ident.columns)) or 'none'})", column=related)
        rel_values = ident[related]
    from graphlink.qi.als import fraud_flags

    flags = fraud_flags(pairs, rel_values)
    summary = {"faces_with_several_cards": len(flags), "flagged": int(flags["flagged"].sum()) if len(flags) else 0,
               "certain_links": len(pairs)}
    lines = [f"{summary['flagged']:,} of {len(flags):,} face(s) certainly linked to several cards are flagged "
             f"(their cards' holders are not related); {len(pairs):,} certain links in all."]
    _emit(flags, fmt, "Faces certainly linked to several cards", summary, lines)
