"""Exact inference on one-to-many releases (thesis Appendix A, Definitions 26–27; Theorem 9, Corollary 7).

Model (Definition 27): every released identified person m belongs to one de-identified element β(m) whose trail
contains m's (m ⪯ β(m): the identified side carries ``*``, §3.3); a de-identified element (a household's IP
address) may stand for several people.  A *consistent assignment* is any such β.  The analogue of a true love
is a pair that holds in **every** consistent assignment.

* **Identified reserved** (people may withhold records; the default reading): a household's members may all be
  missing from the release, so nothing forces an element to stand for anyone released.  Every fitting pair is
  possible, and (m, n) is certain iff m fits only n — exactly REIDIT-M (Algorithm 16, Theorem 9).
* **Unreserved** (nothing withheld, Corollary 7; the user states ``--reserved none``): every de-identified
  element stands for at least one released person, so β is a surjection.  Then, with ν the maximum matching
  size of the fit graph (left M, right N): consistent assignments exist iff every m fits some n and ν = |N|
  (a matching covering N extends to an assignment); (m, n) is **possible** iff it is in some maximum matching
  or m is left unmatched by some maximum matching (m may then join any element it fits); (m, n) is
  **certain** iff m fits only n, or (m, n) is in every maximum matching (leaving n would uncover an element).
  REIDIT-M's pairs are a subset; the rest come from coverage.

The unreserved sets come from one maximum matching and one SCC pass (Dulmage–Mendelsohn, the machinery of the
one-to-one true loves; :mod:`graphlink.matching`), on elements or on twin classes: O(E·√V) or one max-flow on
the class graph; the reserved case is O(E_class).  Both are tested against a brute-force enumeration of every
consistent assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from graphlink.errors import ModelAssumptionError
from graphlink.linkgraph import LinkGraph
from graphlink.matching import dm_classify, twin_classify


@dataclass(frozen=True)
class ManyClasses:
    """Exact possible / certain pairs of a one-to-many link graph, per class edge (see module docstring)."""

    graph: LinkGraph
    engine: Literal["elements", "twins"]
    nu: int                          # maximum matching size (≤ |N|)
    consistent: bool                 # some consistent assignment exists
    n_orphans: int                   # identified elements contained in no de-identified trail
    orphans: list[str]               # (the first 50 of them)
    uncovered: list[str]             # de-identified elements a maximum matching leaves without a person (≤ 50)
    class_possible: np.ndarray       # per class edge
    class_certain: np.ndarray
    class_flow: np.ndarray           # a maximum matching as member pairs per class edge
    union_degree_identified: np.ndarray     # possible partners per element
    union_degree_deidentified: np.ndarray

    # the EdgeClasses vocabulary, so views written for one-to-one graphs (the app's graph view) work unchanged
    @property
    def class_allowed(self) -> np.ndarray:
        return self.class_possible

    @property
    def class_vital(self) -> np.ndarray:
        return self.class_certain

    @property
    def hall_ok(self) -> bool:
        return self.consistent

    @property
    def unmatched(self) -> list[str]:
        return self.orphans + self.uncovered

    @cached_property
    def true_love_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(identified rows, de-identified rows) of the certain pairs (every member of a certain class edge)."""
        g = self.graph
        ii, jj = [], []
        for e in np.flatnonzero(self.class_certain):
            ms = np.flatnonzero(g.id_class == g.class_ei[e])
            n = np.flatnonzero(g.de_class == g.class_ej[e])
            ii.append(ms)
            jj.append(np.repeat(n[:1], len(ms)))
        if not ii:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(ii).astype(np.int64), np.concatenate(jj).astype(np.int64)

    @property
    def n_true_loves(self) -> int:
        return len(self.true_love_pairs[0])

    @cached_property
    def _mates(self) -> tuple[np.ndarray, np.ndarray]:
        from graphlink.matching import _matching_from_flow

        g = self.graph
        return _matching_from_flow(g, True, g.class_ei, g.class_ej, self.class_flow, g.n_identified,
                                   g.n_deidentified)

    @property
    def mate_identified(self) -> np.ndarray:
        """A maximum matching covering the de-identified side (unreserved reading), -1 elsewhere."""
        return self._mates[0]

    @property
    def mate_deidentified(self) -> np.ndarray:
        return self._mates[1]

    @property
    def diagnostic(self) -> str:
        """One line on why no consistent assignment exists ('' when one does)."""
        parts = []
        if self.n_orphans:
            parts.append(f"{self.n_orphans:,} identified element(s) ({', '.join(self.orphans[:3])}"
                         f"{', …' if len(self.orphans) > 3 else ''}) fit no de-identified trail")
        if self.nu < self.graph.n_deidentified:
            parts.append(f"{self.graph.n_deidentified - self.nu:,} de-identified element(s) ("
                         f"{', '.join(self.uncovered[:3])}{', …' if len(self.uncovered) > 3 else ''}) cannot each "
                         "be given a distinct person")
        return "; ".join(parts)


