"""CLI for the Neo4j backbone: ``graphlink neo4j start|stop|status|reset-password``, ``graphlink load``,
``graphlink cypher``.

Connection: ``NEO4J_URI`` / ``NEO4J_AUTH`` override the project-local server (see docs/neo4j.md); the local
server's generated password is used automatically. ``graphlink cypher`` is read-only unless ``--write`` and refuses
file/URL access and administration in every mode (docs/security.md).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from graphlink.cli.options import EngineO, EngineOpt, MasterO, group
from graphlink.errors import StoreError


def _echo_status(st) -> None:
    typer.echo(f"Neo4j: {st.message}")
    password = (st.extra or {}).get("password_file")
    auth = f"user neo4j, password in {password}" if password else None
    for label, value in (("URI", st.uri), ("Browser", st.http), ("auth", auth), ("version", st.version),
                         ("PID", st.pid), ("home", st.home), ("log", st.log)):
        if value:
            typer.echo(f"  {label + ':':9} {value}")


def start_cmd(
    port: int = typer.Option(7687, help="Bolt port (a free port is taken if this one is busy)."),
    http_port: int = typer.Option(7474, help="HTTP port for Neo4j Browser; 0 disables HTTP."),
    timeout: float = typer.Option(180.0, help="Seconds to wait for the server to answer."),
) -> None:
    """Start the local server (first start resolves the jars with Maven and shows progress)."""
    from graphlink.store import server

    st = server.start(port=port, http_port=http_port or None, timeout=timeout, echo=typer.echo)
    _echo_status(st)


def stop_cmd() -> None:
    """Stop the local server cleanly (the data is kept for the next start)."""
    from graphlink.store import server

    _echo_status(server.stop())


def reset_password_cmd() -> None:
    """Give the stopped local server a new generated password (when its password file was lost)."""
    from graphlink.store import server

    path = server.reset_password(echo=typer.echo)
    typer.echo(f"new password for user neo4j written to {path} (mode 0600); `graphlink neo4j start` uses it")


def status_cmd() -> None:
    """Show whether the local server runs, its URI, version and PID (and NEO4J_URI if that is set)."""
    from graphlink.config import get_config
    from graphlink.store import server

    uri = get_config().neo4j_uri
    if uri:
        typer.echo(f"NEO4J_URI is set: graphlink uses {uri} (not the local server)")
    st = server.status()
    _echo_status(st)
    if not st.running:
        raise typer.Exit(3)


def _progress_bar(title: str):
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    # on stderr: stdout carries only the command's result (a script reading it must not get the bar's lines); and
    # silent when stderr is no terminal, so that an error stays the one line a script reads
    err = Console(stderr=True)
    if not err.is_terminal:
        import contextlib

        return contextlib.nullcontext(), lambda fraction, message: None
    # the title holds the release name (the user's file name): escaped, so '[/b]' is not read as rich markup
    prog = Progress(TextColumn(escape(title)), BarColumn(), TaskProgressColumn(), TextColumn("{task.description}"),
                    TimeElapsedColumn(), transient=True, console=err)
    task = prog.add_task("", total=1.0)

    def update(fraction: float, message: str) -> None:
        prog.update(task, completed=fraction, description=escape(message))

    return prog, update


class BulkMode(StrEnum):
    """``graphlink load --bulk``: when to build the graph with neo4j-admin database import (graphlink.store.bulk)."""

    auto = "auto"
    always = "always"
    never = "never"


def load_cmd(
    release: Path = typer.Argument(..., help="Release file (long CSV/Parquet: location, kind, element) or folder."),
    name: str = typer.Option(None, "--name", help="Name of the release in Neo4j (default: the file stem)."),
    truth: Path = typer.Option(None, "--truth", help="Optional ground-truth file (identified, deidentified)."),
    replace: bool = typer.Option(False, "--replace", help="Replace a stored release of that name "
                                                          "whose content differs."),
    bulk: BulkMode = typer.Option(BulkMode.auto, "--bulk", help="neo4j-admin database import into the empty "
                                  "database of the project's local server (it pauses for a moment): auto = from "
                                  "GRAPHLINK_BULK_MIN_ROWS rows (200,000), else UNWIND (--engine spark: the Neo4j "
                                  "connector); always = or fail; never = UNWIND / the connector."),
    engine: EngineO = EngineOpt.local,
    spark_master: MasterO = None,
    break_lock: bool = typer.Option(False, "--break-lock", help="First remove the lock of a load under --name "
                                    "that no longer runs on another machine (a load on this machine that died "
                                    "is detected by itself). Refused while that load is alive: its process "
                                    "here, its heartbeat from another machine."),
) -> None:
    """Load a release into Neo4j (idempotent: loading it again changes nothing). With --engine spark, Spark reads
    the release and writes the bulk importer's files (or the connector writes the graph): the same graph. One load
    per release name at a time: a second one is refused while the first runs."""
    if break_lock:
        from graphlink.display import terminal_text
        from graphlink.store.neo4j import connect

        if not name:
            raise StoreError("--break-lock needs --name: the release whose lock to remove")
        with connect() as store:
            gone = store.break_lock(name)
        typer.echo(f"removed the load lock of process {gone.pid} on {terminal_text(str(gone.host))}"
                   if gone is not None else "there was no load lock to remove")
    from graphlink import engines
    from graphlink.store.neo4j import connect, load

    prog, update = _progress_bar(f"loading {name or release.stem}")
    with prog:
        # the release as the engine reads it; it loads itself where it brings its own loader (the store's load)
        # Spark needs the Neo4j connector only when the import may fall back to it
        rel = engines.get(engine.value, master=spark_master).read(release, truth=truth,
                                                                  store=bulk is not BulkMode.always)
        with connect() as st:
            uri, info = st.uri, load(st, rel, name=name, replace=replace, bulk=bulk.value, progress=update)
    if info.skipped:
        verb = "already loaded (nothing changed)"
    else:
        how = {"bulk-import": "bulk import", "connector": "the Neo4j connector"}.get(info.method or "", "UNWIND")
        verb = f"loaded in {info.seconds:.1f} s by {how} ({info.why})"
    typer.echo(f"release {info.name!r} {verb} into {uri}: {info.rows:,} disclosures, "
               f"{info.locations} locations, {info.identified:,} identified, "
               f"{info.deidentified:,} de-identified, reserved: {info.reserved}")


def _parse_params(pairs: list[str]) -> dict:
    from graphlink.store.cypherlib import parse_value

    out = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise StoreError(f"--param expects NAME=VALUE, got {item!r}")
        out[key.strip()] = parse_value(value)
    return out


def cypher_cmd(
    file: str = typer.Argument(..., help="A .cypher file, or the name of one in cypher/ (e.g. reidit_c)."),
    param: list[str] = typer.Option(None, "--param", "-p", help="Query parameter NAME=VALUE (JSON values "
                                                                 "are parsed: 2, true, null, [1,2])."),
    write: bool = typer.Option(False, "--write", help="Allow the query to write (read-only otherwise)."),
    limit: int = typer.Option(50, help="Rows to print (0 = all)."),
    csv: Path = typer.Option(None, "--csv", help="Also write the full result table to this CSV file."),
    timeout: str = typer.Option(None, "--timeout", help="Seconds each statement may run, above 0 and at most "
                                "86400 (one day); default GRAPHLINK_CYPHER_TIMEOUT, else 120. The server stops it "
                                "then."),
) -> None:
    """Run a documented Cypher file and print its result table (read-only unless --write; never LOAD CSV,
    administration or server settings, see docs/security.md)."""
    import pandas as pd
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from graphlink.store.cypherlib import resolve_file
    from graphlink.store.neo4j import check_timeout, connect

    seconds = None if timeout is None else check_timeout(timeout, "--timeout")   # before any connection
    params = _parse_params(param)
    query = resolve_file(file)  # a missing file or a FIFO is refused before connecting
    if csv:                     # before the query runs (it may write): the result never replaces the query file
        from graphlink.fileio import check_output

        check_output(csv, inputs=[query], option="--csv")
    with connect() as store:
        df = store.run_file(file, params, write=write, timeout=seconds)
    if csv:
        from graphlink.fileio import write_with

        write_with(csv, lambda tmp: df.to_csv(tmp, index=False))
    table = Table(show_lines=False)
    for col in df.columns:
        table.add_column(escape(str(col)))
    shown = df if not limit else df.head(limit)
    for row in shown.itertuples(index=False):
        table.add_row(*["" if (not isinstance(v, list | dict) and pd.isna(v)) else escape(str(v)) for v in row])
    Console().print(table)
    more = f" (showing {len(shown)})" if len(shown) < len(df) else ""
    typer.echo(f"{len(df)} row(s){more}")


def register(app: typer.Typer) -> None:
    app.command("load")(load_cmd)
    app.command("cypher")(cypher_cmd)
    neo4j = group("Run the project-local Neo4j Community 5.26 server (no Docker needed).")
    neo4j.command("start")(start_cmd)
    neo4j.command("stop")(stop_cmd)
    neo4j.command("reset-password")(reset_password_cmd)
    neo4j.command("status")(status_cmd)
    app.add_typer(neo4j, name="neo4j")
