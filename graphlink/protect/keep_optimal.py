"""Keep-most's exact optimum on small releases: an integer program (HiGHS through ``scipy.optimize.milp``).

The program is the *edge-degree relaxation* of k-unlinkability by withholding single disclosures
(docs/unlink.md#keep-most): it asks every record for k candidate people and every person for k candidates
(null trails counted) unless nobody disclosed can be them, instead of k partners in the union of all maximum
matchings.  The union is a subset of the link edges, so every certified suppression is feasible here and the
optimum is a **lower bound** on the least any certified suppression withholds.  When the optimal suppression
also passes the exact audit it is therefore the exact optimum; :func:`keep_exact` checks that.

Variables, for the withheld side's records r (disclosed at D(r)) and the other side's people p (seen at A(p)):

* w[r,c] ∈ {0,1}: the disclosure (c, r) is withheld (the objective is Σ w);
* f[r] ∈ {0,1}: r is withheld everywhere (a null trail: anyone can be it), f[r] ≤ w[r,c];
* x[r,p] ∈ [0,1] for p seen at some c ∈ D(r): p is a candidate of r, x[r,p] ≤ w[r,c] for c ∈ D(r) \\ A(p);
* h[p] ∈ {0,1}: p must have k candidates; h[p] ≥ x[r,p] − f[r] (p can be some disclosed record).

Constraints: Σ_p x[r,p] + k·f[r] ≥ k − (people short of records) (a null trail is exempt), and
Σ_r (x[r,p] − f[r]) + Σ_r f[r] + (records short of people) ≥ k·h[p].  Size: one x per (record, person)
sharing a location, so this is for small releases (the tests, the benchmark's small grid).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from graphlink.protect.instance import Instance

#: the largest number of (record, person) pairs the program is built for
MILP_PAIR_LIMIT = 200_000


@dataclass(frozen=True)
class KeepOptimum:
    """The relaxation's solution.

    Attributes
    ----------
    kept : numpy.ndarray of bool or None
        Its kept flags over ``inst.wl_idx`` (None when HiGHS found no solution in time).
    bound : int
        A lower bound on the disclosures any certified suppression withholds (the optimum when ``proved``).
    proved : bool
        HiGHS proved the relaxation optimal.
    seconds : float
        Solver time.
    """

    kept: np.ndarray | None
    bound: int
    proved: bool
    seconds: float


def n_pairs(inst: Instance) -> int:
    """An upper bound on the (record, person) pairs sharing a location, the program's size: Σ_c |ω_c|·|γ_c|.
    O(|C|)."""
    return int(np.dot(np.diff(inst.w_ptr).astype(np.int64), np.diff(inst.g_ptr).astype(np.int64)))


def keep_milp(inst: Instance, k: int, must_keep: np.ndarray | None = None,
              time_limit: float = 60.0) -> KeepOptimum:
    """Solve the edge-degree relaxation (module docstring) with HiGHS.

    Parameters
    ----------
    inst : Instance
        ω = the side whose disclosures may be withheld.
    k : int
        The protection level.
    must_keep : numpy.ndarray of bool, optional
        Disclosures (entries of ``inst.wl_idx``) that must stay.
    time_limit : float
        Seconds for HiGHS; the bound is then its dual bound.

    Returns
    -------
    KeepOptimum

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.protect.instance import Instance
    >>> keep_milp(Instance.from_frame(gl.thesis_example().frame), 2).proved
    True

    Complexity: NP-hard in general; the program has Σ|D(r)| + |N| + |M| binaries and one continuous variable
    per (record, person) pair sharing a location.
    """
    n_rec, n_per, n_w = inst.n_deidentified, inst.n_identified, len(inst.wl_idx)
    pad = max(0, n_per - n_rec)          # null trails on the withheld side
    pad_id = max(0, n_rec - n_per)       # null trails on the other side
    pairs_r, pairs_p, miss_rows = [], [], []
    for r in range(n_rec):
        a, b = inst.wl_ptr[r], inst.wl_ptr[r + 1]
        locs = inst.wl_idx[a:b]
        people = np.unique(np.concatenate([inst.g_idx[inst.g_ptr[c]:inst.g_ptr[c + 1]] for c in locs])) \
            if len(locs) else np.zeros(0, np.int64)
        for p in people:
            seen = inst.gl_idx[inst.gl_ptr[p]:inst.gl_ptr[p + 1]]
            miss = np.flatnonzero(~np.isin(locs, seen)) + a
            miss_rows.append(miss)
            pairs_r.append(r)
            pairs_p.append(int(p))
    n_x = len(pairs_r)
    # variable layout: w (n_w) | f (n_rec) | x (n_x) | h (n_per)
    o_f, o_x, o_h = n_w, n_w + n_rec, n_w + n_rec + n_x
    n_var = o_h + n_per
    rows, cols, vals, lo, hi = [], [], [], [], []
    row = 0

    def add(cs: list[int], vs: list[float], low: float, high: float) -> None:
        nonlocal row
        rows.extend([row] * len(cs))
        cols.extend(cs)
        vals.extend(vs)
        lo.append(low)
        hi.append(high)
        row += 1

    for r in range(n_rec):                                   # f[r] ≤ w[r,c]
        for e in range(inst.wl_ptr[r], inst.wl_ptr[r + 1]):
            add([o_f + r, e], [1.0, -1.0], -np.inf, 0.0)
    x_lb = np.zeros(n_x)
    for i, miss in enumerate(miss_rows):                     # x[r,p] ≤ w[r,c] for c ∈ D(r) \ A(p)
        if not len(miss):
            x_lb[i] = 1.0                                    # already a candidate: withholding never removes it
        for e in miss:
            add([o_x + i, int(e)], [1.0, -1.0], -np.inf, 0.0)
        add([o_h + pairs_p[i], o_x + i, o_f + pairs_r[i]], [1.0, -1.0, 1.0], 0.0, np.inf)   # h ≥ x − f
    by_rec: list[list[int]] = [[] for _ in range(n_rec)]
    by_per: list[list[int]] = [[] for _ in range(n_per)]
    for i, (r, p) in enumerate(zip(pairs_r, pairs_p, strict=True)):
        by_rec[r].append(i)
        by_per[p].append(i)
    for r in range(n_rec):                                   # records: k candidates, unless a null trail (exempt)
        add([o_x + i for i in by_rec[r]] + [o_f + r], [1.0] * len(by_rec[r]) + [float(k)],
            float(k - pad_id), np.inf)
    all_f = list(range(o_f, o_f + n_rec))
    for p in range(n_per):                                   # people: k candidates unless exempt
        xs = [o_x + i for i in by_per[p]]
        fs = [o_f + pairs_r[i] for i in by_per[p]]
        coef: dict[int, float] = {}
        for c in xs:
            coef[c] = coef.get(c, 0.0) + 1.0
        for c in fs:
            coef[c] = coef.get(c, 0.0) - 1.0
        for c in all_f:
            coef[c] = coef.get(c, 0.0) + 1.0
        coef[o_h + p] = coef.get(o_h + p, 0.0) - float(k)
        add(list(coef), list(coef.values()), float(-pad), np.inf)
    matrix = sp.csr_array((vals, (rows, cols)), shape=(row, n_var))
    lb = np.zeros(n_var)
    ub = np.ones(n_var)
    lb[o_x:o_h] = x_lb
    if must_keep is not None:
        ub[:n_w][np.asarray(must_keep, bool)] = 0.0
    integrality = np.ones(n_var)
    integrality[o_x:o_h] = 0
    cost = np.zeros(n_var)
    cost[:n_w] = 1.0
    t0 = time.perf_counter()
    res = milp(cost, constraints=LinearConstraint(matrix, lo, hi), bounds=Bounds(lb, ub),
               integrality=integrality, options={"time_limit": float(time_limit), "disp": False})
    seconds = time.perf_counter() - t0
    dual = getattr(res, "mip_dual_bound", None)
    if res.x is None:
        bound = int(np.ceil(dual - 1e-6)) if dual is not None and np.isfinite(dual) else 0
        return KeepOptimum(None, max(bound, 0), False, seconds)
    kept = np.round(res.x[:n_w]) < 0.5
    proved = res.status == 0
    bound = int(round(res.fun)) if proved else int(np.ceil((dual if dual is not None else 0) - 1e-6))
    return KeepOptimum(kept, max(bound, 0), proved, seconds)
