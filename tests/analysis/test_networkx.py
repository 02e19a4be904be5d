"""The link graph as a networkx graph (``LinkGraph.to_networkx``, ``EdgeClasses.to_networkx``): nodes, edges and
each edge's class, per component too; the classes and the maximum matching cross-checked against networkx's
Hopcroft–Karp on small random releases (an independent implementation: an edge is in some maximum matching when
removing its two ends lowers the matching size by exactly one, in every one when removing the edge lowers it)."""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings

from graphlink.analysis.matching import classify_edges
from graphlink.analysis.onetomany import classify_one_to_many
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails, trails_from_dense
from graphlink.errors import MissingExtraError
from graphlink.io.examples import DATA
from tests.analysis.test_matching import instances

FIG34 = DATA / "thesis_fig3_4.csv"


def _nu(g: nx.Graph) -> int:
    """Maximum matching size by networkx's Hopcroft–Karp, per connected component (its bipartite sets)."""
    total = 0
    for part in nx.connected_components(g):
        sub = g.subgraph(part)
        top = {n for n in part if sub.nodes[n]["bipartite"] == 0}
        total += len(nx.bipartite.hopcroft_karp_matching(sub, top_nodes=top)) // 2
    return total


def test_thesis_example_edges_carry_their_class():
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    g = classify_edges(graph).to_networkx()
    assert g.number_of_nodes() == 8 and nx.is_bipartite(g)
    classes = {(u[1], v[1]) if u[0] == "identified" else (v[1], u[1]): c for u, v, c in g.edges(data="class")}
    # Malin 2006 Fig. 3.4: the four true loves, and Ali's second link, to gatc, in no maximum matching
    assert classes == {("Ali", "actg"): "true love", ("Bob", "ctga"): "true love",
                       ("Charlie", "tgac"): "true love", ("Dan", "gatc"): "true love", ("Ali", "gatc"): "link only"}
    plain = graph.to_networkx()
    assert set(plain.edges) == set(g.edges) and all(c is None for _, _, c in plain.edges(data="class"))
    assert {d["side"] for _, d in g.nodes(data=True)} == {"identified", "deidentified"}


def test_components_partition_the_graph():
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    whole = classify_edges(graph).to_networkx()
    ci, cj = graph.components()
    parts = [classify_edges(graph).to_networkx(component=c) for c in range(int(max(ci.max(), cj.max())) + 1)]
    assert all(nx.is_connected(p) for p in parts)
    assert sorted(len(p) for p in parts) == sorted(len(c) for c in nx.connected_components(whole))
    assert set().union(*(set(p.edges(data="class")) for p in parts)) == set(whole.edges(data="class"))


@settings(max_examples=60, deadline=None)
@given(instances())
def test_matching_and_classes_equal_networkx(inst):
    M, N, reserved = inst
    graph = build_linkgraph(trails_from_dense(M, N, reserved=reserved))
    classes = classify_edges(graph)
    g = classes.to_networkx(nulls=True)
    nu = _nu(g)
    assert nu == classes.nu                                       # null trails matched too, as the core counts
    for u, v, cls in g.edges(data="class"):
        if "null" in (u[0], v[0]):
            continue                                              # interchangeable null trails: checked as a whole
        without_ends = g.copy()
        without_ends.remove_nodes_from([u, v])
        allowed = _nu(without_ends) == nu - 1
        without_edge = g.copy()
        without_edge.remove_edge(u, v)
        vital = _nu(without_edge) == nu - 1
        assert cls == ("true love" if vital else "allowed" if allowed else "link only"), (u, v)


def test_one_to_many_classes_name_the_certain_pairs():
    rows = [("L1", "identified", "a"), ("L1", "identified", "b"), ("L1", "deidentified", "x"),
            ("L2", "identified", "c"), ("L2", "deidentified", "y")]
    import pandas as pd

    rel = read_release(pd.DataFrame(rows, columns=["location", "kind", "element"]))
    graph = build_linkgraph(build_trails(rel, "identified", "one-to-many"))
    mc = classify_one_to_many(graph)
    g = mc.to_networkx()
    certain = {(u[1], v[1]) if u[0] == "identified" else (v[1], u[1]) for u, v, c in g.edges(data="class")
               if c == "true love"}
    m, n = mc.true_love_pairs
    keys_m, keys_n = graph.trails.identified.keys, graph.trails.deidentified.keys
    assert certain == {(str(keys_m[i]), str(keys_n[j])) for i, j in zip(np.asarray(m), np.asarray(n), strict=True)}


def test_without_networkx_one_line_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "networkx", None)        # an import of it raises ImportError
    graph = build_linkgraph(build_trails(read_release(FIG34)))
    with pytest.raises(MissingExtraError, match=r"graphlink\[networkx\]"):
        graph.to_networkx()
