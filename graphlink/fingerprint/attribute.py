"""Attributing a leak (FP §3.2): which recipient's release — or which recipients' releases together — it came from.

FP's procedure: (1) take the leaked records; (2) extract their generalization pattern; (3a) if it matches a
recipient's pattern, that recipient is the source; (3b) otherwise compute "the minimum of receivers that possess
the knowledge (i.e. data) to be able to generate the encountered data set structure". Made precise here:

* **Pattern** (step 2). A leaked label of QI i is read against the plan's hierarchy: the levels where it occurs
  (usually one; labels shared between levels, such as ``white → white``, give several). A row whose label
  occurs at no level fits no node of the plan: bad input (ReleaseError, exit 2).
* **Exact match** (step 3a). A recipient matches when its level is one of those levels, for every QI and every
  leaked row — the leak could be part of its release as is. Exactly one match: that recipient. Several (only
  possible through shared labels): cannot be told apart, said so.
* **Knowledge** (step 3b). A recipient holding QI i at level ``l`` can produce any coarser label, levels ``≥ l``
  (FP §4, robustness: a leaker can only generalize further; finer values would be invented). A set S of
  recipients can produce a row iff for every QI some member's level is ≤ the highest level at which the row's
  label occurs; for a whole leak iff that holds for the componentwise minimum U of those highest levels over the
  rows. The **smallest such sets** are minimum set covers of the QIs (recipient r covers QI i when its level
  is ≤ Uᵢ), found exactly by a branch-and-bound over the distinct cover masks (at most 2^m). One smallest set:
  attributed (two or more members = collusion, FP Table 6); several: not attributable, and the sets are listed.
* Rows finer than any recipient received (some label below every recipient's level) cannot come from these
  releases: they are reported and left out; if no row remains, nothing is attributed.

Attribution reads labels only (no access to the original table), like FP: a fabricated row whose labels
exist in the hierarchies is treated as real. QI columns absent from the leak count as suppressed (level top),
and the exact match compares the QIs present. Cost: O(rows·m) to read the leak, O(u·R·m) for the exact match
over u distinct row patterns, O(R·m) plus the set cover over at most min(R, 2^m) masks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.fingerprint.plan import Plan, level_masks
from graphlink.qi.table import as_labels

MAX_LISTED = 20


@dataclass
class Attribution:
    """The verdict on one leak. ``recipients`` is empty when the leak cannot be attributed; ``reason`` says why
    (or how it was attributed). ``pattern`` is U: per QI the finest level the leak shows (None: column absent).

    Examples
    --------
    Returned by :func:`attribute`.  A leak coarser than every copy (sex and birth date both generalized) could
    come from either recipient, so it names nobody and lists the candidates:

    >>> from graphlink.fingerprint import EXAMPLES, make_plan
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> frame = read_table(EXAMPLES / "table1.csv")                     # FP Table 1
    >>> table = encode(frame, ["sex", "birthdate"], read_dir(EXAMPLES / "hierarchies"))
    >>> plan = make_plan(table, 2, 2, loss="samarati", l_min=1, l_max=2, discretisation="exact")
    >>> import pandas as pd
    >>> from graphlink.fingerprint import attribute
    >>> verdict = attribute(plan, pd.DataFrame([{"sex": "p", "birthdate": "1970"}]))
    >>> verdict.recipients, verdict.candidates
    ([], [['R1'], ['R2']])
    """

    recipients: list[str]
    exact: bool
    explained_rows: int
    rows: int
    reason: str
    pattern: dict[str, int | None]
    exact_matches: list[str] = field(default_factory=list)
    could_generate: list[str] = field(default_factory=list)
    candidates: list[list[str]] = field(default_factory=list)
    candidate_sets: int = 0
    minimum_size: int | None = None
    unexplained_rows: list[int] = field(default_factory=list)
    missing_qi: list[str] = field(default_factory=list)
    masks: np.ndarray | None = field(default=None, repr=False)
    qi: list[str] = field(default_factory=list, repr=False)

    @property
    def attributed(self) -> bool:
        return bool(self.recipients)

    def row_levels(self) -> pd.DataFrame:
        """Per leaked row and QI, the levels at which its label occurs (the pattern read in step 2)."""
        if self.masks is None:
            return pd.DataFrame()
        return pd.DataFrame({q: [_bits(int(x)) for x in self.masks[:, i]] for i, q in enumerate(self.qi)})

    def to_dict(self) -> dict:
        return {"recipients": self.recipients, "exact": self.exact, "explained_rows": self.explained_rows,
                "reason": self.reason, "rows": self.rows, "pattern": self.pattern,
                "exact_matches": self.exact_matches, "could_generate": self.could_generate,
                "candidates": self.candidates, "candidate_sets": self.candidate_sets,
                "minimum_size": self.minimum_size, "unexplained_rows": self.unexplained_rows,
                "missing_qi": self.missing_qi}


def _bits(mask: int) -> list[int]:
    return [b for b in range(mask.bit_length()) if (mask >> b) & 1]


def _listing(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" … ({len(names)})" if len(names) > limit else "")


def leak_masks(plan: Plan, leak: pd.DataFrame, source: str | None = None) -> tuple[np.ndarray, list[str]]:
    """(rows, m) int64 level bitmasks of the leaked labels (bit l: the label occurs at level l), and the QIs
    absent from the leak (their mask is the top level). ReleaseError for a label that occurs at no level."""
    masks = np.zeros((len(leak), len(plan.qi)), dtype=np.int64)
    missing = []
    for i, q in enumerate(plan.qi):
        h = plan.hierarchies[q]
        if q not in leak.columns:
            missing.append(q)
            masks[:, i] = 1 << h.height
            continue
        table = level_masks(h)
        codes, labels = pd.factorize(as_labels(leak[q]))
        per_label = np.array([table.get(str(lab), 0) for lab in labels], dtype=np.int64)
        if (per_label == 0).any():
            bad = int(np.flatnonzero(per_label == 0)[0])
            r = int(np.flatnonzero(codes == bad)[0])
            raise ReleaseError(f"value '{labels[bad]}' occurs at no level of the plan's hierarchy for {q}; this "
                               "leaked row fits no node of the plan (a leak of another table?)", file=source,
                               row=r + 2 if source else r, column=q)
        masks[:, i] = per_label[codes]
    return masks, missing


def _bit_range(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the highest and the lowest set bit of its level mask (computed once per distinct mask)."""
    uniq, inverse = np.unique(masks, return_inverse=True)
    high = np.array([int(x).bit_length() - 1 for x in uniq], dtype=np.int64)
    low = np.array([(int(x) & -int(x)).bit_length() - 1 for x in uniq], dtype=np.int64)
    return high[inverse].reshape(masks.shape), low[inverse].reshape(masks.shape)


