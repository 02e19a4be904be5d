"""Keep-most: withhold single (location, record) disclosures until the exact audit certifies (docs/unlink.md#keep-most).

The Dedup family (Malin 2006 ch. 7) keeps each disclosed record at exactly one location, so a record seen at six
places loses five.  Keep-most withholds individual disclosures instead.  The model argument
(docs/unlink.md#keep-most): on the withheld ("reserved") side, withholding (c, r) turns r's trail at c from 1 into
``*`` (and at a location whose two tables had the same size, every absent record's 0 into ``*``); a link test
(Definition 17) only compares known values, so withholding never removes a link, it can only add candidates.
The method therefore shrinks each record's kept set K(r) ⊆ D(r) monotonically:

1. per record, the largest K(r) that at least k people visited entirely (an exact subset search for records
   at up to :data:`DMAX` locations, :func:`graphlink.kernels.keep.best_subsets`; a greedy above), ties broken at
   random;
2. per person with fewer than k candidates (null trails counted), the cheapest records to make compatible
   with them;
3. the exact audit (union of all maximum matchings, Definition 19) on the release as written; records and
   people it flags get more candidates or are withheld whole (:func:`_repair`; first some null trails when the
   audit finds none), and it runs again until it passes or the time budget runs out.

The per-record minima of step 1 sum to a lower bound on the records any k-unlinkable suppression must withhold
(:func:`lower_bound` says exactly which).  Complexity per pass: O(Σ_r (Σ_{c∈D(r)} |γ_c| + 2^{d_r}·d_r)); plus one
audit per round.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.protect.instance import Instance

#: records disclosed at up to this many locations get the exact subset search (2^DMAX histogram)
DMAX = 16
#: audit rounds before the method falls back to withholding every flagged record outright
MAX_ROUNDS = 40
#: in the repair's set cover: "withhold the record whole" instead of a person to make it a candidate of
_NULL = -2
KINDS = ("identified", "deidentified")



@dataclass
class AuditView:
    """What the repair needs from one exact audit, in codes of the :class:`Instance`.

    ``rec_v``/``rec_deg``: records with fewer than k partners in the union of all maximum matchings and their
    union degree; ``per_v``/``per_deg``: the same for people (null partners counted); ``free``: per person,
    whether some maximum matching leaves them to a null trail.
    """

    rec_v: np.ndarray
    rec_deg: np.ndarray
    per_v: np.ndarray
    per_deg: np.ndarray
    free: np.ndarray
    nulls: int
    classes: Any = None              # the audit's EdgeClasses (a maximum matching and the link graph)
    rec_row: np.ndarray | None = None  # record code -> row of the audited graph (-1: withheld everywhere)
    row_rec: np.ndarray | None = None  # row of the audited graph -> record code
    row_per: np.ndarray | None = None  # identified row of the audited graph -> person code
    per_row: np.ndarray | None = None
    neighbours: Any = None           # graph row of a record -> graph rows of the people it links to
    mates: Any = None                # graph row of a person -> graph row of the record matched to them, or -1
    alternating: Any = None          # record rows + 1 sink: j -> mate of each person j links to (sink: a null trail)


#: the exact audit of a kept mask
Auditor = Callable[[np.ndarray], AuditView]


class KeepInfeasibleError(ReleaseError):
    """The request (records that must stay disclosed, no empty location, a cap per location) cannot be met at
    this k; the message names the constraint and where (exit 2)."""


@dataclass
class KeepOutcome:
    """What keep-most decided, on an :class:`Instance` (codes).

    Attributes
    ----------
    kept : numpy.ndarray of bool
        One flag per entry of ``inst.wl_idx`` (record r's locations are ``wl_idx[wl_ptr[r]:wl_ptr[r+1]]``).
    lower_bound : int
        At least this many disclosures must be withheld by any suppression (see :func:`lower_bound`).
    bound_exact_records : int
        Records whose share of the bound is their exact minimum (the others use a weaker per-record bound).
    withheld_first_pass, rounds : int
        Disclosures withheld before the first audit; audit rounds until it passed (or until the time budget ran
        out).
    steps : list of str
        What each phase did, in words.
    certified : bool
        The last audit passed on ``kept``.  False only when the time budget ran out and ``finish_on_budget``
        was off: then ``kept`` is *not* a k-unlinkable suppression and must not be published.
    stopped : str
        Empty, or in words why the repair stopped early (the time budget).
    """

    kept: np.ndarray
    lower_bound: int
    bound_exact_records: int
    withheld_first_pass: int
    rounds: int
    steps: list[str] = field(default_factory=list)
    certified: bool = True
    stopped: str = ""

    @property
    def withheld(self) -> int:
        return int((~self.kept).sum())


def _rng_words(n: int, seed: int | None) -> np.ndarray:
    """One random 63-bit word per record for tie-breaking: from the operating system's random source unless a
    seed is given (simulated data, tests).  A method-aware attacker then cannot replay our choices."""
    gen = np.random.default_rng(secrets.randbits(128) if seed is None else seed)
    return gen.integers(1, 2**62, size=max(n, 1), dtype=np.int64)


def _sub_csr(ptr: np.ndarray, flags: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries of ``rows`` whose ``flags`` are set, as (ptr, positions into the full index array)."""
    parts = [np.arange(ptr[r], ptr[r + 1])[flags[ptr[r]:ptr[r + 1]]] for r in rows]
    lens = np.fromiter((len(p) for p in parts), np.int64, len(parts))
    sub_ptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lens, out=sub_ptr[1:])
    return sub_ptr, (np.concatenate(parts) if parts else np.zeros(0, np.int64))


