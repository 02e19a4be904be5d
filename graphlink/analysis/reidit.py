"""Trail re-identification: REIDIT-C, -I, -I-K, -M and exact true loves, each pair with its reason.

Thesis references: REIDIT-C Algorithms 2/3 (§4.1), REIDIT-I Algorithms 4/5/6 (§4.2, Flip §4.2.3),
REIDIT-I-K Algorithm 15 (§9.1), REIDIT-M Algorithm 16 (Appendix A), true loves Definition 5 / Theorem 2.
Under the model's assumptions (one-to-one, reserved direction respected; Hall's condition holds) every
REIDIT-C and REIDIT-I pair is a true love, and true loves are exactly the certain re-identifications.  When
Hall's condition fails the data breaks the model: results carry ``model_ok = False`` and no certainty is
claimed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from graphlink import registry
from graphlink.analysis.results import Evaluation, ReidentifySummary
from graphlink.catalog import METHODS, Method  # noqa: F401  (re-exported: graphlink.analysis.reidit.Method)
from graphlink.core.linkgraph import LinkGraph, build_linkgraph
from graphlink.core.release import Release
from graphlink.core.trails import MultiplicityChoice, ReservedChoice, Trails, TrailSide, build_trails
from graphlink.diagnostics import Diagnostic, first
from graphlink.errors import ModelAssumptionError
from graphlink.kernels.rows import weighted_degrees

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from graphlink.analysis.audit import AuditResult
    from graphlink.analysis.matching import EdgeClasses
    from graphlink.analysis.onetomany import ManyClasses
    from graphlink.core.model import Model

#: above this many forced (non degree-one) true loves, tight-set explanations are computed only on request
EXPLAIN_LIMIT = 2000


def _as_arrow(keys: np.ndarray | pa.Array) -> pa.Array:
    import pyarrow as pa

    if isinstance(keys, pa.Array | pa.ChunkedArray):
        return keys.cast(pa.large_string())
    try:
        return pa.array(keys, pa.large_string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):        # keys that are not all str (given matrices, tests)
        return pa.array([str(k) for k in keys], pa.large_string())


def _as_objects(keys: np.ndarray | pa.Array) -> np.ndarray:
    return keys if isinstance(keys, np.ndarray) else keys.to_numpy(zero_copy_only=False).astype(object)


@dataclass(frozen=True)
class PairColumns:
    """Pairs kept as key arrays (NumPy object arrays or Arrow strings), their reasons made only when asked for
    (REIDIT-C on large releases: a CSV of the pairs needs no Python string per pair).  ``reason()`` returns the
    reasons as an Arrow string array."""

    identified: np.ndarray | pa.Array
    deidentified: np.ndarray | pa.Array
    reason: Callable[[], pa.Array]

    def __len__(self) -> int:
        return len(self.identified)

    def frame(self) -> pd.DataFrame:
        """identified, deidentified, reason as object columns.  O(pairs)."""
        import pandas as pd

        return pd.DataFrame({"identified": _as_objects(self.identified),
                             "deidentified": _as_objects(self.deidentified),
                             "reason": _as_objects(self.reason())}, dtype=object)

    def table(self, columns: list[str]) -> pa.Table:
        """The requested columns as an Arrow table of strings.  O(pairs)."""
        import pyarrow as pa

        get = {"identified": lambda: _as_arrow(self.identified), "deidentified": lambda: _as_arrow(self.deidentified),
               "reason": self.reason}
        return pa.table({c: get[c]() for c in columns})


class Reidentification:
    """Re-identified pairs with a plain-words reason each, and their :class:`ReidentifySummary`.

    ``pairs`` is a DataFrame (identified, deidentified, reason); a method may hand over :class:`PairColumns`
    instead, and the frame is then made on first use.  Returned by :func:`reidentify` and :func:`true_loves`.
    Immutable: its attributes cannot be set after construction (:meth:`with_summary` returns a changed copy that
    shares the pairs); the frame made on first use is a cache of the same pairs.

    Attributes
    ----------
    method : str
        The method that produced it.
    pairs : pandas.DataFrame
        identified, deidentified, reason (object columns), one row per pair.
    summary : ReidentifySummary
        What the method found (and, given a truth, how well: correct, wrong, precision, recall).

    Parameters
    ----------
    method : str
        The method that produced it (``"true-loves"``, ``"complete"``, ...).
    pairs : pandas.DataFrame or PairColumns
        One row per re-identified pair (``incomplete-k``: per candidate).
    summary : ReidentifySummary or dict, optional
        What the method found (a dict of facts, keys of :meth:`ReidentifySummary.as_dict`, is kept as a
        :class:`ReidentifySummary`).

    Examples
    --------
    >>> import graphlink as gl
    >>> result = gl.reidentify(gl.thesis_example(), "true-loves")
    >>> result.method, len(result)
    ('true-loves', 4)
    >>> result.summary.reidentified, result.summary.model_ok
    (4, True)
    >>> print(result.pairs.loc[3, "reason"])
    actg can only be Ali, so gatc must be Dan
    """

    __slots__ = ("_frame", "_pairs", "method", "summary")
    method: str
    summary: ReidentifySummary

    def __init__(self, method: str, pairs: pd.DataFrame | PairColumns,
                 summary: ReidentifySummary | dict | None = None) -> None:
        if not isinstance(summary, ReidentifySummary):
            summary = ReidentifySummary.from_dict(method, len(pairs), summary or {})
        for name, value in (("method", method), ("_pairs", pairs), ("summary", summary),
                            ("_frame", None if isinstance(pairs, PairColumns) else pairs)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Reidentification is immutable: use with_summary(...) instead of setting {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Reidentification is immutable: {name!r} cannot be deleted")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickling and copying rebuild through __init__ (the default would set the slots one by one)
        return type(self), (self.method, self._pairs if self._frame is None else self._frame, self.summary)

    def __repr__(self) -> str:
        return f"Reidentification(method={self.method!r}, pairs={len(self)}, summary={self.summary!r})"

    def with_summary(self, **changes: Any) -> Reidentification:
        """A copy whose summary has some fields changed (:meth:`ReidentifySummary.with_`); the pairs are shared,
        not copied.  O(1)."""
        out = Reidentification(self.method, self._pairs, self.summary.with_(**changes))
        object.__setattr__(out, "_frame", self._frame)
        return out

    @property
    def pairs(self) -> pd.DataFrame:
        if self._frame is None:              # made once from the kept arrays; the same pairs every time
            object.__setattr__(self, "_frame", self._pairs.frame())
        return self._frame

    def table(self, columns: list[str]) -> pa.Table | None:
        """The pair columns as an Arrow table when they are still kept as arrays (no frame made), else None."""
        return self._pairs.table(columns) if isinstance(self._pairs, PairColumns) else None

    def to_frame(self) -> pd.DataFrame:
        return self.pairs.copy()

    def _repr_html_(self) -> str:
        from graphlink.display import html

        facts = {k: v for k, v in self.summary.as_dict().items() if not isinstance(v, list | dict)}
        facts.pop("diagnostic", None)
        return html(f"{self.method}: {len(self.pairs):,} pair(s)", facts, {"pairs": self.pairs},
                    note=str(self.summary.diagnostic or ""))

    def to_dict(self) -> dict:
        return {"method": self.method,
                "pairs": [{"identified": r.identified, "deidentified": r.deidentified, "reason": r.reason}
                          for r in self.pairs.itertuples(index=False)],
                "summary": self.summary.as_dict()}

    def __len__(self) -> int:
        return len(self._pairs)


def require_one_to_one(trails: Trails, name: str) -> None:
    """Refuse one-to-many trails for the method labelled ``name``: REIDIT-C/-I assume one-to-one data (Table A.1);
    on one-to-many trails they can name people wrongly (REIDIT-I removes a household after its first member).

    ``trails`` is anything with ``one_to_many``, ``model`` and ``reason`` (the core's trails or an engine's).
    Raises :class:`ModelAssumptionError` with a ``method-needs-one-to-one`` diagnostic
    (:func:`graphlink.registry.needs_one_to_one`).  O(1)."""
    if trails.one_to_many:
        raise ModelAssumptionError(diagnostic=registry.needs_one_to_one(name, trails))


def check_method(trails: Trails, method: str) -> None:
    """Raise :class:`ModelAssumptionError` (before any work) when ``method`` does not apply to the trails' data
    model (its spec's readings: :func:`graphlink.registry.validate`).  O(1)."""
    registry.check_reading(registry.get(method, "reidentify"), trails)


def _pairs_frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=["identified", "deidentified", "reason"]).astype(object)


