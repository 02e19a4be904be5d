"""Link graph page: one element's neighbourhood or one connected component, with matching classes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
from st_cytoscape import cytoscape

from graphlink_app import caches, display, session
from graphlink_app.components import graph as gview
from graphlink_app.components.tables import show_table
from graphlink_app.components.text import md
from graphlink_app.components.words import PROBABILITY_NOT_COMPUTED

#: the whole graph is drawn only up to this size (beyond it a two-column drawing is a tangle of crossing lines)
WHOLE_GRAPH_NODES = 80
WHOLE_GRAPH_EDGES = 300
#: more link edges than this in a view are thinned to the focus's edges and the matching's unless asked for
READABLE_EDGES = 120

st.title("Link graph")
loaded = session.require_release()
reserved = session.reserved_choice()
release = loaded.release
g = caches.graph(loaded.key, reserved, release)
cls = caches.classes(loaded.key, reserved, release)
tr = g.trails
ix = caches.class_index(loaded.key, reserved, release)
risk = caches.risk(loaded.key, reserved, release)       # None on a one-to-many release: not computed

one_to_many = bool(tr.one_to_many)
possible = cls.union_degree_identified
c1, c2, c3, c4 = st.columns(4)
c1.metric("Link edges", f"{g.n_expanded_edges:,}")
if one_to_many:   # no matching here: people share households, so a pair is certain or possible
    st.caption("This release is read as one-to-many (one de-identified element, such as a household's IP address, "
               "may stand for several people): a pair is **certain** when it holds in every consistent assignment "
               "of people to de-identified elements, **possible** when it holds in some.")
    c2.metric("Identified people", f"{len(tr.identified.keys):,}")
    c3.metric("Certain pairs", f"{cls.n_true_loves:,}")
    c4.metric("Possible pairs", "not computed" if possible is None else f"{int(np.sum(possible)):,}",
              help="link edges in some consistent assignment of people to de-identified elements")
else:
    c2.metric("Maximum matching size", f"{int(cls.nu):,}")
    c3.metric("True loves (certain pairs)", f"{cls.n_true_loves:,}")
    c4.metric("Allowed edges", f"{int(np.sum(possible)):,}",
              help="link edges in some maximum matching (union of all maximum matchings, empty trails excluded)")
if getattr(g, "n_null", 0):
    st.caption(f"{g.n_null:,} placeholders with an empty trail pad the "
               f"{'identified' if g.null_side == 'identified' else 'de-identified'} side: they stand for people "
               "whose records every location withheld, link to every element, and are not drawn.")

lab_i, lab_d, comps = caches.components(loaded.key, reserved, release)
n_nodes = len(tr.identified.keys) + len(tr.deidentified.keys)
whole_fits = n_nodes <= WHOLE_GRAPH_NODES and g.n_expanded_edges <= WHOLE_GRAPH_EDGES
st.caption(f"The whole graph: {len(tr.identified.keys):,} identified and {len(tr.deidentified.keys):,} "
           f"de-identified elements, {g.n_expanded_edges:,} link edges, {len(comps):,} connected "
           f"component(s) with edges" + (f" (the largest has {int(comps['nodes'].max()):,} elements)"
                                         if len(comps) else "") + ".")

controls, view = st.columns([1, 3])
with controls:
    modes = ["Neighbourhood of an element", "Connected component", "Whole graph"]
    mode = st.radio("Show", modes, key="lg_mode",
                    help="A neighbourhood or a component reads well on any release; the whole graph is drawn "
                         f"only when it has at most {WHOLE_GRAPH_NODES} elements and {WHOLE_GRAPH_EDGES} link "
                         "edges.")
    side = st.radio("Element side", ["identified", "deidentified"], horizontal=True, key="lg_side",
                    format_func=lambda s: "identified" if s == "identified" else "de-identified")
    keys = [str(k) for k in (tr.identified if side == "identified" else tr.deidentified).keys]
    query = st.text_input("Search element", key="lg_query", placeholder="type part of a key")
    matches = [k for k in keys if query.lower() in k.lower()] if query else keys
    if not matches:
        st.warning("No element matches the search.")
        st.stop()
    default = st.session_state.get(session.SELECTED_ELEMENT)
    idx = matches.index(default[1]) if default and default[0] == side and default[1] in matches[:500] else 0
    picked = st.selectbox(f"Element ({len(matches):,} match)", matches[:500], index=idx, key="lg_element")
    hops = st.slider("Hops", 1, 4, 1, key="lg_hops",
                     help="link-edge distance from the element: 1 shows its candidates, 2 also their candidates")
    max_nodes = st.slider("Maximum nodes drawn", 10, 300, 30, step=10, key="lg_max")
    every_edge = st.toggle("Draw every link edge", value=False, key="lg_every_edge",
                           help=f"Views with more than {READABLE_EDGES} link edges show the picked element's "
                                "edges and the matching's; this draws all of them.")

focus = (side, picked)
row = caches.row_index(loaded.key, reserved, side, release)[picked]
if mode == "Neighbourhood of an element":
    sub = gview.neighbourhood(cls, ix, side, row, hops=hops, max_nodes=max_nodes)
    caption = f"Neighbourhood of **{md(picked)}** within {hops} hop(s)"
elif mode == "Whole graph" and whole_fits:
    sub = gview.whole(g, ix)
    caption = "The whole link graph"
elif mode == "Whole graph":
    with controls:
        st.info(f"The whole graph has {n_nodes:,} elements and {g.n_expanded_edges:,} link edges: too many to "
                f"draw readably (at most {WHOLE_GRAPH_NODES} elements and {WHOLE_GRAPH_EDGES} edges). Showing "
                f"the neighbourhood of {md(picked)} instead; its counts are above.")
    sub = gview.neighbourhood(cls, ix, side, row, hops=hops, max_nodes=max_nodes)
    caption = f"Neighbourhood of **{md(picked)}** within {hops} hop(s)"
else:
    comp = int((lab_i if side == "identified" else lab_d)[row])
    size = int(np.count_nonzero(lab_i == comp) + np.count_nonzero(lab_d == comp))
    caption = f"Connected component containing **{md(picked)}**"
    if size > max_nodes:
        with controls:
            st.info(f"This component has {size:,} nodes; showing the {max_nodes}-node neighbourhood of "
                    f"{md(picked)} instead (the whole component is too large to draw).")
        sub = gview.neighbourhood(cls, ix, side, row, hops=hops, max_nodes=max_nodes)
    else:
        sub = gview.component(g, ix, lab_i, lab_d, comp)

n_edges = len(sub.edge_i)
hidden = 0
if n_edges > READABLE_EDGES and not every_edge:
    sub = gview.thinned(cls, sub, side, row)
    hidden = n_edges - len(sub.edge_i)

with view:
    st.markdown(f"{caption}: {len(sub.identified)} identified, {len(sub.deidentified)} de-identified, "
                f"{n_edges} link edges" + (" (truncated at the node cap)" if sub.truncated else "")
                + ". Click a node to inspect it.")
    if hidden:
        st.caption(f"For a readable picture, {hidden:,} of these link edges are not drawn: shown are those of "
                   f"{md(picked)} and those " + ("in the assignment shown or certain" if one_to_many else
                                                  "in the maximum matching or in every maximum matching")
                   + ". Switch on "
                   "**Draw every link edge** to see them all.")
    els = gview.elements(cls, sub, focus, risk)
    height = max(300, 70 * max(len(sub.identified), len(sub.deidentified)) + 60)
    clicked = cytoscape(els, gview.stylesheet(), height=f"{min(height, 900)}px",
                        layout={"name": "preset", "fit": True, "padding": 40},
                        selection_type="single", key=f"lg_graph_{loaded.key}")
    st.markdown(f"<div role='note' aria-label='legend' style='font-size:0.95rem;line-height:1.9'>"
                f"{gview.legend_markdown(one_to_many)}</div>", unsafe_allow_html=True)
    if risk is not None:
        st.caption("Press and hold a line to see how likely that pair is: its share of all the ways of assigning "
                   "people to records that fit the release. The candidates table below lists the same numbers.")

# the element to explain: the clicked node if it is on screen, else the picked one
target = focus
node_ids = {e["data"]["id"] for e in els if "source" not in e["data"]}
if clicked and clicked.get("nodes"):
    nid = clicked["nodes"][0]
    if nid in node_ids:
        target = gview.parse_node_id(nid)
st.session_state[session.SELECTED_ELEMENT] = focus

st.subheader(f"Element {md(target[1])} ({'identified' if target[0] == 'identified' else 'de-identified'})")
t_side, t_key = target
t_row = caches.row_index(loaded.key, reserved, t_side, release)[t_key]
trail_side = tr.identified if t_side == "identified" else tr.deidentified
other_side = tr.deidentified if t_side == "identified" else tr.identified
st.markdown(f"Trail over {md(', '.join(map(str, tr.locations)))}: `{trail_side.trail_str(t_row)}`")

nb, kinds = gview.ranked_neighbours(cls, ix, t_side, t_row)
edge_label = gview.edge_labels(one_to_many)
SHOWN = 200   # a table a person reads: the strongest candidates first (ranked_neighbours)
cand = pd.DataFrame({
    "candidate": [str(other_side.keys[r]) for r in nb[:SHOWN].tolist()],
    "trail": [other_side.trail_str(int(r)) for r in nb[:SHOWN].tolist()],
    "edge class": [edge_label[k] for k in kinds[:SHOWN]],
})
if risk is not None:      # the pair's share of the assignments that fit the release (graphlink.analysis.risk)
    shown_rows = nb[:SHOWN]
    pair_i = np.full(len(shown_rows), t_row) if t_side == "identified" else shown_rows
    pair_j = shown_rows if t_side == "identified" else np.full(len(shown_rows), t_row)
    cand["probability"] = gview.probability_texts(risk, gview.edge_lookup(g, ix, pair_i, pair_j))
st.markdown(f"**Candidates** (linked elements on the other side): {len(nb):,}"
            + (f" — showing the first {SHOWN}" if len(nb) > SHOWN else ""))
show_table(cand, column_config={"edge class": st.column_config.TextColumn("edge class", width="large"),
                                "probability": st.column_config.TextColumn(
                                    "probability", help="how likely this pair is: its share of all the ways of "
                                    "assigning people to records that fit the release; exact, or an estimate "
                                    "with its 95 % margin")})
if risk is None and one_to_many:
    st.caption(PROBABILITY_NOT_COMPUTED)

st.markdown("**Explanation**")
st.markdown(display.explain(loaded.key, reserved, t_side, t_key, release))   # values escaped by explain
