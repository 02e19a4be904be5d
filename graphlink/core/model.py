"""The data model of a release: its multiplicity and which side is reserved (thesis §3.3, Lemma 6; Appendix A).

Two orthogonal assumptions decide how trails are filled and which algorithms are sound (Table A.1):

* **reserved side** — the side whose tables may withhold records (its trails get ``*`` where absent);
* **multiplicity** — *one-to-one* (a bijection between identified and de-identified elements, thesis ch. 2–9)
  or *one-to-many* (Definition 27: a surjection β: M → N; one de-identified element, e.g. a household's IP
  address, stands for several identified people, and its trail is the union of theirs).

The thesis decides the reserved side from per-location sizes (Lemma 6, TR02 Lemma 3.3): |ω_c| ≤ |γ_c| at every
location reads as "de-identified reserved".  That reading is right for one-to-one data and wrong for one-to-many
data, where |ω_c| ≤ |γ_c| holds because several people share one de-identified element.  Table A.1 marks
"de-identified reserved, one-to-many" N/A and Theorem 9 covers REIDIT-M only when the identified side is
reserved (or nothing is), so for one-to-many data the identified side is always the reserved one: a person's
absence from a location is no evidence that their household was absent (another member may have been there).

Decision rule (``requested="auto"``), with |M| identified and |N| de-identified elements:

1. sizes all equal → unreserved one-to-one, unless |N| < |M| (a bijection is impossible): one-to-many.
2. every |γ_c| ≤ |ω_c| (some strictly) → identified reserved, read one-to-many.  With |N| < |M| no injection
   M → N exists, so one-to-one is impossible.  With |N| ≥ |M| both fit: a one-to-many release whose identified
   side withholds need not be surjective (a household whose members were never released keeps its element), so
   no count or link test separates the two.  Every one-to-one assignment is also a one-to-many one, hence the
   pairs certain under the one-to-many reading are certain under both; that is the reading chosen, and the
   reason says how to state ``--multiplicity one-to-one`` for REIDIT-C/I and one-to-one true loves.  (An
   earlier rule read |N| = |M| as one-to-one because "a surjection is a bijection"; with unreleased members the
   map need not be a surjection, and simulated households named people wrongly under that reading.)
3. every |ω_c| ≤ |γ_c| → de-identified reserved one-to-one (B) or one-to-many (D).  With |N| ≥ |M| only B is
   possible (D with |N| = |M| is a bijection, whose sizes would satisfy |γ_c| ≤ |ω_c| too).  With |N| < |M|
   the link graphs decide: B is refuted by a de-identified element that fits no identified trail (it cannot be
   a withheld copy of anyone's records), D by an identified trail contained in no de-identified trail (its
   household would have to be absent somewhere the person was seen).  Exactly one refuted → the other.
   Neither refuted → B also needs every de-identified element matched to a distinct person (Hall's condition);
   if that fails, D.  Both still fit → refuse (:class:`ModelAssumptionError`) and ask the user to state
   ``--reserved``.  Both refuted → keep the size reading (B) and say that the release fits neither model; the
   analyses then report the broken model.
4. mixed sizes → only one-to-many can explain them (identified withholding in households), whatever |N| and
   |M|; if every identified trail is contained in a de-identified one it is chosen, otherwise the release is
   refused with the offending locations and trails, and how to state ``--reserved``.

One-to-many data decided automatically is read with the identified side reserved: members may have withheld
records, so a de-identified element need not stand for any *released* person.  Only a user who states
``--reserved none`` (nothing withheld, Corollary 7) gets the extra inference that every de-identified element
stands for at least one released person (:mod:`graphlink.analysis.onetomany`).

``auto`` infers one-to-many only from evidence that elements are shared: fewer de-identified than identified
elements (|N| < |M|) plus, where the sizes allow both readings, the links.  A user who knows the multiplicity
states it (``multiplicity="one-to-one"`` keeps the thesis's size test alone; ``"one-to-many"`` reads the
identified side as reserved, or unreserved with ``--reserved none``; ``--reserved deidentified`` is N/A there,
Table A.1).  An explicit ``--reserved`` is the user's declaration too: ``deidentified`` means one-to-one,
``none`` means one-to-many exactly when |N| < |M| (step 1's counting argument), and ``identified`` is read
one-to-many (step 2) unless ``--multiplicity one-to-one`` is stated as well.

Cost: O(|C|) for the size test; where step 3/4 needs links, one scan per reserved class of the complete
classes disclosed at its rarest known-1 location, with early exit (:func:`graphlink.kernels.links.first_links`;
O(|R_class|·|S_class|·W) at worst), plus a class-level max-flow only when neither model is refuted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from graphlink.core.release import LocationSizes, ReleaseWarning
from graphlink.diagnostics import Diagnostic, warn
from graphlink.errors import ModelAssumptionError

if TYPE_CHECKING:
    import pandas as pd


Reserved = Literal["deidentified", "identified", "none"]
ReservedChoice = Literal["auto", "deidentified", "identified", "none"]
Multiplicity = Literal["one-to-one", "one-to-many"]
MultiplicityChoice = Literal["auto", "one-to-one", "one-to-many"]
RESERVED_CHOICES = ("auto", "deidentified", "identified", "none")
MULTIPLICITY_CHOICES = ("auto", "one-to-one", "one-to-many")
ONE_TO_ONE: Multiplicity = "one-to-one"
ONE_TO_MANY: Multiplicity = "one-to-many"


class ModelWarning(ReleaseWarning):
    """The data model was decided with a caveat (e.g. a stated side the sizes contradict)."""


@dataclass(frozen=True)
class Fill:
    """Packed trail words of both sides under one model (what :func:`graphlink.core.trails.build_trails` keeps).

    ``id_weight``/``de_weight`` (optional) say how many elements each row stands for, so an engine that holds
    twin classes elsewhere (:mod:`graphlink.engines.spark`) can pass a few member rows per class instead of every
    element; ``None`` means one element per row.
    """

    id_known: np.ndarray
    id_ones: np.ndarray
    de_known: np.ndarray
    de_ones: np.ndarray
    id_keys: np.ndarray
    de_keys: np.ndarray
    id_weight: np.ndarray | None = None
    de_weight: np.ndarray | None = None


#: how a decision was reached, in words (``ModelDecision.decided_by``)
DECIDED_BY = {"requested": "as requested", "sizes": "from the per-location sizes",
              "counts": "from the element counts", "links": "from the link graph"}


@dataclass(frozen=True)
class ModelDecision:
    """How a release is read: the reserved side (orientation of ``*``), the multiplicity, how it was decided and
    the evidence, as data (Malin 2006 §3.3, Lemma 6; Appendix A).

    Attributes
    ----------
    reserved : {"deidentified", "identified", "none"}
        The side whose locations may withhold records.
    multiplicity : {"one-to-one", "one-to-many"}
        One identified person per de-identified element, or several (Definition 27).
    reason : str
        The argument in the thesis's notation (|γ_c|, |ω_c|, Lemma 6, ...), for readers who ask for it.
    decided_by : {"requested", "sizes", "counts", "links"}
        What settled it: the user's statement, the per-location sizes, the element counts or the link graph.
    evidence : Diagnostic, optional
        The facts behind it (code ``model-decided``): element counts, the size reading, the locations with more
        records on one side, the elements that refute a reading.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.core.trails import build_trails
    >>> m = build_trails(gl.thesis_example()).model
    >>> m.multiplicity, m.reserved, m.decided_by
    ('one-to-one', 'deidentified', 'sizes')
    >>> print(m.sentence)  # doctest: +NORMALIZE_WHITESPACE
    Model: each de-identified record belongs to one identified person (one-to-one);
    locations may withhold de-identified records.
    >>> m.evidence.data["n_identified"]
    4
    """

    reserved: Reserved
    multiplicity: Multiplicity
    reason: str
    decided_by: Literal["requested", "sizes", "counts", "links"]
    evidence: Diagnostic | None = None

    @property
    def label(self) -> str:
        """The short label: ``one-to-one, de-identified reserved`` (thesis notation)."""
        side = {"none": "unreserved", "identified": "identified reserved",
                "deidentified": "de-identified reserved"}[self.reserved]
        return f"{self.multiplicity}, {side}"

    @property
    def sentence(self) -> str:
        """The reading as one plain sentence for people (no notation): ``Model:`` and :attr:`reading`."""
        return f"Model: {self.reading}"

    @property
    def reading(self) -> str:
        """The reading alone, without the ``Model:`` label (the edges set the label in their own type:
        ``each de-identified record belongs to one identified person (one-to-one); ...``)."""
        who = ("each de-identified record belongs to one identified person (one-to-one)"
               if self.multiplicity == ONE_TO_ONE else
               "a de-identified record may stand for several identified people, e.g. a household (one-to-many)")
        side = {"none": "no location withheld records",
                "identified": "locations may withhold identified records",
                "deidentified": "locations may withhold de-identified records"}[self.reserved]
        return f"{who}; {side}."

    @property
    def how(self) -> str:
        """How it was decided, in words: ``from the per-location sizes``."""
        return DECIDED_BY.get(self.decided_by, self.decided_by)

    def as_dict(self) -> dict:
        """multiplicity, reserved, decided_by, reason (the keys of the CLI's JSON ``model``) and the evidence."""
        out = {"multiplicity": self.multiplicity, "reserved": self.reserved, "decided_by": self.decided_by,
               "reason": self.reason}
        if self.evidence is not None:
            out["evidence"] = self.evidence.as_dict()["data"]
        return out


#: the earlier name of :class:`ModelDecision`
Model = ModelDecision


FillFn = Callable[[Reserved, Multiplicity], Fill]


def _listing(sizes: pd.DataFrame | LocationSizes, locs: list[str]) -> str:
    sizes = LocationSizes.of(sizes)
    at = {c: i for i, c in enumerate(sizes.locations)}
    shown = [f"{c} ({sizes.identified[at[c]]:,} identified, {sizes.deidentified[at[c]]:,} de-identified records)"
             for c in locs[:10]]
    return "; ".join(shown) + (f"; ... {len(locs) - 10} more" if len(locs) > 10 else "")


def size_reading(sizes: pd.DataFrame | LocationSizes) -> tuple[str, list[str], list[str]]:
    """Lemma 6 on per-location sizes: ``none``, ``deidentified``, ``identified`` or ``mixed``, plus the
    locations with more de-identified and with more identified records.  O(|C|)."""
    sizes = LocationSizes.of(sizes)
    g, w = sizes.identified, sizes.deidentified
    more_de = [sizes.locations[i] for i in np.flatnonzero(w > g)]
    more_id = [sizes.locations[i] for i in np.flatnonzero(g > w)]
    if not more_de and not more_id:
        return "none", more_de, more_id
    if not more_de:
        return "deidentified", more_de, more_id
    if not more_id:
        return "identified", more_de, more_id
    return "mixed", more_de, more_id


def decide_reserved(sizes: pd.DataFrame | LocationSizes, requested: ReservedChoice = "auto") -> tuple[Reserved, str]:
    """The one-to-one size test alone (thesis Lemma 6, TR02 Lemma 3.3); see :func:`decide` for the full rule.

    ``auto``: unreserved if every |γ_c| = |ω_c|; de-identified reserved if every |ω_c| ≤ |γ_c|; identified
    reserved if every |γ_c| ≤ |ω_c|; mixed sizes raise :class:`ModelAssumptionError` listing the locations.  A
    requested direction the sizes contradict is kept with a :class:`ModelWarning`.  O(|C|).
    """
    if requested not in RESERVED_CHOICES:
        raise _invalid("reserved", requested, RESERVED_CHOICES)
    reading, more_de, more_id = size_reading(sizes)
    if requested == "auto":
        if reading == "none":
            return "none", "unreserved: every location disclosed as many identified as de-identified records"
        if reading == "deidentified":
            return "deidentified", (f"de-identified reserved to identified: every location has |ω_c| ≤ |γ_c| "
                                    f"({len(more_id)} of {len(sizes)} withhold some de-identified records)")
        if reading == "identified":
            return "identified", (f"identified reserved to de-identified: every location has |γ_c| ≤ |ω_c| "
                                  f"({len(more_de)} of {len(sizes)} withhold some identified records)")
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "mixed-sizes",
            "inconsistent release: neither side is reserved to the other. Locations with more de-identified "
            f"than identified records: {_listing(sizes, more_de)}. Locations with more identified than "
            f"de-identified records: {_listing(sizes, more_id)}. The one-to-one trail model needs one direction "
            "at every location",
            {"more_deidentified": more_de[:50], "more_identified": more_id[:50]},
            remedy="if you know which side withholds, state the reserved side as identified or deidentified (the "
                   "analyses then report where the data breaks it)"))
    bad = {"deidentified": more_de, "identified": more_id, "none": more_de + more_id}[requested]
    if bad:
        what = {"deidentified": "withheld de-identified records mean no location discloses more de-identified "
                                "than identified records",
                "identified": "withheld identified records mean no location discloses more identified than "
                              "de-identified records",
                "none": "nothing withheld means every location discloses as many identified as de-identified "
                        "records"}[requested]
        note = (f"reserved side {requested} as requested, although {what}; offending locations: "
                f"{_listing(sizes, bad)}")
        warn(Diagnostic("stated-side-contradicted", note, {"reserved": requested, "offending": bad[:50]}),
             ModelWarning, stacklevel=3)
        return requested, note
    return requested, f"{requested} (as requested; consistent with the per-location sizes)"


