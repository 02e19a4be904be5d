"""The Spark engine's analyses: the same result objects as the local engine (thesis ch. 4, 6, Appendix A).

Trails, twin classes, the class-level link graph and REIDIT-C are computed in Spark
(:mod:`graphlink.engines.spark.fill`, :mod:`graphlink.engines.spark.links`).  The exact analyses — true loves
(Dulmage–Mendelsohn on the class graph), REIDIT-I/I-K/M on classes, the k-unlinkability audit, one-to-many
certain pairs — are the core's, run in one of two places (``split``):

* ``driver``: the class graph and each element's class are collected and the core runs once on the driver
  (:meth:`graphlink.core.linkgraph.LinkGraph.from_classes`).  Results equal the local engine's, order and reasons
  included.  Driver memory O(|M| + |N| + class edges) (about 150 B per element with its key).
* ``components``: the class graph is split into connected components in Spark, components are packed into
  buckets and each bucket is classified by the core in an executor (``cogroup().applyInPandas``); the driver
  only merges counts and collects the pairs / violations (:mod:`graphlink.engines.spark.components`).  Driver memory
  O(result); executor memory O(largest component).
* ``auto`` (default): ``driver`` while |M| + |N| ≤ ``GRAPHLINK_SPARK_DRIVER_ELEMENTS`` and the class graph has
  at most ``GRAPHLINK_SPARK_DRIVER_EDGES`` (default 5e7) edges, else ``components``.  The element default is
  what 40 % of the driver machine's memory holds at the measured ~800 bytes per element of the driver split's
  Python process (docs/scale.md: 733 B at 2e6 elements, results included): 1.2e7 elements on 24 GB.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd

from graphlink import registry
from graphlink.analysis.audit import AuditResult
from graphlink.analysis.audit import audit as core_audit
from graphlink.analysis.matching import classify_edges
from graphlink.analysis.reidit import LocalParts, Reidentification
from graphlink.analysis.results import ReidentifySummary
from graphlink.config import get_config
from graphlink.core.linkgraph import LinkGraph
from graphlink.engines.spark.fill import SparkTrails
from graphlink.engines.spark.links import class_links, edges, reidit_c  # noqa: F401  (re-exported)

Split = Literal["auto", "driver", "components"]
SPLITS = ("auto", "driver", "components")
#: driver split: peak bytes of the Python driver per element, measured (docs/scale.md), and the memory share
DRIVER_BYTES_PER_ELEMENT = 800
DRIVER_MEMORY_SHARE = 0.4


def choose_split(st: SparkTrails, split: str = "auto") -> Literal["driver", "components"]:
    """Where the exact analyses run (module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    if split != "auto":
        return split  # type: ignore[return-value]
    if st.n_identified + st.n_deidentified > driver_elements():
        return "components"
    return "driver" if edges(st).count() <= get_config().spark_driver_edges else "components"


def driver_elements(memory: int | None = None) -> int:
    """The most elements the ``auto`` split sends to the driver: ``GRAPHLINK_SPARK_DRIVER_ELEMENTS`` when set,
    else ``DRIVER_MEMORY_SHARE`` of ``memory`` bytes (default: this machine's physical memory) at
    ``DRIVER_BYTES_PER_ELEMENT``; 2e7 where the memory cannot be read.  O(1)."""
    if get_config().spark_driver_elements is not None:
        return get_config().spark_driver_elements
    if memory is None:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 20_000_000
    return int(memory * DRIVER_MEMORY_SHARE / DRIVER_BYTES_PER_ELEMENT)


def linkgraph(st: SparkTrails) -> LinkGraph:
    """The core link graph on the driver from the Spark class graph (equal to ``build_linkgraph`` of the same
    release).  O(|M| + |N| + class edges) collected."""
    cache = st.__dict__.setdefault("_cache", {})
    if "graph" not in cache:
        trails = st.to_trails()
        e = edges(st).toPandas()
        d_id, d_de = st.driver["identified"], st.driver["deidentified"]
        cei = np.searchsorted(d_id.cids, e["id_cid"].to_numpy(np.int64))
        cej = np.searchsorted(d_de.cids, e["de_cid"].to_numpy(np.int64))
        cache["graph"] = LinkGraph.from_classes(trails, d_id.rank, d_de.rank, cei, cej)
    return cache["graph"]


def classes(st: SparkTrails) -> Any:
    """The core's exact classification on the driver: ``EdgeClasses`` (one-to-one) or ``ManyClasses``."""
    from graphlink.analysis.onetomany import classify_one_to_many

    graph = linkgraph(st)
    return classify_one_to_many(graph) if st.one_to_many else classify_edges(graph)


@dataclass
class SparkParts:
    """The Spark engine's :class:`~graphlink.analysis.reidit.LinkParts`: the class graph of ``trails``, held in Spark
    and run where ``split`` says (module docstring); :func:`graphlink.analysis.reidit.reidentify` runs on it.

    Attributes
    ----------
    trails : SparkTrails
        The trails and twin classes in Spark.
    split : {"auto", "driver", "components"}
        Where the exact analyses run.
    """

    trails: SparkTrails
    split: Split = "auto"

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}")

    @property
    def truth(self) -> pd.DataFrame | None:
        """The release's own truth (read with it in Spark, collected at read time)."""
        return self.trails.release.truth

    def run(self, spec: registry.MethodSpec, keywords: dict[str, Any]) -> Reidentification:
        """``spec``'s method as its Spark plan (:mod:`graphlink.registry`) says: entirely in Spark when the plan
        has a ``native`` function (REIDIT-C); per bucket of components, merged by the spec's merge, on the component
        split when the spec is ``per_component``; otherwise the core's function on the class graph collected to the
        driver (one part: :class:`~graphlink.analysis.reidit.LocalParts` of :func:`linkgraph`)."""
        st = self.trails
        if spec.spark.native is not None:
            return registry.resolve(spec.spark.native)(st)
        if spec.per_component and choose_split(st, self.split) == "components":
            from graphlink.engines.spark import components

            return components.run_method(st, spec, keywords)
        return LocalParts(linkgraph(st)).run(spec, keywords)

    def audit(self, k: int) -> tuple[AuditResult, None]:
        """The exact k-unlinkability audit (Definition 19) where ``split`` says (:func:`audit`: per bucket of
        components in the executors, or the core on the class graph collected to the driver); the edge classes
        stay in Spark (None)."""
        return audit(self.trails, k, split=self.split), None

    def writer(self, spec: registry.MethodSpec) -> Callable[..., ReidentifySummary] | None:
        """The Spark plan's writer bound to these trails (:func:`graphlink.engines.spark.links.write_reidit_c`,
        :func:`graphlink.engines.spark.components.write_true_loves`: the executors write the pairs, nothing but
        counts is collected) when the plan has one: always for ``write_split="any"`` (REIDIT-C), only on the
        component split for ``"components"`` (true loves); None otherwise."""
        plan = spec.spark
        if plan.write is None:
            return None
        if plan.write_split != "any" and choose_split(self.trails, self.split) != "components":
            return None
        return partial(registry.resolve(plan.write), self.trails)


def audit(st: SparkTrails, k: int, *, split: Split = "auto") -> AuditResult:
    """The exact k-unlinkability audit (Definition 19), as :func:`graphlink.analysis.audit.audit` returns it."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if choose_split(st, split) == "components":
        from graphlink.engines.spark import components

        return components.audit(st, k)
    return core_audit(classes(st), k)
