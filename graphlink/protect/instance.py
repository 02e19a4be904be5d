"""Per-location sets in integer form, the input of every unlinking method (thesis ch. 7, Definition 21).

:class:`Instance` holds γ_c (identified) and ω_c (de-identified) of every location c as CSR arrays of
element codes, with the transposes (element → locations) the frequency counts of the allocation rule need.
Building one is O(rows); every accessor is O(1) or O(size of the returned row).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from graphlink.kernels.rows import csr

Sets = Mapping[Hashable, Iterable[Hashable]]


@dataclass
class Instance:
    """Per-location sets in integer form: γ_c (identified) and ω_c (de-identified).

    ``g_ptr/g_idx``: CSR location → identified element codes; ``w_ptr/w_idx``: location → de-identified
    codes; ``gl_ptr/gl_idx`` and ``wl_ptr/wl_idx``: the transposes (element → locations).

    Examples
    --------
    >>> from graphlink.protect import Instance
    >>> inst = Instance.from_sets({"A": {"a", "b", "c"}, "B": {"c", "d"}}, {"A": {"x", "y"}, "B": {"z"}})
    >>> inst.n_locations, inst.n_identified, inst.n_deidentified
    (2, 4, 3)
    """

    locations: list[Hashable]
    id_keys: np.ndarray
    de_keys: np.ndarray
    g_ptr: np.ndarray
    g_idx: np.ndarray
    w_ptr: np.ndarray
    w_idx: np.ndarray
    gl_ptr: np.ndarray
    gl_idx: np.ndarray
    wl_ptr: np.ndarray
    wl_idx: np.ndarray

    @property
    def n_locations(self) -> int:
        return len(self.locations)

    @property
    def n_identified(self) -> int:
        return len(self.id_keys)

    @property
    def n_deidentified(self) -> int:
        return len(self.de_keys)

    def gamma(self, c: int) -> np.ndarray:
        return self.g_idx[self.g_ptr[c]:self.g_ptr[c + 1]]

    def omega(self, c: int) -> np.ndarray:
        return self.w_idx[self.w_ptr[c]:self.w_ptr[c + 1]]

    @classmethod
    def from_pairs(cls, locations: list[Hashable], id_loc: np.ndarray, id_code: np.ndarray, id_keys: Any,
                   de_loc: np.ndarray, de_code: np.ndarray, de_keys: Any) -> Instance:
        n_loc = len(locations)
        id_keys = np.asarray(id_keys, dtype=object)
        de_keys = np.asarray(de_keys, dtype=object)
        id_loc, id_code = np.asarray(id_loc, np.int64), np.asarray(id_code, np.int64)
        de_loc, de_code = np.asarray(de_loc, np.int64), np.asarray(de_code, np.int64)
        g_ptr, g_idx = csr(id_loc, id_code, n_loc)
        w_ptr, w_idx = csr(de_loc, de_code, n_loc)
        gl_ptr, gl_idx = csr(id_code, id_loc, len(id_keys))
        wl_ptr, wl_idx = csr(de_code, de_loc, len(de_keys))
        return cls(list(locations), id_keys, de_keys, g_ptr, g_idx, w_ptr, w_idx, gl_ptr, gl_idx,
                   wl_ptr, wl_idx)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, locations: list[Hashable] | None = None) -> Instance:
        """From the long release table (location, kind, element).  O(rows)."""
        if locations is None:
            locations = list(pd.unique(frame["location"]))
        loc_index = pd.Index(locations)
        parts = []
        for kind in ("identified", "deidentified"):
            part = frame[frame["kind"] == kind].drop_duplicates(["location", "element"])
            codes, keys = pd.factorize(part["element"], sort=False)
            parts.append((loc_index.get_indexer(part["location"]), codes, np.asarray(keys, dtype=object)))
        (il, ic, ik), (dl, dc, dk) = parts
        return cls.from_pairs(locations, il, ic, ik, dl, dc, dk)

    @classmethod
    def from_sets(cls, gamma: Sets, omega: Sets) -> Instance:
        """From ``{location: identified elements}`` and ``{location: de-identified elements}``."""
        locations = list(dict.fromkeys([*gamma.keys(), *omega.keys()]))
        rows = [(c, kind, e) for kind, sets in (("identified", gamma), ("deidentified", omega))
                for c in locations for e in sets.get(c, ())]
        frame = pd.DataFrame(rows, columns=["location", "kind", "element"])
        return cls.from_frame(frame, locations)


def gather(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenate CSR rows ``rows`` (vectorised)."""
    starts, ends = ptr[rows], ptr[rows + 1]
    lens = ends - starts
    if lens.sum() == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return idx[np.arange(lens.sum()) + offs]
