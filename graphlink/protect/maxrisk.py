"""Protection by probability: withhold until no pair's re-identification probability exceeds P.

What it does and why: docs/unlink.md#max-risk.

k-unlinkability with k ≥ 1/P does not bound the posterior of a pair (docs/risk.md: three records, k = 2, a pair
of probability 2/3), so :func:`unlink_max_risk` runs a loop whose certificate is the risk computation itself
(:func:`graphlink.analysis.risk.pair_probabilities` on the release as written):

1. protect with a registered method (:func:`graphlink.protect.pipeline.unlink`, keep-most by default) at
   k = max(2, ⌈1/P⌉);
2. compute every pair's probability on the written release; a pair counts as certified when it is exact and at
   most P, or estimated with an upper 95 % bound (probability + error) at most P;
3. for every record of the withheld side in a pair whose probability is above P, withhold one more disclosure:
   the one whose removal leaves the most people visiting every remaining location of the record (withholding
   only adds candidates, docs/unlink.md#the-model-withholding-only-adds-candidates); pairs only uncertain
   (estimate ≤ P < estimate + error) get a longer estimate first (the budget ×4 up to ``max_budget``), and are
   treated as above P when that does not certify them;
4. repeat until every pair is certified.  Every round withholds at least one disclosure, and a release with
   nothing left to link has no pair, so the loop ends; a run that would have to withhold every record raises
   :class:`MaxRiskError` (exit code 2) instead of writing an empty release.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphlink.errors import ReleaseError

#: exact probabilities are exact up to floating-point rounding (docs/risk.md): p ≤ P + this counts as ≤ P
TOLERANCE = 1e-9
#: the method that runs first unless another is asked for (it withholds single disclosures, not whole records)
DEFAULT_METHOD = "keep-most"
#: rounds of one disclosure per offending record before the offending records are withheld outright
MAX_ROUNDS = 200


class MaxRiskError(ReleaseError):
    """The requested maximum probability cannot be certified (exit code 2): the message says why.

    Examples
    --------
    A bound outside (0, 1] is refused before anything runs:

    >>> import graphlink as gl
    >>> from graphlink.protect import MaxRiskError
    >>> try:
    ...     gl.unlink_max_risk(gl.thesis_example(), 1.5)
    ... except MaxRiskError as error:
    ...     print(type(error).__name__, error.exit_code)
    MaxRiskError 2
    """


@dataclass
class MaxRiskResult:
    """Outcome of :func:`unlink_max_risk`.

    Attributes
    ----------
    release : Release
        The protected release as written; every pair's probability on it is certified ≤ ``max_risk``.
    max_risk : float
        The requested bound P.
    k : int
        The protection level the method ran at.
    method : str
        The registered protection method that ran first.
    side : str
        The side whose disclosures were withheld.
    unlinked : UnlinkResult
        The method's own (k-unlinkable, audited) result before the risk-driven rounds.
    risk : RiskResult
        The pair probabilities of ``release`` (the certificate).
    rows_before, rows_withheld : int
        (location, record) disclosures of the withheld side in the input, and withheld in total.
    records_before, records_withheld : int
        Distinct records of the withheld side in the input, and those withheld at every location.
    by_method, by_rounds : int
        Disclosures withheld by the method, and by the risk-driven rounds after it.
    rounds : int
        Risk computations after the method's run.
    highest : float
        The highest remaining pair probability (0 when no pair is left).
    highest_exact : bool
        That probability is exact (otherwise ``highest_error`` is its 95 % half-width).
    highest_error : float
    highest_upper : float
        The largest upper bound (probability + error) over all pairs: ≤ ``max_risk``.
    expected_correct : float
        Expected people re-identified correctly when an attacker names each person's most likely record.
    exact : bool
        Every probability of ``risk`` is exact.
    k_unlinkable : bool
        The written release is also k-unlinkable at ``k`` by the exact audit (Definition 19); the rounds after the
        method only add candidates to records, but a person may lose the exemption of having none.
    steps : list of str
        What each phase did, in words.
    timings : dict
        Seconds per phase.

    Examples
    --------
    Returned by :func:`unlink_max_risk`:

    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> out = gl.unlink_max_risk(release, 0.5, seed=0)
    >>> out.max_risk, out.highest <= out.max_risk, out.records_withheld <= out.records_before
    (0.5, True, True)
    """

    release: Any
    max_risk: float
    k: int
    method: str
    side: str
    unlinked: Any
    risk: Any
    rows_before: int
    rows_withheld: int
    records_before: int
    records_withheld: int
    by_method: int
    by_rounds: int
    rounds: int
    highest: float
    highest_exact: bool
    highest_error: float
    highest_upper: float
    expected_correct: float
    exact: bool
    k_unlinkable: bool = True
    steps: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The figures (the CLI's JSON), without the release and the result objects."""
        return {"max_risk": self.max_risk, "k": self.k, "method": self.method, "side": self.side,
                "certified": True, "rows_before": self.rows_before, "rows_withheld": self.rows_withheld,
                "records_before": self.records_before, "records_withheld": self.records_withheld,
                "withheld_by_method": self.by_method, "withheld_by_rounds": self.by_rounds, "rounds": self.rounds,
                "highest": self.highest, "highest_exact": self.highest_exact, "highest_error": self.highest_error,
                "highest_upper": self.highest_upper, "expected_correct": self.expected_correct,
                "exact": self.exact, "k_unlinkable": self.k_unlinkable, "steps": list(self.steps),
                "timings": {k: round(v, 4) for k, v in self.timings.items()}}


