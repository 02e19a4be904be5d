"""The analyses the pages show, computed by the library once per release and kept for the server process.

Every function here calls the graphlink library and caches the result per release (keyed by a content hash of the
release, :func:`graphlink_app.session.release_key`, and the session's data-model choice,
:func:`graphlink_app.session.reserved_choice`), so that interactions after the first computation are served from
memory. ``st.cache_resource`` is used because the results (Trails, LinkGraph, EdgeClasses ...) are large
numpy-backed objects that must not be pickled or copied on every rerun; the release itself is passed as an
argument whose name starts with ``_``, which Streamlit leaves out of the cache key (the key stands for it).
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import streamlit as st

from graphlink.errors import GraphlinkError
from graphlink.secure.crypto import CryptoError
from graphlink.secure.messages import MessageError
from graphlink_app.demos import DATA_DIR
from graphlink_app.method_choices import method_spec
from graphlink_app.session import model_of

#: what protecting a release may raise on input it refuses: the library's errors (a release the data model
#: refuses, a method or k it does not know) and, over the secure protocol, a value or message between the parties
#: that is not well formed; a page shows these in words and lets every other exception reach Streamlit's report
PROTECTION_ERRORS: tuple[type[Exception], ...] = (GraphlinkError, CryptoError, MessageError)

#: seconds keep-most may repair on the Protect page before it returns the best certified result at hand (the
#: page waits for it; the command line allows 60)
APP_KEEP_BUDGET = 20.0


@st.cache_resource(show_spinner=False)
def warm_kernels() -> threading.Thread:
    """Once per server process, in the background: run the analyses the Link graph page needs (trails, link
    graph, maximum matching and true loves, REIDIT-I) on the bundled thesis example, so that numba's start-up and
    the loading of the library's compiled kernels (about 3 s, longer on a busy machine) happen while a person
    reads the first page, not when they open the Link graph page. Results are not kept: the example is tiny."""
    def work() -> None:
        from graphlink.analysis.matching import classify_edges
        from graphlink.analysis.reidit import reidentify
        from graphlink.core.linkgraph import build_linkgraph
        from graphlink.core.release import read_release
        from graphlink.core.trails import build_trails
        from graphlink.errors import GraphlinkError

        try:
            g = build_linkgraph(build_trails(read_release(DATA_DIR / "thesis_fig3_4.csv")))
            classify_edges(g)
            for method in ("true-loves", "incomplete"):
                reidentify(g, method)
        except (GraphlinkError, OSError):  # a broken install shows itself on the page that needs it
            pass

    thread = threading.Thread(target=work, name="graphlink-warm-kernels", daemon=True)
    thread.start()
    return thread


@st.cache_resource(max_entries=16, show_spinner="Building trail matrices (FillTrails)…")
def trails(key: str, reserved: str, _release: Any) -> Any:
    from graphlink.core.trails import build_trails

    return build_trails(_release, *model_of(reserved))


@st.cache_resource(max_entries=16, show_spinner=False)
def dense(key: str, reserved: str, side: str, _release: Any) -> Any:
    """``TrailSide.dense()`` (1 / 0 / -1 for '*') of one side, cached for the heatmaps."""
    tr = trails(key, reserved, _release)
    return (tr.identified if side == "identified" else tr.deidentified).dense()


@st.cache_resource(max_entries=16, show_spinner="Building the link graph…")
def graph(key: str, reserved: str, _release: Any) -> Any:
    from graphlink.core.linkgraph import build_linkgraph

    return build_linkgraph(trails(key, reserved, _release))


@st.cache_resource(max_entries=16, show_spinner="Classifying edges (maximum matching, true loves)…")
def classes(key: str, reserved: str, _release: Any) -> Any:
    """``EdgeClasses`` (one-to-one) or ``ManyClasses`` (one-to-many: possible / certain pairs), same vocabulary."""
    g = graph(key, reserved, _release)
    if g.trails.one_to_many:
        from graphlink.analysis.onetomany import classify_one_to_many

        return classify_one_to_many(g)
    from graphlink.analysis.matching import classify_edges

    return classify_edges(g)


#: seconds the probability estimate may spend on each group of people too large to count exactly (the three
#: demos: the thesis's and the households' need none, the simulated one about 2 s in all on a busy machine)
RISK_BUDGET = 0.25


@st.cache_resource(max_entries=16, show_spinner="Computing how likely each pair is…")
def risk(key: str, reserved: str, _release: Any) -> Any | None:
    """Each link edge's probability, once per release and data model: ``graphlink.analysis.risk.pair_probabilities``
    on the cached link graph and classification, :data:`RISK_BUDGET` seconds per estimated block (seed 0). None for
    a release read as one-to-many, whose probabilities the library does not compute."""
    cls = classes(key, reserved, _release)
    if cls.graph.trails.one_to_many:
        return None
    from graphlink.analysis.risk import pair_probabilities

    return pair_probabilities(cls.graph, classes=cls, budget=RISK_BUDGET)


@st.cache_resource(max_entries=16, show_spinner=False)
def most_likely(key: str, reserved: str, _release: Any) -> pd.DataFrame | None:
    """Each person's most likely record (``RiskResult.people()``), most likely first, with the probability in words
    (:func:`app.components.words.probability_words`); None where :func:`risk` is."""
    from graphlink_app.components.words import probability_words

    result = risk(key, reserved, _release)
    if result is None:
        return None
    people = result.people().sort_values(["probability", "identified"], ascending=[False, True], kind="stable")
    return pd.DataFrame({
        "person": people["identified"].astype(str).to_numpy(),
        "most likely record": [("none possible" if r is None or p == 0 else str(r))
                               for r, p in zip(people["deidentified"], people["probability"], strict=True)],
        "probability": [probability_words(p, x, e) if p > 0 else "0 (no record fits)" for p, x, e in
                        zip(people["probability"], people["exact"], people["error"], strict=True)],
        "records as likely": people["tied"].to_numpy(),
    })


@st.cache_resource(max_entries=64, show_spinner="Running re-identification…")
def reidentification(key: str, reserved: str, method: str, k: int | None, _release: Any) -> Any:
    from graphlink.analysis.reidit import reidentify

    on_trails = method_spec(method).input == "trails"       # REIDIT-C reads whole trails, no link graph
    data = trails(key, reserved, _release) if on_trails else graph(key, reserved, _release)
    return reidentify(data, method, k=k, truth=_release.truth)


def reid_count(result: Any) -> int:
    """The number of re-identified elements the library reports for a result (``ReidentifySummary``)."""
    return int(result.summary.reidentified)


@st.cache_resource(max_entries=16, show_spinner="Leave-one-location-out sensitivity…")
def leave_one_out(key: str, reserved: str, method: str, k: int | None, _release: Any) -> pd.DataFrame:
    """Re-run one method with each location removed (each run is a library call on a reduced release)."""
    from graphlink.analysis.reidit import reidentify
    from graphlink.errors import GraphlinkError

    base = reidentification(key, reserved, method, k, _release)
    rows = []
    frame = _release.frame
    for loc in _release.locations:
        reduced = _release.select((frame["location"] != loc).to_numpy())
        try:
            res = reidentify(reduced, method, k=k, reserved=model_of(reserved)[0],
                             multiplicity=model_of(reserved)[1], truth=_release.truth)
            n = reid_count(res)
            rows.append({"location removed": loc, "re-identified": n,
                         "change": n - reid_count(base), "note": ""})
        except GraphlinkError as exc:
            rows.append({"location removed": loc, "re-identified": None, "change": None, "note": str(exc)})
    return pd.DataFrame(rows)


@st.cache_resource(max_entries=16, show_spinner="Indexing the link graph…")
def class_index(key: str, reserved: str, _release: Any) -> Any:
    """Lookup tables over the library's twin-class edges (see app.components.graph.ClassIndex)."""
    from graphlink_app.components.graph import build_index

    return build_index(graph(key, reserved, _release))


