"""The analyses on a link graph: what an adversary can infer from a release.

:mod:`~graphlink.analysis.matching` (maximum matchings, true loves, the union of all maximum matchings),
:mod:`~graphlink.analysis.onetomany` (possible and certain pairs of one-to-many data),
:mod:`~graphlink.analysis.reidit` (REIDIT-C/-I/-I-K/-M and true loves, each pair with its reason),
:mod:`~graphlink.analysis.audit` (exact k-unlinkability) and :mod:`~graphlink.analysis.advisor` (which REIDIT
applies).  They import the core and the kernels only; importing the package loads nothing.
"""
