"""The command line's words for the library's typed results and diagnostics (the CLI may name its flags).

The library states problems in plain sentences that name no flag and attaches a code plus data
(:class:`graphlink.diagnostics.Diagnostic`); here the remedy is said in terms of this command line's options.
The app has its own words (``app/components/words.py``), which point at its controls instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphlink.diagnostics import Diagnostic, render

if TYPE_CHECKING:
    from graphlink.core.model import ModelDecision

_MANY = ("if one de-identified element can stand for several people (households), read the release as one-to-many "
         "with --reserved identified")

#: code -> the CLI's remedy from the diagnostic's data ("" keeps the library's)
REMEDIES: dict[str, Callable[[dict], str]] = {
    "method-needs-one-to-one": lambda d: (
        "use --method multiple (REIDIT-M) or --method true-loves (exact certain pairs for one-to-many data)"
        + ("" if d.get("stated_many") else "; if every de-identified element stands for one person, state "
                                           "--multiplicity one-to-one")),
    "mixed-sizes": lambda d: ("if you know which side withholds, state it with --reserved identified or --reserved "
                              "deidentified (the analyses then report where the data breaks it)"),
    "one-to-many-deidentified-reserved": lambda d: ("one-to-many releases are read with --reserved identified "
                                                    "(people may withhold) or --reserved none (nothing withheld)"),
    "side-undecided": lambda d: ("state it with --reserved deidentified (one-to-one) or --reserved identified "
                                 "(one-to-many, e.g. households)"),
    "reidit-conflicts": lambda d: f"{_MANY} and use --method multiple",
    "reidit-m-orphans": lambda d: "" if d.get("one_to_many") else _MANY,
    "hall-fails": lambda d: f"{_MANY} and use --method multiple or true-loves",
    "unlink-one-to-many": lambda d: ("use --method keep-most, which withholds people's records instead, or state "
                                     "--multiplicity one-to-one if every de-identified element belongs to one person"),
    "unlink-one-to-many-side": lambda d: "leave --side auto, or state --side identified",
    "unlink-one-to-many-too-few": lambda d: "choose a smaller --k",
    "unlink-side-undecided": lambda d: "state --multiplicity one-to-one or one-to-many to protect it",
    "risk-one-to-many": lambda d: "state --multiplicity one-to-one if each record stands for one person",
    "store-name-taken": lambda d: "choose another --name or replace it",
    "store-read-only": lambda d: "pass --write to run it",
    "store-bulk-refused": lambda d: f"load with --bulk auto ({d.get('other')}) instead",
}


def _method_unknown(d: dict, where: str) -> str:
    return f"--method must be one of {', '.join(d['choices'])}"


def _method_parameter(d: dict, where: str) -> str:
    if d.get("value") is None:
        return f"--method {d['method']} needs --{d['parameter']} ({d['words']})"
    return f"{d['label']}: --{d['parameter']} ({d['words']}) must be {d['expected']}, got {d['value']!r}"


def _invalid_choice(d: dict, where: str) -> str:
    return f"--{d['option']} must be one of {', '.join(d['choices'])}"


def _folder_key(d: dict, where: str) -> str:
    from graphlink.core.tabular import names_list

    flag = "--id-key" if d["side"] == "identified" else "--deid-key"
    return (f"{where}cannot tell which column(s) hold the {d['side']} key; name them with {flag} "
            f"(columns: {names_list(list(d['columns']))})")


def _output(d: dict, where: str) -> str:
    # the library's "the output" is this command line's --out; a command that names another option keeps it
    option = "--out" if d["option"] == "the output" else d["option"]
    return f"{where}{option} {d['problem']}"


#: code -> the whole line in the CLI's words, from the diagnostic's data and where it is (never the library's text)
REWRITES: dict[str, Callable[[dict, str], str]] = {
    "invalid-choice": _invalid_choice,
    "output-refused": _output,
    "folder-key-missing": _folder_key,
    "method-unknown": _method_unknown,
    "method-parameter": _method_parameter,
}


def say(obj: Any) -> str:
    """An error's, a warning's or a diagnostic's text in the CLI's words: the library's sentence, its remedy said
    with this command line's flags where the code has one.  Anything without a diagnostic: ``str(obj)``.

    Examples
    --------
    >>> from graphlink.errors import ModelAssumptionError
    >>> exc = ModelAssumptionError(diagnostic=Diagnostic("side-undecided", "cannot tell which side is reserved",
    ...                                                  remedy="state the reserved side"))
    >>> str(exc)
    'cannot tell which side is reserved; state the reserved side'
    >>> print(say(exc))  # doctest: +NORMALIZE_WHITESPACE
    cannot tell which side is reserved; state it with --reserved deidentified (one-to-one) or
    --reserved identified (one-to-many, e.g. households)
    """
    return render(obj, REMEDIES, REWRITES)


def diagnostic_text(d: Diagnostic | None, default: str = "the data breaks the model") -> str:
    """A result's diagnostic in the CLI's words (``default`` when there is none)."""
    return say(d) if d is not None else default


def model_line(model: ModelDecision) -> str:
    """The ``model:`` note: one plain sentence (``Model: each de-identified record belongs to ...``)."""
    return model.sentence


def model_reading(model: ModelDecision) -> str:
    """The reading without its ``Model:`` label (the model note sets the label in bold)."""
    return model.reading


def model_details(model: ModelDecision) -> str:
    """The same decision in the thesis's notation, how it was decided and why (shown with ``--explain``)."""
    return f"model (thesis notation): {model.label} ({model.how}): {model.reason}"


