"""Typed summaries of the analyses: one frozen dataclass per result kind, the same fields whatever the method.

The CLI and the app render these (titled columns, plain sentences); they never guess which keys a method left in a
dict.  A field that does not apply to a method, or a measure that needs a ground truth nobody gave, is ``None``
(never a blank string); :meth:`ReidentifySummary.as_dict` leaves such fields out, which keeps the keys of the
CLI's JSON output.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from graphlink import registry

if TYPE_CHECKING:
    from graphlink.core.model import ModelDecision
    from graphlink.diagnostics import Diagnostic


def _plain(value: Any) -> Any:
    from graphlink.diagnostics import _plain as plain

    return plain(value)


@dataclass(frozen=True)
class Evaluation:
    """Re-identified pairs scored against a ground truth (:func:`graphlink.analysis.reidit.evaluate`).

    Attributes
    ----------
    correct : int
        Pairs whose de-identified element went to its true person (REIDIT-I-K: k-groups holding the true person).
    wrong : int
        Pairs (k-groups) that name someone else.
    truth_pairs : int
        Pairs in the ground truth.
    precision : float or None
        ``correct / (correct + wrong)``; None when no pair was reported.
    recall : float
        The share of truth pairs re-identified (REIDIT-I-K: settled uniquely); 0.0 with an empty truth.

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()
    >>> ev = gl.evaluate(gl.reidentify(release, "complete"), release.truth)
    >>> ev.correct, ev.wrong, ev.recall
    (1, 0, 0.25)
    """

    correct: int
    wrong: int
    truth_pairs: int
    precision: float | None
    recall: float

    def as_dict(self) -> dict[str, Any]:
        """``correct``, ``wrong``, ``truth_pairs``, ``precision``, ``recall`` (the keys of the CLI's JSON and of
        :class:`ReidentifySummary`'s fields of the same names)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ReidentifySummary:
    """What one re-identification method found (:func:`graphlink.analysis.reidit.reidentify`).

    Attributes
    ----------
    method : str
        ``complete`` (REIDIT-C), ``incomplete`` (REIDIT-I), ``incomplete-k`` (REIDIT-I-K), ``multiple``
        (REIDIT-M) or ``true-loves`` (Malin 2006 Alg. 2–6, 15, 16; Definition 5).
    reidentified : int
        Elements re-identified: pairs for every method but REIDIT-I-K, where it counts the elements settled
        uniquely plus the k-groups (``unique + k_reidentified``).
    pairs : int
        Rows of the pairs table (REIDIT-I-K: one row per candidate of a k-group).
    model : ModelDecision, optional
        How the release was read (reserved side, multiplicity, how decided, evidence).
    identified, deidentified : int, optional
        The people (identified elements) and de-identified elements of the release.
    model_ok : bool, optional
        False when the method's own check finds the model broken (then no pair is certain and ``diagnostic``
        says why); None when not checked (a component beyond the search budget) or not checkable (REIDIT-C).
    diagnostic : Diagnostic, optional
        Why the model does not hold, as a code plus data.
    k, unique, k_reidentified : int, optional
        REIDIT-I-K: the k, the elements settled uniquely, the k-groups (elements with fewer than k candidates).
    flip : bool, optional
        REIDIT-I: whether the Flip step ran (|M| = |N|, Alg. 6).
    conflicts : tuple of str, optional
        REIDIT-I/-M: the first 50 records left with no compatible candidate.
    maximum_matching_size : int, optional
        True loves, one-to-one: the size of a maximum matching.
    unmatched : tuple of str, optional
        True loves, one-to-one: the first 50 elements no maximum matching covers.
    engine : str, optional
        Which solver found the true loves.
    unsolved : int, optional
        One-to-many: components beyond the search budget (their pairs are not claimed).
    unsolved_text : tuple of str, optional
        One line per unsolved component.
    correct, wrong, truth_pairs : int, optional
        Against a ground truth: pairs right, pairs wrong, pairs in the truth (REIDIT-I-K: k-groups containing
        the true partner count as correct).
    precision, recall : float, optional
        ``correct / (correct + wrong)`` and the share of truth pairs re-identified; None without a truth, or
        (precision) with no pair.

    Examples
    --------
    >>> import graphlink as gl
    >>> s = gl.reidentify(gl.thesis_example(), "incomplete-k", k=2).summary
    >>> s.method, s.reidentified, s.unique, s.k_reidentified, s.precision     # Fig. 3.4 comes with its truth
    ('incomplete-k', 4, 4, 0, 1.0)
    >>> s.as_dict()["reidentified"]
    4
    """

    method: str
    reidentified: int
    pairs: int
    model: ModelDecision | None = None
    identified: int | None = None
    deidentified: int | None = None
    model_ok: bool | None = None
    diagnostic: Diagnostic | None = None
    k: int | None = None
    unique: int | None = None
    k_reidentified: int | None = None
    flip: bool | None = None
    conflicts: tuple[str, ...] | None = None
    maximum_matching_size: int | None = None
    unmatched: tuple[str, ...] | None = None
    engine: str | None = None
    unsolved: int | None = None
    unsolved_text: tuple[str, ...] | None = None
    correct: int | None = None
    wrong: int | None = None
    truth_pairs: int | None = None
    precision: float | None = None
    recall: float | None = None

    def __post_init__(self) -> None:
        for name in ("conflicts", "unmatched", "unsolved_text"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(str(v) for v in value))

    @property
    def multiplicity(self) -> str | None:
        return self.model.multiplicity if self.model is not None else None

    @property
    def reserved(self) -> str | None:
        return self.model.reserved if self.model is not None else None

    @classmethod
    def from_dict(cls, method: str, pairs: int, facts: dict) -> ReidentifySummary:
        """A summary from loose facts (keys as in :meth:`as_dict`; unknown keys are dropped).  For callers that
        build a :class:`~graphlink.analysis.reidit.Reidentification` by hand."""
        names = {f.name for f in fields(cls)} - {"method", "pairs", "model", "diagnostic"}
        kept = {k: v for k, v in facts.items() if k in names}
        kept.setdefault("reidentified", facts.get("reidentified_elements", pairs))
        return cls(method=method, pairs=int(facts.get("pairs", pairs)), **kept)

    def with_(self, **changes: Any) -> ReidentifySummary:
        """A copy with some fields changed (the summary is frozen)."""
        return replace(self, **changes)

    def as_dict(self) -> dict:
        """The fields that apply, as plain JSON-able values: ``model`` as its dict (multiplicity, reserved,
        decided_by, reason, evidence) plus ``reserved`` and ``multiplicity`` at the top, ``diagnostic`` as the
        library's sentence (its code and data under ``diagnostic_code`` and ``diagnostic_data``).  REIDIT-I-K
        also keeps ``reidentified_elements`` (its earlier name for ``reidentified``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "model":
                out["reserved"], out["multiplicity"] = value.reserved, value.multiplicity
                out["model"] = value.as_dict()
            elif f.name == "diagnostic":
                out["diagnostic"] = str(value)
                out["diagnostic_code"] = value.code
                out["diagnostic_data"] = _plain(value.data)
            else:
                out[f.name] = _plain(value)
        spec = registry.find(self.method)
        if spec is not None and spec.candidate_groups:
            out["reidentified_elements"] = self.reidentified
        return out


@dataclass(frozen=True)
class AuditSummary:
    """The k-unlinkability audit's verdict and counts (:func:`graphlink.analysis.audit.audit`, Definition 19).

    Attributes
    ----------
    k : int
        The protection level audited.
    k_unlinkable : bool
        Every element has at least k possible partners, or none that is disclosed.
    true_loves : int
        Certain re-identifications (edges in every maximum matching; one-to-many: pairs in every assignment).
    maximum_matching_size : int
        Over real elements (null trails excluded).
    model_ok : bool
        Hall's condition (one-to-one) or a consistent assignment (one-to-many): whether the model holds.
    identified, deidentified : int
        Elements of each side.
    violations_identified, violations_deidentified : int
        Elements with fewer than k possible partners, per side.
    null_trails : int
        Null trails added for withheld records (§4.2.4).
    multiplicity : str
        ``one-to-one`` or ``one-to-many``.

    Examples
    --------
    >>> import graphlink as gl
    >>> s = gl.audit(gl.build_linkgraph(gl.build_trails(gl.thesis_example())), 2).summary
    >>> s.k_unlinkable, s.true_loves, s.violations_identified + s.violations_deidentified
    (False, 4, 8)
    """

    k: int
    k_unlinkable: bool
    true_loves: int
    maximum_matching_size: int
    model_ok: bool
    identified: int
    deidentified: int
    violations_identified: int
    violations_deidentified: int
    null_trails: int = 0
    multiplicity: str = "one-to-one"

    def as_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class RiskSummary:
    """How likely the re-identifications of a release are (:meth:`graphlink.analysis.risk.RiskResult.summary`).

    A person's *best guess* is the record with the highest probability among their candidates.

    Attributes
    ----------
    reading : str
        ``uniform`` (every consistent assignment equally likely) or ``weighted`` (by the likelihood of the
        withholding it implies).
    people, records : int
        Identified and de-identified elements.
    threshold : float
        The probability a best guess must reach to count in ``above_threshold``.
    exact : bool
        Every probability was computed exactly (no block needed the estimate).
    max_error : float
        Largest 95 % half-width of an estimated probability (0 when exact).
    model_ok : bool
        Hall's condition holds (some assignment covers every element); otherwise the figures describe a model
        that does not hold.
    blocks_exact, blocks_estimated, largest_exact_block, largest_estimated_block : int
        Independent blocks computed each way, and the elements of the largest of each.
    seconds : float
        Wall time of the computation.
    expected_correct_best : float
        Expected number of people re-identified correctly when an attacker names each person's best guess.  Where
        probabilities are estimated, cross-fitted over the independent chains (the guess chosen with some chains,
        valued with another), so the noise that picks a guess does not also inflate its worth.
    expected_correct_best_error : float
        95 % half-width of ``expected_correct_best`` (0 when every probability is exact).
    expected_correct_random : float
        The same when the attacker draws one consistent assignment at random.
    above_threshold : int
        People whose best guess has at least ``threshold`` probability.
    highest, average : float
        The highest and the average best-guess probability over the people.
    thesis_expected_correct_best, thesis_expected_correct_random, thesis_above_threshold, thesis_highest, thesis_average
        The same figures with Malin 2006 eq. 6.6's probabilities (1/|E_y| for each candidate of record y).
    thesis_guess_expected_correct : float
        Expected number right when naming the thesis reading's best guesses, scored by the assignment
        probabilities.
    correct_best, thesis_correct_best, truth_people : int, optional
        Against a truth table: best guesses that are right (ours, the thesis reading's), and the people of the
        truth present in the release.
    correct_best_cross_fitted : float, optional
        Against a truth table: right guesses among the choices ``expected_correct_best`` values where it is
        cross-fitted (each half of the chains' most likely records, averaged as the figure averages them); equal
        to ``correct_best`` when every probability is exact.

    Examples
    --------
    >>> import graphlink as gl
    >>> s = gl.pair_probabilities(gl.build_linkgraph(gl.build_trails(gl.thesis_example()))).summary()
    >>> s.expected_correct_best, s.above_threshold, s.exact
    (4.0, 4, True)
    """

    reading: str
    people: int
    records: int
    threshold: float
    exact: bool
    max_error: float
    model_ok: bool
    blocks_exact: int
    blocks_estimated: int
    largest_exact_block: int
    largest_estimated_block: int
    seconds: float
    expected_correct_best: float
    expected_correct_random: float
    above_threshold: int
    highest: float
    average: float
    thesis_expected_correct_best: float
    thesis_expected_correct_random: float
    thesis_above_threshold: int
    thesis_highest: float
    thesis_average: float
    thesis_guess_expected_correct: float
    expected_correct_best_error: float = 0.0
    correct_best: int | None = None
    thesis_correct_best: int | None = None
    truth_people: int | None = None
    correct_best_cross_fitted: float | None = None

    def as_dict(self) -> dict:
        """The fields as plain JSON-able values; the truth fields only when a truth was given."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}
