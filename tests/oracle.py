"""Brute-force oracles for tests: enumerate every maximum matching of a small bipartite graph.

Exponential; only for graphs with a handful of vertices.  Null trails are materialised explicitly here,
which is exactly what the library avoids, so the two computations are independent.
"""

from __future__ import annotations

import itertools

import numpy as np


def all_maximum_matchings(n_left: int, n_right: int, edges: list[tuple[int, int]]) -> list[frozenset]:
    """Every maximum matching as a frozenset of edges, by exhaustive search over edge subsets."""
    adj = {u: [v for (x, v) in edges if x == u] for u in range(n_left)}
    best: list[frozenset] = []
    best_size = 0

    def rec(u: int, used: set, cur: list) -> None:
        nonlocal best, best_size
        if u == n_left:
            if len(cur) > best_size:
                best_size, best = len(cur), [frozenset(cur)]
            elif len(cur) == best_size:
                best.append(frozenset(cur))
            return
        # prune: even matching all remaining left vertices cannot reach best
        if len(cur) + (n_left - u) < best_size:
            return
        rec(u + 1, used, cur)
        for v in adj[u]:
            if v not in used:
                used.add(v)
                cur.append((u, v))
                rec(u + 1, used, cur)
                cur.pop()
                used.remove(v)

    rec(0, set(), [])
    return best


def link(m: np.ndarray, n: np.ndarray) -> bool:
    """Definition 17 on dense trails (-1 = '*'): n links m iff every location agrees or is '*'."""
    return all(a < 0 or b < 0 or a == b for a, b in zip(m, n, strict=True))


def oracle_from_dense(M: np.ndarray, N: np.ndarray, null_side: str | None, n_null: int) -> dict:
    """Expand null trails explicitly, enumerate all maximum matchings, return allowed/vital edge sets.

    Vertices: identified rows 0..|M|-1 (+ nulls if null_side == 'identified'), de-identified likewise.
    Returns sets over real (identified row, de-identified row) pairs plus per-element null info.
    """
    nm, nn = len(M), len(N)
    n_left = nm + (n_null if null_side == "identified" else 0)
    n_right = nn + (n_null if null_side == "deidentified" else 0)
    edges = []
    for i in range(n_left):
        for j in range(n_right):
            if i >= nm or j >= nn or link(M[i], N[j]):
                edges.append((i, j))
    mms = all_maximum_matchings(n_left, n_right, edges)
    union = set().union(*mms) if mms else set()
    inter = set.intersection(*map(set, mms)) if mms else set()
    real = lambda e: e[0] < nm and e[1] < nn  # noqa: E731
    out = {
        "nu": len(mms[0]) if mms else 0,
        "allowed": {e for e in union if real(e)},
        "vital": {e for e in inter if real(e)},
        "all_edges": {e for e in edges if real(e)},
        "mms": mms,
    }
    if null_side == "deidentified":
        out["null_allowed_identified"] = {i for (i, j) in union if j >= nn}
    elif null_side == "identified":
        out["null_allowed_deidentified"] = {j for (i, j) in union if i >= nm}
    return out


def union_degrees_from_oracle(o: dict, nm: int, nn: int) -> tuple[np.ndarray, np.ndarray]:
    di = np.zeros(nm, int)
    dj = np.zeros(nn, int)
    for i, j in o["allowed"]:
        di[i] += 1
        dj[j] += 1
    return di, dj


def subsets(xs):
    return itertools.chain.from_iterable(itertools.combinations(xs, r) for r in range(len(xs) + 1))


