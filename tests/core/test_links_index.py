"""The posting-list join of link edges against the definition of a link (Definition 17), checked by hypothesis.

A de-identified trail links an identified one when they agree at every location where neither is ``*``.  The
oracle below reads that sentence on the dense matrices (1, 0, -1 for ``*``), pair by pair, and knows nothing of
packed words, posting lists or twin classes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.trails import trails_from_dense
from graphlink.kernels.links import class_links, first_links, indexed_links


def _links_by_definition(identified: np.ndarray, deidentified: np.ndarray) -> set[tuple[int, int]]:
    pairs = set()
    for i, a in enumerate(identified):
        for j, b in enumerate(deidentified):
            if all(x == -1 or y == -1 or x == y for x, y in zip(a, b, strict=True)):
                pairs.add((i, j))
    return pairs


@st.composite
def releases(draw) -> tuple[np.ndarray, np.ndarray, str]:
    """Small dense trails on either reserved side, with few distinct rows (twins) and up to 130 locations, so
    packed rows span up to three words; '*' per entry or mostly known."""
    n_loc = draw(st.sampled_from([1, 3, 7, 64, 65, 130]))
    reserved = draw(st.sampled_from(["identified", "deidentified"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_id, n_de = draw(st.integers(1, 14)), draw(st.integers(1, 14))
    p_one, p_star = draw(st.sampled_from([0.05, 0.3, 0.7])), draw(st.sampled_from([0.0, 0.2, 0.6, 0.95]))

    def side(n: int, stars: bool) -> np.ndarray:
        base = (rng.random((max(1, n // 2), n_loc)) < p_one).astype(np.int8)
        rows = base[rng.integers(0, len(base), n)]           # repeated rows: twin classes
        if stars:
            rows = np.where(rng.random(rows.shape) < p_star, np.int8(-1), rows)
        return rows

    identified = side(n_id, reserved == "identified")
    deidentified = side(n_de, reserved == "deidentified")
    if draw(st.booleans()):                                   # plant links: a reserved row copied from the other side
        k = min(n_id, n_de)
        if reserved == "identified":
            identified[:k] = np.where(identified[:k] == -1, -1, deidentified[:k])
        else:
            deidentified[:k] = np.where(deidentified[:k] == -1, -1, identified[:k])
    return identified, deidentified, reserved


@settings(max_examples=250, deadline=None)
@given(releases())
def test_link_graph_by_posting_lists_equals_the_definition(case) -> None:
    identified, deidentified, reserved = case
    trails = trails_from_dense(identified, deidentified, reserved=reserved)
    graph = build_linkgraph(trails, method="index")
    id_of = [np.flatnonzero(graph.id_class == c) for c in range(len(graph.id_class_size))]
    de_of = [np.flatnonzero(graph.de_class == c) for c in range(len(graph.de_class_size))]
    got = {(int(i), int(j)) for a, b in zip(graph.class_ei, graph.class_ej, strict=True)
           for i in id_of[a] for j in de_of[b]}
    assert got == _links_by_definition(identified, deidentified)
    # the graph's contract: class pairs distinct and sorted by (class_ej, class_ei)
    key = graph.class_ej * max(1, len(graph.id_class_size)) + graph.class_ei
    assert np.all(np.diff(key) > 0)


@settings(max_examples=150, deadline=None)
@given(releases(), st.sampled_from(["reserved", "complete"]))
def test_indexed_links_return_every_linked_pair_in_the_order_asked(case, by) -> None:
    identified, deidentified, reserved = case
    trails = trails_from_dense(identified, deidentified, reserved=reserved)
    R, S = ((trails.identified, trails.deidentified) if reserved == "identified"
            else (trails.deidentified, trails.identified))
    r_idx, s_idx = indexed_links(R.known, R.ones, S.ones, by=by)
    dense_r, dense_s = (identified, deidentified) if reserved == "identified" else (deidentified, identified)
    expected = _links_by_definition(dense_r, dense_s)
    assert list(zip(r_idx.tolist(), s_idx.tolist(), strict=True)) == sorted(
        expected, key=(lambda p: p) if by == "reserved" else (lambda p: (p[1], p[0])))
    # the brute force the posting lists replaced, and the pattern grouping, give the same set
    for method in ("bruteforce", "mask"):
        a, b = class_links(R.known, R.ones, S.ones, method=method)
        assert set(zip(a.tolist(), b.tolist(), strict=True)) == expected


def test_a_reserved_row_that_knows_nothing_links_every_complete_row() -> None:
    trails = trails_from_dense(np.array([[-1, -1], [1, -1]]), np.array([[1, 0], [0, 1], [1, 1]]),
                               reserved="identified")
    r_idx, s_idx = indexed_links(trails.identified.known, trails.identified.ones, trails.deidentified.ones)
    assert list(zip(r_idx.tolist(), s_idx.tolist(), strict=True)) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2)]


@settings(max_examples=250, deadline=None)
@given(releases())
def test_first_links_by_posting_lists_equals_the_definition(case) -> None:
    """The data-model decision's test (one partner per reserved row, or none) scans one posting list per row;
    it must name a partner exactly when the definition finds one, and the same partner as a scan of every
    complete row in decreasing number of ones (the first linked one)."""
    identified, deidentified, reserved = case
    trails = trails_from_dense(identified, deidentified, reserved=reserved)
    (R, r_dense), (S, s_dense) = ((trails.identified, identified), (trails.deidentified, deidentified))
    if reserved == "deidentified":
        (R, r_dense), (S, s_dense) = (S, s_dense), (R, r_dense)
    hit = first_links(R.known, R.ones, S.ones)
    scan_order = np.argsort(-(s_dense == 1).sum(axis=1), kind="stable")
    for i, r in enumerate(r_dense):
        linked = [j for j in scan_order
                  if all(x == -1 or y == -1 or x == y for x, y in zip(r, s_dense[j], strict=True))]
        assert hit[i] == (linked[0] if linked else -1)