def _loc_text(trails: Trails, side: TrailSide, i: int) -> str:
    t = side.trail_str(i)
    at = [c for c, v in zip(trails.locations, t, strict=True) if v == "1"]
    shown = ", ".join(at[:8]) + (f" and {len(at) - 8} more" if len(at) > 8 else "")
    return f"trail {t}" + (f" (disclosed at {shown})" if at else "")


# ---------------------------------------------------------------------------------------------- REIDIT-C
def reidit_c(trails: Trails) -> Reidentification:
    """REIDIT-C (Alg. 2; hash version of Alg. 3): unique exact match of fully known trails.

    A pair is reported when its trail has no ``*``, occurs exactly once among identified trails and exactly
    once among de-identified trails (uniqueness on *both* sides keeps it sound outside the unreserved
    one-to-one model, where identified twins need not have de-identified twins).  Every pair is a true
    love: a fully known de-identified trail links exactly the identified trails equal to it.  Pairs come in
    the order of their identified elements.  O((|M| + |N|)·W) expected (one hash table over the packed
    words of both sides, :func:`graphlink.kernels.hashing.group_rows`).
    """
    from graphlink.kernels.hashing import group_rows

    require_one_to_one(trails, "REIDIT-C")
    M, N = trails.identified, trails.deidentified
    full = _full_row(M)
    mi = np.flatnonzero(np.all(M.known == full, axis=1))
    ni = np.flatnonzero(np.all(N.known == full, axis=1))
    m_ones = M.ones if len(mi) == len(M) else M.ones[mi]          # unreserved: every trail is fully known
    n_ones = N.ones if len(ni) == len(N) else N.ones[ni]
    group, n_groups = group_rows(np.ascontiguousarray(m_ones), np.ascontiguousarray(n_ones))
    gm, gn = group[:len(mi)], group[len(mi):]
    unique = (np.bincount(gm, minlength=n_groups) == 1) & (np.bincount(gn, minlength=n_groups) == 1)
    de_of = np.full(n_groups, -1, np.int64)
    de_of[gn] = ni                                    # the only de-identified row of each unique group
    sel = unique[gm]
    pm = mi[sel]
    pn = de_of[gm[sel]]
    mk, nk = M.keys_at(pm), N.keys_at(pn)

    def reasons() -> pa.Array:            # only when asked for (--explain): the trail sizes are counted then
        ones = np.bitwise_count(M.ones[pm]).sum(axis=1) if len(pm) else np.zeros(0, np.int64)
        return _complete_reasons(mk, nk, ones, M.n_locations)

    res = PairColumns(mk, nk, reasons)
    return Reidentification("complete", res, ReidentifySummary("complete", len(pm), len(pm), identified=len(M),
                                                               deidentified=len(N)))


