"""Maximum matchings, true loves and the union of all maximum matchings, exactly, in O(E·√V).

The thesis (Definition 5) calls an edge in *every* maximum matching a **true love** and proves true loves
are exactly the certain re-identifications (Theorem 2); it suggests finding them needs enumerating all
maximum matchings.  It does not: one maximum matching plus one strongly-connected-components pass
(Dulmage–Mendelsohn; docs/algorithms.md#true-loves) classifies every edge as

* **allowed** — in some maximum matching (the union T of Definition 19), or
* **vital** — in every maximum matching (a true love).

Orientation: unmatched edges go complete→reserved, matched edges reserved→complete; two dummy nodes make
free vertices on both sides part of the right SCCs.  Then ``allowed = matched | same_scc`` and
``vital = matched & ~same_scc``.

Null trails (§4.2.4 padding; never materialised) follow the closed form of docs/algorithms.md#null-trails: with z null
trails and the complete side's deficiency d' ≥ z (always true when Hall's condition holds), an element x of
the complete side has an allowed edge to the null trails iff x is unmatched in some maximum matching of the
graph without them (x ∈ D(G')); that edge is vital iff z = 1 and D(G') = {x}.

Two exact engines:

* element level: Hopcroft–Karp (:func:`graphlink.kernels.flow.maximum_matching`, the capacitated engine below
  with every capacity 1; scipy's has exponential time on layered graphs, scipy/scipy#26147, unfixed in 1.17), then
  scipy's iterative SCC.  O(E·√V).
* twin classes (docs/algorithms.md#twin-classes): identical trails form classes with multiplicities; a max-flow with
  capacities min(a_i, b_j) plus an SCC pass on the residual graph classifies class edges.  Used when the
  element-level graph would be much larger than the class graph (low-entropy data).  The max-flow is
  Hopcroft–Karp generalised to capacities and the SCC an iterative Tarjan, both in numba on the class
  graph's arrays (:func:`twin_flow`); scipy's Dinic ``maximum_flow`` stays as the reference
  (``twin_classify(..., method="scipy")``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components, maximum_flow

from graphlink.core.linkgraph import LinkGraph
from graphlink.errors import ModelAssumptionError
from graphlink.kernels.flow import maximum_matching, twin_flow

INF = np.iinfo(np.int64).max


def hopcroft_karp(indptr: np.ndarray, indices: np.ndarray, n_left: int, n_right: int, mate_left: np.ndarray,
                  mate_right: np.ndarray) -> int:
    """Deprecated: the unit-capacity Hopcroft–Karp is :func:`graphlink.kernels.flow.maximum_matching` now (the
    capacitated engine with every capacity 1).  Writes a maximum matching of the CSR graph into ``mate_left`` /
    ``mate_right`` and returns its size; a matching already in them is not used as a warm start."""
    warnings.warn("graphlink.analysis.matching.hopcroft_karp is deprecated; use "
                  "graphlink.kernels.flow.maximum_matching", DeprecationWarning, stacklevel=2)
    left = np.repeat(np.arange(n_left, dtype=np.int64), np.diff(np.asarray(indptr, np.int64)))
    mate_left[:], mate_right[:], nu = maximum_matching(n_left, n_right, left, indices)
    return nu


def dm_classify(n_left: int, n_right: int, el: np.ndarray, er: np.ndarray) -> dict:
    """Allowed/vital mask per edge plus D_left (left vertices unmatched in some maximum matching).

    docs/algorithms.md#one-matching-one-scc-pass (two dummies).  O(E·√V) for the matching, O(V + E) for the rest.
    """
    el = np.asarray(el, np.int64)
    er = np.asarray(er, np.int64)
    mate_l, mate_r, nu = maximum_matching(n_left, n_right, el, er)
    matched = mate_l[el] == er if len(el) else np.zeros(0, bool)
    d_l, d_r = n_left + n_right, n_left + n_right + 1
    m_l = np.flatnonzero(mate_l >= 0)
    free_l = np.flatnonzero(mate_l < 0)
    m_r = np.flatnonzero(mate_r >= 0)
    free_r = np.flatnonzero(mate_r < 0)
    src = np.concatenate([el[~matched], n_left + er[matched], m_l, np.full(len(free_l), d_l),
                          n_left + free_r, np.full(len(m_r), d_r)])
    dst = np.concatenate([n_left + er[~matched], el[matched], np.full(len(m_l), d_l), free_l,
                          np.full(len(free_r), d_r), n_left + m_r])
    n = n_left + n_right + 2
    g = sp.csr_matrix((np.ones(len(src), np.int8), (src, dst)), shape=(n, n))
    _, scc = connected_components(g, directed=True, connection="strong")
    same = scc[el] == scc[n_left + er]
    in_d_left = (mate_l < 0) | (scc[:n_left] == scc[d_l])
    return {"allowed": matched | same, "vital": matched & ~same, "matched": matched, "mate_left": mate_l,
            "mate_right": mate_r, "nu": nu, "d_left": in_d_left}


def twin_classify(a: np.ndarray, b: np.ndarray, ci: np.ndarray, cj: np.ndarray, *,
                  method: Literal["numba", "scipy"] = "numba") -> dict:
    """Class-level classification by max-flow + residual SCC (docs/algorithms.md#twin-classes).

    Left classes have multiplicities ``a``, right classes ``b``; class edges (ci, cj) get capacity
    min(a_i, b_j) (not ∞: an uncapacitated arc would leave a residual 2-cycle that fakes "not vital").
    Returns per class edge (input order): flow, allowed, vital (only possible between singleton classes); the
    flow value ν; d_left, the left classes whose members can be left unmatched (reachable from s in the
    residual graph); and degree_left / degree_right, each class's union-degree (Σ of the other side's class
    sizes over its allowed edges).

    ``method="numba"`` (default, :func:`twin_flow`): capacitated Hopcroft–Karp + iterative Tarjan on the class
    graph's own arrays: phases of O(V + E) each (O(√V) of them on unit capacities), about 7 bytes per class
    edge at the peak, ``flow`` as int32.  ``method="scipy"``: scipy's Dinic ``maximum_flow`` and sparse
    ``connected_components`` on a CSR copy of the network — the reference the tests and
    ``benchmarks/bench_core.py`` compare against.
    """
    if method == "numba":
        return twin_flow(a, b, ci, cj)
    if method != "scipy":
        raise ValueError(f"unknown twin engine method {method!r} (use 'numba' or 'scipy')")
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    ci = np.asarray(ci, np.int64)
    cj = np.asarray(cj, np.int64)
    n_a, n_b = len(a), len(b)
    s, t = 0, 1 + n_a + n_b
    n = t + 1
    cap_mid = np.minimum(a[ci], b[cj]).astype(np.int32)
    u = np.concatenate([np.zeros(n_a, np.int64), 1 + ci, 1 + n_a + np.arange(n_b)])
    v = np.concatenate([1 + np.arange(n_a), 1 + n_a + cj, np.full(n_b, t)])
    cap = np.concatenate([a.astype(np.int32), cap_mid, b.astype(np.int32)])
    g = sp.csr_matrix((cap, (u, v)), shape=(n, n), dtype=np.int32)
    g.sum_duplicates()
    res = maximum_flow(g, s, t, method="dinic")
    # flow on our arcs: match the (positive) flow entries by key instead of sparse fancy indexing
    fc = res.flow.tocoo()
    pos = fc.data > 0
    fkey = fc.row[pos].astype(np.int64) * n + fc.col[pos].astype(np.int64)
    fval = fc.data[pos].astype(np.int64)
    o = np.argsort(fkey)
    fkey, fval = fkey[o], fval[o]
    akey = u * n + v
    f = np.zeros(len(akey), np.int64)
    if len(fkey):
        idx = np.minimum(np.searchsorted(fkey, akey), len(fkey) - 1)
        hit = fkey[idx] == akey
        f[hit] = fval[idx[hit]]
    fwd = f < cap
    back = f > 0
    rs = np.concatenate([u[fwd], v[back]])
    rd = np.concatenate([v[fwd], u[back]])
    r = sp.csr_matrix((np.ones(len(rs), np.int8), (rs, rd)), shape=(n, n))
    _, scc = connected_components(r, directed=True, connection="strong")
    reach = np.zeros(n, bool)
    reach[breadth_first_order(r, s, directed=True, return_predecessors=False)] = True
    mid_flow = f[n_a:n_a + len(ci)]          # class sizes are ≥ 1, so every arc exists, in input order
    same = scc[1 + ci] == scc[1 + n_a + cj]
    allowed = (mid_flow > 0) | same
    vital = (mid_flow == 1) & ~same & (a[ci] == 1) & (b[cj] == 1)
    from graphlink.kernels.scc import masked_class_degrees

    deg_l, deg_r = masked_class_degrees(ci, cj, allowed, a, b)
    return {"flow": mid_flow, "allowed": allowed, "vital": vital, "nu": int(res.flow_value),
            "d_left": reach[1:1 + n_a], "degree_left": deg_l, "degree_right": deg_r}


@dataclass(frozen=True)
class EdgeClasses:
    """Exact classification of every link edge of a :class:`LinkGraph` (see module docstring).

    ``allowed``/``vital``/``matched`` are per element-level edge (``graph.ei``/``graph.ej``); the
    class-level masks are always available and element-level ones are expanded on demand.

    Examples
    --------
    Returned by :func:`classify_edges`; in Fig. 3.4 every person has one partner in the union of all maximum
    matchings (a true love), and one of the five link edges is in no maximum matching:

    >>> import graphlink as gl
    >>> classes = gl.classify_edges(gl.build_linkgraph(gl.build_trails(gl.thesis_example())))
    >>> classes.nu, classes.union_degree_identified.tolist(), int(classes.allowed.sum()), len(classes.allowed)
    (4, [1, 1, 1, 1], 4, 5)
    """

    graph: LinkGraph
    engine: Literal["elements", "twins"]
    nu: int                               # maximum matching size, null-trail matches included
    nu_real: int                          # maximum matching size without null trails
    class_allowed: np.ndarray             # per class edge
    class_vital: np.ndarray
    union_degree_identified: np.ndarray   # allowed non-null edges per element
    union_degree_deidentified: np.ndarray
    null_allowed: np.ndarray              # per complete-side element: its edge to the null trails is allowed
    null_vital: np.ndarray
    hall_ok: bool
    unmatched: list[str]                  # elements that no maximum matching can cover (when Hall fails)
    mate_identified: np.ndarray           # a maximum matching; -1 = free (or matched to a null trail)
    mate_deidentified: np.ndarray
    class_flow: np.ndarray                # per class edge: member pairs matched in that maximum matching (int)

    def _repr_html_(self) -> str:
        from graphlink.display import html

        g = self.graph
        ud = pd.DataFrame({"side": ["identified", "de-identified"],
                           "mean union degree": [float(np.mean(self.union_degree_identified)) if g.n_identified
                                                 else 0.0, float(np.mean(self.union_degree_deidentified))
                                                 if g.n_deidentified else 0.0]})
        return html("Edge classification (Dulmage–Mendelsohn)",
                    {"engine": self.engine, "maximum matching": self.nu_real, "true loves": self.n_true_loves,
                     "Hall's condition": "holds" if self.hall_ok else "fails"}, {"union degrees": ud})

    @property
    def complete_side(self) -> Literal["identified", "deidentified"]:
        return "deidentified" if self.graph.trails.star_side == "identified" else "identified"

    @cached_property
    def _edge_class(self) -> np.ndarray:
        return self.graph._edge_class_index()

    def to_networkx(self, *, component: int | None = None, nulls: bool = False) -> Any:
        """The link graph as a ``networkx.Graph`` whose edges carry their ``class``: ``"true love"``,
        ``"allowed"`` or ``"link only"`` (:meth:`graphlink.core.linkgraph.LinkGraph.to_networkx`; extra
        ``networkx``).  O(|M| + |N| + E).

        Examples
        --------
        >>> import graphlink as gl
        >>> g = gl.classify_edges(gl.build_linkgraph(gl.build_trails(gl.thesis_example()))).to_networkx()
        >>> sorted(c for _, _, c in g.edges(data="class"))
        ['link only', 'true love', 'true love', 'true love', 'true love']
        """
        return self.graph.to_networkx(classes=self, component=component, nulls=nulls)

    @property
    def allowed(self) -> np.ndarray:
        return self.class_allowed[self._edge_class]

    @property
    def vital(self) -> np.ndarray:
        return self.class_vital[self._edge_class]

    @property
    def matched(self) -> np.ndarray:
        return self.mate_identified[self.graph.ei] == self.graph.ej

    @cached_property
    def true_love_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(identified rows, de-identified rows) of the vital edges, from classes (singletons only)."""
        g = self.graph
        ci, cj = g.class_ei[self.class_vital], g.class_ej[self.class_vital]
        id_of = np.full(len(g.id_class_size), -1, np.int64)
        id_of[g.id_class] = np.arange(len(g.id_class))          # singleton classes: the unique member
        de_of = np.full(len(g.de_class_size), -1, np.int64)
        de_of[g.de_class] = np.arange(len(g.de_class))
        return id_of[ci], de_of[cj]

    @property
    def n_true_loves(self) -> int:
        return int(self.class_vital.sum())

    def union_degree_total(self, side: Literal["identified", "deidentified"]) -> np.ndarray:
        """Union-degree counting the allowed edges to the (symbolic) null trails too."""
        g = self.graph
        if side == "identified":
            base = self.union_degree_identified.copy()
            if g.null_side == "deidentified":
                base += np.where(self.null_allowed, g.n_null, 0)
            return base
        base = self.union_degree_deidentified.copy()
        if g.null_side == "identified":
            base += np.where(self.null_allowed, g.n_null, 0)
        return base

    @property
    def null_union_degree(self) -> int:
        """Union-degree of each null trail (they are interchangeable)."""
        return int(self.null_allowed.sum())


