"""Quasi-identifier linkage on one table (Sweeney's k-anonymity): hierarchies, the encoded table, checks,
loss measures, the generalization lattice and its optimal search, MinGen, Datafly, µ-Argus, Mondrian, and the
three attacks on k-anonymous releases. Knows nothing of trails (see docs/qi.md)."""
