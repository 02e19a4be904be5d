"""Error types shared by the library, the CLI (exit codes) and the app (readable messages)."""

from __future__ import annotations


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
