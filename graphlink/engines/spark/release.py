"""Reading and validating a release in Spark (thesis ch. 3; the rules of :mod:`graphlink.core.release`, distributed).

Input: the long table ``location, kind, element`` as CSV or Parquet — a file, a folder of part files, or any URI
Spark reads (``s3a://``, ``hdfs://``, ``gs://``, ``abfss://``) — or a Spark/pandas DataFrame.  Validation gives the
local engine's one-line errors (:class:`graphlink.errors.ReleaseError` naming file, row and column) and its
duplicate warning, computed by one aggregation over the rows; a row number is only looked up (one count) when
there is something to report.  Per-location folders (``<location>/identified.csv``) are read by the core reader
on the driver and then distributed.

Every row keeps ``_row``, its position in the input (``monotonically_increasing_id``: file order for one file,
Spark's split order for a folder of parts), so "first appearance" — the order of locations, elements and twin
classes in :mod:`graphlink.core.trails` — is the same as the local engine's.

CSV files are split at line breaks by Spark; a file where a quoted value spans lines (found by one scan of its
text) is read with ``multiLine`` instead (one task per file), and its row numbers count the lines inside values,
as the local reader's do.

Cost: one pass over the rows for validation (and one over a CSV file's text), one shuffle (group by the row) to
collapse exact duplicates.
"""

from __future__ import annotations

import csv
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from graphlink.core.release import COLUMNS, KINDS, Release, ReleaseWarning, read_release, read_truth
from graphlink.core.tabular import names_list
from graphlink.errors import ReleaseError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: Python's str.strip() whitespace, as a Java regex (the local engine strips with str.strip)
_WS = r"[\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


@dataclass(frozen=True)
class SparkRelease:
    """A validated release held by Spark: ``rows`` has ``location, kind, element, _row`` with exact duplicates
    collapsed (the first occurrence kept), ``kind`` normalised to identified/deidentified, keys stripped."""

    rows: DataFrame
    name: str
    source: str | None
    truth: pd.DataFrame | None = None

    def load_into(self, store: Any, name: str | None = None, *, replace: bool = False, bulk: str = "auto",
                  progress: Any = None) -> Any:
        """This release loaded into ``store`` the Spark way (:func:`graphlink.engines.spark.bulk.load_release`:
        the bulk importer's files written by Spark, else the Neo4j connector); what
        :func:`graphlink.store.neo4j.load` calls for a release that brings its own loader."""
        from graphlink.engines.spark.bulk import load_release

        return load_release(self, store, name, replace=replace, bulk=bulk, progress=progress)


def strip(col: Column) -> Column:
    from pyspark.sql import functions as F

    return F.regexp_replace(col, rf"(?U)^{_WS}+|{_WS}+$", "")


def read(spark: SparkSession, source: Any, *, name: str | None = None, truth: Any = None,
         id_key: list[str] | None = None, deid_key: list[str] | None = None,
         fmt: str | None = None) -> SparkRelease:
    """Read and validate a release (module docstring).  ``fmt`` (``csv``/``parquet``) overrides the suffix."""
    from pyspark.sql import DataFrame as SparkFrame

    truth_frame = read_truth(truth) if truth is not None else None
    if isinstance(source, Release):
        return _from_pandas(spark, source.frame, name or source.name, source.source,
                            truth_frame if truth_frame is not None else source.truth)
    if isinstance(source, pd.DataFrame):
        rel = read_release(source, name=name)
        return _from_pandas(spark, rel.frame, rel.name, None, truth_frame)
    if isinstance(source, SparkFrame):
        rows = _validate(source, "<DataFrame>", file_rows=False)
        return SparkRelease(rows, name or "release", None, truth_frame)
    text = str(source)
    if not _SCHEME.match(text) or text.startswith("file://"):
        path = Path(text[len("file://"):] if text.startswith("file://") else text)
        if not path.exists():
            what = "broken symbolic link" if path.is_symlink() else "no such file or folder"
            raise ReleaseError(what, file=str(path))
        from graphlink.fileio import check_input

        check_input(path, folder=True)      # a FIFO or a device is refused before Spark opens it
        if path.is_dir() and _per_location_folder(path):
            rel = read_release(path, id_key=id_key, deid_key=deid_key, name=name)
            return _from_pandas(spark, rel.frame, rel.name, str(path), truth_frame)
        label, stem = str(path), path.stem
        kind = fmt or _format_of(path)
    else:
        label, stem = text, Path(text.rstrip("/")).stem
        kind = fmt or ("parquet" if text.rstrip("/").lower().endswith((".parquet", ".pq")) else "csv")
    frame = _read_table(spark, text, kind, label)
    return SparkRelease(_validate(frame, label, file_rows=True, what=kind), name or stem, label, truth_frame)


