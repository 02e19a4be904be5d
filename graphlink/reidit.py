"""Trail re-identification: REIDIT-C, -I, -I-K, -M and exact true loves, each pair with its reason.

Thesis references: REIDIT-C Algorithms 2/3 (§4.1), REIDIT-I Algorithms 4/5/6 (§4.2, Flip §4.2.3),
REIDIT-I-K Algorithm 15 (§9.1), REIDIT-M Algorithm 16 (Appendix A), true loves Definition 5 / Theorem 2.
Under the model's assumptions (one-to-one, reserved direction respected; Hall's condition holds) every
REIDIT-C and REIDIT-I pair is a true love, and true loves are exactly the certain re-identifications.  When
Hall's condition fails the data breaks the model: results carry ``model_ok = False`` and no certainty is
claimed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numba
import numpy as np
import pandas as pd

from graphlink.linkgraph import LinkGraph, build_linkgraph
from graphlink.matching import EdgeClasses, classify_edges
from graphlink.release import Release
from graphlink.trails import ReservedChoice, Trails, TrailSide, build_trails

Method = Literal["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]
METHODS: tuple[str, ...] = ("complete", "incomplete", "incomplete-k", "multiple", "true-loves")
#: above this many forced (non degree-one) true loves, tight-set explanations are computed only on request
EXPLAIN_LIMIT = 2000


@dataclass(frozen=True)
class Reidentification:
    """Re-identified pairs with a plain-words reason each, and summary counts."""

    method: str
    pairs: pd.DataFrame                     # identified, deidentified, reason
    summary: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return self.pairs.copy()

    def to_dict(self) -> dict:
        return {"method": self.method,
                "pairs": [{"identified": r.identified, "deidentified": r.deidentified, "reason": r.reason}
                          for r in self.pairs.itertuples(index=False)],
                "summary": self.summary}

    def __len__(self) -> int:
        return len(self.pairs)


def _pairs_frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["identified", "deidentified", "reason"]).astype(object)


def _loc_text(trails: Trails, side: TrailSide, i: int) -> str:
    t = side.trail_str(i)
    at = [c for c, v in zip(trails.locations, t, strict=True) if v == "1"]
    shown = ", ".join(at[:8]) + (f" and {len(at) - 8} more" if len(at) > 8 else "")
    return f"trail {t}" + (f" (disclosed at {shown})" if at else "")


# ---------------------------------------------------------------------------------------------- REIDIT-C
def reidit_c(trails: Trails) -> Reidentification:
    """REIDIT-C (Alg. 2; sort/hash version of Alg. 3): unique exact match of fully known trails.

    A pair is reported when its trail has no ``*``, occurs exactly once among identified trails and exactly
    once among de-identified trails (uniqueness on *both* sides keeps it sound outside the unreserved
    one-to-one model, where identified twins need not have de-identified twins).  Every pair is a true
    love: a fully known de-identified trail links exactly the identified trails equal to it.
    O((|M| + |N|)·W + (|M| + |N|) log(|M| + |N|)).
    """
    M, N = trails.identified, trails.deidentified
    full = _full_row(M)
    m_ok = np.all(M.known == full, axis=1)
    n_ok = np.all(N.known == full, axis=1)
    mi, ni = np.flatnonzero(m_ok), np.flatnonzero(n_ok)
    words = np.vstack([M.ones[mi], N.ones[ni]])
    side = np.concatenate([np.zeros(len(mi), np.int8), np.ones(len(ni), np.int8)])
    rows = np.concatenate([mi, ni])
    group = _exact_groups(words)
    n_groups = int(group.max()) + 1 if len(group) else 0
    n_id = np.bincount(group, weights=(side == 0), minlength=n_groups)
    n_de = np.bincount(group, weights=(side == 1), minlength=n_groups)
    sel = ((n_id == 1) & (n_de == 1))[group]
    order = np.lexsort((side[sel], group[sel]))      # per group: identified row first, then de-identified
    pr = rows[sel][order].reshape(-1, 2)
    ones = np.bitwise_count(M.ones[pr[:, 0]]).sum(axis=1).tolist() if len(pr) else []
    mk, nk = M.keys[pr[:, 0]], N.keys[pr[:, 1]]
    n_loc = M.n_locations
    reasons = [f"{m} and {n} share a trail (disclosed at {c} of {n_loc} locations) that no other identified or "
               f"de-identified record has" for m, n, c in zip(mk, nk, ones, strict=True)]
    res = pd.DataFrame({"identified": mk, "deidentified": nk, "reason": np.array(reasons, dtype=object)})
    return Reidentification("complete", res.astype(object), {"reidentified": len(res), "identified": len(M),
                                                             "deidentified": len(N)})


def trail_strings(side: TrailSide, rows: np.ndarray) -> list[str]:
    """Trails of ``rows`` as '0'/'1'/'*' strings, vectorised (one bytes view per row).  O(len(rows)·|C|)."""
    from graphlink.trails import unpack

    if len(rows) == 0:
        return []
    k = unpack(side.known[rows], side.n_locations)
    o = unpack(side.ones[rows], side.n_locations)
    chars = np.where(k, np.where(o, ord("1"), ord("0")), ord("*")).astype(np.uint8)
    return [b.decode() for b in np.ascontiguousarray(chars).view(f"S{side.n_locations}").ravel()]


def _full_row(side: TrailSide) -> np.ndarray:
    from graphlink.trails import full_mask

    return full_mask(1, side.n_locations)[0]


def _exact_groups(words: np.ndarray) -> np.ndarray:
    """Group id per row such that rows share a group iff their words are identical.

    64-bit fingerprints and one argsort do the bulk (algorithms.md §3.2); any fingerprint bucket whose rows
    are not all identical (a collision) is regrouped exactly.  O(n log n + n·W).
    """
    from graphlink.linkgraph import _fingerprint, _row_classes

    n = len(words)
    if n == 0:
        return np.zeros(0, np.int64)
    fp = _fingerprint(words)
    order = np.argsort(fp, kind="stable")
    fs = fp[order]
    start = np.r_[True, fs[1:] != fs[:-1]]
    gid_sorted = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    same = np.all(words[order] == words[order[first[gid_sorted]]], axis=1)
    group = np.empty(n, np.int64)
    group[order] = gid_sorted
    bad_groups = np.unique(gid_sorted[~same])
    if len(bad_groups):
        bad_rows = np.flatnonzero(np.isin(group, bad_groups))
        _, sub = _row_classes(words[bad_rows])
        group[bad_rows] = int(group.max()) + 1 + sub
    return group


# ---------------------------------------------------------------------------------------------- REIDIT-I
def _orientation(graph: LinkGraph) -> tuple[bool, TrailSide, TrailSide]:
    """(reserved_is_deidentified, reserved side R, complete side S).  Unreserved: R = de-identified."""
    tr = graph.trails
    if tr.reserved == "identified":
        return False, tr.identified, tr.deidentified
    return True, tr.deidentified, tr.identified


@dataclass(frozen=True)
class _Adjacency:
    """CSR adjacency of the link graph oriented reserved side R -> complete side S (and back)."""

    r_ptr: np.ndarray
    r_nb: np.ndarray          # S rows
    s_ptr: np.ndarray
    s_nb: np.ndarray          # R rows
    r_is_de: bool
    R: TrailSide
    S: TrailSide

    def of_r(self, r: int) -> np.ndarray:
        return self.r_nb[self.r_ptr[r]:self.r_ptr[r + 1]]

    def of_s(self, s: int) -> np.ndarray:
        return self.s_nb[self.s_ptr[s]:self.s_ptr[s + 1]]


def _adjacency(graph: LinkGraph) -> _Adjacency:
    """Built once per graph and cached on it (all REIDIT variants and explanations share it).  O(E log E)."""
    cached = graph.__dict__.get("_reidit_adjacency")
    if cached is None:
        cached = graph.__dict__["_reidit_adjacency"] = _build_adjacency(graph)
    return cached


def _build_adjacency(graph: LinkGraph) -> _Adjacency:
    r_is_de, R, S = _orientation(graph)
    ei, ej = graph.ei, graph.ej
    rr, ss = (ej, ei) if r_is_de else (ei, ej)
    order_r = np.argsort(rr, kind="stable")
    ptr_r = np.searchsorted(rr[order_r], np.arange(len(R) + 1)).astype(np.int64)
    order_s = np.argsort(ss, kind="stable")
    ptr_s = np.searchsorted(ss[order_s], np.arange(len(S) + 1)).astype(np.int64)
    return _Adjacency(ptr_r, ss[order_r].astype(np.int64), ptr_s, rr[order_s].astype(np.int64), r_is_de, R, S)


@dataclass(frozen=True)
class _ClassView:
    """The link graph oriented R (reserved) -> S (complete) on twin classes, with class members."""

    r_ptr: np.ndarray          # R class -> S classes (CSR)
    r_nb: np.ndarray
    s_ptr: np.ndarray          # S class -> R classes (CSR)
    s_nb: np.ndarray
    r_size: np.ndarray
    s_size: np.ndarray
    r_mptr: np.ndarray         # R class -> member rows (CSR, rows ascending)
    r_mem: np.ndarray
    s_mptr: np.ndarray
    s_mem: np.ndarray
    r_class: np.ndarray        # row -> class
    s_class: np.ndarray
    r_is_de: bool
    R: TrailSide
    S: TrailSide

    def candidates(self, r: int, limit: int | None = None) -> np.ndarray:
        """S rows linked to R row ``r`` (up to ``limit``), from classes.  O(degree)."""
        out: list[np.ndarray] = []
        n = 0
        c = self.r_class[r]
        for sc in self.r_nb[self.r_ptr[c]:self.r_ptr[c + 1]]:
            m = self.s_mem[self.s_mptr[sc]:self.s_mptr[sc + 1]]
            out.append(m)
            n += len(m)
            if limit is not None and n >= limit:
                break
        return np.concatenate(out)[:limit] if out else np.zeros(0, np.int64)

    def candidates_of_s(self, s: int, limit: int | None = None) -> np.ndarray:
        out: list[np.ndarray] = []
        n = 0
        c = self.s_class[s]
        for rc in self.s_nb[self.s_ptr[c]:self.s_ptr[c + 1]]:
            m = self.r_mem[self.r_mptr[rc]:self.r_mptr[rc + 1]]
            out.append(m)
            n += len(m)
            if limit is not None and n >= limit:
                break
        return np.concatenate(out)[:limit] if out else np.zeros(0, np.int64)


def _class_view(graph: LinkGraph) -> _ClassView:
    """Built once per graph and cached on it.  O(E_class log E_class + |M| + |N|)."""
    cached = graph.__dict__.get("_reidit_class_view")
    if cached is not None:
        return cached
    from graphlink.linkgraph import _members

    r_is_de, R, S = _orientation(graph)
    if r_is_de:
        rc, sc, r_size, s_size, r_class, s_class = (graph.class_ej, graph.class_ei, graph.de_class_size,
                                                     graph.id_class_size, graph.de_class, graph.id_class)
    else:
        rc, sc, r_size, s_size, r_class, s_class = (graph.class_ei, graph.class_ej, graph.id_class_size,
                                                     graph.de_class_size, graph.id_class, graph.de_class)
    o = np.argsort(rc, kind="stable")
    r_ptr = np.searchsorted(rc[o], np.arange(len(r_size) + 1)).astype(np.int64)
    o2 = np.argsort(sc, kind="stable")
    s_ptr = np.searchsorted(sc[o2], np.arange(len(s_size) + 1)).astype(np.int64)
    rmp, rm = _members(r_class, len(r_size))
    smp, sm = _members(s_class, len(s_size))
    view = _ClassView(r_ptr, sc[o].astype(np.int64), s_ptr, rc[o2].astype(np.int64), r_size.astype(np.int64),
                      s_size.astype(np.int64), rmp.astype(np.int64), rm, smp.astype(np.int64), sm,
                      r_class, s_class, r_is_de, R, S)
    graph.__dict__["_reidit_class_view"] = view
    return view


@numba.njit(cache=True)
def _propagate_classes(r_ptr, r_nb, s_ptr, s_nb, r_size, s_size, r_mptr, r_mem, s_mptr, s_mem,
                       n_r_rows, n_s_rows, flip):  # pragma: no cover - numba
    """REIDIT-I unit propagation on twin classes (Alg. 4-6), element-exact without expanding edges.

    Twins share their neighbourhood, so every alive member of a class has the same degree: deg_r[c] is
    Σ alive S members over the class's S neighbours.  Taking an S member of class i lowers deg_r of every
    R class linked to i by one (one decrement per class edge, not per element edge); members are taken in
    row order.  O(|R| + |S| + Σ_pairs deg_class): each link touches its two classes' class edges.
    """
    n_rc, n_sc = len(r_size), len(s_size)
    alive_rc = r_size.copy()
    alive_sc = s_size.copy()
    next_r = r_mptr[:-1].copy()          # first untaken member of each class
    next_s = s_mptr[:-1].copy()
    deg_r = np.zeros(n_rc, np.int64)
    for c in range(n_rc):
        for e in range(r_ptr[c], r_ptr[c + 1]):
            deg_r[c] += s_size[r_nb[e]]
    deg_s = np.zeros(n_sc, np.int64)
    for c in range(n_sc):
        for e in range(s_ptr[c], s_ptr[c + 1]):
            deg_s[c] += r_size[s_nb[e]]
    alive_r = np.ones(n_r_rows, np.bool_)
    alive_s = np.ones(n_s_rows, np.bool_)
    partner_r = np.full(n_r_rows, -1, np.int64)
    partner_s = np.full(n_s_rows, -1, np.int64)
    conflict_r = np.zeros(n_r_rows, np.bool_)
    cap = n_r_rows + n_s_rows + n_rc + n_sc + 1
    queue = np.empty(cap, np.int64)
    qt = 0
    for c in range(n_rc):
        if deg_r[c] == 1:
            queue[qt] = c
            qt += 1
    if flip:
        for c in range(n_sc):
            if deg_s[c] == 1:
                queue[qt] = n_rc + c
                qt += 1
    m = min(n_r_rows, n_s_rows)
    out_r = np.empty(m, np.int64)
    out_s = np.empty(m, np.int64)
    out_flip = np.zeros(m, np.bool_)
    k = 0
    qh = 0
    while qh < qt:
        item = queue[qh]
        qh += 1
        if item < n_rc:
            rc = item
            if alive_rc[rc] == 0 or deg_r[rc] != 1:
                continue
            sc = -1
            for e in range(r_ptr[rc], r_ptr[rc + 1]):
                if alive_sc[r_nb[e]] > 0:
                    sc = r_nb[e]
                    break
            via = False
        else:
            sc = item - n_rc
            if alive_sc[sc] == 0 or deg_s[sc] != 1:
                continue
            rc = -1
            for e in range(s_ptr[sc], s_ptr[sc + 1]):
                if alive_rc[s_nb[e]] > 0:
                    rc = s_nb[e]
                    break
            via = True
        r = r_mem[next_r[rc]]
        s = s_mem[next_s[sc]]
        next_r[rc] += 1
        next_s[sc] += 1
        alive_rc[rc] -= 1
        alive_sc[sc] -= 1
        alive_r[r] = False
        alive_s[s] = False
        partner_r[r] = s
        partner_s[s] = r
        out_r[k] = r
        out_s[k] = s
        out_flip[k] = via
        k += 1
        if via and alive_sc[sc] > 0 and qt < cap:      # the class's next twin may be degree one too
            queue[qt] = n_rc + sc
            qt += 1
        for e in range(r_ptr[rc], r_ptr[rc + 1]):        # r is gone: S classes linked to rc lose one record
            c2 = r_nb[e]
            deg_s[c2] -= 1
            if flip and deg_s[c2] == 1 and alive_sc[c2] > 0 and qt < cap:
                queue[qt] = n_rc + c2
                qt += 1
        for e in range(s_ptr[sc], s_ptr[sc + 1]):        # s is taken: R classes linked to sc lose a candidate
            c2 = s_nb[e]
            deg_r[c2] -= 1
            if alive_rc[c2] > 0:
                if deg_r[c2] == 1 and qt < cap:
                    queue[qt] = c2
                    qt += 1
                elif deg_r[c2] == 0:                     # Hall violated: these records can be nobody
                    for p in range(next_r[c2], r_mptr[c2 + 1]):
                        conflict_r[r_mem[p]] = True
                        alive_r[r_mem[p]] = False
                    next_r[c2] = r_mptr[c2 + 1]
                    alive_rc[c2] = 0
    return out_r[:k], out_s[:k], out_flip[:k], partner_r, partner_s, alive_r, alive_s, conflict_r, deg_r


def _run_reidit_i(graph: LinkGraph, flip: bool | None = None) -> tuple[list[tuple[int, int, str]], dict]:
    """REIDIT-I as unit propagation on twin classes (numba).  Returns (R row, S row, reason) triples.

    Never expands element-level edges, so low-entropy releases with 1e8+ element edges run in seconds.
    ``flip`` (Alg. 6) defaults to |M| = |N|.  Reasons are built afterwards for the re-identified pairs
    only: a candidate that was gone when a pair was made was taken by its final partner, so the post-hoc
    reason is the one at the time.
    """
    v = _class_view(graph)
    R, S = v.R, v.S
    if flip is None:
        flip = len(R) == len(S)
    out_r, out_s, out_flip, partner_r, partner_s, alive_r, alive_s, conflict_r, deg_r = _propagate_classes(
        v.r_ptr, v.r_nb, v.s_ptr, v.s_nb, v.r_size, v.s_size, v.r_mptr, v.r_mem, v.s_mptr, v.s_mem,
        len(R), len(S), bool(flip))
    deg_r0 = np.zeros(len(v.r_size), np.int64)
    np.add.at(deg_r0, np.repeat(np.arange(len(v.r_size)), np.diff(v.r_ptr)), v.s_size[v.r_nb])
    note = " (Flip step: |M| = |N|, so every record has a counterpart)"
    out = []
    for r, s, f in zip(out_r.tolist(), out_s.tolist(), out_flip.tolist(), strict=True):
        if f:
            cand = v.candidates_of_s(s, limit=8)
            n_other = int(v.r_size[v.s_nb[v.s_ptr[v.s_class[s]]:v.s_ptr[v.s_class[s] + 1]]].sum()) - 1
            why = _why_i(S.keys[s], R.keys[r], cand[cand != r].tolist(), R, S, partner_r, flip_note=note,
                         n_others=n_other)
        else:
            cand = v.candidates(r, limit=8)
            why = _why_i(R.keys[r], S.keys[s], cand[cand != s].tolist(), S, R, partner_s,
                         n_others=int(deg_r0[v.r_class[r]]) - 1)
        out.append((r, s, why))
    return out, {"r_is_deidentified": v.r_is_de, "conflicts": [str(x) for x in R.keys[conflict_r]],
                 "alive_r": alive_r, "alive_s": alive_s, "view": v, "deg_r": deg_r, "R": R, "S": S,
                 "flip": flip}


def _why_i(key: str, match: str, others: list[int], other_side: TrailSide, this_side: TrailSide,
           partner: np.ndarray, flip_note: str = "", n_others: int | None = None) -> str:
    n_others = len(others) if n_others is None else n_others
    if n_others <= 0:
        return f"{key} is only compatible with {match}{flip_note}"
    taken = [f"{other_side.keys[o]} ↔ {this_side.keys[partner[o]]}" if partner[o] >= 0
             else f"{other_side.keys[o]} (no candidate left)" for o in others[:6]]
    more = f" and {n_others - len(taken)} more" if n_others > len(taken) else ""
    return (f"{key} was compatible with {match} and {n_others} other(s), which were re-identified first "
            f"({'; '.join(taken)}{more}), so {key} must be {match}{flip_note}")


def _i_pairs(graph: LinkGraph, triples: list[tuple[int, int, str]], r_is_de: bool) -> list[tuple[str, str, str]]:
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    for r, s, why in triples:
        i, j = (s, r) if r_is_de else (r, s)
        rows.append((str(M.keys[i]), str(N.keys[j]), why))
    return rows


def reidit_i(graph: LinkGraph, *, flip: bool | None = None) -> Reidentification:
    """REIDIT-I (Alg. 4/5, with Alg. 6 Flip when |M| = |N|) as degree-one unit propagation.

    The outer loop runs over the reserved side (trails with ``*``); candidates come from the complete
    side.  Same fixpoint as the thesis's repeat-until formulation (tested against it); O(|M| + |N| + E)
    instead of the thesis's O(|M|·|N|) with a dense D matrix.
    """
    triples, info = _run_reidit_i(graph, flip)
    res = _pairs_frame(_i_pairs(graph, triples, info["r_is_deidentified"]))
    return Reidentification("incomplete", res, {"reidentified": len(res), "flip": bool(info["flip"]),
                                                "conflicts": info["conflicts"],
                                                "model_ok": not info["conflicts"]})


def reidit_ik(graph: LinkGraph, k: int) -> Reidentification:
    """REIDIT-I-K (Alg. 15): REIDIT-I, then every remaining reserved trail with fewer than k candidates
    is k-re-identified to all of them (one row per candidate pair).  O(|M| + |N| + E).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    triples, info = _run_reidit_i(graph, flip=False)
    rows = _i_pairs(graph, triples, info["r_is_deidentified"])
    R, S, v = info["R"], info["S"], info["view"]
    alive_r, alive_s = info["alive_r"], info["alive_s"]
    n_live = info["deg_r"][v.r_class]          # alive candidates of every remaining record (twins alike)
    k_groups = 0
    for r in np.flatnonzero(alive_r & (n_live > 0) & (n_live < k)):
        nb = v.candidates(int(r))
        cand = nb[alive_s[nb]]
        if 0 < len(cand) < k:
            k_groups += 1
            names = ", ".join(str(S.keys[c]) for c in cand)
            why = f"{R.keys[r]} is compatible with only {len(cand)} < k={k} candidates ({names}); one is correct"
            for c in cand:
                i, j = (c, r) if info["r_is_deidentified"] else (r, c)
                rows.append((str(graph.trails.identified.keys[i]), str(graph.trails.deidentified.keys[j]), why))
    res = _pairs_frame(rows)
    return Reidentification("incomplete-k", res, {"k": k, "unique": len(triples), "k_reidentified": k_groups,
                                                  "reidentified_elements": len(triples) + k_groups,
                                                  "pairs": len(res), "model_ok": not info["conflicts"]})


