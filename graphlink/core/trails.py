"""Trail matrices (thesis ch. 3, Definitions 12-17, Algorithm 1 FillTrails), stored bit-packed.

Every element (a name, a DNA sample) leaves a *trail* over the locations: 1 where it was disclosed, 0
where it provably was not, ``*`` where we cannot tell.  The identified trails form matrix M (|M| × |C|),
the de-identified trails matrix N (|N| × |C|).

FillTrails decision (Malin 2006 contradicts itself; docs/algorithms.md#trails-and-filltrails):
  Algorithm 1 line 13 prints ``|γ_c| ≥ |ω_c|`` as the condition for writing 0 into the reserved matrix, but
  the prose ("when a location's DNA database and identified database are the same size") and Figure 8.2
  show the intended test is **equality**.  With ``≥`` every location of a reserved release would write 0s
  and no ``*`` could ever appear, which contradicts Figure 3.5.  So: the reserved side gets ``*`` where
  absent, except at locations with |γ_c| = |ω_c|, where absence means 0; the complete side gets 0 where
  absent.  (Figure 3.5 itself prints ``*`` at H2/H3, where the sizes are equal; our matrices have 0 there,
  which links exactly the same pairs — see tests/core/test_trails.py.)

One-to-many data (Appendix A, Definition 27; see :mod:`graphlink.core.model`) fills the identified side with
``*`` wherever a person is absent, *without* the equality rule: in a household one member's absence says
nothing about the shared de-identified element, even at a location where both tables have the same size.

Storage: two uint64 bit masks per side, ``known`` (value is 0 or 1) and ``ones`` (value is 1), W =
⌈|C|/64⌉ words per trail; bit c lives in word c // 64 at bit c % 64.  Never a dense |M| × |N| matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from graphlink.core.model import (
    ONE_TO_ONE,
    RESERVED_CHOICES,
    Fill,
    Model,
    Multiplicity,
    MultiplicityChoice,
    Reserved,
    ReservedChoice,
    decide,
    decide_reserved,
)
from graphlink.core.release import LocationSizes, Release
from graphlink.kernels.rows import n_words, pack_columns

if TYPE_CHECKING:          # pandas is imported where used: trails of a small release are summarised without it
    import pandas as pd
    import pyarrow as pa

    from graphlink.diagnostics import Diagnostic

__all__ = ["RESERVED_CHOICES", "Multiplicity", "MultiplicityChoice", "Reserved", "ReservedChoice", "TrailSide",
           "Trails", "build_trails", "decide_reserved", "location_stats", "n_words", "pack_columns",
           "reidentification_bound", "trails_from_dense"]


def full_mask(n_rows: int, n_locations: int) -> np.ndarray:
    """All locations known: the first |C| bits set in every row."""
    cols = np.arange(n_locations)
    row = pack_columns(np.zeros(n_locations, dtype=np.int64), cols, 1, n_locations)
    return np.repeat(row, n_rows, axis=0)


def unpack(words: np.ndarray, n_locations: int) -> np.ndarray:
    """(n, W) uint64 -> (n, |C|) bool.  For display and tests on small data."""
    if words.shape[0] == 0:
        return np.zeros((0, n_locations), dtype=bool)
    as_bytes = np.ascontiguousarray(words).view(np.uint8).reshape(words.shape[0], -1)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :n_locations].astype(bool)


class TrailSide:
    """One trail matrix (M or N): element keys (the TRAILDATA pointer, Def. 14) and packed bits.

    ``keys`` is a NumPy object array.  A side built from a release read by the Arrow fast path may be given
    its keys as an Arrow string array; they then become Python strings on first use of ``keys`` only, and
    :meth:`keys_at` serves selected keys without that (REIDIT-C on millions of elements).
    """

    def __init__(self, keys: np.ndarray | pa.Array, known: np.ndarray, ones: np.ndarray, n_locations: int) -> None:
        self._keys = keys
        self.known = known
        self.ones = ones
        self.n_locations = n_locations

    def __repr__(self) -> str:
        return f"TrailSide({len(self)} trails over {self.n_locations} locations)"

    @property
    def keys(self) -> np.ndarray:
        if not isinstance(self._keys, np.ndarray):
            self._keys = self._keys.to_numpy(zero_copy_only=False).astype(object)
        return self._keys

    def keys_at(self, rows: np.ndarray) -> np.ndarray | pa.Array:
        """The keys of ``rows``: an Arrow array while the keys are kept as Arrow, else an object array.  O(rows)."""
        if isinstance(self._keys, np.ndarray):
            return self._keys[rows]
        from graphlink.core.ingest import arrow_ints

        return self._keys.take(arrow_ints(np.asarray(rows, dtype=np.int64)))

    def __len__(self) -> int:
        return len(self._keys)

    def dense(self) -> np.ndarray:
        """(n, |C|) int8 with 1, 0, or -1 for ``*``.  O(n·|C|): small data or display only."""
        k = unpack(self.known, self.n_locations)
        o = unpack(self.ones, self.n_locations)
        out = np.full(k.shape, -1, dtype=np.int8)
        out[k] = o[k].astype(np.int8)
        return out

    def trail_str(self, i: int) -> str:
        """The trail of row ``i`` as text, e.g. ``"11*0"``."""
        k = unpack(self.known[i : i + 1], self.n_locations)[0]
        o = unpack(self.ones[i : i + 1], self.n_locations)[0]
        return "".join(("1" if oo else "0") if kk else "*" for kk, oo in zip(k, o, strict=True))

    def index_of(self, key: str) -> int:
        """Row of element ``key`` (inverse TRAILDATA pointer); KeyError if absent."""
        hits = np.flatnonzero(self.keys == key)
        if len(hits) == 0:
            raise KeyError(key)
        return int(hits[0])

    def has_star(self) -> np.ndarray:
        """Per row: does the trail contain at least one ``*``?"""
        full = full_mask(1, self.n_locations)[0]
        return np.any(self.known != full, axis=1)

    def is_null(self) -> np.ndarray:
        """Per row: is it a null trail (all ``*``, Definition 18)?"""
        return ~np.any(self.known != 0, axis=1)


@dataclass(frozen=True)
class Trails:
    """The pair of trail matrices of a release plus how the reserved side was decided.

    ``location_sizes`` may be given as the DataFrame of :meth:`Release.sizes`; it is kept as
    :class:`~graphlink.core.release.LocationSizes` (no pandas) and :attr:`sizes` is its DataFrame, made on first use.
    Made by :func:`build_trails` (FillTrails, Malin 2006 Alg. 1).

    Attributes
    ----------
    locations : list of str
        The columns of both matrices, in order.
    identified, deidentified : TrailSide
        One trail per element (``keys``; bit-packed ``ones`` and ``known``, ``*`` where a location withholds).
    reserved : {"identified", "deidentified", "none"}
        The side whose records may be withheld (the other side is complete).
    reason : str
        How the reserved side was decided, in plain words.
    location_sizes : LocationSizes
        Elements per location and side.
    multiplicity : {"one-to-one", "one-to-many"}
        The data model the trails were built under.
    decided_by : str
        ``"requested"``, or what decided the model when ``auto`` was asked for.

    Examples
    --------
    >>> import graphlink as gl
    >>> trails = gl.build_trails(gl.thesis_example())
    >>> trails.reserved, trails.multiplicity, len(trails.identified), len(trails.deidentified)
    ('deidentified', 'one-to-one', 4, 4)
    >>> [str(k) for k in trails.deidentified.keys]
    ['actg', 'tgac', 'ctga', 'gatc']
    """

    locations: list[str]
    identified: TrailSide
    deidentified: TrailSide
    reserved: Reserved
    reason: str
    location_sizes: LocationSizes
    multiplicity: Multiplicity = ONE_TO_ONE
    decided_by: str = "requested"
    evidence: Diagnostic | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "location_sizes", LocationSizes.of(self.location_sizes))

    @cached_property
    def sizes(self) -> pd.DataFrame:
        """Per-location sizes: index ``location``, int64 columns identified, deidentified.  O(|C|) once."""
        return self.location_sizes.frame()

    @property
    def model(self) -> Model:
        """The data model these trails were filled under (see :mod:`graphlink.core.model`)."""
        return Model(self.reserved, self.multiplicity, self.reason, self.decided_by,  # type: ignore[arg-type]
                     self.evidence)

    @property
    def one_to_many(self) -> bool:
        return self.multiplicity == "one-to-many"

    @property
    def star_side(self) -> Literal["identified", "deidentified"]:
        """The side whose trails carry ``*`` (R in the link test): the reserved side, the identified side for
        one-to-many data (reserved or not), and by convention the de-identified side when nothing is reserved."""
        return "identified" if (self.reserved == "identified" or self.one_to_many) else "deidentified"

    @property
    def reserved_side(self) -> TrailSide | None:
        return {"identified": self.identified, "deidentified": self.deidentified}.get(self.reserved)

    @property
    def complete_side(self) -> TrailSide:
        return self.identified if self.star_side != "identified" else self.deidentified

    def _repr_html_(self) -> str:
        import pandas as pd

        from graphlink.display import html

        first = {side: pd.DataFrame({"element": [str(k) for k in ts.keys[:5]],
                                     "trail": [ts.trail_str(i) for i in range(min(5, len(ts)))]})
                 for side, ts in (("identified", self.identified), ("de-identified", self.deidentified))}
        return html(f"Trails: {self.model.label}", {"locations": len(self.locations),
                                                    "identified": f"{len(self.identified):,}",
                                                    "de-identified": f"{len(self.deidentified):,}"},
                    {"per-location sizes": self.sizes.reset_index(), **{f"first {s} rows": f for s, f in
                                                                        first.items()}},
                    note=self.reason + " (graphlink.io.trails.summarize for the most common trails)")

    def matrices(self) -> Trails:
        """The full trail matrices on this process: these trails themselves (Spark's trails collect theirs; the
        ``trails`` command's CSV / Parquet writers call this on whichever trails the engine gave).  O(1)."""
        return self

    def frame(self, side: Literal["identified", "deidentified"]) -> pd.DataFrame:
        """The trail matrix as a DataFrame of '0'/'1'/'*' strings (display; O(n·|C|))."""
        import pandas as pd

        ts = self.identified if side == "identified" else self.deidentified
        d = ts.dense()
        txt = np.where(d < 0, "*", d.astype(str))
        return pd.DataFrame(txt, index=pd.Index(ts.keys, name=side), columns=self.locations)


def build_trails(release: Release, reserved: ReservedChoice = "auto",
                 multiplicity: MultiplicityChoice = "auto") -> Trails:
    """Build the trail matrices: FillTrails (thesis Algorithm 1, equality reading of line 13; module docstring).

    Parameters
    ----------
    release : Release
        The validated release.
    reserved : {"auto", "deidentified", "identified", "none"}
        Which side may withhold records; ``auto`` decides (:func:`graphlink.core.model.decide`).
    multiplicity : {"auto", "one-to-one", "one-to-many"}
        One-to-many: one de-identified element may stand for several people (Appendix A).

    Returns
    -------
    Trails
        Bit-packed identified and de-identified matrices, with ``reserved``, ``multiplicity`` and ``reason``.

    Raises
    ------
    ModelAssumptionError
        Inconsistent sizes, or both readings fit and the data cannot tell (state ``reserved``).

    Examples
    --------
    >>> import graphlink as gl
    >>> trails = gl.build_trails(gl.thesis_example())
    >>> trails.model.label
    'one-to-one, de-identified reserved'
    >>> [trails.deidentified.trail_str(i) for i in range(4)]
    ['111*', '1011', '*101', '*11*']

    Complexity: O(rows + (|M| + |N|)·W) for the fill; the model decision adds link tests only when the
    per-location sizes cannot tell one-to-one from one-to-many (see :mod:`graphlink.core.model`).
    """
    n_loc = len(release.locations)
    sizes = release.location_sizes()
    equal = sizes.identified == sizes.deidentified
    eq_row = pack_columns(np.zeros(int(equal.sum()), dtype=np.int64), np.flatnonzero(equal), 1, n_loc)
    coded = _packed_sides(release)

    def fill(side: Reserved, multiplicity: Multiplicity) -> Fill:
        known = {}
        for kind, (keys, ones) in coded.items():
            if multiplicity == "one-to-many" and kind == "identified":
                known[kind] = ones                # '*' wherever absent: no equality rule (module docstring)
            elif multiplicity == "one-to-many":
                known[kind] = full_mask(len(keys), n_loc)
            elif side == kind:                    # reserved: known where disclosed and at equal-size locations
                known[kind] = ones | eq_row
            else:                                 # complete side: absence means 0
                known[kind] = full_mask(len(keys), n_loc)
        return Fill(known["identified"], coded["identified"][1], known["deidentified"], coded["deidentified"][1],
                    coded["identified"][0], coded["deidentified"][0])

    model, f = decide(sizes, len(coded["identified"][0]), len(coded["deidentified"][0]), fill, reserved,
                      multiplicity)
    return Trails(release.locations, TrailSide(f.id_keys, f.id_known, f.id_ones, n_loc),
                  TrailSide(f.de_keys, f.de_known, f.de_ones, n_loc), model.reserved, model.reason, sizes,
                  model.multiplicity, model.decided_by, model.evidence)


def _packed_sides(release: Release) -> dict[str, tuple[np.ndarray | pa.Array, np.ndarray]]:
    """Per kind: (element keys in order of first appearance, packed ``ones`` words).  A release read by the
    Arrow fast path carries them already (packed while its rows were checked for repeats); otherwise the long
    table is factorised.  O(rows + (|M| + |N|)·W)."""
    if release.coded is not None:
        return {kind: (release.coded.keys[k], release.coded.ones[k])
                for k, kind in enumerate(("identified", "deidentified"))}
    import pandas as pd

    frame = release.frame
    n_loc = len(release.locations)
    loc_index = pd.Index(release.locations)
    out = {}
    for kind in ("identified", "deidentified"):
        part = frame[frame["kind"] == kind]
        codes, keys = pd.factorize(part["element"], sort=False)
        ones = pack_columns(codes, loc_index.get_indexer(part["location"]), len(keys), n_loc)
        out[kind] = (np.asarray(keys, dtype=object), ones)
    return out


def trails_from_dense(identified: np.ndarray, deidentified: np.ndarray, *, reserved: Reserved,
                      id_keys: list[str] | None = None, de_keys: list[str] | None = None,
                      locations: list[str] | None = None, multiplicity: Multiplicity = ONE_TO_ONE) -> Trails:
    """Build Trails straight from dense matrices (1, 0, -1 for ``*``): thesis figures and tests.  O(n·|C|).

    The matrices are taken as given: for ``multiplicity="one-to-many"`` the identified matrix should carry
    ``*`` wherever a person is absent (the one-to-many fill, module docstring)."""
    identified = np.asarray(identified, dtype=np.int8).reshape(len(identified), -1)
    deidentified = np.asarray(deidentified, dtype=np.int8).reshape(len(deidentified), -1)
    n_loc = max(identified.shape[1], deidentified.shape[1])
    locations = locations or [f"c{i + 1}" for i in range(n_loc)]

    def side(d: np.ndarray, keys: list[str] | None, prefix: str) -> TrailSide:
        r, c = np.nonzero(d == 1)
        ones = pack_columns(r, c, len(d), n_loc)
        r2, c2 = np.nonzero(d >= 0)
        known = pack_columns(r2, c2, len(d), n_loc)
        return TrailSide(np.asarray(keys or [f"{prefix}{i + 1}" for i in range(len(d))], dtype=object),
                         known, ones, n_loc)

    sizes = LocationSizes(list(locations), (identified == 1).sum(0).astype(np.int64),
                          (deidentified == 1).sum(0).astype(np.int64))
    return Trails(locations, side(identified, id_keys, "m"), side(deidentified, de_keys, "n"), reserved,
                  f"{reserved} (given matrices)", sizes, multiplicity)


def location_stats(trails: Trails) -> pd.DataFrame:
    """Per-location sizes, popularity |γ_c| / |M| and binary entropy H(c) in bits (thesis §5.6.1).  O(|C|)."""
    import pandas as pd

    sizes = trails.sizes
    p = sizes["identified"].to_numpy(dtype=float) / max(len(trails.identified), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(np.where(p > 0, p * np.log2(p), 0.0) + np.where(p < 1, (1 - p) * np.log2(1 - p), 0.0))
    return pd.DataFrame({"location": list(sizes.index), "identified": sizes["identified"].to_numpy(),
                         "deidentified": sizes["deidentified"].to_numpy(), "popularity": p, "entropy (bits)": h})


def reidentification_bound(trails: Trails) -> int:
    """Most trail re-identifications possible: min(|S|, 2^|C| − 1) (thesis §4.3, TR02 §5; the all-``*``
    trail cannot be re-identified).  |S| is the number of identified elements."""
    return int(min(len(trails.identified), 2 ** len(trails.locations) - 1))