def _complete_reasons(mk: np.ndarray | pa.Array, nk: np.ndarray | pa.Array, ones: np.ndarray, n_loc: int) -> pa.Array:
    """REIDIT-C's reason of every pair, joined by Arrow (no Python loop).  O(pairs)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from graphlink.core.ingest import arrow_ints

    if not len(mk):
        return pa.array([], pa.string())
    def text(value: str) -> pa.Scalar:
        return pa.scalar(value, pa.large_string())

    joined = pc.binary_join_element_wise(
        _as_arrow(mk), text(" and "), _as_arrow(nk), text(" share a trail (disclosed at "),
        pc.cast(arrow_ints(ones), pa.large_string()),
        text(f" of {n_loc} locations) that no other identified or de-identified record has"), text(""))
    return joined


def _full_row(side: TrailSide) -> np.ndarray:
    from graphlink.core.trails import full_mask

    return full_mask(1, side.n_locations)[0]


# ---------------------------------------------------------------------------------------------- REIDIT-I
def _orientation(graph: LinkGraph) -> tuple[bool, TrailSide, TrailSide]:
    """(reserved_is_deidentified, reserved side R, complete side S).  Unreserved: R = de-identified."""
    tr = graph.trails
    if tr.star_side == "identified":
        return False, tr.identified, tr.deidentified
    return True, tr.deidentified, tr.identified


@dataclass(frozen=True)
class _ClassView:
    """The link graph oriented R (reserved) -> S (complete) on twin classes, with class members."""

    r_ptr: np.ndarray          # R class -> S classes (CSR)
    r_nb: np.ndarray
    s_ptr: np.ndarray          # S class -> R classes (CSR)
    s_nb: np.ndarray
    r_size: np.ndarray
    s_size: np.ndarray
    r_mptr: np.ndarray         # R class -> member rows (CSR, rows ascending)
    r_mem: np.ndarray
    s_mptr: np.ndarray
    s_mem: np.ndarray
    r_class: np.ndarray        # row -> class
    s_class: np.ndarray
    r_is_de: bool
    R: TrailSide
    S: TrailSide

    def candidates(self, r: int, limit: int | None = None) -> np.ndarray:
        """S rows linked to R row ``r`` (up to ``limit``), from classes.  O(degree)."""
        out: list[np.ndarray] = []
        n = 0
        c = self.r_class[r]
        for sc in self.r_nb[self.r_ptr[c]:self.r_ptr[c + 1]]:
            m = self.s_mem[self.s_mptr[sc]:self.s_mptr[sc + 1]]
            out.append(m)
            n += len(m)
            if limit is not None and n >= limit:
                break
        return np.concatenate(out)[:limit] if out else np.zeros(0, np.int64)

    def candidates_of_s(self, s: int, limit: int | None = None) -> np.ndarray:
        out: list[np.ndarray] = []
        n = 0
        c = self.s_class[s]
        for rc in self.s_nb[self.s_ptr[c]:self.s_ptr[c + 1]]:
            m = self.r_mem[self.r_mptr[rc]:self.r_mptr[rc + 1]]
            out.append(m)
            n += len(m)
            if limit is not None and n >= limit:
                break
        return np.concatenate(out)[:limit] if out else np.zeros(0, np.int64)


def class_view(graph: LinkGraph) -> _ClassView:
    """The link graph oriented reserved → complete on twin classes, with class members (what REIDIT-I/-M walk).
    Built once per graph and cached on it.  O(E_class log E_class + |M| + |N|)."""
    cached = graph.__dict__.get("_reidit_class_view")
    if cached is not None:
        return cached
    from graphlink.kernels.links import transpose_csr
    from graphlink.kernels.rows import csr
    from graphlink.kernels.rows import members as _members

    r_is_de, R, S = _orientation(graph)
    if r_is_de:
        rc, sc, r_size, s_size, r_class, s_class = (graph.class_ej, graph.class_ei, graph.de_class_size,
                                                     graph.id_class_size, graph.de_class, graph.id_class)
    else:
        rc, sc, r_size, s_size, r_class, s_class = (graph.class_ei, graph.class_ej, graph.id_class_size,
                                                     graph.de_class_size, graph.id_class, graph.de_class)
    # the graph's edges are sorted by (class_ej, class_ei): the class_ej side's CSR is the graph's own arrays;
    # the other side is their transpose by counting, 4 bytes per class edge as int32 (an argsort and its gather
    # held 16): at 1e6 × 72 (4.5e8 class edges) the difference between 11.1 and 9.3 GB
    small = np.int32 if max(len(r_size), len(s_size)) < 2**31 else np.int64
    if r_is_de:
        r_ptr, r_nb = csr(rc, sc, len(r_size), presorted=True)
        s_ptr, s_nb = transpose_csr(r_ptr, r_nb, len(s_size), small)
    else:
        s_ptr, s_nb = csr(sc, rc, len(s_size), presorted=True)
        r_ptr, r_nb = transpose_csr(s_ptr, s_nb, len(r_size), small)
    rmp, rm = _members(r_class, len(r_size))
    smp, sm = _members(s_class, len(s_size))
    view = _ClassView(r_ptr, r_nb, s_ptr, s_nb, r_size.astype(np.int64),
                      s_size.astype(np.int64), rmp.astype(np.int64), rm, smp.astype(np.int64), sm,
                      r_class, s_class, r_is_de, R, S)
    graph.__dict__["_reidit_class_view"] = view
    return view


def _run_reidit_i(graph: LinkGraph, flip: bool | None = None) -> tuple[list[tuple[int, int, str]], dict]:
    """REIDIT-I as unit propagation on twin classes (numba).  Returns (R row, S row, reason) triples.

    Never expands element-level edges, so low-entropy releases with 1e8+ element edges run in seconds.
    ``flip`` (Alg. 6) defaults to |M| = |N|.  Reasons are built afterwards for the re-identified pairs
    only: a candidate that was gone when a pair was made was taken by its final partner, so the post-hoc
    reason is the one at the time.
    """
    from graphlink.kernels.propagate import propagate_classes

    require_one_to_one(graph.trails, "REIDIT-I")
    v = class_view(graph)
    R, S = v.R, v.S
    if flip is None:
        flip = len(R) == len(S)
    out_r, out_s, out_flip, partner_r, partner_s, alive_r, alive_s, conflict_r, deg_r = propagate_classes(
        v.r_ptr, v.r_nb, v.s_ptr, v.s_nb, v.r_size, v.s_size, v.r_mptr, v.r_mem, v.s_mptr, v.s_mem,
        len(R), len(S), bool(flip))
    deg_r0 = weighted_degrees(v.r_ptr, v.r_nb, v.s_size)
    conflict_r = conflict_r | (deg_r0[v.r_class] == 0)      # records compatible with nobody from the start
    note = " (Flip step: |M| = |N|, so every record has a counterpart)"
    out = []
    for r, s, f in zip(out_r.tolist(), out_s.tolist(), out_flip.tolist(), strict=True):
        if f:
            cand = v.candidates_of_s(s, limit=8)
            n_other = int(v.r_size[v.s_nb[v.s_ptr[v.s_class[s]]:v.s_ptr[v.s_class[s] + 1]]].sum()) - 1
            why = _why_i(S.keys[s], R.keys[r], cand[cand != r].tolist(), R, S, partner_r, flip_note=note,
                         n_others=n_other)
        else:
            cand = v.candidates(r, limit=8)
            why = _why_i(R.keys[r], S.keys[s], cand[cand != s].tolist(), S, R, partner_s,
                         n_others=int(deg_r0[v.r_class[r]]) - 1)
        out.append((r, s, why))
    return out, {"r_is_deidentified": v.r_is_de, "conflicts": [str(x) for x in R.keys[conflict_r]],
                 "alive_r": alive_r, "alive_s": alive_s, "view": v, "deg_r": deg_r, "R": R, "S": S,
                 "flip": flip}


def _why_i(key: str, match: str, others: list[int], other_side: TrailSide, this_side: TrailSide,
           partner: np.ndarray, flip_note: str = "", n_others: int | None = None) -> str:
    n_others = len(others) if n_others is None else n_others
    if n_others <= 0:
        return f"{key} is only compatible with {match}{flip_note}"
    taken = [f"{other_side.keys[o]} ↔ {this_side.keys[partner[o]]}" if partner[o] >= 0
             else f"{other_side.keys[o]} (no candidate left)" for o in others[:6]]
    more = f" and {n_others - len(taken)} more" if n_others > len(taken) else ""
    return (f"{key} was compatible with {match} and {n_others} other(s), which were re-identified first "
            f"({'; '.join(taken)}{more}), so {key} must be {match}{flip_note}")


def _i_pairs(graph: LinkGraph, triples: list[tuple[int, int, str]], r_is_de: bool) -> list[tuple[str, str, str]]:
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    for r, s, why in triples:
        i, j = (s, r) if r_is_de else (r, s)
        rows.append((str(M.keys[i]), str(N.keys[j]), why))
    return rows


def reidit_i(graph: LinkGraph, *, flip: bool | None = None) -> Reidentification:
    """REIDIT-I (Alg. 4/5, with Alg. 6 Flip when |M| = |N|) as degree-one unit propagation.

    The outer loop runs over the reserved side (trails with ``*``); candidates come from the complete
    side.  Same fixpoint as the thesis's repeat-until formulation (tested against it); O(|M| + |N| + E)
    instead of the thesis's O(|M|·|N|) with a dense D matrix.
    """
    triples, info = _run_reidit_i(graph, flip)
    res = _pairs_frame(_i_pairs(graph, triples, info["r_is_deidentified"]))
    summary = ReidentifySummary("incomplete", len(res), len(res), **_sizes(graph), flip=bool(info["flip"]),
                                conflicts=info["conflicts"], model_ok=not info["conflicts"],
                                diagnostic=conflict_diagnostic(graph.trails.model.label, info["conflicts"])
                                if info["conflicts"] else None)
    return Reidentification("incomplete", res, summary)


def _sizes(graph: LinkGraph) -> dict[str, int]:
    return {"identified": len(graph.trails.identified), "deidentified": len(graph.trails.deidentified)}


def conflict_diagnostic(label: str, conflicts: list[str], count: int | None = None) -> Diagnostic:
    """REIDIT-I/-I-K's records with no compatible candidate: the one-to-one model (``label``) does not hold.
    ``count``: how many there are when ``conflicts`` lists only the first ones."""
    count = len(conflicts) if count is None else count
    return Diagnostic(
        "reidit-conflicts",
        f"the one-to-one model does not hold ({label}): {count:,} record(s) have no compatible candidate, from the "
        f"start or after REIDIT-I's eliminations (first: {first(conflicts)}), so its pairs are not certain",
        {"label": label, "count": count, "first": [str(c) for c in conflicts[:5]]},
        remedy="if one de-identified element can stand for several people (households), read the release as "
               "one-to-many with the identified side reserved and use REIDIT-M")


def reidit_ik(graph: LinkGraph, k: int) -> Reidentification:
    """REIDIT-I-K (Alg. 15): REIDIT-I, then every remaining reserved trail with fewer than k candidates
    is k-re-identified to all of them (one row per candidate pair).  O(|M| + |N| + E).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    triples, info = _run_reidit_i(graph, flip=False)
    rows = _i_pairs(graph, triples, info["r_is_deidentified"])
    R, S, v = info["R"], info["S"], info["view"]
    alive_r, alive_s = info["alive_r"], info["alive_s"]
    n_live = info["deg_r"][v.r_class]          # alive candidates of every remaining record (twins alike)
    k_groups = 0
    for r in np.flatnonzero(alive_r & (n_live > 0) & (n_live < k)):
        nb = v.candidates(int(r))
        cand = nb[alive_s[nb]]
        if 0 < len(cand) < k:
            k_groups += 1
            names = ", ".join(str(S.keys[c]) for c in cand)
            why = f"{R.keys[r]} is compatible with only {len(cand)} < k={k} candidates ({names}); one is correct"
            for c in cand:
                i, j = (c, r) if info["r_is_deidentified"] else (r, c)
                rows.append((str(graph.trails.identified.keys[i]), str(graph.trails.deidentified.keys[j]), why))
    res = _pairs_frame(rows)
    summary = ReidentifySummary("incomplete-k", len(triples) + k_groups, len(res), **_sizes(graph), k=k,
                                unique=len(triples), k_reidentified=k_groups, conflicts=info["conflicts"],
                                model_ok=not info["conflicts"],
                                diagnostic=conflict_diagnostic(graph.trails.model.label, info["conflicts"])
                                if info["conflicts"] else None)
    return Reidentification("incomplete-k", res, summary)


