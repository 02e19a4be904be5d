"""Exact k-unlinkability audit (thesis ch. 6, Definition 19), certified through the union of all maximum
matchings computed by :mod:`graphlink.analysis.matching` (no enumeration).

Definition 19: the link graph is k-unlinkable when every vertex v either (1) participates in at least k
different edges of the union T of all maximum matchings, or (2) all edges of T ending at v go to a null
trail.  Decisions written down here (the thesis leaves them open; docs/algorithms.md#union-of-all-maximum-matchings):

* Edges to the (symbolic, §4.2.4) null trails **count** toward k: each null trail is a distinct vertex of
  the padded graph, and Definition 19 counts distinct edges.  The violation report shows the non-null part
  too, so a reader sees when a vertex is protected only by undisclosed records.
* A vertex with no non-null edge in T (only null edges, or none at all) is exempt by clause (2) — it can
  never be linked to a disclosed record.  Null trails themselves are exempt.

One-to-many releases (Appendix A): the union T becomes the set of *possible* pairs, those that hold in some
consistent assignment (:mod:`graphlink.analysis.onetomany`: with nothing withheld, an exact search per connected
component); an element is k-unlinkable when it has at least k possible partners or none.  There are no null trails
there (|N| < |M|).  When the data refute the model there is no consistent assignment, no possible pair, and
``hall_ok`` is False.

Complexity: that of :func:`graphlink.analysis.matching.classify_edges`, O(E·√V), plus O(V).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from graphlink.analysis.matching import EdgeClasses, classify_edges
from graphlink.analysis.results import AuditSummary
from graphlink.core.linkgraph import LinkGraph
from graphlink.diagnostics import Diagnostic

if TYPE_CHECKING:
    from graphlink.analysis.onetomany import ManyClasses


@dataclass(frozen=True)
class AuditResult:
    """Verdict of the k-unlinkability audit and the violating elements (Malin 2006, Definition 19).

    Returned by :func:`audit`.

    Attributes
    ----------
    k : int
        The k audited.
    k_unlinkable : bool
        Every element has at least ``k`` allowed partners (edges in some maximum matching).
    violations : pandas.DataFrame
        One row per element with fewer: ``side``, ``element``, ``union_degree``, ``union_degree_non_null``.
    true_loves : int
        Pairs in every maximum matching (re-identified for certain).
    maximum_matching_size : int
        Over real elements (null trails excluded).
    hall_ok : bool
        Hall's condition holds (every element of the smaller side can be matched).
    unmatched : list of str
        Elements no maximum matching covers (when Hall's condition fails).
    counts : dict
        Sizes and violation counts per side.

    Examples
    --------
    >>> import graphlink as gl
    >>> result = gl.audit(gl.build_linkgraph(gl.build_trails(gl.thesis_example())), 2)
    >>> result.k_unlinkable, result.true_loves, result.counts["violations_deidentified"]
    (False, 4, 4)
    >>> print(result.violations.head(2).to_string(index=False))
            side element  union_degree  union_degree_non_null
    deidentified    actg             1                      1
    deidentified    ctga             1                      1
    """

    k: int
    k_unlinkable: bool
    violations: pd.DataFrame          # side, element, union_degree, union_degree_non_null
    true_loves: int
    maximum_matching_size: int        # over real elements (null trails excluded)
    hall_ok: bool
    unmatched: list[str]
    counts: dict

    def _repr_html_(self) -> str:
        from graphlink.display import html

        verdict = "k-unlinkable" if self.k_unlinkable else "NOT k-unlinkable"
        return html(f"k = {self.k}: {verdict}", {"true loves": self.true_loves,
                                                 "maximum matching": self.maximum_matching_size,
                                                 "violations": len(self.violations),
                                                 "Hall's condition": "holds" if self.hall_ok else "fails"},
                    {"violations": self.violations})

    @property
    def summary(self) -> AuditSummary:
        """The verdict and counts as an :class:`~graphlink.analysis.results.AuditSummary`."""
        c = self.counts
        return AuditSummary(self.k, bool(self.k_unlinkable), int(self.true_loves), int(self.maximum_matching_size),
                            bool(self.hall_ok), int(c.get("identified", 0)), int(c.get("deidentified", 0)),
                            int(c.get("violations_identified", 0)), int(c.get("violations_deidentified", 0)),
                            int(c.get("null_trails", 0)), str(c.get("multiplicity", "one-to-one")))

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "k_unlinkable": self.k_unlinkable,
            "violations": [
                {"side": r.side, "element": r.element, "union_degree": int(r.union_degree),
                 "union_degree_non_null": int(r.union_degree_non_null)}
                for r in self.violations.itertuples(index=False)
            ],
            "true_loves": self.true_loves,
            "maximum_matching_size": self.maximum_matching_size,
            "hall_condition": self.hall_ok,
            "unmatched": self.unmatched,
            "counts": self.counts,
        }


def union_degree_table(classes: EdgeClasses) -> pd.DataFrame:
    """Per element: side, element, union-degree (with null edges) and its non-null part."""
    g = classes.graph
    frames = []
    for side, keys, nonnull in (("identified", g.trails.identified.keys, classes.union_degree_identified),
                                ("deidentified", g.trails.deidentified.keys, classes.union_degree_deidentified)):
        frames.append(pd.DataFrame({"side": side, "element": keys,
                                    "union_degree": classes.union_degree_total(side),
                                    "union_degree_non_null": nonnull}))
    return pd.concat(frames, ignore_index=True)


def audit(graph_or_classes: LinkGraph | EdgeClasses | ManyClasses, k: int) -> AuditResult:
    """Audit k-unlinkability exactly (thesis Definition 19, with the decisions in the module docstring).

    Parameters
    ----------
    graph_or_classes : LinkGraph, EdgeClasses or ManyClasses
        A link graph (classified here) or its classification, one-to-one or one-to-many.
    k : int
        The protection level, at least 1.

    Returns
    -------
    AuditResult
        ``k_unlinkable``, the ``violations`` (side, element, union degree), true loves, the maximum matching
        size and whether Hall's condition holds.

    Examples
    --------
    >>> import graphlink as gl
    >>> graph = gl.build_linkgraph(gl.build_trails(gl.thesis_example()))
    >>> result = gl.audit(graph, 2)
    >>> result.k_unlinkable, result.true_loves, len(result.violations)
    (False, 4, 8)

    Complexity: O(E·√V) for the classification (or one class-level max-flow), plus O(V).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if isinstance(graph_or_classes, LinkGraph) and graph_or_classes.trails.one_to_many:
        from graphlink.analysis.onetomany import classify_one_to_many

        graph_or_classes = classify_one_to_many(graph_or_classes)
    if hasattr(graph_or_classes, "class_possible"):          # onetomany.ManyClasses
        return _audit_one_to_many(graph_or_classes, k)
    classes = graph_or_classes if isinstance(graph_or_classes, EdgeClasses) else classify_edges(graph_or_classes)
    table = union_degree_table(classes)
    violating = (table["union_degree_non_null"] > 0) & (table["union_degree"] < k)
    violations = table[violating].sort_values(["union_degree", "side", "element"], kind="stable")
    counts = {
        "identified": int(classes.graph.n_identified),
        "deidentified": int(classes.graph.n_deidentified),
        "null_trails": int(classes.graph.n_null),
        "violations_identified": int((violations["side"] == "identified").sum()),
        "violations_deidentified": int((violations["side"] == "deidentified").sum()),
        "link_edges": int(classes.graph.n_expanded_edges),
        "union_edges": int(np.sum(classes.union_degree_identified)),
    }
    return AuditResult(k, bool(len(violations) == 0), violations.reset_index(drop=True), classes.n_true_loves,
                       classes.nu_real, classes.hall_ok, classes.unmatched, counts)


def refuted_audit(diagnostic: str) -> Diagnostic:
    """An audit whose one-to-many data refute the model: no assignment, so no possible partner."""
    return Diagnostic("one-to-many-refuted", f"the one-to-many model does not hold ({diagnostic}): no assignment "
                      "explains the release, so there are no possible partners to count", {"detail": diagnostic})


def unsolved_audit(text: str) -> Diagnostic:
    """An audit that meets a one-to-many component beyond the search budget (``text``: its line)."""
    return Diagnostic("components-unsolved", f"{text}; its possible partners are unknown, so the "
                      "k-unlinkability audit is not exact", {"count": 1})


def _audit_one_to_many(mc: ManyClasses, k: int) -> AuditResult:
    """Definition 19 on one-to-many data: union-degree = possible partners (module docstring).  A component whose
    possible pairs the search budget left unknown makes the audit refuse (:class:`ModelAssumptionError`): a
    partial count could hide a violation; so does data that refute the model (nothing to count)."""
    from graphlink.errors import ModelAssumptionError

    if mc.class_possible is None:
        from graphlink.analysis.onetomany import classify_one_to_many

        mc = classify_one_to_many(mc.graph)
    if mc.consistent is False:
        raise ModelAssumptionError(diagnostic=refuted_audit(mc.diagnostic))
    if mc.unsolved:
        raise ModelAssumptionError(diagnostic=unsolved_audit(mc.unsolved[0].text()))
    graph = mc.graph
    frames = []
    for side, keys, deg in (("identified", graph.trails.identified.keys, mc.union_degree_identified),
                            ("deidentified", graph.trails.deidentified.keys, mc.union_degree_deidentified)):
        frames.append(pd.DataFrame({"side": side, "element": keys, "union_degree": deg,
                                    "union_degree_non_null": deg}))
    table = pd.concat(frames, ignore_index=True)
    violating = (table["union_degree"] > 0) & (table["union_degree"] < k)
    violations = table[violating].sort_values(["union_degree", "side", "element"], kind="stable")
    counts = {
        "identified": int(graph.n_identified),
        "deidentified": int(graph.n_deidentified),
        "null_trails": 0,
        "violations_identified": int((violations["side"] == "identified").sum()),
        "violations_deidentified": int((violations["side"] == "deidentified").sum()),
        "link_edges": int(graph.n_expanded_edges),
        "union_edges": int(np.sum(mc.union_degree_identified)),
        "multiplicity": "one-to-many",
    }
    return AuditResult(k, bool(len(violations) == 0), violations.reset_index(drop=True), mc.n_true_loves, mc.nu,
                       mc.consistent is not False, mc.unmatched, counts)
