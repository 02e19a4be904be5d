"""The names the command line offers as choices, in a module without heavy imports.

The CLI builds its option choices from these when it starts, so ``graphlink --help`` lists every choice without
loading the algorithms (numba, scipy, pandas); each defining module imports its tuple from here, so there is
one list per choice.  The methods (re-identification, protection) are the registry's (:mod:`graphlink.registry`).
"""

from __future__ import annotations

from typing import Literal

from graphlink import registry

#: re-identification methods (:func:`graphlink.analysis.reidit.reidentify`): the built-in ones
Method = Literal["complete", "incomplete", "incomplete-k", "multiple", "true-loves"]
#: the re-identification methods registered when this module was imported (:mod:`graphlink.registry`; the CLI, the
#: app and the engines ask the registry itself, so a method registered later is offered too)
METHODS: tuple[str, ...] = registry.names("reidentify")
#: protection methods (:mod:`graphlink.protect`), as registered: the Dedup family (Malin 2006 ch. 7) and keep-most
PROTECT_METHODS: tuple[str, ...] = registry.names("protect")
#: protection methods that run as a whole on the release (``input="release"``: keep-most), not as an allocation
KEEP_METHODS: tuple[str, ...] = tuple(s.name for s in registry.specs("protect") if s.input == "release")
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
