"""Atomic file output: every file graphlink writes appears complete or not at all.

A writer gets a temporary path in the target's folder (same file system, so the final ``os.replace`` is atomic),
writes there, and only a write that finished without an exception is flushed to disk and renamed over the
target. An exception removes the temporary file and leaves any previous target untouched; a process killed
mid-write leaves at most a hidden ``.<name>.<random>.tmp`` next to it, never a truncated file under the real
name. Cost: one extra ``fsync`` of the file and of its folder per write.

Only regular files are ever replaced: a target that exists and is anything else (a folder, a device such as
``/dev/null``, a FIFO, a socket, or a symbolic link such as ``/proc/self/fd/1`` to one of those) is refused
with a :class:`~graphlink.errors.ReleaseError` before anything is written, and checked again just before the
rename.  :func:`check_output` adds what only a command knows: ``--out`` must name a file, and must not be one
of the command's inputs.  Errors name the user's path, never the temporary one.

Input: every reader of a user's path asks :func:`check_input` first.  It ``stat`` calls on the path and refuses
anything but a regular file (or a folder, where the reader takes one) before it is opened: opening a FIFO
blocks until a writer comes, and a device such as ``/dev/zero`` never ends.  While a command of the CLI runs
(:func:`reading_inputs`) the files it read are remembered, and :func:`atomic_path` refuses to replace any of
them (by device and inode, so a symbolic or hard link to an input is refused too) or to write inside an input
folder: an output never replaces an input, whichever option names it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from graphlink.errors import ReleaseError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


# -------------------------------------------------------------------------------------------------- input
# What the command running in this process has read (:func:`reading_inputs`): (device, inode) of each input
# file and the resolved path of each input folder; None outside a command (library callers may read and write
# the same file on purpose).  A plain global, not a context variable: readers may run on worker threads.
_INPUTS: dict[str, Any] | None = None
_INPUTS_LOCK = threading.Lock()


def input_problem(path: str | Path, *, folder: bool = False) -> str | None:
    """Why ``path`` may not be read as input: it is not a regular file (or, with ``folder``, a folder),
    following symbolic links; None when it may be read, or when it does not exist (the reader's own
    message says so).  Only ``stat`` is called, never ``open``.  O(1) system calls."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if stat.S_ISREG(mode) or (folder and stat.S_ISDIR(mode)):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "something else")
    if folder:
        return f"is {kind}, not a regular file or a folder; expected a file or folder to read"
    return f"is {kind}, not a regular file; expected a file to read"


def check_input(path: str | Path, *, folder: bool = False) -> Path:
    """``path`` as a Path once it is safe to open for reading: a regular file (with ``folder``, also a
    folder) or a path that does not exist (left to the reader's own message).  A FIFO, a character or
    block device (``/dev/zero``), a socket, or a folder where a file is wanted is refused with a
    :class:`~graphlink.errors.ReleaseError` naming the user's path, without opening it.  Inside
    :func:`reading_inputs` the input is remembered, so that no output of the command replaces it.
    O(1) system calls.

    Examples
    --------
    >>> check_input("/dev/zero")
    Traceback (most recent call last):
    ...
    graphlink.errors.ReleaseError: /dev/zero: is a character device, not a regular file; expected a file to read
    """
    from graphlink.diagnostics import Diagnostic

    path = Path(path)
    problem = input_problem(path, folder=folder)
    if problem:
        raise ReleaseError(problem, file=str(path),
                           diagnostic=Diagnostic("input-refused", problem, {"file": str(path)}))
    _remember(path)
    return path


def _remember(path: Path) -> None:
    if _INPUTS is None:
        return
    try:
        st = os.stat(path)
    except OSError:
        return
    with _INPUTS_LOCK:
        if _INPUTS is None:
            return
        if stat.S_ISDIR(st.st_mode):
            _INPUTS["folders"][path.resolve()] = str(path)
        else:
            _INPUTS["files"][(st.st_dev, st.st_ino)] = str(path)