# --------------------------------------------------------------------------------------------- link evidence
def _unlinked(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray) -> np.ndarray:
    """Reserved rows that link no complete row, found on twin classes.  O(classes_R · classes_S · W)."""
    from graphlink.kernels.links import first_links
    from graphlink.kernels.rows import row_classes

    r_rep, r_class = row_classes(r_known, r_ones)
    s_rep, _ = row_classes(s_ones)
    hit = first_links(r_known[r_rep], r_ones[r_rep], s_ones[s_rep])
    return np.flatnonzero(hit[r_class] < 0)


def _count(rows: np.ndarray, weight: np.ndarray | None) -> int:
    """How many elements the rows stand for (see :class:`Fill`)."""
    return len(rows) if weight is None else int(weight[rows].sum())


def _saturated(r_known: np.ndarray, r_ones: np.ndarray, s_ones: np.ndarray, r_weight: np.ndarray | None = None,
               s_weight: np.ndarray | None = None) -> bool:
    """Whether a matching covers every reserved row (Hall's condition), on twin classes by max-flow with class
    sizes as capacities (rows weighted as in :class:`Fill`; the numba twin engine,
    :func:`graphlink.kernels.flow.twin_flow`).  O(max-flow on the class graph)."""
    from graphlink.kernels.flow import twin_flow
    from graphlink.kernels.links import class_links
    from graphlink.kernels.rows import row_classes

    r_rep, r_class = row_classes(r_known, r_ones)
    s_rep, s_class = row_classes(s_ones)
    a = np.bincount(r_class, weights=r_weight, minlength=len(r_rep)).astype(np.int64)
    b = np.bincount(s_class, weights=s_weight, minlength=len(s_rep)).astype(np.int64)
    ci, cj = class_links(r_known[r_rep], r_ones[r_rep], s_ones[s_rep])
    return twin_flow(a, b, ci, cj, classify=False)["nu"] == int(a.sum())


