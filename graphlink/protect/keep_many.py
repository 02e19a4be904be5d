"""Keep-most on one-to-many releases (Malin 2006 Appendix A; docs/unlink.md#one-to-many-releases).

A release read as one-to-many (several people share one de-identified element, a household's IP address) is read
with the identified side reserved: people may withhold, and a household's element is disclosed wherever any of its
members was.  Under that reading an assignment of people to households is consistent exactly when every person
*fits* their household (the household is disclosed wherever the person is), so every fitting pair is possible
(:func:`graphlink.analysis.onetomany.classify_one_to_many`), and Definition 19 asks every person to fit at least k
households and every household to be fitted by at least k people, or by none.

Protection therefore withholds **identified** (location, person) disclosures, the reserved side: the written
release is still read the same way, and withholding only adds fits (a person's trail has ``*`` wherever they are not
disclosed), except that a person withheld everywhere leaves the release.  The method:

1. per person, the largest kept set that at least k households were disclosed at entirely (the subset search of
   :mod:`graphlink.protect.keep`, step 1), ties at random;
2. per household fitted by 1 to k − 1 people, the cheapest further people made to fit it (a person costs their
   kept locations where the household was not disclosed; someone with none left in common is not used, they would
   leave the release instead), until no household is short;
3. the exact one-to-many audit of the release as written (:func:`graphlink.analysis.audit.audit`, the reading
   ``--reserved identified --multiplicity one-to-many``); whatever it flags is repaired the same way, or withheld
   outright, until it passes.  Nothing is returned without its certificate.

The per-person minima of step 1 sum to a lower bound (the same argument as keep-most's on one-to-one data: a
person's fits depend on their own kept set only, and the households' side is never touched).  The Dedup family and
keep-most's integer program do not apply: they withhold de-identified records, which under the one-to-many model
is the reading Table A.1 leaves without a sound method.

Complexity: step 1 as keep-most's, O(Σ_m (Σ_{c∈D(m)} |ω_c| + 2^{d_m}·d_m)); step 2, per short household, one
pass over the kept disclosures and one recount of every person's fits (O(Σ_m Σ_{c∈K(m)} |ω_c|)), so that no
household is served more people than it lacks; the audit O(class edges) per round.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from graphlink.diagnostics import Diagnostic
from graphlink.errors import ModelAssumptionError, ReleaseError
from graphlink.protect.instance import Instance
from graphlink.protect.keep import KeepOutcome, _rng_words, _Search, lower_bound_from

#: the one reading a protected one-to-many release is certified under (people may withhold)
READING = ("identified", "one-to-many")
#: audit rounds before the flagged people and households are withheld outright
MAX_ROUNDS = 20


def audit_many(release: Any, k: int) -> Any:
    """The exact audit of a release read as one-to-many with the identified side reserved (the reading
    ``graphlink audit --reserved identified --multiplicity one-to-many`` uses): an ``AuditResult``.  Data that
    refute the model raise :class:`ModelAssumptionError` (one line, with the reason).  O(class edges)."""
    from graphlink.analysis.audit import audit
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails

    return audit(build_linkgraph(build_trails(release, *READING)), k)


def _fitters(inst: Instance, search: _Search, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per household: people still in the release who fit it; per person: households they fit).  O(entries)."""
    return search.counts(kept)


def _short_households(inst: Instance, search: _Search, kept: np.ndarray, k: int) -> np.ndarray:
    per_home, _ = _fitters(inst, search, kept)
    return np.flatnonzero((per_home >= 1) & (per_home < k))


