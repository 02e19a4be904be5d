"""Brute force of the minimality attack (Wong et al. 2007) on keep-most, for tests and benchmarks/minimality_attack.py.

An attacker sees the protected release P (the identified tables whole, the de-identified tables with keep-most's
withheld disclosures removed) and the summary keep-most prints: how many (location, record) disclosures it
withheld and how many records it withheld at every location.  The attacker also knows keep-most itself.  This module
enumerates every original release O that P could have been cut from (:func:`originals`), keeps those for which
keep-most outputs P under some tie-break (:func:`reaches`), and reads the attacker's candidates as the union, over
the surviving originals, of each original's union of all maximum matchings (:func:`attack`).  The unions come
from ``tests.unlink_oracle`` (FillTrails and every maximum matching enumerated), never from the audit under test.

Ties: keep-most breaks them with the operating system's random source, which cannot be replayed; here a finite
list of seeds stands in for all tie-breaks.  That finds only part of the originals keep-most can turn into P, so
the simulated attacker rules out more than a real one could and the candidate counts are never larger than the
real attacker's: a count of at least k here holds for the real attacker too.  Exponential: a handful of people,
three or four locations, a few withheld disclosures.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import pandas as pd

from tests.unlink_oracle import union_edges

#: names of the records an original may hold that keep-most withheld at every location (never in P)
HIDDEN = "~withheld"


@dataclass(frozen=True)
class Published:
    """What the attacker reads: the protected release and keep-most's printed counts.

    ``withheld`` is the number of (location, record) disclosures withheld, ``whole`` the number of records
    withheld at every location; ``per_location`` (optional) the withheld disclosures per location, which keep-most
    does not print: given, it models a stronger attacker who learned them some other way.  ``withheld`` and
    ``whole`` None: the attacker has P without the summary and must try every count.
    """

    frame: pd.DataFrame
    withheld: int | None
    whole: int | None
    per_location: dict[Hashable, int] | None = None


def published(original: pd.DataFrame, protected: pd.DataFrame, per_location: bool = False) -> Published:
    """The attacker's view of ``protected``, cut from ``original`` (the counts keep-most prints)."""
    o, p = _pairs(original), _pairs(protected)
    gone = o - p
    whole = len({e for _, e in o}) - len({e for _, e in p})
    return Published(protected, len(gone), whole, _added(original, protected) if per_location else None)


def _pairs(frame: pd.DataFrame, kind: str = "deidentified") -> set[tuple[Hashable, Hashable]]:
    part = frame[frame["kind"] == kind]
    return set(zip(part["location"], part["element"], strict=True))


def _frame(locations: Sequence[Hashable], people: dict[Hashable, list[Hashable]],
           records: dict[Hashable, set[Hashable]]) -> pd.DataFrame:
    """A long table, location-major, identified rows first, records in the order of ``records``."""
    rows = []
    for c in locations:
        rows += [(c, "identified", m) for m in people[c]]
        rows += [(c, "deidentified", r) for r, locs in records.items() if c in locs]
    return pd.DataFrame(rows, columns=["location", "kind", "element"])


def _consistent(locations: Sequence[Hashable], visits: dict[Hashable, set[Hashable]],
                records: dict[Hashable, set[Hashable]], sizes: dict[Hashable, int]) -> bool:
    """Whether some one-to-one assignment of the records to distinct people fits: every record disclosed at a
    location whose two tables then have the same size is absent from the people who visited it and did not get it
    (FillTrails' 0), and present only where its person went.  Augmenting paths; O(records · edges)."""
    full = [c for c in locations if sum(1 for locs in records.values() if c in locs) == sizes[c]]
    fits = {r: [m for m, seen in visits.items()
                if locs <= seen and all((c in locs) == (c in seen) for c in full)]
            for r, locs in records.items()}
    owner: dict[Hashable, Hashable] = {}

    def augment(r: Hashable, tried: set) -> bool:
        for m in fits[r]:
            if m in tried:
                continue
            tried.add(m)
            if m not in owner or augment(owner[m], tried):
                owner[m] = r
                return True
        return False

    return all(augment(r, set()) for r in records)