def reidit_m(graph: LinkGraph) -> Reidentification:
    """REIDIT-M (Appendix A, Alg. 16): one-to-many data; a reserved-side trail with exactly one
    supertrail is re-identified to it, with no removal and no iteration (several identified elements may
    marry one de-identified element: a strongly stable polygamous marriage, Definition 26).
    Unreserved data loops over the identified side.  O(|M| + |N| + E).
    """
    v = _class_view(graph)
    r_is_de, R, S = v.r_is_de, v.R, v.S
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    # class degree = Σ sizes of the linked classes on the other side (twins share it)
    deg_rc = np.bincount(np.repeat(np.arange(len(v.r_size)), np.diff(v.r_ptr)), weights=v.s_size[v.r_nb],
                         minlength=len(v.r_size))
    deg_sc = np.bincount(np.repeat(np.arange(len(v.s_size)), np.diff(v.s_ptr)), weights=v.r_size[v.s_nb],
                         minlength=len(v.s_size))
    if graph.trails.reserved == "none":        # Alg. 16 loops over m ∈ M: each identified trail's matches
        for s_row in np.flatnonzero(deg_sc[v.s_class] == 1):
            r_row = int(v.candidates_of_s(int(s_row))[0])
            why = f"{M.keys[s_row]} has exactly one compatible trail: {N.keys[r_row]} (strongly stable marriage)"
            rows.append((str(M.keys[s_row]), str(N.keys[r_row]), why))
    else:
        for r in np.flatnonzero(deg_rc[v.r_class] == 1):
            s_row = int(v.candidates(int(r))[0])
            i, j = (s_row, r) if r_is_de else (r, s_row)
            why = f"{R.keys[r]} has exactly one compatible trail: {S.keys[s_row]} (strongly stable marriage)"
            rows.append((str(M.keys[i]), str(N.keys[j]), why))
    res = _pairs_frame(rows)
    return Reidentification("multiple", res, {"reidentified": len(res)})


