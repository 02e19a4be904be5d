"""Run one unlinking method and return its :class:`Allocation` (thesis ch. 7, Lemmas 8-12).

A deduplicated allocation discloses every disclosed element at exactly one location and gives each
disclosing location c a private set P_c ⊆ γ_c of protectors, disjoint across locations, with
|P_c| ≥ max(k, |ω'_c|).  :func:`allocate` works on an :class:`~graphlink.protect.instance.Instance`; the
``*_dedup_sets`` functions take plain ``{location: elements}`` mappings.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from graphlink import registry
from graphlink.errors import ReleaseError
from graphlink.protect.final_clean import final_clean_codes
from graphlink.protect.instance import Instance, Sets


@dataclass
class Allocation:
    """A deduplicated allocation: what each location discloses (ω'_c) and its protectors (P_c ⊆ γ_c).

    ``final_clean_withheld`` counts records Final-Clean withdrew after allocation; ``steps`` is the
    allocation order (location, phase, protectees added, protectors added) for explanations.

    Examples
    --------
    Returned by :func:`allocate` and the ``*_dedup_sets`` functions:

    >>> from graphlink.protect import greedy_dedup_sets
    >>> allocation = greedy_dedup_sets({"A": {"a", "b", "c"}, "B": {"c", "d"}}, {"A": {"x", "y"}, "B": {"z"}}, 2)
    >>> allocation.n_disclosed(), allocation.locations_disclosing(), allocation.final_clean_withheld
    (3, 2, [])
    """

    locations: list[Hashable]
    disclosed: dict[Hashable, list[Hashable]]
    protectors: dict[Hashable, list[Hashable]]
    method: str
    k: int
    seed: int | None
    steps: list[tuple[Hashable, str, int, int]] = field(default_factory=list)
    final_clean_withheld: list[Hashable] = field(default_factory=list)

    def n_disclosed(self) -> int:
        return sum(len(v) for v in self.disclosed.values())

    def locations_disclosing(self) -> int:
        return sum(1 for v in self.disclosed.values() if v)


def allocate(inst: Instance, k: int, method: str = "force-dedup", seed: int | None = 0,
             final_clean_step: bool | None = None) -> Allocation:
    """Run one unlinking heuristic on an :class:`Instance`; returns its :class:`Allocation`.

    ``final_clean_step`` defaults to the thesis: Force-Dedup (and Flow-Dedup) end with Final-Clean,
    Greedy-Dedup (Algorithm 7) does not — any violation it leaves is caught by the exact audit in
    :func:`unlink`.

    Examples
    --------
    >>> from graphlink.protect import Instance, allocate
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> allocation = allocate(Instance.from_sets(gamma, omega), 2, "force-dedup")
    >>> allocation.method, allocation.n_disclosed()
    ('force-dedup', 3)
    """
    spec = registry.find(method)
    if spec is None or spec.kind != "protect":
        raise ReleaseError(f"unknown unlinking method {method!r}; choose one of {', '.join(registry.names('protect'))}")
    if k < 1:
        raise ReleaseError(f"k must be a positive integer, got {k}")
    alloc = spec.resolve()(inst, k, seed)
    withdrawn: list[int] = []
    if spec.final_clean if final_clean_step is None else final_clean_step:
        withdrawn = final_clean_codes(inst, alloc, k, seed)
    locs = inst.locations
    dis, prot = alloc.disclosed_arrays(), alloc.protector_arrays()
    return Allocation(
        locations=list(locs),
        disclosed={locs[c]: inst.de_keys[dis[c]].tolist() for c in range(len(locs))},
        protectors={locs[c]: inst.id_keys[prot[c]].tolist() for c in range(len(locs))},
        method=method, k=k, seed=seed,
        steps=[(locs[c], ph, a, b) for c, ph, a, b in alloc.steps],
        final_clean_withheld=inst.de_keys[np.asarray(withdrawn, np.int64)].tolist())


def greedy_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Greedy-Dedup (thesis Algorithm 7) on per-location sets ``{c: γ_c}``, ``{c: ω_c}``.

    Repeatedly: Explicit-Clean; take the location p with the smallest non-null γ'_p; disclose the
    min(|ω_p|, |γ'_p|) least-frequent protectees of ω_p, allocate the max(|ω'_p|, k) least-frequent
    protectors of γ'_p; Reduce.  O(|C|² + rows·log rows) with incremental counts (the thesis states
    O(|C|²) location steps, assuming elements pre-sorted by frequency).

    Examples
    --------
    Every record can be disclosed here: each location gets at least k protectors of its own, and no person protects
    at two locations (the protector sets are disjoint):

    >>> from graphlink.protect import greedy_dedup_sets
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> allocation = greedy_dedup_sets(gamma, omega, 2)
    >>> {c: sorted(v) for c, v in allocation.disclosed.items()}
    {'A': ['x', 'y'], 'B': ['z']}
    >>> {c: sorted(v) for c, v in allocation.protectors.items()}
    {'A': ['a', 'b'], 'B': ['c', 'd']}
    """
    return allocate(Instance.from_sets(gamma, omega), k, "greedy-dedup", seed)


def force_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Force-Dedup (thesis Algorithm 10: force phase, boost phase, Final-Clean) on per-location sets.

    O(|C|² + rows·log rows).  See :func:`graphlink.protect.methods._force` for the reading of the printed pseudocode.

    Examples
    --------
    Every record can be disclosed here: each location gets at least k protectors of its own, and no person protects
    at two locations (the protector sets are disjoint):

    >>> from graphlink.protect import force_dedup_sets
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> allocation = force_dedup_sets(gamma, omega, 2)
    >>> {c: sorted(v) for c, v in allocation.disclosed.items()}
    {'A': ['x', 'y'], 'B': ['z']}
    >>> {c: sorted(v) for c, v in allocation.protectors.items()}
    {'A': ['a', 'b'], 'B': ['c', 'd']}
    """
    return allocate(Instance.from_sets(gamma, omega), k, "force-dedup", seed)


def flow_dedup_sets(gamma: Sets, omega: Sets, k: int, seed: int | None = 0) -> Allocation:
    """Flow-Dedup (this project, after thesis §7.4) on per-location sets.  See :mod:`graphlink.protect.methods`.

    Examples
    --------
    Every record can be disclosed here: each location gets at least k protectors of its own, and no person protects
    at two locations (the protector sets are disjoint):

    >>> from graphlink.protect import flow_dedup_sets
    >>> gamma = {"A": {"a", "b", "c"}, "B": {"c", "d"}}       # identified people per location
    >>> omega = {"A": {"x", "y"}, "B": {"z"}}                # de-identified records per location
    >>> allocation = flow_dedup_sets(gamma, omega, 2)
    >>> {c: sorted(v) for c, v in allocation.disclosed.items()}
    {'A': ['x', 'y'], 'B': ['z']}
    >>> {c: sorted(v) for c, v in allocation.protectors.items()}
    {'A': ['a', 'b'], 'B': ['c', 'd']}
    """
    return allocate(Instance.from_sets(gamma, omega), k, "flow-dedup", seed)