def classify_edges(graph: LinkGraph, *, engine: Literal["auto", "elements", "twins"] = "auto") -> EdgeClasses:
    """Classify every link edge as allowed / vital (true love), exactly; check Hall's condition.

    ``engine='auto'`` uses the element-level engine unless twin compression shrinks the graph a lot
    (expanded edges > 4 × class edges and > 2e6).  Both engines give identical results (tested against
    a brute-force oracle that enumerates every maximum matching).  O(E·√V).

    Parameters
    ----------
    graph : LinkGraph
        From :func:`graphlink.core.linkgraph.build_linkgraph`, on one-to-one trails.
    engine : {"auto", "elements", "twins"}
        Element-level or twin-class computation (same answer).

    Returns
    -------
    EdgeClasses
        Per edge allowed (in some maximum matching) and vital (in every one: a true love), the union degrees
        of the audit, Hall's condition and one maximum matching.

    Raises
    ------
    ModelAssumptionError
        When the trails are one-to-many (use :func:`graphlink.analysis.onetomany.classify_one_to_many`).

    Examples
    --------
    >>> import graphlink as gl
    >>> classes = gl.classify_edges(gl.build_linkgraph(gl.build_trails(gl.thesis_example())))
    >>> classes.nu, classes.hall_ok, int(classes.class_vital.sum()), int(classes.class_allowed.sum())
    (4, True, 4, 4)
    """
    if graph.trails.one_to_many:
        from graphlink.diagnostics import Diagnostic

        raise ModelAssumptionError(diagnostic=Diagnostic(
            "method-needs-one-to-one", "maximum matchings describe one-to-one data; this release is read as "
            f"one-to-many ({graph.trails.model.label})",
            {"method": "maximum matching", "label": graph.trails.model.label, "stated_many": False},
            remedy="use graphlink.analysis.onetomany.classify_one_to_many (or REIDIT-M / the true loves, which "
                   "handle it)"))
    if engine == "auto":
        engine = "twins" if graph.prefers_twins else "elements"
    if engine == "elements":
        return _classify_elements(graph)
    return _classify_twins(graph)