def _invalid(option: str, value: object, choices: tuple[str, ...]) -> ModelAssumptionError:
    return ModelAssumptionError(diagnostic=Diagnostic(
        "invalid-choice", f"the {option} must be one of {', '.join(choices)} (not {value!r})",
        {"option": option, "value": value, "choices": list(choices)}))


def _evidence(n_m: int, n_n: int, reading: str, more_de: list[str], more_id: list[str],
              **extra: object) -> Diagnostic:
    """The facts behind a decision (``ModelDecision.evidence``)."""
    return Diagnostic("model-decided", f"{n_m:,} identified and {n_n:,} de-identified elements; sizes read "
                      f"{reading}", {"n_identified": n_m, "n_deidentified": n_n, "size_reading": reading,
                                     "more_deidentified": more_de[:50], "more_identified": more_id[:50],
                                     "n_more_deidentified": len(more_de), "n_more_identified": len(more_id),
                                     **extra})


#: how many elements the model's evidence names (an engine that passes class samples keeps this many per class)
EVIDENCE_KEYS = 5


def _names(keys: np.ndarray, rows: np.ndarray, total: int, show: int = 3) -> str:
    """The first ``show`` keys, and "…" when they are not all ``total`` elements: rows may be twin classes that
    stand for several elements each (the Spark engine's fill), so their number is not the count."""
    shown = ", ".join(str(keys[r]) for r in rows[:show])
    return shown + (", …" if total > min(show, len(rows)) else "")


