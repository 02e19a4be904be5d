"""Error types shared by the library, the CLI (exit codes) and the app (readable messages)."""

from __future__ import annotations

import importlib
from typing import Any


class GraphlinkError(Exception):
    """Base class. ``exit_code`` is what the CLI returns for it."""

    exit_code = 1


class ReleaseError(GraphlinkError):
    """Bad input: a file, row or column that is not what the release format expects (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None) -> None:
        where = []
        if file:
            where.append(str(file))
        if row is not None:
            where.append(f"row {row}")
        if column:
            where.append(f"column '{column}'")
        self.file, self.row, self.column = file, row, column
        self.detail = message
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class ModelAssumptionError(GraphlinkError):
    """The data breaks the one-to-one / reserved model (mixed reserved directions, Hall violation)."""

    exit_code = 2


class StoreError(GraphlinkError):
    """Neo4j unreachable or refused the request (exit 2: the user must fix the environment)."""

    exit_code = 2


class ProtocolError(GraphlinkError):
    """The secure protocol could not finish: a party failed, exited or timed out, or a frame was malformed
    (exit 2: one line naming the party and what went wrong; nothing is disclosed)."""

    exit_code = 2


class MissingExtraError(GraphlinkError):
    """An optional dependency is not installed: the message names the extra that brings it (exit 2: the user must
    fix the environment)."""

    exit_code = 2


def require(module: str, extra: str, purpose: str) -> Any:
    """Import the optional dependency ``module`` or raise :class:`MissingExtraError` naming the extra.

    Plain ``pip install graphlink`` installs the analyses, the CLI and pandas in and out; the Neo4j store, the
    figures, the app, Spark and the R datasets come with extras (``pyproject.toml``). The modules that need one
    import it through this function when they first need it, so the error is one line a person can act on.

    Parameters
    ----------
    module : str
        The module to import (``"neo4j"``, ``"matplotlib.figure"``).
    extra : str
        The extra of ``graphlink`` that installs it (``"neo4j"``).
    purpose : str
        What needs it, as the start of the sentence (``"the Neo4j store"``).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingExtraError
        When ``module`` cannot be imported.

    Examples
    --------
    >>> require("json", "dev", "this example").dumps([1])
    '[1]'
    >>> require("not_here", "neo4j", "the store")
    Traceback (most recent call last):
    ...
    graphlink.errors.MissingExtraError: the store needs the not_here package: pip install 'graphlink[neo4j]'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise MissingExtraError(f"{purpose} needs the {top} package: pip install 'graphlink[{extra}]'") from None
