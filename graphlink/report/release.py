"""The release report's numbers as typed data (:class:`ReleaseReport`; docs/report.md).

What a privacy officer needs to decide on a planned release, computed once by the library: who is certainly
re-identifiable (true loves, Malin 2006 ch. 4), how many people have fewer than k candidate records (the union
of all maximum matchings, Definition 19), the data model and what would change it, the k-unlinkability verdict,
the distribution of candidates (the trail analogue of a prosecutor-risk view), the exposure per location
(:mod:`graphlink.report.exposure`), trail uniqueness by the number of locations visited, and the three
protection methods of ch. 7 side by side.  Rendering (HTML) is at the edge: :mod:`graphlink.io.report_html`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphlink.catalog import KEEP_METHODS
from graphlink.errors import ModelAssumptionError
from graphlink.fileio import check_input
from graphlink.report.exposure import LocationExposure, exposure_applies, location_exposure

if TYPE_CHECKING:
    from graphlink.core.release import Release
    from graphlink.core.trails import Trails

#: the histogram has one bar per candidate count up to this many (or up to k), then one for "more"
HISTOGRAM_BARS = 10


@dataclass(frozen=True)
class ModelWords:
    """The data model assumed, in plain words, and what would change it."""

    label: str                # e.g. "one-to-one, de-identified reserved"
    reserved: str
    multiplicity: str
    decided_by: str
    reason: str               # the library's reason (may quote element names)
    plain: str                # one sentence for people
    would_change: str         # what other reading exists and what it would take


@dataclass(frozen=True)
class CandidateBar:
    """People whose number of candidate records is ``candidates`` (``more`` = that many or more)."""

    candidates: int
    people: int
    more: bool = False


@dataclass(frozen=True)
class UniquenessRow:
    """People who appear at ``locations`` locations: how many, how many have a trail no other person shares,
    how many are certainly re-identified."""

    locations: int
    people: int
    unique: int
    certain: int


@dataclass(frozen=True)
class LocationRecords:
    """One location under a protection method: de-identified records before, withheld, after."""

    location: str
    before: int
    withheld: int

    @property
    def after(self) -> int:
        return self.before - self.withheld


@dataclass(frozen=True)
class ExpectedCorrect:
    """How many people an attacker who names each person's most likely record gets right, expected over the
    consistent assignments (:func:`graphlink.analysis.risk.pair_probabilities`, uniform reading); ``exact`` False
    when a block was estimated (``max_error``: the largest 95 % half-width of an estimated probability)."""

    people: float
    exact: bool
    max_error: float

    @property
    def known(self) -> bool:
        """Exact, or estimated with every probability within :data:`USEFUL_ERROR` (else the figure says nothing)."""
        return self.exact or self.max_error <= USEFUL_ERROR

    def words(self) -> str:
        """The figure as a board reads it: "1,340", "about 1,340 (estimated)", or "not known precisely" when the
        estimate's error makes the number meaningless."""
        if self.exact:
            return f"{self.people:,.0f}"
        return f"about {self.people:,.0f} (estimated)" if self.known else "not known precisely"


@dataclass(frozen=True)
class ProtectionOption:
    """One protection method (Greedy-/Force-/Flow-Dedup, ch. 7) at the report's k, and how to reproduce it."""

    method: str
    certified: bool
    records_before: int
    records_withheld: int
    locations: int
    locations_disclosing: int
    certain_after: int
    per_location: tuple[LocationRecords, ...]
    command: str
    seconds: float
    people_at_k: int | None = None        # people left with exactly k candidates (a 1-in-k guess); None: not known
    expected_correct: ExpectedCorrect | None = None   # people an attacker names correctly, expected (risk reading)
    returned: str | None = None           # keep-most: whose certified result this is, in words, when not its own

    @property
    def records_after(self) -> int:
        return self.records_before - self.records_withheld

    @property
    def label(self) -> str:
        """The method's name for people (the registry's label)."""
        from graphlink import registry

        spec = registry.find(self.method)
        return spec.label if spec is not None else self.method

    @property
    def share_withheld(self) -> float:
        """The share of de-identified records withheld (0 when there were none)."""
        return self.records_withheld / self.records_before if self.records_before else 0.0

    @property
    def locations_emptied(self) -> int:
        """Locations left with no de-identified record to disclose."""
        return self.locations - self.locations_disclosing


