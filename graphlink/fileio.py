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
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from graphlink.errors import ReleaseError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


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
                            diagnostic=Diagnostic("output-refused", f"{option} {what}", {"option": option}))

    if not raw.strip():
        raise refused(f"needs a file name, got {raw!r}", None)
    path = Path(raw)
    problem = output_problem(path)
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
    a new path is refused (:func:`output_problem`); an OSError names ``target``, not the temporary file.
    """
    target = Path(target)
    problem = output_problem(target)
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
        problem = output_problem(target)           # again: the path may have changed while we wrote
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