def reidit_m(graph: LinkGraph) -> Reidentification:
    """REIDIT-M (Appendix A, Alg. 16): one-to-many data; a reserved-side trail with exactly one
    supertrail is re-identified to it, with no removal and no iteration (several identified elements may
    marry one de-identified element: a strongly stable polygamous marriage, Definition 26).
    Unreserved data loops over the identified side.  O(|M| + |N| + E).
    """
    v = class_view(graph)
    r_is_de, R, S = v.r_is_de, v.R, v.S
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    # class degree = Σ sizes of the linked classes on the other side (twins share it)
    deg_rc = weighted_degrees(v.r_ptr, v.r_nb, v.s_size)
    deg_sc = weighted_degrees(v.s_ptr, v.s_nb, v.r_size)
    if graph.trails.reserved == "none" and not graph.trails.one_to_many:  # Alg. 16 loops over m ∈ M
        for s_row in np.flatnonzero(deg_sc[v.s_class] == 1):
            r_row = int(v.candidates_of_s(int(s_row))[0])
            why = f"{M.keys[s_row]} has exactly one compatible trail: {N.keys[r_row]} (strongly stable marriage)"
            rows.append((str(M.keys[s_row]), str(N.keys[r_row]), why))
    else:
        for r in np.flatnonzero(deg_rc[v.r_class] == 1):
            s_row = int(v.candidates(int(r))[0])
            i, j = (s_row, r) if r_is_de else (r, s_row)
            why = f"{R.keys[r]} has exactly one compatible trail: {S.keys[s_row]} (strongly stable marriage)"
            rows.append((str(M.keys[i]), str(N.keys[j]), why))
    res = _pairs_frame(rows)
    # soundness (Theorem 9) needs every record of the loop side to have its counterpart among its candidates:
    # a record with no candidate at all shows that the model does not hold
    if graph.trails.reserved == "none" and not graph.trails.one_to_many:
        loop_keys, orphans = M.keys, np.flatnonzero(deg_sc[v.s_class] == 0)
    else:
        loop_keys, orphans = R.keys, np.flatnonzero(deg_rc[v.r_class] == 0)
    summary = ReidentifySummary("multiple", len(res), len(res), **_sizes(graph), model_ok=len(orphans) == 0)
    if len(orphans):
        summary = summary.with_(conflicts=[str(k) for k in loop_keys[orphans[:50]]],
                                diagnostic=orphan_diagnostic(graph.trails.model.label, graph.trails.one_to_many,
                                                             [str(k) for k in loop_keys[orphans[:5]]], len(orphans)))
    elif graph.trails.one_to_many and graph.trails.reserved == "none":
        # nothing withheld: REIDIT-M's pairs are certain only if some assignment explains every location
        from graphlink.analysis.onetomany import classify_one_to_many

        mc = classify_one_to_many(graph, possible=False, backbone=False)
        summary = summary.with_(model_ok=mc.consistent)
        if mc.consistent is False:
            res = res.iloc[:0]
            summary = summary.with_(reidentified=0, pairs=0, diagnostic=many_refuted(str(mc.diagnostic)))
        summary = note_unsolved(summary, [r.text() for r in getattr(mc, "unsolved", [])])
    return Reidentification("multiple", res, summary)