def _serve_households(inst: Instance, search: _Search, kept: np.ndarray, k: int, homes: np.ndarray,
                      rng: np.random.Generator) -> int:
    """Give each household of ``homes`` the people it lacks: the cheapest people not fitting it yet whose kept set
    meets its locations, each cut down to those locations (they then fit it).  Fits only grow, so no person and no
    other household loses a partner.  Returns the disclosures withheld.  O(|homes| · (entries + a recount of the
    fits)): the counts are recounted after each household, since serving one can serve others."""
    per_home, _ = _fitters(inst, search, kept)
    person = np.repeat(np.arange(inst.n_deidentified), np.diff(inst.wl_ptr))
    withheld = 0
    for n in homes[rng.permutation(len(homes))]:
        need = k - int(per_home[n])
        if need <= 0:
            continue
        at = np.zeros(inst.n_locations, bool)
        at[inst.gl_idx[inst.gl_ptr[n]:inst.gl_ptr[n + 1]]] = True
        entries = np.flatnonzero(kept)
        inside = at[inst.wl_idx[entries]]
        n_in = np.bincount(person[entries[inside]], minlength=inst.n_deidentified)
        n_out = np.bincount(person[entries[~inside]], minlength=inst.n_deidentified)
        pool = np.flatnonzero((n_in > 0) & (n_out > 0))      # n_out == 0: fits already; n_in == 0: would vanish
        if not len(pool):
            continue
        order = np.lexsort((rng.random(len(pool)), n_out[pool]))
        for m in pool[order[:need]]:
            seg = slice(inst.wl_ptr[m], inst.wl_ptr[m + 1])
            before = int(kept[seg].sum())
            kept[seg] &= at[inst.wl_idx[seg]]
            withheld += before - int(kept[seg].sum())
        per_home, _ = _fitters(inst, search, kept)
    return withheld


def _withhold_fitters(inst: Instance, kept: np.ndarray, homes: np.ndarray) -> int:
    """The fallback that always makes progress: the people who fit a short household leave the release (withheld
    at every location), so it is fitted by nobody.  Returns the disclosures withheld.  O(entries)."""
    person = np.repeat(np.arange(inst.n_deidentified), np.diff(inst.wl_ptr))
    withheld = 0
    for n in homes:
        at = np.zeros(inst.n_locations, bool)
        at[inst.gl_idx[inst.gl_ptr[n]:inst.gl_ptr[n + 1]]] = True
        entries = np.flatnonzero(kept)
        outside = np.bincount(person[entries[~at[inst.wl_idx[entries]]]], minlength=inst.n_deidentified)
        alive = np.bincount(person[entries], minlength=inst.n_deidentified) > 0
        for m in np.flatnonzero(alive & (outside == 0)):
            seg = slice(inst.wl_ptr[m], inst.wl_ptr[m + 1])
            withheld += int(kept[seg].sum())
            kept[seg] = False
    return withheld


def keep_most_many(inst: Instance, k: int, seed: int | None = None, *,
                   auditor: Callable[[np.ndarray], Any] | None = None,
                   progress: Callable[[str], None] | None = None) -> KeepOutcome:
    """Keep-most on a one-to-many release (module docstring): the kept identified disclosures, certified.

    Parameters
    ----------
    inst : Instance
        With the kinds exchanged (:func:`graphlink.protect.keep.instance_for` with ``"identified"``): its
        de-identified side are the people, whose disclosures may be withheld, its identified side the households.
    k : int
        The protection level (Definition 19 on the possible pairs).
    seed : int, optional
        Tie-breaking seed; None draws from the operating system's random source.
    auditor : callable, optional
        ``kept -> (people codes, household codes)`` that the exact audit flags; without it the fit counts decide
        (the same numbers under the identified-reserved reading), and the caller must audit the result.
    progress : callable, optional
        Receives a line per phase.

    Returns
    -------
    KeepOutcome
        ``kept`` over ``inst.wl_idx``, the lower bound and the steps; certified by ``auditor`` when given.

    Examples
    --------
    >>> import pandas as pd
    >>> from graphlink.core.release import read_release
    >>> from graphlink.protect.keep import instance_for
    >>> rows = [(c, "identified", m) for c, m in [("L1", "a"), ("L1", "b"), ("L2", "b"), ("L2", "c")]]
    >>> rows += [(c, "deidentified", n) for c, n in [("L1", "X"), ("L2", "X"), ("L1", "Y"), ("L2", "Y")]]
    >>> inst = instance_for(read_release(pd.DataFrame(rows, columns=["location", "kind", "element"])), "identified")
    >>> out = keep_most_many(inst, 2, seed=0)
    >>> out.withheld, out.lower_bound
    (0, 0)

    Complexity: see the module docstring.
    """
    if k < 1:
        raise ReleaseError(f"k must be a positive integer, got {k}")
    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    n_people, n_entries = inst.n_deidentified, len(inst.wl_idx)
    search = _Search(inst, np.zeros(n_entries, bool), _rng_words(n_people, seed))
    rng = np.random.default_rng(int(search.rnd[0]) ^ 0x2545F491)
    kept, minima = search.solve(np.arange(n_people), np.ones(n_entries, bool), np.full(n_people, k))
    bound, exact = lower_bound_from(inst, minima, k)
    steps = [f"people: {int((~kept).sum())} disclosures withheld so that every person fits {k} households "
             f"({time.perf_counter() - t0:.1f} s)"]
    say(steps[-1])
    first = int((~kept).sum())
    passes = 0
    while True:
        short = _short_households(inst, search, kept, k)
        if not len(short):
            break
        passes += 1
        if _serve_households(inst, search, kept, k, short, rng) == 0 or passes > MAX_ROUNDS:
            _withhold_fitters(inst, kept, _short_households(inst, search, kept, k))
    steps.append(f"households: {int((~kept).sum()) - first} more disclosures withheld so that every household is "
                 f"fitted by {k} people or by none")
    say(steps[-1])
    rounds = 0
    if auditor is not None:
        while True:
            people, homes = auditor(kept)
            if not len(people) and not len(homes):
                break
            rounds += 1
            say(f"audit round {rounds}: {len(people)} people and {len(homes)} households have fewer than {k} "
                "possible partners")
            before = int((~kept).sum())
            if rounds <= MAX_ROUNDS:
                if len(people):
                    kept, _ = search.solve(np.asarray(people), kept, np.full(len(people), k))
                if len(homes):
                    _serve_households(inst, search, kept, k, np.asarray(homes), rng)
            if int((~kept).sum()) == before or rounds > MAX_ROUNDS:
                for m in people:
                    kept[inst.wl_ptr[m]:inst.wl_ptr[m + 1]] = False
                _withhold_fitters(inst, kept, np.asarray(homes, np.int64))
        steps.append(f"audit: certified after {rounds} repair round{'s' if rounds != 1 else ''}")
    return KeepOutcome(kept, bound, exact, first, rounds, steps)


