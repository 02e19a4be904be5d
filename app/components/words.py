"""The app's words for the library's typed results and diagnostics: remedies point at the app's own controls
(the Data page's "Reserved side" and "Multiplicity" selectors, the "Methods" selector of the
Re-identification page), never at a command-line flag (``tests/test_words.py`` checks it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphlink.diagnostics import render

_DATA = "on the Data page"
_MANY = (f"if one de-identified element can stand for several people (households), choose 'Multiplicity' "
         f"one-to-many and 'Reserved side' identified {_DATA}")

#: code -> the app's remedy from the diagnostic's data ("" drops the library's)
REMEDIES: dict[str, Callable[[dict], str]] = {
    "method-needs-one-to-one": lambda d: (
        "choose REIDIT-M or True loves under 'Methods' (exact certain pairs for one-to-many data)"
        + ("" if d.get("stated_many") else f"; if every de-identified element stands for one person, choose "
                                           f"'Multiplicity' one-to-one {_DATA}")),
    "mixed-sizes": lambda d: f"if you know which side withholds, choose it under 'Reserved side' {_DATA}",
    "one-to-many-deidentified-reserved": lambda d: (f"choose 'Reserved side' identified (people may withhold) "
                                                    f"or none (nothing withheld) {_DATA}"),
    "side-undecided": lambda d: (f"choose 'Reserved side' deidentified (one-to-one) or identified (one-to-many, "
                                 f"e.g. households) {_DATA}"),
    "reidit-conflicts": lambda d: f"{_MANY}, and use REIDIT-M",
    "reidit-m-orphans": lambda d: "" if d.get("one_to_many") else _MANY,
    "hall-fails": lambda d: f"{_MANY}, and use REIDIT-M or True loves",
    "unlink-one-to-many": lambda d: (f"choose 'Multiplicity' one-to-one {_DATA} if every de-identified element "
                                     "belongs to one person"),
    "unlink-side-undecided": lambda d: f"choose 'Multiplicity' one-to-one {_DATA} to protect it",
    "folder-key-missing": lambda d: "upload per-location tables with an 'element' column, or with a single column",
    "method-unknown": lambda d: "choose one of the methods the selector offers",
    "method-parameter": lambda d: f"set '{d.get('parameter')} for {d.get('label')}' on the page",
}


def say(obj: Any) -> str:
    """An error's, a warning's or a diagnostic's text in the app's words (the library's sentence when the app
    has no words of its own for its code)."""
    return render(obj, REMEDIES)


#: what a cell shows when a measure does not apply to a method (never a blank cell)
NOT_APPLICABLE = "—"


def _count(value: int | None) -> str:
    return NOT_APPLICABLE if value is None else f"{value:,}"


def _share(value: float | None) -> str:
    return NOT_APPLICABLE if value is None else f"{100 * value:.1f} %"


def reidentify_table(summaries: dict[str, Any]) -> Any:
    """One row per method (``{label: ReidentifySummary}``) under titled columns, numbers rounded, no blank cell
    (a measure that does not apply shows ``—``).  The k columns appear when REIDIT-I-K ran, the truth columns
    when a ground truth was given, the matching column when the true loves ran one-to-one.

    Examples
    --------
    >>> import graphlink as gl
    >>> rel = gl.thesis_example()
    >>> t = reidentify_table({"REIDIT-I-K": gl.reidentify(rel, "incomplete-k", k=2).summary})
    >>> t.loc[0, "Re-identified"], t.loc[0, "k"], t.loc[0, "Precision"]
    ('4', '2', '100.0 %')
    """
    import pandas as pd

    rows = list(summaries.values())
    k_cols = any(s.k is not None for s in rows)
    truth = any(s.truth_pairs is not None for s in rows)
    matching = any(s.maximum_matching_size is not None for s in rows)
    out = []
    for label, s in summaries.items():
        row = {"Method": label, "Re-identified": _count(s.reidentified), "Pairs listed": _count(s.pairs)}
        if k_cols:
            row |= {"k": _count(s.k), "Settled uniquely": _count(s.unique), "k-groups": _count(s.k_reidentified)}
        if truth:
            row |= {"Correct": _count(s.correct), "Wrong": _count(s.wrong), "Precision": _share(s.precision),
                    "Recall": _share(s.recall)}
        if matching:
            row["Maximum matching"] = _count(s.maximum_matching_size)
        row["Model holds"] = {True: "yes", False: "no"}.get(s.model_ok, "not checked")  # type: ignore[arg-type]
        out.append(row)
    return pd.DataFrame(out, dtype=object)


def opening_method(results: dict[str, Any]) -> str:
    """The method the pairs table opens on: true loves when it lists pairs (every one of them is certain under the
    model, the exact answer), otherwise the method whose result lists the most pairs (the first of equals) — REIDIT-C
    finds none on most simulated releases."""
    if len(results.get("true-loves", ())):
        return "true-loves"
    return max(results, key=lambda m: len(results[m]))


_READING = {"none": "every location discloses as many identified as de-identified records",
            "deidentified": "no location discloses more de-identified than identified records",
            "identified": "no location discloses more identified than de-identified records",
            "mixed": "some locations disclose more identified records, others more de-identified ones"}


def evidence_lines(model: Any) -> list[str]:
    """The facts behind a data-model decision (``ModelDecision.evidence``) as short plain lines.

    Examples
    --------
    >>> import graphlink as gl
    >>> evidence_lines(gl.build_trails(gl.thesis_example()).model)[:2]
    ['4 identified and 4 de-identified elements', 'no location discloses more de-identified than identified records']
    """
    from graphlink.diagnostics import first

    d = dict(model.evidence.data) if model.evidence is not None else {}
    if not d:
        return []
    lines = [f"{d['n_identified']:,} identified and {d['n_deidentified']:,} de-identified elements",
             _READING.get(d.get("size_reading", ""), str(d.get("size_reading", "")))]
    for side, word in (("identified", "identified"), ("deidentified", "de-identified")):
        if d.get(f"more_{side}"):
            lines.append(f"{d[f'n_more_{side}']:,} location(s) disclose more {word} records: "
                         f"{first(d[f'more_{side}'])}")
    if d.get("deidentified_fitting_no_trail"):
        lines.append(f"{d['deidentified_fitting_no_trail']:,} de-identified element(s) fit no identified trail: "
                     f"{first(d['first_deidentified'])}")
    if d.get("identified_in_no_trail"):
        lines.append(f"{d['identified_in_no_trail']:,} identified trail(s) are contained in no de-identified "
                     f"trail: {first(d['first_identified'])}")
    if d.get("hall_ok") is False:
        lines.append("the de-identified elements cannot all be matched to distinct people")
    return lines
