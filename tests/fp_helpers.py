"""Shared fixtures for the fingerprinting tests: the FP paper's tables and hierarchies, a hypothesis strategy for
tables whose hierarchies may keep a label across levels (``white → white``), and brute-force oracles that
work on the released strings (no encoding, no bitmasks)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pandas as pd
from hypothesis import strategies as st

from graphlink.fingerprint import EXAMPLES
from graphlink.fingerprint.plan import Plan
from graphlink.fingerprint.release import release_frame
from graphlink.qi import hierarchy as H
from graphlink.qi.table import QITable, encode, read_table

FP = EXAMPLES
FP_HIER = FP / "hierarchies"


def fp_frame(name: str = "table1") -> pd.DataFrame:
    return read_table(FP / f"{name}.csv")


def fp_table(name: str = "table1") -> QITable:
    qi = ["sex", "birthdate"] if name == "table1" else ["sex", "birthdate", "zip"]
    return encode(fp_frame(name), qi, H.read_dir(FP_HIER, qi))


@st.composite
def keeping_hierarchies(draw: st.DrawFn, name: str, max_values: int = 5, max_height: int = 3) -> H.Hierarchy:
    """A random value tree in which a group with a single member may keep that member's label one level up
    (as ARX hierarchies do: ``white → white → *``), so a label can occur at several levels."""
    n_values = draw(st.integers(1, max_values))
    columns = [[f"{name}{i}" for i in range(n_values)]]
    for level in range(1, draw(st.integers(1, max_height)) + 1):
        prev = list(dict.fromkeys(columns[-1]))
        groups = draw(st.lists(st.integers(0, max(len(prev) - 1, 0)), min_size=len(prev), max_size=len(prev)))
        members: dict[int, list[str]] = {}
        for p, g in zip(prev, groups, strict=True):
            members.setdefault(g, []).append(p)
        parent = {}
        for g, ms in members.items():
            keep = len(ms) == 1 and draw(st.booleans())
            for p in ms:
                parent[p] = p if keep else f"{name}L{level}g{g}"
        columns.append([parent[v] for v in columns[-1]])
    return H.Hierarchy(name, [list(r) for r in zip(*columns, strict=True)])


@st.composite
def fp_tables(draw: st.DrawFn, max_rows: int = 14, max_qi: int = 3) -> QITable:
    m = draw(st.integers(1, max_qi))
    names = [f"q{i}" for i in range(m)]
    hs = {q: draw(keeping_hierarchies(q)) for q in names}
    n = draw(st.integers(2, max_rows))
    data = {q: draw(st.lists(st.sampled_from(hs[q].values), min_size=n, max_size=n)) for q in names}
    data["s"] = [str(x) for x in draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]
    return encode(pd.DataFrame(data), names, hs)


def released_rows(plan: Plan, table: QITable) -> dict[str, set[tuple[str, ...]]]:
    """Per recipient, the set of QI tuples in its release (strings, as a recipient sees them)."""
    return {name: set(map(tuple, release_frame(plan, table.frame, name)[list(plan.qi)].astype(str).to_numpy()))
            for name in plan.names}


def can_produce(plan: Plan, table: QITable, members: Sequence[str], leak: pd.DataFrame) -> bool:
    """Brute force on strings: could recipients ``members`` together write every leaked row? A row needs one
    original record whose every QI label is that record's value generalized to some level at or above the
    level at which some member received that QI (members can only generalize further; FP §4)."""
    hs = [plan.hierarchies[q] for q in plan.qi]
    levels = [plan.recipient(x).levels for x in members]
    originals = table.frame[list(plan.qi)].astype(str).to_numpy()
    for _, row in leak.iterrows():
        ok = False
        for t in originals:
            if all(any(hs[i].generalize(t[i], lv) == str(row[q]) for lvls in levels
                       for lv in range(lvls[i], hs[i].height + 1)) for i, q in enumerate(plan.qi)):
                ok = True
                break
        if not ok:
            return False
    return True


def minimal_sets(plan: Plan, table: QITable, leak: pd.DataFrame) -> list[frozenset[str]]:
    """Every smallest set of recipients that can produce the leak (brute force over all subsets)."""
    for size in range(1, len(plan.names) + 1):
        found = [frozenset(c) for c in itertools.combinations(plan.names, size) if can_produce(plan, table, c, leak)]
        if found:
            return found
    return []