def start_level(max_risk: float) -> int:
    """The k the method starts at: max(2, ⌈1/P⌉) (a k-unlinkable record has at least k candidates, so a smaller k
    cannot bound its pairs by P even when they are equally likely).  O(1).

    Examples
    --------
    >>> start_level(0.5), start_level(0.34), start_level(0.2)
    (2, 3, 5)
    """
    return max(2, math.ceil(1.0 / max_risk - 1e-12))


def check_max_risk(max_risk: Any) -> float:
    """``max_risk`` as a float strictly between 0 and 1, or :class:`MaxRiskError` naming what was expected."""
    try:
        p = float(max_risk)
    except (TypeError, ValueError):
        p = float("nan")
    if not (0.0 < p < 1.0):
        raise MaxRiskError(f"the maximum risk must be a probability strictly between 0 and 1, got {max_risk!r}")
    return p


def written_risk(release: Any, side: str, *, budget: float | None = 1.0, seed: int = 0,
                 max_exact_states: int | None = None) -> Any:
    """Pair probabilities of ``release`` read as written: ``side`` reserved, one-to-one (the audit's reading,
    ``graphlink risk --reserved <side> --multiplicity one-to-one``).  Cost: :func:`pair_probabilities`."""
    from graphlink.analysis.risk import pair_probabilities
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails

    exact = {} if max_exact_states is None else {"max_exact_states": max_exact_states}
    return pair_probabilities(build_linkgraph(build_trails(release, side, "one-to-one")), budget=budget, seed=seed,
                              **exact)