def _orient(graph: LinkGraph) -> tuple[bool, int, int]:
    """Complete side is 'left' in the matching; returns (identified_is_left, n_left, n_right)."""
    left_is_id = graph.trails.star_side != "identified"
    if left_is_id:
        return True, graph.n_identified, graph.n_deidentified
    return False, graph.n_deidentified, graph.n_identified


def _hall(graph: LinkGraph, nu_real: int, mate_left: np.ndarray, mate_right: np.ndarray,
          left_is_id: bool) -> tuple[bool, list[str]]:
    tr = graph.trails
    right_keys = tr.deidentified.keys if left_is_id else tr.identified.keys
    left_keys = tr.identified.keys if left_is_id else tr.deidentified.keys
    unmatched = [str(k) for k in right_keys[mate_right < 0]]
    ok = nu_real == len(right_keys)
    if tr.reserved == "none":
        ok = ok and nu_real == len(left_keys)
        unmatched += [str(k) for k in left_keys[mate_left < 0]]
    return ok, unmatched


def _null_rule(graph: LinkGraph, d_left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z = graph.n_null
    if z == 0:
        return np.zeros(len(d_left), bool), np.zeros(len(d_left), bool)
    null_allowed = d_left.copy()
    null_vital = d_left & (z == 1) & (d_left.sum() == 1)
    return null_allowed, null_vital


def _classify_elements(graph: LinkGraph) -> EdgeClasses:
    left_is_id, n_left, n_right = _orient(graph)
    ei, ej = graph.ei, graph.ej
    el, er = (ei, ej) if left_is_id else (ej, ei)
    r = dm_classify(n_left, n_right, el, er)
    allowed, vital = r["allowed"], r["vital"]
    # element-level masks -> class-level masks (all members of a class edge share the verdict)
    n_dc = len(graph.de_class_size)
    key_class = graph.class_ei * n_dc + graph.class_ej
    order = np.argsort(key_class, kind="stable")
    edge_class = order[np.searchsorted(key_class[order], graph.id_class[ei] * n_dc + graph.de_class[ej])]
    class_allowed = np.zeros(len(key_class), bool)
    class_allowed[edge_class[allowed]] = True
    class_vital = np.zeros(len(key_class), bool)
    class_vital[edge_class[vital]] = True
    class_flow = np.bincount(edge_class[r["matched"]], minlength=len(key_class)).astype(np.int64)
    mate_l, mate_r = r["mate_left"], r["mate_right"]
    hall_ok, unmatched = _hall(graph, r["nu"], mate_l, mate_r, left_is_id)
    null_allowed, null_vital = _null_rule(graph, r["d_left"])
    deg_i = np.bincount(ei[allowed], minlength=graph.n_identified).astype(np.int64)
    deg_j = np.bincount(ej[allowed], minlength=graph.n_deidentified).astype(np.int64)
    mate_id, mate_de = (mate_l, mate_r) if left_is_id else (mate_r, mate_l)
    nu = r["nu"] + min(graph.n_null, int((mate_l < 0).sum()))
    return EdgeClasses(graph, "elements", nu, r["nu"], class_allowed, class_vital, deg_i, deg_j,
                       null_allowed, null_vital, hall_ok, unmatched, mate_id, mate_de, class_flow)


def _classify_twins(graph: LinkGraph) -> EdgeClasses:
    """Twin-class engine.  Null trails are not put into the flow: since z = |S| − |R| ≤ d' (the complete
    side's deficiency) always holds, the closed form of docs/algorithms.md#null-trails applies — real edges keep
    the classification of the graph without them, and a complete-side class gets an allowed null edge iff it is
    reachable from the source in the residual graph (its members can be left unmatched)."""
    left_is_id, n_left, n_right = _orient(graph)
    a, b = (graph.id_class_size, graph.de_class_size) if left_is_id else (graph.de_class_size, graph.id_class_size)
    ci, cj = (graph.class_ei, graph.class_ej) if left_is_id else (graph.class_ej, graph.class_ei)
    r = twin_classify(a, b, ci, cj)
    left_class = graph.id_class if left_is_id else graph.de_class
    d_left = r["d_left"][left_class]
    null_allowed, null_vital = _null_rule(graph, d_left)
    mate_l, mate_r = _matching_from_flow(graph, left_is_id, ci, cj, r["flow"], n_left, n_right)
    nu_real = int((mate_l >= 0).sum())
    hall_ok, unmatched = _hall(graph, nu_real, mate_l, mate_r, left_is_id)
    deg_l, deg_r = r["degree_left"], r["degree_right"]
    deg_i, deg_j = (deg_l, deg_r) if left_is_id else (deg_r, deg_l)
    deg_i, deg_j = deg_i[graph.id_class], deg_j[graph.de_class]
    mate_id, mate_de = (mate_l, mate_r) if left_is_id else (mate_r, mate_l)
    nu = nu_real + min(graph.n_null, n_left - nu_real)
    return EdgeClasses(graph, "twins", nu, nu_real, r["allowed"], r["vital"], deg_i, deg_j,
                       null_allowed, null_vital, hall_ok, unmatched, mate_id, mate_de, r["flow"])


def _matching_from_flow(graph: LinkGraph, left_is_id: bool, ci: np.ndarray, cj: np.ndarray, flow: np.ndarray,
                        n_left: int, n_right: int) -> tuple[np.ndarray, np.ndarray]:
    """Turn an integral class flow into an element-level matching (members paired in order).  O(V + E)."""
    from graphlink.kernels.flow import pair_members
    from graphlink.kernels.rows import members as _members

    lc, rc = (graph.id_class, graph.de_class) if left_is_id else (graph.de_class, graph.id_class)
    ls, rs = (graph.id_class_size, graph.de_class_size) if left_is_id else (graph.de_class_size, graph.id_class_size)
    lptr, lmem = _members(lc, len(ls))
    rptr, rmem = _members(rc, len(rs))
    return pair_members(np.asarray(ci, np.int64), np.asarray(cj, np.int64), np.ascontiguousarray(flow), lptr, lmem,
                        rptr, rmem, n_left, n_right)
