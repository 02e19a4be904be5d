"""Protecting a release: suppression-based trail unlinking, Greedy-Dedup, Force-Dedup and Flow-Dedup (thesis ch. 7).

Problem (Definition 21, k-unlinkable trails via suppression in one matrix): the identified databases
Γ = {γ_c} are published untouched; each location c may only *withhold* de-identified records, disclosing
ω'_c ⊆ ω_c, so that the link graph of Γ and Ω' is k-unlinkable (Definition 19: every vertex has at least
k edges in the union of all maximum matchings, or all its union edges go to null trails).

The thesis heuristics build *deduplicated* solutions (Lemmas 8-12): every disclosed element is disclosed
by exactly one location, and each disclosing location c is given a private set P_c ⊆ γ_c of *protectors*
(identified elements), disjoint across locations, with |P_c| ≥ max(k, |ω'_c|).  Each ω'_c then forms a
complete bipartite block with P_c, so every disclosed element has ≥ k allowed partners.

Public building blocks (also used by the secure STRANON half, ``graphlink/secure``), all on plain
per-location sets so they work on encrypted tokens as well as on element keys:

* :func:`explicit_clean` — Procedure 8,
* :func:`reduce_databases` — Procedure 9 (``Reduce``),
* :func:`least_frequent` — the least-frequent-first ("maximum likelihood") selection with seeded ties,
* :func:`greedy_dedup_sets`, :func:`force_dedup_sets`, :func:`flow_dedup_sets` — Algorithms 7, 10 and
  the §7.4-inspired third method, returning :class:`Allocation`,
* :func:`final_clean` — the null-trail correction of Algorithm 10 line 19 (the thesis names but never
  prints it; our reading is documented on the function).

:func:`unlink` runs a method on a :class:`~graphlink.core.release.Release`, writes the suppressed release and
**certifies it with the core's exact audit** (:func:`graphlink.analysis.audit.audit`, union of all maximum
matchings).  If the audit finds a violation (the thesis's proof has gaps, e.g. Lemma 13), more records are
withheld until it passes and the result says so (``repair_withheld``).  A release returned by
:func:`unlink` is always certified k-unlinkable.

Utility metrics (§7.2.1): records withheld (eq. 7.1, distinct de-identified elements not disclosed),
locations left with nothing to disclose (eq. 7.2), distinct de-identified elements still disclosed.

Modules (the dependency goes down this list, never up): :mod:`~graphlink.protect.instance` (per-location
sets in integer form), :mod:`~graphlink.protect.procedures` (Procedures 8, 9, least-frequent rule),
:mod:`~graphlink.protect.flow` (Flow-Dedup's max-flow and LP pieces), :mod:`~graphlink.protect.methods`
(the three engines), :mod:`~graphlink.protect.final_clean`, :mod:`~graphlink.protect.allocate`,
:mod:`~graphlink.protect.utility`, :mod:`~graphlink.protect.certify` (apply + exact audit + repair),
:mod:`~graphlink.protect.keep` and :mod:`~graphlink.protect.keep_optimal` (keep-most: single disclosures
withheld instead of whole records, its lower bound and its exact optimum on small releases),
:mod:`~graphlink.protect.keep_many` (keep-most on one-to-many releases: people's disclosures withheld, the
one-to-many audit), :mod:`~graphlink.protect.pipeline` (:func:`unlink`, :func:`unlink_keep`,
:func:`unlink_keep_many`, :func:`finish`),
:mod:`~graphlink.protect.maxrisk` (:func:`unlink_max_risk`: withhold until no pair's re-identification probability
exceeds P, certified by :func:`graphlink.analysis.risk.pair_probabilities`).  Every public name is re-exported here.
:mod:`~graphlink.protect.optimal` (the exact optimum of the deduplicated family, a HiGHS MILP) sits on top of
them and is imported on its own.
"""

from __future__ import annotations

from graphlink.protect.allocate import (
    Allocation,
    allocate,
    flow_dedup_sets,
    force_dedup_sets,
    greedy_dedup_sets,
)
from graphlink.protect.certify import apply_disclosure, audit_release, certify, check_model, disclosed_of
from graphlink.protect.final_clean import final_clean
from graphlink.protect.instance import Instance, Sets
from graphlink.protect.keep import keep_most
from graphlink.protect.keep_many import keep_most_many
from graphlink.protect.maxrisk import MaxRiskError, MaxRiskResult, unlink_max_risk
from graphlink.protect.methods import FLOW_LP_LIMIT, METHODS
from graphlink.protect.pipeline import UnlinkResult, UnlinkSummary, finish, unlink, unlink_keep, unlink_keep_many
from graphlink.protect.procedures import explicit_clean, least_frequent, reduce_databases
from graphlink.protect.utility import utility

__all__ = [
    "FLOW_LP_LIMIT", "METHODS", "Allocation", "MaxRiskError", "MaxRiskResult",
    "Instance", "Sets", "UnlinkResult", "UnlinkSummary", "allocate",
    "apply_disclosure", "audit_release", "certify", "check_model", "disclosed_of", "explicit_clean", "final_clean",
    "finish", "flow_dedup_sets", "force_dedup_sets", "greedy_dedup_sets", "keep_most", "keep_most_many",
    "least_frequent", "reduce_databases", "unlink", "unlink_keep", "unlink_keep_many", "unlink_max_risk", "utility",
]
