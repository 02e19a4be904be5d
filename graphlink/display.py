"""HTML for result objects in Jupyter (``_repr_html_``): a heading, a line of facts, and bounded tables."""

from __future__ import annotations

from html import escape

import pandas as pd

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