def element_tight_set(graph, classes, r: int, s: int) -> tuple[set[int], set[int]]:
    """The tight set behind a forced one-to-one pair, searched on the *expanded* element graph with the same
    maximum matching (what the explanation computed before it moved to twin classes).

    r is a reserved-side row, s a complete-side row.  Reverse search: complete vertex x is reached; its mate r'
    joins U; every complete neighbour of r' other than its mate is reached.  O(element edges)."""
    r_is_de = graph.trails.star_side == "deidentified"
    ei, ej = np.asarray(graph.ei), np.asarray(graph.ej)
    rr, ss = (ej, ei) if r_is_de else (ei, ej)
    nbrs: dict[int, set[int]] = {}
    for a, b in zip(rr.tolist(), ss.tolist(), strict=True):
        nbrs.setdefault(a, set()).add(b)
    mate_r = classes.mate_deidentified if r_is_de else classes.mate_identified
    mate_s = classes.mate_identified if r_is_de else classes.mate_deidentified
    seen_s = set(nbrs.get(r, set())) - {s}
    stack = list(seen_s)
    seen_r: set[int] = set()
    while stack:
        x = stack.pop()
        rp = int(mate_s[x])
        if rp < 0 or rp in seen_r:
            continue
        seen_r.add(rp)
        for y in nbrs.get(rp, set()):
            if y != mate_r[rp] and y not in seen_s:
                seen_s.add(y)
                stack.append(y)
    return seen_r, seen_s


def oracle_from_edges(nm: int, nn: int, real_edges: set[tuple[int, int]], null_side: str | None,
                      n_null: int) -> dict:
    """Like :func:`oracle_from_dense` for an explicit set of real (identified row, de-identified row) edges:
    null trails (§4.2.4) are added explicitly, linked to every element of the other side."""
    n_left = nm + (n_null if null_side == "identified" else 0)
    n_right = nn + (n_null if null_side == "deidentified" else 0)
    edges = sorted(real_edges) + [(i, j) for i in range(n_left) for j in range(n_right) if i >= nm or j >= nn]
    mms = all_maximum_matchings(n_left, n_right, edges)
    union = set().union(*mms) if mms else set()
    inter = set.intersection(*map(set, mms)) if mms else set()
    real = lambda e: e[0] < nm and e[1] < nn  # noqa: E731
    return {"nu": len(mms[0]) if mms else 0, "allowed": {e for e in union if real(e)},
            "vital": {e for e in inter if real(e)}}


def household_oracle(rows: list[tuple[str, str, str]], nothing_withheld: bool) -> dict:
    """Every consistent one-to-many assignment of a small release, by enumerating **every** map β from people to
    households (not only fitting ones), straight from the definition (Malin 2006 Appendix A, Definition 27):

    * fit: at every location c and person m disclosed at c, β(m) is disclosed at c;
    * cover (``nothing_withheld`` only): at every location c, every household disclosed at c is β(m) for some person
      m disclosed at c — the households disclosed at c are exactly β(people disclosed at c).

    ``rows`` are (location, kind, element).  Returns the people and households (in order of first appearance), the
    consistent assignments (tuples of household per person), and the certain (in all) and possible (in some)
    (person, household) pairs by key.  O(|N|^|M| · rows)."""
    people = list(dict.fromkeys(e for _, k, e in rows if k == "identified"))
    homes = list(dict.fromkeys(e for _, k, e in rows if k == "deidentified"))
    locations = list(dict.fromkeys(c for c, _, _ in rows))
    at_m = {c: {e for cc, k, e in rows if cc == c and k == "identified"} for c in locations}
    at_n = {c: {e for cc, k, e in rows if cc == c and k == "deidentified"} for c in locations}
    found = []
    for beta in itertools.product(homes, repeat=len(people)):
        of = dict(zip(people, beta, strict=True))
        if not all(of[m] in at_n[c] for c in locations for m in at_m[c]):
            continue
        if nothing_withheld and not all({of[m] for m in at_m[c]} == at_n[c] for c in locations):
            continue
        found.append(beta)
    pairs_of = [set(zip(people, b, strict=True)) for b in found]
    return {"people": people, "households": homes, "assignments": found,
            "certain": set.intersection(*pairs_of) if pairs_of else set(),
            "possible": set().union(*pairs_of) if pairs_of else set()}