def orphan_diagnostic(label: str, one_to_many: bool, first_keys: list[str], count: int) -> Diagnostic:
    """REIDIT-M's elements that fit no trail on the other side: the model (``label``) does not hold."""
    return Diagnostic(
        "reidit-m-orphans",
        f"the {label} model does not hold: {count:,} element(s) fit no trail on the other side (first: "
        f"{', '.join(first_keys[:5])}{', …' if count > 5 else ''}), so REIDIT-M's pairs are not certain",
        {"label": label, "count": count, "first": list(first_keys[:5]), "one_to_many": one_to_many},
        remedy="" if one_to_many else "if one de-identified element can stand for several people (households), "
                                      "read the release as one-to-many with the identified side reserved")


def many_refuted(detail: str) -> Diagnostic:
    """The one-to-many model refuted by the data (``detail``: :mod:`graphlink.analysis.onetomany`'s words)."""
    return Diagnostic("one-to-many-refuted", f"the one-to-many model does not hold ({detail}), so no pair is certain",
                      {"detail": detail})


# ------------------------------------------------------------------------------------------- true loves
def true_loves(graph_or_classes: LinkGraph | EdgeClasses, *, explain: bool | None = None) -> Reidentification:
    """Exact true loves (Definition 5): edges in every maximum matching, via one matching + one SCC pass.

    The provable optimum (Theorem 2): REIDIT-C and REIDIT-I results are subsets.  Each pair's reason names
    the tight set that forces it ("n1, n2 can only be Ali or Bob, so n3 must be Carol"), found on twin classes
    so low-entropy releases never expand their element edges.  On one-to-many trails (Appendix A) the
    analogue is computed instead: the pairs that hold in every consistent assignment
    (:mod:`graphlink.analysis.onetomany`).  O(E·√V) (or one class-level max-flow) plus, for explanations, one class
    search per forced pair (bounded by ``EXPLAIN_LIMIT`` unless ``explain``).

    Parameters
    ----------
    graph_or_classes : LinkGraph or EdgeClasses
        The link graph, or its edge classification when already computed (:func:`classify_edges`).
    explain : bool, optional
        Give every pair its reason (default: up to ``EXPLAIN_LIMIT`` pairs).

    Returns
    -------
    Reidentification
        The true loves, each with its reason.

    Examples
    --------
    >>> import graphlink as gl
    >>> result = gl.true_loves(gl.build_linkgraph(gl.build_trails(gl.thesis_example())))
    >>> len(result), result.summary.maximum_matching_size
    (4, 4)
    >>> print(result.pairs.loc[0, "reason"])
    actg is only compatible with Ali
    """
    if isinstance(graph_or_classes, LinkGraph) and graph_or_classes.trails.one_to_many:
        return certain_one_to_many(graph_or_classes, explain=explain)
    from graphlink.analysis.matching import EdgeClasses, classify_edges  # scipy: only for the methods that match

    classes = graph_or_classes if isinstance(graph_or_classes, EdgeClasses) else classify_edges(graph_or_classes)
    graph = classes.graph
    M, N = graph.trails.identified, graph.trails.deidentified
    ti, tj = classes.true_love_pairs
    deg_i, deg_j = graph.degrees()
    r_is_de, R, S = _orientation(graph)
    t_r, t_s = (tj, ti) if r_is_de else (ti, tj)
    deg_r = deg_j if r_is_de else deg_i
    forced = deg_r[t_r] > 1
    do_explain = explain if explain is not None else int(forced.sum()) <= EXPLAIN_LIMIT
    explainer = _TightSets(graph, classes.class_flow) if (forced.any() and do_explain) else None
    caveat = "" if classes.hall_ok else " [the data breaks the model (Hall's condition fails): not certain]"
    rows = []
    for i, j, r, s, f in zip(ti, tj, t_r, t_s, forced, strict=True):
        if not f:
            why = f"{R.keys[r]} is only compatible with {S.keys[s]}"
        elif explainer is not None:
            why = explainer.one_to_one(int(r), int(s))
        else:
            why = forced_short_reason(str(R.keys[r]), str(S.keys[s]))
        rows.append((str(M.keys[i]), str(N.keys[j]), why + caveat))
    res = _pairs_frame(rows)
    tr = graph.trails
    summary = ReidentifySummary("true-loves", len(res), len(res), **_sizes(graph),
                                maximum_matching_size=classes.nu_real, model_ok=classes.hall_ok,
                                unmatched=classes.unmatched[:50], engine=classes.engine)
    if not classes.hall_ok:
        summary = summary.with_(diagnostic=hall_diagnostic(tr.model, {
            "deidentified": [str(k) for k in tr.deidentified.keys[classes.mate_deidentified < 0]],
            "identified": [str(k) for k in tr.identified.keys[classes.mate_identified < 0]]}))
    return Reidentification("true-loves", res, summary)