def minimum_covers(covers: Sequence[int], full: int) -> tuple[int | None, list[frozenset[int]]]:
    """All minimum-cardinality sub-collections of the masks ``covers`` whose union is ``full`` (as sets of
    indices into the distinct masks), and their size; ``(None, [])`` if even all of them do not cover.

    Exact: a depth-first branch on the uncovered element with the fewest covering masks, bounded by the best
    size found (and by the trivial lower bound ceil(uncovered / largest mask)). Fine for the m ≤ ~12 QIs a
    lattice allows; exponential in m in the worst case (set cover is NP-hard).
    """
    if full == 0:
        return 0, [frozenset()]
    union = 0
    for c in covers:
        union |= c
    if union & full != full:
        return None, []
    best = [bin(full).count("1") + 1]
    found: set[frozenset[int]] = set()
    largest = max(bin(c & full).count("1") for c in covers)

    def dfs(state: int, picked: tuple[int, ...]) -> None:
        if state & full == full:
            if len(picked) < best[0]:
                best[0] = len(picked)
                found.clear()
            if len(picked) == best[0]:
                found.add(frozenset(picked))
            return
        missing = full & ~state
        if len(picked) + math.ceil(bin(missing).count("1") / largest) > best[0]:
            return
        # the uncovered element with the fewest covering masks
        elems = _bits(missing)
        options = {e: [j for j, c in enumerate(covers) if (c >> e) & 1 and j not in picked] for e in elems}
        e = min(elems, key=lambda x: len(options[x]))
        for j in options[e]:
            dfs(state | covers[j], (*picked, j))

    dfs(0, ())
    return best[0], sorted(found, key=lambda s: sorted(s))


