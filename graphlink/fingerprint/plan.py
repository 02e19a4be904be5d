"""Planning the fingerprints: one k-anonymous full-domain generalization per recipient (FP §3.1, §3.3, §4).

FP's generation algorithm, step by step (FP §3.1; the worked example is FP §3.3, Tables 2-5):

1. fix ``k``, the loss bounds ``l_min``/``l_max`` and the loss metric (:data:`LOSSES`);
2. the generalization strategies are the QIs' hierarchies (:mod:`graphlink.qi.hierarchy`, ARX CSV);
3. the full-domain lattice (:class:`graphlink.qi.lattice.Lattice`, ``N = Π (hᵢ + 1)`` nodes);
4. **middle-height search with monotone tagging** (:func:`middle_search`, after El Emam et al.'s OLA): take a
   node at the middle height of the (sub)lattice and test k-anonymity; (a) if it fails, every node below fails
   too; (b) if it holds, every node above is a *possible solution* — tagged, but, unlike OLA, not pruned,
   because fingerprinting needs *all* solutions;
5. recurse into the remaining sub-lattice (below an anonymous node, above a failing one);
6. when no sub-lattice is left, start again from another undecided node nearest the middle height, until
   every node is decided;
7. for every k-anonymous node compute the loss and the actual k (:func:`solutions`); drop nodes whose loss is
   outside ``[l_min, l_max]``;
8. cluster the remaining nodes by loss, by equality or after FP's discretisation — rounding or intervals
   (:class:`Discretisation`);
9. pick a cluster holding at least as many nodes as there are recipients and give each recipient its own node
   (the *pattern-list*, :class:`Plan`).

Additions, each stated where it is computed: a node whose whole release would also fit another chosen node's
pattern (labels that occur at several levels of a hierarchy) is not used, so every release is attributable
(:func:`distinguishable`); the **fingerprint capacity** reports FP §4's upper bound ``F = Π nᵢ`` (``nᵢ`` the
levels of QI i, the original included, so F is the lattice size) next to what the data, k and the bounds
leave; the **loss spread** of the chosen nodes; per recipient how many of its rows fit no other recipient's
pattern (a single such record names it); and the **collusion exposure**: pairs of recipients whose joint
knowledge (the meet of their nodes, FP §4 "complementary releases") is not k-anonymous.

Cost: the search evaluates a node with one roll-up group-by on the frequency table (O(d·m), d distinct QI
combinations) and tags in O(N·m); step 7 groups every k-anonymous node once (O(N_anon·d·m)); clustering and
assignment are O(N log N); the collusion check O(R²·m) for R recipients.
"""

from __future__ import annotations

import itertools
import json
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphlink.catalog import FINGERPRINT_LOSSES
from graphlink.errors import ReleaseError
from graphlink.qi.hierarchy import Hierarchy
from graphlink.qi.lattice import Lattice, check_k, suppression_limit
from graphlink.qi.metrics import group_loss, static_bounds
from graphlink.qi.table import Groups, QITable

Progress = Callable[[float, str], None] | None
LOSSES = FINGERPRINT_LOSSES
FORMAT = "graphlink-fingerprint-plan"
VERSION = 1
UNKNOWN, ANONYMOUS, FAILS = 0, 1, -1
_EPS = 1e-9


# ----------------------------------------------------------------------------------------------- losses
def node_loss(table: QITable, groups: Groups, k: int, loss: str, entropy_bound: float | None = None) -> float:
    """The loss of a full-domain node from its classes (FP §2.2; suppression conventions of docs/qi.md).

    * ``samarati`` — Samarati's metric, the sum of the levels (FP Table 2 "Sam");
    * ``precision`` — FP's precision metric ``Σᵢ lᵢ/hᵢ`` (FP Table 2 "Prec", a loss: 0 = original). With
      suppressed rows it is ``m·(1 − Prec)`` with Sweeney's Prec (a suppressed row counts as every cell at the
      top), which equals FP's value when nothing is suppressed;
    * ``dm-star`` — El Emam's modified discernibility ``Σ |E|²`` (FP Table 2 "DM*"), classes later suppressed
      included;
    * ``entropy`` — non-uniform entropy in bits (Gionis & Tassa; ARX), suppressed cells at the top.

    O(g·m) for g classes.
    """
    levels = groups.levels
    small = groups.counts < k
    s = int(groups.counts[small].sum())
    if loss == "samarati":
        return float(sum(levels))
    if loss == "precision":
        return _precision(table, levels, s)
    if loss == "dm-star":
        return float((groups.counts.astype(np.float64) ** 2).sum())
    if loss == "entropy":
        bound = entropy_bound if entropy_bound is not None else float(
            static_bounds(table, np.asarray([levels]), "entropy-top")[0])
        return group_loss(table, groups, k, "entropy-top", bound)[1]
    raise ReleaseError(f"unknown loss {loss!r}; expected one of {', '.join(LOSSES)}")


def _precision(table: QITable, levels: Sequence[int], suppressed: int) -> float:
    """FP's precision loss ``Σ lᵢ/hᵢ``, with s suppressed rows ``m·(1 − Prec)``: ``r + s·(m − r)/n``."""
    ratio = float(sum(int(lv) / h for lv, h in zip(levels, table.heights, strict=True)))
    return ratio + suppressed * (table.m - ratio) / table.n


def _check_loss(loss: str) -> None:
    if loss not in LOSSES:
        raise ReleaseError(f"unknown loss {loss!r}; expected one of {', '.join(LOSSES)}")


# ----------------------------------------------------------------------------------------------- step 4-6
@dataclass
class SearchTrace:
    """What the middle-height search decided: per node its status (``1`` k-anonymous, ``-1`` not), the
    evaluation that decided it (``decided_at``: the discovery order used for assignment ties), the evaluated
    nodes in order with their outcome (``trace``), and how many nodes tagging decided without data access."""

    lattice: Lattice
    status: np.ndarray
    decided_at: np.ndarray
    trace: list[tuple[tuple[int, ...], bool]]
    tagged: int
    seconds: float

    @property
    def evaluated(self) -> int:
        return len(self.trace)

    @property
    def anonymous(self) -> np.ndarray:
        return self.status == ANONYMOUS


