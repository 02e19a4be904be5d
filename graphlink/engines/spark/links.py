"""Class-level link edges and REIDIT-C in Spark (Definition 17, Algorithms 2/3; docs/algorithms.md#link-generation).

**Links.**  A reserved-side class r (the side with ``*``) links a complete-side class s iff
``((s.ones ^ r.ones) & r.known) == 0`` in every word.  For releases r.known = r.ones | E, where E is a set of
locations fixed by the model (every location when nothing is reserved; the equal-size locations on the reserved
side of one-to-one data; none for one-to-many identified trails), so with F = ~E the test splits into

* an **equality** on the E part: ``s.ones & E == r.ones & E`` — an equi-join key (the "pattern"), and
* a **containment** on the F part: ``r.ones & F ⊆ s.ones``.

Classes are joined pattern-grouped on (E key, anchor set): an r class's anchor set is its K rarest F locations
(fewest complete-side elements, from the per-location sizes; all of them when it has fewer than K), and the
complete side is exploded to one row per j-subset of its F locations for each anchor-set size j in use.  r
classes without F ones join on the E key alone.  Every candidate is verified with the full word predicate.
K ≤ ``K_MAX`` (``GRAPHLINK_SPARK_ANCHORS``, default 3) is chosen by :func:`anchor_plan` on exact counts
(per-(key, anchor set) class counts of both sides: |C|^K rows at most): exploded rows Σ_s C(|s ∩ F|, j) plus
candidates Σ_r |{s ⊇ anchors(r)} ∩ key(r)|.  On a uniform release (visit probability p, |F| locations) K
anchors cost about |S|·(p|F|)^K/K! rows plus |R|·|S|·p^K candidates, so each extra anchor divides the
candidates by 1/p while the explosion grows by p|F|/K: sparse trails (few ones) take K = 3, dense ones (many
ones per trail) stay at 1 or 2.  Unreserved releases (E = everything) are a single equi-join on the whole trail.

**REIDIT-C** groups fully known trails by their packed words: a pair is re-identified when its trail is the only
one of its class on both sides, i.e. both classes are fully known singletons.  One equi-join on the words of
singleton classes; the pairs come back in the local engine's order (64-bit fingerprint of the trail words).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphlink.analysis.reidit import Reidentification, require_one_to_one
from graphlink.analysis.reidit import reidit_c as core_reidit_c
from graphlink.analysis.results import ReidentifySummary
from graphlink.config import get_config
from graphlink.core.trails import Trails, TrailSide
from graphlink.engines.spark.fill import SparkTrails, storage_level, to_uint64, word_cols, words_of
from graphlink.io.pairs import one_file  # noqa: F401  (re-exported: the kind of an --out name, for every engine)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def _bit(c: int, prefix: str = "o") -> Column:
    """Whether location ``c`` holds a 1 in the words ``{prefix}0..``."""
    from pyspark.sql import functions as F

    return F.col(f"{prefix}{c // 64}").bitwiseAND(F.lit(words_of([c], c + 1)[c // 64]).cast("long")) != 0


def class_links(st: SparkTrails) -> DataFrame:
    """All linked class pairs ``(id_cid, de_cid)`` (module docstring).  Distinct, unordered."""
    from pyspark.sql import functions as F

    w, n_loc = st.n_words, len(st.locations)
    ones, known = word_cols("o", w), word_cols("k", w)
    star = st.star_side
    other = "deidentified" if star == "identified" else "identified"
    rule = st.known_rule(star)
    e_locs = list(range(n_loc)) if rule == "full" else (st.eq_locations if rule == "ones|eq" else [])
    f_locs = sorted(set(range(n_loc)) - set(e_locs))
    ew = words_of(e_locs, n_loc)
    key = [f"e{i}" for i in range(w) if ew[i] != 0]

    def e_key(frame: DataFrame, prefix: str) -> DataFrame:
        return frame.select("*", *[F.col(f"{prefix}{i}").bitwiseAND(F.lit(ew[i]).cast("long")).alias(f"e{i}")
                                   for i in range(w) if ew[i] != 0])

    r = e_key(st.classes.filter(F.col("side") == star).select(F.col("cid").alias("r"), *ones, *known), "o")
    s = e_key(st.classes.filter(F.col("side") == other).select(F.col("cid").alias("s"),
                                                               *[F.col(c).alias(f"s{c}") for c in ones]), "so")
    ok = F.lit(True)
    for i in range(w):
        ok = ok & (F.col(f"so{i}").bitwiseXOR(F.col(f"o{i}")).bitwiseAND(F.col(f"k{i}")) == 0)
    parts = []
    if f_locs:
        size = st.sizes[other].to_numpy()
        by_rarity = sorted(f_locs, key=lambda c: (size[c], c))
        r_any = r.withColumn("_held", F.array_compact(F.array(*[F.when(_bit(c), F.lit(c)) for c in by_rarity])))
        s_held = s.withColumn("_held", F.array_compact(F.array(*[F.when(_bit(c, "so"), F.lit(c)) for c in f_locs])))
        k_max, used = anchor_plan(r_any, s_held, key, n_loc)
        for j in used:
            # r classes with j F ones (j < k_max) or at least k_max: their j rarest F locations against every
            # j-subset of a complete-side class's F locations
            f = F.size("_held")
            r_j = r_any.filter(f == j if j < k_max else f >= j).withColumn("_code", _code(
                F.array_sort(F.slice("_held", 1, j)), j, n_loc))
            s_j = s_held.select("*", F.explode(_subsets(F.col("_held"), j, n_loc)).alias("_code"))
            parts.append(r_j.join(s_j.drop("_held"), [*key, "_code"]).filter(ok).select("r", "s"))
        r_plain = r_any.filter(F.size("_held") == 0)
    else:
        r_plain = r
    if key:
        parts.append(r_plain.join(s, key).filter(ok).select("r", "s"))
    if not parts:                       # one side has no classes: no links
        return st.classes.sparkSession.createDataFrame([], "id_cid long, de_cid long")
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    if star == "identified":
        return out.select(F.col("r").alias("id_cid"), F.col("s").alias("de_cid"))
    return out.select(F.col("s").alias("id_cid"), F.col("r").alias("de_cid"))


#: largest anchor set tried (k-subsets of a complete-side class's F locations are exploded for k ≤ this)


def _code(arr: Column, k: int, n_loc: int) -> Column:
    """An ascending array of k locations as one long: Σ a_i·|C|^(k-1-i)."""
    from pyspark.sql import functions as F

    out = F.lit(0).cast("long")
    for i in range(k):
        out = out * n_loc + F.element_at(arr, i + 1).cast("long")
    return out


def _subsets(held: Column, k: int, n_loc: int) -> Column:
    """Every k-subset of the ascending locations ``held``, encoded as :func:`_code` encodes it.  O(C(|held|, k))."""
    from pyspark.sql import functions as F

    if k == 1:
        return F.transform(held, lambda x: x.cast("long"))
    return F.flatten(F.transform(held, lambda x, i: F.transform(
        _subsets(F.slice(held, i + 2, F.greatest(F.size(held) - i - 1, F.lit(0))), k - 1, n_loc),
        lambda t: x.cast("long") * (n_loc ** (k - 1)) + t)))


def anchor_plan(r_any: DataFrame, s_held: DataFrame, key: list[str], n_loc: int, k_max: int | None = None, *,
                force: int | None = None) -> tuple[int, list[int]]:
    """How many anchors the containment join uses (module docstring): the K ≤ ``k_max`` with the fewest exploded
    complete-side rows plus candidate pairs, from exact counts.  Σ_s C(|s ∩ F|, j) is computed from the
    distribution of |s ∩ F| first, so a plan whose explosion alone exceeds the best cost is never exploded.
    O(classes) per plan considered, collected: O(|C|^K) rows at most.  Returns K and the anchor-set sizes that
    have r classes (every j < K held by some r class with exactly j F ones, and K).  ``force`` fixes K (tests)."""
    from math import comb

    from pyspark.sql import functions as F

    k_max = get_config().spark_anchors if k_max is None else k_max
    if n_loc ** k_max >= 2 ** 62:
        k_max = max(1, next(k for k in range(k_max, 0, -1) if n_loc ** k < 2 ** 62))
    r_f = {int(r[0]): int(r[1]) for r in r_any.groupBy(F.size("_held")).count().collect()}
    s_f = {int(r[0]): int(r[1]) for r in s_held.groupBy(F.size("_held")).count().collect()}
    if not any(f > 0 for f in r_f):
        return 1, []
    if force:
        return force, [j for j in range(1, force) if r_f.get(j)] + [force]

    def rows(j: int) -> int:
        return sum(n * comb(f, j) for f, n in s_f.items())

    def candidates(j: int, exact: bool) -> int:
        f = F.size("_held")
        rs = r_any.filter(f == j if exact else f >= j).withColumn("_code", _code(
            F.array_sort(F.slice("_held", 1, j)), j, n_loc))
        rc = rs.groupBy(*key, "_code").agg(F.count(F.lit(1)).alias("nr"))
        sc = (s_held.select(*key, F.explode(_subsets(F.col("_held"), j, n_loc)).alias("_code"))
              .groupBy(*key, "_code").agg(F.count(F.lit(1)).alias("ns")))
        return int(rc.join(sc, [*key, "_code"]).agg(F.sum(F.col("nr") * F.col("ns"))).collect()[0][0] or 0)

    best_k, best, below = 1, rows(1) + candidates(1, exact=False), 0
    for k in range(2, k_max + 1):
        if not any(f >= k for f in r_f):
            break
        if r_f.get(k - 1):                       # r classes with exactly k - 1 F ones join on all of them
            below += rows(k - 1) + candidates(k - 1, exact=True)
        if below + rows(k) >= best:
            continue
        cost = below + rows(k) + candidates(k, exact=False)
        if cost < best:
            best_k, best = k, cost
    return best_k, [j for j in range(1, best_k) if r_f.get(j)] + [best_k]


def reidit_c_pairs(st: SparkTrails) -> DataFrame:
    """REIDIT-C's pairs as a Spark DataFrame ``(identified_eid, identified, deidentified, ones)``, never collected:
    one equi-join of fully known singleton classes on their words (Alg. 2; the sort/hash Alg. 3 as a distributed
    group-by); ``ones`` is the number of locations of the shared trail.  O(classes) shuffled."""
    from pyspark.sql import functions as F

    require_one_to_one(st, "REIDIT-C")          # duck-typed: SparkTrails has one_to_many and model
    w, n_loc = st.n_words, len(st.locations)
    ones = word_cols("o", w)
    full = words_of(range(n_loc), n_loc)
    is_full = F.lit(True)
    for i in range(w):
        is_full = is_full & (F.col(f"k{i}") == F.lit(full[i]).cast("long"))
    single = st.classes.filter((F.col("size") == 1) & is_full)
    keys = st.elements.select("eid", "element")

    def side(name: str, alias: str) -> DataFrame:
        cls = single.filter(F.col("side") == name).select(F.col("cid").alias("eid"), *ones)
        return cls.join(keys, "eid").select(F.col("eid").alias(f"{alias}_eid"), F.col("element").alias(alias), *ones)

    count = F.lit(0)
    for c in ones:
        count = count + F.bit_count(F.col(c))
    return (side("identified", "identified").join(side("deidentified", "deidentified").drop("deidentified_eid"), ones)
            .select("identified_eid", "identified", "deidentified", count.cast("long").alias("ones"), *ones))


def reidit_c(st: SparkTrails) -> Reidentification:
    """REIDIT-C on the pairs of :func:`reidit_c_pairs`, collected: the core :func:`graphlink.analysis.reidit.reidit_c`
    then writes the reasons and the order for just those pairs, so the result equals the local engine's.  O(pairs)
    collected (:func:`write_reidit_c` writes them from the executors instead)."""
    w, n_loc = st.n_words, len(st.locations)
    ones = word_cols("o", w)
    full = words_of(range(n_loc), n_loc)
    # the core orders pairs by identified element, i.e. by input position (eid): sort the collected rows by it,
    # Spark's join returns them in no particular order
    got = (reidit_c_pairs(st).drop("ones").toPandas().sort_values("identified_eid", kind="stable")
           .reset_index(drop=True))
    words = to_uint64(got, ones)
    known = np.repeat(np.array(full, np.int64).view(np.uint64)[None, :], len(got), axis=0)
    pairs = Trails(list(st.locations), TrailSide(got["identified"].to_numpy(dtype=object), known, words, n_loc),
                   TrailSide(got["deidentified"].to_numpy(dtype=object), known.copy(), words.copy(), n_loc),
                   st.model.reserved, st.model.reason, st.sizes, st.model.multiplicity, st.model.decided_by,
                   st.model.evidence)
    res = core_reidit_c(pairs)
    return res.with_summary(identified=st.n_identified, deidentified=st.n_deidentified)


def write_pairs(pairs: DataFrame, out: str) -> None:
    """Write a pair DataFrame to ``out``: one file when :func:`graphlink.io.pairs.one_file` says so, else the new
    folder ``out``.

    Parquet when ``out`` ends in ``.parquet``/``.pq`` (before any ``/``), else CSV with a header and ``""``-escaped
    quotes (what pandas reads back, keys with commas, quotes and line breaks included).  The executors write part
    files either way; for one file they write them into a hidden folder beside ``out``, and the driver joins the
    parts in order into ``out`` (CSV: one header, then the parts' bytes; Parquet: the parts' row groups, one at a
    time, so the driver never holds the table) and removes the folder.  Spark's output committer makes a folder
    appear whole or not at all, and :func:`graphlink.fileio.atomic_path` does the same for the file; an existing
    folder is refused, an existing regular file replaced (as the local engine's writer does, after the command's
    :func:`graphlink.io.pairs.check_pairs_out`).  O(pairs), written by the executors; joining the parts reads them
    once more on the driver.
    """
    from graphlink.io.pairs import PARQUET_ENDINGS

    parquet = out.rstrip("/\\").lower().endswith(PARQUET_ENDINGS)
    if not one_file(out):
        _write_parts(pairs, out.rstrip("/\\") if "://" not in out else out, parquet=parquet, header=True)
        return
    import secrets
    import shutil

    from graphlink.fileio import atomic_path

    target = Path(out)
    if target.exists() and not target.is_file():
        raise FileExistsError(f"{out} already exists and is no file")
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = target.parent / f".{target.name}.parts-{secrets.token_hex(4)}"
    try:
        _write_parts(pairs, str(folder), parquet=parquet, header=False)
        with atomic_path(target) as tmp:
            _join_parts(folder, tmp, pairs.columns, parquet=parquet)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write_parts(pairs: DataFrame, out: str, *, parquet: bool, header: bool) -> None:
    writer = pairs.write.mode("errorifexists")
    if parquet:
        writer.parquet(out)
    else:
        writer.option("header", header).option("escape", '"').csv(out)


def _join_parts(folder: Path, tmp: Path, columns: list[str], *, parquet: bool) -> None:
    """The parts of ``folder`` in their order (Spark numbers them by partition) joined into the file ``tmp``."""
    import shutil

    parts = sorted(p for p in folder.glob("part-*") if p.is_file())
    if not parquet:
        with open(tmp, "wb") as fh:
            fh.write((",".join(columns) + "\n").encode("utf-8"))      # the column names need no quoting
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, fh, 1 << 20)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = [pq.ParquetFile(p) for p in parts if p.stat().st_size]
    schema = files[0].schema_arrow if files else pa.schema([(c, pa.string()) for c in columns])
    with pq.ParquetWriter(tmp, schema) as writer:
        for pf in files:
            for i in range(pf.num_row_groups):
                writer.write_table(pf.read_row_group(i).cast(schema))
        if not files:
            writer.write_table(schema.empty_table())


def write_reidit_c(st: SparkTrails, out: str, *, explain: bool = False) -> ReidentifySummary:
    """Write REIDIT-C's pairs from the executors to the folder ``out`` (:func:`write_pairs`), without collecting
    them: for results too large for the driver.  Columns ``identified, deidentified`` (and ``reason``, the core's
    words, with ``explain``); each part sorted by the identified element's input position.  Returns the summary
    of :func:`reidit_c`.  O(classes) shuffled, O(1) collected."""
    from pyspark.sql import functions as F

    n_loc = len(st.locations)
    pairs = reidit_c_pairs(st).persist(storage_level())
    try:
        n = pairs.count()
        cols = [F.col("identified"), F.col("deidentified")]
        if explain:
            cols.append(F.concat(F.col("identified"), F.lit(" and "), F.col("deidentified"),
                                 F.lit(" share a trail (disclosed at "), F.col("ones").cast("string"),
                                 F.lit(f" of {n_loc} locations) that no other identified or de-identified record has"))
                        .alias("reason"))
        write_pairs(pairs.sortWithinPartitions("identified_eid").select(*cols), out)
    finally:
        pairs.unpersist()
    return ReidentifySummary("complete", n, n, identified=st.n_identified, deidentified=st.n_deidentified)


def edges(st: SparkTrails) -> DataFrame:
    """The class edges ``(id_cid, de_cid)``, computed once per trails object and cached."""
    cache = st.__dict__.setdefault("_cache", {})
    if "edges" not in cache:
        cache["edges"] = class_links(st).persist(storage_level())
    return cache["edges"]
