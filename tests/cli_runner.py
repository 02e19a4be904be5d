"""The tests' one way to run ``graphlink ARGS`` in this process: typer's ``CliRunner`` streams around the console
script's own entry (:func:`graphlink.cli.main`), so a test gets what a user's shell would (exit code, stdout,
stderr apart) without starting an interpreter and importing NumPy, pandas and numba again for every call.

Why ``main`` and not ``CliRunner().invoke(app, ...)``: ``main`` is where library errors become exit 2 with one line
on stderr and where warnings and notes are held back on failure; invoking the typer app directly would test a
different program.  What stays a real process (``subprocess``): the entry point itself (``python -m graphlink.cli``,
the console script), signals, memory limits, readers that could block, child processes that must see the
environment, and the separation of stderr written by other processes (JVM, Neo4j).

The result is a :class:`subprocess.CompletedProcess`, so a test written against ``subprocess.run`` keeps its
assertions (``returncode``, ``stdout``, ``stderr``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import traceback
import types
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

from typer.testing import CliRunner

#: the interpreter's default warning filters (``python -W`` unset, not a debug build): what a user's ``graphlink``
#: process starts with, instead of pytest's filters (which show DeprecationWarnings the user would never see)
_PYTHON_DEFAULT_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                           ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                           ("ignore", ResourceWarning, "")]


@contextlib.contextmanager
def _as_a_fresh_process(argv: list[str], cwd: str | Path | None) -> Iterator[None]:
    """``sys.argv``, ``__main__``, the working directory and the warning filters as the console script's process
    has them (click names the program after ``__main__``: ``graphlink``, not ``python -m pytest``)."""
    old_argv, old_main = sys.argv, sys.modules["__main__"]
    sys.argv = argv
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with warnings.catch_warnings(), contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
            warnings.resetwarnings()
            for action, category, module in _PYTHON_DEFAULT_FILTERS:
                warnings.filterwarnings(action, category=category, module=module, append=True)
            yield
    finally:
        sys.argv = old_argv
        sys.modules["__main__"] = old_main


def run_cli(*args: str | os.PathLike, env: Mapping[str, str | None] | None = None, input: str | None = None,
            cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run ``graphlink ARGS`` in this process.

    ``env`` overrides environment variables for the call (None removes one); ``input`` is stdin; ``cwd`` the
    working directory.  An exception ``main`` lets through (an internal error) becomes exit 1 with its
    traceback on stderr, as the interpreter would print it.
    """
    from graphlink import config
    from graphlink.cli import main

    argv = ["graphlink", *map(str, args)]
    runner = CliRunner()
    with runner.isolation(input=input, env=dict(env or {})) as (out, err, _), _as_a_fresh_process(argv, cwd):
        config.reload()             # a new process reads its GRAPHLINK_* settings from the environment it starts with
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                sys.stderr.write(exc.code + "\n")
        except Exception:
            code = 1
            sys.stderr.write(traceback.format_exc())
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    config.reload()                 # and this process goes on with its own
    return subprocess.CompletedProcess(argv, code, stdout.decode(runner.charset, "replace"),
                                       stderr.decode(runner.charset, "replace"))