def attribute(plan: Plan, leak: pd.DataFrame, *, source: str | None = None) -> Attribution:
    """Attribute a leaked table (one row or many) to the plan's recipients (FP §3.2; module docstring).

    Exact match first (FP's step 3a); else the smallest sets of recipients whose knowledge explains the
    leak (step 3b; FP Table 6's collusion); ``reason`` always says how or why not. Raises ReleaseError (exit 2)
    for an empty leak or a label that fits no node of the plan.

    Examples
    --------
    One leaked row of R2's copy names R2:

    >>> from graphlink.fingerprint import EXAMPLES, make_plan
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> frame = read_table(EXAMPLES / "table1.csv")                     # FP Table 1
    >>> table = encode(frame, ["sex", "birthdate"], read_dir(EXAMPLES / "hierarchies"))
    >>> plan = make_plan(table, 2, 2, loss="samarati", l_min=1, l_max=2, discretisation="exact")
    >>> from graphlink.fingerprint import attribute, release_frame
    >>> leak = release_frame(plan, frame, "R2", drop=["name"]).head(1)
    >>> verdict = attribute(plan, leak)
    >>> verdict.recipients, verdict.exact, verdict.pattern
    (['R2'], True, {'sex': 0, 'birthdate': 2})
    """
    if len(leak) == 0:
        raise ReleaseError("the leak has no rows", file=source)
    qi, names = plan.qi, plan.names
    m = len(qi)
    L = plan.node_matrix()
    line = (lambda r: r + 2) if source else (lambda r: r)
    masks, missing = leak_masks(plan, leak, source)
    present = [i for i, q in enumerate(qi) if q not in missing]
    upper, lowest = _bit_range(masks)

    # rows finer than anything any recipient received
    floor = L.min(axis=0)
    finer = (upper < floor[None, :]).any(axis=1)
    unexplained = [line(int(r)) for r in np.flatnonzero(finer)]
    ok_rows = np.flatnonzero(~finer)

    # step 3a: recipients whose pattern every (explainable) row fits, on the QIs present
    exact: list[str] = []
    if len(ok_rows):
        uniq = np.unique(masks[ok_rows], axis=0)
        fits = np.ones(len(names), dtype=bool)
        for i in present:
            fits &= ((uniq[:, i][:, None] >> L[:, i][None, :]) & 1).astype(bool).all(axis=0)
        exact = [names[r] for r in np.flatnonzero(fits)]
    pattern: dict[str, int | None] = {q: None for q in missing}
    base = dict(pattern=pattern, exact_matches=exact, unexplained_rows=unexplained, missing_qi=missing,
                rows=len(leak), masks=masks, qi=list(qi))

    def label_at(i: int, level: int) -> str:
        rows = np.flatnonzero(((masks[:, i] >> level) & 1).astype(bool))
        return f" ('{as_labels(leak[qi[i]]).iloc[int(rows[0])]}')" if len(rows) and qi[i] not in missing else ""

    if len(ok_rows) == 0:
        r0 = int(np.flatnonzero(finer)[0])
        i0 = int(np.flatnonzero(upper[r0] < floor)[0])
        for i, q in enumerate(qi):
            pattern.setdefault(q, int(lowest[:, i].min()))
        return Attribution([], False, 0, reason=(
            f"cannot be attributed: no recipient received data this fine — row {line(r0)} has {qi[i0]} at level "
            f"{int(upper[r0, i0])}{label_at(i0, int(upper[r0, i0]))} but the finest {qi[i0]} any recipient got is "
            f"level {int(floor[i0])}; it is not from these releases (or was fabricated)"), **base)
    u = upper[ok_rows].min(axis=0)
    for i, q in enumerate(qi):
        if q not in missing:
            pattern[q] = int(u[i])
    pattern = {q: pattern[q] for q in qi}
    base["pattern"] = pattern
    explained = int(len(ok_rows))
    note = ""
    if unexplained:
        note = (f"; {len(unexplained)} row(s) ({_listing([str(x) for x in unexplained])}) are finer than any "
                "release and were left out")
    if missing:
        note += f"; the leak has no {', '.join(missing)} column (treated as suppressed)"

    able = (u[None, :] >= L).all(axis=1)
    could = [names[r] for r in np.flatnonzero(able)]
    base["could_generate"] = could
    if len(exact) == 1:
        r = names.index(exact[0])
        also = [x for x in could if x != exact[0]]
        extra = f"; {_listing(also)} could also produce it by generalizing further" if also else ""
        rows_word = "row left" if unexplained else "row"
        return Attribution(exact, True, explained, reason=(
            f"exact match: every leaked {rows_word} has {exact[0]}'s generalization pattern "
            f"({plan.pattern(L[r])}){extra}{note}"), candidates=[exact], candidate_sets=1, minimum_size=1, **base)
    if len(exact) > 1:
        also = [x for x in could if x not in exact]
        extra = f"; {_listing(also)} could also produce them by generalizing further" if also else ""
        return Attribution([], False, 0, reason=(
            f"cannot be attributed: the leaked rows fit the patterns of {_listing(exact)} alike (their labels occur "
            f"at several levels of the hierarchies), so the pattern does not tell them apart{extra}{note}"),
            candidates=[[x] for x in could[:MAX_LISTED]], candidate_sets=len(could), minimum_size=1, **base)

    # step 3b: minimum sets of recipients whose knowledge covers every QI at the observed granularity
    full = (1 << m) - 1
    cover = np.zeros(len(names), dtype=np.int64)
    for i in range(m):
        cover |= (L[:, i] <= u[i]).astype(np.int64) << i
    distinct = sorted({int(c) for c in cover if c})
    groups = {c: [names[r] for r in np.flatnonzero(cover == c)] for c in distinct}
    size, sets = minimum_covers(distinct, full)
    if size is None:   # cannot happen: every QI has some recipient at or below u (rows finer were removed)
        return Attribution([], False, 0, reason="cannot be attributed: no set of recipients holds data this fine",
                           **base)
    expanded: list[list[str]] = []
    total = 0
    for s in sets:
        members = [groups[distinct[j]] for j in sorted(s)]
        total += math.prod(len(x) for x in members)
        for combo in itertools.product(*members):
            if len(expanded) < MAX_LISTED:
                expanded.append(sorted(combo, key=names.index))
    expanded.sort(key=lambda c: [names.index(x) for x in c])

    def why(members: Sequence[str]) -> str:
        parts = []
        for x in members:
            r = names.index(x)
            only = [qi[i] for i in range(m) if L[r, i] <= u[i]
                    and not any(L[names.index(y), i] <= u[i] for y in members if y != x)]
            if only:
                parts.append(f"{', '.join(f'{q} at level {int(u[qi.index(q)])}{label_at(qi.index(q), int(u[qi.index(q)]))}' for q in only)} only from {x}")  # noqa: E501
        return "; ".join(parts)

    if total == 1:
        who = expanded[0]
        if size == 1:
            r = names.index(who[0])
            coarser = [f"{qi[i]} received at level {int(L[r, i])}" for i in range(m) if L[r, i] < u[i]]
            reason = (f"no recipient's pattern matches exactly; only {who[0]} holds data fine enough to produce it "
                      f"(generalized further: {', '.join(coarser)})" if coarser else
                      f"only {who[0]} holds data fine enough to produce it")
        else:
            reason = (f"no single recipient holds data this fine; the smallest set of recipients whose releases "
                      f"together explain the leak is {{{', '.join(who)}}} (collusion, FP Table 6): {why(who)}")
        return Attribution(who, False, explained, reason=reason + note, candidates=[who], candidate_sets=1,
                           minimum_size=size, **base)
    common = sorted(set.intersection(*(set(c) for c in expanded)), key=names.index) if total <= MAX_LISTED else []
    shown = "; ".join("{" + ", ".join(c) + "}" for c in expanded[:5])
    reason = (f"cannot be attributed: {total} different sets of {size} recipient{'s' if size > 1 else ''} could "
              f"have produced it ({shown}{' …' if total > 5 else ''})")
    if common:
        reason += f"; every one of them includes {', '.join(common)}"
    if size == 1:
        reason += " — the leak is coarser than several recipients' data"
    return Attribution([], False, 0, reason=reason + note, candidates=expanded, candidate_sets=total,
                       minimum_size=size, **base)