def _class_sizes(graph: LinkGraph) -> tuple[np.ndarray, np.ndarray]:
    return graph.id_class_size.astype(np.int64), graph.de_class_size.astype(np.int64)


def _surjective(graph: LinkGraph, engine: str) -> tuple:
    """Unreserved case: Dulmage–Mendelsohn on the fit graph (left M, right N), per class edge.
    Returns (engine, ν, allowed, vital, flow, d_class, mate_de or None)."""
    a, b = _class_sizes(graph)
    ci, cj = graph.class_ei, graph.class_ej
    if engine == "auto":
        engine = "twins" if graph.prefers_twins else "elements"
    if engine == "twins":
        r = twin_classify(a, b, ci, cj)
        return engine, r["nu"], r["allowed"], r["vital"], r["flow"], r["d_left"], None
    ei, ej = graph.ei, graph.ej
    r = dm_classify(graph.n_identified, graph.n_deidentified, ei, ej)
    n_dc = len(b)
    key_class = ci * n_dc + cj
    order = np.argsort(key_class, kind="stable")
    edge_class = order[np.searchsorted(key_class[order], graph.id_class[ei] * n_dc + graph.de_class[ej])]
    allowed = np.zeros(len(ci), bool)
    allowed[edge_class[r["allowed"]]] = True
    vital = np.zeros(len(ci), bool)
    vital[edge_class[r["vital"]]] = True
    flow = np.bincount(edge_class[r["matched"]], minlength=len(ci)).astype(np.int64)
    d_class = np.zeros(len(a), bool)                  # twins share the verdict (an automorphism swaps them)
    d_class[graph.id_class[r["d_left"]]] = True
    return engine, int(r["nu"]), allowed, vital, flow, d_class, r["mate_right"]


def classify_one_to_many(graph: LinkGraph, *, engine: Literal["auto", "elements", "twins"] = "auto") -> ManyClasses:
    """Possible and certain pairs of a one-to-many release, exactly (module docstring).
    O(E_class) when the identified side is reserved; O(E·√V) (or a class-level max-flow) when unreserved."""
    tr = graph.trails
    if not tr.one_to_many:
        raise ModelAssumptionError("classify_one_to_many needs trails filled as one-to-many data")
    a, b = _class_sizes(graph)
    ci, cj = graph.class_ei, graph.class_ej
    deg_class = np.bincount(ci, weights=b[cj], minlength=len(a)).astype(np.int64)
    if tr.reserved == "none":
        engine, nu, allowed, vital, flow, d_class, mate_de = _surjective(graph, engine)
    else:                                             # members may be unreleased: only fitting matters
        engine, nu, mate_de = "elements", graph.n_deidentified, None
        allowed, vital = np.ones(len(ci), bool), np.zeros(len(ci), bool)
        flow, d_class = np.zeros(len(ci), np.int64), np.ones(len(a), bool)
    possible = allowed | d_class[ci]
    certain = (deg_class[ci] == 1) | vital
    orphan_rows = np.flatnonzero(deg_class[graph.id_class] == 0)
    orphans = [str(k) for k in tr.identified.keys[orphan_rows[:50]]]
    uncovered: list[str] = []
    if nu < graph.n_deidentified:
        if mate_de is not None:
            rows = np.flatnonzero(mate_de < 0)
        else:
            covered = np.bincount(cj, weights=flow, minlength=len(b))
            rows = np.flatnonzero(np.isin(graph.de_class, np.flatnonzero(covered < b)))
        uncovered = [str(k) for k in tr.deidentified.keys[rows[:50]]]
    ud_i = np.bincount(ci[possible], weights=b[cj[possible]], minlength=len(a))[graph.id_class].astype(np.int64)
    ud_j = np.bincount(cj[possible], weights=a[ci[possible]], minlength=len(b))[graph.de_class].astype(np.int64)
    consistent = len(orphan_rows) == 0 and nu == graph.n_deidentified
    return ManyClasses(graph, engine, nu, consistent, len(orphan_rows), orphans, uncovered, possible, certain, flow,
                       ud_i, ud_j)