# ------------------------------------------------------------------------------------------- true loves
def true_loves(graph_or_classes: LinkGraph | EdgeClasses, *, explain: bool | None = None) -> Reidentification:
    """Exact true loves (Definition 5): edges in every maximum matching, via one matching + one SCC pass.

    The provable optimum (Theorem 2): REIDIT-C and REIDIT-I results are subsets.  Each pair's reason names
    the tight set that forces it ("n1, n2 can only be Ali or Bob, so n3 must be Carol").  O(E·√V) plus,
    for explanations, one reverse search per forced pair (bounded by ``EXPLAIN_LIMIT`` unless ``explain``).
    """
    classes = graph_or_classes if isinstance(graph_or_classes, EdgeClasses) else classify_edges(graph_or_classes)
    graph = classes.graph
    M, N = graph.trails.identified, graph.trails.deidentified
    ti, tj = classes.true_love_pairs
    deg_i, deg_j = graph.degrees()
    r_is_de, R, S = _orientation(graph)
    t_r, t_s = (tj, ti) if r_is_de else (ti, tj)
    deg_r = deg_j if r_is_de else deg_i
    forced = deg_r[t_r] > 1
    do_explain = explain if explain is not None else int(forced.sum()) <= EXPLAIN_LIMIT
    explainer = _TightSets(classes) if (forced.any() and do_explain) else None
    caveat = "" if classes.hall_ok else " [the data breaks the model (Hall's condition fails): not certain]"
    rows = []
    for i, j, r, s, f in zip(ti, tj, t_r, t_s, forced, strict=True):
        if not f:
            why = f"{R.keys[r]} is only compatible with {S.keys[s]}"
        elif explainer is not None:
            why = explainer.reason(int(r), int(s))
        else:
            why = (f"{R.keys[r]} must be {S.keys[s]}: its other candidates are each needed by a tight set of "
                   f"records (run with --explain to list it)")
        rows.append((str(M.keys[i]), str(N.keys[j]), why + caveat))
    res = _pairs_frame(rows)
    summary = {"reidentified": len(res), "maximum_matching_size": classes.nu_real,
               "model_ok": classes.hall_ok, "unmatched": classes.unmatched[:50],
               "engine": classes.engine}
    return Reidentification("true-loves", res, summary)


