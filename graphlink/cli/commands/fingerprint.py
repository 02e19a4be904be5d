"""``graphlink fingerprint …`` — k-anonymity fingerprinting (Schrittwieser et al.; see docs/fingerprint.md).

    graphlink fingerprint plan TABLE --qi A,B,C --k K --recipients N|NAMES.csv [--hierarchies DIR] --out PLAN.json
              [--loss precision|samarati|dm-star|entropy] [--l-min X] [--l-max Y]
              [--discretise auto|exact|round:D|width:W] [--max-suppression F] [--seed S]
              [--store neo4j [--name NAME]] [--format table|json|csv]
    graphlink fingerprint release PLAN.json TABLE --recipient NAME --out OUT.csv [--drop COLS] [--keep-order]
    graphlink fingerprint attribute PLAN.json LEAK.csv [--format table|json] [--store neo4j [--name NAME]]
    graphlink fingerprint load PLAN.json [--name NAME]                                        (Neo4j)

Bad input (a leak row that fits no node of the plan, a plan for another table, an unknown column or recipient,
too few generalizations for the recipients) exits 2 with one line.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from graphlink.catalog import FINGERPRINT_LOSSES as LOSSES
from graphlink.cli.commands.qi import (
    HierOpt,
    QiOpt,
    TableArg,
    emit_json,
    load_hierarchies,
    print_frame,
    print_pairs,
    split,
    status,
)
from graphlink.cli.options import group
from graphlink.display import terminal_text
from graphlink.errors import ReleaseError

if TYPE_CHECKING:  # each command imports the library when it runs: --help stays fast (tests/cli/test_cold_start.py)
    import pandas as pd

    from graphlink.fingerprint.attribute import Attribution
    from graphlink.fingerprint.plan import Plan


Loss = StrEnum("Loss", {x.replace("-", "_"): x for x in LOSSES})   # type: ignore[misc]
Fmt = StrEnum("Fmt", {"table": "table", "json": "json", "csv": "csv"})  # type: ignore[misc]
FmtOpt = Annotated[Fmt, typer.Option("--format", help="Output format (csv: plan's pattern-list only)")]
Store = StrEnum("Store", {"neo4j": "neo4j"})                        # type: ignore[misc]
PlanArg = Annotated[Path, typer.Argument(help="The plan file written by `graphlink fingerprint plan`",
                                         show_default=False)]
StoreOpt = Annotated[Store | None, typer.Option("--store", help="Also write to Neo4j")]
NameOpt = Annotated[str | None, typer.Option("--name", help="Plan id in Neo4j (default: derived from the plan)")]


def read_recipients(value: str) -> int | list[str]:
    """``N`` (a count: R1 … RN) or a CSV of names (column ``name`` or ``recipient``, else the first column)."""
    from graphlink.qi.table import read_table

    text = value.strip()
    if text.isdigit():
        return int(text)
    path = Path(text)
    frame = read_table(path)
    col = next((c for c in frame.columns if str(c).strip().lower() in ("name", "recipient")), None)
    if col is None and len(frame.columns):
        col = frame.columns[0]
    if col is None or len(frame) == 0:
        raise ReleaseError("expected a CSV with one recipient name per row (column 'name')", file=str(path))
    names = frame[col].fillna("").astype(str).str.strip().tolist()
    for r, x in enumerate(names):
        if not x:
            raise ReleaseError("empty recipient name", file=str(path), row=r + 2, column=str(col))
        if x in names[:r]:
            raise ReleaseError(f"recipient {x!r} is listed twice", file=str(path), row=r + 2, column=str(col))
    return names


def _plan_rows(plan: Plan) -> list[tuple[str, Any]]:
    c, s, srch, col = plan.capacity, plan.loss_spread, plan.search, plan.collusion
    if not srch:   # a plan made by hand (plan_from_nodes): no search, no clusters
        return [("recipients", len(plan.recipients)), ("k", plan.k), ("loss", plan.loss),
                ("fingerprint capacity: upper bound Π nᵢ (FP §4)", f"{c['upper_bound']:,}"),
                ("loss spread (max − min)", f"{s['spread']:.4g}"),
                ("pairs whose joint data is below k", f"{col['pairs_below_k']:,} of {col['pairs']:,}")]
    return [
        ("recipients", len(plan.recipients)), ("k", plan.k), ("loss", f"{plan.loss} ({plan.discretisation})"),
        ("fingerprint capacity: upper bound Π nᵢ (FP §4)", f"{c['upper_bound']:,}"),
        ("  k-anonymous nodes", f"{c['k_anonymous']:,}"), ("  within the loss bounds", f"{c['within_bounds']:,}"),
        ("  usable (distinguishable releases)", f"{c['usable']:,}"),
        ("chosen cluster (loss)",
         f"[{plan.cluster['lo']:.4g}, {plan.cluster['hi']:.4g}], {plan.cluster['nodes']} nodes"),
        ("loss spread (max − min)", f"{s['spread']:.4g} ({100 * s['of_range']:.1f}% of the k-anonymous range)"),
        ("lattice nodes tested / tagged / total", f"{srch['tested']:,} / {srch['tagged']:,} / {srch['nodes']:,}"),
        ("pairs whose joint data is below k", f"{col['pairs_below_k']:,} of {col['pairs']:,}"),
        ("seconds", f"{srch['seconds']:.3f}"),
    ]


def _recipients_frame(plan: Plan) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([{"recipient": r.name, **dict(zip(plan.qi, r.levels, strict=True)), "loss": round(r.loss, 6),
                          "k": r.k, "suppressed": r.suppressed_rows, "Prec": round(r.prec, 4),
                          "rows naming it alone": r.distinguishing_rows} for r in plan.recipients])


def plan_cmd(table: TableArg, qi: QiOpt,
             k: Annotated[int, typer.Option("--k", min=1, help="Every release is k-anonymous", show_default=False)],
             recipients: Annotated[str, typer.Option("--recipients", help="How many recipients (named R1 … RN), or "
                                                     "a CSV of names (column 'name')", show_default=False)],
             out: Annotated[Path, typer.Option("--out", help="The plan file to write (JSON)", show_default=False)],
             hierarchies: HierOpt = None,
             loss: Annotated[Loss, typer.Option("--loss", help="Loss metric (FP §2.2): precision = Σ level/height, "
                                                "samarati = Σ levels, dm-star, entropy")] = Loss.precision,
             l_min: Annotated[float | None, typer.Option("--l-min", help="Smallest loss allowed")] = None,
             l_max: Annotated[float | None, typer.Option("--l-max", help="Largest loss allowed")] = None,
             discretise: Annotated[str, typer.Option(
                 "--discretise", help="Clustering by loss: auto (narrowest loss interval holding every recipient), "
                                      "exact, round:DECIMALS or width:W")] = "auto",
             max_suppression: Annotated[float, typer.Option("--max-suppression", help="Fraction of rows each "
                                                            "release may remove (ARX)")] = 0.0,
             seed: Annotated[int | None, typer.Option("--seed", min=0, help="Seed of the releases' row shuffles "
                                                      "(default: random, kept in the plan)")] = None,
             store: StoreOpt = None, name: NameOpt = None, fmt: FmtOpt = Fmt.table) -> None:
    """Plan one k-anonymous generalization of equal loss per recipient (FP §3.1) and write the plan file."""
    from graphlink.fileio import check_output
    from graphlink.fingerprint.plan import make_plan
    from graphlink.fingerprint.release import table_fingerprint
    from graphlink.qi.table import encode, read_table

    check_output(out, inputs=[table, hierarchies, None if recipients.strip().isdigit() else recipients.strip()])
    cols = split(qi)
    who = read_recipients(recipients)
    frame = read_table(table)
    t = encode(frame, cols, load_hierarchies(hierarchies, cols), source=str(table))
    with status(f"planning {who if isinstance(who, int) else len(who)} fingerprints over {t.n:,} rows"):
        plan = make_plan(t, k, who, loss=loss.value, l_min=l_min, l_max=l_max, discretisation=discretise,
                         max_suppression=max_suppression, seed=seed, source=str(table),
                         frame_fingerprint=table_fingerprint(frame))
    plan.save(out)
    summary = plan.summary()
    if store == Store.neo4j:
        from graphlink.store import fingerprint as fstore
        from graphlink.store.neo4j import connect

        with connect() as st:
            summary["plan_id"] = fstore.write_plan(st, plan, name)
    if fmt == Fmt.json:
        emit_json(summary)
        return
    if fmt == Fmt.csv:
        typer.echo(_recipients_frame(plan).to_csv(index=False), nl=False)
        return
    print_pairs(f"fingerprint plan → {out}", _plan_rows(plan))
    print_frame(_recipients_frame(plan), "pattern-list (recipient → generalization level per QI)")
    if "plan_id" in summary:
        typer.echo(f"written to Neo4j as plan {summary['plan_id']!r} (graphlink cypher fingerprint_recipients "
                   f"--param plan={summary['plan_id']})")


def release_cmd(plan: PlanArg, table: TableArg,
                recipient: Annotated[str, typer.Option("--recipient", help="Whose copy", show_default=False)],
                out: Annotated[Path, typer.Option("--out", help="Where to write it (.csv or .parquet)",
                                                  show_default=False)],
                drop: Annotated[str | None, typer.Option("--drop", help="Columns to leave out (direct identifiers), "
                                                         "comma-separated")] = None,
                keep_order: Annotated[bool, typer.Option("--keep-order", help="Keep the table's row order (default: "
                                                         "a per-recipient shuffle, SW-K §4's remedy)")] = False
                ) -> None:
    """Write a recipient's generalized table (refused for a table other than the planned one)."""
    from graphlink.fileio import check_output
    from graphlink.fingerprint.plan import Plan
    from graphlink.fingerprint.release import release_frame, write_frame
    from graphlink.qi.table import read_table

    check_output(out, inputs=[plan, table])
    p = Plan.load(plan)
    frame = read_table(table)
    rel = release_frame(p, frame, recipient, shuffle=not keep_order, drop=split(drop, "--drop") if drop else (),
                        source=str(table))
    write_frame(rel, out)
    r = p.recipient(recipient)
    typer.echo(terminal_text(f"{out}: {len(rel):,} rows for {recipient} ({p.pattern(r.levels)}; k = {r.k}, "
                             f"{r.suppressed_rows:,} suppressed)"))