def originals(view: Published) -> Iterator[pd.DataFrame]:
    """Every original release P could have been cut from, given the printed counts: each record of P may have
    been disclosed at more locations, and ``view.whole`` more records (named ``~withheld0``, ...) were disclosed
    somewhere and withheld everywhere; the added disclosures number ``view.withheld`` (per location too, when
    ``view.per_location`` is given).  A count that is None is unknown: every value the model allows is tried.
    Only originals of the one-to-one model are yielded: no location discloses more de-identified than identified
    records, and some assignment of the records to distinct people fits.  O(2^(free slots) · C(2^|C|, whole))
    candidates at most, each checked in polynomial time."""
    frame = view.frame
    locations = list(pd.unique(frame["location"]))
    ident = frame[frame["kind"] == "identified"]
    deid = frame[frame["kind"] == "deidentified"]
    people = {c: list(ident.loc[ident["location"] == c, "element"]) for c in locations}
    sizes = {c: len(people[c]) for c in locations}
    visits: dict[Hashable, set[Hashable]] = {}
    for c, m in zip(ident["location"], ident["element"], strict=True):
        visits.setdefault(m, set()).add(c)
    shown: dict[Hashable, set[Hashable]] = {}
    for c, r in zip(deid["location"], deid["element"], strict=True):
        shown.setdefault(r, set()).add(c)
    room = {c: sizes[c] - sum(1 for locs in shown.values() if c in locs) for c in locations}
    free = [(r, c) for r in shown for c in locations if c not in shown[r] and room[c] > 0]
    shapes = [frozenset(s) for n in range(1, len(locations) + 1) for s in itertools.combinations(locations, n)
              if all(room[c] > 0 for c in s)]
    wholes = range(len(visits) - len(shown) + 1) if view.whole is None else [view.whole]
    for whole in wholes:
        if len(visits) < len(shown) + whole:
            continue
        for extra in itertools.combinations_with_replacement(shapes, whole):
            rest = sum(len(s) for s in extra)
            if view.withheld is None:
                counts = range(len(free) + 1)
            elif view.withheld < rest:
                continue
            else:
                counts = [view.withheld - rest]
            for n_slots in counts:
                for slots in itertools.combinations(free, n_slots):
                    added = dict.fromkeys(locations, 0)
                    for _, c in slots:
                        added[c] += 1
                    for s in extra:
                        for c in s:
                            added[c] += 1
                    if any(added[c] > room[c] for c in locations):
                        continue
                    if view.per_location is not None and any(added[c] != view.per_location.get(c, 0)
                                                             for c in locations):
                        continue
                    records = {r: set(locs) for r, locs in shown.items()}
                    for r, c in slots:
                        records[r].add(c)
                    for i, s in enumerate(extra):
                        records[f"{HIDDEN}{i}"] = set(s)
                    if _consistent(locations, visits, records, sizes):
                        yield _frame(locations, people, records)


def reaches(original: pd.DataFrame, protected: pd.DataFrame, k: int, seeds: Iterable[int]) -> int | None:
    """The first seed under which keep-most (``unlink_keep`` on the de-identified side, one-to-one, as the CLI
    runs it) turns ``original`` into ``protected``, or None when none of ``seeds`` does.

    One shortcut, from keep-most's documented contract (docs/unlink.md#keep-most): the integer program takes no
    seed, and its solution is returned whenever it passes the audit and withholds less than keep-most's own; so
    once a run returns the integer program's solution withholding fewer disclosures than P, no seed yields P."""
    from graphlink.core.release import read_release
    from graphlink.errors import ReleaseError
    from graphlink.protect.pipeline import unlink_keep

    target = _pairs(protected)
    goal = len(_pairs(original) - target)
    release = read_release(original)
    for seed in seeds:
        try:
            out = unlink_keep(release, k, seed, side="deidentified", audit_before=False, multiplicity="one-to-one")
        except ReleaseError:            # refusals (ModelAssumptionError, KeepInfeasibleError) derive from it
            return None
        if _pairs(out.release.frame) == target:
            return seed
        summary = out.summary()
        if summary.result_of == "integer program" and summary.rows_withheld < goal:
            return None
    return None


@dataclass
class Candidates:
    """Per record of P and per person, how many candidates an attacker keeps: a record's people; a person's records
    of P plus, when some consistent assignment leaves them without a record of P, the null trails of P
    (Definition 19 counts them); 0 for a person no record of P can be (exempt, clause 2).  ``partners``: each
    record's candidate people."""

    k: int
    records: dict[Hashable, int]
    people: dict[Hashable, int]
    partners: dict[Hashable, set[Hashable]]

    @property
    def below_records(self) -> list[Hashable]:
        """Records of P narrowed to fewer than k people."""
        return [r for r, n in self.records.items() if n < self.k]

    @property
    def below_people(self) -> list[Hashable]:
        """People some record of P can be, narrowed to fewer than k candidates."""
        return [m for m, n in self.people.items() if 0 < n < self.k]


