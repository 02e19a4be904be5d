"""Attribute linkage sets (TR02 Definition 3.1): quasi-identifier relations between the two sides, joined with trails.

An ALS is a set of pairs ⟨A_k, A_l⟩ of an identified attribute and a de-identified attribute with a non-null
relation: ⟨date of birth, year of birth⟩, ⟨gender, gender⟩, ⟨ZIP code, IP address⟩ (through a geolocation table),
⟨birthdate, age⟩ (thesis App. B.2).  Each relation maps both sides' values into one shared domain (the year, the
ZIP code, ...) where it holds iff the two images are equal; a missing value is *unknown* and agrees with every
value.  The relations reduce each element to integer **block codes**, one per relation
(:class:`graphlink.core.linkgraph.Blocks`), which is the one seam where quasi-identifiers meet trails:

* **ALS-constrained link graph** — an edge needs trail compatibility *and* agreeing blocks
  (``build_linkgraph(trails, blocks=...)``); true loves, the k-unlinkability audit and REIDIT then run on the
  constrained graph unchanged, and more pairs become certain.
* **ALS-only re-identification** — TR02 §3: with X = the identified elements whose blocks agree with a
  de-identified y, and Y = the de-identified elements agreeing with an identified x, the pair is re-identified
  when |X| = |Y| = 1 (no trails at all).
* **Fraud mode** (TR02 §7) — faces from store cameras (de-identified, complete: a face is seen whenever its
  holder is in the store) and card purchases (identified, reserved: a card is used only when buying) form
  one-to-many data; a face certainly linked to several cards whose holders share no declared relation is
  flagged (possible identity theft; related cards — a family sharing — are explained).

The ALS file (YAML) lists the relations::

    relations:
      - {identified: gender, deidentified: gender}                       # equal (the default)
      - {identified: dob, deidentified: yob, map: year}                  # dob's year equals yob
      - {identified: zip, deidentified: zip3, map: "prefix:3"}           # the first 3 characters
      - {identified: zip, deidentified: ip, lookup: geo.csv}             # geo.csv: ip,zip (ip -> its ZIP code)
      - {identified: dob, deidentified: age, age_at: "2006-06-01"}       # age in whole years at that date
      - {identified: dob, deidentified: dob_level2, hierarchy: dob.csv, level: 2}   # ARX hierarchy (graphlink.qi)

The file is read bounded: at most ``MAX_ALS_BYTES``, nesting at most ``MAX_DEPTH`` deep, and no YAML anchors or
aliases (an ALS needs none, and aliases are how a few hundred bytes expand to gigabytes, the "billion laughs");
each is a one-line ReleaseError naming the file and line, checked on the event stream before anything is built.

Element attributes come with the release (columns beyond ``location, kind, element``), or from two tables the
ALS names (``attributes: {identified: people.csv, deidentified: samples.csv, key: element}``, paths relative to
the ALS file).  O(|M| + |N|) per
relation to encode; the constrained graph costs at most the element-edge count times the number of relations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphlink.core.linkgraph import Blocks
from graphlink.errors import ReleaseError

MAPS = ("year", "month", "prefix:N", "lower")
#: bounds of an ALS file (it lists a handful of relations)
MAX_ALS_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_PREFIX = 1_000_000


@dataclass(frozen=True)
class Relation:
    """One ⟨identified attribute, de-identified attribute⟩ pair of an ALS and how to compare them."""

    identified: str
    deidentified: str
    map: str | None = None                  # applied to the identified value: year | month | prefix:N | lower
    lookup: dict[str, str] | None = None    # de-identified value -> identified-domain value
    age_at: pd.Timestamp | None = None      # identified birthdate -> whole years at this date
    hierarchy: Any = None                   # graphlink.qi.hierarchy.Hierarchy of the identified attribute
    level: int = 0
    source: str = ""

    @property
    def name(self) -> str:
        how = (self.map or ("lookup" if self.lookup is not None else None) or
               ("age" if self.age_at is not None else None) or
               (f"hierarchy level {self.level}" if self.hierarchy is not None else "equal"))
        return f"<{self.identified}, {self.deidentified}> ({how})"

    def identified_image(self, values: pd.Series) -> pd.Series:
        """The identified values mapped into the shared domain (NA stays NA)."""
        v = values.astype("string").str.strip()
        if self.map:
            v = _apply_map(v, self.map, self)
        elif self.age_at is not None:
            born = pd.to_datetime(v, errors="coerce")
            at = self.age_at
            before = (born.dt.month > at.month) | ((born.dt.month == at.month) & (born.dt.day > at.day))
            years = at.year - born.dt.year - before.astype(int)     # birthday not yet reached that year
            v = years.where(born.notna()).astype("Int64").astype("string")
        elif self.hierarchy is not None:
            known = set(self.hierarchy.values)
            bad = sorted(set(v.dropna()) - known)
            if bad:
                raise ReleaseError(f"value {bad[0]!r} of column {self.identified!r} is not in its hierarchy "
                                   f"({len(bad)} such values)", file=self.source or None, column=self.identified)
            v = v.map(lambda x: self.hierarchy.generalize(x, self.level) if isinstance(x, str) else x)
        return v.astype("string")

    def deidentified_image(self, values: pd.Series) -> pd.Series:
        """The de-identified values mapped into the shared domain (through the lookup table, if any)."""
        v = values.astype("string").str.strip()
        if self.lookup is not None:
            v = v.map(self.lookup).astype("string")
        elif self.age_at is not None:
            v = pd.to_numeric(v, errors="coerce").astype("Int64").astype("string")
        return v


def _apply_map(v: pd.Series, how: str, rel: Relation) -> pd.Series:
    if how in ("year", "month"):
        d = pd.to_datetime(v, errors="coerce")
        out = d.dt.year.astype("Int64").astype("string") if how == "year" else d.dt.strftime("%Y-%m")
        return out.astype("string")
    if how.startswith("prefix:"):
        return v.str.slice(0, _prefix_length(how, f"relation {rel.identified} ~ {rel.deidentified}", rel.source))
    if how == "lower":
        return v.str.lower()
    raise ReleaseError(f"unknown map {how!r} in relation {rel.identified} ~ {rel.deidentified} "
                       f"(expected one of {', '.join(MAPS)})", file=rel.source or None)


@dataclass(frozen=True)
class AttributeFiles:
    """Where the element attributes live when they are not columns of the release (the ALS's ``attributes:``)."""

    identified: Path
    deidentified: Path
    key: str = "element"


@dataclass(frozen=True)
class LinkageSet:
    """An attribute linkage set: its relations, in order, and optionally the files holding the attributes."""

    relations: tuple[Relation, ...]
    source: str = ""
    notes: tuple[str, ...] = field(default=())
    attributes: AttributeFiles | None = None

    def columns(self, side: str) -> list[str]:
        return [getattr(r, side) for r in self.relations]


def _prefix_length(how: str, where: str, source: str | None) -> int:
    """N of ``prefix:N``: a whole number of characters, 1 to ``MAX_PREFIX``."""
    n = how.split(":", 1)[1].strip()
    if not (n.isascii() and n.isdigit() and len(n) <= len(str(MAX_PREFIX)) and 1 <= int(n) <= MAX_PREFIX):
        raise ReleaseError(f"{where}: map {how[:40]!r} needs a whole number of characters, 1 to {MAX_PREFIX:,} "
                           "(e.g. prefix:3)", file=source or None)
    return int(n)


def _load_yaml(p: Path) -> Any:
    """The YAML document of an ALS file, bounded (module docstring): size first, then the event stream (no
    anchors or aliases, nesting depth), then the safe loader.  ReleaseError naming file and line.  O(size)."""
    import yaml

    from graphlink.fileio import check_input

    check_input(p)                  # a FIFO or a device would block or never end: refused before it is opened
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_ALS_BYTES + 1)
    except FileNotFoundError:
        raise ReleaseError("no such file", file=str(p)) from None
    except OSError as exc:
        raise ReleaseError(f"cannot read the file ({exc.strerror or exc})", file=str(p)) from None
    if len(data) > MAX_ALS_BYTES:
        raise ReleaseError(f"larger than {MAX_ALS_BYTES:,} bytes; an ALS file lists a few relations", file=str(p))
    try:
        text = data.decode("utf-8")
        depth = 0
        for ev in yaml.parse(text, Loader=yaml.SafeLoader):
            line = ev.start_mark.line + 1 if ev.start_mark is not None else None
            if isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None):
                raise ReleaseError("YAML anchors and aliases (&name, *name) are not accepted in an ALS file",
                                   file=str(p), row=line)
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise ReleaseError(f"nested more than {MAX_DEPTH} levels deep; an ALS is a list of relations",
                                       file=str(p), row=line)
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        return yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ReleaseError(f"not a readable YAML file ({str(exc).splitlines()[0][:160]})", file=str(p)) from None


