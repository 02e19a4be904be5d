"""The data model: reading a release, the data-model decision, trails and the link graph.

Readers (:mod:`~graphlink.core.tabular`, :mod:`~graphlink.core.ingest`) sit at the bottom, then the validated
release (:mod:`~graphlink.core.release`), the data model (:mod:`~graphlink.core.model`), FillTrails
(:mod:`~graphlink.core.trails`) and the link graph (:mod:`~graphlink.core.linkgraph`); each imports only those
before it, the kernels and the foundation modules.  Importing the package loads nothing.
"""
