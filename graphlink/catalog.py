"""The names the command line offers as choices, in a module without heavy imports.

The CLI builds its option enums from these when it starts, so ``graphlink --help`` lists every choice without
loading the algorithms (numba, scipy, pandas); each defining module imports its tuple from here, so there is
one list per choice.
"""

from __future__ import annotations

from typing import Literal

#: re-identification methods (:func:`graphlink.analysis.reidit.reidentify`)
Method = Literal["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]
METHODS: tuple[str, ...] = ("complete", "incomplete", "incomplete-k", "multiple", "true-loves")
#: protection methods by suppression (:mod:`graphlink.protect.methods`, Malin 2006 ch. 7)
PROTECT_METHODS: tuple[str, ...] = ("greedy-dedup", "force-dedup", "flow-dedup")
#: protection that withholds single (location, record) disclosures (:mod:`graphlink.protect.keep`)
KEEP_METHODS: tuple[str, ...] = ("keep-most",)
#: which side's disclosures keep-most may withhold (auto: the side whose tables are never larger)
KEEP_SIDES: tuple[str, ...] = ("auto", "deidentified", "identified")
#: quasi-identifier anonymisation algorithms (:mod:`graphlink.qi.algorithms`)
QI_ALGORITHMS: tuple[str, ...] = ("optimal", "datafly", "mingen", "mu-argus", "mondrian")
#: linking attacks on releases of one table (:mod:`graphlink.qi.attacks`)
QI_ATTACKS: tuple[str, ...] = ("unsorted", "complementary", "temporal")
#: what the optimal quasi-identifier search can minimise (:mod:`graphlink.qi.metrics`)
QI_LOSSES: tuple[str, ...] = ("prec", "loss", "dm", "dm-star", "entropy", "entropy-top")
#: how per-attribute losses combine (ARX's aggregate functions; :mod:`graphlink.qi.metrics`)
QI_AGGREGATES: tuple[str, ...] = ("arithmetic", "geometric", "max", "sum")
#: how a suppression fraction becomes a number of rows (:func:`graphlink.qi.lattice.suppression_limit`)
QI_ROUNDINGS: tuple[str, ...] = ("arx", "decimal")
#: what a fingerprinting plan can minimise (:mod:`graphlink.fingerprint.plan`)
FINGERPRINT_LOSSES: tuple[str, ...] = ("precision", "samarati", "dm-star", "entropy")
