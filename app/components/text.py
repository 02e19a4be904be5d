"""User text in Markdown: every value from an upload or a computation on it (file names, location names, element
keys, column names, recipient names, error messages that quote them) goes through :func:`md` before it reaches
a Streamlit call that renders Markdown — ``st.markdown``/``st.caption``/``st.title``/``st.subheader``,
``st.error``/``st.warning``/``st.info``/``st.success``, ``st.write`` of a string, metric labels and widget labels.

Streamlit's Markdown is GitHub-flavoured with its own extensions: links and images (``[t](u)``, ``![x](u)``,
bare ``http://`` and ``www.`` autolinks, ``<http://...>``), raw HTML (escaped by Streamlit, but ``<...>``
autolinks are not), emphasis, headings, lists, tables, colour directives (``:red[...]``), emoji and icon
shortcodes (``:material/...:``) and LaTeX (``$...$``).  :func:`md` backslash-escapes every ASCII punctuation
character (CommonMark lets any of them be escaped, and an escaped character starts none of these), puts an
invisible WORD JOINER into ``http:``, ``https:``, ``www.`` and before ``@`` (GFM links those by matching the
text after escapes are resolved), and shows control characters as escapes (``\\x1b``, ``\\n``), so a value
renders as its own characters and nothing else: no image is fetched, no link is drawn, no line break ends the
sentence.  Values shown in ``st.dataframe``, charts
and the graph are text already (canvas and SVG) and need no escaping.
"""

from __future__ import annotations

import re
import string

from graphlink.display import terminal_text

_ESCAPE = {ord(ch): "\\" + ch for ch in string.punctuation}
#: GitHub-flavoured Markdown links bare ``http://``, ``https://``, ``www.`` and e-mail addresses by matching the
#: *text* after escapes are resolved, so escaping cannot stop it: a WORD JOINER (U+2060, invisible, no line
#: break) splits each such pattern instead
_AUTOLINK = re.compile(r"(?i)(https?)(?=:)|\b(www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def md(value: object) -> str:
    """``value`` as Markdown that renders exactly as its characters (see the module docstring).  O(len).

    Examples
    --------
    >>> md("![x](y.png)")
    '\\\\!\\\\[x\\\\]\\\\(y\\\\.png\\\\)'
    """
    text = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2) or "") + WORD_JOINER, terminal_text(value))
    return text.translate(_ESCAPE)


def one_line(exc: BaseException | object) -> str:
    """An error (or any message) as one escaped Markdown line: its first line only, never a traceback."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return md(first)


#: a spreadsheet reads a cell that starts with one of these as a formula (OWASP, "CSV injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_csv(frame: object) -> bytes:
    """A table as CSV for people who open it in a spreadsheet: a text cell that starts like a formula gets a
    leading apostrophe, so ``=HYPERLINK(...)`` in an element key shows as text and never runs.  Only the app's
    tables for people go through it; the files graphlink reads back (releases, the CLI's ``--format csv``) keep
    every key as it is.  O(cells).

    Examples
    --------
    >>> import pandas as pd
    >>> print(spreadsheet_csv(pd.DataFrame({"identified": ["=SUM(1)", "Ali"], "n": [1, 2]})).decode(), end="")
    identified,n
    '=SUM(1),1
    Ali,2
    """
    import pandas as pd

    def cell(value: object) -> object:
        return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value

    out = pd.DataFrame(frame).copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(cell)
    return out.to_csv(index=False).encode()