def _per_location_folder(path: Path) -> bool:
    return any(sub.is_dir() and ((sub / "identified.csv").exists() or (sub / "deidentified.csv").exists())
               for sub in path.iterdir())


def _format_of(path: Path) -> str:
    if path.is_dir():
        parts = [p.suffix.lower() for p in path.rglob("*") if p.is_file() and not p.name.startswith(("_", "."))]
        return "parquet" if any(s in (".parquet", ".pq") for s in parts) else "csv"
    return "parquet" if path.suffix.lower() in (".parquet", ".pq") else "csv"


def _from_pandas(spark: SparkSession, frame: pd.DataFrame, name: str, source: str | None,
                 truth: pd.DataFrame | None) -> SparkRelease:
    """An already validated pandas release, distributed (row order kept as ``_row``)."""
    pdf = pd.DataFrame({c: frame[c].astype(str).to_numpy(dtype=object) for c in COLUMNS})
    pdf["_row"] = range(len(pdf))
    rows = spark.createDataFrame(pdf, "location string, kind string, element string, _row long")
    return SparkRelease(rows, name, source, truth)


def _spark_error(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _read_table(spark: SparkSession, path: str, kind: str, label: str) -> DataFrame:
    """The raw table with every column as a string and a ``_row`` position; CSV rows with more fields than the
    header are refused as pandas refuses them (fewer fields read as empty values)."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    try:
        if kind == "parquet":
            df = spark.read.parquet(path)
            _check_parquet_types(df, path, label)
            df = df.select(*[F.col(f"`{c}`").cast("string").alias(c) if c in COLUMNS else F.col(f"`{c}`")
                             for c in df.columns])
            return df.withColumn("_row", F.monotonically_increasing_id())
        reader = (spark.read.option("header", True).option("escape", '"').option("ignoreLeadingWhiteSpace", True)
                  .option("encoding", "UTF-8"))
        multiline = _quoted_line_breaks(spark, path)
        if multiline:
            reader = reader.option("multiLine", True)
        cols = reader.csv(path).columns
        if not cols:
            raise ReleaseError("the file is empty (expected a header row: location,kind,element)", file=label)
        schema = T.StructType([T.StructField(c, T.StringType()) for c in cols]
                              + [T.StructField("_corrupt", T.StringType())])
        df = (reader.schema(schema).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", "_corrupt")
              .csv(path).withColumn("_row", F.monotonically_increasing_id()))
    except ReleaseError:
        raise
    except PySparkException as exc:
        if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
            raise ReleaseError("no such file or folder", file=label) from None
        raise ReleaseError(f"cannot read it as {'Parquet' if kind == 'parquet' else 'CSV'}: {_spark_error(exc)}",
                           file=label) from None
    if multiline:       # line breaks inside each record's values: row numbers are the lines records start on
        breaks = [F.coalesce(F.size(F.split(F.col(f"`{c}`"), "\r\n|\r|\n", -1)) - 1, F.lit(0)) for c in cols]
        df = df.withColumn("_lines", sum(breaks[1:], breaks[0]))
    df = df.cache()
    wide = df.filter(F.col("_corrupt").isNotNull()).select("_row", "_corrupt").collect()
    for row in sorted(wide, key=lambda r: r["_row"]):
        fields = next(csv.reader([row["_corrupt"]], skipinitialspace=True), [])
        if len(fields) > len(cols):
            raise ReleaseError(f"this row has {len(fields)} fields but the header has {len(cols)}", file=label,
                               row=_position(df, row["_row"]) + 2)
    # a row whose every field is blank (",,") is skipped, as the local reader skips it (but still numbered)
    blank = F.lit(True)
    for c in cols:
        blank = blank & (F.col(f"`{c}`").isNull() | (strip(F.col(f"`{c}`")) == ""))
    return df.withColumn("_skip", blank).drop("_corrupt")


def _check_parquet_types(df: DataFrame, path: str, label: str) -> None:
    """The local reader's Parquet rule (:mod:`graphlink.core.tabular`): key columns hold text or integers.  The type
    is named as Arrow names it when the file is local (its schema is read on the driver), else as Spark does."""
    from pyspark.sql import types as T

    ok = (T.StringType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.NullType)
    for field in df.schema.fields:
        if field.name in COLUMNS and not isinstance(field.dataType, ok):
            name = field.dataType.simpleString()
            local = Path(path[len("file://"):] if path.startswith("file://") else path)
            if not _SCHEME.match(path) or path.startswith("file://"):
                import pyarrow.parquet as pq

                part = local if local.is_file() else next(
                    (p for p in sorted(local.rglob("*.parquet")) if not p.name.startswith(("_", "."))), None)
                if part is not None:
                    name = str(pq.read_schema(part).field(field.name).type)
            raise ReleaseError(f"Parquet type {name} is not text; expected strings (or integers)", file=label,
                               column=field.name)


def _quoted_line_breaks(spark: SparkSession, path: str) -> bool:
    """Does a line of the CSV file hold an odd number of quote characters, i.e. does a quoted value span lines?
    Spark's CSV reader splits files at line breaks unless told ``multiLine`` (which reads each file in one task),
    so it is told only then.  One scan of the text, no shuffle."""
    from pyspark.sql import functions as F

    line = F.col("value")
    quotes = F.length(line) - F.length(F.regexp_replace(line, '"', ""))
    return bool(spark.read.option("encoding", "UTF-8").text(path).filter(quotes % 2 == 1).limit(1).count())


def _position(df: DataFrame, row_id: int) -> int:
    """0-based position of the row with ``_row == row_id``, in lines when the records span lines (``_lines``:
    line breaks inside a record's values).  One aggregation; only when reporting an error."""
    from pyspark.sql import functions as F

    before = df.filter(F.col("_row") < row_id)
    if "_lines" not in df.columns:
        return int(before.count())
    n, extra = before.agg(F.count(F.lit(1)), F.coalesce(F.sum("_lines"), F.lit(0))).collect()[0]
    return int(n) + int(extra)


def _validate(df: DataFrame, label: str, *, file_rows: bool, what: str = "csv") -> DataFrame:
    """The checks of :func:`graphlink.core.release._validate_long`, in the same order and with the same messages."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    if "_row" not in df.columns:
        df = df.withColumn("_row", F.monotonically_increasing_id())
    names = [c for c in df.columns if c not in ("_row", "_skip", "_lines")]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ReleaseError(f"missing column(s) {', '.join(repr(c) for c in missing)}; expected columns "
                           f"location, kind, element (found: {names_list(names)})", file=label)
    numbered = df                              # every record, skipped ones included: row numbers count them
    if "_skip" in df.columns:
        df = df.filter(~F.col("_skip"))
    clean = df.select(*[strip(F.col(f"`{c}`").cast("string")).alias(c) for c in COLUMNS], "_row")
    kind = F.regexp_replace(F.lower(F.col("kind")), "[-_]", "")
    blank = {c: F.col(c).isNull() | (F.col(c) == "") for c in COLUMNS}
    bad_kind = ~blank["kind"] & ~kind.isin(*KINDS)
    aggs = [F.count(F.lit(1)).alias("n")]
    for c in ("location", "element", "kind"):
        aggs += [F.sum(blank[c].cast("long")).alias(f"blank_{c}"),
                 F.min(F.when(blank[c], F.col("_row"))).alias(f"at_{c}")]
    aggs += [F.sum(bad_kind.cast("long")).alias("bad_kind"),
             F.min(F.when(bad_kind, F.col("_row"))).alias("at_kind_bad")]
    try:
        stats = clean.agg(*aggs).collect()[0]
    except PySparkException as exc:
        raise ReleaseError(f"cannot read it as {'Parquet' if what == 'parquet' else 'CSV'}: {_spark_error(exc)}",
                           file=label) from None

    def row_of(row_id: int) -> int:
        pos = _position(numbered, row_id)
        if not file_rows:
            return pos
        return pos + 1 if what == "parquet" else pos + 2

    if not stats["n"]:
        raise ReleaseError("the release is empty: no disclosed elements", file=label)
    for c in ("location", "element", "kind"):
        if stats[f"blank_{c}"]:
            raise ReleaseError(f"empty or missing {c}; expected a non-empty key ({stats[f'blank_{c}']} row(s) like "
                               "this)", file=label, row=row_of(stats[f"at_{c}"]), column=c)
    if stats["bad_kind"]:
        value = clean.filter(F.col("_row") == stats["at_kind_bad"]).select("kind").collect()[0][0]
        raise ReleaseError(f"unknown kind {value!r}; expected 'identified' or 'deidentified' ({stats['bad_kind']} "
                           "row(s) like this)", file=label, row=row_of(stats["at_kind_bad"]), column="kind")
    normal = clean.withColumn("kind", kind)
    first = normal.groupBy(*COLUMNS).agg(F.min("_row").alias("_row"), F.count(F.lit(1)).alias("_n"))
    first = first.persist()
    dups = first.filter(F.col("_n") > 1).agg(F.sum(F.col("_n") - 1).alias("n")).collect()[0]["n"]
    if dups:
        twice = first.filter(F.col("_n") > 1).select(*COLUMNS, F.col("_row").alias("_first"))
        at = (normal.join(twice, list(COLUMNS)).filter(F.col("_row") > F.col("_first"))
              .agg(F.min("_row")).collect()[0][0])
        warnings.warn(f"{label}: collapsed {dups} exact duplicate row(s) (first repeat at row {row_of(at)})",
                      ReleaseWarning, stacklevel=3)
    return first.drop("_n")
