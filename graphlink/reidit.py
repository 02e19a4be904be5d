"""Trail re-identification: REIDIT-C, -I, -I-K, -M and exact true loves, each pair with its reason.

Thesis references: REIDIT-C Algorithms 2/3 (§4.1), REIDIT-I Algorithms 4/5/6 (§4.2, Flip §4.2.3),
REIDIT-I-K Algorithm 15 (§9.1), REIDIT-M Algorithm 16 (Appendix A), true loves Definition 5 / Theorem 2.
Under the model's assumptions (one-to-one, reserved direction respected; Hall's condition holds) every
REIDIT-C and REIDIT-I pair is a true love, and true loves are exactly the certain re-identifications.  When
Hall's condition fails the data breaks the model: results carry ``model_ok = False`` and no certainty is
claimed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

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


def _adjacency(graph: LinkGraph) -> tuple[list[np.ndarray], list[np.ndarray], bool, TrailSide, TrailSide]:
    r_is_de, R, S = _orientation(graph)
    ei, ej = graph.ei, graph.ej
    rr, ss = (ej, ei) if r_is_de else (ei, ej)
    order_r = np.argsort(rr, kind="stable")
    ptr_r = np.searchsorted(rr[order_r], np.arange(len(R) + 1))
    nb_r = ss[order_r]
    order_s = np.argsort(ss, kind="stable")
    ptr_s = np.searchsorted(ss[order_s], np.arange(len(S) + 1))
    nb_s = rr[order_s]
    adj_r = [nb_r[ptr_r[i]:ptr_r[i + 1]] for i in range(len(R))]
    adj_s = [nb_s[ptr_s[i]:ptr_s[i + 1]] for i in range(len(S))]
    return adj_r, adj_s, r_is_de, R, S


def _run_reidit_i(graph: LinkGraph, flip: bool | None = None) -> tuple[list[tuple[int, int, str]], dict]:
    """Unit propagation (REIDIT-I as a queue).  Returns (R row, S row, reason) triples and details.

    Each edge is decremented at most once, so O(|M| + |N| + E).  ``flip`` (Alg. 6) defaults to |M| = |N|.
    """
    adj_r, adj_s, r_is_de, R, S = _adjacency(graph)
    if flip is None:
        flip = len(R) == len(S)
    deg_r = np.array([len(a) for a in adj_r], np.int64)
    deg_s = np.array([len(a) for a in adj_s], np.int64)
    alive_r = np.ones(len(R), bool)
    alive_s = np.ones(len(S), bool)
    partner_of_s = np.full(len(S), -1, np.int64)
    partner_of_r = np.full(len(R), -1, np.int64)
    q: deque[tuple[int, int]] = deque((0, int(i)) for i in np.flatnonzero(deg_r == 1))
    if flip:
        q.extend((1, int(i)) for i in np.flatnonzero(deg_s == 1))
    out: list[tuple[int, int, str]] = []
    conflicts: list[str] = []

    def remove_s(s: int) -> None:
        for r2 in adj_s[s]:
            if alive_r[r2]:
                deg_r[r2] -= 1
                if deg_r[r2] == 1:
                    q.append((0, int(r2)))
                elif deg_r[r2] == 0:
                    conflicts.append(str(R.keys[r2]))
                    alive_r[r2] = False

    def remove_r(r: int) -> None:
        for s2 in adj_r[r]:
            if alive_s[s2]:
                deg_s[s2] -= 1
                if flip and deg_s[s2] == 1:
                    q.append((1, int(s2)))

    while q:
        which, x = q.popleft()
        if which == 0:
            if not alive_r[x] or deg_r[x] != 1:
                continue
            cand = adj_r[x]
            s = int(cand[alive_s[cand]][0])
            why = _why_i(R.keys[x], S.keys[s], [c for c in cand if c != s], S, R, partner_of_s)
            out.append((x, s, why))
            partner_of_r[x], partner_of_s[s] = s, x
            alive_r[x] = False
            alive_s[s] = False
            remove_r(x)
            remove_s(s)
        else:
            if not alive_s[x] or deg_s[x] != 1:
                continue
            cand = adj_s[x]
            r = int(cand[alive_r[cand]][0])
            why = _why_i(S.keys[x], R.keys[r], [c for c in cand if c != r], R, S, partner_of_r,
                         flip_note=" (Flip step: |M| = |N|, so every record has a counterpart)")
            out.append((r, x, why))
            partner_of_r[r], partner_of_s[x] = x, r
            alive_s[x] = False
            alive_r[r] = False
            remove_s(x)
            remove_r(r)
    return out, {"r_is_deidentified": r_is_de, "conflicts": conflicts, "alive_r": alive_r, "alive_s": alive_s,
                 "adj_r": adj_r, "R": R, "S": S, "flip": flip}


def _why_i(key: str, match: str, others: list[int], other_side: TrailSide, this_side: TrailSide,
           partner: np.ndarray, flip_note: str = "") -> str:
    if not others:
        return f"{key} is only compatible with {match}{flip_note}"
    taken = [f"{other_side.keys[o]} ↔ {this_side.keys[partner[o]]}" if partner[o] >= 0
             else f"{other_side.keys[o]} (no candidate left)" for o in others[:6]]
    more = f" and {len(others) - 6} more" if len(others) > 6 else ""
    return (f"{key} was compatible with {match} and {len(others)} other(s), which were re-identified first "
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
    R, S, adj_r = info["R"], info["S"], info["adj_r"]
    alive_r, alive_s = info["alive_r"], info["alive_s"]
    k_groups = 0
    for r in np.flatnonzero(alive_r):
        cand = adj_r[r][alive_s[adj_r[r]]]
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
    adj_r, _, r_is_de, R, S = _adjacency(graph)
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    for r, cand in enumerate(adj_r):
        if len(cand) == 1:
            s = int(cand[0])
            i, j = (s, r) if r_is_de else (r, s)
            rows.append((str(M.keys[i]), str(N.keys[j]),
                         f"{R.keys[r]} has exactly one compatible trail: {S.keys[s]} (strongly stable marriage)"))
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
        self.adj_r, self.adj_s, self.r_is_de, self.R, self.S = _adjacency(graph)
        if self.r_is_de:
            self.mate_r, self.mate_s = classes.mate_deidentified, classes.mate_identified
        else:
            self.mate_r, self.mate_s = classes.mate_identified, classes.mate_deidentified

    def reason(self, r: int, s: int, show: int = 6) -> str:
        others = [int(x) for x in self.adj_r[r] if x != s]
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
            for m2 in self.adj_r[rp]:
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
