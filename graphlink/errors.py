"""Error types shared by the library, the CLI (exit codes) and the app (readable messages).

An error may carry a :class:`graphlink.diagnostics.Diagnostic` (``exc.diagnostic``: a code plus data) that the CLI
and the app word for their users; ``str(exc)`` stays the library's plain sentence, which names no flag.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphlink.diagnostics import Diagnostic


class GraphlinkError(Exception):
    """Base class of every error graphlink raises on purpose; ``exit_code`` is what the CLI returns for it,
    ``diagnostic`` the code and data behind it (the CLI and the app word it for their users).

    The CLI prints such an error as one line, ``graphlink: error: ...``, and exits with ``exit_code`` (1 here,
    2 for the subclasses a user fixes: bad input, a broken model assumption, the environment); any other
    exception is an internal error with its traceback.

    Parameters
    ----------
    message : str, optional
        The plain sentence (default: ``str(diagnostic)``).
    diagnostic : Diagnostic, optional
        The code and data, for the edges' words.

    Attributes
    ----------
    exit_code : int
        The CLI's exit code for this error (class attribute).

    Examples
    --------
    >>> import graphlink as gl
    >>> try:
    ...     gl.read_release("no-such-release.csv")
    ... except gl.GraphlinkError as exc:
    ...     print(type(exc).__name__, exc.exit_code)
    ReleaseError 2
    >>> from graphlink.diagnostics import Diagnostic
    >>> exc = ModelAssumptionError(diagnostic=Diagnostic("side-undecided", "cannot tell which side is reserved"))
    >>> str(exc), exc.diagnostic.code
    ('cannot tell which side is reserved', 'side-undecided')
    """

    exit_code = 1

    def __init__(self, message: object = None, *args: object, diagnostic: Diagnostic | None = None) -> None:
        self.diagnostic = diagnostic
        if message is None and diagnostic is not None:
            message = str(diagnostic)
        super().__init__(*((message, *args) if message is not None else args))


class ReleaseError(GraphlinkError):
    """Bad input: a file, row or column that is not what the release format expects (exit 2).

    Parameters
    ----------
    message : str
        What was expected, in plain words.
    file, row, column : optional
        Where: the message starts with them, and they stay available as attributes.

    Attributes
    ----------
    file, row, column
        As given (None where unknown).
    detail : str
        ``message`` without the location.

    Examples
    --------
    >>> from graphlink.errors import ReleaseError
    >>> exc = ReleaseError("expected 'identified' or 'deidentified'", file="r.csv", row=3, column="kind")
    >>> print(exc)
    r.csv, row 3, column 'kind': expected 'identified' or 'deidentified'
    >>> exc.row, exc.exit_code
    (3, 2)
    """

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None, diagnostic: Diagnostic | None = None) -> None:
        where = []
        if file:
            where.append(str(file))
        if row is not None:
            where.append(f"row {row}")
        if column:
            where.append(f"column '{column}'")
        self.file, self.row, self.column = file, row, column
        #: where the problem is, as the start of the line (``"r.csv, row 3"``; ``""`` when unknown)
        self.where = ", ".join(where)
        self.detail = message
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}", diagnostic=diagnostic)


class ModelAssumptionError(GraphlinkError):
    """The data breaks the one-to-one / reserved model (mixed reserved directions, Hall violation).

    Raised instead of an answer: under a refuted model no pair is certain, so none is printed (exit 2, the
    reason in one line; CONTRIBUTING.md, "Correctness first").

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    Location H1 withholds identified records, H2 de-identified ones, and one-to-one is asked for:

    >>> import pandas as pd
    >>> import graphlink as gl
    >>> rows = [("H1", "identified", "a"), ("H1", "deidentified", "x"), ("H1", "deidentified", "y"),
    ...         ("H2", "identified", "a"), ("H2", "identified", "b"), ("H2", "deidentified", "x")]
    >>> release = gl.read_release(pd.DataFrame(rows, columns=["location", "kind", "element"]))
    >>> try:
    ...     gl.build_trails(release, "auto", "one-to-one")
    ... except gl.ModelAssumptionError as exc:
    ...     print(exc.exit_code)
    2
    """

    exit_code = 2


class StoreError(GraphlinkError):
    """Neo4j unreachable or refused the request (exit 2: the user must fix the environment).

    Every failure of the store (:mod:`graphlink.store.neo4j`) surfaces as this one-line error: no server
    configured, connection refused, credentials refused, a Cypher file the console does not run.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> from graphlink.errors import StoreError
    >>> StoreError("Neo4j at bolt://127.0.0.1:7687 does not answer").exit_code
    2
    """

    exit_code = 2


class ProtocolError(GraphlinkError):
    """The secure protocol could not finish: a party failed, exited or timed out, or a frame was malformed
    (exit 2: one line naming the party and what went wrong; nothing is disclosed).

    Examples
    --------
    >>> from graphlink.errors import GraphlinkError, ProtocolError
    >>> issubclass(ProtocolError, GraphlinkError), ProtocolError.exit_code
    (True, 2)
    """

    exit_code = 2


class MissingExtraError(GraphlinkError):
    """An optional dependency is not installed: the message names the extra that brings it (exit 2: the user must
    fix the environment).

    Examples
    --------
    What :func:`require` raises when an extra is not installed; the CLI prints its one line and exits with 2:

    >>> from graphlink.errors import MissingExtraError
    >>> MissingExtraError("the Neo4j store needs pip install 'graphlink[neo4j]'").exit_code
    2
    """

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