@contextlib.contextmanager
def reading_inputs() -> Iterator[None]:
    """While the block runs (one CLI command), remember every input :func:`check_input` passes, and let
    :func:`atomic_path` refuse to replace one of them or write inside an input folder.  Not re-entrant: an
    inner block shares the outer one's record.  O(1)."""
    global _INPUTS
    outer = _INPUTS
    if outer is None:
        _INPUTS = {"files": {}, "folders": {}}
    try:
        yield
    finally:
        if outer is None:
            _INPUTS = None


def _replaces_input(target: Path) -> str | None:
    """The input (as the user named it) that writing ``target`` would replace or write into, else None."""
    if _INPUTS is None:
        return None
    with _INPUTS_LOCK:
        files, folders = dict(_INPUTS["files"]), dict(_INPUTS["folders"])
    try:
        st = os.stat(target)
        if (st.st_dev, st.st_ino) in files:
            return f"is the same file as {files[(st.st_dev, st.st_ino)]}, which this command reads; name another file"
    except OSError:
        pass
    try:
        where = target.resolve()
    except (OSError, RuntimeError):
        return None
    for folder, name in folders.items():
        if where.is_relative_to(folder):
            return f"is inside the input folder {name}; write somewhere else"
    return None


# ------------------------------------------------------------------------------------------------- output
def output_problem(target: str | Path) -> str | None:
    """Why a regular file may not be written at ``target`` (it exists and is not a regular file, following
    symbolic links; or it names no file), else None.  O(1) system calls."""
    target = Path(target)
    if not target.name or target.name == "..":
        return "names a folder, not a file to write"
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None                      # a new path (a missing folder is created, or refused by mkdir)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}; only a regular file or a new path is written"


def check_output(target: str | Path, *, inputs: Iterable[str | Path | None] = (), option: str = "the output") -> Path:
    """``target`` as a Path once it is safe for a command to write: it names a file, is a regular file or a
    new path (:func:`output_problem`), and is none of ``inputs`` (the same file, by device and inode) nor
    inside an input folder.  Raises :class:`~graphlink.errors.ReleaseError` (one line naming the user's
    path) otherwise.  O(len(inputs)) system calls.

    Examples
    --------
    >>> check_output("out.csv", inputs=["release.csv"])
    PosixPath('out.csv')
    """
    from graphlink.diagnostics import Diagnostic

    raw = str(target)

    def refused(what: str, file: str | None = raw) -> ReleaseError:
        # the option's name is the edge's word (the CLI says --out): a code plus the option as data
        return ReleaseError(f"{option} {what}", file=file,
                            diagnostic=Diagnostic("output-refused", f"{option} {what}",
                                                  {"option": option, "problem": what}))

    if not raw.strip():
        raise refused(f"needs a file name, got {raw!r}", None)
    path = Path(raw)
    problem = output_problem(path) or _replaces_input(path)
    if problem:
        raise refused(problem)
    for given in inputs:
        if given is None or "://" in str(given):
            continue
        inp = Path(given)
        try:
            same = path.resolve() == inp.resolve() or (path.exists() and inp.exists() and os.path.samefile(path, inp))
        except (OSError, RuntimeError):      # a symlink loop
            same = False
        if same:
            raise refused(f"is the same file as {inp}, which this command reads or writes; name another file")
        if inp.is_dir() and path.resolve().is_relative_to(inp.resolve()):
            raise refused(f"is inside the input folder {inp}; write somewhere else")
    return path


