"""Showing values from data: HTML for result objects in Jupyter (``_repr_html_``), and terminal-safe text for
the CLI's tables and messages.

Values from a release (element keys, location names, column names, reasons that quote them) are data, never
instructions to whatever shows them:

* :func:`html` escapes them for HTML;
* :func:`terminal_text` shows control characters as escapes (``\\x1b``, ``\\n``, ``\\u202e``), so no screen
  clear, cursor move, OSC hyperlink or bidirectional override reaches the terminal;
* :func:`markup_text` also escapes Rich console markup, so ``[/bold]`` or ``[link=...]`` in a key prints as
  itself instead of being read as a style (or failing as a closing tag with nothing open);
* :func:`print_rows`, :func:`print_frame` and :func:`print_pairs` draw Rich tables whose every cell and
  header is such text.
"""

from __future__ import annotations

import unicodedata
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console
    from rich.text import Text

MAX_ROWS = 50


def html(title: str, facts: dict[str, object] | None = None, tables: dict[str, pd.DataFrame] | None = None,
         note: str = "") -> str:
    """A small HTML block: ``title``, ``facts`` as ``key: value`` pairs, each table (first ``MAX_ROWS`` rows)."""
    parts = [f"<div><strong>{escape(title)}</strong>"]
    if facts:
        parts.append("<br>" + " · ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in facts.items()))
    if note:
        parts.append(f"<br><em>{escape(note)}</em>")
    for name, frame in (tables or {}).items():
        more = f" (first {MAX_ROWS} of {len(frame):,})" if len(frame) > MAX_ROWS else ""
        parts.append(f"<p>{escape(name)}{more}</p>" + frame.head(MAX_ROWS).to_html(index=False, na_rep=""))
    return "".join(parts) + "</div>"


def _unsafe(ch: str) -> bool:
    """Control (C0, DEL, C1), format (zero-width, bidirectional overrides), surrogate, private-use or
    unassigned characters, and the Unicode line and paragraph separators."""
    return ch != " " and (unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp"))


def terminal_text(value: object) -> str:
    """``str(value)`` with every character a terminal could act on shown as a Python escape: ESC as
    ``\\x1b``, a line break as ``\\n``, U+202E as ``\\u202e``; printable text (any script) is kept.  O(len).

    Examples
    --------
    >>> terminal_text("a\\x1b[2Jb")
    'a\\\\x1b[2Jb'
    """
    text = str(value)
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii") if _unsafe(ch) else ch for ch in text)


class _Shown:
    """A text stream that shows, rather than sends, what a terminal could act on (:func:`terminal_text`), line
    breaks and tabs excepted: the CSV or table text between them is data."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        lines = text.split("\n")
        self._stream.write("\n".join("\t".join(terminal_text(part) for part in line.split("\t"))
                                     for line in lines))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


def terminal_stream(stream: Any) -> Any:
    """``stream`` itself unless it is a terminal; a terminal gets every escape sequence, control or bidirectional
    character of the data shown as text (``\x1b``), so CSV written to a screen cannot act on it.  O(1); each
    write O(len).

    Examples
    --------
    >>> import io
    >>> terminal_stream(io.StringIO()).__class__.__name__          # a file or a pipe: the data as it is
    'StringIO'
    """
    isatty = getattr(stream, "isatty", None)
    return _Shown(stream) if callable(isatty) and isatty() else stream


def markup_text(value: object) -> str:
    """:func:`terminal_text`, with Rich markup escaped: safe inside a string given to ``Console.print``.

    Examples
    --------
    >>> markup_text("[/bold]")
    '\\\\[/bold]'
    """
    from rich.markup import escape as escape_markup

    return escape_markup(terminal_text(value))


def cell(value: object) -> Text:
    """A table cell that shows ``value`` as plain text (no markup, no control characters)."""
    from rich.text import Text

    return Text(terminal_text(value))


def print_rows(columns: list[str], rows: list[tuple], title: str | None = None, *,
               console: Console | None = None, header: bool = True, right: tuple[int, ...] = ()) -> None:
    """A Rich table of ``rows`` under ``columns``, every header, cell and the title shown as plain text
    (:func:`cell`).  Short columns (keys, counts) are never cut; long ones (reasons) wrap.  ``right``:
    indices of right-justified columns.  O(cells)."""
    from rich.console import Console
    from rich.table import Table

    shown = [[terminal_text(v) for v in row] for row in rows]
    table = Table(title=cell(title) if title else None, show_header=header)
    for i, c in enumerate(columns):
        width = max((len(row[i]) for row in shown), default=0)
        table.add_column(cell(c), no_wrap=width <= 40, min_width=min(max(width, len(str(c))), 40),
                         justify="right" if i in right else "left")
    for row in shown:
        table.add_row(*(cell(v) for v in row))
    (console or Console()).print(table)


def print_frame(df: pd.DataFrame, title: str | None = None, *, console: Console | None = None) -> None:
    """A DataFrame as a table on stdout (see :func:`print_rows`)."""
    print_rows([str(c) for c in df.columns], list(df.itertuples(index=False)), title, console=console)


def print_pairs(title: str, rows: list[tuple[str, Any]], *, console: Console | None = None) -> None:
    """``measure | value`` rows without a header (values right-justified), as plain text."""
    print_rows(["measure", "value"], [(a, b) for a, b in rows], title, console=console, header=False, right=(1,))


# ------------------------------------------------------------------------------------------ deferred notes
#: notes for stderr (Rich markup, values already escaped) held until the command is known to succeed
_NOTES: list[str] = []


def note(line: str) -> None:
    """Queue a note for stderr (e.g. how the release is read).  It is printed by :func:`flush_notes` — before
    the command's output, or by the CLI when the command succeeds — and dropped when the command fails, so an
    error stays the only line on stderr.  ``line`` is Rich markup: escape values with :func:`markup_text`."""
    _NOTES.append(line)


def flush_notes(console: Console | None = None) -> None:
    """Print and forget the queued notes (on stderr unless told otherwise)."""
    if not _NOTES:
        return
    from rich.console import Console

    con = console or Console(stderr=True)
    while _NOTES:
        con.print(_NOTES.pop(0), highlight=False, soft_wrap=True)


def drop_notes() -> None:
    """Forget the queued notes (the command failed: its error is the one line shown)."""
    _NOTES.clear()
