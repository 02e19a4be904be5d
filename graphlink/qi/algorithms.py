"""One entry point for every anonymization algorithm, used by the CLI and the app.

=============  ==============================================  ===========  ================================
algorithm      what                                            granularity  suppression
=============  ==============================================  ===========  ================================
``optimal``    exact minimum-loss lattice search (lattice.py)  full-domain  rows, up to ``max_suppression``
``datafly``    Sweeney's Datafly core (SW-A §4.1)              full-domain  rows (default: k rows, SW-A)
``mu-argus``   Sweeney's µ-Argus reconstruction (SW-A §4.2)    attribute +  cells; then rows still in classes
                                                               cell         < k (``enforce_k``)
``mingen``     MinGen, exact minimal distortion (SW-A §3.4)    cell         none (suppression is a DGH level)
``mondrian``   strict multidimensional Mondrian (LeFevre 06)   cell         none
=============  ==============================================  ===========  ================================
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from graphlink.catalog import QI_ALGORITHMS
from graphlink.errors import ReleaseError
from graphlink.qi.heuristics import datafly, mu_argus
from graphlink.qi.lattice import as_objective, optimal, suppression_limit
from graphlink.qi.metrics import Objective
from graphlink.qi.mingen import mingen
from graphlink.qi.mondrian import mondrian
from graphlink.qi.result import Anonymization
from graphlink.qi.table import QITable

ALGORITHMS = QI_ALGORITHMS


def run_optimal(table: QITable, k: int, *, max_suppression: float = 0.0, loss: str | Objective = "prec",
                rounding: str = "arx", progress: Callable[[float, str], None] | None = None) -> Anonymization:
    """:func:`graphlink.qi.lattice.optimal` as an :class:`Anonymization` (suppressed rows removed)."""
    t0 = time.perf_counter()
    obj = as_objective(loss)
    res = optimal(table, k, max_suppression=max_suppression, loss=obj, rounding=rounding, progress=progress)
    return Anonymization(table, "optimal", k, np.array(res.node.levels), res.node.row_mask(table),
                         time.perf_counter() - t0,
                         {"objective": obj.to_dict(), "objective_value": res.value,
                          "max_suppressed_rows": res.limit, "lattice": res.stats.to_dict()},
                         measures=res.node.measures)


def enforce(res: Anonymization) -> Anonymization:
    """Remove the rows still in classes smaller than the requested k (µ-Argus's documented failure), so the
    release is k-anonymous; ``info`` records how many rows the algorithm alone left unprotected."""
    bad = res.unprotected_rows()
    if len(bad) == 0:
        return res
    suppressed = res.suppressed.copy()
    suppressed[bad] = True
    info = {**res.info, "unprotected_rows": int(len(bad)), "suppressed_to_enforce_k": int(len(bad))}
    return Anonymization(res.table, res.algorithm, res.k_requested, res.cell_levels, suppressed, res.seconds, info)


def anonymize(table: QITable, k: int, algorithm: str = "optimal", *, max_suppression: float | None = None,
              loss: str | Objective = "prec", rounding: str = "arx", enforce_k: bool = True,
              progress: Callable[[float, str], None] | None = None, **options: Any) -> Anonymization:
    """Run ``algorithm`` (see the module table). ``max_suppression`` is a fraction of the rows (ARX), turned
    into rows by ``rounding`` (:func:`~graphlink.qi.lattice.suppression_limit`); None keeps each algorithm's
    own default (0 for optimal, k rows for Datafly). ``loss`` (a name or an
    :class:`~graphlink.qi.metrics.Objective`) is what the optimal search minimises. ``options`` go to the
    algorithm (µ-Argus: ``identifying``, ``max_combination``, ``generalize``; MinGen: ``preferred``,
    ``max_rows``). With ``enforce_k`` the result is always k-anonymous over the QI.

    Examples
    --------
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> table = encode(read_table(SWEENEY / "fig4_pt.csv"), ["Race", "BirthDate", "Gender", "ZIP"],
    ...                read_dir(SWEENEY / "hierarchies"))
    >>> from graphlink.qi.algorithms import anonymize
    >>> release = anonymize(table, 2, "datafly")
    >>> release.summary()["k"], release.summary()["levels"], release.summary()["suppressed_rows"]
    (2, {'Race': 0, 'BirthDate': 2, 'Gender': 0, 'ZIP': 0}, 2)
    """
    if algorithm not in ALGORITHMS:
        raise ReleaseError(f"unknown algorithm {algorithm!r}; expected one of {', '.join(ALGORITHMS)}")
    obj = as_objective(loss)
    if algorithm == "optimal":
        res = run_optimal(table, k, max_suppression=max_suppression or 0.0, loss=obj, rounding=rounding,
                          progress=progress)
    elif algorithm == "datafly":
        limit = None if max_suppression is None else suppression_limit(table.n, max_suppression, rounding)
        res = datafly(table, k, max_suppressed=limit)
    elif algorithm == "mu-argus":
        res = mu_argus(table, k, **options)
    elif algorithm == "mingen":
        res = mingen(table, k, **options)
    else:
        res = mondrian(table, k)
    return enforce(res) if enforce_k else res