def read_als(path: str | Path) -> LinkageSet:
    """Read an attribute linkage set (Malin 2002, Definition 3.1) from a YAML file; format in the module docstring,
    bounded (:func:`_load_yaml`).

    Parameters
    ----------
    path : str or Path
        The YAML file; paths inside it are relative to it.

    Returns
    -------
    LinkageSet
        Its relations (identified attribute, de-identified attribute, how one maps to the other).

    Raises
    ------
    ReleaseError
        Naming the file and the entry that is not what the format expects.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.io.examples import GENPHEN_ALS
    >>> als = gl.read_als(GENPHEN_ALS)
    >>> [(r.identified, r.deidentified) for r in als.relations]
    [('birthdate', 'age'), ('gender', 'gender'), ('visit_date', 'visit_date')]
    """
    p = Path(path)
    doc = _load_yaml(p)
    rels = doc.get("relations") if isinstance(doc, Mapping) else None
    if not isinstance(rels, list) or not rels:
        raise ReleaseError("expected a mapping with a non-empty list 'relations'", file=str(p))
    files = doc.get("attributes")
    if files is not None and (not isinstance(files, Mapping) or not {"identified", "deidentified"} <= set(files)):
        raise ReleaseError("'attributes' needs keys 'identified' and 'deidentified' (files, relative to the ALS "
                           "file) and optionally 'key' (their element column, default 'element')", file=str(p))
    where = (AttributeFiles(p.parent / str(files["identified"]), p.parent / str(files["deidentified"]),
                            str(files.get("key", "element"))) if files is not None else None)
    return LinkageSet(tuple(relation_from(spec, p, i) for i, spec in enumerate(rels, 1)), str(p),
                      attributes=where)


