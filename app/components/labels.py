"""Words for people: the label of every choice the library offers (one map per kind, shared by every page), and
whole numbers with thousands separators.

The library names its choices with short keys (``greedy-dedup``, ``prec``, ``samarati``, ``deidentified``); a
page shows the label here instead, through ``format_func`` or :func:`label`. The maps are keyed by the keys of
:mod:`graphlink.catalog`, so a registry of methods in the library can later supply them;
``tests/app/test_app_words.py`` checks that every key of the catalog has its label.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def method_labels(one_to_many: bool = False) -> dict[str, str]:
    """The re-identification methods' headings under the reading of the release, from the method registry: no
    true loves and no maximum matchings on a one-to-many release, where the exact method gives certain pairs.

    Examples
    --------
    >>> method_labels(True)["true-loves"], method_labels(False)["true-loves"]
    ('Certain pairs (exact)', 'True loves (exact)')
    """
    from graphlink import registry

    return {spec.name: spec.title_for(one_to_many) for spec in registry.specs("reidentify")}


def protect_labels() -> dict[str, str]:
    """The protection methods' names for people, from the method registry.

    Examples
    --------
    >>> protect_labels()["force-dedup"]
    'Force-Dedup'
    """
    from graphlink import registry

    return {spec.name: spec.label for spec in registry.specs("protect")}


def secure_labels() -> dict[str, str]:
    """The protection methods the secure protocol runs, by the library's ``-secure`` names."""
    from graphlink import registry

    labels = protect_labels()
    return {f"{name}-secure": labels[name] for name in registry.secure_names()}


#: quasi-identifier anonymisation algorithms (``graphlink.catalog.QI_ALGORITHMS``)
QI_ALGORITHM_LABELS = {
    "optimal": "Optimal lattice search (exact)",
    "datafly": "Datafly (Sweeney)",
    "mingen": "MinGen (exact, cell-level)",
    "mu-argus": "µ-Argus (Sweeney's reconstruction)",
    "mondrian": "Mondrian (multidimensional)",
}
#: what the optimal quasi-identifier search minimises (``graphlink.catalog.QI_LOSSES``)
QI_LOSS_LABELS = {
    "prec": "Precision (share of the hierarchy climbed)",
    "loss": "Information loss",
    "dm": "Discernibility (records sharing a value combination)",
    "dm-star": "Discernibility without suppression",
    "entropy": "Entropy (bits lost)",
    "entropy-top": "Entropy, suppressed values as most general",
}
#: what a fingerprinting plan minimises (``graphlink.catalog.FINGERPRINT_LOSSES``)
FINGERPRINT_LOSS_LABELS = {
    "precision": "Precision (share of the hierarchy climbed)",
    "samarati": "Generalization levels (sum)",
    "dm-star": "Discernibility (squared group sizes)",
    "entropy": "Entropy (bits lost)",
}
#: the sides of a release and what may withhold (``reserved``)
SIDE_LABELS = {
    "identified": "identified",
    "deidentified": "de-identified",
    "none": "neither",
    "auto": "decided from the data",
    "mixed": "mixed",
}
#: the multiplicity choices
MULTIPLICITY_LABELS = {"auto": "decided from the data", "one-to-one": "one-to-one", "one-to-many": "one-to-many"}
#: the simulation experiments (their registry names)
EXPERIMENT_LABELS = {
    "als-gain": "Trails and quasi-identifiers together",
    "calibration": "Are the risk probabilities right?",
    "auc": "Area under the re-identification curve",
    "shift-shape": "Shift and shape of the re-identification curve",
    "dedup": "Withholding needed by the deduplication methods",
    "households": "Households (one-to-many)",
    "k-reidentification": "Re-identification up to k candidates",
    "optimal-gap": "Exact certain pairs against REIDIT",
    "popularity": "Popularity of the locations",
    "uniqueness-grid": "How unique trails are",
    "scaling": "Population size",
    "withholding": "Withheld records",
}


def label(key: Any, labels: Mapping[str, str]) -> str:
    """The label of ``key`` in ``labels``; an unknown key is shown with its dashes as spaces, never raw.

    Examples
    --------
    >>> label("greedy-dedup", protect_labels())
    'Greedy-Dedup'
    >>> label("new-method", protect_labels())
    'new method'
    """
    text = str(key)
    return labels.get(text, text.replace("-", " ").replace("_", " "))


def number(value: Any, digits: int = 0) -> str:
    """A number as people read it: thousands separated by commas, ``digits`` decimals, ``—`` when missing.

    O(1). Assumes an int, a float, a NumPy scalar or None; anything else is shown as its text.

    Examples
    --------
    >>> number(1210), number(-15766), number(0.5, 2), number(None)
    ('1,210', '-15,766', '0.50', '—')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    try:
        return f"{float(value):,.{digits}f}" if digits else f"{int(round(float(value))):,}"
    except (TypeError, ValueError):
        return str(value)