def forced_short_reason(r: str, s: str) -> str:
    """The reason of a forced true love past the explanation budget (``EXPLAIN_LIMIT``)."""
    return (f"{r} must be {s}: its other candidates are each needed by a tight set of records (full "
            "explanations list it)")


def hall_diagnostic(model: Model, sides: dict[str, list[str]]) -> Diagnostic:
    """The one-to-one model (``model``) does not hold: how many elements of each side no maximum matching can pair
    with a distinct element of the other side (the reserved side's, and with nothing reserved both sides'), the
    first few, what next.  ``sides``: {side: keys of the unmatched elements}."""
    checked = ["deidentified", "identified"] if model.reserved == "none" else [model.reserved]
    words = {"identified": "identified", "deidentified": "de-identified"}
    parts = []
    for side in checked:
        keys = sides.get(side, [])
        if keys:
            parts.append(f"{len(keys):,} {words[side]} element(s) ({first(keys)})")
    return Diagnostic(
        "hall-fails",
        f"the one-to-one model does not hold ({model.label}): {' and '.join(parts)} cannot be matched to a "
        "distinct element of the other side in any maximum matching (Hall's condition fails), so no pair is "
        "certain", {"label": model.label, "sides": {s: len(sides.get(s, [])) for s in checked},
                    "first": {s: list(sides.get(s, []))[:5] for s in checked}},
        remedy="if one de-identified element can stand for several people (households), read the release as "
               "one-to-many with the identified side reserved and use REIDIT-M or the true loves")


class _TightSets:
    """Explains forced pairs by Hall-tight sets found on twin classes (thesis §4.2.5 stable sets =
    Dulmage–Mendelsohn; Appendix A for one-to-many), never expanding element edges.

    One-to-one (r, s) forced: starting from r's other candidate classes, follow matched pairs back to their
    reserved-side classes and on to all their candidates; the reserved members reached form a set U with
    |U| = |N(U)| that uses all of N(U), so r must take s.  One-to-many (m, n) forced: starting from n, follow
    its other candidates to the elements they are matched into; those elements W must each stand for someone
    and only |W| people fit them, so m is needed by n.  O(class edges reached) per pair (numba).
    """

    def __init__(self, graph: LinkGraph, class_flow: np.ndarray) -> None:
        from graphlink.kernels.rows import csr

        self.v = class_view(graph)
        v = self.v
        rc = graph.class_ej if v.r_is_de else graph.class_ei
        sc = graph.class_ei if v.r_is_de else graph.class_ej
        pos = class_flow > 0
        self.s_flow = csr(sc[pos], rc[pos], len(v.s_size))      # S class -> R classes matched into it
        self.r_flow = csr(rc[pos], sc[pos], len(v.r_size))      # R class -> S classes its members are matched to

    @staticmethod
    def _rows(ptr: np.ndarray, mem: np.ndarray, classes: np.ndarray) -> np.ndarray:
        return np.sort(np.concatenate([mem[ptr[c]:ptr[c + 1]] for c in classes])) if len(classes) else \
            np.zeros(0, np.int64)

    @staticmethod
    def _names(keys: np.ndarray, rows: np.ndarray, show: int, sep: str) -> str:
        text = sep.join(str(keys[x]) for x in rows[:show])
        if len(rows) > show:
            text += f" {'or' if sep == ' or ' else 'and'} {len(rows) - show} more"
        return text

    def tight_set(self, r: int, s: int) -> tuple[np.ndarray, np.ndarray]:
        """One-to-one forced pair (r, s): (U, N(U)) as reserved rows and complete rows, |U| = |N(U)|."""
        from graphlink.kernels.propagate import closure

        v = self.v
        rc, sc = v.r_class[r], v.s_class[s]
        start = v.r_nb[v.r_ptr[rc]:v.r_ptr[rc + 1]]
        start = start[start != sc]
        reached_s, reached_r = closure(start, *self.s_flow, v.r_ptr, v.r_nb, len(v.s_size), len(v.r_size), -1)
        return self._rows(v.r_mptr, v.r_mem, reached_r), self._rows(v.s_mptr, v.s_mem, reached_s)

    def one_to_one(self, r: int, s: int, show: int = 6) -> str:
        v = self.v
        u, nu = self.tight_set(r, s)
        count = f" ({len(u)} records, {len(nu)} candidates)" if len(u) > 1 else ""
        return (f"{self._names(v.R.keys, u, show, ', ')} can only be {self._names(v.S.keys, nu, show, ' or ')}"
                f"{count}, so {v.R.keys[r]} must be {v.S.keys[s]}")


def certain_one_to_many(graph: LinkGraph, *, explain: bool | None = None, classes: ManyClasses | None = None
                        ) -> Reidentification:
    """The certain pairs of a one-to-many release: those in every consistent assignment (Malin 2006 Appendix A;
    exact, :mod:`graphlink.analysis.onetomany`).  REIDIT-M's pairs are a subset.  When the data refute the model no
    pair is returned and ``summary.diagnostic`` says why; a component beyond the search budget is counted in
    ``summary.unsolved`` (its words in ``summary.unsolved_text``) and ``model_ok`` is None (not checked).
    ``explain`` is accepted for symmetry with the one-to-one true loves: every reason is complete already.
    ``classes``: the graph's classification, when it is at hand.
    Cost: that of :func:`graphlink.analysis.onetomany.classify_one_to_many` without possible pairs."""
    from graphlink.analysis.onetomany import classify_one_to_many

    del explain
    mc = classes if classes is not None else classify_one_to_many(graph, possible=False)
    M, N = graph.trails.identified, graph.trails.deidentified
    rows = []
    if mc.consistent is not False:
        for m, n, w, d in zip(mc.pair_m.tolist(), mc.pair_n.tolist(), mc.why.tolist(), mc.why_detail, strict=True):
            rows.append((str(M.keys[m]), str(N.keys[n]), many_reason(str(M.keys[m]), str(N.keys[n]), w, d)))
    res = _pairs_frame(rows)
    summary = ReidentifySummary("true-loves", len(res), len(res), **_sizes(graph), model_ok=mc.consistent,
                                engine=mc.engine,
                                diagnostic=many_refuted(str(mc.diagnostic)) if mc.consistent is False else None)
    summary = note_unsolved(summary, [r.text() for r in getattr(mc, "unsolved", [])])
    return Reidentification("true-loves", res, summary)


