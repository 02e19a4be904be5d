"""Which REIDIT algorithm applies (thesis Appendix A, Table A.1).

Rows: disclosure tactic; columns: data multiplicity.  ``#`` in the thesis marks the dominant algorithm
(guaranteed to find at least as many correct re-identifications).  Exact true loves apply wherever the
one-to-one model holds and dominate every REIDIT variant there (Theorem 2).

| tactic \\ multiplicity              | one-to-one          | one-to-many |
|------------------------------------|---------------------|-------------|
| unreserved                         | REIDIT-C#, REIDIT-I | REIDIT-M    |
| identified reserved to de-identif. | REIDIT-I#, REIDIT-M | REIDIT-M    |
| de-identified reserved to identif. | N/A (thesis)        | N/A         |

The thesis writes the table for "Γ_M reserved to Ω_N"; for one-to-one data the reserved direction is
symmetric for REIDIT-I (graphlink runs its outer loop over whichever side is reserved), so we recommend
REIDIT-I for de-identified-reserved one-to-one data too and mark the thesis's N/A cell in the note.

The table names the thesis's methods; a method registered with ``advised=True`` (:mod:`graphlink.registry`) is
named after them wherever its spec says it applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphlink import registry

Multiplicity = Literal["one-to-one", "one-to-many"]


@dataclass(frozen=True)
class Advice:
    methods: tuple[str, ...]        # CLI method names, dominant first
    dominant: str | None
    note: str


def _registered(table: tuple[str, ...], one_to_many: bool) -> tuple[str, ...]:
    """Table A.1's methods that are registered, then the registered ``advised`` methods that apply."""
    extra = tuple(s.name for s in registry.specs("reidentify")
                  if s.advised and s.applies(one_to_many) and s.name not in table)
    return tuple(m for m in table if registry.find(m) is not None) + extra


def advise(multiplicity: Multiplicity, reserved: Literal["none", "identified", "deidentified"]) -> Advice:
    """Table A.1 lookup plus graphlink's exact method, and the registered methods advised where they apply.
    O(registered methods).

    Examples
    --------
    Thesis Table A.1 for unreserved one-to-one data: exact true loves first, then REIDIT-C and REIDIT-I:

    >>> from graphlink.analysis.advisor import advise
    >>> advise("one-to-one", "none").methods[:3]
    ('true-loves', 'complete', 'incomplete')
    """
    advice = _table(multiplicity, reserved)
    return Advice(_registered(advice.methods, multiplicity == "one-to-many"), advice.dominant, advice.note)


def _table(multiplicity: Multiplicity, reserved: Literal["none", "identified", "deidentified"]) -> Advice:
    # the notes are read by people (``graphlink advise``, the app): plain words; the sources are Malin 2006,
    # Appendix A (Table A.1, Theorem 9, Lemma 19) and §4.2.5 (tight sets)
    if multiplicity == "one-to-many":
        side = {"none": "unreserved", "identified": "identified reserved", "deidentified": "de-identified reserved"}
        note = (f"one-to-many data ({side[reserved]}): only REIDIT-M is free of false links; REIDIT-I and true "
                "loves assume one-to-one data")
        if reserved == "deidentified":
            note += "; no method is proven for this case — REIDIT-M results are not guaranteed here"
            return Advice(("multiple",), None, note)
        return Advice(("multiple",), "multiple", note)
    if reserved == "none":
        return Advice(("true-loves", "complete", "incomplete"), "true-loves",
                      "unreserved one-to-one: REIDIT-C finds every pair REIDIT-I finds; exact true loves find every "
                      "certain re-identification")
    note = ("reserved one-to-one: REIDIT-I finds every pair REIDIT-M finds; exact true loves find every certain "
            "re-identification, including those REIDIT-I misses (people whose candidates are all taken by a group "
            "with exactly as many candidates as members)")
    if reserved == "deidentified":
        note += ("; the published comparison covers the other direction only, but REIDIT-I is symmetric (its outer "
                 "loop runs over the reserved side)")
    return Advice(("true-loves", "incomplete", "incomplete-k", "multiple"), "true-loves", note)
