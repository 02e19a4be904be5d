"""Exact optimum of the deduplicated unlinking family (beyond the thesis, §7.4 "greedy, not optimal").

The thesis's Greedy-Dedup and Force-Dedup search a *solution family*: every disclosed de-identified
element is disclosed by exactly one location (Lemma 8), each disclosing location c owns a private set of
protectors P_c ⊆ γ_c, disjoint across locations (Corollary 4), with |P_c| ≥ max(k, |ω'_c|) (Lemmas 9, 10),
plus the null-trail condition that Final-Clean enforces (see :func:`graphlink.protect.final_clean`: an
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

:func:`~graphlink.protect.flow.assign_given_locations` and :func:`~graphlink.protect.flow.feasible_locations`
(in :mod:`graphlink.protect.flow`, re-exported here) are the polynomial pieces used by the Flow-Dedup heuristic:
for a fixed set of disclosing locations the problem (without the null-trail condition) is a network flow
with lower bounds, so its LP is integral.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from graphlink.protect.allocate import allocate
from graphlink.protect.flow import assign_given_locations, feasible_locations, location_pairs, sparse_rows
from graphlink.protect.instance import Instance
from graphlink.protect.utility import utility

# the Flow-Dedup pieces moved to graphlink.protect.flow (the dependency now goes optimal -> unlink only)
__all__ = ["OptimalResult", "assign_given_locations", "feasible_locations", "heuristic_gap", "optimal_dedup"]


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
    xl, xn, yl, ym = location_pairs(inst)
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

    add(sparse_rows(xn, ox + ar_x, 1.0, n_de, nv), -np.inf, 1.0)  # dedup
    add(sparse_rows(ym, oy + ar_y, 1.0, n_id, nv), -np.inf, 1.0)  # disjoint protectors
    cl = np.arange(n_loc)
    # X_c = Σ x ; Y_c = Σ y
    add(sparse_rows(np.concatenate([xl, cl]), np.concatenate([ox + ar_x, oX + cl]),
                    np.concatenate([np.ones(nx), -np.ones(n_loc)]), n_loc, nv), 0.0, 0.0)
    add(sparse_rows(np.concatenate([yl, cl]), np.concatenate([oy + ar_y, oY + cl]),
                    np.concatenate([np.ones(ny), -np.ones(n_loc)]), n_loc, nv), 0.0, 0.0)
    add(sparse_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, oY + cl]),
                    np.concatenate([np.ones(n_loc), -np.ones(n_loc)]), n_loc, nv), -np.inf, 0.0)  # X ≤ Y
    add(sparse_rows(np.concatenate([cl, cl]), np.concatenate([oY + cl, ou + cl]),
                    np.concatenate([np.ones(n_loc), -k * np.ones(n_loc)]), n_loc, nv), 0.0, np.inf)  # Y ≥ k u
    wsz = np.diff(inst.w_ptr).astype(float)
    add(sparse_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, ou + cl]),
                    np.concatenate([np.ones(n_loc), -wsz]), n_loc, nv), -np.inf, 0.0)  # X ≤ |ω|u
    add(sparse_rows(np.concatenate([cl, cl]), np.concatenate([oX + cl, ou + cl]),
                    np.concatenate([np.ones(n_loc), -np.ones(n_loc)]), n_loc, nv), 0.0, np.inf)  # X ≥ u
    # z = n_id − Σ X
    add(sparse_rows(np.zeros(n_loc + 1, np.int64), np.concatenate([oX + cl, [oz]]), np.ones(n_loc + 1), 1, nv),
        float(n_id), float(n_id))
    if null_condition and n_id:
        g_loc = np.repeat(cl, np.diff(inst.g_ptr))
        rm = inst.g_idx
        R = np.bincount(rm, weights=wsz[g_loc], minlength=n_id)
        im = np.arange(n_id)
        # r(m) − R_m b_m ≤ 0
        add(sparse_rows(np.concatenate([rm, im]), np.concatenate([oX + g_loc, ob + im]),
                        np.concatenate([np.ones(len(rm)), -R]), n_id, nv), -np.inf, 0.0)
        # r(m) + z − k b_m ≥ 0
        add(sparse_rows(np.concatenate([rm, im, im]), np.concatenate([oX + g_loc, np.full(n_id, oz), ob + im]),
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


def heuristic_gap(inst: Instance, k: int, methods: Iterable[str] = ("greedy-dedup", "force-dedup", "flow-dedup"),
                  seeds: Iterable[int] = range(5), time_limit: float = 60.0) -> list[dict[str, Any]]:
    """Heuristics vs the exact family optimum on one instance: one row per (method, seed).

    Columns: method, seed, k, records, locations, opt_records, opt_locations (the locations optimum's
    count), records_gap, locations_gap, optimal (solver proved optimality).
    """
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