def unlink_max_risk(release: Any, max_risk: float, method: str = DEFAULT_METHOD, seed: int | None = None, *,
                    k: int | None = None, budget: float = 1.0, max_budget: float | None = None,
                    multiplicity: str = "auto", max_rounds: int = MAX_ROUNDS,
                    max_exact_states: int | None = None,
                    progress: Callable[[str], None] | None = None) -> MaxRiskResult:
    """Protect ``release`` until no pair's re-identification probability exceeds ``max_risk``, certified by the
    pair probabilities of the release as written (module docstring; docs/unlink.md#max-risk).

    Parameters
    ----------
    release : Release
        A one-to-one release (one-to-many ones are refused: their pair probabilities are not computed).
    max_risk : float
        P, strictly between 0 and 1.
    method : str
        A registered protection method (:mod:`graphlink.registry`); keep-most by default.
    seed : int, optional
        The tie-breaking seed of the method and of the rounds (None: the operating system's random source, as in
        keep-most), and the estimate's seed (0 when None).
    k : int, optional
        The level the method runs at first; default :func:`start_level`.
    budget, max_budget : float
        Seconds the estimate may spend per block too large to count exactly, at first and at most (a pair that is
        only uncertain gets the budget ×4 until ``max_budget``, default 16 × ``budget``, then counts as above P).
    multiplicity : {"auto", "one-to-one"}
    max_rounds : int
        Rounds of one more disclosure per offending record; afterwards offending records are withheld outright.
    max_exact_states : int, optional
        Blocks up to this many DP states are counted exactly (default: the risk module's budget).
    progress : callable, optional
        Receives a line per phase.

    Returns
    -------
    MaxRiskResult

    Raises
    ------
    MaxRiskError
        P out of range, or every record would have to be withheld.
    ModelAssumptionError
        One-to-many data (pair probabilities are not computed for it), or sizes the method cannot protect.

    Examples
    --------
    >>> import graphlink as gl
    >>> out = unlink_max_risk(gl.thesis_example(), 0.5, seed=0)
    >>> out.highest <= 0.5, out.risk.exact
    (True, True)

    Complexity: one run of the method, then per round one pair-probability computation of the written release
    plus O(Σ_{r offending} Σ_{c ∈ D(r)} |γ_c|) to choose the disclosures.
    """
    from graphlink.analysis.risk import one_to_many_refusal
    from graphlink.errors import ModelAssumptionError
    from graphlink.protect.certify import _reads_one_to_many, audit_release
    from graphlink.protect.keep import instance_for
    from graphlink.protect.pipeline import unlink

    p = check_max_risk(max_risk)
    if multiplicity != "one-to-one" and _reads_one_to_many(release, multiplicity):
        raise ModelAssumptionError(diagnostic=one_to_many_refusal())
    say = progress or (lambda _msg: None)
    max_budget = 16.0 * budget if max_budget is None else max_budget
    level = start_level(p) if k is None else int(k)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    unlinked = unlink(release, level, method, seed, audit_before=False, progress=progress,
                      multiplicity=multiplicity)
    timings["method"] = time.perf_counter() - t0
    side = unlinked.side
    current = unlinked.release
    rows_before = int((release.frame["kind"] == side).sum())
    by_method = rows_before - int((current.frame["kind"] == side).sum())
    steps = [f"{method} at k = {level}: {by_method:,} disclosures withheld"]
    say(steps[-1])
    rng = np.random.default_rng(seed)          # None: ties from the operating system, as keep-most's
    est_seed = 0 if seed is None else int(seed)
    rounds, spent = 0, budget
    t_risk = 0.0
    while True:
        if not int((current.frame["kind"] == side).sum()):
            raise MaxRiskError(f"a maximum risk of {p:g} cannot be reached without withholding every "
                               f"{'de-identified' if side == 'deidentified' else 'identified'} record; nothing "
                               "written")
        t1 = time.perf_counter()
        risk = written_risk(current, side, budget=spent, seed=est_seed, max_exact_states=max_exact_states)
        t_risk += time.perf_counter() - t1
        prob, err = risk.class_probability, risk.class_error
        upper = prob + err
        over = prob > p + TOLERANCE
        unsure = ~over & (upper > p + TOLERANCE)
        if not over.any() and not unsure.any():
            break
        rounds += 1
        if not over.any() and spent * 4 <= max_budget + 1e-9:
            spent *= 4
            steps.append(f"round {rounds}: {int(unsure.sum()):,} estimated pairs could exceed {p:g}; "
                         f"estimating again with {spent:g} s per block")
            say(steps[-1])
            continue
        # above P, or (the budget spent) still not ruled out: both count as offending
        bad = over if over.any() else unsure
        g = risk.graph
        cls = (g.class_ej if side == "deidentified" else g.class_ei)[bad]
        elem_class = g.de_class if side == "deidentified" else g.id_class
        keys = getattr(g.trails, side).keys[np.isin(elem_class, np.unique(cls))]
        inst = instance_for(current, side)
        drop = _choose(inst, _codes(inst.de_keys, keys), rng, outright=rounds > max_rounds)
        current = _withhold(current, inst, drop, side)
        what = "above" if over.any() else "not certified at or below"
        steps.append(f"round {rounds}: {int(bad.sum()):,} pairs {what} {p:g} over {len(keys):,} records; "
                     f"{len(drop):,} more disclosures withheld")
        say(steps[-1])
    timings["risk"] = t_risk
    timings["total"] = time.perf_counter() - t0
    rows_after = int((current.frame["kind"] == side).sum())
    recs_before = int(release.frame.loc[release.frame["kind"] == side, "element"].nunique())
    recs_after = int(current.frame.loc[current.frame["kind"] == side, "element"].nunique())
    prob, err = risk.class_probability, risk.class_error
    if len(prob):
        i = int(np.argmax(prob))
        highest, h_exact, h_err = float(prob[i]), bool(risk.class_exact[i]), float(err[i])
        h_upper = float((prob + err).max())
    else:
        highest, h_exact, h_err, h_upper = 0.0, True, 0.0, 0.0
    summary = risk.summary()
    t2 = time.perf_counter()
    # the method's own output passed the audit already; only a release the rounds changed is audited again
    changed = rows_before - rows_after > by_method
    audited = audit_release(current, level, side)[0].k_unlinkable if changed else unlinked.certified
    timings["audit"] = time.perf_counter() - t2
    steps.append(f"certified: every pair's probability is at most {p:g} "
                 f"({'all exact' if risk.exact else 'exact or with a 95 % upper bound at most P'})")
    return MaxRiskResult(current, p, level, method, side, unlinked, risk, rows_before, rows_before - rows_after,
                         recs_before, recs_before - recs_after, by_method, rows_before - rows_after - by_method,
                         rounds, highest, h_exact, h_err, h_upper, float(summary.expected_correct_best),
                         bool(risk.exact), bool(audited), steps, timings)