def print_attribution(res: Attribution, leak: Path) -> None:
    who = ", ".join(res.recipients) if res.recipients else "— (not attributed)"
    pattern = ", ".join(f"{q}={'absent' if lv is None else lv}" for q, lv in res.pattern.items())
    print_pairs(f"leak {leak.name}", [("recipients", who), ("exact match", "yes" if res.exact else "no"),
                                      ("rows explained", f"{res.explained_rows:,} of {res.rows:,}"),
                                      ("finest level seen per QI", pattern)])
    typer.echo(terminal_text(res.reason))


def attribute_cmd(plan: PlanArg,
                  leak: Annotated[Path, typer.Argument(help="The leaked rows (CSV or Parquet)", show_default=False)],
                  fmt: FmtOpt = Fmt.table, store: StoreOpt = None, name: NameOpt = None) -> None:
    """Name the recipient(s) whose release explains a leak: exact match, else the smallest colluding set."""
    from graphlink.fingerprint.attribute import attribute
    from graphlink.fingerprint.plan import Plan
    from graphlink.qi.table import read_table

    p = Plan.load(plan)
    res = attribute(p, read_table(leak), source=str(leak))
    d = res.to_dict()
    if store == Store.neo4j:
        from graphlink.store import fingerprint as fstore
        from graphlink.store.neo4j import connect

        with connect() as st:
            d["leak_id"] = fstore.write_attribution(st, p, res, source=str(leak), plan_name=name)
    if fmt == Fmt.csv:
        raise ReleaseError("attribute prints a verdict, not a table: use --format table or json")
    if fmt == Fmt.json:
        emit_json(d)
    else:
        print_attribution(res, leak)


def load_cmd(plan: PlanArg, name: NameOpt = None) -> None:
    """Write a plan to Neo4j: (:Recipient)-[:RECEIVED]->(:Generalization), queryable in Cypher."""
    from graphlink.fingerprint.plan import Plan
    from graphlink.store import fingerprint as fstore
    from graphlink.store.neo4j import connect

    p = Plan.load(plan)
    with connect() as st:
        pid = fstore.write_plan(st, p, name)
    typer.echo(f"plan {pid!r}: {len(p.recipients)} recipients; try: graphlink cypher fingerprint_recipients "
               f"--param plan={pid}")


def register(app: typer.Typer) -> None:
    fingerprint = group("k-anonymity fingerprinting: give every recipient its own k-anonymous generalization of "
                        "equal loss, and name the recipient(s) behind a leak (Schrittwieser et al.).")
    fingerprint.command("plan")(plan_cmd)
    fingerprint.command("release")(release_cmd)
    fingerprint.command("attribute")(attribute_cmd)
    fingerprint.command("load")(load_cmd)
    app.add_typer(fingerprint, name="fingerprint")
