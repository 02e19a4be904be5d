"""The polynomial pieces of Flow-Dedup (ours, after thesis §7.4 "greedy, not optimal").

For a fixed set of disclosing locations, the deduplicated unlinking family (Lemmas 8-10: one location per
disclosed element, disjoint protector sets, |P_c| ≥ max(k, |ω'_c|)) without the null-trail condition is a
network flow with lower bounds, so its LP is integral: :func:`assign_given_locations` solves it with HiGHS,
:func:`feasible_locations` checks a candidate set by two bipartite b-matchings (the capacitated
Hopcroft–Karp of :mod:`graphlink.kernels.flow`).
:func:`location_pairs` and :func:`sparse_rows` build the (location, element) variables and constraint rows
shared with the exact family optimum, :func:`graphlink.protect.optimal.optimal_dedup`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from graphlink.kernels.flow import class_max_flow
from graphlink.protect.instance import Instance


def location_pairs(inst: Instance, locs: Iterable[int] | None = None) -> tuple[np.ndarray, ...]:
    """The (location, element) pairs of ``locs`` (default: all): (x locations, x de-identified codes,
    y locations, y identified codes), one per candidate disclosure x[n,c] and protector y[m,c].  O(Σ sizes)."""
    locs = np.arange(inst.n_locations) if locs is None else np.asarray(list(locs), np.int64)
    xl = np.repeat(locs, np.diff(inst.w_ptr)[locs]).astype(np.int64)
    xn = np.concatenate([inst.omega(c) for c in locs]) if len(locs) else np.zeros(0, np.int64)
    yl = np.repeat(locs, np.diff(inst.g_ptr)[locs]).astype(np.int64)
    ym = np.concatenate([inst.gamma(c) for c in locs]) if len(locs) else np.zeros(0, np.int64)
    return xl, xn.astype(np.int64), yl, ym.astype(np.int64)


def sparse_rows(row: np.ndarray, col: np.ndarray, val: np.ndarray | float, n_rows: int,
                n_cols: int) -> sp.csr_matrix:
    """An (n_rows × n_cols) CSR constraint block with ``val`` at (row[i], col[i]) (duplicates summed)."""
    val = np.broadcast_to(np.asarray(val, float), row.shape)
    return sp.csr_matrix((val, (row, col)), shape=(n_rows, n_cols))


def _bmatch_flow(inst: Instance, locs: list[int], demand: int, side: str) -> int:
    """Max flow s→c (cap demand) → element (cap 1) → t over the chosen locations: the capacitated Hopcroft–Karp
    (:func:`graphlink.kernels.flow.class_max_flow`) with supply ``demand`` per location and room 1 per element."""
    if not locs:
        return 0
    ptr, idx = (inst.g_ptr, inst.g_idx) if side == "identified" else (inst.w_ptr, inst.w_idx)
    n_el = inst.n_identified if side == "identified" else inst.n_deidentified
    lens = np.array([ptr[c + 1] - ptr[c] for c in locs], np.int64)
    els = np.concatenate([idx[ptr[c]:ptr[c + 1]] for c in locs]).astype(np.int64)
    loc_ptr = np.zeros(len(locs) + 1, np.int64)
    np.cumsum(lens, out=loc_ptr[1:])
    _, _, _, value, _ = class_max_flow(np.full(len(locs), demand, np.int64), np.ones(n_el, np.int64), loc_ptr, els)
    return int(value)


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
    xl, xn, yl, ym = location_pairs(inst, locs)
    nx, ny = len(xl), len(yl)
    nv = nx + ny
    pos = {c: i for i, c in enumerate(locs)}
    li_x = np.array([pos[c] for c in xl], np.int64)
    li_y = np.array([pos[c] for c in yl], np.int64)
    L = len(locs)
    ar_x, ar_y = np.arange(nx), nx + np.arange(ny)
    A = sp.vstack([
        sparse_rows(xn, ar_x, 1.0, inst.n_deidentified, nv),
        sparse_rows(ym, ar_y, 1.0, inst.n_identified, nv),
        sparse_rows(np.concatenate([li_x, li_y]), np.concatenate([ar_x, ar_y]),
                    np.concatenate([np.ones(nx), -np.ones(ny)]), L, nv),       # X_c − Y_c ≤ 0
        sparse_rows(li_y, ar_y, 1.0, L, nv),                                       # Y_c ≥ k
        sparse_rows(li_x, ar_x, 1.0, L, nv),                                       # X_c ≥ 1
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