def method_name(method: str) -> str:
    """A method as the CLI names it to people (its registry label; the option values stay the command's
    vocabulary)."""
    from graphlink import registry

    return registry.labels("reidentify").get(method, method)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def summary_lines(s: Any) -> list[str]:
    """A :class:`~graphlink.analysis.results.ReidentifySummary` as short lines in plain words, numbers rounded
    (the terminal's summary under the pairs; ``--format json`` keeps every field exactly).

    Examples
    --------
    >>> from graphlink.analysis.results import ReidentifySummary
    >>> for line in summary_lines(ReidentifySummary(method="true-loves", reidentified=3, pairs=3, identified=4,
    ...                                             deidentified=4, correct=3, wrong=0, truth_pairs=4,
    ...                                             precision=1.0, recall=0.75)):
    ...     print(line)
    true loves: 3 of 4 identified people re-identified (3 pairs listed).
    Against the truth: 3 correct, 0 wrong (precision 100.0 %, recall 75.0 % of 4 true pairs).
    """
    name = method_name(s.method)
    people = "" if s.identified is None else f" of {s.identified:,} identified people"
    head = f"{name}: {s.reidentified:,}{people} re-identified ({s.pairs:,} pair{'s' if s.pairs != 1 else ''} listed)"
    if s.k is not None and s.k_reidentified is not None:
        head += f"; {s.unique:,} settled uniquely and {s.k_reidentified:,} narrowed to at most {s.k} candidates"
    lines = [head + "."]
    if s.correct is not None:
        line = f"Against the truth: {s.correct:,} correct, {s.wrong or 0:,} wrong"
        if s.precision is not None and s.recall is not None:
            line += f" (precision {_pct(s.precision)}, recall {_pct(s.recall)} of {s.truth_pairs or 0:,} true pairs)"
        lines.append(line + ".")
    if s.model_ok is False:
        lines.append("The data do not fit the stated model: " + diagnostic_text(s.diagnostic) + ".")
    elif s.unsolved:
        lines.append(f"Not fully checked: {s.unsolved:,} group{'s' if s.unsolved != 1 else ''} of candidates beyond "
                     "the search budget (only pairs proven outside them are listed).")
    return lines
