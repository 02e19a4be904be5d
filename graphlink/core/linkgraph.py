"""The bipartite link graph (thesis ch. 2 Definition 6, ch. 3 Definition 17, §4.2.4).

A de-identified trail n *links* an identified trail m when they agree at every location where neither is
``*`` (n ⪯ m, the subtrail relation; for unreserved data this is equality).  With the reserved side R
(the one with ``*``) and the complete side S, the test on packed words is::

    ((S.ones ^ R.ones) & R.known) == 0        for every word

Scale (docs/algorithms.md#scale): both sides are first compressed into *twin classes* (identical trails), links
are generated between classes, and element-level edges are expanded only on demand.  Class links use the
cheaper of two exact methods:

* **mask grouping** — when few distinct ``*`` patterns exist (``*`` arises because whole locations
  withhold): for each distinct known-mask K, hash ``S.ones & K`` and join with R's ones.
  O(#K · |S| log |S| + E).
* **posting-list join** — per-entry ``*``: a reserved class's partners hold each of its known values, so the
  classes are visited in lexicographic order of their known values (rarest first) and a stack keeps the
  complete-side candidates of every prefix; a class filters its parent's list by one bitset, and classes that
  share a prefix share its work (:func:`graphlink.kernels.links.indexed_links`).  It hands the edges over
  sorted, 16 bytes per class edge at the peak.  O(Σ_prefix |parent list| + E); the numba brute force over
  every (R class, S class) pair (O(|R|·|S|·W), ~1-2 G pair checks/s on two cores) stays as the reference.

Null trails (all ``*``, Definition 18) are never materialised: following §4.2.4 the reserved side is
padded with ``n_null = |S| − |R|`` symbolic null trails, each linked to every complete-side element.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from graphlink.config import get_config
from graphlink.core.trails import Trails, TrailSide
from graphlink.errors import ModelAssumptionError
from graphlink.kernels.rows import members, row_classes

Side = Literal["identified", "deidentified"]
Progress = Callable[[float, str], None]

# Element-level edges are never expanded beyond ``get_config().max_expanded_edges`` (memory ~16 B/edge;
# ``GRAPHLINK_MAX_EXPANDED_EDGES``, graphlink/config.py): every analysis works on twin classes instead.


@dataclass(frozen=True)
class LinkGraph:
    """Link edges of a release, twin-compressed, with symbolic null trails (thesis §4.2.4).

    Element-level edges (``ei`` identified row, ``ej`` de-identified row) are expanded lazily from the
    class edges; every analysis that can work on classes does so.  Made by :func:`build_linkgraph`.

    Attributes
    ----------
    trails : Trails
        The trails it links.
    id_class, de_class : numpy.ndarray
        The twin class of each identified / de-identified row (elements with equal trails share one).
    id_class_size, de_class_size : numpy.ndarray
        Members per class.
    class_ei, class_ej : numpy.ndarray
        Class-level link edges, sorted by ``(class_ej, class_ei)``.
    n_null : int
        Symbolic null trails (all ``*``, Definition 18) on ``null_side``.
    null_side : {"identified", "deidentified"} or None

    Examples
    --------
    >>> import graphlink as gl
    >>> graph = gl.build_linkgraph(gl.build_trails(gl.thesis_example()))
    >>> graph.n_identified, graph.n_deidentified, graph.n_expanded_edges
    (4, 4, 5)
    >>> [(str(graph.trails.identified.keys[i]), str(graph.trails.deidentified.keys[j]))
    ...  for i, j in zip(graph.ei, graph.ej) if str(graph.trails.deidentified.keys[j]) == "gatc"]
    [('Ali', 'gatc'), ('Dan', 'gatc')]
    """

    trails: Trails
    id_class: np.ndarray          # class of each identified row
    de_class: np.ndarray          # class of each de-identified row
    id_class_size: np.ndarray
    de_class_size: np.ndarray
    class_ei: np.ndarray          # class-level edges, sorted by (class_ej, class_ei)
    class_ej: np.ndarray
    n_null: int
    null_side: Side | None

    def _repr_html_(self) -> str:
        import pandas as pd

        from graphlink.display import html

        counts = pd.DataFrame({"": ["identified", "de-identified"],
                               "elements": [self.n_identified, self.n_deidentified],
                               "twin classes": [len(self.id_class_size), len(self.de_class_size)]})
        return html(f"Link graph ({self.trails.model.label})",
                    {"element edges": f"{self.n_expanded_edges:,}", "class edges": f"{len(self.class_ei):,}",
                     "null trails": self.n_null}, {"sizes": counts})

    @property
    def n_identified(self) -> int:
        return len(self.trails.identified)

    @property
    def n_deidentified(self) -> int:
        return len(self.trails.deidentified)

    @cached_property
    def n_expanded_edges(self) -> int:
        """Element-level edges the class edges stand for.  O(E_class), a chunk at a time (no E-sized temporary)."""
        return sum(int(np.dot(self.id_class_size[self.class_ei[lo:hi]], self.de_class_size[self.class_ej[lo:hi]]))
                   for lo, hi in _chunks(len(self.class_ei)))

    @property
    def expandable(self) -> bool:
        """Whether element-level edges may be materialised (at most ``get_config().max_expanded_edges``)."""
        return self.n_expanded_edges <= get_config().max_expanded_edges

    @property
    def prefers_twins(self) -> bool:
        """Whether analyses should run on twin classes: the element graph is not expandable, or is much larger
        than the class graph (> 4 × class edges and > 2e6 edges)."""
        expanded = self.n_expanded_edges
        return not self.expandable or (expanded > 4 * max(1, len(self.class_ei)) and expanded > 2_000_000)

    @cached_property
    def _expanded(self) -> tuple[np.ndarray, np.ndarray]:
        n_edges = self.n_expanded_edges
        if n_edges > get_config().max_expanded_edges:
            raise ModelAssumptionError(
                f"the link graph has {n_edges:,} element-level edges (low-entropy trails); it is analysed "
                f"on {len(self.class_ei):,} twin-class edges instead, but this view needs the expansion")
        id_ptr, id_mem = members(self.id_class, len(self.id_class_size))
        de_ptr, de_mem = members(self.de_class, len(self.de_class_size))
        # vectorised block expansion: class edge e contributes a_e × b_e member pairs, enumerated as t in
        # [0, a_e·b_e) with member offsets (t // b_e, t % b_e); edges come out sorted by (ej, ei) after one sort
        a = self.id_class_size[self.class_ei]
        b = self.de_class_size[self.class_ej]
        counts = a * b
        edge = np.repeat(np.arange(len(counts)), counts)
        t = np.arange(n_edges, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        bb = b[edge]
        ei = id_mem[id_ptr[self.class_ei[edge]] + t // bb]
        ej = de_mem[de_ptr[self.class_ej[edge]] + t % bb]
        del edge, t, bb
        order = np.lexsort((ei, ej))
        return ei[order].astype(np.int64), ej[order].astype(np.int64)

    @property
    def ei(self) -> np.ndarray:
        """Identified row of every element-level link edge (edges sorted by (ej, ei))."""
        return self._expanded[0]

    @property
    def ej(self) -> np.ndarray:
        """De-identified row of every element-level link edge."""
        return self._expanded[1]

    @cached_property
    def _class_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple, tuple]:
        n_ic, n_dc = len(self.id_class_size), len(self.de_class_size)
        by_j = np.searchsorted(self.class_ej, np.arange(n_dc + 1))          # class edges are sorted by ej
        order = np.argsort(self.class_ei, kind="stable")
        by_i = np.searchsorted(self.class_ei[order], np.arange(n_ic + 1))
        return (by_j, by_i, order, self.class_ej[order], members(self.id_class, n_ic),
                members(self.de_class, n_dc))

    def neighbours_of_deidentified(self, j: int) -> np.ndarray:
        """Identified rows linked to de-identified row ``j`` (no null trails), from twin classes: never
        expands the element-level edge list.  O(degree)."""
        by_j, _, _, _, (ip, im), _ = self._class_csr
        cj = self.de_class[j]
        classes = self.class_ei[by_j[cj]:by_j[cj + 1]]
        return np.concatenate([im[ip[c]:ip[c + 1]] for c in classes]) if len(classes) else np.zeros(0, np.int64)

    def neighbours_of_identified(self, i: int) -> np.ndarray:
        """De-identified rows linked to identified row ``i`` (no null trails), from twin classes.  O(degree)."""
        _, by_i, _, cej_sorted, _, (dp, dm) = self._class_csr
        ci = self.id_class[i]
        classes = cej_sorted[by_i[ci]:by_i[ci + 1]]
        return np.concatenate([dm[dp[c]:dp[c + 1]] for c in classes]) if len(classes) else np.zeros(0, np.int64)

    @classmethod
    def from_classes(cls, trails: Trails, id_class: np.ndarray, de_class: np.ndarray, class_ei: np.ndarray,
                     class_ej: np.ndarray, *, n_null: int | None = None,
                     null_side: Side | None = None, presorted: bool = False) -> LinkGraph:
        """A link graph from twin classes and class edges computed elsewhere (e.g. by the Spark engine).

        ``id_class``/``de_class`` give each element's class, numbered 0..k-1 in order of first appearance (as
        :func:`build_linkgraph` numbers them); ``class_ei``/``class_ej`` are the linked class pairs, any order.
        The null padding (§4.2.4) defaults to that of ``trails``; a part of a larger graph passes the whole
        graph's ``n_null``/``null_side``.  ``presorted``: the pairs are distinct int64 arrays sorted by
        (class_ej, class_ei) already, and are kept as they are.  O(|M| + |N| + E_class log E_class).
        """
        id_class = np.asarray(id_class, np.int64)
        de_class = np.asarray(de_class, np.int64)
        n_ic = int(id_class.max()) + 1 if len(id_class) else 0
        n_dc = int(de_class.max()) + 1 if len(de_class) else 0
        id_size = np.bincount(id_class, minlength=n_ic).astype(np.int64)
        de_size = np.bincount(de_class, minlength=n_dc).astype(np.int64)
        if presorted:
            cei, cej = class_ei, class_ej
        else:
            cei, cej = _sorted_pairs(_pair_key(class_ei, class_ej, n_ic), n_ic)
        if n_null is None:
            n_null, null_side = _null_padding(trails, len(id_class), len(de_class))
        return cls(trails, id_class, de_class, id_size, de_size, cei, cej, int(n_null), null_side)

    def components(self) -> tuple[np.ndarray, np.ndarray]:
        """The connected component of every identified and every de-identified row (null trails left out), numbered
        0, 1, ... in order of first appearance (identified rows first); an element without a link edge is a
        component of its own.  Computed on twin classes (twins share their component).  O(|M| + |N| + E_class).

        Examples
        --------
        >>> import graphlink as gl
        >>> graph = gl.build_linkgraph(gl.build_trails(gl.thesis_example()))
        >>> ci, cj = graph.components()
        >>> [str(k) for k in graph.trails.deidentified.keys[cj == ci[0]]]      # Ali's component
        ['actg', 'gatc']
        """
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n_ic, n_dc = len(self.id_class_size), len(self.de_class_size)
        adj = coo_matrix((np.ones(len(self.class_ei), np.int8), (self.class_ei, n_ic + self.class_ej)),
                         shape=(n_ic + n_dc, n_ic + n_dc))
        _, labels = connected_components(adj, directed=False)
        raw = np.concatenate([labels[:n_ic][self.id_class], labels[n_ic:][self.de_class]])
        _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
        rank = np.empty(len(first), np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        out = rank[inverse]
        return out[:self.n_identified], out[self.n_identified:]

    def to_networkx(self, *, classes: object | None = None, component: int | None = None,
                    nulls: bool = False) -> object:
        """The link graph as a ``networkx.Graph`` (``pip install 'graphlink[networkx]'``).

        Nodes are ``("identified", key)`` and ``("deidentified", key)`` with attributes ``side``, ``key`` and
        ``bipartite`` (0 identified, 1 de-identified, networkx's convention); edges are the element-level link
        edges (Definition 17).  With ``classes`` (the analyses' edge classes:
        :class:`graphlink.analysis.matching.EdgeClasses` or, for one-to-many data,
        :class:`graphlink.analysis.onetomany.ManyClasses`, whose ``to_networkx`` passes themselves) every edge
        carries ``class``: ``"true love"`` (in every maximum matching: a certain re-identification), ``"allowed"``
        (in some maximum matching) or ``"link only"`` (in none).

        Parameters
        ----------
        classes : EdgeClasses or ManyClasses, optional
            The classification of this graph's edges (``class_allowed``, ``class_vital`` per class edge).
        component : int, optional
            Only the connected component with this number (:meth:`components`).
        nulls : bool
            Add the symbolic null trails (Definition 18) as nodes ``("null", i)`` on ``null_side``, linked to
            every element of the other side (a null trail fits every trail); with ``classes`` their edges carry
            the class of each element's null edge.  Left out by default: they stand for withheld records.

        Returns
        -------
        networkx.Graph

        Complexity: O(|M| + |N| + E) with E the element-level edges (refused above
        ``GRAPHLINK_MAX_EXPANDED_EDGES``, as every element-level view), plus ``n_null`` × |other side| with
        ``nulls``.

        Examples
        --------
        >>> import graphlink as gl
        >>> g = gl.build_linkgraph(gl.build_trails(gl.thesis_example())).to_networkx()
        >>> g.number_of_nodes(), g.number_of_edges(), g.has_edge(("identified", "Ali"), ("deidentified", "gatc"))
        (8, 5, True)
        """
        from graphlink.errors import require

        nx = require("networkx", "networkx", "the link graph as a networkx graph")
        keys = {"identified": self.trails.identified.keys, "deidentified": self.trails.deidentified.keys}
        keep = {"identified": np.ones(self.n_identified, bool), "deidentified": np.ones(self.n_deidentified, bool)}
        if component is not None:
            ci, cj = self.components()
            keep = {"identified": ci == component, "deidentified": cj == component}
        g = nx.Graph()
        for bip, side in enumerate(("identified", "deidentified")):
            g.add_nodes_from(((side, str(k)), {"side": side, "key": str(k), "bipartite": bip})
                             for k in keys[side][keep[side]])
        ei, ej = self.ei, self.ej
        mask = keep["identified"][ei] & keep["deidentified"][ej]
        label = None
        if classes is not None:
            edge_class = self._edge_class_index()[mask]
            allowed = np.asarray(classes.class_allowed, bool)[edge_class]   # type: ignore[attr-defined]
            vital = np.asarray(classes.class_vital, bool)[edge_class]       # type: ignore[attr-defined]
            label = np.where(vital, "true love", np.where(allowed, "allowed", "link only"))
        pairs = zip(keys["identified"][ei[mask]], keys["deidentified"][ej[mask]], strict=True)
        for n, (a, b) in enumerate(pairs):
            attrs = {"class": str(label[n])} if label is not None else {}
            g.add_edge(("identified", str(a)), ("deidentified", str(b)), **attrs)
        if nulls and self.null_side is not None and self.n_null:
            other = "deidentified" if self.null_side == "identified" else "identified"
            null_allowed = getattr(classes, "null_allowed", None)
            null_vital = getattr(classes, "null_vital", None)
            rows = np.flatnonzero(keep[other])
            for t in range(self.n_null):
                g.add_node(("null", t), side=self.null_side, key=None, bipartite=0 if other == "deidentified" else 1)
                for r in rows:
                    attrs = {}
                    if null_allowed is not None and null_vital is not None:
                        # null trails are interchangeable: one null node's edge is in every maximum matching
                        # only when there is a single null trail
                        vital = bool(null_vital[r]) and self.n_null == 1
                        attrs["class"] = "true love" if vital else "allowed" if null_allowed[r] else "link only"
                    g.add_edge(("null", t), (other, str(keys[other][r])), **attrs)
        return g

    def _edge_class_index(self) -> np.ndarray:
        """The class edge of every element-level edge (``ei``/``ej`` order).  O(E log E_class)."""
        n_dc = len(self.de_class_size)
        key_class = self.class_ei * n_dc + self.class_ej
        order = np.argsort(key_class, kind="stable")
        key_edge = self.id_class[self.ei] * n_dc + self.de_class[self.ej]
        return order[np.searchsorted(key_class[order], key_edge)]

    def degrees(self) -> tuple[np.ndarray, np.ndarray]:
        """Element-level degrees (identified, de-identified) without null trails, from classes.  O(E_class)."""
        n_ic, n_dc = len(self.id_class_size), len(self.de_class_size)
        di_class, dj_class = np.zeros(n_ic), np.zeros(n_dc)      # float64 sums of sizes: exact below 2^53
        for lo, hi in _chunks(len(self.class_ei)):                # 1e6 × 72: 4.5e8 class edges, no E-sized copy
            ei, ej = self.class_ei[lo:hi], self.class_ej[lo:hi]
            di_class += np.bincount(ei, weights=self.de_class_size[ej], minlength=n_ic)
            dj_class += np.bincount(ej, weights=self.id_class_size[ei], minlength=n_dc)
        return di_class[self.id_class].astype(np.int64), dj_class[self.de_class].astype(np.int64)


@dataclass(frozen=True)
class Blocks:
    """Attribute blocks of an attribute linkage set (TR02 Definition 3.1; :mod:`graphlink.qi.als` builds them).

    Per element and relation an integer code, -1 when the value is unknown.  An identified and a de-identified
    element are *compatible* when, for every relation, their codes are equal or one of them is unknown.  The
    link graph then keeps an edge only where both the trails and the blocks allow it.

    Attributes
    ----------
    identified : numpy.ndarray
        ``(|M|, R)`` int64 codes, rows in the order of ``trails.identified.keys``.
    deidentified : numpy.ndarray
        ``(|N|, R)`` int64 codes, rows in the order of ``trails.deidentified.keys``.
    names : tuple of str
        One label per relation (for explanations).

    Examples
    --------
    One relation, gender (code 0 or 1, -1 unknown), on the thesis example: identified Ali, Bob, Charlie, Dan;
    de-identified actg, tgac, ctga (gender unknown), gatc.  The trails allow five edges; gender cuts Ali–gatc.

    >>> import numpy as np
    >>> import graphlink as gl
    >>> trails = gl.build_trails(gl.thesis_example())
    >>> blocks = gl.Blocks(np.array([[0], [1], [0], [1]]), np.array([[0], [0], [-1], [1]]), ("gender",))
    >>> graph = gl.build_linkgraph(trails, blocks=blocks)
    >>> graph.n_expanded_edges
    4
    """

    identified: np.ndarray            # (|M|, R) int64
    deidentified: np.ndarray          # (|N|, R) int64
    names: tuple[str, ...] = ()       # one label per relation (for explanations)


def build_linkgraph(trails: Trails, *, method: Literal["auto", "mask", "bruteforce", "index"] = "auto",
                    progress: Progress | None = None, blocks: Blocks | None = None) -> LinkGraph:
    """Link edges between identified and de-identified trails (Definition 17), twin-compressed.

    Parameters
    ----------
    trails : Trails
        From :func:`graphlink.core.trails.build_trails`.
    method : {"auto", "mask", "bruteforce", "index"}
        Class-link method (module docstring); ``auto`` picks the cheaper.
    blocks : Blocks, optional
        Attribute blocks of an attribute linkage set (:mod:`graphlink.qi.als`).

    Returns
    -------
    LinkGraph
        Twin classes, class edges and the symbolic null trails; element edges on demand.

    Examples
    --------
    >>> import graphlink as gl
    >>> graph = gl.build_linkgraph(gl.build_trails(gl.thesis_example()))
    >>> graph.n_expanded_edges, len(graph.class_ei), graph.n_null
    (5, 5, 0)
    >>> [str(graph.trails.identified.keys[i]) for i in graph.neighbours_of_deidentified(3)]
    ['Ali', 'Dan']

    With ``blocks`` (an attribute linkage set), an edge also needs compatible attribute blocks, and twin classes
    are (trail, block) groups: every analysis (matching, true loves, audit, REIDIT) then runs on the constrained
    graph unchanged.  O(|M| log |M| + |N| log |N|) for the twin classes plus the class-link cost of
    :func:`graphlink.kernels.links.class_links` (plus :func:`graphlink.kernels.links.block_pairs` with blocks).
    """
    # numba: loaded by the analyses that need links only
    from graphlink.kernels.links import class_links, indexed_links, link_method

    M, N = trails.identified, trails.deidentified
    id_rep, id_class = row_classes(M.known, M.ones)
    de_rep, de_class = row_classes(N.known, N.ones)

    if trails.star_side == "identified":
        R, S, r_rep, s_rep = M, N, id_rep, de_rep
    else:
        R, S, r_rep, s_rep = N, M, de_rep, id_rep
    r_known = R.known[r_rep]
    method = link_method(r_known, method) if len(r_rep) else method     # decided once (it groups the '*' masks)
    if blocks is None and len(r_rep) and len(s_rep) and method == "index":
        # the posting-list join hands the pairs over sorted by (class_ej, class_ei): no key sort, 16 bytes per
        # class edge at the peak (the scaling experiment's 1e6 × 72 point: 4.5e8 class edges)
        if trails.star_side == "identified":
            cei, cej = indexed_links(r_known, R.ones[r_rep], S.ones[s_rep], by="complete")
        else:
            cej, cei = indexed_links(r_known, R.ones[r_rep], S.ones[s_rep], by="reserved")
        return LinkGraph.from_classes(trails, id_class, de_class, cei, cej, presorted=True)
    r_idx, s_idx = class_links(r_known, R.ones[r_rep], S.ones[s_rep], method=method, progress=progress)
    if trails.star_side == "identified":
        cei, cej = r_idx, s_idx
    else:
        cei, cej = s_idx, r_idx
    del r_idx, s_idx
    if blocks is not None:
        id_class, de_class, cei, cej = _refine(blocks, M, N, id_class, de_class, cei, cej)
    # the unsorted edges are dropped once keyed, so the sort never holds both (memory: see _sorted_pairs)
    n_ic = int(id_class.max()) + 1 if len(id_class) else 0
    key = _pair_key(cei, cej, n_ic)
    del cei, cej
    return LinkGraph.from_classes(trails, id_class, de_class, *_sorted_pairs(key, n_ic), presorted=True)


def _refine(blocks: Blocks, M: TrailSide, N: TrailSide, id_class: np.ndarray, de_class: np.ndarray,
            cei: np.ndarray, cej: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split trail classes by attribute blocks and keep the compatible sub-class pairs of every trail edge."""
    from graphlink.kernels.links import block_pairs

    codes_m = np.ascontiguousarray(blocks.identified, np.int64).reshape(len(M), -1)
    codes_n = np.ascontiguousarray(blocks.deidentified, np.int64).reshape(len(N), -1)
    if codes_m.shape[1] != codes_n.shape[1]:
        raise ValueError("both sides need one block code per relation")
    refined = []
    for cls, codes in ((id_class, codes_m), (de_class, codes_n)):
        rep, sub = row_classes(cls.astype(np.uint64).reshape(-1, 1), codes.view(np.uint64))
        parent = cls[rep]                                   # trail class of every sub-class
        ptr, members_of = members(parent, int(cls.max()) + 1 if len(cls) else 0)
        refined.append((sub, ptr, members_of, codes[rep]))
    (id_sub, pi, si, ci), (de_sub, pj, sj, cj) = refined
    ei, ej = block_pairs(cei, cej, pi, si, pj, sj, ci, cj)
    return id_sub, de_sub, ei, ej


def _chunks(n: int, size: int = 1 << 24) -> list[tuple[int, int]]:
    """Spans of at most ``size`` edges: per-edge temporaries stay at a chunk's size."""
    return [(lo, min(n, lo + size)) for lo in range(0, n, size)]


def _pair_key(ei: np.ndarray, ej: np.ndarray, n_i: int) -> np.ndarray:
    """One int64 key ``ej·n_i + ei`` per class pair: sorting it sorts the pairs by (ej, ei).  O(E), 8 B per edge."""
    key = np.asarray(ej, np.int64) * np.int64(max(n_i, 1))
    key += np.asarray(ei, np.int64)
    return key


def _sorted_pairs(key: np.ndarray, n_i: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of :func:`_pair_key`'s ``key`` (which it sorts in place and reuses), sorted by (ej, ei), as int64
    (ei, ej).  Peak 16 bytes per edge, where ``np.lexsort`` and the two gathers it needs hold 40 (with the inputs):
    the difference between fitting in memory or not at 1e6 subjects × 72 locations.  O(E log E)."""
    key.sort()
    cej = key // max(n_i, 1)
    np.remainder(key, max(n_i, 1), out=key)       # key now holds ei
    return key, cej


def _null_padding(trails: Trails, n_m: int, n_n: int) -> tuple[int, Side | None]:
    """§4.2.4: pad the reserved side with null trails up to the complete side's size."""
    if trails.reserved == "deidentified" and n_m > n_n:
        return n_m - n_n, "deidentified"
    if trails.reserved == "identified" and n_n > n_m:
        return n_n - n_m, "identified"
    return 0, None


def side_arrays(graph: LinkGraph, side: Side) -> TrailSide:
    return graph.trails.identified if side == "identified" else graph.trails.deidentified
