"""Brute-force oracle for Definition 19 (k-unlinkability) used by the unlink tests.

Independent of the core engine: it rebuilds the trails from the long release table itself (FillTrails,
thesis Alg. 1: the identified side is complete; a de-identified value is 1 where disclosed, 0 at a
location that disclosed as many de-identified as identified records, * elsewhere), pads the de-identified
side with |M| − |N| null trails, enumerates *every* maximum matching and checks both clauses of
Definition 19 on the union.  Null trails are interchangeable, so a matching is enumerated up to which
identities take a null trail; an identity that can take one has z null edges in the union.
Exponential: only for releases with a handful of identities.
"""

from __future__ import annotations

from collections.abc import Hashable

import pandas as pd


def trails(frame: pd.DataFrame) -> tuple[list, dict, dict, int]:
    locs = list(pd.unique(frame["location"]))
    idf = frame[frame["kind"] == "identified"]
    dff = frame[frame["kind"] == "deidentified"]
    M = list(pd.unique(idf["element"]))
    N = list(pd.unique(dff["element"]))
    gamma = {c: set(idf.loc[idf["location"] == c, "element"]) for c in locs}
    omega = {c: set(dff.loc[dff["location"] == c, "element"]) for c in locs}
    mt = {m: tuple(int(m in gamma[c]) for c in locs) for m in M}
    nt = {}
    for n in N:
        row = []
        for c in locs:
            if n in omega[c]:
                row.append(1)
            elif len(omega[c]) == len(gamma[c]):
                row.append(0)
            else:
                row.append(None)
        nt[n] = tuple(row)
    return M, mt, nt, max(0, len(M) - len(N))


def union_edges(frame: pd.DataFrame) -> tuple[set, set, int, int]:
    """The union of all maximum matchings of the padded link graph as real (identity, de-identified element)
    pairs, the identities that take a null trail in some maximum matching, the number z of null trails and the
    maximum matching size (|M| when some complete one-to-one assignment is consistent with the release)."""
    M, mt, nt, z = trails(frame)
    adj = {m: [n for n, t in nt.items() if all(v is None or v == mt[m][i] for i, v in enumerate(t))]
           for m in M}
    best = -1
    union: set[tuple[Hashable, Hashable]] = set()
    null_ok: set[Hashable] = set()

    def rec(i: int, used: set, nulls: int, edges: list, size: int) -> None:
        nonlocal best, union, null_ok
        if i == len(M):
            if size > best:
                best = size
                union = set()
                null_ok = set()
            if size == best:
                for m, n in edges:
                    if n is None:
                        null_ok.add(m)
                    else:
                        union.add((m, n))
            return
        m = M[i]
        for n in adj[m]:
            if n not in used:
                used.add(n)
                edges.append((m, n))
                rec(i + 1, used, nulls, edges, size + 1)
                edges.pop()
                used.discard(n)
        if nulls < z:
            edges.append((m, None))
            rec(i + 1, used, nulls + 1, edges, size + 1)
            edges.pop()
        rec(i + 1, used, nulls, edges, size)

    rec(0, set(), 0, [], 0)
    return union, null_ok, z, best


def union_degrees(frame: pd.DataFrame) -> tuple[dict, dict, dict, int]:
    """Real union degree of every identity and de-identified element, whether the identity may take a
    null trail in some maximum matching, and the number z of null trails."""
    M, _, nt, _ = trails(frame)
    union, null_ok, z, _ = union_edges(frame)
    deg_m = {m: sum(1 for (a, _) in union if a == m) for m in M}
    deg_n = {n: sum(1 for (_, b) in union if b == n) for n in nt}
    return deg_m, deg_n, {m: m in null_ok for m in M}, z


def is_k_unlinkable(frame: pd.DataFrame, k: int) -> bool:
    """Definition 19: each vertex has ≥ k union edges, or all its union edges go to null trails."""
    deg_m, deg_n, null_ok, z = union_degrees(frame)
    for m, d in deg_m.items():
        total = d + (z if null_ok[m] else 0)
        if total < k and d > 0:
            return False
    return all(not (0 < d < k) for d in deg_n.values())