@dataclass(frozen=True)
class QiSection:
    """Trails and quasi-identifiers together (``--qi-links``, an attribute linkage set, Malin 2002 Def. 3.1).

    ``qi`` are the de-identified side's attributes the linkage set names (what is released with the records);
    the k-anonymity figures and the three attacker models (:func:`graphlink.qi.risk.risk`; fractions of
    records) are over them.  ``certain_trails`` are the certain re-identifications from trails alone,
    ``certain_combined`` those when a link also needs agreeing attributes (None with ``note`` when the
    constrained graph refutes the model)."""

    relations: tuple[str, ...]
    qi: tuple[str, ...]
    records: int
    classes: int
    smallest_class: int
    records_below_k: int
    prosecutor_highest: float | None
    prosecutor_average: float
    records_at_risk: float | None
    journalist_average: float
    marketer_average: float
    certain_trails: int
    certain_combined: int | None
    note: str | None = None

    @property
    def k_anonymous_for(self) -> int:
        """The largest k the de-identified records are k-anonymous for over ``qi`` (the smallest class)."""
        return self.smallest_class


@dataclass(frozen=True)
class ReleaseReport:
    """Everything the release report shows (:func:`build_report`); rendered by
    :func:`graphlink.io.report_html.render_html` and by the app's Report page.

    Examples
    --------
    Built by :func:`build_report`:

    >>> import graphlink as gl
    >>> from graphlink.report import build_report
    >>> report = build_report(gl.thesis_example(), 2)
    >>> report.people, report.records, report.locations, report.certain
    (4, 4, 4, 4)
    """

    name: str
    k: int
    model: ModelWords
    people: int                               # identified elements
    records: int                              # de-identified elements
    locations: int
    certain: int                              # people certainly re-identifiable (true loves / certain pairs)
    below_k: int                              # people with at least one but fewer than k candidates
    records_below_k: int                      # de-identified records with fewer than k candidate people
    no_candidate: int                         # people no de-identified record can be
    k_unlinkable: bool
    histogram: tuple[CandidateBar, ...]
    exposure: tuple[LocationExposure, ...]
    exposure_note: str | None                 # why exposure is not shown (None when it is)
    uniqueness: tuple[UniquenessRow, ...]
    protection: tuple[ProtectionOption, ...]
    protection_note: str | None
    qi: QiSection | None
    version: str
    source: str | None
    sha256: str
    sha256_of: str                            # "file", "folder" or "release table" (no file: the rows as read)
    options: tuple[tuple[str, str], ...]
    timings: tuple[tuple[str, float], ...]
    at_k: int = 0                             # people with exactly k candidates (someone who guesses: 1 in k)
    expected_correct: ExpectedCorrect | None = None   # see ExpectedCorrect; None where not computed (one-to-many)
    title: str = ""                           # the user's title (default: "Re-identification risk report: NAME")
    purpose: str | None = None                # what the release is for, in the user's words
    prepared_by: str | None = None
    recipients: tuple[str, ...] = ()          # who receives which tables, one line each, in the user's words
    created: str = ""                         # when the report was computed (UTC, ISO 8601 to the minute)

    @property
    def heading(self) -> str:
        """The report's title: the user's, or "Re-identification risk report: NAME"."""
        return self.title or f"Re-identification risk report: {self.name}"

    @property
    def k_meaning(self) -> str:
        """What k means, in one sentence."""
        return (f"k = {self.k} asks that everyone named in the identified tables could be any of at least {self.k} "
                f"de-identified records, so that someone who links the tables can at best guess, and is right at "
                f"most 1 time in {self.k}.")

    @property
    def attacker(self) -> str:
        """The attacker the figures assume, in words."""
        return ("The figures assume a recipient who holds every table released, identified and de-identified, from "
                "every location, knows which location released which record, and reasons exactly as this report "
                "does (the data model below). They know nothing else: no outside register, no attributes beyond "
                "where a record appears.")

    @property
    def ranked_protection(self) -> tuple[ProtectionOption, ...]:
        """The protection options, certified ones first, each group from the fewest records withheld."""
        return tuple(sorted(self.protection, key=lambda p: (not p.certified, p.records_withheld, p.method)))

    @property
    def recommendation(self) -> str:
        """Which option to take, what it costs and what risk remains, in words."""
        k = self.k
        if self.k_unlinkable:
            left = (f" {self.at_k:,} people have exactly {k} candidates: someone who guesses is right about each "
                    f"of them with probability 1 in {k}." if self.at_k else "")
            return f"The release meets k = {k} as it is; no record needs to be withheld.{left}"
        if self.protection_note is not None or not self.protection:
            return (f"Do not release as it is: {self.certain:,} people can be re-identified with certainty. "
                    "No protection by withholding was computed for this release.")
        certified = [p for p in self.ranked_protection if p.certified]
        if not certified:
            return (f"Do not release as it is: {self.certain:,} people can be re-identified with certainty, and "
                    f"no protection option reached k = {k}.")
        best = certified[0]
        emptied = (f", and {best.locations_emptied:,} of {best.locations:,} locations are left with nothing to "
                   "disclose" if best.locations_emptied else "")
        risk = (f"Afterwards nobody is re-identifiable with certainty; {best.people_at_k:,} people have exactly {k} "
                f"candidates, so someone who guesses is right about each of them with probability 1 in {k}."
                if best.people_at_k is not None else
                "Afterwards nobody is re-identifiable with certainty, and everyone has at least "
                f"{k} candidates.")
        after, before = best.expected_correct, self.expected_correct
        if after is not None and after.known:
            today = f", against {before.words()} today" if before is not None and before.known else ""
            risk += (f" An attacker who names each person's most likely record would name the right one for "
                     f"{after.words()} people{today}.")
        return (f"Do not release as it is: {self.certain:,} people can be re-identified with certainty. Release the "
                f"version protected by {best.label} instead: it withholds {best.records_withheld:,} of "
                f"{best.records_before:,} de-identified records ({100 * best.share_withheld:.0f} %){emptied}. "
                f"{risk}")

    @property
    def next_steps(self) -> tuple[str, ...]:
        """What to do after reading the report, in words."""
        steps = []
        certified = [p for p in self.ranked_protection if p.certified]
        if not self.k_unlinkable and certified:
            steps.append(f"Produce the protected release with the command for {certified[0].label} in the "
                         "appendix, and run this report again on it to confirm the verdict.")
        elif not self.k_unlinkable:
            steps.append("Decide which tables to withhold, or release to fewer recipients, and run this report "
                         "again.")
        for p in self.protection:
            if p.returned:
                steps.append(f"{p.label}: {p.returned}.")
        if any(p.share_withheld > 0.5 for p in certified):
            steps.append("Where a protection withholds more than half of the records, ask whether the recipients "
                         "need every location; fewer locations often needs less withheld.")
        steps.append("Check that the data model below matches how the locations collected their records; if not, "
                     "state the right reading and run the report again.")
        steps.append("Keep this report with the release: its footer identifies the exact input it describes.")
        return tuple(steps)

    @property
    def verdict(self) -> str:
        """One sentence: the verdict for k."""
        candidates = "candidate" if self.k == 1 else "candidates"
        if self.k_unlinkable:
            return (f"The release is {self.k}-unlinkable: every person and every de-identified record that can be "
                    f"linked at all has at least {self.k} {candidates}.")
        return (f"The release is NOT {self.k}-unlinkable: {self.below_k:,} people and {self.records_below_k:,} "
                f"de-identified records have fewer than {self.k} {candidates}.")


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, or of a folder's files (sorted relative paths and contents).  O(bytes)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        if path.is_dir():
            digest.update(str(f.relative_to(path)).encode() + b"\0")
        with open(check_input(f), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def release_sha256(release: Release) -> str:
    """SHA-256 of the release's long table as read (location, kind, element as CSV, in row order): the input's
    fingerprint when there is no file (an upload, a simulated release).  O(rows)."""
    data = release.frame[["location", "kind", "element"]].to_csv(index=False).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def model_words(trails: Trails) -> ModelWords:
    """The model in plain words (no thesis notation) and what would change it."""
    m = trails.model
    who = ("One de-identified record may stand for several people (for example a household)"
           if trails.one_to_many else "Each de-identified record belongs to exactly one person")
    side = {"deidentified": "locations may have left some de-identified records out, never identified ones",
            "identified": "locations may have left some identified records out, never de-identified ones",
            "none": "every location disclosed the same people in both tables (nothing left out)"}[trails.reserved]
    how = {"requested": "as stated in the options", "sizes": "decided from the number of records per location",
           "counts": "decided from the number of records", "links": "decided from which records can match"}
    plain = f"{who}; {side} ({how.get(m.decided_by, m.decided_by)})."
    if trails.one_to_many:
        change = ("If every de-identified record belonged to one person, state the one-to-one reading: certain "
                  "re-identifications and candidate counts would then be computed under it.")
    elif trails.reserved == "identified":
        change = ("If the identified tables are complete and de-identified records were left out instead, state "
                  "that reading: the counts would change, and protection by withholding would become possible.")
    else:
        change = ("If locations also left identified records out, or one de-identified record could stand for "
                  "several people, the counts would change: state that reading and run the report again.")
    return ModelWords(m.label, m.reserved, m.multiplicity, m.decided_by, m.reason, plain, change)


def candidate_histogram(candidates: np.ndarray, k: int) -> tuple[CandidateBar, ...]:
    """People by number of candidates (only people with at least one candidate record): one bar per count up to
    max(k, HISTOGRAM_BARS), then one "or more" bar.  O(n)."""
    top = max(k, HISTOGRAM_BARS)
    c = np.asarray(candidates, dtype=np.int64)
    counts = np.bincount(np.minimum(c, top + 1), minlength=top + 2)
    bars = [CandidateBar(i, int(counts[i])) for i in range(1, top + 1)]
    bars.append(CandidateBar(top + 1, int(counts[top + 1]), more=True))
    return tuple(bars)


def uniqueness_by_locations(trails: Trails, certain_rows: np.ndarray) -> tuple[UniquenessRow, ...]:
    """Identified people grouped by the number of locations they appear at: people, unique trails (no other
    identified person has the same trail, ``*`` included), certainly re-identified.  O(|M|·W·log |M|)."""
    side = trails.identified
    n = len(side)
    if n == 0:
        return ()
    visited = np.zeros(n, np.int64)
    for w in range(side.ones.shape[1]):
        visited += np.bitwise_count(side.ones[:, w]).astype(np.int64)
    both = np.concatenate([side.known, side.ones], axis=1)
    _, inverse, counts = np.unique(both, axis=0, return_inverse=True, return_counts=True)
    unique = counts[inverse.ravel()] == 1
    certain = np.zeros(n, bool)
    certain[np.asarray(certain_rows, np.int64)] = True
    rows = []
    for v in np.unique(visited):
        sel = visited == v
        rows.append(UniquenessRow(int(v), int(sel.sum()), int(unique[sel].sum()), int(certain[sel].sum())))
    return tuple(rows)


def reproduce_command(source: str, k: int, method: str, seed: int, time_budget: float | None = None) -> str:
    """The ``graphlink unlink`` command line that produces one protection option of the report (shown as code in
    the report, so that a reader can reproduce the option; the only place outside ``graphlink/cli`` where a
    command line is built).  ``time_budget``: the repair time the report allowed keep-most, so the command gives
    the same result where the budget decided it.

    Examples
    --------
    >>> reproduce_command("my release.csv", 2, "greedy", 0)
    "graphlink unlink 'my release.csv' --k 2 --method greedy --seed 0 --out protected-greedy.csv"
    >>> reproduce_command("r.csv", 2, "keep-most", 0, time_budget=20.0)
    'graphlink unlink r.csv --k 2 --method keep-most --seed 0 --time-budget 20 --out protected-keep-most.csv'
    """
    budget = "" if time_budget is None else f"--time-budget {time_budget:g} "
    return (f"graphlink unlink {shlex.quote(source)} --k {k} --method {method} --seed {seed} {budget}"
            f"--out {shlex.quote(f'protected-{method}.csv')}")


def people_with_exactly_k(classes: object, k: int) -> int:
    """People (identified elements) whose number of candidates (union degree, "not in the data" counted) is exactly
    ``k``: those someone who guesses names correctly with probability 1/k.  O(|M|)."""
    degrees = np.asarray(classes.union_degree_total("identified"))  # type: ignore[attr-defined]
    real = np.asarray(classes.union_degree_identified) > 0  # type: ignore[attr-defined]
    return int(((degrees == k) & real).sum())


#: seconds the probability estimate may spend on each large block of a release in the report
RISK_BUDGET = 1.0
#: the largest 95 % half-width of an estimated probability at which the expected count is still shown as a number
USEFUL_ERROR = 0.05


def expected_correct(graph: object, classes: object) -> ExpectedCorrect | None:
    """The expected number of people re-identified correctly by best guesses (one-to-one releases whose model
    holds), or None.  Cost: :func:`graphlink.analysis.risk.pair_probabilities` with :data:`RISK_BUDGET` seconds per
    estimated block."""
    from graphlink.analysis.risk import pair_probabilities

    if not getattr(classes, "hall_ok", False):
        return None
    summary = pair_probabilities(graph, classes=classes, budget=RISK_BUDGET).summary()  # type: ignore[arg-type]
    return ExpectedCorrect(summary.expected_correct_best, summary.exact, summary.max_error)


def _residual(protected: Release, reserved: str, k: int, risk: bool) -> tuple[int | None, ExpectedCorrect | None]:
    """People with exactly k candidates, and the expected correct re-identifications, in a protected release
    (one-to-one, the report's reading)."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails

    try:
        graph = build_linkgraph(build_trails(protected, reserved, "one-to-one"))  # type: ignore[arg-type]
        classes = classify_edges(graph)
    except ModelAssumptionError:
        return None, None
    if not classes.hall_ok:
        return None, None
    return people_with_exactly_k(classes, k), (expected_correct(graph, classes) if risk else None)


#: seconds keep-most may repair in a report before it returns the best certified result at hand (a report compares
#: methods and should not hang on one of them; the CLI's ``unlink`` allows 60)
REPORT_KEEP_BUDGET = 20.0


def _protection(release: Release, k: int, seed: int, methods: Sequence[str], source: str,
                certain_before: int, reserved: str = "auto", risk: bool = True) -> tuple[ProtectionOption, ...]:
    from graphlink.protect import unlink
    from graphlink.protect.certify import omega_sets

    before = {c: len(set(es)) for c, es in omega_sets(release.frame).items()}
    out = []
    for method in methods:
        t0 = time.perf_counter()
        res = unlink(release, k, method, seed, audit_before=False, multiplicity="one-to-one",
                     time_budget=REPORT_KEEP_BUDGET)
        after = {c: len(set(es)) for c, es in omega_sets(res.release.frame).items()}
        per = tuple(LocationRecords(str(c), before[c], before[c] - after.get(c, 0)) for c in release.locations
                    if c in before)
        cmd = reproduce_command(source, k, method, seed, REPORT_KEEP_BUDGET if method in KEEP_METHODS else None)
        at_k, expected = _residual(res.release, reserved, k, risk) if res.certified else (None, None)
        out.append(ProtectionOption(method, bool(res.certified), res.metrics["rows_disclosed"]
                                    + res.metrics["rows_withheld"], res.metrics["rows_withheld"],
                                    res.metrics["locations"], res.metrics["locations_disclosing"],
                                    int(res.after.get("true_loves", certain_before)), per, cmd,
                                    time.perf_counter() - t0, at_k, expected,
                                    res.result_why if res.time_budget_hit or res.result_of not in (None, method)
                                    else None))
    return tuple(out)


def qi_section(trails: Trails, qi_links: str | Path, source: str | Path | None, k: int,
               certain_trails: int) -> QiSection:
    """The trails + quasi-identifiers section (:class:`QiSection`): the linkage set's de-identified attributes
    as a released table (k-anonymity, :func:`graphlink.qi.risk.risk`), and the certain re-identifications of
    the link graph constrained by the linkage set (:func:`graphlink.qi.als.release_blocks`).  One-to-one
    trails only (the constrained one-to-many search is the CLI's ``reidentify --qi-links``).
    O(rows + the constrained graph's classification)."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.qi.als import blocks, element_attributes, read_als
    from graphlink.qi.risk import risk

    als = read_als(qi_links)
    tables = element_attributes(als, source)
    qi = [c for c in dict.fromkeys(als.columns("deidentified")) if c in tables["deidentified"].columns]
    table = tables["deidentified"].reindex(trails.deidentified.keys)[qi].astype("string").fillna("")
    if qi and len(table):
        sizes = table.groupby(qi, dropna=False, sort=False).size().to_numpy()
        summary = risk(table.reset_index(drop=True), qi, attributes=False)
        smallest = int(sizes.min())
        below = int(sizes[sizes < k].sum())
        opt = (lambda v: None if v is None else float(v))  # noqa: E731
        figures = (int(summary.classes), smallest, below, opt(summary.prosecutor.highest),
                   float(summary.prosecutor.average), opt(summary.prosecutor.records_at_risk),
                   float(summary.journalist.average), float(summary.marketer.average))
    else:                                    # no attribute released with the records: one class of everyone
        n = len(table)
        figures = (1 if n else 0, n, n if n < k else 0, 1 / n if n else None, 1 / n if n else 0.0, None,
                   1 / n if n else 0.0, 1 / n if n else 0.0)
    note = None
    combined: int | None = None
    if trails.one_to_many:
        note = "trails and attributes together are computed here for one-to-one releases only"
    else:
        b = blocks(als, tables["identified"], tables["deidentified"], np.asarray(trails.identified.keys, object),
                   np.asarray(trails.deidentified.keys, object))
        classes = classify_edges(build_linkgraph(trails, blocks=b))
        if classes.hall_ok:
            combined = classes.n_true_loves
        else:
            note = ("with the attributes required to agree, some de-identified record fits no person: the data "
                    "contradict the linkage set or the model, so no combined count is given")
    return QiSection(tuple(r.name for r in als.relations), tuple(qi), len(table), *figures, certain_trails,
                     combined, note)


def build_report(release: Release, k: int = 2, *, reserved: str = "auto", multiplicity: str = "auto",
                 seed: int = 0, methods: Sequence[str] | None = None, source: str | Path | None = None,
                 options: Mapping[str, object] | None = None, exposure: bool = True,
                 protection: bool = True, qi_links: str | Path | None = None, title: str | None = None,
                 purpose: str | None = None, prepared_by: str | None = None,
                 recipients: Sequence[str] = (), created: _dt.datetime | None = None,
                 risk: bool = True) -> ReleaseReport:
    """Compute the release report.

    Parameters
    ----------
    release : Release
        The validated release.
    k : int
        The protection level the verdict, the "fewer than k" count and the protection options are for.
    reserved, multiplicity : str
        The data model (``auto`` decides, :func:`graphlink.core.trails.build_trails`).
    seed : int
        Tie-breaking seed of the protection methods.
    methods : sequence of str, optional
        Protection methods to compare (default: all of :data:`graphlink.protect.METHODS`).
    source : str or Path, optional
        The input file or folder: its SHA-256 goes into the footer and its path into the commands.
    options : mapping, optional
        The options as the user gave them (the footer lists them).
    exposure, protection : bool
        Compute the exposure per location / the protection options (where the model allows them).
    qi_links : str or Path, optional
        An attribute linkage set (YAML): adds the trails + quasi-identifiers section (:func:`qi_section`);
        the attributes come from its files or from ``source``'s extra columns.
    title, purpose, prepared_by : str, optional
        What the first page says the report is, what the release is for and who prepared it (the user's words).
    recipients : sequence of str
        Who receives which tables, one entry each (the user's words).
    created : datetime, optional
        When the report was made (default: now, UTC).
    risk : bool
        Compute the expected number of correct re-identifications before and after each protection option
        (:func:`expected_correct`; one-to-one releases).

    Returns
    -------
    ReleaseReport

    Raises
    ------
    ModelAssumptionError
        The data refute the model (no assignment covers every element): nothing would be certain.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.report import build_report
    >>> report = build_report(gl.thesis_example(), 2)
    >>> report.certain, report.below_k, report.k_unlinkable
    (4, 4, False)
    >>> [row.lost for row in report.exposure]
    [2, 0, 3, 0]

    Complexity: one build of the trails, link graph and exact classification; the exposure adds at most one
    link graph and classification per location (:func:`graphlink.report.exposure.location_exposure`); each
    protection method one allocation and its certifying audits.
    """
    import graphlink
    from graphlink.analysis.audit import audit
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails
    from graphlink.protect import METHODS

    timings: dict[str, float] = {}
    if k < 1:
        raise ValueError("k must be at least 1")
    t0 = time.perf_counter()
    tr = build_trails(release, reserved, multiplicity)  # type: ignore[arg-type]
    graph = build_linkgraph(tr)
    if tr.one_to_many:
        from graphlink.analysis.onetomany import classify_one_to_many

        classes = classify_one_to_many(graph)
        result = audit(classes, k)                 # refuses refuted or unsolved data (ModelAssumptionError)
        expected = None                            # not computed for one-to-many releases (docs/risk.md)
        cand = np.asarray(classes.union_degree_identified, np.int64)
        real = cand
        certain_rows = np.unique(classes.pair_m)
    else:
        classes = classify_edges(graph)
        if not classes.hall_ok:
            raise ModelAssumptionError(
                f"the {tr.model.label} model does not hold: no assignment covers every element (for example "
                f"{', '.join(map(str, classes.unmatched[:3]))}), so nothing can be called certain; state another "
                "reading of the data")
        result = audit(classes, k)
        expected = expected_correct(graph, classes) if risk else None
        cand = classes.union_degree_total("identified")
        real = classes.union_degree_identified
        certain_rows = classes.true_love_pairs[0]
    at_k = int(((cand == k) & (real > 0)).sum())
    certain = int(len(certain_rows))
    timings["analysis"] = time.perf_counter() - t0
    src = str(source) if source is not None else release.name
    exp_rows: tuple[LocationExposure, ...] = ()
    exp_note = exposure_applies(tr)
    if exposure and exp_note is None:
        t0 = time.perf_counter()
        exp_rows = tuple(location_exposure(tr, certain, bool(classes.hall_ok)))
        timings["exposure"] = time.perf_counter() - t0
    elif not exposure:
        exp_note = "not computed (switched off)"
    prot: tuple[ProtectionOption, ...] = ()
    prot_note = None if tr.reserved != "identified" and not tr.one_to_many else (
        "protection by withholding de-identified records is defined for one-to-one releases where locations "
        "withhold de-identified records only; this release is read otherwise")
    if protection and prot_note is None:
        t0 = time.perf_counter()
        prot = _protection(release, k, seed, list(methods or METHODS), src, certain, tr.reserved, risk)
        timings["protection"] = time.perf_counter() - t0
    elif not protection:
        prot_note = "not computed (switched off)"
    qi = None
    if qi_links is not None:
        t0 = time.perf_counter()
        qi = qi_section(tr, qi_links, source, k, certain)
        timings["qi"] = time.perf_counter() - t0
    has_real = real > 0
    is_file = source is not None and Path(source).exists()
    return ReleaseReport(
        name=str(release.name), k=k, model=model_words(tr), people=len(tr.identified),
        records=len(tr.deidentified), locations=len(tr.locations), certain=certain,
        below_k=int(result.counts["violations_identified"]),
        records_below_k=int(result.counts["violations_deidentified"]),
        no_candidate=int((~has_real).sum()), k_unlinkable=bool(result.k_unlinkable),
        histogram=candidate_histogram(cand[has_real], k), exposure=exp_rows, exposure_note=exp_note,
        uniqueness=uniqueness_by_locations(tr, certain_rows), protection=prot, protection_note=prot_note, qi=qi,
        version=graphlink.__version__, source=str(source) if source is not None else None,
        sha256=file_sha256(source) if is_file else release_sha256(release),
        sha256_of=("folder" if Path(str(source)).is_dir() else "file") if is_file else "release table",
        options=tuple((str(a), str(b)) for a, b in (options or {}).items()),
        timings=tuple((a, round(b, 4)) for a, b in timings.items()), at_k=at_k, expected_correct=expected,
        title=title or "",
        purpose=purpose or None, prepared_by=prepared_by or None, recipients=tuple(r for r in recipients if r),
        created=(created or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M UTC"))
