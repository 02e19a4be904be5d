"""The app's words for the library's typed results and diagnostics: remedies point at the app's own controls
(the Data page's "Reserved side" and "Multiplicity" selectors, the "Methods" selector of the
Re-identification page), never at a command-line flag (``tests/cli/test_words.py`` checks it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphlink.diagnostics import first, render

_DATA = "on the Data page"
_MANY = (f"if one de-identified element can stand for several people (households), choose 'Multiplicity' "
         f"one-to-many and 'Reserved side' identified {_DATA}")

#: code -> the app's remedy from the diagnostic's data ("" drops the library's)
REMEDIES: dict[str, Callable[[dict], str]] = {
    "method-needs-one-to-one": lambda d: (
        "choose REIDIT-M or Certain pairs (exact) under 'Methods' (the exact pairs for one-to-many data)"
        + ("" if d.get("stated_many") else f"; if every de-identified element stands for one person, choose "
                                           f"'Multiplicity' one-to-one {_DATA}")),
    "mixed-sizes": lambda d: f"if you know which side withholds, choose it under 'Reserved side' {_DATA}",
    "one-to-many-deidentified-reserved": lambda d: (f"choose 'Reserved side' identified (people may withhold) "
                                                    f"or none (nothing withheld) {_DATA}"),
    "side-undecided": lambda d: (f"choose 'Reserved side' deidentified (one-to-one) or identified (one-to-many, "
                                 f"e.g. households) {_DATA}"),
    "reidit-conflicts": lambda d: f"{_MANY}, and use REIDIT-M",
    "reidit-m-orphans": lambda d: "" if d.get("one_to_many") else _MANY,
    "hall-fails": lambda d: f"{_MANY}, and use REIDIT-M or Certain pairs (exact)",
    "unlink-one-to-many": lambda d: (f"choose 'Multiplicity' one-to-one {_DATA} if every de-identified element "
                                     "belongs to one person"),
    "unlink-side-undecided": lambda d: f"choose 'Multiplicity' one-to-one {_DATA} to protect it",
    "risk-one-to-many": lambda d: f"choose 'Multiplicity' one-to-one {_DATA} if each record stands for one person",
    "folder-key-missing": lambda d: "upload per-location tables with an 'element' column, or with a single column",
    "method-unknown": lambda d: "choose one of the methods the selector offers",
    "method-parameter": lambda d: f"set '{d.get('parameter')} for {d.get('label')}' on the page",
}


#: what refuses, as the start of the app's refusal lines (the Secure page names the protocol instead)
WITHHOLDING = "Protection by withholding records"
SECURE = "The secure protocol (protection by withholding records, encrypted)"
_ONE_PERSON = ("If each de-identified element does belong to one person, choose **one-to-one** under "
               f"**Multiplicity** {_DATA}.")
_MANY_ELSEWHERE = (" Read as one-to-many, the release can be protected by withholding people's records instead: "
                   "the command line's Keep-most method does that (this page does not yet).")


def refusal_lines(subject: str = WITHHOLDING) -> dict[str, Callable[[dict, str], str]]:
    """code -> the whole line in the app's words, from the data alone, for the refusals whose library sentence
    cites the thesis's numbering; ``subject`` is what does not apply (protection, or the secure protocol)."""
    lead = f"**{subject} does not apply to this release.** "
    many = _MANY_ELSEWHERE if subject == WITHHOLDING else ""     # the secure protocol has no one-to-many path
    return {
        "unlink-one-to-many": lambda d, where: (
            lead + "It makes each de-identified record one of at least k candidates for one person, but this "
            "release is read as one-to-many: one de-identified element, such as a household's IP address, may "
            "stand for several people. " + _ONE_PERSON + many),
        "unlink-side-undecided": lambda d, where: (
            lead + "The data fit two readings: one-to-one with de-identified records withheld, and "
            "one-to-many with several people per de-identified element; this page protects the first. "
            + _ONE_PERSON + many),
        "unlink-identified-withholding": lambda d, where: (
            lead + "It withholds de-identified records only, so it needs every location to disclose at most "
            f"as many de-identified as identified records; {d.get('count', 0):,} location(s) disclose more: "
            f"{first(d.get('locations', ()))}."),
    }


#: code -> the whole line in the app's words (:func:`refusal_lines` for protection)
REWRITES: dict[str, Callable[[dict, str], str]] = refusal_lines()


def say(obj: Any) -> str:
    """An error's, a warning's or a diagnostic's text in the app's words (the library's sentence when the app
    has no words of its own for its code)."""
    return render(obj, REMEDIES, REWRITES)