@dataclass
class Attack:
    """The method-aware attacker on one protected release, beside the certificate's attacker.

    ``originals``: the originals enumerated; ``surviving``: those keep-most turns into P (with the seed that does
    it); ``plain``: the candidates on P alone (the certificate's attacker); ``aware``: the union over the surviving
    originals; ``aware_located``: the same over the survivors that also match the withheld disclosures per
    location (a stronger attacker who learned those counts, or None when they were not given); ``truth``: whether
    the true original is among the survivors (None when not given).
    """

    k: int
    originals: int
    surviving: list[tuple[pd.DataFrame, int]]
    plain: Candidates
    aware: Candidates
    aware_located: Candidates | None = None
    located: int | None = None
    truth: bool | None = None


def candidates(unions: Iterable[tuple[set, set]], people: Sequence[Hashable], records: Sequence[Hashable],
               k: int) -> Candidates:
    """The candidates over several unions of all maximum matchings, each given as (real pairs, people that can
    take a null trail); pairs with a record outside ``records`` (withheld at every location) count as null."""
    shown = set(records)
    union: set = set()
    null_ok: set = set()
    for u, nulls in unions:
        union |= {(m, r) for m, r in u if r in shown}
        null_ok |= set(nulls) | {m for m, r in u if r not in shown}
    z = max(0, len(people) - len(records))
    partners: dict[Hashable, set[Hashable]] = {r: set() for r in records}
    for m, r in union:
        partners[r].add(m)
    per_person = {}
    for m in people:
        real = sum(1 for a, _ in union if a == m)
        per_person[m] = real + (z if m in null_ok else 0) if real else 0
    return Candidates(k, {r: len(partners[r]) for r in records}, per_person, partners)


def attack(view: Published, k: int, seeds: Sequence[int], truth: pd.DataFrame | None = None) -> Attack:
    """Enumerate the originals of ``view``, keep those keep-most turns into P under one of ``seeds``, and count
    each record's and person's candidates over the survivors (see the module docstring).  With
    ``view.per_location``, originals are enumerated from the totals alone and the per-location attacker is the
    subset of survivors that also match the counts per location.  With ``view.withheld`` and ``view.whole`` None,
    the attacker has P alone (the summary kept back)."""
    protected = view.frame
    people = list(pd.unique(protected.loc[protected["kind"] == "identified", "element"]))
    records = list(pd.unique(protected.loc[protected["kind"] == "deidentified", "element"]))
    u, nulls, _, _ = union_edges(protected)
    plain = candidates([(u, nulls)], people, records, k)
    found = list(originals(Published(protected, view.withheld, view.whole)))
    surviving = []
    unions = []
    for o in found:
        seed = reaches(o, protected, k, seeds)
        if seed is not None:
            surviving.append((o, seed))
            u, nulls, _, _ = union_edges(o)
            unions.append((u, nulls))
    aware = candidates(unions, people, records, k)
    located = aware_located = None
    if view.per_location is not None:
        target = view.per_location
        keep = [i for i, (o, _) in enumerate(surviving) if _added(o, protected) == target]
        located = len(keep)
        aware_located = candidates([unions[i] for i in keep], people, records, k)
    seen = None
    if truth is not None:
        shown = set(records)
        key = _canonical(truth, shown)
        seen = any(_canonical(o, shown) == key for o, _ in surviving)
    return Attack(k, len(found), surviving, plain, aware, aware_located, located, seen)


def _added(original: pd.DataFrame, protected: pd.DataFrame) -> dict[Hashable, int]:
    gone = _pairs(original) - _pairs(protected)
    return {c: sum(1 for cc, _ in gone if cc == c) for c in pd.unique(original["location"])}


def _canonical(frame: pd.DataFrame, shown: set) -> tuple:
    """An original up to the names of the records it holds that are not in P (withheld at every location)."""
    ident = frozenset(_pairs(frame, "identified"))
    deid = frame[frame["kind"] == "deidentified"]
    trails: dict[Hashable, set] = {}
    for c, r in zip(deid["location"], deid["element"], strict=True):
        trails.setdefault(r, set()).add(c)
    kept = frozenset((r, frozenset(s)) for r, s in trails.items() if r in shown)
    hidden = tuple(sorted(tuple(sorted(map(str, s))) for r, s in trails.items() if r not in shown))
    return ident, kept, hidden
