"""Trails behind a k-anonymous table: the people k-anonymity protects, named by where their records went.

A k-anonymous table hides each released record among at least k with the same generalized quasi-identifiers, so
joining it to an identified register by those values names nobody (Sweeney 2002).  If the same people's
de-identified records also leave trails across locations (thesis ch. 2), the trail link graph names some of them
with certainty, and the generalized quasi-identifiers, as an attribute linkage set (TR02 Def. 3.1), cut the link
graph further: more pairs become true loves.  This module builds that situation from a released table and
measures the three attacks on it.  It is the demonstration behind the app's Quasi-identifiers page; the pieces
are :mod:`graphlink.qi.als` (blocks, ALS-only) and :mod:`graphlink.analysis.reidit` (true loves).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graphlink.analysis.reidit import Reidentification


@dataclass
class Exposure:
    """The three attacks on one simulated trail release behind a k-anonymous table (each with ``correct``/``wrong``
    against the simulation's truth in its summary).

    Examples
    --------
    Returned by :func:`expose`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.qitrails import expose
    >>> from graphlink.qi.table import read_table
    >>> exposure = expose(read_table(SWEENEY / "fig5_gt1.csv"), ["Race", "BirthDate", "Gender", "ZIP"], locations=4)
    >>> exposure.people, exposure.locations
    (12, 4)
    """

    qi_only: Reidentification        # ALS-only on the generalized quasi-identifiers (|X| = |Y| = 1)
    trails_only: Reidentification    # true loves of the trail link graph
    both: Reidentification           # true loves of the ALS-constrained link graph
    people: int                      # released records (identified and de-identified elements)
    locations: int

    def counts(self) -> dict[str, int]:
        return {"people": self.people, "qi_only": len(self.qi_only), "trails_only": len(self.trails_only),
                "both": len(self.both)}


def trail_release(released: pd.DataFrame, qi: Sequence[str], *, locations: int, p: float,
                  seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A long-format trail release for the rows of ``released`` (generalized, suppressed rows removed): row i is
    person ``p<i>`` (identified, with the register's values generalized as the release does) and sample ``s<i>``
    (de-identified, with the released values); each visits each location with probability ``p`` (a record that
    drew none gets one location at random, so every released record has a trail) and both tables of a location
    disclose it (unreserved).  Returns (long frame with the QI columns as attributes, truth).
    O(rows · locations)."""
    if not 0 < p <= 1 or locations < 1:
        raise ValueError("need 0 < p <= 1 and at least one location")
    rng = np.random.default_rng(seed)
    n = len(released)
    visits = rng.random((n, locations)) < p
    # every released record was disclosed somewhere (the table is a release too): one location for those without
    none = np.flatnonzero(~visits.any(axis=1))
    visits[none, rng.integers(0, locations, len(none))] = True
    rows, cols = np.nonzero(visits)
    values = released.reset_index(drop=True)[list(qi)].astype(str)
    people = np.array([f"p{i}" for i in range(n)], dtype=object)
    samples = np.array([f"s{i}" for i in range(n)], dtype=object)
    locs = np.array([f"L{c + 1:02d}" for c in range(locations)], dtype=object)
    parts = []
    for kind, keys in (("identified", people), ("deidentified", samples)):
        part = pd.DataFrame({"location": locs[cols], "kind": kind, "element": keys[rows]})
        parts.append(pd.concat([part, values.iloc[rows].reset_index(drop=True)], axis=1))
    truth = pd.DataFrame({"identified": people, "deidentified": samples})
    return pd.concat(parts, ignore_index=True), truth


def expose(released: pd.DataFrame, qi: Sequence[str], *, locations: int = 8, p: float = 0.3,
           seed: int = 0) -> Exposure:
    """Run the three attacks on :func:`trail_release` of ``released``.  O(rows · locations) plus the link graph
    (twin classes) and one maximum matching per graph.

    Examples
    --------
    SW-K Figure 5's 2-anonymous release, its people spread over four locations (seeded): the trails alone, the
    quasi-identifiers alone and both together:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.qitrails import expose
    >>> from graphlink.qi.table import read_table
    >>> qi = ["Race", "BirthDate", "Gender", "ZIP"]
    >>> exposure = expose(read_table(SWEENEY / "fig5_gt1.csv"), qi, locations=4, seed=0)
    >>> [r.summary.correct for r in (exposure.trails_only, exposure.qi_only, exposure.both)]   # of 12 people
    [3, 0, 10]
    """
    from graphlink.analysis.reidit import evaluate, true_loves
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails
    from graphlink.qi.als import LinkageSet, Relation, als_only, attribute_tables, blocks

    frame, truth = trail_release(released, qi, locations=locations, p=p, seed=seed)
    rel = read_release(frame[["location", "kind", "element"]], truth=truth)
    tr = build_trails(rel, "none", "one-to-one")
    attrs = attribute_tables(frame)
    b = blocks(LinkageSet(tuple(Relation(q, q) for q in qi)), attrs["identified"], attrs["deidentified"],
               tr.identified.keys, tr.deidentified.keys)
    qi_only = Reidentification("als-only", als_only(b, tr.identified.keys, tr.deidentified.keys), {})
    trails_only = true_loves(build_linkgraph(tr))
    both = true_loves(build_linkgraph(tr, blocks=b))
    qi_only, trails_only, both = (r.with_summary(**evaluate(r, truth).as_dict())
                                  for r in (qi_only, trails_only, both))
    return Exposure(qi_only, trails_only, both, people=len(truth), locations=locations)