def protect_refusal(diagnostic: Any, subject: str = WITHHOLDING) -> str | None:
    """Why protection by withholding (and so the secure protocol, which runs the same methods: ``subject``
    :data:`SECURE`) refuses a release, in the app's words; None when it applies. ``diagnostic`` is what
    ``caches.protect_refusal`` found."""
    return None if diagnostic is None else render(diagnostic, REMEDIES, refusal_lines(subject))


#: the share of the de-identified records withheld beyond which the app warns (the CLI's threshold: half)
WITHHELD_WARNING_SHARE = 0.5


def withholding_note(withheld: int, before: int) -> str | None:
    """A warning when protection withheld every de-identified record, or more than half of them (the same
    threshold as the command line's note); None otherwise.

    Examples
    --------
    >>> withholding_note(1013, 1210)[:60]
    '**More than half of the de-identified records were withheld*'
    >>> withholding_note(10, 1210) is None
    True
    """
    if before and withheld >= before:
        return (f"**Nothing de-identified is left disclosed:** all {before:,} de-identified records were withheld, "
                "so the protected release holds the identified tables only.")
    if withheld > WITHHELD_WARNING_SHARE * before:
        return (f"**More than half of the de-identified records were withheld** ({withheld:,} of {before:,}, "
                f"{100 * withheld / before:.0f} %): the protected release keeps little of the de-identified data. "
                "A smaller k, or another method, withholds less.")
    return None


def figures_table(figures: dict) -> Any:
    """A run's figures (a summary's ``as_dict()``) as a two-column table for people: names in words, numbers with
    thousands separators, method keys as labels, nested values flattened."""
    import pandas as pd

    from graphlink_app.components.labels import label, number, protect_labels

    protection = protect_labels()

    rows = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}{str(k).replace('_', ' ')}: " if isinstance(v, dict) else prefix
                     + str(k).replace("_", " "), v)
            return
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            shown = number(value, 0 if float(value).is_integer() else 3)
        elif isinstance(value, list | tuple):
            shown = first(value) if value else "none"
        elif isinstance(value, str) and (value in protection or value.split(" ")[0] in protection):
            head, _, tail = value.partition(" ")
            shown = label(head, protection) + (f" {tail}" if tail else "")
        else:
            shown = "" if value is None else str(value)
        rows.append({"figure": prefix.rstrip(": "), "value": shown})

    walk("", figures)
    return pd.DataFrame(rows, dtype=object)


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


def model_label(model: Any) -> str:
    """The reading of a release (``ModelDecision``) in words, without the library's short label's jargon.

    Examples
    --------
    >>> import graphlink as gl
    >>> model_label(gl.build_trails(gl.thesis_example()).model)
    'one-to-one, locations may withhold de-identified records'
    """
    side = {"none": "no location withholds records", "identified": "locations may withhold identified records",
            "deidentified": "locations may withhold de-identified records"}.get(model.reserved, str(model.reserved))
    return f"{model.multiplicity}, {side}"


#: what the pages say where pair probabilities are not computed (a release read as one-to-many)
PROBABILITY_NOT_COMPUTED = (
    "How likely each pair is, is not computed for this release: it is read as one-to-many (one de-identified "
    "element, such as a household's IP address, may stand for several people), so people are not assigned to "
    "records one by one and a pair has no probability of that kind. If each de-identified element does belong to "
    f"one person, choose **one-to-one** under **Multiplicity** {_DATA}.")


def probability_words(probability: float, exact: bool, error: float) -> str:
    """A pair's probability as people read it: "0.67 (exact)", "about 0.41 ± 0.05 (estimated)", or, when the
    estimate's 95 % interval covers everything from 0 to 1 (a group of people too large to sample in the time
    allowed), "not known (too many candidates to estimate)". O(1).

    Examples
    --------
    >>> probability_words(2 / 3, True, 0.0), probability_words(0.4132, False, 0.049)
    ('0.67 (exact)', 'about 0.41 ± 0.05 (estimated)')
    >>> probability_words(0.25, False, 0.98)
    'not known (too many candidates to estimate)'
    """
    if exact:
        return f"{probability:.2f} (exact)"
    if probability - error <= 0.0 and probability + error >= 1.0:
        return "not known (too many candidates to estimate)"
    return f"about {probability:.2f} ± {max(error, 0.005):.2f} (estimated)"


def expected_correct_words(summary: Any) -> str:
    """The expected number of people an attacker who names each person's most likely record gets right
    (``RiskSummary.expected_correct_best``): "12" when every probability is exact, "about 2,036" when some were
    estimated (short enough for a metric; the page says beside it what was estimated). O(1)."""
    value = summary.expected_correct_best
    if summary.exact:
        return f"{value:,.1f}".removesuffix(".0")
    return f"about {value:,.0f}"
