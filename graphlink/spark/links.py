"""Class-level link edges and REIDIT-C in Spark (thesis Definition 17, Algorithms 2/3; algorithms.md §3).

**Links.**  A reserved-side class r (the side with ``*``) links a complete-side class s iff
``((s.ones ^ r.ones) & r.known) == 0`` in every word.  For releases r.known = r.ones | E, where E is a set of
locations fixed by the model (every location when nothing is reserved; the equal-size locations on the reserved
side of one-to-one data; none for one-to-many identified trails), so with F = ~E the test splits into

* an **equality** on the E part: ``s.ones & E == r.ones & E`` — an equi-join key (the "pattern"), and
* a **containment** on the F part: ``r.ones & F ⊆ s.ones``.

Classes are joined pattern-grouped: r classes without ones in F join on the E key alone; r classes with one F
one join on (E key, anchor), the anchor being that location, against the complete side exploded to one row per
F location it holds; r classes with two or more join either the same way on their rarest F location (fewest
complete-side elements, from the per-location sizes) or on (E key, anchor pair) — their two rarest F locations —
against the complete side exploded to one row per pair of F locations it holds.  Every candidate is verified
with the full word predicate.  Which of the two plans runs is decided on exact counts (:func:`_pair_plan`: one
aggregation per plan over the class tables, |C|² rows at most): candidates Σ_r |{s ∋ anchor(r)} ∩ key(r)| plus
Σ_s |s ∩ F| exploded rows for single anchors, against Σ_r |{s ⊇ pair(r)} ∩ key(r)| plus Σ_s C(|s ∩ F|, 2) for
pairs.  On uniform releases (visit probability p) that is |R|·|S|·p against |R|·|S|·p² + |S|·(p|F|)²/2, so pairs
win as soon as |R|·p exceeds about |F|²p/2.  Unreserved releases (E = everything) are a single equi-join on the
whole trail.

**REIDIT-C** groups fully known trails by their packed words: a pair is re-identified when its trail is the only
one of its class on both sides, i.e. both classes are fully known singletons.  One equi-join on the words of
singleton classes; the pairs come back in the local engine's order (64-bit fingerprint of the trail words).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphlink.reidit import Reidentification, _one_to_one_only
from graphlink.reidit import reidit_c as core_reidit_c
from graphlink.spark.fill import SparkTrails, to_uint64, word_cols, words_of
from graphlink.trails import Trails, TrailSide

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
        r_held = F.array_compact(F.array(*[F.when(_bit(c), F.lit(c)) for c in by_rarity]))
        r_any = (r.withColumn("_held", r_held).withColumn("anchor", F.try_element_at("_held", F.lit(1)))
                 .withColumn("anchor2", F.try_element_at("_held", F.lit(2))).drop("_held"))
        held = F.array_compact(F.array(*[F.when(_bit(c, "so"), F.lit(c)) for c in f_locs]))
        s_f = s.select("*", F.explode(held).alias("anchor"))
        r_many = r_any.filter(F.col("anchor2").isNotNull())
        r_one = r_any.filter(F.col("anchor").isNotNull() & F.col("anchor2").isNull())
        s_pairs = s.select("*", F.explode(_pairs(held, n_loc)).alias("pair"))
        if _pair_plan(r_many, s_f, s_pairs, key, n_loc):
            r_pair = r_many.withColumn("pair", F.least("anchor", "anchor2") * n_loc + F.greatest("anchor", "anchor2"))
            parts.append(r_pair.join(s_pairs, [*key, "pair"]).filter(ok).select("r", "s"))
        else:
            r_one = r_any.filter(F.col("anchor").isNotNull())
        parts.append(r_one.join(s_f, [*key, "anchor"]).filter(ok).select("r", "s"))
        r_plain = r_any.filter(F.col("anchor").isNull())
    else:
        r_plain = r
    if key:
        parts.append(r_plain.join(s, key).filter(ok).select("r", "s"))
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    if star == "identified":
        return out.select(F.col("r").alias("id_cid"), F.col("s").alias("de_cid"))
    return out.select(F.col("s").alias("id_cid"), F.col("r").alias("de_cid"))


def _pairs(held: Column, n_loc: int) -> Column:
    """Every pair x < y of the (ascending) locations in ``held``, encoded x·|C| + y."""
    from pyspark.sql import functions as F

    return F.flatten(F.transform(held, lambda x, i: F.transform(
        F.slice(held, i + 2, F.greatest(F.size(held) - i - 1, F.lit(0))), lambda y: x * n_loc + y)))


def _pair_plan(r_many: DataFrame, s_f: DataFrame, s_pairs: DataFrame, key: list[str], n_loc: int) -> bool:
    """Whether the r classes with two or more F ones should join on their anchor pair (module docstring): exact
    candidate counts of both plans from per-(key, anchor) and per-(key, pair) class counts."""
    from pyspark.sql import functions as F

    def cost(r_key: DataFrame, s_key: DataFrame, col: str) -> int:
        rc = r_key.groupBy(*key, col).agg(F.count(F.lit(1)).alias("nr"))
        sc = s_key.groupBy(*key, col).agg(F.count(F.lit(1)).alias("ns"))
        cand = rc.join(sc, [*key, col]).agg(F.sum(F.col("nr") * F.col("ns"))).collect()[0][0] or 0
        return int(cand) + int(sc.agg(F.sum("ns")).collect()[0][0] or 0)

    if r_many.isEmpty():
        return False
    single = cost(r_many, s_f, "anchor")
    pair = cost(r_many.withColumn("pair", F.least("anchor", "anchor2") * n_loc + F.greatest("anchor", "anchor2")),
                s_pairs, "pair")
    return pair < single


def reidit_c(st: SparkTrails) -> Reidentification:
    """REIDIT-C (Alg. 2; the sort/hash Alg. 3 as a distributed group-by): one equi-join of fully known singleton
    classes on their words finds the pairs; the core :func:`graphlink.reidit.reidit_c` then writes the reasons
    and the order for just those pairs, so the result equals the local engine's.  O(pairs) collected."""
    from pyspark.sql import functions as F

    _one_to_one_only(st, "REIDIT-C")          # duck-typed: SparkTrails has one_to_many and model
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
        return cls.join(keys, "eid").select(F.col("element").alias(alias), *ones)

    got = side("identified", "identified").join(side("deidentified", "deidentified"), ones).toPandas()
    words = to_uint64(got, ones)
    known = np.repeat(np.array(full, np.int64).view(np.uint64)[None, :], len(got), axis=0)
    pairs = Trails(list(st.locations), TrailSide(got["identified"].to_numpy(dtype=object), known, words, n_loc),
                   TrailSide(got["deidentified"].to_numpy(dtype=object), known.copy(), words.copy(), n_loc),
                   st.model.reserved, st.model.reason, st.sizes, st.model.multiplicity, st.model.decided_by)
    res = core_reidit_c(pairs)
    res.summary.update({"identified": st.n_identified, "deidentified": st.n_deidentified})
    return res
