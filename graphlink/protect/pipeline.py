"""Unlink a release end to end: allocate, apply, certify, measure (thesis ch. 7).

:func:`unlink` runs a method on a :class:`~graphlink.core.release.Release`; :func:`finish` certifies and measures
any suppression (also the secure protocol's output); both return an :class:`UnlinkResult`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from graphlink import registry
from graphlink.errors import ReleaseError
from graphlink.protect.allocate import Allocation, allocate
from graphlink.protect.certify import (
    apply_disclosure,
    audit_counts,
    audit_release,
    certify,
    check_model,
    omega_sets,
    reads_one_to_many,
)
from graphlink.protect.instance import Instance
from graphlink.protect.utility import utility

#: seconds keep-most repairs what the audit flags before it returns the best certified suppression it has
KEEP_TIME_BUDGET = 60.0


@dataclass(frozen=True)
class UnlinkSummary:
    """What protection by suppression did (Malin 2006 ch. 7, Definition 21; utility §7.2.1, eqs. 7.1 and 7.2).

    Suppression withholds de-identified records only, so the identified side is the same before and after.

    Attributes
    ----------
    k, method, seed
        The protection level, the method (greedy-dedup, force-dedup, flow-dedup, or a secure one) and its seed.
    certified : bool
        The exact audit found the output k-unlinkable (Definition 19).
    identified_records : int
        (location, element) records of the identified side, before and after (none is withheld).
    deidentified_records_before, rows_withheld, rows_disclosed : int
        De-identified (location, element) records before, withheld, and still disclosed after.
    total, withheld, disclosed : int
        Distinct de-identified elements before, withheld everywhere (eq. 7.1) and still disclosed somewhere.
    locations, locations_disclosing, locations_empty : int
        Locations, those still disclosing a de-identified record, those left with none (eq. 7.2).
    nothing_disclosed : bool
        Protection left no de-identified record disclosed (k may be too high for the release).
    final_clean_withheld, repair_withheld, repair_rounds : int
        Records withheld by Final-Clean, and by the repair rounds that made the exact audit pass.
    true_loves_before, true_loves_after, violations_before, violations_after : int, optional
        Certain re-identifications and k-violations before and after (None when not audited).
    timings : dict
        Seconds per step.
    side : str
        The side whose records were withheld (keep-most may withhold identified records instead).
    lower_bound : int, optional
        Keep-most: at least this many (location, record) disclosures must be withheld by any suppression that
        meets the request (docs/unlink.md#keep-most); None for the Dedup family.
    result_of : str, optional
        Keep-most: whose certified suppression was returned, ``"keep-most"``, ``"integer program"`` or
        ``"flow-dedup"``; None for the Dedup family.
    result_why : str, optional
        Keep-most: the same in plain words, with the reason (e.g. the time budget ran out).
    time_budget_hit : bool
        Keep-most stopped repairing because its time budget ran out.
    multiplicity : str
        The reading the certificate holds under: ``"one-to-one"``, or ``"one-to-many"`` (keep-most on a release
        read as one-to-many, people allowed to withhold: docs/unlink.md#one-to-many-releases).

    Examples
    --------
    >>> import graphlink as gl
    >>> s = gl.unlink(gl.thesis_example(), 2, "force-dedup").summary()
    >>> s.certified, s.identified_records, s.deidentified_records_before, s.nothing_disclosed
    (True, 12, 10, False)
    >>> s.deidentified_records_before == s.rows_withheld + s.rows_disclosed
    True
    """

    k: int
    method: str
    seed: int | None
    certified: bool
    identified_records: int
    deidentified_records_before: int
    rows_withheld: int
    rows_disclosed: int
    total: int
    withheld: int
    disclosed: int
    locations: int
    locations_disclosing: int
    locations_empty: int
    nothing_disclosed: bool
    final_clean_withheld: int
    repair_withheld: int
    repair_rounds: int
    true_loves_before: int | None = None
    true_loves_after: int | None = None
    violations_before: int | None = None
    violations_after: int | None = None
    timings: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    side: str = "deidentified"
    lower_bound: int | None = None
    result_of: str | None = None
    result_why: str | None = None
    time_budget_hit: bool = False
    multiplicity: str = "one-to-one"

    def as_dict(self) -> dict[str, Any]:
        """Every field (the keys of the CLI's JSON summary)."""
        return asdict(self)


@dataclass
class UnlinkResult:
    """Outcome of :func:`unlink`: the certified release plus everything needed to explain it.

    Attributes
    ----------
    release : Release
        The protected release (records withheld, never altered), certified by the exact audit.
    allocation : Allocation
        Which records each location discloses.
    k, method, seed
        As asked.
    certified : bool
        The exact audit found ``release`` k-unlinkable.
    metrics : dict
        Disclosed and withheld records, locations disclosing.
    repair_withheld : list
        Records withheld because the exact audit failed after the heuristic.
    repair_rounds : int
        Audit-and-repair rounds.
    audit : AuditResult
        The final audit.
    before, after : dict
        True loves and violations before and after.
    timings : dict
        Seconds per stage.
    side : str
        The side whose records were withheld.
    lower_bound : int, optional
        Keep-most's lower bound on the disclosures any suppression must withhold (None for the Dedup family).
    steps : list of str
        Keep-most: what each phase did, in words.
    result_of, result_why, time_budget_hit
        Keep-most: whose certified suppression ``release`` is, why, in words, and whether the time budget ran
        out (see :class:`UnlinkSummary`).
    multiplicity : str
        The reading the certificate holds under (see :class:`UnlinkSummary`).

    Examples
    --------
    >>> import graphlink as gl
    >>> result = gl.unlink(gl.thesis_example(), 2, "force-dedup", seed=1)
    >>> result.certified, result.before["true_loves"], result.after["true_loves"]
    (True, 4, 0)
    >>> result.metrics["withheld"], result.metrics["rows_withheld"]
    (0, 6)
    """

    release: Any                          # graphlink.core.release.Release (suppressed, certified)
    allocation: Allocation
    k: int
    method: str
    seed: int | None
    certified: bool
    metrics: dict[str, int]
    repair_withheld: list[Hashable]       # records withheld because the exact audit failed
    repair_rounds: int
    audit: Any                            # graphlink.analysis.audit.AuditResult of the final release
    before: dict[str, int]
    after: dict[str, int]
    timings: dict[str, float]
    side: str = "deidentified"
    lower_bound: int | None = None
    steps: list[str] = field(default_factory=list)
    result_of: str | None = None
    result_why: str | None = None
    time_budget_hit: bool = False
    multiplicity: str = "one-to-one"

    def _repr_html_(self) -> str:
        import pandas as pd

        from graphlink.display import html

        s = self.summary().as_dict()
        flat = {k: v for k, v in s.items() if not isinstance(v, dict)}
        table = pd.DataFrame({"measure": list(flat), "value": [str(v) for v in flat.values()]})
        return html(f"Unlinked at k = {self.k}: {'certified' if self.certified else 'NOT certified'}",
                    {"withheld": self.metrics["withheld"], "disclosed": self.metrics["disclosed"]},
                    {"summary": table})

    def summary(self) -> UnlinkSummary:
        """The counts before and after, per side, as an :class:`UnlinkSummary` (``as_dict()``: the CLI's JSON)."""
        m = self.metrics
        return UnlinkSummary(
            k=self.k, method=self.method, seed=self.seed, certified=bool(self.certified),
            identified_records=int((self.release.frame["kind"] == "identified").sum()),
            deidentified_records_before=m["rows_disclosed"] + m["rows_withheld"], rows_withheld=m["rows_withheld"],
            rows_disclosed=m["rows_disclosed"], total=m["total"], withheld=m["withheld"], disclosed=m["disclosed"],
            locations=m["locations"], locations_disclosing=m["locations_disclosing"],
            locations_empty=m["locations_empty"], nothing_disclosed=m["rows_disclosed"] == 0,
            final_clean_withheld=len(self.allocation.final_clean_withheld),
            repair_withheld=len(self.repair_withheld), repair_rounds=self.repair_rounds,
            true_loves_before=self.before.get("true_loves"), true_loves_after=self.after.get("true_loves"),
            violations_before=self.before.get("violations"), violations_after=self.after.get("violations"),
            timings={k: round(v, 4) for k, v in self.timings.items()}, side=self.side,
            lower_bound=self.lower_bound, result_of=self.result_of, result_why=self.result_why,
            time_budget_hit=self.time_budget_hit, multiplicity=self.multiplicity)


def unlink(release: Any, k: int, method: str = "force-dedup", seed: int | None = 0, *,
           certify_output: bool = True, audit_before: bool = True, max_rounds: int = 1000,
           progress: Callable[[str], None] | None = None, multiplicity: str = "auto",
           time_budget: float | None = KEEP_TIME_BUDGET) -> UnlinkResult:
    """Unlink a release by suppression (Definition 21) and certify it with the exact audit.

    Runs ``method`` (greedy-dedup, force-dedup, flow-dedup) with seeded tie-breaking, writes the release
    (every identified row, the de-identified rows still disclosed), audits it with
    :func:`graphlink.analysis.audit.audit` (union of all maximum matchings, Definition 19 incl. the null-trail
    clause) and, if it fails, withholds more records until it passes (:func:`certify`); the result reports
    how many (``repair_withheld``).  ``audit_before`` also audits the input to report re-identifications
    (true loves) before/after.  Complexity: the heuristic is O(|C|² + rows·log rows); each audit is the
    core's O(E·√V) on the twin-compressed link graph.

    Parameters
    ----------
    release : Release or path
    k : int
        The protection level.
    method : {"greedy-dedup", "force-dedup", "flow-dedup", "keep-most"}
        keep-most runs :func:`unlink_keep` with its defaults.
    seed : int, optional
        Tie-breaking seed (deterministic output); keep-most with None draws from the operating system.
    multiplicity : {"auto", "one-to-one", "one-to-many"}
        The Dedup family protects one-to-one data only; keep-most also protects a release read as one-to-many
        (:func:`unlink_keep_many`).
    time_budget : float, optional
        Keep-most only: seconds of repair before it returns the best certified suppression it has
        (:func:`unlink_keep`); None: no limit.

    Returns
    -------
    UnlinkResult
        The certified ``release``, the allocation, utility metrics and before/after counts.

    Raises
    ------
    ModelAssumptionError
        Identified withholding (Definition 21 suppresses de-identified records only) or one-to-many data.

    Examples
    --------
    >>> import graphlink as gl
    >>> result = gl.unlink(gl.thesis_example(), 2, "force-dedup")
    >>> result.certified, gl.audit(gl.build_linkgraph(gl.build_trails(result.release)), 2).k_unlinkable
    (True, True)
    """
    if not hasattr(release, "frame"):
        from graphlink.core.release import read_release
        release = read_release(release)
    spec = registry.get(method)
    if spec.input == "release":                 # the method protects the release as a whole (keep-most)
        return spec.resolve()(release, k, seed, audit_before=audit_before, progress=progress,
                              multiplicity=multiplicity, time_budget=time_budget)
    check_model(release, multiplicity)
    t0 = time.perf_counter()
    inst = Instance.from_frame(release.frame)
    alloc = allocate(inst, k, method, seed)
    timings = {"allocate": time.perf_counter() - t0}
    return finish(release, alloc.disclosed, k, method, seed, alloc, timings=timings, certify_output=certify_output,
                  audit_before=audit_before, max_rounds=max_rounds, progress=progress)


def finish(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]], k: int, method: str,
           seed: int | None, allocation: Allocation | None = None, *, timings: dict[str, float] | None = None,
           certify_output: bool = True, audit_before: bool = True, max_rounds: int = 1000,
           progress: Callable[[str], None] | None = None) -> UnlinkResult:
    """Certify (:func:`certify`) and measure any suppression of ``release`` — used by :func:`unlink` and by
    the CLI for the secure protocol's output.

    Examples
    --------
    Any suppression, here the release as published, certified and measured like :func:`unlink`'s own:

    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> from graphlink.protect import disclosed_of, finish
    >>> result = finish(release, disclosed_of(release), 2, "as-published", seed=None)
    >>> result.certified, result.before["true_loves"], result.after["true_loves"]
    (True, 4, 0)
    """
    timings = dict(timings or {})
    disclosed = {c: list(v) for c, v in disclosed.items()}
    if allocation is None:
        allocation = Allocation(list(disclosed), disclosed, {}, method, k, seed)
    before: dict[str, int] = {}
    if audit_before:
        t1 = time.perf_counter()
        res0, _ = audit_release(release, k, "auto")
        before = audit_counts(res0)
        timings["audit_before"] = time.perf_counter() - t1
    result = None
    repair: list[Hashable] = []
    rounds = 0
    if certify_output:
        t2 = time.perf_counter()
        out, disclosed, result, repair, rounds = certify(release, disclosed, k, max_rounds=max_rounds,
                                                         progress=progress)
        timings["certify"] = time.perf_counter() - t2
    else:
        out = apply_disclosure(release, disclosed)
    metrics = utility(omega_sets(release.frame), disclosed)
    after = audit_counts(result) if result is not None else {}
    return UnlinkResult(out, allocation, k, method, seed, result is not None and result.k_unlinkable, metrics,
                        repair, rounds, result, before, after, timings)


def decide_side(release: Any, side: str = "auto") -> str:
    """The side whose disclosures keep-most may withhold: the one whose table is never the larger at any location
    (Lemma 6's size reading; docs/unlink.md#keep-most), or the side asked for, checked the same way.  O(|C|)."""
    from graphlink.diagnostics import Diagnostic
    from graphlink.errors import ModelAssumptionError

    sizes = release.sizes()
    fits = {"deidentified": bool((sizes["deidentified"] <= sizes["identified"]).all()),
            "identified": bool((sizes["identified"] <= sizes["deidentified"]).all())}
    if side == "auto":
        if fits["deidentified"]:
            return "deidentified"
        if fits["identified"]:
            return "identified"
    elif fits.get(side, False):
        return side
    want = side if side != "auto" else "deidentified"
    other = "identified" if want == "deidentified" else "deidentified"
    bad = sizes.index[sizes[want] > sizes[other]].tolist()
    raise ModelAssumptionError(diagnostic=Diagnostic(
        "unlink-identified-withholding",
        f"keep-most withholds {want} records, which needs every location to disclose at most as many {want} as "
        f"{other} records; violated at: {', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''}",
        {"locations": [str(c) for c in bad[:50]], "count": len(bad)}))


def unlink_keep(release: Any, k: int, seed: int | None = None, *, side: str = "auto",
                must_keep: Iterable[tuple[Hashable, Hashable]] = (), no_empty_location: bool = False,
                cap: int | None = None, audit_before: bool = True, progress: Callable[[str], None] | None = None,
                multiplicity: str = "auto", exact: bool | None = None, exact_seconds: float = 60.0,
                time_budget: float | None = KEEP_TIME_BUDGET) -> UnlinkResult:
    """Keep-most on a release (docs/unlink.md#keep-most): withhold single (location, record) disclosures of one
    side until the exact audit certifies the release as written, with the lower bound beside the result.  A release
    read as one-to-many goes to :func:`unlink_keep_many` (identified disclosures, the one-to-many audit).

    Parameters
    ----------
    release : Release
    k : int
        The protection level (Definition 19).
    seed : int, optional
        Tie-breaking seed; None (the default) uses the operating system's random source, so that nobody can
        replay the choices (a seed is for simulated data and tests).
    side : {"auto", "deidentified", "identified"}
        The side whose disclosures may be withheld, read one-to-one with that side reserved.
    must_keep : iterable of (location, record)
        Disclosures that must stay.
    no_empty_location : bool
        Every location keeps at least one record of the withheld side.
    cap : int, optional
        At most this many withheld disclosures per location.
    exact : bool, optional
        Also solve the integer program of :mod:`graphlink.protect.keep_optimal` (its optimum is a lower bound;
        its solution is returned when it passes the audit and withholds less).  None: when the release is small
        (at most ``MILP_PAIR_LIMIT`` record-person pairs) and nothing is constrained.
    exact_seconds : float
        HiGHS's time limit (cut to what is left of ``time_budget``).
    time_budget : float, optional
        Seconds keep-most may spend repairing what the audit flags (None: no limit).  When it runs out the
        result is the best *certified* suppression at hand: the integer program's when it passes the audit,
        else Flow-Dedup's (de-identified side, no constraints), else keep-most's with the flagged records
        withheld outright; ``result_of``/``result_why`` say which and why.  Never an uncertified output.

    Returns
    -------
    UnlinkResult
        Certified by the exact audit of the written release (``graphlink audit --reserved <side>
        --multiplicity one-to-one``), with ``lower_bound``, ``steps``, ``result_of`` and ``result_why``.

    Raises
    ------
    ModelAssumptionError
        The sizes do not allow the side; on a release read as one-to-many, see :func:`unlink_keep_many`.
    graphlink.protect.keep.KeepInfeasibleError
        A constraint cannot be met (the message names which and where).

    Examples
    --------
    >>> import graphlink as gl
    >>> result = unlink_keep(gl.thesis_example(), 2, seed=0)
    >>> result.certified, result.summary().rows_withheld >= result.lower_bound
    (True, True)

    Complexity: the per-record search O(Σ_r (Σ_{c∈D(r)} |γ_c| + 2^{d_r}·d_r)) plus one exact audit per round.
    """
    import numpy as np

    from graphlink.protect.keep import apply_kept, instance_for, keep_most, must_keep_mask, release_auditor

    # a stated one-to-many is taken as stated (read with people allowed to withhold, the one sound reading); read
    # from the data, only where one-to-one is ruled out: identified withholding with enough de-identified elements
    # fits both readings and keeps keep-most's one-to-one reading of the identified side, as before
    if multiplicity == "one-to-many" or (multiplicity != "one-to-one"
                                         and reads_one_to_many(release, multiplicity, refuted_one_to_one=True)):
        return unlink_keep_many(release, k, seed, side=side, must_keep=must_keep, no_empty_location=no_empty_location,
                                cap=cap, audit_before=audit_before, progress=progress)
    chosen = decide_side(release, side)
    if chosen == "deidentified":
        check_model(release, multiplicity)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    inst = instance_for(release, chosen)
    forced = must_keep_mask(inst, must_keep, chosen)
    auditor = release_auditor(release, inst, k, chosen)
    unconstrained = not must_keep_any(forced) and not no_empty_location and cap is None
    # Flow-Dedup can stand in for an unfinished keep-most only where it applies: de-identified side, no constraints
    dedup_applies = chosen == "deidentified" and unconstrained
    outcome = keep_most(inst, k, seed, must_keep=forced, no_empty_location=no_empty_location, cap=cap,
                        auditor=auditor, kind=chosen, progress=progress, time_budget=time_budget,
                        finish_on_budget=not dedup_applies)
    outcome, draws = _more_draws(outcome, inst, k, seed, t0, time_budget, progress,
                                 dict(must_keep=forced, no_empty_location=no_empty_location, cap=cap,
                                      auditor=auditor, kind=chosen, finish_on_budget=not dedup_applies))
    timings["keep"] = time.perf_counter() - t0
    out: Any = None
    result: Any = None
    result_of, why = "keep-most", (f"keep-most's own suppression, certified by the exact audit after "
                                   f"{outcome.rounds} repair round{'s' if outcome.rounds != 1 else ''}")
    if outcome.stopped:
        why = f"{outcome.stopped}; the flagged records were then withheld outright until the audit passed"
    if outcome.certified:
        last = auditor.last             # the loop ended on a passing audit of exactly this mask: reuse it
        if last and np.array_equal(last["kept"], outcome.kept):
            out, result = last["release"], last["result"]
        else:
            t1 = time.perf_counter()
            out = apply_kept(release, inst, outcome.kept, chosen)
            result, _ = audit_release(out, k, chosen)
            timings["certify"] = time.perf_counter() - t1
    steps, bound = list(outcome.steps) + draws, outcome.lower_bound
    if exact is not False and unconstrained:
        from graphlink.protect.keep_optimal import MILP_PAIR_LIMIT, keep_milp, n_pairs

        left = exact_seconds if time_budget is None else max(1.0, min(exact_seconds,
                                                                       t0 + time_budget - time.perf_counter()))
        if exact or n_pairs(inst) <= MILP_PAIR_LIMIT:
            t3 = time.perf_counter()
            opt = keep_milp(inst, k, forced, time_limit=left)
            timings["exact"] = time.perf_counter() - t3
            bound = max(bound, opt.bound)
            if opt.kept is not None and (out is None or int((~opt.kept).sum()) < int((~outcome.kept).sum())):
                cand = apply_kept(release, inst, opt.kept, chosen)
                res_c, _ = audit_release(cand, k, chosen)
                if res_c.k_unlinkable:
                    out, result = cand, res_c
                    result_of = "integer program"
                    why = ("the integer program's solution, which passes the exact audit" if not outcome.stopped
                           else f"{outcome.stopped}; the result is the integer program's solution, which passes "
                                "the exact audit")
                    steps.append(f"exact: the integer program's solution withholds {int((~opt.kept).sum())} and "
                                 "passes the audit, so it is the least possible")
    dedup_floor = int(np.clip(np.diff(inst.wl_ptr) - 1, 0, None).sum())   # the Dedup family keeps ≤ 1 per record
    if dedup_applies and (out is None or len(release) - len(out) > dedup_floor):
        # Flow-Dedup's suppression is one of the candidates: keep-most never withholds more than it, and it is the
        # certified answer when keep-most ran out of time.  Skipped when keep-most already withholds no more than
        # any deduplicated suppression must.
        t4 = time.perf_counter()
        alloc = allocate(inst, k, "flow-dedup", 0 if seed is None else seed)
        dedup, _, res_d, _, _ = certify(release, alloc.disclosed, k)
        timings["flow_dedup"] = time.perf_counter() - t4
        if out is None or len(dedup) > len(out):            # more rows kept = fewer withheld
            if out is None:
                why = f"{outcome.stopped}; the result is Flow-Dedup's certified suppression"
                steps.append("flow-dedup's certified suppression is returned, as keep-most ran out of time")
            else:
                why = "Flow-Dedup's certified suppression, which withholds less than keep-most's here"
                steps.append("flow-dedup's certified suppression withholds less here and is returned instead")
            out, result, result_of = dedup, res_d, "flow-dedup"
    if out is None or not result.k_unlinkable:  # pragma: no cover - keep_most certifies unless Flow-Dedup applies
        raise ReleaseError("internal: keep-most ended without a certified suppression; nothing is returned")
    before: dict[str, int] = {}
    if audit_before:
        t2 = time.perf_counter()
        before = audit_counts(audit_release(release, k, chosen)[0])
        timings["audit_before"] = time.perf_counter() - t2
    frame = release.frame
    kind = frame["kind"] == chosen
    omega = {c: [] for c in pd_unique(frame["location"])}
    for c, grp in frame[kind].groupby("location", sort=False)["element"]:
        omega[c] = grp.tolist()
    disclosed = {c: [] for c in omega}
    of_out = out.frame[out.frame["kind"] == chosen]
    for c, grp in of_out.groupby("location", sort=False)["element"]:
        disclosed[c] = grp.tolist()
    metrics = utility(omega, disclosed)
    allocation = Allocation(list(omega), disclosed, {}, "keep-most", k, seed)
    return UnlinkResult(out, allocation, k, "keep-most", seed, bool(result.k_unlinkable), metrics,
                        [], outcome.rounds, result, before, audit_counts(result), timings, side=chosen,
                        lower_bound=bound, steps=steps, result_of=result_of, result_why=why,
                        time_budget_hit=bool(outcome.stopped))


#: keep-most draws its ties again while its result withholds more than this times the lower bound ...
KEEP_DRAW_RATIO = 1.4
#: ... up to this many draws in all, each only when the time budget leaves room for one more (docs/unlink.md)
KEEP_DRAWS = 4


def _more_draws(first: Any, inst: Any, k: int, seed: int | None, t0: float, time_budget: float | None,
                progress: Callable[[str], None] | None, options: dict) -> tuple[Any, list[str]]:
    """Keep-most again with fresh ties while its result is far above the lower bound; the least-withholding
    certified outcome wins.

    Which records the first pass leaves tied decides the shape of the blocks the audit flags, and on skewed
    releases that shape decides the repair's cost: the app's demo at k = 2 withholds 170-199 on most draws and
    556-573 on a few (docs/unlink.md#keep-most, "More draws").  Another draw costs one more keep-most run (its audits
    included), so it runs only while the result is more than ``KEEP_DRAW_RATIO`` times the bound and the budget
    has room for a draw as long as the ones before.  Draws after the first use the operating system's random
    source, or ``seed`` + the draw's number when a seed is given (replayable for tests).  O(draws · keep-most).
    """
    from graphlink.protect.keep import keep_most

    best, tried = first, [int(first.withheld)]
    draws = 1
    while (best.certified and not best.stopped and draws < KEEP_DRAWS
           and best.withheld > KEEP_DRAW_RATIO * max(best.lower_bound, 1)):
        spent = time.perf_counter() - t0
        if time_budget is not None and spent * (draws + 1) / draws > time_budget:
            break                               # no room for a draw as long as the ones before
        if progress:
            progress(f"keep-most withholds {best.withheld:,} against a lower bound of {best.lower_bound:,}; "
                     "drawing the ties again")
        other = keep_most(inst, k, None if seed is None else seed + draws, progress=progress,
                          time_budget=None if time_budget is None else time_budget - spent, **options)
        draws += 1
        tried.append(int(other.withheld) if other.certified and not other.stopped else -1)
        if other.certified and not other.stopped and other.withheld < best.withheld:
            best = other
    if draws == 1:
        return best, []
    shown = ", ".join(f"{w:,}" if w >= 0 else "unfinished" for w in tried)
    return best, [f"ties drawn {draws} times (withheld {shown}); the least is kept"]


def unlink_keep_many(release: Any, k: int, seed: int | None = None, *, side: str = "auto",
                     must_keep: Iterable[tuple[Hashable, Hashable]] = (), no_empty_location: bool = False,
                     cap: int | None = None, audit_before: bool = True,
                     progress: Callable[[str], None] | None = None) -> UnlinkResult:
    """Keep-most on a release read as one-to-many (docs/unlink.md#one-to-many-releases): withhold identified
    (location, person) disclosures until the exact one-to-many audit, people allowed to withhold, certifies the
    release as written (:mod:`graphlink.protect.keep_many`).

    Parameters
    ----------
    release : Release
        Read as one-to-many (several people per de-identified element).
    k : int
        The protection level: every person fits at least k households, and every household is fitted by at least k
        people or by none (Definition 19 on the possible pairs of Appendix A).
    seed : int, optional
        Tie-breaking seed; None uses the operating system's random source.
    side, must_keep, no_empty_location, cap
        As :func:`unlink_keep`; only the people's side and no constraints are available here (others: exit 2).
    audit_before : bool
        Also report the certain pairs and violations of the input.
    progress : callable, optional
        A line per phase.

    Returns
    -------
    UnlinkResult
        ``side="identified"``, ``multiplicity="one-to-many"``, certified by
        ``graphlink audit --reserved identified --multiplicity one-to-many`` on the written release, with
        ``lower_bound`` (the sum of the per-person minima).

    Raises
    ------
    ModelAssumptionError
        The data refute the one-to-many model (a person fits no household), fewer households than k, or the
        de-identified side asked for.
    ReleaseError
        An option of the one-to-one path.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.core.release import read_release
    >>> import pandas as pd
    >>> rows = [("L1", "identified", "a"), ("L1", "identified", "b"), ("L2", "identified", "b"),
    ...         ("L1", "deidentified", "X"), ("L2", "deidentified", "X"), ("L1", "deidentified", "Y")]
    >>> result = unlink_keep_many(read_release(pd.DataFrame(rows, columns=["location", "kind", "element"])), 2,
    ...                           seed=0)
    >>> result.certified, result.summary().rows_withheld, result.lower_bound
    (True, 1, 1)

    Complexity: see :mod:`graphlink.protect.keep_many`; one exact audit per round (usually one).
    """
    import numpy as np

    from graphlink.protect.keep import instance_for
    from graphlink.protect.keep_many import check_many, keep_most_many, many_auditor

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    audit0 = check_many(release, k, side=side, must_keep=must_keep, no_empty_location=no_empty_location, cap=cap)
    before = audit_counts(audit0) if audit_before else {}
    timings["audit_before"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    inst = instance_for(release, "identified")
    auditor = many_auditor(release, inst, k)
    outcome = keep_most_many(inst, k, seed, auditor=auditor, progress=progress)
    timings["keep"] = time.perf_counter() - t1
    last = auditor.last
    if not last or not np.array_equal(last["kept"], outcome.kept) or not last["result"].k_unlinkable:
        raise ReleaseError("internal: keep-most ended without a certified suppression; nothing is returned")
    out, result = last["release"], last["result"]
    frame = release.frame
    omega = {c: [] for c in pd_unique(frame["location"])}
    for c, grp in frame[frame["kind"] == "identified"].groupby("location", sort=False)["element"]:
        omega[c] = grp.tolist()
    disclosed: dict[Hashable, list[Hashable]] = {c: [] for c in omega}
    of_out = out.frame[out.frame["kind"] == "identified"]
    for c, grp in of_out.groupby("location", sort=False)["element"]:
        disclosed[c] = grp.tolist()
    bound = outcome.lower_bound
    steps = list(outcome.steps)
    return UnlinkResult(out, Allocation(list(omega), disclosed, {}, "keep-most", k, seed), k, "keep-most", seed,
                        True, utility(omega, disclosed), [], outcome.rounds, result, before, audit_counts(result),
                        timings, side="identified", lower_bound=bound, steps=steps, result_of="keep-most",
                        result_why="keep-most's own suppression, certified by the exact one-to-many audit (people "
                        "may withhold)", multiplicity="one-to-many")


def must_keep_any(forced: Any) -> bool:
    """Whether a must-keep mask asks for anything."""
    return bool(len(forced) and forced.any())


def pd_unique(values: Any) -> list[Hashable]:
    """Distinct values in order of first appearance."""
    import pandas as pd

    return list(pd.unique(values))
