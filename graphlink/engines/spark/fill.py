"""FillTrails and twin classes in Spark (thesis Algorithm 1; docs/algorithms.md#twin-classes), on dictionary codes.

Stages (each a Spark job; shuffle volume in rows of the release):

1. **Codes.**  Locations get their index in order of first appearance (collected: |C| rows).  Elements are
   identified by ``eid``, the input position of their first row (unique across both sides, order-preserving), so
   no global numbering is needed in Spark; the driver's dense element codes are the ranks of ``eid``.
2. **Packed trails.**  One group-by on (kind, element) folds each element's disclosures into W = ⌈|C|/64⌉
   ``bit_or`` words ``o0..o{W-1}`` (the ``ones`` mask of :mod:`graphlink.core.trails`; bit c in word c // 64 at bit
   c % 64).  Shuffle: every row once.
3. **Twin classes.**  Within a side, known words are a function of the ones words under every model (complete
   side: all known; reserved side: ones | equal-size locations; one-to-many identified: ones), so twin classes
   are the distinct ones patterns.  A window partitioned by (side, words) gives every element its class id
   ``cid`` = the smallest ``eid`` of its class — first appearance, the numbering of :func:`kernels.row_classes`.
   Shuffle: every element once; the class table reuses that partitioning.
4. **Model.**  Per-location sizes and element counts come from two aggregations; :func:`graphlink.core.model.decide`
   decides as for the local engine.  When it needs link evidence it gets a class-level fill: at most five
   member rows per class (the first five in element order: the model's evidence lists the first five elements,
   and each of those is among the first five of its class, so the elements it names are the local engine's)
   with weights that add up to the class sizes (:class:`graphlink.core.model.Fill`).  Only then are those rows
   collected: 5 × classes rows.

The driver never sees per-element data unless asked: :meth:`SparkTrails.to_trails` builds the core
:class:`~graphlink.core.trails.Trails` (O(|M| + |N|) driver memory) and :meth:`SparkTrails.summary` the local
engine's :class:`~graphlink.io.trails.TrailSummary` from class counts and the first rows only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from graphlink.config import get_config
from graphlink.core.model import (
    EVIDENCE_KEYS,
    ONE_TO_MANY,
    Fill,
    Model,
    MultiplicityChoice,
    Reserved,
    ReservedChoice,
    decide,
)
from graphlink.core.trails import Trails, TrailSide, n_words
from graphlink.io.trails import SIDES, TrailOverview, TrailSummary, trail_strings

#: member rows per twin class the model decision sees: the first in element order, as many as its evidence names
SAMPLES = EVIDENCE_KEYS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from graphlink.engines.spark.release import SparkRelease

Side = Literal["identified", "deidentified"]


def storage_level():  # noqa: ANN201  (pyspark type, imported lazily)
    """Where cached stages live: ``GRAPHLINK_SPARK_STORAGE`` (default MEMORY_AND_DISK; DISK_ONLY for releases
    larger than the cluster's memory)."""
    from pyspark import StorageLevel

    return getattr(StorageLevel, get_config().spark_storage)


def signed(word: int) -> int:
    """A uint64 bit pattern as Spark's signed long."""
    return word - (1 << 64) if word >= (1 << 63) else word


def words_of(locations: np.ndarray | list[int], n_loc: int) -> list[int]:
    """The packed words (as signed longs) with the bits of ``locations`` set."""
    out = [0] * n_words(n_loc)
    for c in locations:
        out[int(c) // 64] |= 1 << (int(c) % 64)
    return [signed(w) for w in out]


def word_cols(prefix: str, w: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(w)]


def to_uint64(frame: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """(n, W) uint64 from signed-long word columns."""
    if not cols:
        return np.zeros((len(frame), 0), np.uint64)
    return np.ascontiguousarray(frame[cols].to_numpy(dtype=np.int64)).view(np.uint64)


@dataclass(frozen=True)
class DriverSide:
    """One side collected to the driver: keys in element order, each element's class rank (first appearance),
    the class ids (``cid``, ascending = rank order) and the classes' known and ones words."""

    keys: np.ndarray
    rank: np.ndarray
    cids: np.ndarray
    known: np.ndarray
    ones: np.ndarray


@dataclass(frozen=True)
class SparkTrails:
    """The trail matrices of a release, held by Spark as twin classes (module docstring).

    ``elements``: side, element, eid, cid, o0..o{W-1}.  ``classes``: side, cid, size, o0.., k0.. (known words
    under ``model``).  ``sizes``/``locations`` are the local engine's, on the driver.
    """

    release: SparkRelease
    locations: list[str]
    sizes: pd.DataFrame
    n_identified: int
    n_deidentified: int
    elements: DataFrame
    classes: DataFrame
    model: Model
    eq_locations: list[int] = field(default_factory=list)

    @property
    def n_words(self) -> int:
        return n_words(len(self.locations))

    @property
    def star_side(self) -> Side:
        """The side whose trails carry ``*`` (as :attr:`graphlink.core.trails.Trails.star_side`)."""
        m = self.model
        return "identified" if (m.reserved == "identified" or m.multiplicity == ONE_TO_MANY) else "deidentified"

    @property
    def one_to_many(self) -> bool:
        return self.model.multiplicity == ONE_TO_MANY

    # the Trails vocabulary for the model, so the CLI's model notes read either engine's trails
    reserved = property(lambda self: self.model.reserved)
    multiplicity = property(lambda self: self.model.multiplicity)
    reason = property(lambda self: self.model.reason)
    decided_by = property(lambda self: self.model.decided_by)

    def known_rule(self, side: Side) -> Literal["full", "ones|eq", "ones"]:
        """How a side's known words follow from its ones words under the model (FillTrails, Alg. 1)."""
        m = self.model
        if m.multiplicity == ONE_TO_MANY:
            return "ones" if side == "identified" else "full"
        return "ones|eq" if m.reserved == side else "full"

    def count_classes(self) -> dict[str, int]:
        rows = self.classes.groupBy("side").count().collect()
        out = {s: 0 for s in SIDES}
        out.update({r["side"]: int(r["count"]) for r in rows})
        return out

    # ------------------------------------------------------------------------------------------- driver views
    def _collect_side(self, side: Side) -> DriverSide:
        from pyspark.sql import functions as F

        w = self.n_words
        el = (self.elements.filter(F.col("side") == side).select("element", "eid", "cid").orderBy("eid")
              .toPandas())
        cl = (self.classes.filter(F.col("side") == side).select("cid", *word_cols("k", w), *word_cols("o", w))
              .orderBy("cid").toPandas())
        cids = cl["cid"].to_numpy(np.int64)
        rank = np.searchsorted(cids, el["cid"].to_numpy(np.int64)).astype(np.int64)
        return DriverSide(el["element"].to_numpy(dtype=object), rank, cids, to_uint64(cl, word_cols("k", w)),
                          to_uint64(cl, word_cols("o", w)))

    @cached_property
    def driver(self) -> dict[str, DriverSide]:
        """Both sides collected to the driver: O(|M| + |N|) memory."""
        return {side: self._collect_side(side) for side in SIDES}

    def to_trails(self) -> Trails:
        """The core :class:`~graphlink.core.trails.Trails` (per-element words gathered from the classes), equal to
        ``build_trails`` of the same release under the same model.  O((|M| + |N|)·W) driver memory."""
        n_loc = len(self.locations)
        sides = {}
        for side in SIDES:
            d = self.driver[side]
            sides[side] = TrailSide(d.keys, d.known[d.rank], d.ones[d.rank], n_loc)
        m = self.model
        return Trails(list(self.locations), sides["identified"], sides["deidentified"], m.reserved, m.reason,
                      self.sizes, m.multiplicity, m.decided_by, m.evidence)

    def matrices(self) -> Trails:
        """The full trail matrices on the driver (:meth:`to_trails`), what
        :meth:`graphlink.core.trails.Trails.matrices` gives for the local engine's trails."""
        return self.to_trails()

    def overview(self, *, top: int = 10, preview: int = 10) -> TrailOverview:
        """The trails summary as the frozen :class:`~graphlink.io.trails.TrailOverview` that
        :func:`graphlink.io.trails.overview` returns for any trails (it calls this for Spark's), from
        :meth:`summary`'s class counts.  O(classes) in Spark, O(top + preview) collected."""
        return TrailOverview.from_dict(self.summary(top=top, preview=preview).to_dict())

    def summary(self, *, top: int = 10, preview: int = 10) -> TrailSummary:
        """The local engine's :func:`graphlink.io.trails.summarize`, from class counts: the most common trails are
        the largest classes (ties: first appearance), the preview the first elements.  O(classes) in Spark,
        O(top + preview) collected."""
        from pyspark.sql import functions as F

        w, n_loc = self.n_words, len(self.locations)
        distinct, common, head, elements = {}, {}, {}, {}
        counts = self.count_classes()
        for side in SIDES:
            cls = self.classes.filter(F.col("side") == side)
            big = cls.orderBy(F.col("size").desc(), F.col("cid")).limit(top).toPandas()
            first = (self.elements.filter(F.col("side") == side).orderBy("eid").limit(preview)
                     .join(cls.select("cid", *word_cols("k", w)), "cid").orderBy("eid").toPandas())
            distinct[side] = counts[side]
            elements[side] = self.n_identified if side == "identified" else self.n_deidentified
            common[side] = pd.DataFrame({"trail": _strings(big, w, n_loc),
                                         "count": big["size"].to_numpy(np.int64)})
            head[side] = pd.DataFrame({"element": [str(k) for k in first["element"]],
                                       "trail": _strings(first, w, n_loc)})
        m = self.model
        model = {"multiplicity": m.multiplicity, "reserved": m.reserved, "decided_by": m.decided_by,
                 "reason": m.reason}
        sizes = self.sizes.reset_index().rename(columns={"index": "location"})
        return TrailSummary(model, sizes, elements, distinct, common, head, list(self.locations))


def _strings(frame: pd.DataFrame, w: int, n_loc: int) -> list[str]:
    ts = TrailSide(np.zeros(len(frame), object), to_uint64(frame, word_cols("k", w)),
                   to_uint64(frame, word_cols("o", w)), n_loc)
    return trail_strings(ts, np.arange(len(frame)))


# ------------------------------------------------------------------------------------------------- building
def known_expr(rule: str, w: int, n_loc: int, eq: list[int]) -> list[Column]:
    """Known words k0..k{W-1} of a class under a known rule (see :meth:`SparkTrails.known_rule`)."""
    from pyspark.sql import functions as F

    full, eqw = words_of(range(n_loc), n_loc), words_of(eq, n_loc)
    if rule == "full":
        return [F.lit(full[i]).cast("long").alias(f"k{i}") for i in range(w)]
    if rule == "ones":
        return [F.col(f"o{i}").alias(f"k{i}") for i in range(w)]
    return [F.col(f"o{i}").bitwiseOR(F.lit(eqw[i]).cast("long")).alias(f"k{i}") for i in range(w)]


def first_locations(rows: DataFrame) -> list[str]:
    """The release's locations in first-appearance order (by ``_row``), as the local engine orders them: the
    order of trail columns and of ``Location.index``. One aggregation, O(rows); O(locations) collected."""
    from pyspark.sql import functions as F

    locs = rows.groupBy("location").agg(F.min("_row").alias("first")).orderBy("first").collect()
    return [r["location"] for r in locs]


def build(release: SparkRelease, reserved: ReservedChoice = "auto",
          multiplicity: MultiplicityChoice = "auto") -> SparkTrails:
    """FillTrails in Spark under the data model :func:`graphlink.core.model.decide` chooses (module docstring).

    Cost: two shuffles of the release rows (packing, classes), a few aggregations, |C| + 2·|C| rows collected."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = release.rows.sparkSession
    rows = release.rows
    locations = first_locations(rows)
    n_loc = len(locations)
    w = n_words(n_loc)
    loc_df = spark.createDataFrame([(name, i) for i, name in enumerate(locations)], "location string, li int")
    word, bit = F.expr("li div 64"), F.expr("shiftleft(cast(1 as bigint), li % 64)")
    elements = (rows.join(F.broadcast(loc_df), "location")
                .groupBy(F.col("kind").alias("side"), "element")
                .agg(F.min("_row").alias("eid"),
                     *[F.bit_or(F.when(word == i, bit).otherwise(F.lit(0).cast("long"))).alias(f"o{i}")
                       for i in range(w)]))
    ones = word_cols("o", w)
    elements = (elements.withColumn("cid", F.min("eid").over(Window.partitionBy("side", *ones)))
                .persist(storage_level()))
    raw_classes = elements.groupBy("side", "cid", *ones).agg(F.count(F.lit(1)).alias("size")).persist(storage_level())

    counts = {r["side"]: int(r["n"]) for r in
              raw_classes.groupBy("side").agg(F.sum("size").alias("n")).collect()}
    per_loc = rows.groupBy("location", "kind").count().toPandas()
    sizes = (per_loc.pivot(index="location", columns="kind", values="count")
             .reindex(columns=["identified", "deidentified"]).reindex(locations).fillna(0).astype("int64"))
    sizes.index.name = "location"
    sizes.columns.name = None
    n_m, n_n = counts.get("identified", 0), counts.get("deidentified", 0)
    eq = np.flatnonzero((sizes["identified"] == sizes["deidentified"]).to_numpy()).tolist()

    samples = _Samples(elements, w, n_loc, eq)
    model, _ = decide(sizes, n_m, n_n, samples.fill, reserved, multiplicity)
    probe = SparkTrails(release, locations, sizes, n_m, n_n, elements, raw_classes, model, eq)
    known = {side: known_expr(probe.known_rule(side), w, n_loc, eq) for side in SIDES}
    parts = [raw_classes.filter(F.col("side") == side).select("side", "cid", "size", *ones, *known[side])
             for side in SIDES]
    classes = parts[0].unionByName(parts[1]).persist(storage_level())
    return SparkTrails(release, locations, sizes, n_m, n_n, elements, classes, model, eq)


class _Samples:
    """The class-level fill for :func:`graphlink.core.model.decide` (module docstring, stage 4).  Nothing is
    collected unless the decision reads the arrays."""

    def __init__(self, elements: DataFrame, w: int, n_loc: int, eq: list[int]) -> None:
        self.elements, self.w, self.n_loc, self.eq = elements, w, n_loc, eq

    @cached_property
    def rows(self) -> dict[str, pd.DataFrame]:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        part = Window.partitionBy("side", "cid")
        picked = (self.elements.withColumn("rn", F.row_number().over(part.orderBy("eid")))
                  .withColumn("size", F.count(F.lit(1)).over(part)).filter(F.col("rn") <= SAMPLES)
                  .select("side", "eid", "element", "rn", "size", *word_cols("o", self.w)).toPandas())
        out = {}
        for side in SIDES:
            df = picked[picked["side"] == side].sort_values("eid", kind="stable").reset_index(drop=True)
            m = np.minimum(df["size"].to_numpy(np.int64), SAMPLES)
            rn = df["rn"].to_numpy(np.int64)
            df["weight"] = np.where(rn < m, 1, df["size"].to_numpy(np.int64) - (m - 1))
            out[side] = df
        return out

    def fill(self, reserved: Reserved, multiplicity: str) -> Fill:
        return _LazyFill(self, reserved, multiplicity)  # type: ignore[return-value]


class _LazyFill:
    """A :class:`graphlink.core.model.Fill` whose arrays are collected on first read (duck-typed)."""

    def __init__(self, samples: _Samples, reserved: Reserved, multiplicity: str) -> None:
        self.samples, self.reserved, self.multiplicity = samples, reserved, multiplicity

    def _ones(self, side: Side) -> np.ndarray:
        return to_uint64(self.samples.rows[side], word_cols("o", self.samples.w))

    def _known(self, side: Side) -> np.ndarray:
        s = self.samples
        ones = self._ones(side)
        full = np.array(words_of(range(s.n_loc), s.n_loc), np.int64).view(np.uint64)
        if self.multiplicity == ONE_TO_MANY:
            return ones if side == "identified" else np.repeat(full[None, :], len(ones), axis=0)
        if self.reserved == side:
            return ones | np.array(words_of(s.eq, s.n_loc), np.int64).view(np.uint64)[None, :]
        return np.repeat(full[None, :], len(ones), axis=0)

    id_known = property(lambda self: self._known("identified"))
    id_ones = property(lambda self: self._ones("identified"))
    de_known = property(lambda self: self._known("deidentified"))
    de_ones = property(lambda self: self._ones("deidentified"))
    id_keys = property(lambda self: self.samples.rows["identified"]["element"].to_numpy(dtype=object))
    de_keys = property(lambda self: self.samples.rows["deidentified"]["element"].to_numpy(dtype=object))
    id_weight = property(lambda self: self.samples.rows["identified"]["weight"].to_numpy(np.int64))
    de_weight = property(lambda self: self.samples.rows["deidentified"]["weight"].to_numpy(np.int64))