def many_auditor(release: Any, inst: Instance, k: int) -> Any:
    """An auditor for :func:`keep_most_many`: writes the kept mask into ``release`` and runs :func:`audit_many`,
    returning the codes of the people and households it flags.  The last written release and its audit are kept
    on the function (``.last``), so the certified result is not audited twice.  O(rows + class edges)."""
    import pandas as pd

    from graphlink.protect.keep import apply_kept

    people = pd.Index(inst.de_keys)
    homes = pd.Index(inst.id_keys)
    last: dict[str, Any] = {}

    def run(kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        written = apply_kept(release, inst, kept, "identified")
        result = audit_many(written, k)
        last.clear()
        last.update(kept=kept.copy(), release=written, result=result)
        v = result.violations
        p = people.get_indexer(v.loc[v["side"] == "identified", "element"]).astype(np.int64)
        h = homes.get_indexer(v.loc[v["side"] == "deidentified", "element"]).astype(np.int64)
        return p[p >= 0], h[h >= 0]

    run.last = last          # type: ignore[attr-defined]
    return run


def check_many(release: Any, k: int, *, side: str, must_keep: Iterable[tuple[Hashable, Hashable]],
               no_empty_location: bool, cap: int | None) -> Any:
    """The refusals before protecting a one-to-many release, each one line (exit 2): options that only the
    one-to-one path has, a withheld side other than the people's, fewer households than k, and input data that
    refute the model (a person who fits no household: no consistent assignment, nothing to protect).  Returns
    the input's exact audit (for the before/after counts).  O(audit)."""
    options = [name for name, given in (("records that must stay disclosed", bool(list(must_keep))),
                                        ("no location left empty", no_empty_location),
                                        ("a cap on the records withheld per location", cap is not None)) if given]
    if options:
        raise ReleaseError(f"{options[0]} cannot be asked for on a release read as one-to-many yet: keep-most "
                           "protects it without constraints")
    if side == "deidentified":
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "unlink-one-to-many-side",
            "this release is read as one-to-many, where keep-most withholds identified records (people may "
            "withhold); withholding de-identified records there leaves a release no sound method reads",
            remedy="leave the side to choose itself, or state it as identified"))
    homes = len(release.elements("deidentified"))
    if homes < k:
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "unlink-one-to-many-too-few",
            f"k = {k} needs at least {k} de-identified elements for each person to fit, and this one-to-many "
            f"release has {homes}", {"k": k, "deidentified": homes}))
    return audit_many(release, k)
