"""Results and trails for people and files, above the analyses: the trails summary and matrices
(:mod:`~graphlink.io.trails`), re-identified pairs in bulk (:mod:`~graphlink.io.pairs`) and the bundled worked
examples (:mod:`~graphlink.io.examples`).  Readers of a user's release are part of the core
(:mod:`graphlink.core.tabular`, :mod:`graphlink.core.ingest`).  Importing the package loads nothing.
"""