class _TightSets:
    """Explains a forced true love (r, s): for n's other candidates, the reserved-side records that can
    reach them in the matching-oriented graph form a Hall-tight set U (|U| = |N(U)|) excluding r, so all
    of N(U) is used by U and r must take s (thesis §4.2.5 stable sets = Dulmage–Mendelsohn)."""

    def __init__(self, classes: EdgeClasses) -> None:
        graph = classes.graph
        self.adj = _adjacency(graph)
        self.r_is_de, self.R, self.S = self.adj.r_is_de, self.adj.R, self.adj.S
        if self.r_is_de:
            self.mate_r, self.mate_s = classes.mate_deidentified, classes.mate_identified
        else:
            self.mate_r, self.mate_s = classes.mate_identified, classes.mate_deidentified

    def reason(self, r: int, s: int, show: int = 6) -> str:
        others = [int(x) for x in self.adj.of_r(r) if x != s]
        # reverse search: S vertex m' is reached from its mate r' = mate_s[m'] (arc r'→m' is the matched edge);
        # r' is reached from every S vertex linked to it by an unmatched edge (arc m→r').
        seen_r: set[int] = set()
        seen_s: set[int] = set(others)
        stack = list(others)
        while stack:
            m = stack.pop()
            rp = int(self.mate_s[m])
            if rp < 0 or rp in seen_r:
                continue
            seen_r.add(rp)
            for m2 in self.adj.of_r(rp):
                m2 = int(m2)
                if m2 != self.mate_r[rp] and m2 not in seen_s:
                    seen_s.add(m2)
                    stack.append(m2)
        u = sorted(seen_r)
        nu = sorted(seen_s)
        names_u = ", ".join(str(self.R.keys[x]) for x in u[:show])
        names_u += f" and {len(u) - show} more" if len(u) > show else ""
        names_n = " or ".join(str(self.S.keys[x]) for x in nu[:show])
        names_n += f" or {len(nu) - show} more" if len(nu) > show else ""
        count = f" ({len(u)} records, {len(nu)} candidates)" if len(u) > 1 else ""
        return f"{names_u} can only be {names_n}{count}, so {self.R.keys[r]} must be {self.S.keys[s]}"