# ------------------------------------------------------------------------------------------------ decision
def decide(sizes: pd.DataFrame | LocationSizes, n_identified: int, n_deidentified: int, fill: FillFn,
           requested: ReservedChoice = "auto", multiplicity: MultiplicityChoice = "auto") -> tuple[Model, Fill]:
    """Decide the data model of a release (rule in the module docstring) and return it with its trail fill.

    ``fill(reserved, multiplicity)`` builds the packed trails under one model; it is called once for the chosen
    model and, when the sizes cannot decide, once more for the rejected one.
    """
    if requested not in RESERVED_CHOICES:
        raise _invalid("reserved", requested, RESERVED_CHOICES)
    if multiplicity not in MULTIPLICITY_CHOICES:
        raise _invalid("multiplicity", multiplicity, MULTIPLICITY_CHOICES)
    n_m, n_n = n_identified, n_deidentified
    reading, more_de, more_id = size_reading(sizes)
    fewer = n_n < n_m
    many_reason = (f"one-to-many: {n_n:,} de-identified elements for {n_m:,} identified ones, so several identified "
                   "people share one de-identified element (Appendix A, Definition 27); the identified side is "
                   "read as reserved (a person's absence is no evidence about their shared element; Theorem 9; if "
                   "no identified record was withheld, stating that nothing is reserved also uses that every "
                   "de-identified element stands for someone)")

    both_fit = ("one-to-one and one-to-many data (a de-identified element shared by several people, some never "
                "released; Appendix A) both fit a release whose identified side withholds, and the data cannot tell "
                "them apart; read as one-to-many, whose certain pairs are certain under both readings (every "
                "one-to-one assignment is a one-to-many one); state the multiplicity as one-to-one if every "
                "de-identified element stands for one person (REIDIT-C/I and one-to-one true loves)")

    def decision(reserved: Reserved, mult: Multiplicity, reason: str, by: str, **extra: object) -> Model:
        return Model(reserved, mult, reason, by,  # type: ignore[arg-type]
                     _evidence(n_m, n_n, reading, more_de, more_id, **extra))

    def model(reserved: Reserved, mult: Multiplicity, reason: str, by: str) -> tuple[Model, Fill]:
        return decision(reserved, mult, reason, by), fill(reserved, mult)

    def stated_many(side: ReservedChoice, how: str) -> tuple[Model, Fill]:
        if side == "deidentified":
            raise ModelAssumptionError(diagnostic=Diagnostic(
                "one-to-many-deidentified-reserved",
                "one-to-many data with the de-identified side reserved is N/A in thesis Table A.1: no algorithm is "
                "sound there", remedy="one-to-many releases are read with the identified side reserved (people "
                "may withhold) or with nothing reserved (nothing withheld)"))
        chosen: Reserved = "none" if side == "none" else "identified"
        what = ("unreserved: no identified record was withheld, so every de-identified element stands for at least "
                "one released person (Corollary 7)" if chosen == "none" else
                "identified reserved: a person's absence is no evidence about their shared element (Theorem 9)")
        return model(chosen, ONE_TO_MANY, f"one-to-many {how} ({what}; Appendix A, Definition 27)", "requested")

    if multiplicity == "one-to-many":
        return stated_many(requested, "as stated")
    if multiplicity == "one-to-one":
        side, reason = decide_reserved(sizes, requested)
        return model(side, ONE_TO_ONE, "one-to-one as stated; " + reason,
                     "requested" if requested != "auto" else "sizes")
    if requested != "auto":
        if requested == "deidentified":
            side, reason = decide_reserved(sizes, requested)
            return model(side, ONE_TO_ONE, reason, "requested")
        if fewer:   # identified / none with |N| < |M|: no injection M -> N, so one-to-many
            return stated_many(requested, f"(reserved side {requested} with {n_n:,} de-identified elements for "
                                          f"{n_m:,} identified ones: no one-to-one assignment exists)")
        side, reason = decide_reserved(sizes, requested)
        if side == "identified":    # members may be unreleased: one-to-many fits as well as one-to-one
            return model("identified", ONE_TO_MANY, f"{reason}; {both_fit}", "requested")
        return model(side, ONE_TO_ONE, reason, "requested")

    if reading in ("none", "identified"):
        if fewer:
            return model("identified", ONE_TO_MANY, many_reason, "counts")
        side, reason = decide_reserved(sizes, "auto")
        if side == "identified":
            return model(side, ONE_TO_MANY, f"{reason}; {both_fit}", "sizes")
        return model(side, ONE_TO_ONE, reason, "sizes")
    if reading == "deidentified" and not fewer:
        side, reason = decide_reserved(sizes, "auto")
        return model(side, ONE_TO_ONE, reason + " (one-to-one: there are at least as many de-identified as "
                                                 "identified elements)", "sizes")

    # sizes alone cannot tell one-to-one (de-identified reserved) from one-to-many: look at the links
    many = fill("identified", ONE_TO_MANY)
    orphans_m = _unlinked(many.id_known, many.id_ones, many.de_ones)
    if reading == "mixed":
        if len(orphans_m) == 0:
            return decision("identified", ONE_TO_MANY, "sizes differ in both directions, which one-to-one data "
                            "cannot do; every identified trail is contained in a de-identified one: " + many_reason,
                            "links"), many
        try:
            decide_reserved(sizes, "auto")       # raises the inconsistent-release error with the locations
        except ModelAssumptionError as exc:
            d = exc.diagnostic
            n_orphans = _count(orphans_m, many.id_weight)
            raise ModelAssumptionError(diagnostic=Diagnostic(
                d.code, f"{d.message}. One-to-many data (households) would explain mixed sizes, but "
                f"{n_orphans:,} identified trail(s) ({_names(many.id_keys, orphans_m, n_orphans)}) are contained in no "
                "de-identified trail", {**d.data, "orphans": n_orphans,
                                        "first": [str(many.id_keys[r]) for r in orphans_m[:EVIDENCE_KEYS]]},
                remedy=d.remedy)) from None
        raise AssertionError("unreachable")       # pragma: no cover
    one = fill("deidentified", ONE_TO_ONE)
    orphans_n = _unlinked(one.de_known, one.de_ones, one.id_ones)
    _, size_reason = decide_reserved(sizes, "auto")
    lone_n, lone_m = _count(orphans_n, one.de_weight), _count(orphans_m, many.id_weight)
    refuted_one = (f"{lone_n:,} de-identified element(s) ({_names(one.de_keys, orphans_n, lone_n)}) "
                   "fit no identified trail, so they cannot be one person's records with some withheld")
    refuted_many = (f"{lone_m:,} identified trail(s) ({_names(many.id_keys, orphans_m, lone_m)}) "
                    "are contained in no de-identified trail, so no shared element explains them")
    links = {"deidentified_fitting_no_trail": _count(orphans_n, one.de_weight),
             "first_deidentified": [str(one.de_keys[r]) for r in orphans_n[:EVIDENCE_KEYS]],
             "identified_in_no_trail": _count(orphans_m, many.id_weight),
             "first_identified": [str(many.id_keys[r]) for r in orphans_m[:EVIDENCE_KEYS]]}
    if len(orphans_n) and not len(orphans_m):
        return decision("identified", ONE_TO_MANY, f"{refuted_one}; every identified trail is contained in a "
                        f"de-identified one: {many_reason}", "links", **links), many
    if len(orphans_m) and not len(orphans_n):
        return decision("deidentified", ONE_TO_ONE, f"{size_reason}; one-to-one, not one-to-many: {refuted_many}",
                        "links", **links), one
    if not len(orphans_n) and not len(orphans_m):
        # one-to-many with the identified side reserved needs nothing more (members may be withheld); one-to-one
        # needs every de-identified element matched to a distinct person (Hall's condition)
        if not _saturated(one.de_known, one.de_ones, one.id_ones, one.de_weight, one.id_weight):
            return decision("identified", ONE_TO_MANY, "the de-identified elements cannot all be matched to "
                            f"distinct identified people (Hall's condition fails one-to-one): {many_reason}",
                            "links", hall_ok=False, **links), many
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "side-undecided",
            f"cannot tell which side is reserved: no location discloses more de-identified than identified "
            f"records, and the trails fit both "
            f"one-to-one data with de-identified records withheld and one-to-many data ({n_n:,} de-identified "
            f"elements shared by {n_m:,} identified people), which re-identify differently",
            {"n_identified": n_m, "n_deidentified": n_n},
            remedy="state the reserved side: deidentified (one-to-one) or identified (one-to-many, e.g. "
                   "households)"))
    note = (f"{size_reason}; but the release fits neither model: {refuted_one}, and {refuted_many}; the analyses "
            "report the broken model")
    warn(Diagnostic("fits-neither-model", note, links), ModelWarning, stacklevel=3)
    return decision("deidentified", ONE_TO_ONE, note, "links", **links), one
