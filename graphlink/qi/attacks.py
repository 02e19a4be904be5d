"""The three attacks on k-anonymous releases of SW-K §4, and their remedies.

Each attack links two releases of the same private table and reads off a *linked table*: one row per pair
of linked rows, each QI cell the more specific of the two released labels (their meet in the hierarchy;
``1964`` and ``1960-69`` give ``1964``). Rows whose QI values are unique (occur fewer than k times) in the
linked table are *disclosed*: each release was k-anonymous, their combination is not.

* **Unsorted matching** (SW-K Fig. 3): releases that keep the private table's row order are linked by
  position. *Remedy*: shuffle every release (:func:`shuffle`).
* **Complementary release** (SW-K Figs. 4-5, Example 6): a later release linked to an earlier one on the
  attributes they share outside the QI (``Problem``), keeping only pairs whose QI labels are compatible.
  *Remedy*: treat every attribute of the earlier release as QI in later ones, or derive later releases
  from the earlier one (never release a value more specific than it did).
* **Temporal** (SW-K Example 7): the same linking between a release at t0 and a fresh anonymization of the
  grown table at t1. *Remedy*: base the later release on the earlier one, ``RT_t = RT_0 ∪`` the new rows
  generalized on their own.

Costs: position linking O(n·m); join linking O(pairs·m) with meets cached per distinct label pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graphlink.catalog import QI_ATTACKS
from graphlink.errors import ReleaseError
from graphlink.qi.checks import equivalence_classes
from graphlink.qi.hierarchy import Hierarchy, flat
from graphlink.qi.table import as_labels, check_columns

ATTACKS = QI_ATTACKS
#: what a release owner does against each attack, in words (Sweeney 2002, §4.1–4.3, in that order)
REMEDIES = {
    "unsorted": "shuffle the rows of every release: row order must carry no information",
    "complementary": "treat every attribute of the earlier release as quasi-identifier in later releases, or "
                     "derive later releases from the earlier one",
    "temporal": "base the later release on the earlier one: earlier release ∪ the new rows generalized on "
                "their own, or treat every attribute of the earlier release as quasi-identifier",
}


@dataclass
class Linkage:
    """What linking two releases disclosed.

    Examples
    --------
    Returned by :func:`link`; joining SW-K Figure 5's two releases on the problem, six pairs are incompatible:

    >>> from graphlink.qi.attacks import link
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import read_table
    >>> first, second = read_table(SWEENEY / "fig5_gt1.csv"), read_table(SWEENEY / "fig5_gt3.csv")
    >>> qi = ["Race", "BirthDate", "Gender", "ZIP"]
    >>> linkage = link(first, second, qi, hierarchies=read_dir(SWEENEY / "hierarchies"))
    >>> len(linkage.linked), linkage.incompatible, linkage.on
    (12, 6, ('Problem',))
    """

    attack: str
    qi: tuple[str, ...]
    on: tuple[str, ...]
    k_first: int
    k_second: int
    linked: pd.DataFrame          # one row per linked pair: QI meets, join columns, row_first, row_second
    incompatible: int             # candidate pairs dropped because a QI label pair has no meet
    k: int                        # the k both releases claim (default: the smaller of their own k)

    @property
    def k_linked(self) -> int:
        return int(equivalence_classes(self.linked, self.qi).k) if len(self.linked) else 0

    def disclosed(self) -> list[dict]:
        """Linked QI sequences occurring fewer than ``k`` times, with the rows of both releases behind them."""
        if not len(self.linked):
            return []
        cl = equivalence_classes(self.linked, self.qi)
        out = []
        for c in np.flatnonzero(cl.sizes < self.k):
            rows = cl.rows(int(c))
            out.append({"values": {q: str(self.linked[q].iloc[rows[0]]) for q in self.qi}, "size": len(rows),
                        "rows_first": [int(self.linked["row_first"].iloc[r]) for r in rows],
                        "rows_second": [int(self.linked["row_second"].iloc[r]) for r in rows]})
        return out

    def to_dict(self) -> dict:
        """JSON of ``graphlink qi attack``."""
        return {"attack": self.attack, "qi": list(self.qi), "on": list(self.on), "k": self.k,
                "k_first": self.k_first, "k_second": self.k_second, "linked_rows": len(self.linked),
                "incompatible_pairs": self.incompatible, "k_linked": self.k_linked,
                "disclosed": self.disclosed(), "remedy": REMEDIES[self.attack]}


def shuffle(frame: pd.DataFrame, seed: int | None = None) -> pd.DataFrame:
    """The remedy for unsorted matching: the release in a random row order.

    Examples
    --------
    >>> import pandas as pd
    >>> from graphlink.qi.attacks import shuffle
    >>> frame = pd.DataFrame({"zip": ["02138", "02139", "02141"]})
    >>> sorted(shuffle(frame, seed=1)["zip"]) == sorted(frame["zip"])       # the same rows, in another order
    True
    """
    return frame.sample(frac=1.0, random_state=np.random.default_rng(seed)).reset_index(drop=True)


def _hierarchies(first: pd.DataFrame, second: pd.DataFrame, qi: Sequence[str],
                 hierarchies: Mapping[str, Hierarchy] | None) -> dict[str, Hierarchy]:
    """The given hierarchies; a QI without one compares labels for equality only."""
    hs = dict(hierarchies or {})
    for q in qi:
        if q not in hs:
            hs[q] = flat(q, pd.concat([as_labels(first[q]), as_labels(second[q])]))
    return hs


def _meets(a: pd.Series, b: pd.Series, h: Hierarchy, column: str, sources: tuple[str | None, str | None]
           ) -> pd.Series:
    """Per pair, the more specific of two labels, or None when incompatible (cached per distinct pair)."""
    for labels, src in ((a, sources[0]), (b, sources[1])):
        unknown = ~labels.isin(h.covers.keys())
        if unknown.any():
            r = int(np.flatnonzero(unknown.to_numpy())[0])
            raise ReleaseError(f"value '{labels.iloc[r]}' is not in the hierarchy for {column}"
                               f"{f' ({h.source})' if h.source else ''}", file=src, row=r, column=column)
    cache: dict[tuple[str, str], str | None] = {}
    out = [cache.setdefault((x, y), h.meet(x, y)) if (x, y) not in cache else cache[(x, y)]
           for x, y in zip(a, b, strict=True)]
    return pd.Series(out, index=a.index, dtype=object)


def link(first: pd.DataFrame, second: pd.DataFrame, qi: Sequence[str], *, attack: str = "complementary",
         on: Sequence[str] | None = None, hierarchies: Mapping[str, Hierarchy] | None = None, k: int | None = None,
         sources: tuple[str | None, str | None] = (None, None)) -> Linkage:
    """Link two releases (see the module docstring): by row position for ``unsorted``, else by an equi-join on
    ``on`` (default: the columns both share outside the QI) keeping QI-compatible pairs.

    Examples
    --------
    SW-K's complementary release attack (Figure 5): two 2-anonymous releases of one table, joined on the problem,
    give two people away:

    >>> from graphlink.qi.attacks import link
    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import read_table
    >>> first, second = read_table(SWEENEY / "fig5_gt1.csv"), read_table(SWEENEY / "fig5_gt3.csv")
    >>> qi = ["Race", "BirthDate", "Gender", "ZIP"]
    >>> linkage = link(first, second, qi, hierarchies=read_dir(SWEENEY / "hierarchies"))
    >>> linkage.k_first, linkage.k_second
    (2, 2)
    >>> for person in linkage.disclosed():
    ...     print(person["values"])
    {'Race': 'white', 'BirthDate': '1964', 'Gender': 'male', 'ZIP': '02138'}
    {'Race': 'white', 'BirthDate': '1965', 'Gender': 'female', 'ZIP': '02139'}
    """
    if attack not in ATTACKS:
        raise ReleaseError(f"unknown attack {attack!r}; expected one of {', '.join(ATTACKS)}")
    qi = tuple(qi)
    check_columns(first, qi, sources[0])
    check_columns(second, qi, sources[1])
    a = first.reset_index(drop=True).assign(row_first=lambda d: np.arange(len(d)))
    b = second.reset_index(drop=True).assign(row_second=lambda d: np.arange(len(d)))
    if attack == "unsorted":
        if len(a) != len(b):
            raise ReleaseError(f"unsorted matching links rows by position: the releases have {len(a)} and {len(b)} "
                               "rows", file=sources[1])
        on = ()
        pairs = pd.concat([a.add_suffix("_1"), b.add_suffix("_2")], axis=1)
        pairs = pairs.rename(columns={"row_first_1": "row_first", "row_second_2": "row_second"})
    else:
        on = tuple(c for c in first.columns if c in second.columns and c not in qi) if on is None else tuple(on)
        if not on:
            raise ReleaseError("the releases share no column outside the quasi-identifier to link on (name the "
                               "link columns)", file=sources[1])
        check_columns(first, on, sources[0], role="link")
        check_columns(second, on, sources[1], role="link")
        left = a.rename(columns={c: f"{c}_1" for c in a.columns if c not in on and c != "row_first"})
        right = b.rename(columns={c: f"{c}_2" for c in b.columns if c not in on and c != "row_second"})
        for c in on:
            left[c], right[c] = as_labels(left[c]), as_labels(right[c])
        pairs = left.merge(right, on=list(on), how="inner")
    hs = _hierarchies(first, second, qi, hierarchies)
    linked = pd.DataFrame({q: _meets(as_labels(pairs[f"{q}_1"]), as_labels(pairs[f"{q}_2"]), hs[q], q, sources)
                           for q in qi})
    ok = linked.notna().all(axis=1).to_numpy()
    for c in on:
        linked[c] = pairs[c]
    linked["row_first"], linked["row_second"] = pairs["row_first"].to_numpy(), pairs["row_second"].to_numpy()
    k1, k2 = equivalence_classes(first, qi).k, equivalence_classes(second, qi).k
    return Linkage(attack, qi, tuple(on), k1, k2, linked[ok].reset_index(drop=True), int((~ok).sum()),
                   k if k is not None else min(k1, k2))
