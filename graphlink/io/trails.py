"""Trail matrices for people and files: a summary that reads at any size, and streamed full-matrix writers.

The summary (per-location sizes, the data model and why, distinct trails per side, the most common trails with
their counts, a preview of the first rows) costs O((|M| + |N|)·W) on the packed words (fingerprints, never
strings for every row).  :func:`overview` computes it as a frozen :class:`TrailOverview` without pandas (what
``graphlink trails`` prints; ``to_dict()`` is its JSON); :func:`summarize` wraps the same data in a
:class:`TrailSummary` of DataFrames for notebooks.
The writers emit the full matrices (thesis Definition 12: one row per element, one column per location) in
chunks, so memory stays O(chunk·|C|) whatever the release size:

* CSV: ``side,element,<location>...`` with values ``1``, ``0`` or ``*``;
* Parquet: the same columns, locations as int8 (1, 0, null for ``*``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import numpy as np

from graphlink.core.trails import Trails, TrailSide, unpack
from graphlink.kernels.rows import fingerprint

if TYPE_CHECKING:          # pandas only for TrailSummary's tables: overview (the CLI) never imports it
    import pandas as pd

SIDES: tuple[Literal["identified", "deidentified"], ...] = ("identified", "deidentified")
CHUNK = 50_000


def _chars(side: TrailSide, rows: slice | np.ndarray) -> np.ndarray:
    """(n, |C|) uint8 array of b'1', b'0', b'*' for the given rows.  O(n·|C|)."""
    k = unpack(side.known[rows], side.n_locations)
    o = unpack(side.ones[rows], side.n_locations)
    return np.where(k, np.where(o, ord("1"), ord("0")), ord("*")).astype(np.uint8)


def trail_strings(side: TrailSide, rows: np.ndarray) -> list[str]:
    """Trails of ``rows`` as '0'/'1'/'*' strings (one bytes view per row).  O(len(rows)·|C|)."""
    if len(rows) == 0:
        return []
    chars = np.ascontiguousarray(_chars(side, rows))
    return [b.decode() for b in chars.view(f"S{side.n_locations}").ravel()]


@dataclass(frozen=True)
class TrailSummary:
    """What a person needs to see of two trail matrices (see the module docstring).

    Examples
    --------
    Made by :func:`summarize` (``graphlink.summarize_trails``):

    >>> import graphlink as gl
    >>> summary = gl.summarize_trails(gl.build_trails(gl.thesis_example()))
    >>> summary.locations, sorted(summary.to_dict())[:3]
    (['H1', 'H2', 'H3', 'H4'], ['common_trails', 'distinct_trails', 'elements'])
    """

    model: dict
    sizes: pd.DataFrame                     # location, identified, deidentified
    elements: dict[str, int]
    distinct: dict[str, int]                # distinct trails per side
    common: dict[str, pd.DataFrame]         # per side: trail, count (most common first)
    preview: dict[str, pd.DataFrame]        # per side: element, trail (first rows)
    locations: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        from graphlink.display import html

        tables = {"per-location sizes": self.sizes}
        for side in SIDES:
            tables[f"most common {side} trails ({self.distinct[side]:,} distinct)"] = self.common[side]
        return html("Trail summary", {"model": f"{self.model['multiplicity']}, reserved {self.model['reserved']}",
                                      **{s: f"{n:,}" for s, n in self.elements.items()}}, tables,
                    note=self.model["reason"])

    def to_dict(self) -> dict:
        return {"locations": self.locations, "model": self.model,
                "sizes": self.sizes.to_dict(orient="records"), "elements": self.elements,
                "distinct_trails": self.distinct,
                "common_trails": {s: f.to_dict(orient="records") for s, f in self.common.items()},
                "preview": {s: f.to_dict(orient="records") for s, f in self.preview.items()}}


def _trail_counts(side: TrailSide) -> tuple[np.ndarray, np.ndarray]:
    """(representative row, multiplicity) of every distinct trail, most common first.  64-bit fingerprints of
    (known, ones) group the rows; a fingerprint bucket whose rows differ is split exactly.  O(n log n + n·W)."""
    n = len(side)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    words = np.hstack([side.known, side.ones])
    fp = fingerprint(words)
    order = np.argsort(fp, kind="stable")
    fs = fp[order]
    start = np.flatnonzero(np.r_[True, fs[1:] != fs[:-1]])
    counts = np.diff(np.r_[start, n])
    reps = order[start]
    same = np.all(words[order] == words[np.repeat(reps, counts)], axis=1)
    if not same.all():                        # a fingerprint collision: regroup exactly (rare)
        from graphlink.kernels.rows import row_classes

        reps, cls = row_classes(words)
        counts = np.bincount(cls, minlength=len(reps))
    top = np.lexsort((reps, -counts))
    return reps[top].astype(np.int64), counts[top].astype(np.int64)


@dataclass(frozen=True)
class TrailCount:
    """One distinct trail of a side and how many of its elements have it.

    Attributes
    ----------
    trail : str
        The trail: one character per location, ``1`` (disclosed there), ``0`` (not) or ``*`` (withheld).
    count : int
        Elements of the side with exactly this trail.
    """

    trail: str
    count: int


@dataclass(frozen=True)
class TrailRow:
    """One element of a side with its trail (a row of the preview).

    Attributes
    ----------
    element : str
        The element's key.
    trail : str
        Its trail (as in :class:`TrailCount`).
    """

    element: str
    trail: str


@dataclass(frozen=True)
class LocationCount:
    """The records one location discloses.

    Attributes
    ----------
    location : str
        The location's name.
    identified, deidentified : int
        Identified and de-identified records it discloses.
    """

    location: str
    identified: int
    deidentified: int


@dataclass(frozen=True)
class SideOverview:
    """One side (identified or de-identified) of the trail matrices.

    Attributes
    ----------
    elements : int
        Its elements (rows of its matrix).
    distinct : int
        Its distinct trails.
    common : tuple of TrailCount
        The most common trails, most common first (ties: first appearance), at most ``top``.
    preview : tuple of TrailRow
        Its first rows, at most ``preview``.
    """

    elements: int
    distinct: int
    common: tuple[TrailCount, ...]
    preview: tuple[TrailRow, ...]


@dataclass(frozen=True)
class TrailOverview:
    """The summary of two trail matrices as typed data, without pandas (:func:`overview`; what
    ``graphlink trails`` prints, for every engine's trails).

    Attributes
    ----------
    locations : tuple of str
        The locations, in the matrices' column order.
    multiplicity, reserved, decided_by, reason : str
        How the release is read (:class:`graphlink.core.model.ModelDecision`'s fields of the same names).
    sizes : tuple of LocationCount
        Records per location.
    identified, deidentified : SideOverview
        The two sides.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.io.trails import overview
    >>> o = overview(gl.build_trails(gl.thesis_example()), top=1)
    >>> o.identified.elements, o.identified.distinct, len(o.identified.common), o.sizes[0].location
    (4, 4, 1, 'H1')
    >>> sorted(o.to_dict())
    ['common_trails', 'distinct_trails', 'elements', 'locations', 'model', 'preview', 'sizes']
    """

    locations: tuple[str, ...]
    multiplicity: str
    reserved: str
    decided_by: str
    reason: str
    sizes: tuple[LocationCount, ...]
    identified: SideOverview
    deidentified: SideOverview

    def side(self, name: Literal["identified", "deidentified"]) -> SideOverview:
        """The side called ``name``."""
        return self.identified if name == "identified" else self.deidentified

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: exactly ``summarize(...).to_dict()`` (keys locations, model, sizes, elements,
        distinct_trails, common_trails, preview; tables as lists of records).  O(locations + top + preview)."""
        sides = {name: self.side(name) for name in SIDES}
        return {"locations": list(self.locations),
                "model": {"multiplicity": self.multiplicity, "reserved": self.reserved,
                          "decided_by": self.decided_by, "reason": self.reason},
                "sizes": [asdict(c) for c in self.sizes],
                "elements": {n: s.elements for n, s in sides.items()},
                "distinct_trails": {n: s.distinct for n, s in sides.items()},
                "common_trails": {n: [asdict(c) for c in s.common] for n, s in sides.items()},
                "preview": {n: [asdict(r) for r in s.preview] for n, s in sides.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrailOverview:
        """The overview from :meth:`to_dict`'s layout (trails that build their summary elsewhere, Spark's
        :class:`TrailSummary`, hand it over this way).  O(locations + top + preview)."""
        def side(name: str) -> SideOverview:
            return SideOverview(int(data["elements"][name]), int(data["distinct_trails"][name]),
                                tuple(TrailCount(str(r["trail"]), int(r["count"]))
                                      for r in data["common_trails"][name]),
                                tuple(TrailRow(str(r["element"]), str(r["trail"])) for r in data["preview"][name]))

        model = data["model"]
        return cls(tuple(map(str, data["locations"])), model["multiplicity"], model["reserved"],
                   model["decided_by"], model["reason"],
                   tuple(LocationCount(str(r["location"]), int(r["identified"]), int(r["deidentified"]))
                         for r in data["sizes"]),
                   side("identified"), side("deidentified"))


def overview(trails: Trails, *, top: int = 10, preview: int = 10) -> TrailOverview:
    """The summary of :func:`summarize` as a frozen :class:`TrailOverview`, without pandas (``to_dict()`` is
    exactly ``summarize(...).to_dict()``).  Assumes nothing beyond valid trails.  Complexity: that of
    :func:`summarize`.

    Trails held elsewhere give their own overview through an ``overview(top=, preview=)`` method (Spark's
    :class:`~graphlink.engines.spark.fill.SparkTrails`, from its twin classes, without collecting the matrices):
    the ``trails`` command calls this one function on whichever trails its engine gave.
    """
    own = getattr(trails, "overview", None)
    if callable(own):
        return own(top=top, preview=preview)
    sides = []
    for name in SIDES:
        side = getattr(trails, name)
        reps, counts = _trail_counts(side)
        rows = np.arange(min(preview, len(side)))
        sides.append(SideOverview(
            len(side), len(reps),
            tuple(TrailCount(t, int(c)) for t, c in zip(trail_strings(side, reps[:top]), counts[:top], strict=True)),
            tuple(TrailRow(str(k), t) for k, t in zip(side.keys[rows], trail_strings(side, rows), strict=True))))
    sizes = trails.location_sizes
    return TrailOverview(tuple(map(str, trails.locations)), trails.multiplicity, trails.reserved, trails.decided_by,
                         trails.reason,
                         tuple(LocationCount(str(c), int(g), int(w))
                               for c, g, w in zip(sizes.locations, sizes.identified, sizes.deidentified, strict=True)),
                         sides[0], sides[1])


def summarize(trails: Trails, *, top: int = 10, preview: int = 10) -> TrailSummary:
    """Summarise trail matrices for a person: sizes, the data model, distinct and most common trails, a preview.

    Parameters
    ----------
    trails : Trails
    top, preview : int
        How many most common trails and first rows to keep per side.

    Returns
    -------
    TrailSummary
        Renders as tables in Jupyter; ``to_dict()`` for JSON.

    Examples
    --------
    >>> import graphlink as gl
    >>> s = gl.summarize_trails(gl.build_trails(gl.thesis_example()))
    >>> s.distinct, s.elements["identified"]
    ({'identified': 4, 'deidentified': 4}, 4)

    Complexity: O((|M| + |N|)·W + (|M| + |N|) log(|M| + |N|)).
    """
    import pandas as pd

    d = overview(trails, top=top, preview=preview).to_dict()

    def table(records: list[dict], columns: list[str]) -> pd.DataFrame:
        return pd.DataFrame.from_records(records, columns=columns)

    return TrailSummary(d["model"], table(d["sizes"], ["location", "identified", "deidentified"]), d["elements"],
                        d["distinct_trails"], {s: table(r, ["trail", "count"]) for s, r in d["common_trails"].items()},
                        {s: table(r, ["element", "trail"]) for s, r in d["preview"].items()}, d["locations"])


# ------------------------------------------------------------------------------------------------- writers
def _csv_chunks(trails: Trails, chunk: int) -> Iterator[str]:
    yield ",".join(["side", "element", *(_csv_field(c) for c in trails.locations)]) + "\n"
    n_loc = len(trails.locations)
    for name in SIDES:
        side = getattr(trails, name)
        for lo in range(0, len(side), chunk):
            hi = min(lo + chunk, len(side))
            chars = _chars(side, slice(lo, hi))
            body = np.full((hi - lo, 2 * n_loc), ord(","), np.uint8)
            body[:, 1::2] = chars                               # ",1,0,*..." per row, fixed width
            cells = np.ascontiguousarray(body).view(f"S{2 * n_loc}").ravel()
            keys = [_csv_field(str(k)) for k in side.keys[lo:hi]]
            yield "".join(f"{name},{k}{b.decode()}\n" for k, b in zip(keys, cells, strict=True))


def _csv_field(text: str) -> str:
    """RFC 4180 quoting where needed (keys and location names may hold commas or quotes)."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_csv(trails: Trails, out: IO[str], *, chunk: int = CHUNK) -> int:
    """Stream the full matrices as CSV to an open text stream.  Returns the number of rows.  O(rows·|C|).

    Examples
    --------
    Fig. 3.4's trails; ``*`` where a de-identified element's absence says nothing:

    >>> import io
    >>> import graphlink as gl
    >>> from graphlink.io.trails import write_csv
    >>> out = io.StringIO()
    >>> write_csv(gl.build_trails(gl.thesis_example()), out)
    8
    >>> lines = out.getvalue().splitlines()
    >>> lines[0], lines[1], lines[5]
    ('side,element,H1,H2,H3,H4', 'identified,Ali,1,1,1,0', 'deidentified,actg,1,1,1,*')
    """
    rows = 0
    for block in _csv_chunks(trails, chunk):
        out.write(block)
        rows += block.count("\n")
    return rows - 1


def write_parquet(trails: Trails, path: str | Path, *, chunk: int = CHUNK) -> int:
    """Write the full matrices as Parquet (row groups of ``chunk`` rows).  Returns the number of rows.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pyarrow.parquet as pq
    >>> import graphlink as gl
    >>> from graphlink.io.trails import write_parquet
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     rows = write_parquet(gl.build_trails(gl.thesis_example()), Path(folder) / "trails.parquet")
    ...     print(rows, pq.read_table(Path(folder) / "trails.parquet").column_names)
    8 ['side', 'element', 'H1', 'H2', 'H3', 'H4']
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(trails.locations)
    schema = pa.schema([("side", pa.string()), ("element", pa.string()), *((c, pa.int8()) for c in names)])
    rows = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        for name in SIDES:
            side = getattr(trails, name)
            for lo in range(0, len(side), chunk):
                hi = min(lo + chunk, len(side))
                k = unpack(side.known[lo:hi], side.n_locations)
                o = unpack(side.ones[lo:hi], side.n_locations).astype(np.int8)
                cols = [pa.array([name] * (hi - lo), pa.string()),
                        pa.array([str(x) for x in side.keys[lo:hi]], pa.string())]
                cols += [pa.array(o[:, c], pa.int8(), mask=~k[:, c]) for c in range(len(names))]
                writer.write_table(pa.Table.from_arrays(cols, schema=schema))
                rows += hi - lo
    return rows