class _MiddleSearch:
    """State of FP §3.1 steps 4-6 (see :func:`middle_search`)."""

    def __init__(self, table: QITable, k: int, limit: int, progress: Progress) -> None:
        self.table, self.k, self.limit, self.progress = table, k, limit, progress
        self.lat = Lattice(table.heights)
        self.levels = self.lat.levels
        self.height = self.lat.height_sum
        self.status = np.zeros(self.lat.size, dtype=np.int8)
        self.decided_at = np.full(self.lat.size, -1, dtype=np.int64)
        self.trace: list[tuple[tuple[int, ...], bool]] = []
        self.tagged = 0
        self.undecided = self.lat.size
        self.visited: set[tuple[int, int]] = set()

    def decide(self, v: int) -> bool:
        """Test node ``v`` on the data (one group-by) and tag its up-set (anonymous) or down-set (fails)."""
        g = self.table.groups(self.levels[v])
        anonymous = int(g.counts[g.counts < self.k].sum()) <= self.limit
        step = len(self.trace)
        self.trace.append((tuple(int(x) for x in self.levels[v]), anonymous))
        mask = (self.lat.upset(v) if anonymous else self.lat.downset(v)) & (self.status == UNKNOWN)
        self.tagged += int(mask.sum()) - 1
        self.undecided -= int(mask.sum())
        self.status[mask] = ANONYMOUS if anonymous else FAILS
        self.decided_at[mask] = step
        if self.progress:
            done = int((self.status != UNKNOWN).sum())
            self.progress(done / self.lat.size, f"{len(self.trace)} nodes tested, {done:,} of {self.lat.size:,} "
                                                "decided")
        return anonymous

    def between(self, b: int, t: int) -> np.ndarray:
        lv = self.levels
        return (lv >= lv[b]).all(axis=1) & (lv <= lv[t]).all(axis=1)

    def kmin(self, b: int, t: int) -> None:
        """Steps 4-5 on the sub-lattice from ``b`` up to ``t``: its middle-height nodes, each either ruling out
        what lies below it (and the search continues above) or tagging what lies above (continue below)."""
        if self.undecided == 0 or (b, t) in self.visited:
            return
        self.visited.add((b, t))
        sub = self.between(b, t)
        if not (sub & (self.status == UNKNOWN)).any():
            return
        hb, ht = int(self.height[b]), int(self.height[t])
        if ht - hb <= 1:
            for v in (b, t):
                if self.status[v] == UNKNOWN:
                    self.decide(v)
            return
        mid = (hb + ht) // 2
        for v in np.flatnonzero(sub & (self.height == mid))[::-1]:   # decreasing lexicographic levels
            v = int(v)
            if self.undecided == 0:
                return
            if self.status[v] == UNKNOWN:
                self.decide(v)
            if self.status[v] == ANONYMOUS:
                self.kmin(b, v)
            else:
                self.kmin(v, t)

    def run(self) -> None:
        bottom, top = self.lat.bottom, self.lat.top
        self.kmin(bottom, top)
        mid = int(self.height[top]) // 2
        while self.undecided:   # step 6: another start nearest the middle height
            und = np.flatnonzero(self.status == UNKNOWN)
            v = int(und[np.lexsort((-und, np.abs(self.height[und] - mid)))[0]])
            if self.decide(v):
                self.kmin(bottom, v)
            else:
                self.kmin(v, top)


def middle_search(table: QITable, k: int, *, max_suppression: float = 0.0, progress: Progress = None
                  ) -> SearchTrace:
    """FP §3.1 steps 4-6: decide the k-anonymity of every lattice node with FP's middle-height search.

    Starting from the nodes at the middle height of the whole lattice, each tested node tags its up-set
    (k-anonymous: every generalization of it is too) or its down-set (not: nothing it generalizes is), and the
    search recurses into the sub-lattice that is still open — below an anonymous node, above a failing one —
    at that sub-lattice's middle height (El Emam et al.'s OLA, without OLA's pruning of the solutions above).
    When no sub-lattice is left, it restarts from an undecided node nearest the middle height (step 6).
    Nodes of one height are taken in decreasing lexicographic order of their levels (FP's walkthrough
    starts at (a1, b0), then (a1, b1), then (a0, b1)).

    k-anonymity allows a record-suppression limit (ARX semantics, docs/qi.md): a node is k-anonymous if the
    rows of its classes smaller than k are at most ``floor(max_suppression·n)``; monotone, so tagging is exact.
    Cost: one O(d·m) group-by per tested node plus O(N·m) per tag and per sub-lattice visited.
    """
    check_k(table, k)
    t0 = time.perf_counter()
    s = _MiddleSearch(table, k, suppression_limit(table.n, max_suppression), progress)
    s.run()
    return SearchTrace(s.lat, s.status, s.decided_at, s.trace, s.tagged, time.perf_counter() - t0)


