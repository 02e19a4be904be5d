"""The ``graphlink`` command line. Thin: parses, calls the library, formats.

Commands live in ``graphlink/commands/*.py``; each module defines ``register(app)``.
Exit codes: 0 ok, 2 bad input (one-line message on stderr), 1 internal error.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys
import warnings

import typer
from typer._click import exceptions as _click_exceptions

from graphlink.errors import GraphlinkError

app = typer.Typer(
    name="graphlink",
    help="Trail re-identification, true loves and k-unlinkability for multi-location releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    import graphlink.commands as pkg

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"graphlink.commands.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_commands()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    typer.echo(f"graphlink: warning: {message}", err=True)


def main() -> None:
    """Console-script entry: maps library errors to exit codes without tracebacks."""
    warnings.showwarning = _show_warning
    # the Neo4j driver logs each retry and dropped connection; the StoreError it ends in is the one line we print
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
    try:
        app(standalone_mode=False)
    except GraphlinkError as exc:
        typer.echo(f"graphlink: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("graphlink: aborted", err=True)
        sys.exit(1)
    except Exception as exc:
        # typer >= 0.29 vendors click as typer._click; plain click may also be raised by extensions
        click_errors: tuple[type[BaseException], ...] = (_click_exceptions.ClickException,)
        usage_errors: tuple[type[BaseException], ...] = (_click_exceptions.UsageError,)
        try:
            import click

            click_errors += (click.ClickException,)
            usage_errors += (click.UsageError,)
        except ImportError:  # pragma: no cover
            pass
        if isinstance(exc, click_errors):
            exc.show()
            sys.exit(2 if isinstance(exc, usage_errors) else exc.exit_code)
        raise


if __name__ == "__main__":
    main()
