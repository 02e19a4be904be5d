"""Quasi-identifier linkage on one table (Sweeney's k-anonymity): hierarchies, the encoded table, checks,
loss measures, the generalization lattice and its optimal search, MinGen, Datafly, µ-Argus, Mondrian, and the
three attacks on k-anonymous releases; the table modules know nothing of trails (see docs/qi.md).  Two modules join
quasi-identifiers to the link graph: als (attribute linkage sets, Malin 2002) and qitrails (trails behind a
k-anonymous table)."""