@st.cache_resource(max_entries=16, show_spinner="Finding connected components…")
def components(key: str, reserved: str, _release: Any) -> tuple[Any, Any, pd.DataFrame]:
    """Connected components of the link graph (navigation only), on the library's twin-class edges:
    labels per element of each side and a size table (elements per component)."""
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    g = graph(key, reserved, _release)
    n_ic, n_dc = len(g.id_class_size), len(g.de_class_size)
    n = n_ic + n_dc
    adj = coo_matrix((np.ones(len(g.class_ei), dtype=np.int8),
                      (np.asarray(g.class_ei), n_ic + np.asarray(g.class_ej))), shape=(n, n))
    _, labels = connected_components(adj, directed=False)
    lab_i = labels[:n_ic][np.asarray(g.id_class)]
    lab_d = labels[n_ic:][np.asarray(g.de_class)]
    n_comp = int(labels.max()) + 1
    sizes = pd.DataFrame({"identified": np.bincount(lab_i, minlength=n_comp),
                          "deidentified": np.bincount(lab_d, minlength=n_comp)})
    sizes["component"] = sizes.index
    sizes["nodes"] = sizes["identified"] + sizes["deidentified"]
    sizes = sizes[(sizes["identified"] > 0) & (sizes["deidentified"] > 0)]
    sizes = sizes.sort_values(["nodes", "component"], ascending=[False, True]).reset_index(drop=True)
    return lab_i, lab_d, sizes


@st.cache_resource(max_entries=16, show_spinner=False)
def row_index(key: str, reserved: str, side: str, _release: Any) -> dict[str, int]:
    """Element key -> row of its trail (the inverse TRAILDATA pointer, thesis Definition 14)."""
    tr = trails(key, reserved, _release)
    keys = (tr.identified if side == "identified" else tr.deidentified).keys
    return {str(k): i for i, k in enumerate(keys)}



@st.cache_resource(max_entries=16, show_spinner=False)
def protect_refusal(key: str, multiplicity: str, _release: Any) -> Any:
    """The library's refusal (a ``Diagnostic``) of protection by withholding for this release under the session's
    multiplicity, or None when it applies: ``graphlink.protect.certify.check_model``, the check ``unlink`` makes
    first, so the Protect and the Secure protocol pages refuse exactly what the library refuses."""
    from graphlink.diagnostics import of
    from graphlink.errors import ModelAssumptionError
    from graphlink.protect.certify import check_model

    try:
        check_model(_release, multiplicity)
    except ModelAssumptionError as exc:
        return of(exc) or exc
    return None


@st.cache_resource(max_entries=64, show_spinner="Protecting the release (suppression + exact audit)…")
def protect(key: str, k: int, method: str, secure: bool, seed: int, _release: Any,
            multiplicity: str = "auto") -> Any:
    """``graphlink.protect.unlink`` under the session's multiplicity (or the secure STRANON run certified by
    ``unlink.finish``)."""
    from graphlink.protect import disclosed_of, finish, unlink

    if not secure:
        return unlink(_release, k, method, seed, multiplicity=multiplicity, time_budget=APP_KEEP_BUDGET)
    from graphlink.secure import secure_unlink

    produced = secure_unlink(_release, k, method, seed).release
    return finish(_release, disclosed_of(produced), k, f"{method} (secure)", seed)