# ----------------------------------------------------------------------------------------------- step 7
def solutions(table: QITable, search: SearchTrace, k: int, loss: str, *, l_min: float | None = None,
              l_max: float | None = None) -> pd.DataFrame:
    """FP §3.1 step 7: every k-anonymous node with its loss, actual k (smallest released class), suppressed
    rows, classes and DM*; ``within_bounds`` marks the nodes whose loss lies in ``[l_min, l_max]``.

    One row per k-anonymous node, sorted by loss then discovery order (``order``: the search step that decided
    the node). Each node is grouped once from the frequency table (O(d·m)).
    """
    _check_loss(loss)
    lat = search.lattice
    ids = np.flatnonzero(search.anonymous)
    ent = static_bounds(table, lat.levels[ids], "entropy-top") if loss == "entropy" else None
    counts = table.freq_counts
    rows = []
    for j, v in enumerate(ids):
        levels = lat.levels[v]
        if loss == "entropy":
            g = table.groups(levels)
            sizes, weights = g.counts, g.counts
            value = node_loss(table, g, k, loss, float(ent[j]) if ent is not None else None)
        else:   # per frequency-table row: the size of its class (one gather + bincount, O(d·m))
            sizes, weights = table.class_sizes(levels), counts
        small = sizes < k
        s = int(weights[small].sum())
        kept = sizes[~small]
        if loss == "samarati":
            value = float(levels.sum())
        elif loss == "precision":
            value = _precision(table, levels, s)
        elif loss == "dm-star":
            value = float((weights * sizes.astype(np.float64)).sum())
        rows.append({
            "node": int(v), **dict(zip(table.qi, (int(x) for x in levels), strict=True)),
            "height": int(lat.height_sum[v]), "loss": value,
            "k": int(kept.min()) if len(kept) else 0, "suppressed_rows": s,
            "classes": int(round(float((weights[~small] / np.maximum(sizes[~small], 1)).sum()))),
            "dm_star": int((weights * sizes.astype(np.int64)).sum()),
            "order": int(search.decided_at[v]),
        })
    frame = pd.DataFrame(rows, columns=["node", *table.qi, "height", "loss", "k", "suppressed_rows", "classes",
                                        "dm_star", "order"])
    lo = -math.inf if l_min is None else l_min
    hi = math.inf if l_max is None else l_max
    frame["within_bounds"] = (frame["loss"] >= lo - _EPS) & (frame["loss"] <= hi + _EPS)
    return frame.sort_values(["loss", "order", "node"], kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------- step 8
@dataclass(frozen=True)
class Discretisation:
    """How FP §3.1 step 8 clusters nodes by loss.

    ``exact`` — equal losses (up to 1e-9: floating-point noise); ``round:D`` — losses rounded to D decimals
    (FP's "rounding"); ``width:W`` — intervals ``[l₀ + jW, l₀ + (j+1)W)`` anchored at ``l_min`` (else 0;
    FP's "defining intervals"); ``auto`` — the narrowest loss interval that holds as many usable nodes as
    there are recipients (the interval discretisation with width and offset fitted to the recipients).
    With a partition (exact, round, width) the lowest-loss cluster with enough nodes is used.

    Examples
    --------
    >>> from graphlink.fingerprint import Discretisation
    >>> [str(Discretisation.parse(text)) for text in ("auto", "exact", "round:1", "width:0.25")]
    ['auto', 'exact', 'round:1', 'width:0.25']
    """

    mode: str = "auto"
    value: float | None = None

    @classmethod
    def parse(cls, text: str | Discretisation | None) -> Discretisation:
        if isinstance(text, Discretisation):
            return text
        raw = (text or "auto").strip().lower()
        mode, _, arg = raw.partition(":")
        if mode in ("auto", "exact") and not arg:
            return cls(mode)
        try:
            value = float(arg)
        except ValueError:
            value = math.nan
        if mode == "round" and value.is_integer() and value >= 0:
            return cls("round", value)
        if mode == "width" and value > 0:
            return cls("width", value)
        raise ReleaseError(f"unknown discretisation {text!r}; expected auto, exact, round:DECIMALS or width:W")

    def __str__(self) -> str:
        if self.value is None:
            return self.mode
        return f"{self.mode}:{int(self.value) if self.mode == 'round' else self.value:g}"

    def keys(self, losses: np.ndarray, anchor: float) -> np.ndarray:
        """The cluster key of every loss (a partition mode only)."""
        if self.mode == "exact":
            return np.round(losses, 9)
        if self.mode == "round":
            return np.round(losses, int(self.value or 0))
        if self.mode == "width":
            return np.floor((losses - anchor) / float(self.value) + _EPS)
        raise ValueError("auto has no fixed partition")

    def label(self, key: float, anchor: float) -> tuple[float, float]:
        """The loss interval ``[lo, hi]`` of a cluster key (lo = hi for exact and rounding)."""
        if self.mode == "width":
            return anchor + key * float(self.value or 0), anchor + (key + 1) * float(self.value or 0)
        return float(key), float(key)


def narrowest_window(losses: np.ndarray, n: int) -> int:
    """Start of the narrowest run of ``n`` consecutive sorted losses (ties: the lowest loss). O(len)."""
    spans = losses[n - 1:] - losses[:len(losses) - n + 1]
    return int(np.flatnonzero(spans <= spans.min() + _EPS)[0])


def cluster(candidates: pd.DataFrame, n: int, disc: Discretisation, anchor: float
            ) -> tuple[np.ndarray, list[dict], dict]:
    """Step 8-9: the clusters of ``candidates`` (sorted by loss) and the ``n`` rows chosen for the recipients.

    Returns ``(chosen row positions, clusters, chosen cluster)``; each cluster is ``{lo, hi, nodes}``. Within
    the chosen cluster the narrowest run of n nodes is used. ReleaseError when no cluster holds n nodes.
    """
    losses = candidates["loss"].to_numpy(dtype=np.float64)
    if disc.mode == "auto":
        if len(losses) < n:
            raise _too_few(n, len(losses), "usable nodes")
        i = narrowest_window(losses, n)
        lo, hi = float(losses[i]), float(losses[i + n - 1])
        inside = int(((losses >= lo - _EPS) & (losses <= hi + _EPS)).sum())
        chosen_cluster = {"lo": lo, "hi": hi, "nodes": inside}
        return np.arange(i, i + n), [chosen_cluster], chosen_cluster
    keys = disc.keys(losses, anchor)
    clusters, chosen, chosen_cluster = [], None, None
    for key in np.unique(keys):
        pos = np.flatnonzero(keys == key)
        lo, hi = disc.label(float(key), anchor)
        info = {"lo": lo, "hi": hi, "nodes": int(len(pos))}
        clusters.append(info)
        if chosen is None and len(pos) >= n:
            chosen = pos[narrowest_window(losses[pos], n) + np.arange(n)]
            chosen_cluster = info
    if chosen is None or chosen_cluster is None:
        largest = max((c["nodes"] for c in clusters), default=0)
        raise _too_few(n, largest, f"nodes in the largest cluster ({disc})")
    return chosen, clusters, chosen_cluster


def _too_few(n: int, have: int, what: str) -> ReleaseError:
    return ReleaseError(f"{n} recipients need {n} distinct k-anonymous generalizations but there are only {have} "
                        f"{what}; lower k, allow suppression (a maximum suppression above 0), widen the loss bounds or "
                        "the discretisation, or use more quasi-identifiers / longer hierarchies")


# ----------------------------------------------------------------------------------------------- patterns
def level_masks(h: Hierarchy) -> dict[str, int]:
    """Label → bitmask of the levels of ``h`` where it occurs (bit l = level l). O(values·levels)."""
    out: dict[str, int] = {}
    for level in range(h.height + 1):
        for lab in set(h.matrix[:, level].tolist()):
            out[str(lab)] = out.get(str(lab), 0) | (1 << level)
    return out


def _code_masks(table: QITable) -> list[list[np.ndarray]]:
    """Per QI and level, the level bitmask of each level code's label."""
    out = []
    for h in table.hierarchies:
        masks = level_masks(h)
        out.append([np.array([masks[str(lab)] for lab in h.labels[lv]], dtype=np.int64) for lv in range(h.height + 1)])
    return out


def distinguishable(table: QITable, nodes: np.ndarray, k: int, masks: list[list[np.ndarray]] | None = None
                    ) -> np.ndarray:
    """Greedy: keep nodes (rows of ``nodes``, in the given priority order) whose whole release fits no kept
    node's pattern and whose pattern no kept node's release fits. A release *fits* a pattern when every released
    label occurs at that pattern's level of its hierarchy (FP §3.2 step 2 reads patterns from labels alone), so
    two such nodes could not be told apart from a leak of a whole release.

    Only labels shared between levels (``white → white``) make this possible; without them every node is kept at
    once. Otherwise O(K²·m) pattern checks plus one group-by per node involved. Returns a boolean mask.
    """
    masks = masks if masks is not None else _code_masks(table)
    nodes = np.asarray(nodes, dtype=np.int64)
    m = table.m
    # shared[i][a, b]: some label of level a of QI i also occurs at level b (necessary for a fit)
    shared = []
    for i, h in enumerate(table.hierarchies):
        s = np.zeros((h.height + 1, h.height + 1), dtype=bool)
        for a in range(h.height + 1):
            union = np.bitwise_or.reduce(masks[i][a]) if len(masks[i][a]) else 0
            s[a] = [(union >> b) & 1 == 1 for b in range(h.height + 1)]
        shared.append(s)
    keep = np.ones(len(nodes), dtype=bool)
    if all(s[~np.eye(len(s), dtype=bool)].sum() == 0 for s in shared):
        return keep
    fit_cache: dict[tuple[int, int], bool] = {}

    def release_fits(a: int, b: int) -> bool:
        """Does the whole release of node row ``a`` fit the pattern of node row ``b``?"""
        key = (a, b)
        if key not in fit_cache:
            g = table.groups(nodes[a])
            rows = g.counts >= k if (g.counts < k).any() else np.ones(len(g), dtype=bool)
            ok = True
            for i in range(m):
                la, lb = int(nodes[a, i]), int(nodes[b, i])
                if la != lb and not ((masks[i][la][g.columns[i][rows]] >> lb) & 1).all():
                    ok = False
                    break
            fit_cache[key] = ok
        return fit_cache[key]

    kept: list[int] = []
    for a in range(len(nodes)):
        if kept:
            others = np.asarray(kept)
            diff = nodes[others] != nodes[a]
            maybe_ab = np.ones(len(others), dtype=bool)
            maybe_ba = np.ones(len(others), dtype=bool)
            for i in range(m):
                maybe_ab &= ~diff[:, i] | shared[i][nodes[a, i], nodes[others, i]]
                maybe_ba &= ~diff[:, i] | shared[i][nodes[others, i], nodes[a, i]]
            clash = any(release_fits(a, int(b)) for b in others[maybe_ab]) or \
                any(release_fits(int(b), a) for b in others[maybe_ba])
            if clash:
                keep[a] = False
                continue
        kept.append(a)
    return keep


def distinguishing_rows(table: QITable, nodes: np.ndarray, k: int, masks: list[list[np.ndarray]] | None = None,
                        groups: Sequence[Groups] | None = None) -> list[int]:
    """Per node (row of ``nodes``): how many of its released rows fit no other node's pattern — a single such
    record names its recipient (FP §2.5). O(R·u·m) for u distinct released level-mask patterns (plus one
    group-by per node unless its ``groups`` are given)."""
    masks = masks if masks is not None else _code_masks(table)
    nodes = np.asarray(nodes, dtype=np.int64)
    out = []
    for r in range(len(nodes)):
        g = groups[r] if groups is not None else table.groups(nodes[r])
        rows = g.counts >= k if (g.counts < k).any() else np.ones(len(g), dtype=bool)
        pat = np.stack([masks[i][int(nodes[r, i])][g.columns[i][rows]] for i in range(table.m)], axis=1)
        uniq, inverse = np.unique(pat, axis=0, return_inverse=True)
        others = np.delete(nodes, r, axis=0)
        fits_other = np.zeros(len(uniq), dtype=bool)
        if len(others):
            fit = np.ones((len(uniq), len(others)), dtype=bool)
            for i in range(table.m):
                fit &= ((uniq[:, i][:, None] >> others[:, i][None, :]) & 1).astype(bool)
            fits_other = fit.any(axis=1)
        out.append(int(g.counts[rows][~fits_other[inverse.ravel()]].sum()))
    return out


# ----------------------------------------------------------------------------------------------- the plan
class MalformedPlan(ValueError):
    """A plan file field that is missing or of the wrong type (its text is one line naming the field)."""


#: a plan file holds the hierarchies; larger than this it is not one
MAX_PLAN_BYTES = 256 << 20


def _field(d: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str = "plan") -> Any:
    """``d[key]``, which must be of ``kind`` (a bool is not a number)."""
    if key not in d:
        raise MalformedPlan(f"{where} has no field {key!r}")
    value = d[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join({int: "a whole number", float: "a number", str: "text", list: "a list",
                             Mapping: "an object", dict: "an object"}.get(k, k.__name__) for k in kinds)
        raise MalformedPlan(f"{where} field {key!r} must be {names}, got {str(value)[:40]!r}")
    return value


def _whole(value: int, what: str, lo: int = 0) -> int:
    if value < lo:
        raise MalformedPlan(f"{what} must be at least {lo}, got {value}")
    return int(value)


def _number(d: Mapping[str, Any], key: str, where: str = "plan", default: float | None = None) -> float:
    if default is not None and key not in d:
        return default
    value = float(_field(d, key, (int, float), where))
    if not math.isfinite(value):
        raise MalformedPlan(f"{where} field {key!r} must be a finite number")
    return value


def _reject_constant(name: str) -> None:
    raise MalformedPlan(f"the file holds {name}, which is not a JSON number")


@dataclass
class Recipient:
    """One entry of the pattern-list: a recipient, its node (a level per QI) and the release's measures.

    Examples
    --------
    >>> from graphlink.fingerprint import Recipient
    >>> r = Recipient("R1", (1, 1), 2.0, 2, 0, 4, 0.25, 8, 4)
    >>> r.name, r.levels, r.k
    ('R1', (1, 1), 2)
    """

    name: str
    levels: tuple[int, ...]
    loss: float
    k: int
    suppressed_rows: int
    released_rows: int
    prec: float
    dm_star: int
    distinguishing_rows: int

    def to_dict(self, qi: Sequence[str]) -> dict:
        return {"name": self.name, "levels": dict(zip(qi, self.levels, strict=True)), "loss": self.loss,
                "k": self.k, "suppressed_rows": self.suppressed_rows, "released_rows": self.released_rows,
                "prec": self.prec, "dm_star": self.dm_star, "distinguishing_rows": self.distinguishing_rows}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], qi: Sequence[str]) -> Recipient:
        """From a plan file's recipient entry; :class:`MalformedPlan` names the field that is wrong."""
        if not isinstance(d, Mapping):
            raise MalformedPlan("a recipient entry is not an object")
        name = _field(d, "name", str, "recipient")
        levels = _field(d, "levels", Mapping, f"recipient {name!r}")
        where = f"recipient {name!r}"
        return cls(name, tuple(_whole(_field(levels, q, int, f"{where} levels"), f"{where} level of {q}")
                               for q in qi),
                   _number(d, "loss", where), _whole(_field(d, "k", int, where), f"{where} k"),
                   *(_whole(_field(d, f, int, where), f"{where} {f}") for f in ("suppressed_rows", "released_rows")),
                   _number(d, "prec", where),
                   *(_whole(_field(d, f, int, where), f"{where} {f}") for f in ("dm_star", "distinguishing_rows")))


