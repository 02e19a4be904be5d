"""graphlink: trail re-identification (REIDIT), exact true loves and k-unlinkability, with quasi-identifiers.

Data flows one way: release → trails → link graph → analyses → store/app, and the modules are laid out by layer
(CONTRIBUTING.md#layers: kernels, core, analysis, protect, qi, ..., cli).  The names below are the public API for
scripts and notebooks; they load lazily, so ``import graphlink`` stays cheap.

=========================  ===================================================================================
``read_release``           read a release (CSV/Parquet long table, per-location folders, a DataFrame)
``thesis_example``         the thesis's four-hospital example (Figure 3.4) with its ground truth
``genphen_example``        genotype–phenotype linkage (App. B.2): trails plus quasi-identifiers, ALS
``build_trails``           FillTrails (Alg. 1) under the decided data model (reserved side, multiplicity)
``summarize_trails``       what a person needs to see of the trail matrices, at any size
``build_linkgraph``        the link graph (Def. 17) on twin classes, optionally constrained by an ALS
``reidentify``             REIDIT-C/I/I-K/M or the exact true loves, each pair with its reason
``audit``                  the exact k-unlinkability audit (Def. 19)
``pair_probabilities``     how likely each pair is: its share of the consistent assignments (docs/risk.md)
``unlink``                 protect a release by suppression until it is certified k-unlinkable
``unlink_max_risk``        protect until no pair's re-identification probability exceeds P (docs/unlink.md)
``simulate_uniform`` ...   synthetic populations with ground truth (also ``simulate_zipf``, ``simulate_households``)
``connect``                the Neo4j store (loads, write-back, Cypher)
``get_config`` ...         the settings in force (also ``set_config``, ``config_context``; docs/configuration.md)
``ReidentifySummary`` ...  the typed results (also ``AuditSummary``, ``UnlinkSummary``, ``ModelDecision``) and
                           ``Diagnostic``, a refusal or note as a code plus data (words chosen at the edge)
=========================  ===================================================================================

Examples
--------
>>> import graphlink as gl
>>> release = gl.thesis_example()
>>> result = gl.reidentify(release, "true-loves")
>>> print(result.pairs[["identified", "deidentified"]].to_string(index=False))
identified deidentified
       Ali         actg
   Charlie         tgac
       Bob         ctga
       Dan         gatc
>>> result.summary.wrong, result.summary.recall
(0, 1.0)
"""

from __future__ import annotations

import importlib
from typing import Any

from graphlink.errors import GraphlinkError, ModelAssumptionError, ReleaseError, StoreError

__version__ = "0.1.0"

#: public name -> (module, attribute); imported on first use (PEP 562)
_EXPORTS: dict[str, tuple[str, str]] = {
    "Release": ("graphlink.core.release", "Release"),
    "read_release": ("graphlink.core.release", "read_release"),
    "read_truth": ("graphlink.core.release", "read_truth"),
    "thesis_example": ("graphlink.io.examples", "thesis_example"),
    "genphen_example": ("graphlink.io.examples", "genphen_example"),
    "Trails": ("graphlink.core.trails", "Trails"),
    "build_trails": ("graphlink.core.trails", "build_trails"),
    "summarize_trails": ("graphlink.io.trails", "summarize"),
    "LinkGraph": ("graphlink.core.linkgraph", "LinkGraph"),
    "Blocks": ("graphlink.core.linkgraph", "Blocks"),
    "build_linkgraph": ("graphlink.core.linkgraph", "build_linkgraph"),
    "classify_edges": ("graphlink.analysis.matching", "classify_edges"),
    "classify_one_to_many": ("graphlink.analysis.onetomany", "classify_one_to_many"),
    "Reidentification": ("graphlink.analysis.reidit", "Reidentification"),
    "reidentify": ("graphlink.analysis.reidit", "reidentify"),
    "true_loves": ("graphlink.analysis.reidit", "true_loves"),
    "evaluate": ("graphlink.analysis.reidit", "evaluate"),
    "ReidentifySummary": ("graphlink.analysis.results", "ReidentifySummary"),
    "Evaluation": ("graphlink.analysis.results", "Evaluation"),
    "AuditSummary": ("graphlink.analysis.results", "AuditSummary"),
    "ModelDecision": ("graphlink.core.model", "ModelDecision"),
    "Diagnostic": ("graphlink.diagnostics", "Diagnostic"),
    "AuditResult": ("graphlink.analysis.audit", "AuditResult"),
    "audit": ("graphlink.analysis.audit", "audit"),
    "pair_probabilities": ("graphlink.analysis.risk", "pair_probabilities"),
    "RiskResult": ("graphlink.analysis.risk", "RiskResult"),
    "RiskSummary": ("graphlink.analysis.results", "RiskSummary"),
    "unlink": ("graphlink.protect", "unlink"),
    "unlink_max_risk": ("graphlink.protect", "unlink_max_risk"),
    "UnlinkResult": ("graphlink.protect", "UnlinkResult"),
    "UnlinkSummary": ("graphlink.protect", "UnlinkSummary"),
    "simulate_uniform": ("graphlink.simulation.simulate", "simulate_uniform"),
    "simulate_zipf": ("graphlink.simulation.simulate", "simulate_zipf"),
    "simulate_households": ("graphlink.simulation.simulate", "simulate_households"),
    "read_als": ("graphlink.qi.als", "read_als"),
    "connect": ("graphlink.store.neo4j", "connect"),
    "get_config": ("graphlink.config", "get_config"),
    "set_config": ("graphlink.config", "set_config"),
    "config_context": ("graphlink.config", "config_context"),
}

__all__ = ["GraphlinkError", "ModelAssumptionError", "ReleaseError", "StoreError", "__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value                     # cache: later lookups skip __getattr__
        return value
    raise AttributeError(f"module 'graphlink' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