def note_unsolved(summary: ReidentifySummary, texts: list[str]) -> ReidentifySummary:
    """Components beyond the search budget (``texts``, one line each): counted in the summary, each a
    :class:`ModelWarning` carrying a ``components-unsolved`` diagnostic."""
    from graphlink.core.model import ModelWarning
    from graphlink.diagnostics import warn

    if not texts:
        return summary
    for t in texts:
        warn(Diagnostic("components-unsolved", t, {"count": len(texts)}), ModelWarning, stacklevel=3)
    return summary.with_(unsolved=len(texts), unsolved_text=texts)


def many_reason(m: str, n: str, why: int, detail: tuple | None) -> str:
    """Plain words for a certain one-to-many pair (codes of :mod:`graphlink.analysis.onetomany`)."""
    from graphlink.analysis.onetomany import FITS_ONLY, ONLY_CANDIDATE

    if why == FITS_ONLY:
        return (f"{m} fits only {n}: no other de-identified trail contains its trail (REIDIT-M, a strongly stable "
                "polygamous marriage)")
    if why == ONLY_CANDIDATE and detail is not None:
        loc, elsewhere = detail
        text = (f"{n} is disclosed at {loc}, so a person disclosed there stands for it, and {m} is the only one "
                "who can")
        if elsewhere:
            shown = ", ".join(f"{p} is certainly {h}" for p, h in elsewhere[:5])
            text += f" (the others who fit it are not free: {shown}{', …' if len(elsewhere) > 5 else ''})"
        return text
    return (f"{m} must be {n}: with {m} anywhere else, no assignment explains every location's households "
            "(exhaustive search of its group)")


# ---------------------------------------------------------------------------------------------- facade
@runtime_checkable
class LinkParts(Protocol):
    """The data primitives one backend gives :func:`reidentify`: a link graph held in parts, and the per-part run.

    The pattern is Splink's ``DatabaseAPI`` (Linacre et al. 2022): each backend offers a few data primitives and
    the algorithm is written once on top of them.  :func:`reidentify` validates the request against the registry,
    asks the parts to run the method's registered function on every part and merge the results
    (:meth:`run`), then evaluates against the truth; no backend defines a ``reidentify`` of its own.
    :class:`LocalParts` is the library's (one part: the whole link graph on this process); the Spark engine's
    splits its class graph into components (:class:`graphlink.engines.spark.engine.SparkParts`).

    Attributes
    ----------
    trails
        The trails the parts come from: anything with ``one_to_many``, ``model`` and ``reason`` (the core's
        :class:`~graphlink.core.trails.Trails` or an engine's), read by :func:`graphlink.registry.check_reading`.
    truth : pandas.DataFrame or None
        The release's own ground truth, used when :func:`reidentify` is given none.
    """

    trails: Any
    truth: pd.DataFrame | None

    def run(self, spec: registry.MethodSpec, keywords: dict[str, Any]) -> Reidentification:
        """``spec``'s method on every part, the parts' results merged by the spec's ``merge`` (concatenated, or
        its custom merge), without truth or model (which :func:`reidentify` adds)."""
        ...

    def audit(self, k: int) -> tuple[AuditResult, Any]:
        """The exact k-unlinkability audit (Malin 2006, Def. 19) of the link graph the parts hold, and its edge
        classes (the write-back stores them with the result; None where the parts keep them to themselves)."""
        ...

    def writer(self, spec: registry.MethodSpec) -> Callable[..., ReidentifySummary] | None:
        """``write(out, *, explain) -> summary``: ``spec``'s method run with its pairs written to ``out`` where they
        are computed, never collected (the Spark plan's ``write``); None where the pairs are collected first (the
        caller then runs :func:`reidentify` and writes the result)."""
        ...


@dataclass
class LocalParts:
    """The library's :class:`LinkParts`: one part, the whole link graph (or the trails, for a method whose input is
    the trails) on this process, so the merge is the identity.

    Attributes
    ----------
    data : Trails or LinkGraph
        The trails, or a link graph built already (an ALS-constrained one, or reused across methods).
    truth : pandas.DataFrame or None
        The release's truth.

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.analysis.reidit import LocalParts
    >>> release = gl.thesis_example()
    >>> parts = LocalParts(gl.build_trails(release), release.truth)
    >>> gl.reidentify(parts, "complete").summary.correct
    1
    """

    data: Trails | LinkGraph
    truth: pd.DataFrame | None = None

    @property
    def trails(self) -> Trails:
        """The trails of ``data``."""
        return self.data if isinstance(self.data, Trails) else self.data.trails

    def run(self, spec: registry.MethodSpec, keywords: dict[str, Any]) -> Reidentification:
        """The method's function on the one part; the link graph is built here when the method needs it and none
        was given (O(|M| + |N| + E_class), :func:`graphlink.core.linkgraph.build_linkgraph`)."""
        if spec.input == "trails":
            subject: Trails | LinkGraph = self.trails
        else:
            subject = self.data if isinstance(self.data, LinkGraph) else build_linkgraph(self.data)
        return spec.resolve()(subject, **keywords)

    def audit(self, k: int) -> tuple[AuditResult, EdgeClasses | ManyClasses]:
        """The exact k-unlinkability audit (Malin 2006, Def. 19) of the one part, with its edge classes
        (:func:`graphlink.analysis.matching.classify_edges`, or the one-to-many classification).  The link graph is
        built here when none was given.  O(E·√V) for the classification, plus O(V)."""
        from graphlink.analysis.audit import audit
        from graphlink.analysis.matching import classify_edges
        from graphlink.analysis.onetomany import classify_one_to_many

        graph = self.data if isinstance(self.data, LinkGraph) else build_linkgraph(self.data)
        classes = classify_one_to_many(graph) if self.trails.one_to_many else classify_edges(graph)
        return audit(classes, k), classes

    def writer(self, spec: registry.MethodSpec) -> Callable[..., ReidentifySummary] | None:
        """None: the pairs are on this process already."""
        return None


