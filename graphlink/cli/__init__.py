"""The ``graphlink`` command line. Thin: parses, calls the library, formats.

Commands live in ``graphlink/cli/commands/*.py``; each module defines ``register(app)``.  ``python -m graphlink.cli``
runs :func:`run` (``graphlink/cli/__main__.py``), as the ``graphlink`` console script does: :func:`main`, then the
end of the process.
Exit codes: 0 ok, 2 bad input (one-line message on stderr), 1 internal error, 130 interrupted (Ctrl-C) and
143 terminated (SIGTERM; both with one line, ``graphlink: interrupted`` / ``graphlink: terminated``, and no output
file left half-written), 141 when the reader of stdout went away (``graphlink ... | head``: no message).
``tests/core/test_fuzz_readers.py`` holds every command that reads a file to that contract on generated malformed input.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import pkgutil
import re
import sys
import threading
import warnings

import typer
from typer._click import exceptions as _click_exceptions

from graphlink.cli import words
from graphlink.config import environ_has_prefix, export
from graphlink.display import drop_notes, flush_notes, terminal_text
from graphlink.errors import GraphlinkError
from graphlink.fileio import reading_inputs


class Terminated(BaseException):
    """SIGTERM while a command runs (:func:`run` installs the handler): unwinds like Ctrl-C, so the atomic
    writers remove their temporary files, and ends in exit 143.  A BaseException, so no ``except Exception``
    of the library swallows it."""

app = typer.Typer(
    name="graphlink",
    help="Trail re-identification, true loves and k-unlinkability for multi-location releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _flags_as_flags() -> None:
    """typer prints a value type beside every option, on/off flags included (``--explain <bool>``), though a
    flag takes no value: flags get no type in the help (their ``--x/--no-x`` pair says it all)."""
    from typer.core import TyperOption

    typed = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: object) -> str | None:
        return None if getattr(self, "is_flag", False) else typed(self, ctx)  # type: ignore[arg-type]

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_as_flags()


def _register_commands() -> None:
    import graphlink.cli.commands as pkg

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"graphlink.cli.commands.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_commands()


def one_line(text: object) -> str:
    """A message as one printable line: surrounding whitespace dropped, line breaks and other control or
    invisible characters (from file contents or library messages) shown as escapes, never interpreted by
    the terminal (:func:`graphlink.display.terminal_text`)."""
    return terminal_text(str(text).strip())


_NOT_ONE_OF = re.compile(r"(?:Value error, )?'(?P<given>[^']*)' is not one of (?P<choices>(?:'[^']*'(?:, )?)+)\.?")


def _choice_words(message: str) -> str:
    """A value outside a choice in plain words, with the closest choice when there is one: "'true-love' is not one of
    the choices (complete, ..., true-loves); did you mean 'true-loves'?" instead of the validator's "Value error,
    'true-love' is not one of 'complete', ...".  O(choices)."""
    import difflib

    found = _NOT_ONE_OF.search(message)
    if found is None:
        return message
    choices = re.findall(r"'([^']*)'", found["choices"])
    close = difflib.get_close_matches(found["given"], choices, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    words = f"'{found['given']}' is not one of the choices ({', '.join(choices)}){hint}"
    return message[:found.start()] + words + message[found.end():]


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` or an exception in its chain of causes and contexts is a ``kind``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _usage_message(exc: BaseException) -> str:
    """A click usage error (bad option, missing argument) as one line naming the command and its --help."""
    ctx = getattr(exc, "ctx", None)
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    # click lays some messages out over lines ("Choose from:\n\tcomplete,\n\t..."): one line of words, not escapes
    message = " ".join(message.split())
    message = _choice_words(message)
    metavar = getattr(getattr(exc, "param", None), "metavar", None) or ""
    if message.startswith("Missing option") and re.fullmatch(r"<[^<>|]+(\|[^<>|]+)+>", metavar):
        # a --method parsed against the registry shows its choices as <a|b|c>: name them, as click does for enums
        message += f" Choose from: {', '.join(metavar[1:-1].split('|'))}."
    if ctx is None:
        return message
    names = []                     # the sub-command path without the program name (python -m ... or graphlink)
    while ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    command = " ".join(reversed(names))
    return f"{command + ': ' if command else ''}{message} (see 'graphlink {command + ' ' if command else ''}--help')"


def main() -> None:
    """Console-script entry: maps library errors to exit codes without tracebacks.

    Exit 2 (bad input, bad options, unreadable or unwritable files) prints exactly one line on stderr,
    ``graphlink: error: ...``: notes a command queued (:func:`graphlink.display.note`, e.g. the ``model:``
    line) are printed only when it succeeds.  Warnings raised while the command runs (e.g. collapsed duplicate rows) are
    printed as ``graphlink: warning: ...`` lines when it succeeds; when it fails only the error is printed.
    """
    click_errors: tuple[type[BaseException], ...] = (_click_exceptions.ClickException,)
    usage_errors: tuple[type[BaseException], ...] = (_click_exceptions.UsageError,)
    try:  # typer >= 0.29 vendors click as typer._click; plain click may also be raised by extensions
        import click

        click_errors += (click.ClickException,)
        usage_errors += (click.UsageError,)
    except ImportError:  # pragma: no cover
        pass
    # NumPy asks for transparent huge pages on every array of 4 MiB or more; where the kernel then compacts memory
    # on the page fault (THP defrag "madvise", the usual default), the short-lived arrays of a run cost 0.2-0.3 s
    # of system time in the end-to-end benchmark and gain nothing.  Read when NumPy loads; the user's value wins.
    export("NUMPY_MADVISE_HUGEPAGE", "0")
    # the Neo4j driver logs each retry and dropped connection; the StoreError it ends in is the one line we print
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
    with warnings.catch_warnings(record=True) as caught, reading_inputs():   # the usual filters decide what is shown
        try:
            # outside standalone mode typer *returns* the code of a typer.Exit, and turns Ctrl-C into a returned
            # 130 (typer.core's main): a returned number is the exit code, never dropped
            returned = app(standalone_mode=False)
            code = returned if isinstance(returned, int) and not isinstance(returned, bool) else 0
            if code == 130:
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            # a script must not take a cut-off table for a result: 128 + SIGINT, as a shell reports it; the atomic
            # writers have removed their temporary files on the way out
            _fail("graphlink: interrupted", 130)
        except SystemError as exc:
            # Ctrl-C (or SIGTERM) while numba runs or loads a compiled kernel surfaces as a SystemError ("returned a
            # result with an exception set") caused by the KeyboardInterrupt (or Terminated) the handler raised
            if _caused_by(exc, Terminated):
                _fail("graphlink: terminated", 143)
            if not _caused_by(exc, KeyboardInterrupt):
                raise
            _fail("graphlink: interrupted", 130)
        except Terminated:
            _fail("graphlink: terminated", 143)
        except BrokenPipeError:
            if not _stdout_gone():
                raise                          # a socket or a child's pipe: an internal error, keep the traceback
            _stdout_gone_exit()
        except SystemExit as exc:
            if exc.code not in (0, None) and _stdout_gone():
                _stdout_gone_exit()            # typer answers a broken stdout pipe with a silent exit 1
            raise
        except GraphlinkError as exc:
            _fail(f"graphlink: error: {one_line(words.say(exc))}", exc.exit_code)
        except typer.Exit as exc:
            code = exc.exit_code
        except typer.Abort:
            _fail("graphlink: aborted", 1)
        except _click_exceptions.NoArgsIsHelpError:
            sys.exit(2)                        # the help text was printed
        except usage_errors as exc:
            _fail(f"graphlink: error: {one_line(_usage_message(exc))}", 2)
        except click_errors as exc:
            _fail(f"graphlink: error: {one_line(exc.format_message())}", exc.exit_code)  # type: ignore[attr-defined]
        except MemoryError:
            _fail("graphlink: error: not enough memory for this input (try a smaller release or options)", 2)
        except OSError as exc:
            if not exc.filename:               # no file named: an internal error, keep the traceback
                raise
            _fail(f"graphlink: error: {one_line(exc.filename)}: {one_line(exc.strerror or exc)}", 2)
    if code == 0:
        flush_notes()                          # notes a successful command has not printed yet
    else:
        drop_notes()
    for w in caught:
        typer.echo(f"graphlink: warning: {one_line(words.say(w))}", err=True)
    sys.exit(code)


def run() -> None:
    """The process entry (console script and ``python -m graphlink.cli``): :func:`main`, then the process ends.

    A command that loaded numba's kernels leaves LLVM's code and the JIT's registries to the interpreter's teardown,
    which costs 0.15-0.3 s of one core after the last byte is written (measured on the end-to-end benchmark, whose
    run takes about 2 s).  So once :func:`main` has finished, the standard streams are flushed, the exit handlers run
    as at a normal exit (``atexit``: logging, temporary folders, Spark's gateway), and the process ends with
    ``os._exit``, skipping the freeing of objects (finalizers included: the commands close the files they write
    themselves) and of memory the operating system reclaims anyway.  When anything could
    still need the interpreter — a non-daemon thread running, an exit status that is not a number, a stream that
    cannot be flushed (a closed pipe) — it exits the usual way.  :func:`main` itself never ends the process, so
    tests and callers in the same interpreter keep it.

    It also asks the C allocator to keep freed memory for reuse (:func:`_reuse_freed_memory`) before the
    command runs.
    """
    _reuse_freed_memory()
    import signal

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)      # unwind (temporary files removed), then exit 143
    try:
        main()
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
        others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
        if not isinstance(code, int) or others:
            raise
        try:
            _flush()
            atexit._run_exitfuncs()     # what a normal exit runs (they are cleared: a fallback runs none twice)
            _flush()
        except (OSError, ValueError):
            raise exc from None
        os._exit(code)


def _reuse_freed_memory() -> None:
    """On Linux with glibc, serve large arrays from the heap and keep freed memory for the next ones.

    glibc's allocator maps every block of 128 KiB to 32 MiB afresh and gives it back when freed, so each of a
    command's short-lived arrays (codes, hashes, partitions: tens of MB each on a large release) is faulted in
    page by page again: a quarter of the page faults and a fifth to a half of the system time of the
    end-to-end benchmark (125,000 faults instead of 96,000; peak memory the same within 3 %).  Raising the
    mapping threshold to 1 GiB and the trimming threshold to its maximum lets later arrays reuse the pages of
    earlier ones.  Only the process entry does this (the process ends with the command); where the user set
    the allocator's own variables (``MALLOC_*_``, ``GLIBC_TUNABLES``) they win, and elsewhere it does nothing.
    """
    if not sys.platform.startswith("linux") or environ_has_prefix(("MALLOC_", "GLIBC_TUNABLES")):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt       # glibc and musl (where it does nothing) have it
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3   # from malloc.h
    mallopt(m_mmap_threshold, 1 << 30)
    mallopt(m_trim_threshold, 2**31 - 1)


def _flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()


def _stdout_gone() -> bool:
    """Is stdout a pipe or socket whose reading end is closed?  (``poll`` reports an error on it.)  O(1)."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _stdout_gone_exit() -> None:
    """The reader of stdout left (``graphlink ... | head``): no message, no traceback, and 141 (128 + SIGPIPE,
    as a shell reports a writer whose reader left), so a script under ``set -o pipefail`` sees why."""
    _stdout_to_devnull()
    drop_notes()
    sys.exit(141)


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still buffered for the gone
    reader raises nothing (the Python documentation's advice for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _fail(line: str, code: int) -> None:
    drop_notes()                               # the error is the one line a failed command prints
    typer.echo(line, err=True)
    sys.exit(code)

