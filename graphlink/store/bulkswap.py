"""The bulk import's journal and its store swap (:mod:`graphlink.store.bulk`), kept apart so that the server
launcher (:mod:`graphlink.store.server`) can finish a swap interrupted half-way before it opens the store,
without importing the importer (and the store client) it would otherwise cycle through.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from graphlink import fileio
from graphlink.errors import StoreError

DATABASE = "neo4j"
#: graphlink.store.server.Paths (not imported: the server imports this module)
Paths = Any


def _bulk_dir(paths: Paths) -> Path:
    return paths.base / "bulk"


def journal(paths: Paths) -> dict | None:
    try:
        return json.loads((_bulk_dir(paths) / "journal.json").read_text())
    except (OSError, ValueError):
        return None


def _set_journal(paths: Paths, **entries: Any) -> None:
    data = {**(journal(paths) or {}), **entries}
    fileio.write_text(_bulk_dir(paths) / "journal.json", json.dumps(data, indent=2))


def _forget(paths: Paths, job: Path | None = None) -> None:
    """Remove a finished or abandoned job (its staged store, CSV files, replaced empty store) and the journal."""
    if job is not None:
        shutil.rmtree(job, ignore_errors=True)
    (_bulk_dir(paths) / "journal.json").unlink(missing_ok=True)


def _swap_dirs(paths: Paths, job: Path) -> list[tuple[Path, Path, Path]]:
    data = paths.home / "data"
    return [(data / sub / DATABASE, job / "data" / sub / DATABASE, job / "previous" / sub / DATABASE)
            for sub in ("databases", "transactions")]


def _swap(paths: Paths, job: Path) -> None:
    """Put the staged store in place of the live one (its DBMS is paused or the server stopped). Idempotent:
    completes a half-done swap. The replaced (empty) store is deleted afterwards. O(1) renames, then O(files)
    to delete the old store."""
    for live, staged, previous in _swap_dirs(paths, job):
        if not staged.exists():
            continue  # this part is done
        if live.exists():
            if previous.exists():
                raise StoreError(f"cannot complete the bulk import: {live}, {staged} and {previous} all exist; "
                                 "move one of them away by hand")
            previous.parent.mkdir(parents=True, exist_ok=True)
            live.rename(previous)
        live.parent.mkdir(parents=True, exist_ok=True)
        staged.rename(live)
    _set_journal(paths, phase="swapped")
    shutil.rmtree(job / "previous", ignore_errors=True)


def complete_swap(paths: Paths) -> str | None:
    """Finish the renames of a bulk import interrupted half-way (``server.start`` calls this before the server
    opens the store); a message if there was one to finish."""
    j = journal(paths)
    if not j or j.get("phase") != "swapping":
        return None
    _swap(paths, _bulk_dir(paths) / j["job"])
    return (f"completed the interrupted bulk import of release {j.get('release')!r}; `graphlink load` of it again "
            "marks it loaded")