def _codes(keys: Any, wanted: Any) -> np.ndarray:
    """Positions of ``wanted`` among ``keys`` (-1 where absent).  O(n)."""
    import pandas as pd

    return pd.Index(keys).get_indexer(wanted)


def _choose(inst: Any, recs: np.ndarray, rng: np.random.Generator, *, outright: bool) -> list[tuple[int, int]]:
    """One (location, record) disclosure per record of ``recs`` to withhold: the location whose removal leaves the
    most people who visited every other kept location of the record (ties at random); every disclosure of the
    record when ``outright``.  O(Σ_r Σ_{c∈D(r)} |γ_c|)."""
    out: list[tuple[int, int]] = []
    n_people = inst.n_identified
    for r in recs[recs >= 0]:
        locs = inst.wl_idx[inst.wl_ptr[r]:inst.wl_ptr[r + 1]]
        if outright or len(locs) == 1:
            out.extend((int(c), int(r)) for c in locs)
            continue
        people = [inst.g_idx[inst.g_ptr[c]:inst.g_ptr[c + 1]] for c in locs]
        seen = np.bincount(np.concatenate(people), minlength=n_people)
        # people who miss exactly one kept location: which one (its position), through a weighted count
        where = np.bincount(np.concatenate(people), np.concatenate([np.full(len(x), j, float)
                                                                   for j, x in enumerate(people)]),
                            minlength=n_people)
        d = len(locs)
        miss_one = seen == d - 1
        missing = (d * (d - 1) // 2 - where[miss_one]).astype(np.int64)
        gain = np.bincount(missing, minlength=d)
        best = np.flatnonzero(gain == gain.max())
        out.append((int(locs[rng.choice(best)]), int(r)))
    return out


def _withhold(release: Any, inst: Any, drop: list[tuple[int, int]], side: str) -> Any:
    """``release`` without the (location, record) disclosures ``drop`` (codes of ``inst``) of ``side``.  O(rows)."""
    import pandas as pd

    if not drop:
        return release
    frame = release.frame
    gone = pd.MultiIndex.from_tuples([(inst.locations[c], inst.de_keys[r]) for c, r in drop])
    rows = frame["kind"] == side
    hit = pd.MultiIndex.from_arrays([frame["location"], frame["element"]]).isin(gone) & rows.to_numpy()
    return release.select(~hit)