# ---------------------------------------------------------------------------------------------- facade
def reidentify(data: Release | Trails | LinkGraph, method: str, *, k: int | None = None,
               reserved: ReservedChoice = "auto", truth: pd.DataFrame | None = None,
               explain: bool | None = None) -> Reidentification:
    """Run one method on a release (or prebuilt trails/graph) and evaluate against ``truth`` if given."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}")
    release_truth = data.truth if isinstance(data, Release) else None
    trails = data if isinstance(data, Trails) else (data.trails if isinstance(data, LinkGraph) else None)
    if trails is None:
        trails = build_trails(data, reserved)
    if method == "complete":
        result = reidit_c(trails)
    else:
        graph = data if isinstance(data, LinkGraph) else build_linkgraph(trails)
        if method == "incomplete":
            result = reidit_i(graph)
        elif method == "incomplete-k":
            if k is None:
                raise ValueError("incomplete-k needs k")
            result = reidit_ik(graph, k)
        elif method == "multiple":
            result = reidit_m(graph)
        else:
            result = true_loves(graph, explain=explain)
    truth = truth if truth is not None else release_truth
    if truth is not None:
        result.summary.update(evaluate(result, truth))
    result.summary.setdefault("reserved", trails.reserved)
    return result


def evaluate(result: Reidentification, truth: pd.DataFrame) -> dict:
    """Correct / wrong / recall of the re-identified pairs against ground truth.

    For ``incomplete-k`` a k-group counts as correct when the true pair is among its candidates.
    Recall is the share of truth pairs whose de-identified element was correctly re-identified.
    """
    t = set(zip(truth["identified"].astype(str), truth["deidentified"].astype(str), strict=True))
    pairs = result.pairs
    if result.method == "incomplete-k":
        groups = pairs.groupby("deidentified")["identified"].apply(set)
        truth_by_de = dict(zip(truth["deidentified"].astype(str), truth["identified"].astype(str), strict=False))
        correct = sum(1 for de, ids in groups.items() if truth_by_de.get(de) in ids)
        wrong = len(groups) - correct
        unique = groups[groups.map(len) == 1]
        found = sum(1 for de, ids in unique.items() if truth_by_de.get(de) in ids)
    else:
        got = set(zip(pairs["identified"], pairs["deidentified"], strict=True))
        correct = len(got & t)
        wrong = len(got - t)
        found = correct
    return {"correct": int(correct), "wrong": int(wrong), "truth_pairs": len(t),
            "recall": (found / len(t)) if t else 0.0}
