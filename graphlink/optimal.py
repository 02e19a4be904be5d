"""Exact optimum of the deduplicated unlinking family (beyond the thesis, §7.4 "greedy, not optimal").

The thesis's Greedy-Dedup and Force-Dedup search a *solution family*: every disclosed de-identified
element is disclosed by exactly one location (Lemma 8), each disclosing location c owns a private set of
protectors P_c ⊆ γ_c, disjoint across locations (Corollary 4), with |P_c| ≥ max(k, |ω'_c|) (Lemmas 9, 10),
plus the null-trail condition that Final-Clean enforces (see :func:`graphlink.unlink.final_clean`: an
identity with 1 ≤ r(m) < k − z is a violation).  Every member of the family is k-unlinkable.

:func:`optimal_dedup` finds the *best* member exactly with an integer program (``scipy.optimize.milp``,
HiGHS): binaries x[n,c] (n disclosed at c), y[m,c] (m protects c), u[c] (c discloses), b[m] (m links to a
disclosed record), continuous aggregates X_c = Σ_n x[n,c], Y_c = Σ_m y[m,c], z = |M| − Σ_c X_c::

    Σ_c x[n,c] ≤ 1        Σ_c y[m,c] ≤ 1        X_c ≤ Y_c        Y_c ≥ k·u_c
    u_c ≤ X_c ≤ |ω_c|·u_c                          (u_c = 1 ⇔ c discloses something)
    r(m) = Σ_{c∋m} X_c ≤ R_m·b_m,   r(m) + z ≥ k·b_m     (null-trail condition, optional)

The null-trail condition is *implied* by the others, so it is off by default (``null_condition=False``):
z = |M − ∪P| + Σ_c (|P_c| − X_c) because protector sets are disjoint; an identity m ∈ P_c has
r(m) ≥ X_c, so r(m) + z ≥ |P_c| ≥ k; an unallocated identity at a disclosing location c has r(m) ≥ X_c
and z ≥ 1 + |P_c| − X_c, so r(m) + z > k.  (The property tests check both formulations agree.)

Objectives: ``records`` maximises Σ X_c (eq. 7.1); ``locations`` maximises Σ u_c, then records
(eq. 7.2 with 7.1 as tie-break, the thesis's location-participation utility).  NP-hard in general
(k-anonymity-like); fine for releases of a few hundred rows.

:func:`assign_given_locations` and :func:`feasible_locations` are the polynomial pieces used by the
Flow-Dedup heuristic: for a fixed set of disclosing locations the problem (without the null-trail
condition) is a network flow with lower bounds, so its LP is integral.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse.csgraph import maximum_flow

from graphlink.unlink import Instance, utility


@dataclass
class OptimalResult:
    """Best family member: ``disclosed``/``protectors`` per location, its utility, solver status."""

    objective: str
    k: int
    disclosed: dict[Hashable, list[Hashable]]
    protectors: dict[Hashable, list[Hashable]]
    records: int
    locations_disclosing: int
    status: str
    optimal: bool
    seconds: float
    mip_gap: float | None


def _pairs(inst: Instance, locs: Iterable[int] | None = None) -> tuple[np.ndarray, ...]:
    locs = np.arange(inst.n_locations) if locs is None else np.asarray(list(locs), np.int64)
    xl = np.repeat(locs, np.diff(inst.w_ptr)[locs]).astype(np.int64)
    xn = np.concatenate([inst.omega(c) for c in locs]) if len(locs) else np.zeros(0, np.int64)
    yl = np.repeat(locs, np.diff(inst.g_ptr)[locs]).astype(np.int64)
    ym = np.concatenate([inst.gamma(c) for c in locs]) if len(locs) else np.zeros(0, np.int64)
    return xl, xn.astype(np.int64), yl, ym.astype(np.int64)


def _rows(row: np.ndarray, col: np.ndarray, val: np.ndarray | float, n_rows: int, n_cols: int) -> sp.csr_matrix:
    val = np.broadcast_to(np.asarray(val, float), row.shape)
    return sp.csr_matrix((val, (row, col)), shape=(n_rows, n_cols))


def optimal_dedup(inst: Instance, k: int, objective: str = "records", *, time_limit: float = 60.0,
                  null_condition: bool = False) -> OptimalResult:
    """Exact best deduplicated k-unlinkable suppression (see module docstring) with HiGHS.

    Variables: Σ|ω_c| + Σ|γ_c| binaries plus |C| + |M| more; returns ``optimal=False`` if the time limit
    stopped the search (the incumbent is still in the family).
    """
    if objective not in ("records", "locations"):
        raise ValueError("objective must be 'records' or 'locations'")
    t0 = time.perf_counter()
    n_loc, n_id, n_de = inst.n_locations, inst.n_identified, inst.n_deidentified
    xl, xn, yl, ym = _pairs(inst)
    nx, ny = len(xl), len(yl)
    # variable layout: x | y | u | X | Y | b | z
    ox, oy, ou = 0, nx, nx + ny
    oX, oY = ou + n_loc, ou + 2 * n_loc
    ob = oY + n_loc
    oz = ob + n_id
    nv = oz + 1
    ar_x, ar_y = np.arange(nx), np.arange(ny)
    blocks, lo, hi = [], [], []

    def add(m: sp.csr_matrix, lb: float | np.ndarray, ub: float | np.ndarray) -> None:
        blocks.append(m)
        lo.append(np.broadcast_to(np.asarray(lb, float), (m.shape[0],)))
        hi.append(np.broadcast_to(np.asarray(ub, float), (m.shape[0],)))

    add(_rows(xn, ox + ar_x, 1.0, n_de, nv), -np.inf, 1.0)                           # dedup
    add(_rows(ym, oy + ar_y, 1.0, n_id, nv), -np.inf, 1.0)                           # disjoint protectors
    cl = np.arange(n_loc)
    # X_c = Σ x ; Y_c = Σ y
    add(_rows(np.concatenate([xl, cl]), np.concatenate([ox + ar_x, oX + cl]),
              np.concatenate([np.ones(nx), -np.ones(n_loc)]), n_loc, nv), 0.0, 0.0)
    add(_rows(np.concatenate([yl, cl]), np.concatenate([oy + ar_y, oY + cl]),
              np.concatenate([np.ones(ny), -np.ones(n_loc)]), n_loc, nv), 0.0, 0.0)
    add(_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, oY + cl]),
              np.concatenate([np.ones(n_loc), -np.ones(n_loc)]), n_loc, nv), -np.inf, 0.0)   # X ≤ Y
    add(_rows(np.concatenate([cl, cl]), np.concatenate([oY + cl, ou + cl]),
              np.concatenate([np.ones(n_loc), -k * np.ones(n_loc)]), n_loc, nv), 0.0, np.inf)  # Y ≥ k u
    wsz = np.diff(inst.w_ptr).astype(float)
    add(_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, ou + cl]),
              np.concatenate([np.ones(n_loc), -wsz]), n_loc, nv), -np.inf, 0.0)                # X ≤ |ω|u
    add(_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, ou + cl]),
              np.concatenate([np.ones(n_loc), -np.ones(n_loc)]), n_loc, nv), 0.0, np.inf)      # X ≥ u
    # z = n_id − Σ X
    add(_rows(np.zeros(n_loc + 1, np.int64), np.concatenate([oX + cl, [oz]]), np.ones(n_loc + 1), 1, nv),
        float(n_id), float(n_id))
    if null_condition and n_id:
        g_loc = np.repeat(cl, np.diff(inst.g_ptr))
        rm = inst.g_idx
        R = np.bincount(rm, weights=wsz[g_loc], minlength=n_id)
        im = np.arange(n_id)
        # r(m) − R_m b_m ≤ 0
        add(_rows(np.concatenate([rm, im]), np.concatenate([oX + g_loc, ob + im]),
                  np.concatenate([np.ones(len(rm)), -R]), n_id, nv), -np.inf, 0.0)
        # r(m) + z − k b_m ≥ 0
        add(_rows(np.concatenate([rm, im, im]), np.concatenate([oX + g_loc, np.full(n_id, oz), ob + im]),
                  np.concatenate([np.ones(len(rm)), np.ones(n_id), -k * np.ones(n_id)]), n_id, nv),
            0.0, np.inf)
    A = sp.vstack(blocks).tocsr()
    cons = LinearConstraint(A, np.concatenate(lo), np.concatenate(hi))
    c = np.zeros(nv)
    c[oX:oX + n_loc] = -1.0
    if objective == "locations":
        c[ou:ou + n_loc] = -(n_de + 1.0)
    integrality = np.zeros(nv)
    integrality[:ou + n_loc] = 1
    integrality[ob:ob + n_id] = 1
    ub = np.full(nv, np.inf)
    ub[:ou + n_loc] = 1
    ub[ob:ob + n_id] = 1
    res = milp(c, constraints=cons, integrality=integrality, bounds=Bounds(np.zeros(nv), ub),
               options={"time_limit": time_limit, "disp": False})
    seconds = time.perf_counter() - t0
    if res.x is None:
        raise RuntimeError(f"HiGHS found no solution: {res.message}")
    x = np.round(res.x).astype(int)
    xs, ys = x[ox:ox + nx] > 0, x[oy:oy + ny] > 0
    locs = inst.locations
    disclosed = {locs[c]: inst.de_keys[xn[xs & (xl == c)]].tolist() for c in range(n_loc)}
    protectors = {locs[c]: inst.id_keys[ym[ys & (yl == c)]].tolist() for c in range(n_loc)}
    records = int(xs.sum())
    return OptimalResult(objective, k, disclosed, protectors, records,
                         sum(1 for v in disclosed.values() if v), str(res.message), bool(res.status == 0),
                         seconds, getattr(res, "mip_gap", None))


def _bmatch_flow(inst: Instance, locs: list[int], demand: int, side: str) -> int:
    """Max flow s→c (cap demand) → element (cap 1) → t over the chosen locations."""
    if not locs:
        return 0
    ptr, idx = (inst.g_ptr, inst.g_idx) if side == "identified" else (inst.w_ptr, inst.w_idx)
    n_el = inst.n_identified if side == "identified" else inst.n_deidentified
    L = len(locs)
    s, t = 0, 1 + L + n_el
    lens = np.array([ptr[c + 1] - ptr[c] for c in locs], np.int64)
    els = np.concatenate([idx[ptr[c]:ptr[c + 1]] for c in locs])
    src = np.concatenate([np.zeros(L, np.int64), np.repeat(1 + np.arange(L), lens), 1 + L + np.arange(n_el)])
    dst = np.concatenate([1 + np.arange(L), 1 + L + els, np.full(n_el, t)])
    cap = np.concatenate([np.full(L, demand), np.ones(len(els)), np.ones(n_el)]).astype(np.int32)
    g = sp.csr_matrix((cap, (src, dst)), shape=(t + 1, t + 1))
    g.sum_duplicates()
    return int(maximum_flow(g, s, t).flow_value)


def feasible_locations(inst: Instance, locs: list[int], k: int) -> bool:
    """Can every location in ``locs`` get k disjoint protectors and one protectee of its own?

    Two bipartite b-matchings by max flow (they are independent because one protectee needs one
    protector and k ≥ 1 are reserved anyway).  O(E·√V) each.
    """
    return (_bmatch_flow(inst, locs, k, "identified") == k * len(locs)
            and _bmatch_flow(inst, locs, 1, "deidentified") == len(locs))


def assign_given_locations(inst: Instance, locs: list[int], k: int,
                           time_limit: float = 120.0) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Max deduplicated records when exactly ``locs`` disclose (no null-trail condition).

    LP of a network flow with lower bounds (integral); solved by HiGHS.  Returns per-location code arrays
    (disclosed de-identified codes, protector identified codes).
    """
    if not locs:
        return {}, {}
    xl, xn, yl, ym = _pairs(inst, locs)
    nx, ny = len(xl), len(yl)
    nv = nx + ny
    pos = {c: i for i, c in enumerate(locs)}
    li_x = np.array([pos[c] for c in xl], np.int64)
    li_y = np.array([pos[c] for c in yl], np.int64)
    L = len(locs)
    ar_x, ar_y = np.arange(nx), nx + np.arange(ny)
    A = sp.vstack([
        _rows(xn, ar_x, 1.0, inst.n_deidentified, nv),
        _rows(ym, ar_y, 1.0, inst.n_identified, nv),
        _rows(np.concatenate([li_x, li_y]), np.concatenate([ar_x, ar_y]),
              np.concatenate([np.ones(nx), -np.ones(ny)]), L, nv),          # X_c − Y_c ≤ 0
        _rows(li_y, ar_y, 1.0, L, nv),                                        # Y_c ≥ k
        _rows(li_x, ar_x, 1.0, L, nv),                                        # X_c ≥ 1
    ]).tocsr()
    lo = np.concatenate([np.full(inst.n_deidentified + inst.n_identified, -np.inf), np.full(L, -np.inf),
                         np.full(L, float(k)), np.ones(L)])
    hi = np.concatenate([np.ones(inst.n_deidentified + inst.n_identified), np.zeros(L),
                         np.full(2 * L, np.inf)])
    c = np.concatenate([-np.ones(nx), np.zeros(ny)])
    # The polytope is the projection of a network-flow polytope, so a vertex (simplex / IPM + crossover)
    # is integral; fall back to branch and bound only if the solver returns a fractional point.
    fin_hi, fin_lo = np.isfinite(hi), np.isfinite(lo)
    A_ub = sp.vstack([A[fin_hi], -A[fin_lo]]).tocsr()
    b_ub = np.concatenate([hi[fin_hi], -lo[fin_lo]])
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=(0, 1), method="highs-ipm",
                  options={"time_limit": time_limit})
    if res.x is None or np.abs(res.x - np.round(res.x)).max() > 1e-6:
        res = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.ones(nv),
                   bounds=Bounds(np.zeros(nv), np.ones(nv)), options={"time_limit": time_limit, "disp": False})
    if res.x is None:
        raise RuntimeError(f"HiGHS found no assignment for the chosen locations: {res.message}")
    x = np.round(res.x).astype(int) > 0
    xs, ys = x[:nx], x[nx:]
    return ({c: xn[xs & (xl == c)] for c in locs}, {c: ym[ys & (yl == c)] for c in locs})


