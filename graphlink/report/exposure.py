"""Exposure per location: how many certain re-identifications disappear if one location withholds its
de-identified table (leave-one-location-out; docs/report.md#exposure-per-location).

Withholding location c's de-identified table changes only column c of the de-identified trail matrix N: every
1 there becomes "not disclosed", which under the de-identified-reserved reading (FillTrails, Malin 2006 Alg. 1)
is ``*`` (|ω_c| = 0 < |γ_c|, so c is no longer an equal-size location), and an element disclosed only at c
leaves the release.  The identified matrix M, the reading and every other column stay as they are.  So the
reduced release's trails are derived from the full release's packed trails in O(|N|·W) bit operations instead
of re-reading, re-validating and re-filling the release, and only the link graph and the exact classification
are recomputed per location.  Two exact shortcuts skip work:

- a location that discloses no de-identified record changes nothing (its exposure is 0);
- when no de-identified row that knows location c gains a partner by forgetting it (a partner would have to
  agree with the row everywhere but at c) and none leaves the release, the reduced release has the same link
  graph, element for element, as the full one, so the same certain pairs (exposure 0); one posting-list
  search over the rows that know c (:func:`graphlink.kernels.links.first_links`) decides it, where sparse
  trails over many locations would otherwise rebuild a link graph per location;
- when Hall's condition holds, the reduced link graph contains the full one (new ``*`` only add link edges, a
  removed element is replaced by a null trail, which links every identified element), both have a matching of
  the same size |M| on the null-padded graph, so every maximum matching of the full graph is one of the reduced
  graph and a pair certain after the change was certain before: no certain pair before means none after, for
  every location.

The result is exactly what rebuilding the reduced release from scratch gives (tests/report/test_report.py checks it
against a brute-force oracle that enumerates every maximum matching of the reduced release).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphlink.core.release import LocationSizes
from graphlink.core.trails import Trails, TrailSide


@dataclass(frozen=True)
class LocationExposure:
    """One location's row: its table sizes and the certain re-identifications left if it withholds its
    de-identified table (``lost`` = ``certain_before`` − ``certain_after``).

    Examples
    --------
    One row per location of :func:`location_exposure`; in Fig. 3.4, four people are certain, and without H1's
    de-identified table two of them no longer are:

    >>> import graphlink as gl
    >>> from graphlink.report import location_exposure
    >>> row = location_exposure(gl.build_trails(gl.thesis_example()), 4, True)[0]
    >>> row.location, row.certain_before, row.certain_after, row.lost
    ('H1', 4, 2, 2)
    """

    location: str
    identified: int
    deidentified: int
    certain_before: int
    certain_after: int

    @property
    def lost(self) -> int:
        return self.certain_before - self.certain_after


def exposure_applies(trails: Trails) -> str | None:
    """None when leave-one-location-out is defined for these trails, else the reason it is not (one line).

    Withholding a de-identified table is what the one-to-one, de-identified-reserved (or unreserved) reading
    allows (Definition 21); under identified withholding or one-to-many data it would change the model."""
    if trails.one_to_many:
        return ("one de-identified record may stand for several people here (one-to-many), and withholding "
                "whole de-identified tables is defined for one-to-one data only")
    if trails.reserved == "identified":
        return ("the release is read with identified records withheld; withholding de-identified tables would "
                "contradict that reading")
    return None


def without_location(trails: Trails, c: int) -> Trails:
    """The trails of the release whose location ``c`` withholds every de-identified record, read one-to-one
    with the de-identified side reserved (module docstring).  O(|N|·W)."""
    de = trails.deidentified
    word, bit = divmod(c, 64)
    mask = np.uint64(1) << np.uint64(bit)
    ones = de.ones.copy()
    known = de.known.copy()
    ones[:, word] &= ~mask
    known[:, word] &= ~mask
    keep = np.flatnonzero(np.any(ones != 0, axis=1))    # an element disclosed only at c leaves the release
    sizes = trails.location_sizes
    dsize = sizes.deidentified.copy()
    dsize[c] = 0
    side = TrailSide(de.keys_at(keep), known[keep], ones[keep], de.n_locations)
    return Trails(trails.locations, trails.identified, side, "deidentified",
                  f"{trails.locations[c]} withholds its de-identified table",
                  LocationSizes(list(sizes.locations), sizes.identified, dsize), "one-to-one", "requested")


def same_graph(trails: Trails, c: int, lists: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> bool:
    """Whether :func:`without_location` ``(trails, c)`` has the same element-level link graph as ``trails``
    (then the same certain pairs).  De-identified reserved trails only.  Rows that do not know c keep their
    words; a row that knows c keeps its partners and gains those that agree with it everywhere but at c (its
    word with bit c flipped links them), and a row disclosed only at c leaves the release (one more null trail,
    which links everyone).  O(|rows knowing c|·search) with the complete side's ``lists``
    (:func:`graphlink.kernels.links.complete_lists`, made here when not given)."""
    from graphlink.kernels.links import first_links

    de = trails.deidentified
    word, bit = divmod(c, 64)
    mask = np.uint64(1) << np.uint64(bit)
    rows = np.flatnonzero(de.known[:, word] & mask)
    if len(rows) == 0:
        return True
    ones = de.ones[rows]
    rest = ones.copy()
    rest[:, word] &= ~mask
    if not np.all(np.any(rest != 0, axis=1)):
        return False
    ones[:, word] ^= mask
    return not bool(np.any(first_links(de.known[rows], ones, trails.identified.ones, lists) >= 0))


def certain_count(trails: Trails) -> tuple[int, bool]:
    """(certain re-identifications = true loves, Hall's condition) of one-to-one trails.  O(E·√V)."""
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph

    classes = classify_edges(build_linkgraph(trails))
    return classes.n_true_loves, classes.hall_ok


def location_exposure(trails: Trails, certain_before: int, hall_ok: bool) -> list[LocationExposure]:
    """Leave-one-location-out for every location (module docstring).

    Parameters
    ----------
    trails : Trails
        One-to-one trails, de-identified reserved or unreserved (:func:`exposure_applies` is None).
    certain_before : int
        True loves of the full release (its :class:`~graphlink.analysis.matching.EdgeClasses`).
    hall_ok : bool
        Hall's condition on the full release.

    Returns
    -------
    list of LocationExposure
        One row per location, in the release's order.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.report.exposure import location_exposure
    >>> tr = gl.build_trails(gl.thesis_example())
    >>> [row.lost for row in location_exposure(tr, 4, True)]
    [2, 0, 3, 0]

    Complexity: O(|C|·(|N|·W + link graph + classification)) in the worst case; locations without
    de-identified records, and every location when nothing is certain, cost O(1); a location whose withholding
    leaves the link graph as it is (:func:`same_graph`) costs one posting-list search over its rows.
    """
    why = exposure_applies(trails)
    if why is not None:
        raise ValueError(why)
    sizes = trails.location_sizes
    rows = []
    lists = None
    for c, loc in enumerate(trails.locations):
        n_de = int(sizes.deidentified[c])
        if n_de == 0 or (hall_ok and certain_before == 0):
            after = certain_before
            rows.append(LocationExposure(str(loc), int(sizes.identified[c]), n_de, certain_before, after))
            continue
        if trails.reserved == "deidentified":
            if lists is None:
                from graphlink.kernels.links import complete_lists

                lists = complete_lists(trails.identified.ones)
            unchanged = same_graph(trails, c, lists)
        else:
            unchanged = False
        after = certain_before if unchanged else certain_count(without_location(trails, c))[0]
        rows.append(LocationExposure(str(loc), int(sizes.identified[c]), n_de, certain_before, after))
    return rows