def relation_from(spec: Any, path: Path | None = None, entry: int = 1) -> Relation:
    """One relation from its YAML mapping (paths are relative to the ALS file)."""
    where = f"relation {entry}"
    src = str(path) if path else ""
    if not isinstance(spec, Mapping) or not {"identified", "deidentified"} <= set(spec):
        raise ReleaseError(f"{where}: needs keys 'identified' and 'deidentified'", file=src or None)
    kinds = [k for k in ("map", "lookup", "age_at", "hierarchy") if k in spec]
    if len(kinds) > 1:
        raise ReleaseError(f"{where}: use one of map, lookup, age_at, hierarchy (got {', '.join(kinds)})",
                           file=src or None)
    base = Path(path).parent if path else Path(".")
    kw: dict[str, Any] = {"identified": str(spec["identified"]), "deidentified": str(spec["deidentified"]),
                          "source": src}
    if "map" in spec:
        kw["map"] = str(spec["map"])
        if not (kw["map"] in ("year", "month", "lower") or kw["map"].startswith("prefix:")):
            raise ReleaseError(f"{where}: unknown map {kw['map'][:40]!r} (expected one of {', '.join(MAPS)})",
                               file=src or None)
        if kw["map"].startswith("prefix:"):
            _prefix_length(kw["map"], where, src)
    elif "lookup" in spec:
        from graphlink.fileio import check_input

        table = check_input(base / str(spec["lookup"]))
        try:
            df = pd.read_csv(table, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise ReleaseError(f"{where}: cannot read the lookup table ({exc})", file=str(table)) from None
        if df.shape[1] < 2:
            raise ReleaseError("a lookup table needs two columns: de-identified value, identified value",
                               file=str(table))
        kw["lookup"] = dict(zip(df.iloc[:, 0].str.strip(), df.iloc[:, 1].str.strip(), strict=True))
    elif "age_at" in spec:
        at = pd.to_datetime(str(spec["age_at"]), errors="coerce")
        if pd.isna(at):
            raise ReleaseError(f"{where}: age_at {spec['age_at']!r} is not a date", file=src or None)
        kw["age_at"] = at
    elif "hierarchy" in spec:
        from graphlink.qi.hierarchy import read_csv as read_hierarchy

        kw["hierarchy"] = read_hierarchy(base / str(spec["hierarchy"]), name=kw["identified"])
        level = spec.get("level", 0)
        if isinstance(level, bool) or not (isinstance(level, int) or str(level).strip().isdigit()):
            raise ReleaseError(f"{where}: level {str(level)[:40]!r} is not a whole number (a hierarchy level, "
                               f"0..{kw['hierarchy'].height - 1})", file=src or None)
        kw["level"] = int(level)
        if not 0 <= kw["level"] < kw["hierarchy"].height:
            raise ReleaseError(f"{where}: level {kw['level']} outside the hierarchy's 0..{kw['hierarchy'].height - 1}",
                               file=src or None)
    return Relation(**kw)


def blocks(als: LinkageSet, identified: pd.DataFrame, deidentified: pd.DataFrame,
           id_keys: np.ndarray, de_keys: np.ndarray) -> Blocks:
    """Block codes of every element (rows in the order of ``id_keys`` / ``de_keys``, the trail rows).

    ``identified`` / ``deidentified`` are attribute tables indexed by element key.  Codes index the shared
    domain of each relation (the union of both sides' images); -1 marks unknown values.  O(|M| + |N|) per
    relation.
    """
    ci = np.full((len(id_keys), len(als.relations)), -1, np.int64)
    cj = np.full((len(de_keys), len(als.relations)), -1, np.int64)
    for r, rel in enumerate(als.relations):
        for frame, side, col in ((identified, "identified", rel.identified),
                                 (deidentified, "deidentified", rel.deidentified)):
            if col not in frame.columns:
                raise ReleaseError(f"the ALS names the {side} attribute {col!r}, which the release does not have "
                                   f"(its {side} attributes: {', '.join(map(str, frame.columns)) or 'none'})",
                                   column=col)
        a = rel.identified_image(identified[rel.identified].reindex(pd.Index(id_keys, dtype=object)))
        b = rel.deidentified_image(deidentified[rel.deidentified].reindex(pd.Index(de_keys, dtype=object)))
        both = pd.concat([a, b], ignore_index=True)
        codes, _ = pd.factorize(both, use_na_sentinel=True)
        ci[:, r] = codes[:len(a)]
        cj[:, r] = codes[len(a):]
    return Blocks(ci, cj, tuple(rel.name for rel in als.relations))


def attribute_tables(frame: pd.DataFrame, source: str | None = None) -> dict[str, pd.DataFrame]:
    """Per kind, one row per element with its attribute columns (every column beyond location/kind/element).

    A value given differently on two rows of the same element is a ReleaseError naming both rows; empty cells
    are unknown.  O(rows).
    """
    extra = [c for c in frame.columns if c not in ("location", "kind", "element")]
    out = {}
    for kind in ("identified", "deidentified"):
        part = frame.loc[frame["kind"] == kind, ["element", *extra]]
        tables = {}
        for col in extra:
            vals = part[["element", col]].dropna()
            vals = vals[vals[col].astype("string").str.strip() != ""]
            first = vals.drop_duplicates("element")
            clash = vals.merge(first, on="element", suffixes=("", "_first"))
            clash = clash[clash[col].astype(str) != clash[f"{col}_first"].astype(str)]
            if len(clash):
                el = clash["element"].iloc[0]
                rows = vals.index[vals["element"] == el][:2].tolist()
                raise ReleaseError(f"element {el!r} has two values of {col!r}: "
                                   f"{vals.loc[rows[0], col]!r} (row {rows[0] + 2}) and "
                                   f"{clash[col].iloc[0]!r}; an attribute must be the same on every row",
                                   file=source, row=int(rows[-1]) + 2, column=col)
            tables[col] = first.set_index("element")[col]
        out[kind] = pd.DataFrame(tables) if tables else pd.DataFrame(index=pd.Index([], name="element"))
    return out


def _read_frame(path: Path, columns_expected: str) -> pd.DataFrame:
    """A CSV or Parquet table as text through :func:`graphlink.core.tabular.read_table` (the file rules every reader
    shares); the index is the row number minus 2, which :func:`attribute_tables` turns back into row numbers."""
    from graphlink.core.tabular import read_table

    t = read_table(path, expected=columns_expected)
    frame = pd.DataFrame({name: t.column_at(i).astype("string") for i, name in enumerate(t.names)})
    frame.index = pd.Index([t.row_of(pos) - 2 for pos in range(t.n_rows)])
    return frame


def element_attributes(als: LinkageSet, release: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """The attribute tables (per kind, indexed by element key) an ALS is evaluated on.

    From the ALS's ``attributes:`` files when it names them (each: the key column plus attribute columns), else
    from the release file's own columns beyond ``location, kind, element`` (a long-format CSV/Parquet release).
    Errors name the file, and the row and column of a clashing value.  O(rows).
    """
    if als.attributes is not None:
        out = {}
        for kind in ("identified", "deidentified"):
            path = getattr(als.attributes, kind)
            df = _read_frame(path, f"{als.attributes.key},<attributes>")
            if als.attributes.key not in df.columns:
                raise ReleaseError(f"no key column {als.attributes.key!r} (columns: {', '.join(df.columns)}); "
                                   "name it with 'key:' under 'attributes' in the ALS", file=str(path))
            long = df.rename(columns={als.attributes.key: "element"}).assign(kind=kind)
            long["element"] = long["element"].astype("string").str.strip()
            out[kind] = attribute_tables(long, str(path))[kind]
        return out
    if release is None or Path(release).is_dir():
        raise ReleaseError("the ALS has no 'attributes:' files and the release carries no attribute columns "
                           "(a folder release): name the identified and de-identified attribute files under "
                           "'attributes' in the ALS", file=als.source or None)
    df = _read_frame(Path(release), "location,kind,element,<attributes>")
    missing = [c for c in ("kind", "element") if c not in df.columns]
    if missing:
        raise ReleaseError(f"no column(s) {', '.join(missing)}: attributes in the release need a long-format "
                           "file (location, kind, element, attributes...)", file=str(release))
    df["element"] = df["element"].astype("string").str.strip()
    df["kind"] = df["kind"].astype("string").str.strip().str.lower()
    return attribute_tables(df, str(release))


def release_blocks(als: LinkageSet, id_keys: Any, de_keys: Any, release: str | Path | None = None) -> Blocks:
    """Block codes of the elements ``id_keys`` / ``de_keys`` (e.g. the trail rows' keys) under ``als``, with the
    attributes of :func:`element_attributes`.  O(|M| + |N|) per relation."""
    tables = element_attributes(als, release)
    return blocks(als, tables["identified"], tables["deidentified"], np.asarray(id_keys, dtype=object),
                  np.asarray(de_keys, dtype=object))


def als_only(b: Blocks, id_keys: np.ndarray, de_keys: np.ndarray) -> pd.DataFrame:
    """ALS-only re-identification (TR02 §3, |X| = |Y| = 1): pairs whose blocks agree with each other and with
    no other element on either side.  Elements with identical codes are grouped first; the agreement test runs
    on the distinct code rows only.  O(distinct_id · distinct_de · R)."""
    from graphlink.kernels.links import block_pairs
    from graphlink.kernels.rows import row_classes

    ci, cj = np.ascontiguousarray(b.identified), np.ascontiguousarray(b.deidentified)
    rep_i, cls_i = row_classes(ci.view(np.uint64)) if len(ci) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    rep_j, cls_j = row_classes(cj.view(np.uint64)) if len(cj) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    ni, nj = len(rep_i), len(rep_j)
    ei, ej = block_pairs(np.zeros(1, np.int64), np.zeros(1, np.int64), np.array([0, ni]), np.arange(ni),
                         np.array([0, nj]), np.arange(nj), ci[rep_i], cj[rep_j])
    size_i = np.bincount(cls_i, minlength=ni)
    size_j = np.bincount(cls_j, minlength=nj)
    deg_i = np.bincount(ei, weights=size_j[ej], minlength=ni)       # agreeing de-identified elements
    deg_j = np.bincount(ej, weights=size_i[ei], minlength=nj)
    keep = (deg_i[ei] == 1) & (deg_j[ej] == 1)
    rows_i = np.flatnonzero(np.isin(cls_i, ei[keep]))
    pair_of = dict(zip(ei[keep].tolist(), ej[keep].tolist(), strict=True))
    rows_j = [int(np.flatnonzero(cls_j == pair_of[int(cls_i[r])])[0]) for r in rows_i]
    names = ", ".join(b.names) or "the ALS"
    return pd.DataFrame({"identified": [str(id_keys[r]) for r in rows_i],
                         "deidentified": [str(de_keys[r]) for r in rows_j],
                         "reason": [f"{id_keys[r]} and {de_keys[s]} agree on {names} and no other record on "
                                    "either side does" for r, s in zip(rows_i, rows_j, strict=True)]}).astype(object)


def fraud_flags(pairs: pd.DataFrame, related: pd.Series | None = None) -> pd.DataFrame:
    """Fraud mode (TR02 §7): de-identified elements (faces) certainly linked to several identified elements
    (cards).  ``related`` maps card -> a declared relation value (a family, an account holder): cards that all
    share one value are explained; otherwise the face is flagged.  Returns face, cards, n_cards, related,
    flagged, reason.  O(pairs)."""
    if pairs.empty:
        return pd.DataFrame(columns=["face", "cards", "n_cards", "related", "flagged", "reason"])
    rows = []
    for face, grp in pairs.groupby("deidentified", sort=True):
        cards = sorted(map(str, grp["identified"]))
        if len(cards) < 2:
            continue
        values = {str(related.get(c)) for c in cards if related is not None and pd.notna(related.get(c))}
        same = related is not None and len(values) == 1 and all(pd.notna(related.get(c)) for c in cards)
        reason = (f"{len(cards)} cards used by one face share the declared relation {values.pop()!r}" if same else
                  f"{len(cards)} cards used by one face with no declared relation between their holders: possible "
                  "identity theft or assumed identities")
        rows.append({"face": str(face), "cards": ", ".join(cards), "n_cards": len(cards), "related": same,
                     "flagged": not same, "reason": reason})
    return pd.DataFrame(rows, columns=["face", "cards", "n_cards", "related", "flagged", "reason"])
