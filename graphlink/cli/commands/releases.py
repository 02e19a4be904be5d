"""``graphlink releases`` and ``graphlink drop NAME``: what the Neo4j store holds, and removing a release from it.

A user's database otherwise only grows: every ``graphlink load`` and ``--store neo4j`` adds a release. ``releases``
lists them with their sizes, status and dates; ``drop`` removes one with everything scoped to it (its elements,
locations, link graph and analyses), after a confirmation, and holds the release's load lock while it does, so it is
refused while a load of that release runs (and no load can start under the name meanwhile).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from graphlink.errors import StoreError


def _date(value: Any) -> str:
    """A stored datetime to the minute (UTC as stored), or empty."""
    text = str(value or "")
    return text[:16].replace("T", " ") if text else ""


def releases_cmd(
    fmt: Annotated[str, typer.Option("--format", help="table (default) or json")] = "table",
) -> None:
    """List the releases stored in Neo4j: name, status, people, de-identified records, locations, rows, loaded."""
    from graphlink.display import print_rows, terminal_text
    from graphlink.store.neo4j import connect

    if fmt not in ("table", "json"):
        raise StoreError(f"--format must be table or json, not {fmt!r}")
    with connect() as store:
        stored = store.list_releases()
        uri = store.uri
    rows = [{"name": r.name, "status": r.status, "people": r.identified, "records": r.deidentified,
             "locations": r.locations, "rows": r.rows, "created": _date(r.created_at), "loaded": _date(r.loaded_at)}
            for r in stored]
    if fmt == "json":
        typer.echo(json.dumps({"uri": uri, "releases": rows}, indent=2, default=str))
        return
    if not rows:
        typer.echo(f"No release is stored in Neo4j at {terminal_text(uri)}.")
        return

    def n(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) else ("" if v is None else str(v))

    print_rows(["release", "status", "people", "de-identified records", "locations", "rows", "loaded (UTC)"],
               [(r["name"], r["status"], n(r["people"]), n(r["records"]), n(r["locations"]), n(r["rows"]),
                 r["loaded"] or r["created"]) for r in rows], f"Releases in Neo4j at {uri}", right=(2, 3, 4, 5))


def drop_cmd(
    name: Annotated[str, typer.Argument(help="The stored release to remove (see graphlink releases)")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation")] = False,
) -> None:
    """Remove a stored release and everything of it (elements, locations, link graph, analyses) from Neo4j. Asks
    first; refused while a load of that release runs."""
    from graphlink.display import terminal_text
    from graphlink.store.neo4j import connect

    with connect() as store:
        info = store.release_info(name)
        if info is None:
            raise StoreError(f"no release named {name!r} in Neo4j at {store.uri} (graphlink releases lists them)")
        size = f"{info.rows or 0:,} disclosures at {info.locations or 0:,} locations"
        question = f"Remove release {name!r} ({size}) and its analyses from Neo4j?"
        if not yes and not typer.confirm(question, default=False, err=True):
            typer.echo("nothing removed", err=True)
            raise typer.Exit(1)
        with store.load_lock(name):        # refused (one line naming the holder) while a load of it runs
            store.drop_release(name)
    typer.echo(f"removed release {terminal_text(name)} ({size}) from Neo4j")


def register(app: typer.Typer) -> None:
    app.command("releases")(releases_cmd)
    app.command("drop")(drop_cmd)