@dataclass
class Plan:
    """The pattern-list (FP §3.1 step 9) and everything needed to release and to attribute without the data
    holder's other files: the QIs and their hierarchies, k, the suppression limit, the loss and its bounds, the
    table's fingerprint, and the planning report (capacity, loss spread, clusters, search, collusion).
    ``solutions`` (every k-anonymous node, step 7) is kept in memory only.

    Examples
    --------
    Made by :func:`make_plan` or :func:`plan_from_nodes`; saved and loaded as JSON, so attribution needs only the
    plan file:

    >>> from graphlink.fingerprint import EXAMPLES, make_plan
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> frame = read_table(EXAMPLES / "table1.csv")                     # FP Table 1
    >>> table = encode(frame, ["sex", "birthdate"], read_dir(EXAMPLES / "hierarchies"))
    >>> plan = make_plan(table, 2, 2, loss="samarati", l_min=1, l_max=2, discretisation="exact")
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphlink.fingerprint import Plan
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     plan.save(Path(folder) / "plan.json")
    ...     print(Plan.load(Path(folder) / "plan.json").names)
    ['R1', 'R2']
    """

    qi: tuple[str, ...]
    hierarchies: dict[str, Hierarchy]
    k: int
    max_suppression: float
    loss: str
    recipients: list[Recipient]
    table: dict
    seed: int
    l_min: float | None = None
    l_max: float | None = None
    discretisation: str = "auto"
    capacity: dict = field(default_factory=dict)
    loss_spread: dict = field(default_factory=dict)
    clusters: list[dict] = field(default_factory=list)
    cluster: dict = field(default_factory=dict)
    search: dict = field(default_factory=dict)
    collusion: dict = field(default_factory=dict)
    solutions: pd.DataFrame | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ lookups
    @property
    def names(self) -> list[str]:
        return [r.name for r in self.recipients]

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(self.hierarchies[q].height for q in self.qi)

    def node_matrix(self) -> np.ndarray:
        """(R, m) int64: each recipient's levels."""
        return np.array([r.levels for r in self.recipients], dtype=np.int64).reshape(len(self.recipients), len(self.qi))

    def recipient(self, name: str) -> Recipient:
        for r in self.recipients:
            if r.name == name:
                return r
        raise ReleaseError(f"no recipient {name!r} in the plan; it has {', '.join(self.names[:20])}"
                           f"{' …' if len(self.names) > 20 else ''}")

    def index(self, name: str) -> int:
        return self.names.index(self.recipient(name).name)

    def pattern(self, levels: Sequence[int]) -> str:
        return ", ".join(f"{q}={lv}" for q, lv in zip(self.qi, levels, strict=True))

    # ------------------------------------------------------------------ file
    def to_dict(self) -> dict:
        return {
            "format": FORMAT, "version": VERSION, "table": self.table, "qi": list(self.qi), "k": self.k,
            "max_suppression": self.max_suppression, "loss": self.loss, "l_min": self.l_min, "l_max": self.l_max,
            "discretisation": self.discretisation, "seed": self.seed,
            "recipients": [r.to_dict(self.qi) for r in self.recipients],
            "capacity": self.capacity, "loss_spread": self.loss_spread, "cluster": self.cluster,
            "clusters": self.clusters, "search": self.search, "collusion": self.collusion,
            "hierarchies": {q: self.hierarchies[q].matrix.tolist() for q in self.qi},
        }

    def summary(self) -> dict:
        """The plan without the hierarchies (what the CLI prints as JSON)."""
        d = self.to_dict()
        d.pop("hierarchies")
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str | None = None) -> Plan:
        """A plan from its file's object; every field is checked (type, range, finiteness), and anything wrong
        is a one-line ReleaseError naming the field.  O(size of the hierarchies)."""
        if d.get("format") != FORMAT:
            raise ReleaseError(f"not a fingerprint plan (format {str(d.get('format'))[:40]!r}, expected "
                               f"{FORMAT!r})", file=source)
        try:
            version = _whole(_field(d, "version", int), "plan version") if "version" in d else 0
            if version > VERSION:
                raise ReleaseError(f"plan version {version} is newer than this graphlink reads ({VERSION})",
                                   file=source)
            qi = tuple(_field(d, "qi", list))
            if not qi or not all(isinstance(q, str) for q in qi):
                raise MalformedPlan("plan field 'qi' must be a non-empty list of column names")
            matrices = _field(d, "hierarchies", Mapping)
            hs = {}
            for q in qi:
                m = _field(matrices, q, list, "plan hierarchies")
                if not all(isinstance(row, list) and all(isinstance(c, str) for c in row) for row in m):
                    raise MalformedPlan(f"plan hierarchy {q!r} must be a list of rows of labels (text)")
                hs[q] = Hierarchy(q, m, source=f"{source or 'plan'}: hierarchy {q}")
            recipients = [Recipient.from_dict(r, qi) for r in _field(d, "recipients", list)]
            k = _whole(_field(d, "k", int), "plan k", lo=1)
            max_suppression = _number(d, "max_suppression", default=0.0)
            if not 0.0 <= max_suppression <= 1.0:
                raise MalformedPlan(f"plan max_suppression must be a fraction 0..1, got {max_suppression}")
            bounds = {b: None if d.get(b) is None else _number(d, b) for b in ("l_min", "l_max")}
            loss, table = _field(d, "loss", str), dict(_field(d, "table", Mapping))
            seed = _whole(_field(d, "seed", int), "plan seed")
            discretisation = _field(d, "discretisation", str) if "discretisation" in d else "auto"
            extra = {f: dict(_field(d, f, Mapping)) if f in d else {}
                     for f in ("capacity", "loss_spread", "cluster", "search", "collusion")}
            clusters = list(_field(d, "clusters", list)) if "clusters" in d else []
        except MalformedPlan as exc:
            raise ReleaseError(f"malformed fingerprint plan: {exc}", file=source) from None
        for r in recipients:
            bad = [q for q, lv in zip(qi, r.levels, strict=True) if not 0 <= lv <= hs[q].height]
            if bad:
                raise ReleaseError(f"recipient {r.name!r} has a level outside the hierarchy of {bad[0]}", file=source)
        return cls(qi=qi, hierarchies=hs, k=k, max_suppression=max_suppression, loss=loss, recipients=recipients,
                   table=table, seed=seed, l_min=bounds["l_min"], l_max=bounds["l_max"],
                   discretisation=discretisation, clusters=clusters, **extra)

    def save(self, path: str | Path) -> None:
        """Write the plan file (JSON, atomically)."""
        from graphlink.fingerprint.release import write_text

        write_text(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Plan:
        """Read a plan file, bounded: at most ``MAX_PLAN_BYTES``; NaN and Infinity are refused, and so is
        nesting deeper than Python's recursion limit; then :meth:`from_dict`.  One-line ReleaseError."""
        from graphlink.fileio import check_input

        p = check_input(path)       # a FIFO or a device is refused before it is opened
        try:
            with open(p, "rb") as fh:
                raw = fh.read(MAX_PLAN_BYTES + 1)
            if len(raw) > MAX_PLAN_BYTES:
                raise ReleaseError(f"larger than {MAX_PLAN_BYTES:,} bytes: not a fingerprint plan", file=str(p))
            data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except FileNotFoundError:
            raise ReleaseError("no such plan file", file=str(p)) from None
        except MalformedPlan as exc:
            raise ReleaseError(f"cannot read the plan: {exc}", file=str(p)) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ReleaseError(f"cannot read the plan ({exc.__class__.__name__}: {why})", file=str(p)) from None
        except RecursionError:
            raise ReleaseError("cannot read the plan: nested too deeply for a fingerprint plan", file=str(p)) from None
        if not isinstance(data, dict):
            raise ReleaseError("not a fingerprint plan (expected a JSON object)", file=str(p))
        return cls.from_dict(data, str(p))


# ----------------------------------------------------------------------------------------------- building
def recipient_names(recipients: int | Sequence[str]) -> list[str]:
    """``N`` → ``R1 … RN`` (FP's R₁, R₂); a list of names is checked for blanks and repeats."""
    if isinstance(recipients, int | np.integer):
        if recipients < 1:
            raise ReleaseError(f"the number of recipients must be at least 1, got {recipients}")
        return [f"R{i}" for i in range(1, int(recipients) + 1)]
    names = [str(x).strip() for x in recipients]
    if not names or any(not x for x in names):
        raise ReleaseError("recipient names must be non-empty")
    seen: set[str] = set()
    for x in names:
        if x in seen:
            raise ReleaseError(f"recipient {x!r} is listed twice")
        seen.add(x)
    return names


def _recipients(table: QITable, names: Sequence[str], nodes: np.ndarray, k: int, loss: str,
                masks: list[list[np.ndarray]]) -> list[Recipient]:
    groups = [table.groups(lv) for lv in nodes]
    dist = distinguishing_rows(table, nodes, k, masks, groups)
    out = []
    for name, lv, g, d in zip(names, nodes, groups, dist, strict=True):
        small = g.counts < k
        s = int(g.counts[small].sum())
        kept = g.counts[~small]
        prec = 1.0 - _precision(table, lv, s) / table.m     # Sweeney's Prec (docs/qi.md)
        out.append(Recipient(name, tuple(int(x) for x in lv), node_loss(table, g, k, loss),
                             int(kept.min()) if len(kept) else 0, s, table.n - s, prec,
                             int((g.counts.astype(np.int64) ** 2).sum()), d))
    return out


def _collusion(plan_nodes: np.ndarray, names: Sequence[str], lat: Lattice, status: np.ndarray,
               limit: int = 10) -> dict:
    """Pairs of recipients whose combined knowledge — the meet (componentwise minimum) of their nodes, what two
    colluders linking their releases could rebuild (SW-K §4's complementary releases; FP §4) — is not
    k-anonymous. O(R²·m)."""
    r = len(plan_nodes)
    if r < 2:
        return {"pairs": 0, "pairs_below_k": 0, "examples": []}
    a, b = np.triu_indices(r, 1)
    meet = np.minimum(plan_nodes[a], plan_nodes[b])
    ids = np.ravel_multi_index(tuple(meet.T), lat.shape)
    bad = np.flatnonzero(status[ids] != ANONYMOUS)
    return {"pairs": int(len(a)), "pairs_below_k": int(len(bad)),
            "examples": [{"recipients": [names[int(a[j])], names[int(b[j])]],
                          "meet": [int(x) for x in meet[j]]} for j in bad[:limit]]}


def make_plan(table: QITable, k: int, recipients: int | Sequence[str], *, loss: str = "precision",
              l_min: float | None = None, l_max: float | None = None, discretisation: str | Discretisation = "auto",
              max_suppression: float = 0.0, seed: int | None = None, source: str | None = None,
              frame_fingerprint: str | None = None, progress: Progress = None) -> Plan:
    """Plan one k-anonymous generalization per recipient (FP §3.1, all nine steps; module docstring).

    ``frame_fingerprint`` is the :func:`~graphlink.fingerprint.release.table_fingerprint` of the table as read
    (default: computed from ``table.frame``); releases check it. ``progress`` receives ``(fraction, message)``
    during the search.

    ``recipients`` is a count (names ``R1 … RN``) or a list of names. ``loss`` is one of :data:`LOSSES` and
    ``[l_min, l_max]`` bounds it (step 7); ``discretisation`` clusters the losses (step 8,
    :class:`Discretisation`). The recipients get the nodes of the chosen cluster in order of loss, then of
    discovery by the search (FP gives R₁ (a1, b1) and R₂ (a0, b2)). ``seed`` (random by default, kept in
    the plan) seeds each release's row shuffle. Raises ReleaseError when the data cannot give every recipient
    its own node. Cost: see the module docstring (CPS 1988, 1,008 nodes, 100 recipients: about a second).

    Examples
    --------
    FP's first example: Table 1 to two recipients at k = 2, each with its own node of equal loss (FP's
    Samarati loss 2):

    >>> from graphlink.fingerprint import EXAMPLES, make_plan
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> frame = read_table(EXAMPLES / "table1.csv")                     # FP Table 1
    >>> table = encode(frame, ["sex", "birthdate"], read_dir(EXAMPLES / "hierarchies"))
    >>> plan = make_plan(table, 2, 2, loss="samarati", l_min=1, l_max=2, discretisation="exact")
    >>> [(r.name, r.levels, r.loss) for r in plan.recipients]
    [('R1', (1, 1), 2.0), ('R2', (0, 2), 2.0)]
    """
    from graphlink.fingerprint.release import table_fingerprint

    _check_loss(loss)
    if seed is not None and seed < 0:
        raise ReleaseError(f"the seed must be a non-negative integer, got {seed}")
    names = recipient_names(recipients)
    disc = Discretisation.parse(discretisation)
    if l_min is not None and l_max is not None and l_min > l_max:
        raise ReleaseError(f"the loss bounds are empty: l_min = {l_min} > l_max = {l_max}")
    t0 = time.perf_counter()
    search = middle_search(table, k, max_suppression=max_suppression, progress=progress)
    sol = solutions(table, search, k, loss, l_min=l_min, l_max=l_max)
    masks = _code_masks(table)
    inside = sol[sol["within_bounds"]].reset_index(drop=True)
    usable = distinguishable(table, inside[list(table.qi)].to_numpy(dtype=np.int64), k, masks)
    cands = inside[usable].reset_index(drop=True)
    sol["usable"] = sol["node"].isin(cands["node"])
    anchor = l_min if l_min is not None else 0.0
    if len(cands) < len(names):
        raise _too_few(len(names), len(cands), "k-anonymous nodes within the loss bounds")
    chosen, clusters, chosen_cluster = cluster(cands, len(names), disc, anchor)
    picked = cands.iloc[chosen].sort_values(["loss", "order", "node"], kind="stable")
    nodes = picked[list(table.qi)].to_numpy(dtype=np.int64)
    recips = _recipients(table, names, nodes, k, loss, masks)
    losses = np.array([r.loss for r in recips])
    all_losses = sol["loss"].to_numpy()
    span = float(all_losses.max() - all_losses.min()) if len(all_losses) else 0.0
    spread = float(losses.max() - losses.min())
    lat = search.lattice
    capacity = {"upper_bound": int(lat.size),
                "levels": {q: h + 1 for q, h in zip(table.qi, table.heights, strict=True)},
                "k_anonymous": int(search.anonymous.sum()), "within_bounds": int(len(inside)),
                "usable": int(len(cands)), "indistinguishable": int((~usable).sum()),
                "largest_cluster": int(max(c["nodes"] for c in clusters))}
    plan = Plan(
        qi=table.qi, hierarchies=dict(zip(table.qi, table.hierarchies, strict=True)), k=k,
        max_suppression=max_suppression, loss=loss, recipients=recips,
        table={"fingerprint": frame_fingerprint or table_fingerprint(table.frame), "rows": table.n,
               "columns": [str(c) for c in table.frame.columns], "source": source or table.source},
        seed=int(secrets.randbits(63) if seed is None else seed), l_min=l_min, l_max=l_max,
        discretisation=str(disc), capacity=capacity,
        loss_spread={"min": float(losses.min()), "max": float(losses.max()), "spread": spread,
                     "of_range": spread / span if span > 0 else 0.0, "range": [float(all_losses.min()),
                                                                               float(all_losses.max())]},
        clusters=clusters, cluster=chosen_cluster,
        search={"nodes": int(lat.size), "tested": search.evaluated, "tagged": search.tagged,
                "trace": [[list(lv), ok] for lv, ok in search.trace[:50]],
                "search_seconds": round(search.seconds, 4), "seconds": round(time.perf_counter() - t0, 4)},
        collusion=_collusion(nodes, names, lat, search.status), solutions=sol)
    return plan


def plan_from_nodes(table: QITable, k: int, assignments: Mapping[str, Sequence[int] | Mapping[str, int]], *,
                    loss: str = "precision", max_suppression: float = 0.0, seed: int = 0,
                    source: str | None = None) -> Plan:
    """A plan with nodes chosen by hand (e.g. FP Table 6's three sets): each must be k-anonymous within the
    suppression limit (ReleaseError naming the recipient otherwise). Levels as a sequence in QI order or a
    ``{qi: level}`` mapping (missing QIs at level 0). O(R·d·m).

    Examples
    --------
    FP Table 6: three recipients with chosen nodes; a leaked record generalized as (p, 03.1970, 1015) fits the
    copies of sets 1 and 2 only:

    >>> import pandas as pd
    >>> from graphlink.fingerprint import EXAMPLES, attribute, plan_from_nodes
    >>> from graphlink.qi.hierarchy import read_dir
    >>> from graphlink.qi.table import encode, read_table
    >>> hierarchies = read_dir(EXAMPLES / "hierarchies")
    >>> t6 = encode(read_table(EXAMPLES / "table6.csv"), ["sex", "birthdate", "zip"], hierarchies)
    >>> sets = plan_from_nodes(t6, 1, {"set 1": (1, 2, 0), "set 2": (1, 1, 1), "set 3": (0, 2, 1)})
    >>> attribute(sets, pd.DataFrame([{"sex": "p", "birthdate": "03.1970", "zip": "1015"}])).recipients
    ['set 1', 'set 2']
    """
    from graphlink.fingerprint.release import table_fingerprint

    _check_loss(loss)
    check_k(table, k)
    limit = suppression_limit(table.n, max_suppression)
    names = recipient_names(list(assignments))
    rows = []
    for name, lv in assignments.items():
        levels = [int(lv.get(q, 0)) for q in table.qi] if isinstance(lv, Mapping) else [int(x) for x in lv]
        if len(levels) != table.m or any(not 0 <= x <= h for x, h in zip(levels, table.heights, strict=True)):
            raise ReleaseError(f"recipient {name!r}: levels {levels} do not fit the hierarchies (heights "
                               f"{list(table.heights)})")
        g = table.groups(levels)
        if int(g.counts[g.counts < k].sum()) > limit:
            raise ReleaseError(f"recipient {name!r}: node {levels} is not {k}-anonymous within the suppression limit")
        rows.append(levels)
    nodes = np.array(rows, dtype=np.int64)
    if len({tuple(r) for r in rows}) != len(rows):
        raise ReleaseError("two recipients would get the same generalization; every recipient needs its own node")
    recips = _recipients(table, names, nodes, k, loss, _code_masks(table))
    losses = np.array([r.loss for r in recips])
    lat = Lattice(table.heights)
    status = np.zeros(lat.size, dtype=np.int8)     # the pairs' meets, decided on the data (no search here)
    for a, b in itertools.combinations(range(len(nodes)), 2):
        meet = np.minimum(nodes[a], nodes[b])
        g = table.groups(meet)
        ok = int(g.counts[g.counts < k].sum()) <= limit
        status[lat.node(meet)] = ANONYMOUS if ok else FAILS
    return Plan(qi=table.qi, hierarchies=dict(zip(table.qi, table.hierarchies, strict=True)), k=k,
                max_suppression=max_suppression, loss=loss, recipients=recips,
                table={"fingerprint": table_fingerprint(table.frame), "rows": table.n,
                       "columns": [str(c) for c in table.frame.columns], "source": source or table.source},
                seed=seed, discretisation="manual",
                capacity={"upper_bound": int(lat.size),
                          "levels": {q: h + 1 for q, h in zip(table.qi, table.heights, strict=True)}},
                loss_spread={"min": float(losses.min()), "max": float(losses.max()),
                             "spread": float(losses.max() - losses.min())},
                collusion=_collusion(nodes, names, lat, status))
