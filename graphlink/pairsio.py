"""Writing re-identified pairs in bulk: CSV through Arrow's writer instead of row by row.

:func:`write_pairs_csv` writes what :func:`graphlink.tabular.write_csv` writes (pandas' minimal quoting, every
field quoted when a value holds a lone carriage return, so that every reader gets the values back): when the
pairs are still kept as arrays (:class:`graphlink.reidit.PairColumns`) and no value needs quoting, Arrow writes
them unquoted in one call, the same bytes; otherwise pandas does.  O(pairs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from graphlink.reidit import Reidentification

#: characters that make pandas quote a CSV field (delimiter, quote character, line ends)
_NEEDS_QUOTES = r'[,"\r\n]'


def write_pairs_csv(result: Reidentification, columns: list[str], stream: TextIO) -> None:
    """Write ``columns`` of the pairs as CSV with a header to the text stream ``stream``.  O(pairs)."""
    import pyarrow.compute as pc

    table = result.table(columns)
    buffer = getattr(stream, "buffer", None)
    if table is None or buffer is None or any(
            pc.any(pc.match_substring_regex(table.column(c), _NEEDS_QUOTES)).as_py() for c in columns) or any(
            not c.isidentifier() for c in columns):
        from graphlink.tabular import write_csv

        write_csv(result.pairs[columns], stream)
        return
    import pyarrow.csv as pacsv

    stream.write(",".join(columns) + "\n")
    stream.flush()
    pacsv.write_csv(table, buffer, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    buffer.flush()
