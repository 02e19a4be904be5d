"""Atomic file output: every file graphlink writes appears complete or not at all.

A writer gets a temporary path in the target's folder (same file system, so the final ``os.replace`` is atomic),
writes there, and only a write that finished without an exception is flushed to disk and renamed over the
target. An exception removes the temporary file and leaves any previous target untouched; a process killed
mid-write leaves at most a hidden ``.<name>.<random>.tmp`` next to it, never a truncated file under the real
name. Cost: one extra ``fsync`` of the file and of its folder per write.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


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
    removes the temporary file and leaves ``target`` as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"nothing was written to {tmp} for {target}")
        if mode is not None:
            tmp.chmod(mode)
        elif target.exists():
            tmp.chmod(target.stat().st_mode & 0o7777)
        _fsync(tmp)
        os.replace(tmp, target)
        _fsync(target.parent, directory=True)
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