def temp_path_for(target: Path) -> Path:
    """A fresh hidden name in ``target``'s folder: ``.<name>.<random>.tmp`` (so no reader takes it for output)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")


def _fsync(path: Path, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # e.g. folders cannot be opened on Windows: the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(target: str | Path, *, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; when the block ends normally, move it onto ``target``.

    The folder is created if needed. ``mode`` sets the permission bits of the result (default: those of the
    file it replaces, else what the umask allows). Whatever the block raises (including KeyboardInterrupt)
    removes the temporary file and leaves ``target`` as it was.  A ``target`` that is not a regular file or
    a new path is refused (:func:`output_problem`), and so is one of the inputs the running command read
    (:func:`reading_inputs`), both before writing and again before the rename; an OSError names ``target``,
    not the temporary file.
    """
    target = Path(target)
    problem = output_problem(target) or _replaces_input(target)
    if problem:
        raise ReleaseError(problem, file=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"nothing was written for {target}")   # a writer's bug: no user path
        if mode is not None:
            tmp.chmod(mode)
        elif target.exists():
            tmp.chmod(target.stat().st_mode & 0o7777)
        _fsync(tmp)
        # again: the path may have changed while we wrote, and the command may have read more inputs since
        problem = output_problem(target) or _replaces_input(target)
        if problem:
            raise ReleaseError(problem, file=str(target))
        os.replace(tmp, target)
        _fsync(target.parent, directory=True)
    except OSError as exc:
        if str(tmp) in (str(exc.filename), str(exc.filename2)) or str(tmp) in str(exc):
            text = (exc.strerror or str(exc)).replace(str(tmp), str(target))
            raise OSError(exc.errno, text, str(target)) from None
        raise
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_open(target: str | Path, how: str = "w", *, mode: int | None = None,
                **open_kwargs: Any) -> Iterator[IO[Any]]:
    """``open()`` for writing (``how`` is ``"w"``, ``"wb"``, ...), atomically: see :func:`atomic_path`.

    With ``mode`` (e.g. ``0o600`` for secrets) the temporary file is created with those bits, so the content is
    never readable by others, not even while it is being written.
    """
    if "w" not in how and "x" not in how:
        raise ValueError(f"atomic_open writes whole files; got mode {how!r}")
    with atomic_path(target, mode=mode) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        if "b" not in how:
            open_kwargs.setdefault("encoding", "utf-8")
        with open(fd, how.replace("x", "w"), **open_kwargs) as fh:
            yield fh
            fh.flush()


def write_with(target: str | Path, writer: Callable[[Path], object], *, mode: int | None = None) -> Path:
    """Call ``writer(temp_path)`` (e.g. ``frame.to_csv``) and move the result onto ``target`` atomically."""
    target = Path(target)
    with atomic_path(target, mode=mode) as tmp:
        writer(tmp)
    return target


def frame_writer(frame: Any, target: str | Path, **kwargs: Any) -> Callable[[Path], object]:
    """``path -> None`` writing ``frame`` as CSV, or Parquet when ``target`` ends in ``.parquet``/``.pq``
    (no index unless ``index=True``): the format follows the final name, not the temporary one."""
    options = {"index": False, **kwargs}
    if Path(target).suffix.lower() in (".parquet", ".pq"):
        return lambda p: frame.to_parquet(p, **options)
    return lambda p: frame.to_csv(p, **options)


def write_frame(frame: Any, target: str | Path, **kwargs: Any) -> Path:
    """A DataFrame to CSV or Parquet (see :func:`frame_writer`), atomically."""
    return write_with(target, frame_writer(frame, target, **kwargs))


def write_text(target: str | Path, text: str, *, mode: int | None = None) -> Path:
    """Text (UTF-8) to ``target``, atomically."""
    with atomic_open(target, "w", mode=mode) as fh:
        fh.write(text)
    return Path(target)


def save_figure(fig: Any, target: str | Path, **kwargs: Any) -> Path:
    """``fig.savefig`` atomically; the format comes from ``target``'s suffix (the temporary name has none)."""
    target = Path(target)
    fmt = kwargs.pop("format", None) or (target.suffix.lstrip(".").lower() or "png")
    return write_with(target, lambda p: fig.savefig(p, format=fmt, **kwargs))
