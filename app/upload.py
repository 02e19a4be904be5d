"""Reading an uploaded release safely: CSV, Parquet, or a zip of per-location folders.

An upload is written to a private temporary folder under a name of our choosing (the user's file name may hold any
character) and read by the library's reader; a zip is unpacked member by member and refused, before anything
unsafe is written, when it could escape the folder or exhaust the disk (``_unzip``). Errors name the uploaded
file, and the path inside a zip, never the temporary copy.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any

#: an upload may not unpack to more than this (a zip bomb is refused before anything is written)
MAX_UNZIPPED_BYTES = 4 << 30
MAX_ZIP_MEMBERS = 10_000


def read_upload(name: str, data: bytes, truth: tuple[str, bytes] | None = None, *,
                max_unzipped_bytes: int = MAX_UNZIPPED_BYTES) -> Any:
    """Read an uploaded CSV / Parquet / zip-of-location-folders through ``graphlink.core.release.read_release``.

    A zip holds one long table, or location folders at its top level or inside one folder.  Refused with
    a one-line ``ReleaseError``: archives that are not valid zips, encrypted or unsupported members,
    member names that leave the folder (``..``, absolute paths), symbolic links, nested zip archives,
    more than :data:`MAX_ZIP_MEMBERS` members or more than ``max_unzipped_bytes`` unpacked.

    Raises ``graphlink.errors.GraphlinkError`` (ReleaseError ...) with a readable message on bad input.
    """
    from graphlink.core.release import read_release
    from graphlink.errors import ReleaseError

    suffix = Path(name).suffix.lower()
    if suffix not in {".csv", ".parquet", ".pq", ".zip"}:
        raise ReleaseError(f"unsupported file type '{suffix or name}': upload a .csv, .parquet or .zip",
                           file=name)
    with tempfile.TemporaryDirectory(prefix="graphlink-upload-") as tmp:
        truth_path = None
        if truth is not None:
            truth_path = Path(tmp) / ("truth" + Path(truth[0]).suffix.lower())
            truth_path.write_bytes(truth[1])
        if suffix == ".zip":
            root = Path(tmp) / "release"
            _unzip(name, data, root, max_unzipped_bytes)
            entries = [p for p in root.iterdir() if not p.name.startswith(("__MACOSX", "."))]
            tables = [p for p in entries if p.is_file() and p.suffix.lower() in {".csv", ".parquet", ".pq"}]
            if len(entries) == 1 and entries[0].is_dir() and any(q.is_dir() for q in entries[0].iterdir()):
                source = entries[0]                     # zip of one folder holding the location folders
            elif len(tables) == 1 and not any(p.is_dir() for p in entries):
                source = tables[0]                      # zip of one long-format table
            else:
                source = root                           # location folders at the top level
        else:
            source = Path(tmp) / f"upload{suffix}"   # not the user's name: it may hold any character
            source.write_bytes(data)
        try:
            return read_release(source, name=Path(name).stem, truth=truth_path)
        except ReleaseError as exc:                  # name the uploaded file, not the temporary copy
            raise _relabel(exc, Path(tmp), name, truth[0] if truth else None) from None


def _relabel(exc: Any, tmp: Path, name: str, truth_name: str | None) -> Any:
    """The same ReleaseError with its file given as the upload's name (and the path inside a zip)."""
    from graphlink.errors import ReleaseError

    if not exc.file or not Path(exc.file).is_relative_to(tmp):
        return exc
    rel = Path(exc.file).relative_to(tmp)
    if rel.parts[0] == "release":
        label = "/".join([name, *rel.parts[1:]])
    elif rel.name.startswith("truth"):
        label = truth_name or rel.name
    else:
        label = name
    return ReleaseError(exc.detail, file=label, row=exc.row, column=exc.column)


def _unzip(name: str, data: bytes, root: Path, max_bytes: int) -> None:
    """Extract a zip upload into ``root`` member by member, refusing anything unsafe (see read_upload)."""
    import stat
    import zlib

    from graphlink.errors import ReleaseError

    root.mkdir(parents=True)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:
                raise ReleaseError(f"the zip holds {len(infos):,} members; at most {MAX_ZIP_MEMBERS:,} are read",
                                   file=name)
            if sum(i.file_size for i in infos) > max_bytes:
                raise ReleaseError(f"the zip would unpack to more than {max_bytes:,} bytes", file=name)
            written = 0
            for info in infos:
                member = info.filename
                target = (root / member).resolve()
                if not target.is_relative_to(root.resolve()) or Path(member).is_absolute():
                    raise ReleaseError(f"unsafe path in zip: {member!r}", file=name)
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise ReleaseError(f"symbolic link in zip: {member!r} (not supported)", file=name)
                if member.lower().endswith(".zip"):
                    raise ReleaseError(f"nested zip archive {member!r}: upload the inner archive itself", file=name)
                if info.flag_bits & 0x1:
                    raise ReleaseError(f"encrypted member {member!r}: upload an unencrypted zip", file=name)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > max_bytes:        # sizes in the headers may lie
                            raise ReleaseError(f"the zip unpacks to more than {max_bytes:,} bytes", file=name)
                        dst.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise ReleaseError(f"not a valid zip archive ({_first_line(exc)})", file=name) from None
    except OSError as exc:
        raise ReleaseError(f"cannot unpack the zip ({exc.strerror or _first_line(exc)})", file=name) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

