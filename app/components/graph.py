"""Bipartite link-graph view built on st-cytoscape (Cytoscape.js), limited to a small subgraph.

The subgraph is one element's neighbourhood (breadth-first over link edges, capped) or one connected
component; the whole graph is never sent to the browser when it is large. Edge classes come from
``graphlink.analysis.matching.classify_edges`` (EdgeClasses.class_vital / class_allowed / mate_identified); nothing
is recomputed here. Lookups use the library's twin-class edges, never the expanded element edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlink_app.components.charts import OKABE_ITO

#: edge class -> (legend text, colour, line style, width); mutually exclusive, most specific first
EDGE_STYLES: dict[str, tuple[str, str, str, float]] = {
    "truelove": ("True love: in every maximum matching (certain re-identification)", OKABE_ITO["blue"],
                 "solid", 6.0),
    "matching": ("In the maximum matching shown (not in every one)", OKABE_ITO["vermillion"], "dashed", 4.0),
    "allowed": ("Allowed: in some other maximum matching", OKABE_ITO["purple"], "dotted", 3.0),
    "link": ("Link only: in no maximum matching", OKABE_ITO["grey"], "solid", 1.2),
}
Z_ORDER = {"truelove": 4, "matching": 3, "allowed": 2, "link": 1}
#: the same classes on a release read as one-to-many (several people per de-identified element), where there is
#: no matching: a certain pair holds in every consistent assignment of people to households, a possible pair in
#: some (Malin 2006, Appendix A; graphlink.analysis.onetomany)
MANY_EDGE_TEXTS = {
    "truelove": "Certain pair: in every consistent assignment (certain re-identification)",
    "matching": "In the consistent assignment shown (not in every one)",
    "allowed": "Possible pair: in some other consistent assignment",
    "link": "Link only: in no consistent assignment",
}


def edge_texts(one_to_many: bool = False) -> dict[str, str]:
    """The legend text of each edge class under the reading of the release: maximum matchings and true loves for
    one-to-one releases, consistent assignments and certain / possible pairs for one-to-many ones."""
    return dict(MANY_EDGE_TEXTS) if one_to_many else {k: v[0] for k, v in EDGE_STYLES.items()}


def edge_labels(one_to_many: bool = False) -> dict[str, str]:
    """The short name of each edge class (the legend text before its colon) for the candidates table."""
    return {k: v.split(":")[0] for k, v in edge_texts(one_to_many).items()}
NODE_STYLES = {
    "identified": ("Identified element (left, rounded square)", OKABE_ITO["sky"], "round-rectangle"),
    "deidentified": ("De-identified element (right, diamond)", OKABE_ITO["yellow"], "diamond"),
}


@dataclass(frozen=True)
class ClassIndex:
    """Lookup tables over the library's twin-class link graph (LinkGraph.class_ei/class_ej, id_class,
    de_class), so that neighbourhoods and edge classes are found without expanding every element-level
    edge (a 10 000-subject release can have ~10^7 element edges but only ~10^4 class edges)."""

    id_ptr: np.ndarray
    id_members: np.ndarray
    de_ptr: np.ndarray
    de_members: np.ndarray
    by_de_ptr: np.ndarray          # class edges are sorted by (class_ej, class_ei)
    by_id_order: np.ndarray
    by_id_ptr: np.ndarray
    key_order: np.ndarray
    key_sorted: np.ndarray
    n_de_classes: int


def _csr(labels: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(labels, kind="stable")
    return np.searchsorted(labels[order], np.arange(n + 1)), order


def build_index(g: Any) -> ClassIndex:
    n_ic, n_dc = len(g.id_class_size), len(g.de_class_size)
    id_ptr, id_members = _csr(np.asarray(g.id_class), n_ic)
    de_ptr, de_members = _csr(np.asarray(g.de_class), n_dc)
    cej = np.asarray(g.class_ej)
    cei = np.asarray(g.class_ei)
    by_de_ptr = np.searchsorted(cej, np.arange(n_dc + 1))
    by_id_ptr, by_id_order = _csr(cei, n_ic)
    keys = cei.astype(np.int64) * n_dc + cej
    key_order = np.argsort(keys, kind="stable")
    return ClassIndex(id_ptr, id_members, de_ptr, de_members, by_de_ptr, by_id_order, by_id_ptr, key_order,
                      keys[key_order], n_dc)


def neighbours(g: Any, ix: ClassIndex, side: str, row: int) -> np.ndarray:
    """Rows on the other side linked to ``row`` (sorted), from the class-level edges."""
    if side == "identified":
        c = int(g.id_class[row])
        other = np.asarray(g.class_ej)[ix.by_id_order[ix.by_id_ptr[c]:ix.by_id_ptr[c + 1]]]
        ptr, members = ix.de_ptr, ix.de_members
    else:
        c = int(g.de_class[row])
        other = np.asarray(g.class_ei)[ix.by_de_ptr[c]:ix.by_de_ptr[c + 1]]
        ptr, members = ix.id_ptr, ix.id_members
    if len(other) == 0:
        return np.zeros(0, np.int64)
    return np.sort(np.concatenate([members[ptr[k]:ptr[k + 1]] for k in other.tolist()]))


def edge_lookup(g: Any, ix: ClassIndex, id_rows: np.ndarray, de_rows: np.ndarray) -> np.ndarray:
    """Class-edge index of each (identified, de-identified) pair, -1 where the pair is not linked."""
    keys = np.asarray(g.id_class)[id_rows].astype(np.int64) * ix.n_de_classes + np.asarray(g.de_class)[de_rows]
    pos = np.searchsorted(ix.key_sorted, keys)
    pos_c = np.minimum(pos, max(len(ix.key_sorted) - 1, 0))
    hit = (len(ix.key_sorted) > 0) & (ix.key_sorted[pos_c] == keys) if len(keys) else np.zeros(0, bool)
    return np.where(hit, ix.key_order[pos_c], -1)


@dataclass(frozen=True)
class Subgraph:
    """Rows of each side and the linked pairs between them (with their class-edge index)."""

    identified: np.ndarray
    deidentified: np.ndarray
    edge_i: np.ndarray
    edge_j: np.ndarray
    edge_class: np.ndarray
    truncated: bool

    @property
    def n_nodes(self) -> int:
        return len(self.identified) + len(self.deidentified)


def _subgraph(g: Any, ix: ClassIndex, id_rows: np.ndarray, de_rows: np.ndarray, truncated: bool) -> Subgraph:
    ii, jj = np.meshgrid(id_rows, de_rows, indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    ce = edge_lookup(g, ix, ii, jj)
    keep = ce >= 0
    return Subgraph(id_rows, de_rows, ii[keep], jj[keep], ce[keep], truncated)


RANK = {"truelove": 0, "matching": 1, "allowed": 2, "link": 3}


def ranked_neighbours(cls: Any, ix: ClassIndex, side: str, row: int) -> tuple[np.ndarray, list[str]]:
    """Neighbours of ``row`` with their edge class, most informative first (true love, matching partner,
    allowed, link only; ties by row)."""
    g = cls.graph
    nb = neighbours(g, ix, side, row)
    if len(nb) == 0:
        return nb, []
    rows_i = np.full(len(nb), row) if side == "identified" else nb
    rows_j = nb if side == "identified" else np.full(len(nb), row)
    ce = edge_lookup(g, ix, rows_i, rows_j)
    rank = np.where(np.asarray(cls.class_vital)[ce], 0,
                    np.where(np.asarray(cls.mate_identified)[rows_i] == rows_j, 1,
                             np.where(np.asarray(cls.class_allowed)[ce], 2, 3)))
    order = np.lexsort((nb, rank))
    names = list(RANK)
    return nb[order], [names[r] for r in rank[order].tolist()]


def neighbourhood(cls: Any, ix: ClassIndex, side: str, row: int, hops: int = 2,
                  max_nodes: int = 60) -> Subgraph:
    """Breadth-first neighbourhood of one element over link edges, most informative neighbours first,
    stopping at ``max_nodes`` nodes."""
    g = cls.graph
    seen: dict[str, set[int]] = {"identified": set(), "deidentified": set()}
    seen[side].add(int(row))
    frontier = [(side, int(row))]
    truncated = False
    for _ in range(hops):
        nxt: list[tuple[str, int]] = []
        for s, r in frontier:
            other = "deidentified" if s == "identified" else "identified"
            nb, _ = ranked_neighbours(cls, ix, s, r)
            for v in nb.tolist():
                if v in seen[other]:
                    continue
                if len(seen["identified"]) + len(seen["deidentified"]) >= max_nodes:
                    truncated = True
                    break
                seen[other].add(int(v))
                nxt.append((other, int(v)))
            if truncated:
                break
        frontier = nxt
        if not frontier or truncated:
            break
    id_rows = np.array(sorted(seen["identified"]), dtype=np.int64)
    de_rows = np.array(sorted(seen["deidentified"]), dtype=np.int64)
    return _subgraph(g, ix, id_rows, de_rows, truncated)


def component(g: Any, ix: ClassIndex, labels_id: np.ndarray, labels_de: np.ndarray, comp: int) -> Subgraph:
    id_rows = np.flatnonzero(labels_id == comp).astype(np.int64)
    de_rows = np.flatnonzero(labels_de == comp).astype(np.int64)
    return _subgraph(g, ix, id_rows, de_rows, False)


def whole(g: Any, ix: ClassIndex) -> Subgraph:
    """Every element and link edge (only for graphs small enough to draw: the caller checks the size)."""
    id_rows = np.arange(len(g.trails.identified.keys), dtype=np.int64)
    de_rows = np.arange(len(g.trails.deidentified.keys), dtype=np.int64)
    return _subgraph(g, ix, id_rows, de_rows, False)


def thinned(cls: Any, sub: Subgraph, side: str, row: int) -> Subgraph:
    """``sub`` with only the edges a reader follows: those of the focus element (``side``, ``row``) and those in
    the maximum matching shown or in every maximum matching; the nodes stay."""
    keep = np.zeros(len(sub.edge_i), dtype=bool)
    keep |= (sub.edge_i == row) if side == "identified" else (sub.edge_j == row)
    keep |= np.asarray(cls.class_vital)[sub.edge_class]
    keep |= np.asarray(cls.mate_identified)[sub.edge_i] == sub.edge_j
    return Subgraph(sub.identified, sub.deidentified, sub.edge_i[keep], sub.edge_j[keep], sub.edge_class[keep],
                    sub.truncated)


def edge_class(cls: Any, i: int, j: int, class_edge: int) -> str:
    """Display class of one link edge from EdgeClasses (class_vital / class_allowed / mate_identified)."""
    if bool(cls.class_vital[class_edge]):
        return "truelove"
    if int(cls.mate_identified[i]) == int(j):
        return "matching"
    if bool(cls.class_allowed[class_edge]):
        return "allowed"
    return "link"


def node_id(side: str, key: str) -> str:
    return f"{'I' if side == 'identified' else 'D'}:{key}"


def parse_node_id(nid: str) -> tuple[str, str]:
    prefix, key = nid.split(":", 1)
    return ("identified" if prefix == "I" else "deidentified"), key


def probability_texts(risk: Any, class_edges: np.ndarray) -> list[str]:
    """Each class edge's pair probability in words (:func:`app.components.words.probability_words`), from a
    ``RiskResult``; O(len(class_edges))."""
    from graphlink_app.components.words import probability_words

    ce = np.asarray(class_edges, np.int64)
    return [probability_words(p, x, e) for p, x, e in zip(np.asarray(risk.class_probability)[ce].tolist(),
                                                          np.asarray(risk.class_exact)[ce].tolist(),
                                                          np.asarray(risk.class_error)[ce].tolist(), strict=True)]


def elements(cls: Any, sub: Subgraph, focus: tuple[str, str] | None = None,
             risk: Any = None) -> list[dict[str, Any]]:
    """Cytoscape elements with a two-column preset layout (identified left, de-identified right); with a
    ``RiskResult``, every edge carries its probability in words (``probability``: :func:`stylesheet` shows it
    while the edge is pressed)."""
    g = cls.graph
    tr = g.trails
    id_keys = tr.identified.keys
    de_keys = tr.deidentified.keys
    ti, tj = cls.true_love_pairs
    vital_i, vital_d = set(np.asarray(ti).tolist()), set(np.asarray(tj).tolist())

    # order de-identified by key, identified by the barycentre of their neighbours (fewer crossings)
    de_order = {int(r): k for k, r in enumerate(sub.deidentified)}
    bary: dict[int, list[int]] = {int(r): [] for r in sub.identified}
    for i, j in zip(sub.edge_i.tolist(), sub.edge_j.tolist(), strict=True):
        bary[i].append(de_order[j])
    id_sorted = sorted(bary, key=lambda r: (float(np.mean(bary[r])) if bary[r] else 1e9, r))
    gap = 70
    n_max = max(len(id_sorted), len(sub.deidentified), 1)
    x_right = max(420.0, 0.45 * gap * n_max)   # keep a readable aspect ratio for tall (star-shaped) views
    out: list[dict[str, Any]] = []

    def add_node(side: str, row: int, y: float) -> None:
        key = str(id_keys[row] if side == "identified" else de_keys[row])
        classes = [side]
        if row in (vital_i if side == "identified" else vital_d):
            classes.append("reidentified")
        if focus is not None and focus == (side, key):
            classes.append("focus")
        out.append({"data": {"id": node_id(side, key), "label": key},
                    "position": {"x": 0 if side == "identified" else x_right, "y": y},
                    "classes": " ".join(classes)})

    off_i = (n_max - len(id_sorted)) * gap / 2
    off_d = (n_max - len(sub.deidentified)) * gap / 2
    for k, r in enumerate(id_sorted):
        add_node("identified", r, off_i + k * gap)
    for k, r in enumerate(sub.deidentified.tolist()):
        add_node("deidentified", int(r), off_d + k * gap)
    texts = probability_texts(risk, sub.edge_class) if risk is not None else [None] * len(sub.edge_i)
    for i, j, ce, text in zip(sub.edge_i.tolist(), sub.edge_j.tolist(), sub.edge_class.tolist(), texts,
                              strict=True):
        data = {"id": f"e{i}_{j}", "source": node_id("identified", str(id_keys[i])),
                "target": node_id("deidentified", str(de_keys[j]))}
        if text is not None:
            data["probability"] = f"probability {text}"
        out.append({"data": data, "classes": edge_class(cls, i, j, ce), "selectable": False})
    return out


def stylesheet() -> list[dict[str, Any]]:
    sheet: list[dict[str, Any]] = [
        {"selector": "node", "style": {"label": "data(label)", "font-size": 15, "color": "#111111",
                                       "text-valign": "center", "width": 24, "height": 24,
                                       "border-width": 1, "border-color": "#333333"}},
        {"selector": "node.identified", "style": {"text-halign": "left", "text-margin-x": -6}},
        {"selector": "node.deidentified", "style": {"text-halign": "right", "text-margin-x": 6}},
        {"selector": "node.reidentified", "style": {"border-width": 4, "border-color": OKABE_ITO["blue"]}},
        {"selector": "node.focus", "style": {"border-width": 5, "border-color": OKABE_ITO["vermillion"],
                                             "width": 32, "height": 32, "font-weight": "bold"}},
        {"selector": "node:selected", "style": {"border-width": 5, "border-color": OKABE_ITO["black"]}},
        {"selector": "edge", "style": {"curve-style": "straight"}},
    ]
    for side, (_, colour, shape) in NODE_STYLES.items():
        sheet.insert(1, {"selector": f"node.{side}", "style": {"background-color": colour, "shape": shape}})
    for cls_name, (_, colour, line, width) in EDGE_STYLES.items():
        sheet.append({"selector": f"edge.{cls_name}",
                      "style": {"line-color": colour, "line-style": line, "width": width,
                                "z-index": Z_ORDER[cls_name]}})
    # Cytoscape.js has no hover state and the component passes no mouse events: an edge's probability is its
    # label while the pointer presses it (``:active``, touch screens included); last, so it wins
    sheet.append({"selector": "edge[probability]:active",
                  "style": {"label": "data(probability)", "font-size": 14, "color": "#111111",
                            "text-background-color": "#ffffff", "text-background-opacity": 0.9,
                            "text-background-padding": 3, "z-index": 10}})
    return sheet


def legend_markdown(one_to_many: bool = False) -> str:
    """Legend describing colour *and* line style / shape, so it reads without colour vision, in the words of the
    release's reading (:func:`edge_texts`)."""
    rows = []
    for _, (text, colour, shape) in NODE_STYLES.items():
        rows.append(f"<span style='display:inline-block;width:14px;height:14px;background:{colour};"
                    f"border:1px solid #333;border-radius:{'3px' if shape != 'diamond' else '0'};"
                    f"{'transform:rotate(45deg);' if shape == 'diamond' else ''}'></span>&nbsp;{text}")
    rows.append(f"<span style='display:inline-block;width:14px;height:14px;border:4px solid "
                f"{OKABE_ITO['blue']};border-radius:3px'></span>&nbsp;Thick blue border: re-identified "
                "with certainty (" + ("certain pair" if one_to_many else "true love") + ")")
    rows.append(f"<span style='display:inline-block;width:14px;height:14px;border:4px solid "
                f"{OKABE_ITO['vermillion']};border-radius:3px'></span>&nbsp;Vermillion border: the element "
                "picked in the list; black border: the node you clicked")
    texts = edge_texts(one_to_many)
    for cls_name, (_, colour, line, width) in EDGE_STYLES.items():
        text = texts[cls_name]
        rows.append(f"<span style='display:inline-block;width:36px;vertical-align:middle;"
                    f"border-top:{max(width, 1.5):.0f}px {line} {colour}'></span>&nbsp;{text} "
                    f"<em>({line} line)</em>")
    return "<br>".join(rows)