class _Search:
    """The per-record subset search and the per-person candidate counts on one :class:`Instance`."""

    def __init__(self, inst: Instance, forced: np.ndarray, rnd: np.ndarray, deadline: float | None = None) -> None:
        self.inst = inst
        self.forced = forced
        self.rnd = rnd
        self.n_persons = inst.n_identified
        self.deadline = deadline        # time.perf_counter() after which long loops stop early (the time budget)

    def late(self) -> bool:
        """Whether the time budget has run out (never without a budget)."""
        return self.deadline is not None and time.perf_counter() > self.deadline

    def solve(self, rows: np.ndarray, flags: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For ``rows``: the new kept flags (entries of ``inst.wl_idx``) keeping the most of the positions
        ``flags`` still allows with ≥ ``target`` candidates, and per row its minimum withheld among those positions
        (−1: the forced positions admit too few candidates).  Returns (kept flags over all entries, minima)."""
        from graphlink.kernels.keep import best_subsets

        inst = self.inst
        sub_ptr, pos = _sub_csr(inst.wl_ptr, flags, rows)
        loc = inst.wl_idx[pos]
        forced = self.forced[pos].astype(np.int64)
        chosen, size = best_subsets(sub_ptr, loc, forced, target.astype(np.int64), inst.g_ptr, inst.g_idx,
                                    self.n_persons, DMAX, self.rnd[rows])
        new = flags.copy()
        minima = np.zeros(len(rows), np.int64)
        for i in range(len(rows)):
            a, b = sub_ptr[i], sub_ptr[i + 1]
            d = b - a
            if chosen[i] == -2:
                keep_bits, minima[i] = self._greedy(loc[a:b], self.forced[pos[a:b]], int(target[i]),
                                                    int(self.rnd[rows[i]]))
            elif chosen[i] == -1:
                minima[i] = -1
                continue
            else:
                keep_bits = ((int(chosen[i]) >> np.arange(d)) & 1).astype(bool)
                minima[i] = d - size[i]
            if minima[i] >= 0:
                new[pos[a:b]] = keep_bits
        return new, minima

    def _greedy(self, locs: np.ndarray, forced: np.ndarray, target: int, word: int) -> tuple[np.ndarray, int]:
        """Records at more than :data:`DMAX` locations: grow the withheld set W by the person whose missing
        locations add the fewest to W (ties at random) until ``target`` people visited every location outside W.
        Returns (kept flags, a lower bound on the minimum: the target-th smallest number of missing locations).
        O(candidates · d · target)."""
        inst = self.inst
        d = len(locs)
        owners = [inst.g_idx[inst.g_ptr[c]:inst.g_ptr[c + 1]] for c in locs]
        cand = np.unique(np.concatenate(owners)) if owners else np.zeros(0, np.int64)
        visit = np.zeros((len(cand), d), bool)
        for j, o in enumerate(owners):
            visit[np.searchsorted(cand, o), j] = True
        miss = ~visit
        outside = self.n_persons - len(cand)                 # persons at none of the locations: miss them all
        eligible = ~(miss & forced).any(axis=1)
        if not forced.any():
            miss_counts = np.concatenate([miss[eligible].sum(1), np.full(outside, d)])
        else:
            miss_counts = miss[eligible].sum(1)
        if len(miss_counts) < target:       # nobody enough: withheld everywhere (a null trail) unless forced
            return np.zeros(d, bool), (-1 if forced.any() else d)
        bound = int(np.partition(miss_counts, target - 1)[target - 1])
        rng = np.random.default_rng(word)
        gone = np.zeros(d, bool)
        while True:
            left = (miss & ~gone).sum(1)
            ok = eligible & (left == 0)
            have = int(ok.sum()) + (outside if gone.all() else 0)
            if have >= target:
                return ~gone, bound
            pool = np.flatnonzero(eligible & ~ok)
            if not len(pool):
                return (np.zeros(d, bool), bound) if not forced.any() else (np.zeros(d, bool), -1)
            cost = left[pool]
            best = pool[cost == cost.min()]
            gone |= miss[best[rng.integers(len(best))]]

    def counts(self, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(per person: records kept somewhere they are a candidate for; per record: its candidates)."""
        from graphlink.kernels.keep import candidate_counts

        inst = self.inst
        return candidate_counts(inst.wl_ptr, inst.wl_idx, kept.astype(np.int64), inst.g_ptr, inst.g_idx,
                                self.n_persons)


def _where(inst: Instance, rec: int, kind: str) -> str:
    return f"{_word(kind)} record {inst.de_keys[rec]!s}"


def _word(kind: str) -> str:
    return "de-identified" if kind == "deidentified" else "identified"


def keep_most(inst: Instance, k: int, seed: int | None = None, *, must_keep: np.ndarray | None = None,
              no_empty_location: bool = False, cap: int | None = None, auditor: Auditor | None = None,
              kind: str = "deidentified", progress: Callable[[str], None] | None = None,
              max_rounds: int = MAX_ROUNDS, time_budget: float | None = None,
              finish_on_budget: bool = True) -> KeepOutcome:
    """Keep-most: withhold the fewest (location, record) disclosures it can find until the audit passes.

    Parameters
    ----------
    inst : Instance
        γ_c = the side that stays whole, ω_c = the side whose disclosures may be withheld (``kind`` names it).
    k : int
        The protection level (Definition 19).
    seed : int, optional
        Tie-breaking seed; ``None`` (the default for real data) draws from the operating system's random source.
    must_keep : numpy.ndarray of bool, optional
        One flag per entry of ``inst.wl_idx``: disclosures that must stay.
    no_empty_location : bool
        Every location that discloses something keeps at least one record.
    cap : int, optional
        At most this many disclosures withheld per location.
    auditor : callable, optional
        The exact audit of a kept mask (:func:`instance_auditor` when omitted).
    kind, progress, max_rounds
        The withheld side's name (for messages), a callback for progress lines, the audit rounds before the
        fallback.
    time_budget : float, optional
        Seconds after which the repair stops (checked between audit rounds and inside the long repair loops);
        None: no limit.
    finish_on_budget : bool
        When the budget runs out: True withholds the records the audit flags outright, round after round, until
        it passes (always certified, usually more withheld); False stops at once and returns an outcome with
        ``certified=False`` for the caller to replace (:func:`graphlink.protect.pipeline.unlink_keep` returns
        Flow-Dedup's certified suppression then).

    Returns
    -------
    KeepOutcome
        The kept flags (certified by ``auditor`` unless ``certified`` is False), the lower bound and what each
        phase did.

    Raises
    ------
    KeepInfeasibleError
        A constraint cannot be met at this k (the message says which and where).

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.protect.instance import Instance
    >>> out = keep_most(Instance.from_frame(gl.thesis_example().frame), 2, seed=0)
    >>> out.withheld >= out.lower_bound
    True

    Complexity: see the module docstring; every round runs one exact audit (O(E·√V)).
    """
    if k < 1:
        raise ReleaseError(f"k must be a positive integer, got {k}")
    say = progress or (lambda _msg: None)
    n_rec, n_entries = inst.n_deidentified, len(inst.wl_idx)
    forced = np.zeros(n_entries, bool) if must_keep is None else np.asarray(must_keep, bool).copy()
    t0 = time.perf_counter()
    search = _Search(inst, forced, _rng_words(n_rec, seed), None if time_budget is None else t0 + time_budget)
    rng = np.random.default_rng(int(search.rnd[0]) ^ 0x5DEECE66D)
    rows = np.arange(n_rec)
    all_on = np.ones(n_entries, bool)
    kept, minima = search.solve(rows, all_on, np.full(n_rec, k))
    _refuse_forced(inst, minima, forced, k, kind)
    bound, exact = lower_bound_from(inst, minima, k)
    if inst.n_deidentified > inst.n_identified:           # the other side is padded with null trails
        bound = lower_bound(inst, k, forced)
    steps = [f"records: {int((~kept).sum())} disclosures withheld so that every record has {k} candidates "
             f"({time.perf_counter() - t0:.1f} s)"]
    say(steps[-1])
    if no_empty_location:
        kept = _fill_empty_locations(inst, search, kept, k, kind)
    if cap is not None:
        kept = _apply_cap(inst, search, kept, k, cap, kind)
    kept = _serve_people(inst, search, kept, k, None, steps, say)
    first = int((~kept).sum())
    auditor = auditor or instance_auditor(inst, k, kind)
    rounds = 0
    stopped = ""
    while True:
        view = auditor(kept)
        rec_v, per_v = view.rec_v, view.per_v
        if not len(rec_v) and not len(per_v):
            break
        rounds += 1
        say(f"audit round {rounds}: {len(rec_v)} records and {len(per_v)} people have fewer than {k} partners "
            f"({time.perf_counter() - t0:.0f} s)")
        if search.late() and not stopped:
            stopped = (f"keep-most did not certify within {time_budget:g} s ({rounds} audit "
                       f"round{'s' if rounds != 1 else ''})")
            say(stopped + ("; withholding the flagged records outright" if finish_on_budget else ""))
            if not finish_on_budget:
                steps.append(stopped)
                return KeepOutcome(kept, bound, exact, first, rounds, steps, certified=False, stopped=stopped)
        before = int((~kept).sum())
        if rounds <= max_rounds and not stopped:
            kept = _repair(inst, search, kept, k, view, rng)
        if int((~kept).sum()) == before or rounds > max_rounds or stopped:
            kept = _withhold_flagged(inst, kept, forced, rec_v, per_v, k, kind)
        if cap is not None:
            _check_cap(inst, kept, cap, kind)
    if stopped:
        steps.append(stopped + "; the records the audit still flagged were then withheld outright until it passed")
    steps.append(f"audit: certified after {rounds} repair round{'s' if rounds != 1 else ''}, "
                 f"{int((~kept).sum()) - first} more disclosures withheld")
    if no_empty_location:
        _check_nonempty(inst, kept, kind)
    return KeepOutcome(kept, bound, exact, first, rounds, steps, stopped=stopped)


def lower_bound_from(inst: Instance, minima: np.ndarray, k: int) -> tuple[int, int]:
    """Σ over records of the least each must lose (``minima`` from the first pass at target k) and how many of
    those minima are exact.  Valid because a record r that stays linkable needs ≥ k partners in the union of all
    maximum matchings, a subset of its link edges (Definition 19); those edges only grow as disclosures are
    withheld, so the cheapest way to give r alone k candidates is a floor on what r costs, whatever else is
    withheld (docs/unlink.md#keep-most).  When the withheld side has more elements than the other, the other is
    padded with null trails that every record can be; the bound then asks for k minus that many."""
    exact = int(sum(1 for r in range(len(minima)) if inst.wl_ptr[r + 1] - inst.wl_ptr[r] <= DMAX))
    return int(np.clip(minima, 0, None).sum()), exact


def lower_bound(inst: Instance, k: int, must_keep: np.ndarray | None = None) -> int:
    """At least this many (location, record) disclosures are withheld by any k-unlinkable suppression of
    ``inst`` that keeps ``must_keep`` (the edge-degree relaxation of Definition 19 on the withheld side: each
    record needs k candidate people; equal-size locations are read as ``*``, which only adds candidates).
    O(Σ_r (Σ_{c∈D(r)} |γ_c| + 2^{d_r}·d_r))."""
    n_entries = len(inst.wl_idx)
    forced = np.zeros(n_entries, bool) if must_keep is None else np.asarray(must_keep, bool)
    search = _Search(inst, forced, _rng_words(inst.n_deidentified, 0))
    pad = max(0, inst.n_deidentified - inst.n_identified)
    _, minima = search.solve(np.arange(inst.n_deidentified), np.ones(n_entries, bool),
                             np.full(inst.n_deidentified, max(k - pad, 0)))
    return lower_bound_from(inst, minima, k)[0]


def _refuse_forced(inst: Instance, minima: np.ndarray, forced: np.ndarray, k: int, kind: str) -> None:
    bad = np.flatnonzero(minima < 0)
    if len(bad):
        r = int(bad[0])
        seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
        locs = [str(inst.locations[c]) for c in inst.wl_idx[seg][forced[seg]]]
        raise KeepInfeasibleError(
            f"the records that must stay disclosed cannot be protected at k = {k}: fewer than {k} people visited "
            f"every location where {_where(inst, r, kind)} must stay disclosed ({', '.join(locs)})"
            + (f"; {len(bad) - 1} more records likewise" if len(bad) > 1 else ""))


def _fill_empty_locations(inst: Instance, search: _Search, kept: np.ndarray, k: int, kind: str) -> np.ndarray:
    """Every location left with nothing gets back the one record whose kept set, with that location forced,
    loses the least; that disclosure then stays (forced)."""
    n_loc = inst.n_locations
    for c in range(n_loc):
        recs = inst.w_idx[inst.w_ptr[c]:inst.w_ptr[c + 1]]
        if not len(recs):
            continue
        at_c = _entries_at(inst, recs, c)
        if kept[at_c].any():
            continue
        if inst.g_ptr[c + 1] - inst.g_ptr[c] < k:
            raise KeepInfeasibleError(
                f"no location may be left with nothing, but location {inst.locations[c]!s} has only "
                f"{inst.g_ptr[c + 1] - inst.g_ptr[c]} people on the other side, fewer than k = {k}")
        saved = search.forced[at_c].copy()
        search.forced[at_c] = True                           # try each record with c forced, keep the best
        trial, minima = search.solve(recs, np.ones_like(kept), np.full(len(recs), k))
        search.forced[at_c] = saved
        ok = np.flatnonzero(minima >= 0)
        if not len(ok):
            raise KeepInfeasibleError(
                f"no location may be left with nothing, but no record at location {inst.locations[c]!s} can stay "
                f"disclosed there with {k} candidates")
        best = ok[np.argmin(minima[ok])]
        r = recs[best]
        seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
        kept[seg] = trial[seg]
        search.forced[at_c[best]] = True
    return kept


def _entries_at(inst: Instance, recs: np.ndarray, c: int) -> np.ndarray:
    """The entry of each record of ``recs`` at location ``c`` (positions into ``inst.wl_idx``)."""
    out = np.empty(len(recs), np.int64)
    for i, r in enumerate(recs):
        a = inst.wl_ptr[r]
        out[i] = a + int(np.flatnonzero(inst.wl_idx[a:inst.wl_ptr[r + 1]] == c)[0])
    return out


def _apply_cap(inst: Instance, search: _Search, kept: np.ndarray, k: int, cap: int, kind: str) -> np.ndarray:
    """Locations over the cap take back the disclosures whose records lose least by keeping them, forced from
    then on; repeated until no location is over (forcing only grows, so this ends)."""
    while True:
        loc_of = inst.wl_idx
        withheld = np.bincount(loc_of[~kept], minlength=inst.n_locations)
        over = np.flatnonzero(withheld > cap)
        if not len(over):
            return kept
        c = int(over[0])
        entries = np.flatnonzero((loc_of == c) & ~kept)
        recs = np.searchsorted(inst.wl_ptr, entries, side="right") - 1
        saved = search.forced[entries].copy()
        search.forced[entries] = True
        trial, minima = search.solve(recs, np.ones_like(kept), np.full(len(recs), k))
        search.forced[entries] = saved
        ok = np.flatnonzero(minima >= 0)
        need = int(withheld[c] - cap)
        if len(ok) < need:
            raise KeepInfeasibleError(
                f"at most {cap} withheld records per location cannot be met at location {inst.locations[c]!s}: "
                f"{withheld[c]} of its records need to be withheld there to give each {k} candidates, and only "
                f"{len(ok)} of them can stay")
        take = ok[np.argsort(minima[ok], kind="stable")[:need]]
        for i in take:
            r = recs[i]
            seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
            kept[seg] = trial[seg]
            search.forced[entries[i]] = True


def _check_cap(inst: Instance, kept: np.ndarray, cap: int, kind: str) -> None:
    withheld = np.bincount(inst.wl_idx[~kept], minlength=inst.n_locations)
    over = np.flatnonzero(withheld > cap)
    if len(over):
        c = int(over[0])
        raise KeepInfeasibleError(
            f"at most {cap} withheld records per location cannot be met at location {inst.locations[c]!s}: the "
            f"audit needs {withheld[c]} withheld there")


def _check_nonempty(inst: Instance, kept: np.ndarray, kind: str) -> None:
    for c in range(inst.n_locations):
        recs = inst.w_idx[inst.w_ptr[c]:inst.w_ptr[c + 1]]
        if len(recs) and not kept[_entries_at(inst, recs, c)].any():
            raise KeepInfeasibleError(
                f"no location may be left with nothing, but the audit needs every {_word(kind)} record at location "
                f"{inst.locations[c]!s} withheld")


def _serve_people(inst: Instance, search: _Search, kept: np.ndarray, k: int,
                  flagged: tuple[np.ndarray, np.ndarray] | None, steps: list[str],
                  say: Callable[[str], None]) -> np.ndarray:
    """People with fewer than k candidates (null trails counted) get the cheapest further records made compatible
    with them: a record costs its kept locations the person did not visit (forced ones rule it out).  ``flagged``
    (people, how many more each needs) comes from the audit; without it, from the link counts."""
    per_person, _ = search.counts(kept)
    rec = np.repeat(np.arange(inst.n_deidentified), np.diff(inst.wl_ptr))
    alive = np.bincount(rec[kept], minlength=inst.n_deidentified) > 0
    nulls = max(0, inst.n_identified - int(alive.sum()))
    if flagged is None:
        need_all = k - per_person - nulls
        people = np.flatnonzero((per_person >= 1) & (need_all > 0))
        needs = need_all[people]
    else:
        people, needs = flagged
    if not len(people):
        return kept
    rng = np.random.default_rng(int(search.rnd[0]) ^ 0x5DEECE66D)
    before = int((~kept).sum())
    for p, need in zip(people, needs, strict=True):
        if search.late():               # the time budget ran out: the caller's next audit decides what happens
            break
        visited = np.zeros(inst.n_locations, bool)
        visited[inst.gl_idx[inst.gl_ptr[p]:inst.gl_ptr[p + 1]]] = True
        recs = np.unique(np.concatenate([inst.w_idx[inst.w_ptr[c]:inst.w_ptr[c + 1]]
                                         for c in np.flatnonzero(visited)] or [np.zeros(0, np.int64)]))
        costs = []
        for r in recs:
            seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
            out = kept[seg] & ~visited[inst.wl_idx[seg]]
            if not kept[seg].any() or (out & search.forced[seg]).any():
                continue
            n_out = int(out.sum())
            if n_out:
                costs.append((n_out, rng.random(), int(r)))
        costs.sort()
        for _, _, r in costs[:int(need)]:
            seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
            kept[seg] &= visited[inst.wl_idx[seg]]
    steps.append(f"people: {int((~kept).sum()) - before} disclosures withheld so that {len(people)} people get "
                 "more candidates")
    say(steps[-1])
    return kept


def _cheapest_free(inst: Instance, search: _Search, kept: np.ndarray, r: int, free: np.ndarray,
                   rng: np.random.Generator) -> tuple[int, int]:
    """The cheapest person some maximum matching leaves to a null trail who is not yet a candidate of record r:
    (disclosures of r to withhold, person code), or (-1, -1) when there is none (forced locations rule every such
    person out).  A person costs r's kept locations they did not visit.  O(Σ_{c∈K(r)} |γ_c|)."""
    seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
    locs = inst.wl_idx[seg]
    on = kept[seg]
    if not on.any():
        return -1, -1
    at = [inst.g_idx[inst.g_ptr[c]:inst.g_ptr[c + 1]] for c in locs[on]]
    cand, hits = np.unique(np.concatenate(at), return_counts=True)
    n_on = int(on.sum())
    ok = free[cand] & (hits < n_on)
    forced_on = search.forced[seg] & on
    if forced_on.any():                 # a candidate must have visited every forced location
        must = [set(inst.g_idx[inst.g_ptr[c]:inst.g_ptr[c + 1]].tolist()) for c in locs[forced_on]]
        ok &= np.fromiter((all(int(p) in m for m in must) for p in cand), bool, len(cand))
    pool = np.flatnonzero(ok)
    if not len(pool):
        if not forced_on.any() and free.any():    # withheld everywhere, the record is a null trail: anyone
            return n_on, int(np.flatnonzero(free)[0])
        return -1, -1
    cost = n_on - hits[pool]
    best = pool[cost == cost.min()]
    pick = int(best[rng.integers(len(best))])
    return int(n_on - hits[pick]), int(cand[pick])


def _make_candidate(inst: Instance, kept: np.ndarray, r: int, p: int) -> int:
    """Withhold record r's kept locations that person p did not visit; returns how many."""
    seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
    visited = np.zeros(inst.n_locations, bool)
    visited[inst.gl_idx[inst.gl_ptr[p]:inst.gl_ptr[p + 1]]] = True
    on = kept[seg]
    new = on & visited[inst.wl_idx[seg]]
    kept[seg] = new
    return int(on.sum() - new.sum())


def _free_candidates(inst: Instance, search: _Search, kept: np.ndarray, r: int, free: np.ndarray, need: int,
                     rng: np.random.Generator) -> int:
    """Give record r ``need`` more candidates among the people some maximum matching leaves to a null trail,
    cheapest first.  Such an edge is always in the union: swap r onto that person and r's partner onto the
    null trail.  Returns the disclosures withheld.  O(need · Σ_{c∈K(r)} |γ_c|)."""
    withheld = 0
    for _ in range(int(need)):
        cost, p = _cheapest_free(inst, search, kept, r, free, rng)
        if p < 0:
            break
        withheld += _make_candidate(inst, kept, r, p)
    return withheld


def _reach(view: AuditView, row: int) -> set[int] | None:
    """The records (graph rows) reachable from record ``row`` by alternating paths of the audit's maximum
    matching (a candidate person, then the record matched to them); None when a path reaches a person matched
    to a null trail, i.e. the record already shares the component of the null trails (Dulmage-Mendelsohn).
    O(edges of the records reached), a breadth-first search in compiled code when the audit built the
    alternating graph (:func:`release_auditor`); the blocks run to thousands of records at k = 5."""
    if view.alternating is not None:
        from scipy.sparse.csgraph import breadth_first_order

        graph = view.alternating
        order = breadth_first_order(graph, row, directed=True, return_predecessors=False)
        if graph.shape[0] - 1 in order:                    # the sink: a person matched to a null trail
            return None
        return set(order.tolist())
    mate = view.mates
    seen, stack = {row}, [row]
    while stack:
        j = stack.pop()
        for i in view.neighbours(j):
            m = int(mate[i])
            if m < 0:
                return None
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return seen


def _repair(inst: Instance, search: _Search, kept: np.ndarray, k: int, view: AuditView,
            rng: np.random.Generator) -> np.ndarray:
    """One repair round after a failed audit (docs/unlink.md#keep-most).

    The padded link graph always has a perfect matching (the true owners plus the null trails), so an edge is in
    the union of all maximum matchings exactly when it lies in a strongly connected component of the matching's
    alternating graph; the null trails, which everybody can be, make one large component G of everyone a
    maximum matching can leave to a null trail.  A flagged record outside G sits in a tight block: every record
    it reaches by alternating paths is matched inside the block.  One new candidate from G for *any* record of
    the block joins the whole block to G, so the cheapest record of the block is chosen; a flagged person outside
    G is freed the same way through the record matched to them (then the null trails count for them).  Withholding
    a record of the block whole joins the block too (its partner is then matched to the new null trail); the set
    cover takes whichever is cheaper per record.  With no null trail at all G is empty, so the round only opens
    k − 1 of them (at least one, :func:`_open_null_trails`).  A flagged record already in G gets more candidates
    from G; a person short even with the null trails gets more compatible records (:func:`_serve_people`).
    Withholding only adds edges and the matching size stays that of the perfect matching, so every edge in the
    union stays there: a round never undoes an earlier one.
    """
    # No null trails, so no component G to join blocks to: every repair below would add link edges outside the
    # union (no alternating cycle) and the rounds would crawl.  Open G with the cheapest null trails first.
    if (view.nulls == 0 and not view.free.any() and (len(view.rec_v) or len(view.per_v))
            and _open_null_trails(inst, search, kept, max(1, k - 1), view, rng)):
        return kept
    targets: list[tuple[int, int]] = []               # (record code, more partners it needs; 0 = free its person)
    for r, deg in zip(view.rec_v, view.rec_deg, strict=True):
        targets.append((int(r), k - int(deg)))
    slow, slow_need = [], []
    mate = view.mates
    for p, deg in zip(view.per_v, view.per_deg, strict=True):
        row = view.per_row[p] if view.per_row is not None else -1
        if mate is not None and row >= 0 and not view.free[p] and mate[row] >= 0 and int(deg) + view.nulls >= k:
            targets.append((int(view.row_rec[mate[row]]), 0))
        else:
            slow.append(int(p))
            slow_need.append(k - int(deg))
    closures: list[set[int]] = []                     # tight blocks to join to G, one per target outside it
    for i in rng.permutation(len(targets)):
        if search.late():
            break
        r, need = targets[i]
        row = int(view.rec_row[r]) if view.rec_row is not None else -1
        block = _reach(view, row) if row >= 0 and mate is not None else None
        if block is None:
            if need > 0:
                _free_candidates(inst, search, kept, r, view.free, need, rng)
            continue
        closures.append(block)
    # weighted set cover: a new candidate from G for record b, or b withheld whole (a new null trail, which b's
    # partner is then matched to), joins every block that contains b.  The second is the only way in while G is
    # small or empty (few people a null trail can take), as on releases whose records are all disclosed somewhere.
    cost_cache: dict[int, tuple[int, int]] = {}
    holds: dict[int, list[int]] = {}                  # record row -> the open blocks that contain it
    for j, block in enumerate(closures):
        for b in block:
            holds.setdefault(b, []).append(j)
    is_open = np.ones(len(closures), bool)
    n_open = len(closures)
    cover = {b: len(js) for b, js in holds.items()}   # open blocks per record row, kept up to date below
    while n_open and not search.late():
        best: tuple[float, float, int, int, int] | None = None
        for b, n in cover.items():
            if not n:
                continue
            rec = int(view.row_rec[b])
            if rec not in cost_cache:
                cost_cache[rec] = _cheapest_free(inst, search, kept, rec, view.free, rng)
                seg = slice(inst.wl_ptr[rec], inst.wl_ptr[rec + 1])
                null_cost = int(kept[seg].sum()) if not (kept[seg] & search.forced[seg]).any() else -1
                if null_cost > 0 and (cost_cache[rec][1] < 0 or null_cost < cost_cache[rec][0]):
                    cost_cache[rec] = (null_cost, _NULL)
            cost, p = cost_cache[rec]
            if p != -1 and (best is None or (cost / n, rng.random()) < best[:2]):
                best = (cost / n, rng.random(), rec, p, b)
        if best is None:
            break
        if best[3] == _NULL:
            seg = slice(inst.wl_ptr[best[2]], inst.wl_ptr[best[2] + 1])
            kept[seg] = False
        else:
            _make_candidate(inst, kept, best[2], best[3])
        cost_cache.pop(best[2], None)
        for j in holds[best[4]]:
            if is_open[j]:
                is_open[j] = False
                n_open -= 1
                for b in closures[j]:
                    cover[b] -= 1
    if slow:
        kept = _serve_people(inst, search, kept, k, (np.asarray(slow), np.asarray(slow_need)), [], lambda _m: None)
    return kept


def _open_null_trails(inst: Instance, search: _Search, kept: np.ndarray, want: int, view: AuditView,
                      rng: np.random.Generator) -> int:
    """Withhold ``want`` whole records, the ones with the fewest kept disclosures (none forced, records the audit
    did not flag first, ties at random), so that the next audit has null trails.  A null trail is linked to
    everybody, so the people a maximum matching can leave to it form the component G that :func:`_repair`
    joins tight blocks to.  Returns the disclosures withheld (0: no record can go).  O(entries)."""
    rec = np.repeat(np.arange(inst.n_deidentified), np.diff(inst.wl_ptr))
    on = np.bincount(rec[kept], minlength=inst.n_deidentified)
    blocked = np.bincount(rec[kept & search.forced], minlength=inst.n_deidentified) > 0
    flagged = np.zeros(inst.n_deidentified, bool)
    flagged[view.rec_v] = True
    pool = np.flatnonzero((on > 0) & ~blocked)
    if not len(pool):
        return 0
    order = np.lexsort((rng.random(len(pool)), flagged[pool], on[pool]))
    withheld = 0
    for r in pool[order[:want]]:
        seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
        withheld += int(kept[seg].sum())
        kept[seg] = False
    return withheld


def _withhold_flagged(inst: Instance, kept: np.ndarray, forced: np.ndarray, rec_v: np.ndarray,
                      per_v: np.ndarray, k: int, kind: str) -> np.ndarray:
    """The fallback that always makes progress: flagged records lose every disclosure not forced, flagged people
    lose every record they could be (then they have null partners only, Definition 19 clause 2)."""
    for r in rec_v:
        seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
        kept[seg] &= forced[seg]
    if len(per_v):
        for p in per_v:
            visited = np.zeros(inst.n_locations, bool)
            visited[inst.gl_idx[inst.gl_ptr[p]:inst.gl_ptr[p + 1]]] = True
            for c in np.flatnonzero(visited):
                for r in inst.w_idx[inst.w_ptr[c]:inst.w_ptr[c + 1]]:
                    seg = slice(inst.wl_ptr[r], inst.wl_ptr[r + 1])
                    if kept[seg].any() and visited[inst.wl_idx[seg][kept[seg]]].all():
                        kept[seg] &= forced[seg]
    if (kept & ~forced).sum() == 0 and len(rec_v) + len(per_v):
        raise KeepInfeasibleError(
            f"the records that must stay disclosed leave the release short of k = {k}: the audit still finds "
            f"{len(rec_v)} {_word(kind)} records and {len(per_v)} people with fewer than {k} partners")
    return kept


# ----------------------------------------------------------------------------------------------- releases


def swap_kinds(frame: pd.DataFrame) -> pd.DataFrame:
    """The long table with the two kinds exchanged (to withhold identified records with the same engine)."""
    out = frame.copy()
    out["kind"] = frame["kind"].map({"identified": "deidentified", "deidentified": "identified"})
    return out


def instance_for(release: Any, kind: str = "deidentified") -> Instance:
    """The :class:`Instance` whose ω side is ``kind`` (the side whose disclosures may be withheld).  O(rows)."""
    frame = release.frame
    return Instance.from_frame(frame if kind == "deidentified" else swap_kinds(frame))


def kept_pairs(inst: Instance, kept: np.ndarray) -> dict[Hashable, list[Hashable]]:
    """``{location: records still disclosed there}`` of a kept mask.  O(entries)."""
    rec = np.repeat(np.arange(inst.n_deidentified), np.diff(inst.wl_ptr))
    out: dict[Hashable, list[Hashable]] = {c: [] for c in inst.locations}
    for c, r in zip(inst.wl_idx[kept], rec[kept], strict=True):
        out[inst.locations[c]].append(inst.de_keys[r])
    return out


def apply_kept(release: Any, inst: Instance, kept: np.ndarray, kind: str = "deidentified") -> Any:
    """The release with the withheld disclosures of ``kind`` removed (row order kept).  O(rows)."""
    frame = release.frame
    rows = (frame["kind"] == kind).to_numpy()
    loc_index = pd.Index(inst.locations)
    el_index = pd.Index(inst.de_keys)
    n_el = max(len(el_index), 1)
    row_key = (loc_index.get_indexer(frame.loc[rows, "location"]).astype(np.int64) * n_el
               + el_index.get_indexer(frame.loc[rows, "element"]).astype(np.int64))
    rec = np.repeat(np.arange(inst.n_deidentified, dtype=np.int64), np.diff(inst.wl_ptr))
    keep_keys = inst.wl_idx[kept].astype(np.int64) * n_el + rec[kept]
    mask = np.ones(len(frame), bool)
    mask[np.flatnonzero(rows)] = np.isin(row_key, keep_keys)
    return release.select(mask)


def release_auditor(release: Any, inst: Instance, k: int, kind: str = "deidentified") -> Auditor:
    """An :data:`Auditor` that writes the kept mask into ``release`` and runs the exact audit on it, reading it
    the way ``graphlink audit --reserved <kind> --multiplicity one-to-one`` reads the written file."""
    from graphlink.protect.certify import audit_release

    rec_index = pd.Index(inst.de_keys)
    per_index = pd.Index(inst.id_keys)
    other = "identified" if kind == "deidentified" else "deidentified"
    last: dict[str, Any] = {}

    def run(kept: np.ndarray) -> AuditView:
        from graphlink.analysis.audit import union_degree_table
        written = apply_kept(release, inst, kept, kind)
        result, classes = audit_release(written, k, kind)
        last.clear()
        last.update(kept=kept.copy(), release=written, result=result)
        v = result.violations
        rv, pv = v[v["side"] == kind], v[v["side"] == other]
        table = union_degree_table(classes)
        people = table[table["side"] == other]
        free = np.zeros(inst.n_identified, bool)
        has_null = (people["union_degree"] > people["union_degree_non_null"]).to_numpy()
        codes = per_index.get_indexer(people["element"])
        free[codes[(codes >= 0) & has_null]] = True
        p_codes = per_index.get_indexer(pv["element"]).astype(np.int64)
        graph = classes.graph
        rec_keys = getattr(graph.trails, kind).keys
        per_keys = getattr(graph.trails, other).keys
        neighbours = graph.neighbours_of_deidentified if kind == "deidentified" else graph.neighbours_of_identified
        mates = classes.mate_identified if kind == "deidentified" else classes.mate_deidentified
        row_rec = rec_index.get_indexer(rec_keys).astype(np.int64)
        rec_row = np.full(inst.n_deidentified, -1, np.int64)
        rec_row[row_rec[row_rec >= 0]] = np.flatnonzero(row_rec >= 0)
        row_per = per_index.get_indexer(per_keys).astype(np.int64)
        per_row = np.full(inst.n_identified, -1, np.int64)
        per_row[row_per[row_per >= 0]] = np.flatnonzero(row_per >= 0)
        return AuditView(rec_index.get_indexer(rv["element"]).astype(np.int64), rv["union_degree"].to_numpy(np.int64),
                         p_codes, pv["union_degree"].to_numpy(np.int64), free, int(graph.n_null),
                         classes, rec_row, row_rec, row_per, per_row, neighbours, mates,
                         _alternating(graph, mates, kind, len(rec_keys)) if len(rv) or len(pv) else None)

    run.last = last          # type: ignore[attr-defined]  # the last audited release, so it is not audited twice
    return run


def _alternating(graph: Any, mates: np.ndarray, kind: str, n_rec: int) -> Any:
    """The record-to-record alternating graph of a maximum matching as a sparse matrix: row j links to the record
    matched to each person j links to, or to the sink (row ``n_rec``) for a person matched to a null trail.  None
    when the element-level edges are too many to expand (then :func:`_reach` walks the twin classes).  O(E)."""
    from scipy.sparse import csr_matrix

    from graphlink.errors import ModelAssumptionError

    try:
        ei, ej = graph.ei, graph.ej
    except ModelAssumptionError:
        return None
    rec_rows, per_rows = (ej, ei) if kind == "deidentified" else (ei, ej)
    target = np.asarray(mates)[per_rows]
    target = np.where(target < 0, n_rec, target)
    return csr_matrix((np.ones(len(target), np.int8), (rec_rows, target)), shape=(n_rec + 1, n_rec + 1))


def instance_auditor(inst: Instance, k: int, kind: str = "deidentified") -> Auditor:
    """:func:`release_auditor` on the release the :class:`Instance` stands for (a registry entry needs only the
    instance)."""
    from graphlink.core.release import Release

    id_loc = np.repeat(np.arange(inst.n_locations), np.diff(inst.g_ptr))
    de_loc = np.repeat(np.arange(inst.n_locations), np.diff(inst.w_ptr))
    locs = np.asarray(inst.locations, dtype=object)
    frame = pd.DataFrame({
        "location": np.concatenate([locs[id_loc], locs[de_loc]]),
        "kind": ["identified"] * len(id_loc) + ["deidentified"] * len(de_loc),
        "element": np.concatenate([inst.id_keys[inst.g_idx], inst.de_keys[inst.w_idx]])}).astype(object)
    return release_auditor(Release(frame), inst, k, "deidentified")


def must_keep_mask(inst: Instance, pairs: Iterable[tuple[Hashable, Hashable]], kind: str) -> np.ndarray:
    """Flags over ``inst.wl_idx`` for (location, record) pairs that must stay disclosed; a pair that is not a
    disclosure of the release is refused (exit 2) with its name."""
    pairs = list(pairs)
    if not pairs:
        return np.zeros(len(inst.wl_idx), bool)
    pos = {(inst.locations[c], inst.de_keys[r]): i
           for r in range(inst.n_deidentified) for i, c in
           zip(range(inst.wl_ptr[r], inst.wl_ptr[r + 1]), inst.wl_idx[inst.wl_ptr[r]:inst.wl_ptr[r + 1]],
               strict=True)}
    str_pos = {(str(c), str(e)): i for (c, e), i in pos.items()}
    mask = np.zeros(len(inst.wl_idx), bool)
    for c, e in pairs:
        i = pos.get((c, e), str_pos.get((str(c), str(e))))
        if i is None:
            raise KeepInfeasibleError(f"a record that must stay disclosed is not in the release: {_word(kind)} record "
                                      f"{e!s} at location {c!s}")
        mask[i] = True
    return mask


