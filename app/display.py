"""An element's explanation in words, read from the library's results (the cached ones of
:mod:`graphlink_app.caches`): which methods re-identify it, with their reasons, and why the others do not."""

from __future__ import annotations

from typing import Any

from graphlink_app.caches import classes, reidentification, row_index
from graphlink_app.components.labels import method_labels
from graphlink_app.components.text import md
from graphlink_app.method_choices import method_spec


def explain(key: str, reserved: str, side: str, element: str, _release: Any) -> str:
    """Why an element is or is not re-identified, in plain words, from the library's results: the true-love
    reason (``graphlink.analysis.reidit.true_loves``), the union degree (``EdgeClasses``) and, on graphs small enough
    to answer quickly, REIDIT-I's reason.  Markdown, with every value from the release escaped
    (:func:`graphlink_app.components.text.md`).  One cached re-identification per method; O(pairs) to find the
    element's."""
    col = "identified" if side == "identified" else "deidentified"
    other = "deidentified" if side == "identified" else "identified"
    cls = classes(key, reserved, _release)
    row = row_index(key, reserved, side, _release)[element]
    union = int((cls.union_degree_identified if side == "identified" else cls.union_degree_deidentified)[row])
    # each method with what its silence means: the exact one's names the union degree
    methods = [("true-loves", f"not re-identified with certainty — it has {union} possible partner(s) across all "
                              "maximum matchings (union degree), so no partner is forced.")]
    if cls.graph.n_expanded_edges <= 200_000 and not cls.graph.trails.one_to_many:
        methods.append(("incomplete", "not re-identified."))
    lines = []
    for method, missing in methods:
        res = reidentification(key, reserved, method, None, _release)
        hit = res.pairs[res.pairs[col].astype(str) == element]
        name = method_labels(cls.graph.trails.one_to_many)[method]
        if len(hit):
            r = hit.iloc[0]
            lines.append(f"- **{name}**: re-identified as {md(r[other])} — {md(r['reason'])}")
        elif method_spec(method).exact:
            where = ("consistent assignments of people to de-identified elements" if cls.graph.trails.one_to_many
                     else "maximum matchings")
            lines.append(f"- **{name}**: not re-identified with certainty — it has {union:,} possible partner(s) "
                         f"across all {where}, so no partner is forced.")
        else:
            lines.append(f"- **{name}**: {missing}")
    return "\n".join(lines)

