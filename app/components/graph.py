"""Bipartite link-graph view built on st-cytoscape (Cytoscape.js), limited to a small subgraph.

The subgraph is one element's neighbourhood (breadth-first over link edges, capped) or one connected
component; the whole graph is never sent to the browser when it is large. Edge classes come from
``graphlink.matching.classify_edges`` (EdgeClasses.vital / allowed / mate_*); nothing is recomputed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.components.charts import OKABE_ITO

#: edge class -> (legend text, colour, line style, width); mutually exclusive, most specific first
EDGE_STYLES: dict[str, tuple[str, str, str, float]] = {
    "truelove": ("True love: in every maximum matching (certain re-identification)", OKABE_ITO["blue"],
                 "solid", 6.0),
    "matching": ("In the maximum matching shown (not in every one)", OKABE_ITO["vermillion"], "dashed", 4.0),
    "allowed": ("Allowed: in some other maximum matching", OKABE_ITO["purple"], "dotted", 3.0),
    "link": ("Link only: in no maximum matching", OKABE_ITO["grey"], "solid", 1.2),
}
Z_ORDER = {"truelove": 4, "matching": 3, "allowed": 2, "link": 1}
NODE_STYLES = {
    "identified": ("Identified element (left, rounded square)", OKABE_ITO["sky"], "round-rectangle"),
    "deidentified": ("De-identified element (right, diamond)", OKABE_ITO["yellow"], "diamond"),
}


@dataclass(frozen=True)
class Subgraph:
    """Rows of each side and the link-edge indices (into LinkGraph.ei/ej) between them."""

    identified: np.ndarray
    deidentified: np.ndarray
    edges: np.ndarray
    truncated: bool


def _edges_between(g: Any, id_rows: np.ndarray, de_rows: np.ndarray) -> np.ndarray:
    mask = np.isin(g.ej, de_rows) & np.isin(g.ei, id_rows)
    return np.flatnonzero(mask)


def neighbourhood(g: Any, side: str, row: int, hops: int = 2, max_nodes: int = 120) -> Subgraph:
    """Breadth-first neighbourhood of one element over link edges, stopping at ``max_nodes`` nodes."""
    seen: dict[str, set[int]] = {"identified": set(), "deidentified": set()}
    seen[side].add(int(row))
    frontier = [(side, int(row))]
    truncated = False
    for _ in range(hops):
        nxt: list[tuple[str, int]] = []
        for s, r in frontier:
            if s == "identified":
                other, nb = "deidentified", g.neighbours_of_identified(r)
            else:
                other, nb = "identified", g.neighbours_of_deidentified(r)
            for v in np.asarray(nb).tolist():
                if v in seen[other]:
                    continue
                if len(seen["identified"]) + len(seen["deidentified"]) >= max_nodes:
                    truncated = True
                    break
                seen[other].add(int(v))
                nxt.append((other, int(v)))
        frontier = nxt
        if not frontier:
            break
    id_rows = np.array(sorted(seen["identified"]), dtype=np.int64)
    de_rows = np.array(sorted(seen["deidentified"]), dtype=np.int64)
    return Subgraph(id_rows, de_rows, _edges_between(g, id_rows, de_rows), truncated)


def component(g: Any, labels_id: np.ndarray, labels_de: np.ndarray, comp: int) -> Subgraph:
    id_rows = np.flatnonzero(labels_id == comp).astype(np.int64)
    de_rows = np.flatnonzero(labels_de == comp).astype(np.int64)
    return Subgraph(id_rows, de_rows, _edges_between(g, id_rows, de_rows), False)


def edge_class(cls: Any, e: int) -> str:
    g = cls.graph
    if bool(cls.vital[e]):
        return "truelove"
    if int(cls.mate_identified[g.ei[e]]) == int(g.ej[e]):
        return "matching"
    if bool(cls.allowed[e]):
        return "allowed"
    return "link"


def node_id(side: str, key: str) -> str:
    return f"{'I' if side == 'identified' else 'D'}:{key}"


def parse_node_id(nid: str) -> tuple[str, str]:
    prefix, key = nid.split(":", 1)
    return ("identified" if prefix == "I" else "deidentified"), key


def elements(cls: Any, sub: Subgraph, focus: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """Cytoscape elements with a two-column preset layout (identified left, de-identified right)."""
    g = cls.graph
    tr = g.trails
    id_keys = np.asarray(tr.identified.keys, dtype=object)
    de_keys = np.asarray(tr.deidentified.keys, dtype=object)
    vital_i = np.zeros(len(id_keys), dtype=bool)
    vital_d = np.zeros(len(de_keys), dtype=bool)
    vital_i[g.ei[cls.vital]] = True
    vital_d[g.ej[cls.vital]] = True

    # order de-identified by key, identified by the barycentre of their neighbours (fewer crossings)
    de_order = {int(r): k for k, r in enumerate(sub.deidentified)}
    bary: dict[int, list[int]] = {int(r): [] for r in sub.identified}
    for e in sub.edges:
        bary[int(g.ei[e])].append(de_order[int(g.ej[e])])
    id_sorted = sorted(bary, key=lambda r: (np.mean(bary[r]) if bary[r] else 1e9, r))
    gap = 70
    n_max = max(len(id_sorted), len(sub.deidentified), 1)
    out: list[dict[str, Any]] = []

    def add_node(side: str, row: int, y: float) -> None:
        key = str(id_keys[row] if side == "identified" else de_keys[row])
        classes = [side]
        if (vital_i if side == "identified" else vital_d)[row]:
            classes.append("reidentified")
        if focus is not None and focus == (side, key):
            classes.append("focus")
        out.append({"data": {"id": node_id(side, key), "label": key},
                    "position": {"x": 0 if side == "identified" else 420, "y": y},
                    "classes": " ".join(classes)})

    off_i = (n_max - len(id_sorted)) * gap / 2
    off_d = (n_max - len(sub.deidentified)) * gap / 2
    for k, r in enumerate(id_sorted):
        add_node("identified", r, off_i + k * gap)
    for k, r in enumerate(sub.deidentified.tolist()):
        add_node("deidentified", int(r), off_d + k * gap)
    for e in sub.edges.tolist():
        out.append({"data": {"id": f"e{e}", "source": node_id("identified", str(id_keys[g.ei[e]])),
                             "target": node_id("deidentified", str(de_keys[g.ej[e]]))},
                    "classes": edge_class(cls, e), "selectable": False})
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
    return sheet


def legend_markdown() -> str:
    """Legend describing colour *and* line style / shape, so it reads without colour vision."""
    rows = []
    for _, (text, colour, shape) in NODE_STYLES.items():
        rows.append(f"<span style='display:inline-block;width:14px;height:14px;background:{colour};"
                    f"border:1px solid #333;border-radius:{'3px' if shape != 'diamond' else '0'};"
                    f"{'transform:rotate(45deg);' if shape == 'diamond' else ''}'></span>&nbsp;{text}")
    rows.append(f"<span style='display:inline-block;width:14px;height:14px;border:4px solid "
                f"{OKABE_ITO['blue']};border-radius:3px'></span>&nbsp;Thick blue border: re-identified "
                "with certainty (true love)")
    for _, (text, colour, line, width) in EDGE_STYLES.items():
        rows.append(f"<span style='display:inline-block;width:36px;vertical-align:middle;"
                    f"border-top:{max(width, 1.5):.0f}px {line} {colour}'></span>&nbsp;{text} "
                    f"<em>({line} line)</em>")
    return "<br>".join(rows)
