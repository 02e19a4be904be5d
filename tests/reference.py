"""Naive reference formulations from the thesis, for tests and benchmarks only (dense, O(|M|·|N|) memory).

The library's real implementations live in :mod:`graphlink.analysis.reidit` and :mod:`graphlink.core.linkgraph`;
these follow the printed pseudocode closely so the fast versions can be checked against them and timed
(``benchmarks/bench_core.py`` puts the repository root on its path to import this module).
"""

from __future__ import annotations

import numpy as np

from graphlink.core.trails import Trails


def dense_link_matrix(trails: Trails) -> np.ndarray:
    """D[r, s] = 1 iff reserved trail r is a subtrail of complete trail s (Def. 17).  O(|R|·|S|·|C|)."""
    if trails.star_side == "identified":
        R, S = trails.identified.dense(), trails.deidentified.dense()
    else:
        R, S = trails.deidentified.dense(), trails.identified.dense()
    ok = np.ones((len(R), len(S)), dtype=bool)
    for c in range(R.shape[1]):
        rc = R[:, c][:, None]
        ok &= (rc < 0) | (rc == S[:, c][None, :])
    return ok


def reidit_i_precomp(trails: Trails, flip: bool | None = None) -> set[tuple[int, int]]:
    """REIDIT-I-Precomp (thesis Alg. 5) with REIDIT-I-Flip (Alg. 6) when |M| = |N|.

    Returns (reserved row, complete row) pairs.  Repeat-until passes over the row sums W (and the
    column sums for Flip), zeroing the column (row) of every re-identified pair.  O(|M|·|N|) per pass.
    """
    D = dense_link_matrix(trails)
    if flip is None:
        flip = D.shape[0] == D.shape[1]
    W = D.sum(axis=1)
    V = D.sum(axis=0)
    out: set[tuple[int, int]] = set()
    while True:
        found = len(out)
        for i in range(D.shape[0]):
            if W[i] == 1:
                j = int(np.flatnonzero(D[i])[0])
                out.add((i, j))
                D[:, j] = False          # remove the pair from further consideration
                D[i, :] = False
                W, V = D.sum(axis=1), D.sum(axis=0)
        if flip:
            for j in range(D.shape[1]):
                if V[j] == 1:
                    i = int(np.flatnonzero(D[:, j])[0])
                    out.add((i, j))
                    D[:, j] = False
                    D[i, :] = False
                    W, V = D.sum(axis=1), D.sum(axis=0)
        if len(out) == found:
            return out