def link_parts(data: Any, reserved: ReservedChoice = "auto", multiplicity: MultiplicityChoice = "auto") -> LinkParts:
    """The :class:`LinkParts` of ``data``: itself when it is parts already, the parts registered for an engine's
    trails (:data:`graphlink.registry.PARTS`: Spark's), else :class:`LocalParts` of the core's release (its trails
    built under the decided model), trails or link graph.  O(1) but for building a release's trails."""
    if isinstance(data, LinkParts):
        return data
    held = registry.parts_of(data)
    if held is not None:
        return held
    if isinstance(data, Release):
        return LocalParts(build_trails(data, reserved, multiplicity), data.truth)
    if isinstance(data, (Trails, LinkGraph)):
        return LocalParts(data)
    raise TypeError(f"reidentify takes a release, trails, a link graph or link-graph parts, got {type(data).__name__}")


def reidentify(data: Any, method: str, *, k: int | None = None,
               reserved: ReservedChoice = "auto", multiplicity: MultiplicityChoice = "auto",
               truth: pd.DataFrame | None = None, explain: bool | None = None) -> Reidentification:
    """Re-identify elements from their trails with one method, each pair with its reason.

    The one ``reidentify`` of graphlink: every engine's command and API runs it, on the engine's
    :class:`LinkParts` (:func:`link_parts`); the method's spec (:mod:`graphlink.registry`) says what it runs.

    Parameters
    ----------
    data : Release, Trails, LinkGraph or LinkParts
        The release (its trails are built under the decided data model, :mod:`graphlink.core.model`), or trails or
        a link graph built already (reused, e.g. to run several methods on one graph), or an engine's parts (Spark's
        trails, or ``graphlink.engines.spark.parts(trails, split=...)``).
    method : {"complete", "incomplete", "incomplete-k", "multiple", "true-loves"}
        REIDIT-C (Alg. 2/3), REIDIT-I (Alg. 4–6), REIDIT-I-K (Alg. 15), REIDIT-M (Alg. 16), or the exact true
        loves (Definition 5; on one-to-many data the pairs that hold in every consistent assignment).
    k : int, optional
        Candidate-set size for ``incomplete-k``.
    reserved, multiplicity : str
        The data model of a Release: ``"auto"`` decides it, or state it (``--reserved``, ``--multiplicity``).
    truth : DataFrame, optional
        Ground truth (``identified``, ``deidentified``); defaults to the release's. Fills ``correct``,
        ``wrong``, ``truth_pairs``, ``precision`` and ``recall`` of the summary.
    explain : bool, optional
        Compute tight-set reasons for every forced true love (default: up to ``EXPLAIN_LIMIT`` of them).


    Returns
    -------
    Reidentification
        ``pairs`` (identified, deidentified, reason) and ``summary`` (:class:`ReidentifySummary`, with the data
        model); ``summary.model_ok`` is False when the method's own check finds the model broken (then no pair is
        certain; ``summary.diagnostic`` says why, as a code plus data).

    Raises
    ------
    ModelAssumptionError
        The data model cannot be decided (state it), or the method does not apply (REIDIT-C/I on one-to-many).

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()
    >>> res = gl.reidentify(release, "incomplete")
    >>> print(res.pairs.loc[res.pairs["deidentified"] == "gatc", "reason"].iloc[0])
    Dan is only compatible with gatc (Flip step: |M| = |N|, so every record has a counterpart)
    >>> gl.reidentify(release, "complete").summary.reidentified
    1

    Complexity: see each method; REIDIT-I/-M run on twin classes in O(|M| + |N| + E_class).
    """
    spec = registry.validate(method, "reidentify", k=k, explain=explain)
    parts = link_parts(data, reserved, multiplicity)
    registry.check_reading(spec, parts.trails)          # a refusal before the link graph is built
    result = parts.run(spec, spec.keywords(k=k, explain=explain))
    truth = truth if truth is not None else parts.truth
    facts = evaluate(result, truth).as_dict() if truth is not None else {}
    return result.with_summary(model=parts.trails.model, **facts)


def evaluate(result: Reidentification, truth: pd.DataFrame) -> Evaluation:
    """Correct / wrong / recall of the re-identified pairs against ground truth.

    For ``incomplete-k`` a k-group counts as correct when the true pair is among its candidates.
    Recall is the share of truth pairs whose de-identified element was correctly re-identified.

    Parameters
    ----------
    result : Reidentification
        Pairs from any method.
    truth : pandas.DataFrame
        Columns ``identified``, ``deidentified`` (:func:`graphlink.core.release.read_truth`).

    Returns
    -------
    Evaluation
        ``correct``, ``wrong``, ``truth_pairs``, ``precision`` (None with no pair) and ``recall``
        (``as_dict()`` for JSON).

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()
    >>> gl.evaluate(gl.reidentify(release, "complete"), release.truth)
    Evaluation(correct=1, wrong=0, truth_pairs=4, precision=1.0, recall=0.25)
    """
    t = set(zip(truth["identified"].astype(str), truth["deidentified"].astype(str), strict=True))
    pairs = result.pairs
    spec = registry.find(result.method)      # results of unregistered analyses (ALS-only pairs) are plain pairs
    if spec is not None and spec.candidate_groups:
        groups = pairs.groupby("deidentified")["identified"].apply(set)
        truth_by_de = dict(zip(truth["deidentified"].astype(str), truth["identified"].astype(str), strict=False))
        correct = sum(1 for de, ids in groups.items() if truth_by_de.get(de) in ids)
        wrong = len(groups) - correct
        unique = groups[groups.map(len) == 1]
        found = sum(1 for de, ids in unique.items() if truth_by_de.get(de) in ids)
    else:
        got = set(zip(pairs["identified"], pairs["deidentified"], strict=True))
        correct = len(got & t)
        wrong = len(got - t)
        found = correct
    return Evaluation(correct=int(correct), wrong=int(wrong), truth_pairs=len(t),
                      precision=correct / (correct + wrong) if correct + wrong else None,
                      recall=(found / len(t)) if t else 0.0)