def heuristic_gap(inst: Instance, k: int, methods: Iterable[str] = ("greedy-dedup", "force-dedup", "flow-dedup"),
                  seeds: Iterable[int] = range(5), time_limit: float = 60.0) -> list[dict[str, Any]]:
    """Heuristics vs the exact family optimum on one instance: one row per (method, seed).

    Columns: method, seed, k, records, locations, opt_records, opt_locations (the locations optimum's
    count), records_gap, locations_gap, optimal (solver proved optimality).
    """
    from graphlink.unlink import allocate

    best_r = optimal_dedup(inst, k, "records", time_limit=time_limit)
    best_l = optimal_dedup(inst, k, "locations", time_limit=time_limit)
    omega = {inst.locations[c]: inst.de_keys[inst.omega(c)].tolist() for c in range(inst.n_locations)}
    rows = []
    for method in methods:
        for seed in seeds:
            alloc = allocate(inst, k, method, seed)
            u = utility(omega, alloc.disclosed)
            rows.append({"method": method, "seed": seed, "k": k, "records": u["disclosed"],
                         "locations": u["locations_disclosing"], "opt_records": best_r.records,
                         "opt_locations": best_l.locations_disclosing,
                         "records_gap": best_r.records - u["disclosed"],
                         "locations_gap": best_l.locations_disclosing - u["locations_disclosing"],
                         "optimal": best_r.optimal and best_l.optimal})
    return rows
