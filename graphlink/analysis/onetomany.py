"""Exact inference on one-to-many releases (Malin 2006, Appendix A: Definitions 26–27, Theorem 9, Corollary 7).

Model.  Every released identified person m belongs to one de-identified element β(m) (a household's IP address,
Definition 27); several people may share one.  A *consistent assignment* is a β that explains the release:

* **fit** — at every location c where m is disclosed, β(m) is disclosed too (m ⪯ β(m): the identified side
  carries ``*`` where a person is absent, so this is the link relation of :mod:`graphlink.core.linkgraph`);
* **cover** (only when nothing is withheld, ``reserved == "none"``, Corollary 7) — at every location c, every
  household n disclosed at c has a member disclosed at c: n is disclosed *because* a member visited, and that
  member's identified record is in the release.  Fit and cover together say that the households disclosed at c are
  exactly β(people disclosed at c).

Certain pairs are those in every consistent assignment; possible pairs those in some.  When no consistent
assignment exists the data refute the model, and nothing is certain.

* **Identified reserved** (people may withhold; the default reading): cover does not hold (the member who made a
  household appear may have withheld the record, or never been released), so every fitting β is consistent: a pair
  is possible iff it fits and certain iff m fits only n — exactly REIDIT-M (Algorithm 16, Theorem 9).  O(E_class).
* **Unreserved** (nothing withheld): fit and cover are a constraint-satisfaction problem with one Boolean x(m, n)
  per fitting pair: at most one household per person, and for every disclosed (household n, location c) the clause
  "some person disclosed at c who fits n is in n".  (A person needed by no clause can join any household they fit,
  so "at most one" is enough: every solution extends to an assignment, and m, fitting ≥ 2 households, is certain
  to n iff x(m, n) holds in *every* solution.)  Every clause stays inside one connected component of the fit graph,
  so each component is solved on its own.  The steps, cheapest first:

  1. necessary checks, each refusal naming the location and elements: a person who fits no household; at a
     location, more households than people who could stand for them (per component); a household disclosed at a
     location where nobody disclosed fits it;
  2. unit propagation (a numba kernel): a person who fits one household, and a household with one candidate left
     at a location, fix pairs; a fixed person's other pairs drop out; an emptied clause refutes the model;
  3. the residue, split again into connected components, goes to a SAT solver (CaDiCaL 1.9.5 through
     ``python-sat``), one solver per component, encoded on twin classes (below): one solution, then for each of
     its pairs one call with that pair assumed false (UNSAT: certain; SAT: every pair the new solution drops is
     not certain) — the backbone.
     Possible pairs (for ``audit``) are collected from the solutions, then asked for one by one.  An unsatisfiable
     component is refuted with the clauses of an unsatisfiable core (which households at which locations).

  A component whose residue has more candidate pairs than ``budget.pairs``, or whose search needs more than
  ``budget.conflicts`` solver conflicts, is left unsolved: it is reported (how many people, households and pairs,
  the first elements) and none of its residual pairs is named.  The pairs fixed by steps 1–2 and the other
  components' pairs hold in every consistent assignment whatever the unsolved component holds, so they are true
  whenever the model is; but the release's consistency is then not checked (``consistent is None``).

Twin symmetry: two people with the same trail (and attribute block), or two households with the same trail, can be
swapped in any consistent assignment, so verdicts are per class edge and a household with a twin is never certain.
The search uses it (:class:`_TwinSearch`): one variable u(P, n) per person class and household ("some member of P is
in n") with Σ_n u(P, n) ≤ |P|, so interchangeable people are counted rather than enumerated, and the rows of twin
households are kept in lexicographic order (lex-leader), which keeps one solution per orbit; every question asked
is invariant under those swaps, so the answers are the element-level ones (proof in ``docs/onetomany.md``).

Complexity: steps 1–2 are O(Σ_e |trail of e's person|) time and memory (about 60 B per pair and location);
step 3 is exponential in the worst case (hence the budget) and in practice a few solver calls per residual
person.  Checked against a brute-force enumeration of every assignment (``tests/analysis/test_onetomany.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numba
import numpy as np

from graphlink.config import get_config
from graphlink.core.linkgraph import LinkGraph
from graphlink.errors import ModelAssumptionError


@dataclass(frozen=True)
class SearchBudget:
    """Limits of the exact one-to-many search (module docstring), per connected component.

    ``expand``: element-level candidate pairs of one component expanded for the checks and propagation (memory
    about 60 B per pair and location of its person); ``pairs``: candidate pairs left after propagation in one
    component handed to the SAT solver; ``conflicts``: solver conflicts for one component, all calls together
    (deterministic, unlike a time limit).  The defaults are the settings ``many_expand``, ``many_pairs`` and
    ``many_conflicts`` in force when the budget is made (:func:`graphlink.config.get_config`;
    ``GRAPHLINK_MANY_EXPAND``, ``GRAPHLINK_MANY_PAIRS``, ``GRAPHLINK_MANY_CONFLICTS``)."""

    expand: int = field(default_factory=lambda: get_config().many_expand)
    pairs: int = field(default_factory=lambda: get_config().many_pairs)
    conflicts: int = field(default_factory=lambda: get_config().many_conflicts)


#: why a pair is certain (``ManyClasses.why``)
FITS_ONLY, ONLY_CANDIDATE, SEARCH = 1, 2, 3
#: refusal codes, in the order a diagnostic names them
REFUSAL_CODES = ("orphan", "crowded", "no-candidate", "propagation", "search", "budget")


@dataclass(frozen=True)
class Refusal:
    """Why the one-to-many model is refuted (or, for ``budget``, why a component was not solved), as data.

    ``code``: ``orphan`` (a person fits no household), ``crowded`` (more households than people who could stand
    for them at ``location``), ``no-candidate`` (a household disclosed at ``location`` that nobody disclosed there
    fits), ``propagation`` (every candidate of a household at ``location`` is certainly elsewhere), ``search`` (no
    assignment of a component exists: ``where`` lists (location, household) pairs of an unsatisfiable core),
    ``budget`` (a component beyond :class:`SearchBudget`).  ``households`` and ``people`` are element keys (the
    first few), ``counts`` sizes (households, people, candidate pairs where they apply), ``forced`` the certain
    partners of ``people`` where the words need them.  ``key`` orders refusals deterministically (code, location
    index, first element row)."""

    code: str
    location: str | None = None
    households: tuple[str, ...] = ()
    people: tuple[str, ...] = ()
    counts: tuple[int, ...] = ()
    forced: tuple[str, ...] = ()
    where: tuple[tuple[str, str], ...] = ()
    key: tuple[int, int, int] = (0, 0, 0)

    @property
    def refutes(self) -> bool:
        """Whether the refusal shows that no consistent assignment exists (every code but ``budget``)."""
        return self.code != "budget"

    def text(self) -> str:
        """One line in plain words."""
        def names(xs: tuple[str, ...], total: int | None = None) -> str:
            shown = ", ".join(xs[:5])
            more = (total if total is not None else len(xs)) - min(len(xs), 5)
            return shown + (f" and {more:,} more" if more > 0 else "")

        if self.code == "orphan":
            return f"{self.people[0]} fits no de-identified trail, so no household explains them"
        if self.code == "crowded":
            h, p = self.counts[:2]
            them = "it" if h == 1 else "them"
            who = (f"only {p:,} {'person' if p == 1 else 'people'} who could stand for {them} "
                   f"({names(self.people, p)})" if p else f"no person who could stand for {them}")
            return (f"{self.location} discloses {h:,} household{'' if h == 1 else 's'} ({names(self.households, h)}) "
                    f"but {who}: each person stands for one household")
        if self.code == "no-candidate":
            return (f"{self.households[0]} is disclosed at {self.location}, but no person disclosed there fits it, "
                    "so nobody disclosed there can have made it appear")
        if self.code == "propagation":
            elsewhere = ", ".join(f"{p} is {n}" for p, n in zip(self.people[:5], self.forced[:5], strict=False))
            return (f"{self.households[0]} is disclosed at {self.location}, but every person disclosed there who fits "
                    f"it is certainly in another household ({elsewhere}"
                    f"{', …' if len(self.people) > 5 else ''})")
        if self.code == "search":
            shown = "; ".join(f"{n} at {c}" for c, n in self.where[:6]) + ("; …" if len(self.where) > 6 else "")
            return (f"no assignment of the {self.counts[1]:,} people to the {self.counts[0]:,} households of one "
                    f"group explains every location: these households cannot all have a member disclosed where they "
                    f"are ({shown}); exhaustive search")
        h, p, e = self.counts[:3]
        group = (f"a group of {p:,} people and {h:,} households with {e:,} candidate pairs (people "
                 f"{', '.join(self.people[:3])}, …; households {', '.join(self.households[:3])}, …) is beyond the "
                 "search budget: ")
        if self.checked:
            return group + ("a consistent assignment of it was found, but not every pair in it was settled: the "
                            "pairs named in it are proven certain, others may be certain too")
        return group + ("none of its pairs is named beyond those propagation proves, and whether it admits a "
                        "consistent assignment is not checked")

    @property
    def checked(self) -> bool:
        """For ``budget``: whether the component was found consistent before the budget ran out."""
        return self.code == "budget" and len(self.counts) > 3 and bool(self.counts[3])


@dataclass(frozen=True)
class ManyClasses:
    """Possible / certain pairs of a one-to-many link graph (module docstring), per class edge and per element.

    ``consistent``: True (a consistent assignment exists), False (refuted: ``refusals`` says why), None (not
    checked: some component is ``unsolved``).  ``pair_m``/``pair_n``/``why``/``why_clause``: the certain element
    pairs and why (:data:`FITS_ONLY`, :data:`ONLY_CANDIDATE` with the (location, household) clause index
    ``why_clause``, :data:`SEARCH`); empty when refuted.  ``class_possible`` (and the union degrees) are None
    when possible pairs were not asked for."""

    graph: LinkGraph
    engine: Literal["fit", "exact"]
    consistent: bool | None
    class_possible: np.ndarray | None
    class_certain: np.ndarray
    class_flow: np.ndarray           # ``assignment`` as member pairs per class edge (zeros if none)
    union_degree_identified: np.ndarray | None
    union_degree_deidentified: np.ndarray | None
    refusals: list[Refusal] = field(default_factory=list)
    unsolved: list[Refusal] = field(default_factory=list)
    pair_m: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pair_n: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    why: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    why_detail: list = field(default_factory=list)     # per pair: None, or (location, [(other person, partner)])
    assignment: np.ndarray | None = None                # one consistent assignment per identified row (-1: unknown)

    # the EdgeClasses vocabulary, so views written for one-to-one graphs (the app's graph view) work unchanged
    @property
    def class_allowed(self) -> np.ndarray:
        return self.class_possible if self.class_possible is not None else np.zeros(len(self.class_certain), bool)

    @property
    def class_vital(self) -> np.ndarray:
        return self.class_certain

    def to_networkx(self, *, component: int | None = None) -> Any:
        """The link graph as a ``networkx.Graph`` whose edges carry their ``class``: ``"true love"`` (a certain
        pair), ``"allowed"`` (possible) or ``"link only"`` (:meth:`graphlink.core.linkgraph.LinkGraph.to_networkx`;
        extra ``networkx``).  O(|M| + |N| + E)."""
        return self.graph.to_networkx(classes=self, component=component)

    @property
    def hall_ok(self) -> bool:
        return self.consistent is not False

    @property
    def nu(self) -> int:
        """Households a consistent assignment explains: |N| when one is known to exist (with the identified side
        reserved a household may stand for unreleased people only), else 0."""
        return self.graph.n_deidentified if self.consistent is True else 0

    @property
    def unmatched(self) -> list[str]:
        return [r.text() for r in self.refusals]

    @property
    def orphans(self) -> list[str]:
        return [p for r in self.refusals if r.code == "orphan" for p in r.people]

    @property
    def true_love_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(identified rows, de-identified rows) of the certain pairs."""
        return self.pair_m, self.pair_n

    @property
    def n_true_loves(self) -> int:
        return len(self.pair_m)

    @property
    def mate_identified(self) -> np.ndarray:
        """A consistent assignment (identified row -> de-identified row), -1 where none is known."""
        return self.assignment if self.assignment is not None else np.full(self.graph.n_identified, -1, np.int64)

    @cached_property
    def mate_deidentified(self) -> np.ndarray:
        """One member per household in that assignment (the first by row), -1 where none."""
        out = np.full(self.graph.n_deidentified, -1, np.int64)
        rows = np.flatnonzero(self.mate_identified >= 0)[::-1]
        out[self.mate_identified[rows]] = rows
        return out

    @property
    def diagnostic(self) -> str:
        """One line on why no consistent assignment exists ('' when one may)."""
        return diagnostic_text([r.text() for r in self.refusals])


def diagnostic_text(texts: list[str]) -> str:
    """The first refusal's words and how many more there are ('' for none)."""
    if not texts:
        return ""
    return texts[0] + (f" (and {len(texts) - 1:,} more such finding(s))" if len(texts) > 1 else "")


# ------------------------------------------------------------------------------------------------ propagation
@numba.njit(cache=True)
def _propagate(p_ptr: np.ndarray, em: np.ndarray, e_ptr: np.ndarray, e_cl: np.ndarray, k_ptr: np.ndarray,
               k_edge: np.ndarray, comp: np.ndarray, skip: np.ndarray) -> tuple:  # pragma: no cover - numba
    """Unit propagation of "at most one household per person" and the cover clauses (module docstring, step 2).

    Edges are sorted by person (``p_ptr``); ``e_cl[e_ptr[e]:e_ptr[e+1]]`` are the clauses edge e is in,
    ``k_edge[k_ptr[k]:k_ptr[k+1]]`` the edges of clause k; ``comp`` is each person's component (those marked in
    ``skip`` are left alone).  Components never
    interact, and the queue is first-in first-out, so each component is propagated exactly as it would be alone; a
    conflict stops its component only.  Returns (fixed edge per person or -1, why per person (1 fits only, 2 only
    candidate), the clause that forced it or -1, alive edges, satisfied clauses, the emptied clause per component
    or -1).  O(Σ clause memberships)."""
    n_persons = len(p_ptr) - 1
    n_edges = len(em)
    n_cl = len(k_ptr) - 1
    alive = np.ones(n_edges, np.bool_)
    sat = np.zeros(n_cl, np.bool_)
    cnt = np.empty(n_cl, np.int64)
    for k in range(n_cl):
        cnt[k] = k_ptr[k + 1] - k_ptr[k]
    fixed = np.full(n_persons, -1, np.int64)
    why = np.zeros(n_persons, np.int64)
    why_k = np.full(n_persons, -1, np.int64)
    conflict = np.full(len(skip), -1, np.int64)
    q_e = np.empty(n_persons + n_cl + 1, np.int64)
    q_k = np.empty(n_persons + n_cl + 1, np.int64)
    head = 0
    tail = 0
    for m in range(n_persons):
        if p_ptr[m + 1] - p_ptr[m] == 1:
            q_e[tail] = p_ptr[m]
            q_k[tail] = -1
            tail += 1
    for k in range(n_cl):
        if cnt[k] == 1:
            q_e[tail] = k_edge[k_ptr[k]]
            q_k[tail] = k
            tail += 1
    while head < tail:
        e = q_e[head]
        kk = q_k[head]
        head += 1
        m = em[e]
        c = comp[m]
        if skip[c] or conflict[c] >= 0 or fixed[m] == e:
            continue
        if fixed[m] >= 0 or not alive[e]:       # cannot happen without an emptied clause first; kept as a guard
            conflict[c] = max(kk, 0)
            continue
        fixed[m] = e
        why[m] = 1 if kk < 0 else 2
        why_k[m] = kk
        for t in range(e_ptr[e], e_ptr[e + 1]):
            sat[e_cl[t]] = True
        for f in range(p_ptr[m], p_ptr[m + 1]):
            if f == e or not alive[f] or conflict[c] >= 0:
                continue
            alive[f] = False
            for t in range(e_ptr[f], e_ptr[f + 1]):
                k = e_cl[t]
                if sat[k]:
                    continue
                cnt[k] -= 1
                if cnt[k] == 0:
                    conflict[c] = k
                    break
                if cnt[k] == 1:
                    for u in range(k_ptr[k], k_ptr[k + 1]):
                        g = k_edge[u]
                        if alive[g]:
                            if tail >= len(q_e):        # each clause turns unit at most once; grow defensively
                                q_e = np.concatenate((q_e, np.empty(len(q_e), np.int64)))
                                q_k = np.concatenate((q_k, np.empty(len(q_k), np.int64)))
                            q_e[tail] = g
                            q_k[tail] = k
                            tail += 1
                            break
    return fixed, why, why_k, alive, sat, conflict


# ------------------------------------------------------------------------------------------------ structures
def _location_lists(words: np.ndarray, n_loc: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR row -> disclosed location indexes (ascending) from packed ``ones`` words.  O(rows · |C|)."""
    from graphlink.core.trails import unpack

    n = words.shape[0]
    rows, locs = [], []
    step = max(1, 4_000_000 // max(n_loc, 1))            # bounded temporary: unpack in chunks
    for s in range(0, n, step):
        r, c = np.nonzero(unpack(words[s:s + step], n_loc))
        rows.append(r + s)
        locs.append(c)
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(locs) if locs else np.zeros(0, np.int64)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=ptr[1:])
    return ptr, c.astype(np.int64)


def _expand(graph: LinkGraph, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element-level pairs (identified row, de-identified row) of the selected class edges, sorted by (row, row).
    O(pairs)."""
    from graphlink.kernels.rows import members

    id_ptr, id_mem = members(graph.id_class, len(graph.id_class_size))
    de_ptr, de_mem = members(graph.de_class, len(graph.de_class_size))
    ci, cj = graph.class_ei[edges], graph.class_ej[edges]
    a, b = graph.id_class_size[ci], graph.de_class_size[cj]
    counts = (a * b).astype(np.int64)
    total = int(counts.sum())
    edge = np.repeat(np.arange(len(counts)), counts)
    t = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    bb = b[edge]
    em = id_mem[id_ptr[ci[edge]] + t // bb]
    en = de_mem[de_ptr[cj[edge]] + t % bb]
    order = np.lexsort((en, em))
    return em[order].astype(np.int64), en[order].astype(np.int64)


@numba.njit(cache=True)
def _union_find(n: int, a: np.ndarray, b: np.ndarray, offset: int) -> np.ndarray:  # pragma: no cover - numba
    """Component label (0..k-1, in order of each component's smallest vertex) of every vertex of the undirected
    graph with edges (a[k], offset + b[k]): union by size with path halving.  O(E α(V)) time, O(V) memory."""
    parent = np.arange(n)
    size = np.ones(n, np.int64)
    for k in range(len(a)):
        x = a[k]
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        y = offset + b[k]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x == y:
            continue
        if size[x] < size[y]:
            x, y = y, x
        parent[y] = x
        size[x] += size[y]
    label = np.full(n, -1, np.int64)
    out = np.empty(n, np.int64)
    nxt = 0
    for v in range(n):
        r = v
        while parent[r] != r:
            r = parent[r]
        if label[r] < 0:
            label[r] = nxt
            nxt += 1
        out[v] = label[r]
    return out


@numba.njit(cache=True)
def _class_counts(ci: np.ndarray, cj: np.ndarray, a: np.ndarray, b: np.ndarray, lab: np.ndarray,
                  n_lab: int) -> tuple:  # pragma: no cover - numba
    """Per identified class, the households it fits (Σ b over its class edges), and per component, its element
    pairs (Σ a·b): one pass over the class edges, no per-edge temporary (a class graph may hold 3e8 edges)."""
    deg = np.zeros(len(a), np.int64)
    comp = np.zeros(n_lab, np.int64)
    for k in range(len(ci)):
        i = ci[k]
        w = b[cj[k]]
        deg[i] += w
        comp[lab[i]] += a[i] * w
    return deg, comp


@numba.njit(cache=True)
def _edges_in(ci: np.ndarray, lab: np.ndarray, drop: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Indexes of the class edges whose component is not marked in ``drop``.  O(E), output-sized memory."""
    n = 0
    for k in range(len(ci)):
        if not drop[lab[ci[k]]]:
            n += 1
    out = np.empty(n, np.int64)
    n = 0
    for k in range(len(ci)):
        if not drop[lab[ci[k]]]:
            out[n] = k
            n += 1
    return out


@numba.njit(cache=True)
def _find_class_edges(ci: np.ndarray, cj: np.ndarray, qi: np.ndarray,
                      qj: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Index of class edge (qi[t], qj[t]) for every query, by binary search on the edges' (class_ej, class_ei)
    order (:class:`~graphlink.core.linkgraph.LinkGraph` keeps them so; -1 if absent).  O(q log E), no sorted copy of
    the edges."""
    out = np.full(len(qi), -1, np.int64)
    for t in range(len(qi)):
        lo, hi = 0, len(ci)
        while lo < hi:
            mid = (lo + hi) // 2
            if cj[mid] < qj[t] or (cj[mid] == qj[t] and ci[mid] < qi[t]):
                lo = mid + 1
            else:
                hi = mid
        if lo < len(ci) and ci[lo] == qi[t] and cj[lo] == qj[t]:
            out[t] = lo
    return out


def _components(n_left: int, n_right: int, el: np.ndarray, er: np.ndarray) -> np.ndarray:
    """Connected-component label of every vertex (left first, then right) of a bipartite graph.  O(V + E), no copy
    of the edges (a class graph may hold 1e8 of them)."""
    return _union_find(n_left + n_right, np.asarray(el, np.int64), np.asarray(er, np.int64), n_left)


@dataclass
class _Problem:
    """The expanded constraint problem of the solvable components (module docstring)."""

    em: np.ndarray              # edges (person row, household row), sorted by person
    en: np.ndarray
    p_ptr: np.ndarray           # person row -> its edges
    k_n: np.ndarray             # clause -> household row, location index
    k_c: np.ndarray
    k_ptr: np.ndarray           # clause -> edges
    k_edge: np.ndarray
    e_ptr: np.ndarray           # edge -> clauses
    e_cl: np.ndarray


def _build(graph: LinkGraph, em: np.ndarray, en: np.ndarray, id_loc: tuple, de_loc: tuple,
           households: np.ndarray) -> _Problem:
    """Clauses (household n, location c) for the given households and their member edges.  O(Σ_e |L(m_e)|)."""
    n_loc = len(graph.trails.locations)
    ip, il = id_loc
    dp, dl = de_loc
    n_m = graph.n_identified
    p_ptr = np.zeros(n_m + 1, np.int64)
    np.cumsum(np.bincount(em, minlength=n_m), out=p_ptr[1:])
    # clauses: every (household, disclosed location) of the selected households, numbered in (row, location) order
    cnt = (dp[households + 1] - dp[households]).astype(np.int64)
    k_n = np.repeat(households, cnt)
    k_c = dl[np.concatenate([np.arange(dp[h], dp[h + 1]) for h in households])] if len(households) else \
        np.zeros(0, np.int64)
    k_key = k_n * n_loc + k_c                         # ascending: households ascending, locations ascending
    # edge -> clauses: one membership per location of the edge's person
    deg = (ip[em + 1] - ip[em]).astype(np.int64)
    e_ptr = np.zeros(len(em) + 1, np.int64)
    np.cumsum(deg, out=e_ptr[1:])
    rep = np.repeat(np.arange(len(em)), deg)
    pos = np.arange(len(rep), dtype=np.int64) - np.repeat(e_ptr[:-1], deg) + ip[em][rep]
    e_cl = np.searchsorted(k_key, en[rep] * n_loc + il[pos]).astype(np.int64)
    order = np.argsort(e_cl, kind="stable")
    k_ptr = np.zeros(len(k_key) + 1, np.int64)
    np.cumsum(np.bincount(e_cl, minlength=len(k_key)), out=k_ptr[1:])
    return _Problem(em, en, p_ptr, k_n, k_c, k_ptr, rep[order].astype(np.int64), e_ptr, e_cl)


# ------------------------------------------------------------------------------------------------ search
class _Incremental:
    """What both encodings share: one incremental CaDiCaL instance, a conflict budget for all its calls together,
    and unsatisfiable cores over the cover clauses.  Subclasses set ``solver``, ``budget`` and ``cover`` and write
    their other constraints with ``_base``."""

    solver: object
    budget: int
    cover: list[list[int]]

    def _base(self, s) -> int:  # noqa: ANN001 - a pysat solver
        raise NotImplementedError

    def close(self) -> None:
        self.solver.delete()

    def solve(self, assumptions: list[int]) -> bool | None:
        """SAT / UNSAT / None when the conflict budget is spent."""
        used = self.solver.accum_stats().get("conflicts", 0)
        left = self.budget - used
        if left <= 0:
            return None
        self.solver.conf_budget(left)
        return self.solver.solve_limited(assumptions=assumptions)

    def core(self) -> list[int] | None:
        """Indexes (into ``clauses``) of an unsatisfiable core of cover clauses, from a solver with selectors."""
        from pysat.solvers import Solver

        with Solver(name="cadical195") as s:
            top = self._base(s)
            sel = list(range(top + 1, top + 1 + len(self.cover)))
            for v, lits in zip(sel, self.cover, strict=True):
                s.add_clause([-v, *lits])
            s.conf_budget(max(self.budget, 1))
            if s.solve_limited(assumptions=sel) is not False:
                return None
            at = {v: i for i, v in enumerate(sel)}
            return sorted(at[v] for v in s.get_core() or [] if v in at)


class _Search(_Incremental):
    """One residual component as SAT (module docstring, step 3): variable v ↔ edge ``edges[v - 1]``."""

    def __init__(self, pb: _Problem, edges: np.ndarray, clauses: np.ndarray, alive: np.ndarray,
                 conflicts: int) -> None:
        from pysat.solvers import Solver

        self.edges = edges
        self.var = {int(e): i + 1 for i, e in enumerate(edges.tolist())}
        self.budget = conflicts
        self.person_vars: dict[int, list[int]] = {}
        for e in edges.tolist():
            self.person_vars.setdefault(int(pb.em[e]), []).append(self.var[e])
        self.solver = Solver(name="cadical195")
        self.top = self._base(self.solver)
        self.clauses = clauses
        self.cover: list[list[int]] = []
        for k in clauses.tolist():
            ks = pb.k_edge[pb.k_ptr[k]:pb.k_ptr[k + 1]]
            self.cover.append([self.var[int(g)] for g in ks[alive[ks]].tolist()])
        self.solver.append_formula(self.cover)

    def _base(self, s) -> int:  # noqa: ANN001 - a pysat solver
        """At most one household per person into solver ``s``; returns the top variable used."""
        from pysat.card import CardEnc, EncType

        top = len(self.edges)
        for lits in self.person_vars.values():
            if len(lits) > 1:
                enc = CardEnc.atmost(lits, 1, top_id=top, encoding=EncType.seqcounter if len(lits) > 6
                                     else EncType.pairwise)
                top = max(top, enc.nv)
                s.append_formula(enc.clauses)
        return top

    def model(self) -> np.ndarray:
        """The current solution as a bool per variable (index v - 1)."""
        m = np.asarray(self.solver.get_model()[:len(self.edges)], np.int64)
        return m > 0


def _search(pb: _Problem, edges: np.ndarray, clauses: np.ndarray, alive: np.ndarray, budget: SearchBudget,
            singleton_de: np.ndarray, possible: bool, backbone: bool = True) -> dict:
    """Backbone (certain edges) and, with ``possible``, the possible edges of one residual component, or its
    refutation / budget verdict, on element pairs (the previous encoding; :func:`_search_twins` is the one used).
    Returns {"status": "sat" | "unsat" | "budget" | "partial", ...}: "partial" when
    a solution was found (the component is consistent) but the budget ran out before every pair was settled (the
    pairs in "certain" are proven; "possible" is missing)."""
    srch = _Search(pb, edges, clauses, alive, budget.conflicts)
    try:
        ok = srch.solve([])
        if ok is None:
            return {"status": "budget"}
        if ok is False:
            return {"status": "unsat", "core": srch.core()}
        first = srch.model()
        models = [first]
        # candidates: pairs in the solution whose household has no twin (a twin could be swapped in)
        cand = set(np.flatnonzero(first & singleton_de[pb.en[edges]]).tolist()) if backbone else set()
        certain: list[int] = []
        while cand:
            v = cand.pop()
            r = srch.solve([-(v + 1)])
            if r is None:                     # consistent, but the backbone is not settled: keep what is proven
                return {"status": "partial", "certain": np.asarray(sorted(certain), np.int64), "model": first}
            if r:
                mdl = srch.model()
                models.append(mdl)
                cand &= set(np.flatnonzero(mdl).tolist())
            else:
                certain.append(v)
        out: dict = {"status": "sat", "certain": np.asarray(sorted(certain), np.int64), "model": first}
        if possible:
            poss = np.zeros(len(edges), bool)
            free = set()                  # persons some solution leaves unassigned: every pair of theirs is possible
            for mdl in models:
                poss |= mdl
            for m, lits in srch.person_vars.items():
                if not any(first[v - 1] for v in lits):
                    free.add(m)
            for m, lits in srch.person_vars.items():
                if m in free:
                    continue
                r = srch.solve([-v for v in lits])
                if r is None:
                    return {**out, "status": "partial"}
                if r:
                    mdl = srch.model()
                    poss |= mdl
                    free.add(m)
                    continue
                for v in lits:
                    if poss[v - 1]:
                        continue
                    r = srch.solve([v])
                    if r is None:
                        return {**out, "status": "partial"}
                    if r:
                        poss |= srch.model()
            for m in free:
                for v in srch.person_vars[m]:
                    poss[v - 1] = True
            out["possible"] = poss
        return out
    finally:
        srch.close()


class _TwinSearch(_Incremental):
    """One residual component as SAT on twin classes (module docstring, "Twin symmetry"; docs/onetomany.md).

    Variable u(P, n) per (residual person class P, household n) that fits: "some member of P is in n".  The f_P
    unfixed members of P are interchangeable, so "at most one household per person" becomes Σ_n u(P, n) ≤ f_P, and
    the cover clause of (n, c) is the disjunction of u(P, n) over the classes P disclosed at c that fit n.  Twin
    households (same trail) are interchangeable too: their rows u(·, n) are ordered lexicographically (lex-leader),
    which keeps one solution of every orbit.  Every question asked of the solver is invariant under those
    permutations (a pair whose household has no twin; a class of households), so the answers equal the
    element-level ones.  A solution is turned into element pairs by giving the households a class uses distinct
    members of it."""

    def __init__(self, pb: _Problem, edges: np.ndarray, clauses: np.ndarray, alive: np.ndarray, conflicts: int,
                 id_class: np.ndarray, de_class: np.ndarray) -> None:
        from pysat.solvers import Solver

        self.pb, self.edges, self.budget = pb, edges, conflicts
        pm, pn = pb.em[edges], pb.en[edges]
        cls = id_class[pm]
        # variables: distinct (person class, household), numbered in order of first edge
        key = cls * (int(pn.max()) + 1) + pn
        ukey, first, self.edge_var = np.unique(key, return_index=True, return_inverse=True)
        self.n_var = len(ukey)
        self.var_class = cls[first]
        self.var_n = pn[first]
        self.edge_var = self.edge_var.astype(np.int64)
        # members of each class in the component (sorted), and each class's variables
        persons = np.unique(pm)
        self.members: dict[int, list[int]] = {}
        for m in persons.tolist():
            self.members.setdefault(int(id_class[m]), []).append(m)
        self.class_vars: dict[int, list[int]] = {}
        for v, p in enumerate(self.var_class.tolist()):
            self.class_vars.setdefault(int(p), []).append(v + 1)
        self.edge_of = {(int(m), int(n)): i for i, (m, n) in enumerate(zip(pm.tolist(), pn.tolist(), strict=True))}
        self.clauses = clauses
        self.cover: list[list[int]] = []
        for k in clauses.tolist():
            ks = pb.k_edge[pb.k_ptr[k]:pb.k_ptr[k + 1]]
            loc = np.searchsorted(edges, ks[alive[ks]])
            self.cover.append(sorted(set((self.edge_var[loc] + 1).tolist())))
        self.twin_rows = self._twin_rows(de_class)
        self.solver = Solver(name="cadical195")
        self.top = self._base(self.solver)
        self.solver.append_formula(self.cover)

    def _twin_rows(self, de_class: np.ndarray) -> list[list[list[int]]]:
        """Per class of twin households in the component: each household's row of variables, over the same sorted
        person classes (twins fit the same people, so the rows line up)."""
        by_n: dict[int, dict[int, int]] = {}
        for v, (p, n) in enumerate(zip(self.var_class.tolist(), self.var_n.tolist(), strict=True)):
            by_n.setdefault(int(n), {})[int(p)] = v + 1
        groups: dict[int, list[int]] = {}
        for n in sorted(by_n):
            groups.setdefault(int(de_class[n]), []).append(n)
        rows = []
        for ns in groups.values():
            if len(ns) > 1:
                order = sorted(by_n[ns[0]])
                if any(sorted(by_n[n]) != order for n in ns):
                    continue             # cannot happen (twins fit the same classes); no symmetry claimed then
                rows.append([[by_n[n][p] for p in order] for n in ns])
        return rows

    def _base(self, s) -> int:  # noqa: ANN001 - a pysat solver
        """Cardinality and lex-leader clauses into solver ``s``; returns the top variable used."""
        from pysat.card import CardEnc, EncType

        top = self.n_var
        for p, lits in self.class_vars.items():
            f = len(self.members[p])
            if len(lits) > f:
                enc = CardEnc.atmost(lits, f, top_id=top, encoding=EncType.seqcounter if len(lits) > 6 or f > 1
                                     else EncType.pairwise)
                top = max(top, enc.nv)
                s.append_formula(enc.clauses)
        for rows in self.twin_rows:
            for x, y in zip(rows, rows[1:], strict=False):      # x ≥lex y, with e = "equal so far"
                e = None
                for xi, yi in zip(x, y, strict=True):
                    s.add_clause(([-e] if e else []) + [xi, -yi])
                    top += 1
                    s.add_clause(([-e] if e else []) + [-xi, -yi, top])
                    s.add_clause(([-e] if e else []) + [xi, yi, top])
                    e = top
        return top

    def model(self) -> np.ndarray:
        """The current solution as a bool per variable (index v - 1)."""
        m = np.zeros(self.n_var, bool)
        got = np.asarray(self.solver.get_model()[:self.n_var], np.int64)
        m[:len(got)] = got > 0
        return m

    def selector(self, lits: list[int]) -> int:
        """A fresh variable s with s → (some of ``lits``), to assume a disjunction."""
        self.top += 1
        self.solver.add_clause([-self.top, *lits])
        return self.top

    def element_model(self, mdl: np.ndarray) -> np.ndarray:
        """The element pairs of a solution: the households class P uses get distinct members of P (in row order)."""
        out = np.zeros(len(self.edges), bool)
        used: dict[int, int] = {}
        for v in np.flatnonzero(mdl).tolist():
            p, n = int(self.var_class[v]), int(self.var_n[v])
            i = used.get(p, 0)
            used[p] = i + 1
            out[self.edge_of[(self.members[p][i], n)]] = True
        return out


def _search_twins(pb: _Problem, edges: np.ndarray, clauses: np.ndarray, alive: np.ndarray, budget: SearchBudget,
                  singleton_de: np.ndarray, possible: bool, backbone: bool, id_class: np.ndarray,
                  de_class: np.ndarray) -> dict:
    """:func:`_search` on twin classes (:class:`_TwinSearch`); the same verdicts and the same return value."""
    srch = _TwinSearch(pb, edges, clauses, alive, budget.conflicts, id_class, de_class)
    try:
        ok = srch.solve([])
        if ok is None:
            return {"status": "budget"}
        if ok is False:
            return {"status": "unsat", "core": srch.core()}
        first = srch.model()
        models = [first]
        sizes = {p: len(ms) for p, ms in srch.members.items()}
        # candidates: a variable of a one-member class whose household has no twin (a twin person or household
        # could be swapped in, so no other pair is certain beyond what propagation fixed)
        single = np.asarray([sizes[int(p)] == 1 for p in srch.var_class.tolist()], bool)
        cand = set(np.flatnonzero(first & single & singleton_de[srch.var_n]).tolist()) if backbone else set()
        # a class that fits one household is there in every assignment (propagation fixes these before the search;
        # kept so that the search alone is exact too)
        certain: list[int] = [lits[0] - 1 for lits in srch.class_vars.values() if len(lits) == 1] if backbone else []
        cand -= set(certain)
        while cand:
            v = cand.pop()
            r = srch.solve([-(v + 1)])
            if r is None:
                return {"status": "partial", "certain": _var_edges(srch, certain), "model": srch.element_model(first)}
            if r:
                mdl = srch.model()
                models.append(mdl)
                cand &= set(np.flatnonzero(mdl).tolist())
            else:
                certain.append(v)
        out: dict = {"status": "sat", "certain": _var_edges(srch, certain), "model": srch.element_model(first)}
        if possible:
            poss = np.zeros(srch.n_var, bool)
            for mdl in models:
                poss |= mdl
            free: set[int] = set()          # classes some solution leaves a member unassigned: every pair possible
            for p, lits in srch.class_vars.items():
                if sum(bool(first[v - 1]) for v in lits) < sizes[p]:
                    free.add(p)
            for p, lits in srch.class_vars.items():
                if p in free:
                    continue
                # a solution with fewer than f_P households using P: Σ u ≤ f_P − 1
                from pysat.card import CardEnc, EncType

                enc = CardEnc.atmost(lits, sizes[p] - 1, top_id=srch.top, encoding=EncType.seqcounter)
                sel = srch.top = enc.nv + 1
                for cl in enc.clauses:
                    srch.solver.add_clause([-sel, *cl])
                r = srch.solve([sel])
                if r is None:
                    return {**out, "status": "partial"}
                if r:
                    poss |= srch.model()
                    free.add(p)
            # the rest: per (class, class of twin households), a solution using it
            groups: dict[tuple[int, int], list[int]] = {}
            for v, (p, n) in enumerate(zip(srch.var_class.tolist(), srch.var_n.tolist(), strict=True)):
                groups.setdefault((int(p), int(de_class[n])), []).append(v)
            for (p, _), vs in groups.items():
                if p in free or poss[vs].any():
                    poss[vs] = True
                    continue
                r = srch.solve([srch.selector([v + 1 for v in vs])])
                if r is None:
                    return {**out, "status": "partial"}
                if r:
                    poss |= srch.model()
                    poss[vs] = True
            for vs in groups.values():                # twins of a household some solution uses
                if poss[vs].any():
                    poss[vs] = True
            out["possible"] = poss[srch.edge_var]
        return out
    finally:
        srch.close()


def _var_edges(srch: _TwinSearch, vs: list[int]) -> np.ndarray:
    """Local edge indexes of the member pairs of the given (certain) variables: a one-member class, or a class
    that fits one household (every member is there)."""
    return np.asarray(sorted(srch.edge_of[(m, int(srch.var_n[v]))] for v in vs
                             for m in srch.members[int(srch.var_class[v])]), np.int64)


# ------------------------------------------------------------------------------------------------ driver
def _fit_only(graph: LinkGraph) -> ManyClasses:
    """Identified reserved: every fitting pair possible, certain iff the person fits one household (REIDIT-M)."""
    a = graph.id_class_size.astype(np.int64)
    b = graph.de_class_size.astype(np.int64)
    ci, cj = graph.class_ei, graph.class_ej
    deg_class = np.bincount(ci, weights=b[cj], minlength=len(a)).astype(np.int64)
    certain = deg_class[ci] == 1
    orphan_rows = np.flatnonzero(deg_class[graph.id_class] == 0)
    refusals = []
    if len(orphan_rows):
        keys = graph.trails.identified.keys
        refusals.append(Refusal("orphan", people=tuple(str(keys[r]) for r in orphan_rows[:50]),
                                counts=(len(orphan_rows),), key=(0, -1, int(orphan_rows[0]))))
    possible = np.ones(len(ci), bool)
    ud_i = np.bincount(ci, weights=b[cj], minlength=len(a))[graph.id_class].astype(np.int64)
    ud_j = np.bincount(cj, weights=a[ci], minlength=len(b))[graph.de_class].astype(np.int64)
    pm, pn = _class_members(graph, np.flatnonzero(certain))
    assignment, flow = None, np.zeros(len(ci), np.int64)
    if not refusals:                     # every person in the first household they fit
        first = np.full(len(a), -1, np.int64)
        first[ci[::-1]] = cj[::-1]
        de_first = np.full(len(b), -1, np.int64)
        de_first[graph.de_class[::-1]] = np.arange(graph.n_deidentified)[::-1]
        assignment = de_first[first[graph.id_class]]
        flow = _flow(graph, np.arange(graph.n_identified), assignment)
    return ManyClasses(graph, "fit", not refusals, possible, certain, flow, ud_i, ud_j, refusals, [], pm, pn,
                       np.full(len(pm), FITS_ONLY, np.int64), [None] * len(pm), assignment)


def _flow(graph: LinkGraph, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Member pairs (m, n) counted per class edge.  O(E_class + pairs log E_class)."""
    pos = _find_class_edges(graph.class_ei, graph.class_ej, graph.id_class[m], graph.de_class[n])
    return np.bincount(pos, minlength=len(graph.class_ei)).astype(np.int64)


def _class_members(graph: LinkGraph, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element pairs of the given class edges whose de-identified class has one member (certain pairs)."""
    ii, jj = [], []
    for e in edges.tolist():
        ms = np.flatnonzero(graph.id_class == graph.class_ei[e])
        n = np.flatnonzero(graph.de_class == graph.class_ej[e])
        ii.append(ms)
        jj.append(np.repeat(n[:1], len(ms)))
    if not ii:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    m, n = np.concatenate(ii).astype(np.int64), np.concatenate(jj).astype(np.int64)
    order = np.lexsort((n, m))
    return m[order], n[order]


def classify_one_to_many(graph: LinkGraph, *, engine: str = "auto", budget: SearchBudget | None = None,
                         possible: bool = True, backbone: bool = True) -> ManyClasses:
    """Possible and certain pairs of a one-to-many release, exactly (module docstring).

    Parameters
    ----------
    graph : LinkGraph
        Built from one-to-many trails.
    engine : str
        Kept for callers written for :func:`graphlink.analysis.matching.classify_edges`; the verdicts do not
        depend on it.
    budget : SearchBudget, optional
        Limits of the exact search (``reserved == "none"`` only).
    possible : bool
        Also compute the possible pairs (``audit``); the certain pairs alone need fewer solver calls.
    backbone : bool
        Compute the certain pairs the search proves (False: only whether a consistent assignment exists, and the
        pairs propagation proves — REIDIT-M's model check).

    Returns
    -------
    ManyClasses

    Examples
    --------
    >>> import pandas as pd
    >>> import graphlink as gl
    >>> rows = [("L1", "identified", "a"), ("L1", "identified", "c"), ("L1", "deidentified", "X"),
    ...         ("L1", "deidentified", "Y"), ("L2", "identified", "b"), ("L2", "deidentified", "X"),
    ...         ("L3", "identified", "c"), ("L3", "deidentified", "Y")]
    >>> rel = gl.read_release(pd.DataFrame(rows, columns=["location", "kind", "element"]))
    >>> mc = classify_one_to_many(gl.build_linkgraph(gl.build_trails(rel, "none", "one-to-many")))
    >>> keys_m, keys_n = mc.graph.trails.identified.keys, mc.graph.trails.deidentified.keys
    >>> sorted((str(keys_m[m]), str(keys_n[n])) for m, n in zip(mc.pair_m, mc.pair_n))
    [('a', 'X'), ('b', 'X'), ('c', 'Y')]

    Complexity: O(E_class) with the identified side reserved; otherwise see the module docstring.
    """
    del engine
    tr = graph.trails
    if not tr.one_to_many:
        raise ModelAssumptionError("classify_one_to_many needs trails filled as one-to-many data")
    if tr.reserved != "none":
        return _fit_only(graph)
    return _Exact(graph, budget or SearchBudget(), possible, backbone).run()


class _Exact:
    """The unreserved reading (module docstring, steps 1–3)."""

    def __init__(self, graph: LinkGraph, budget: SearchBudget, possible: bool, backbone: bool = True,
                 symmetry: bool = True) -> None:
        self.g = graph
        self.symmetry = symmetry          # False: the element-level encoding (benchmarks' baseline)
        self.backbone = backbone
        self.budget = budget
        self.want_possible = possible
        tr = graph.trails
        self.n_loc = len(tr.locations)
        self.id_keys = tr.identified.keys
        self.de_keys = tr.deidentified.keys
        self.refusals: list[Refusal] = []
        self.unsolved: list[Refusal] = []

    # ------------------------------------------------------------------ helpers
    def id_keys_row(self, r: Refusal) -> int:
        return int(r.key[2])

    def _names(self, keys: np.ndarray, rows: np.ndarray, n: int = 50) -> tuple[str, ...]:
        return tuple(str(keys[r]) for r in np.asarray(rows)[:n])

    def _budget_refusal(self, people: np.ndarray, households: np.ndarray, pairs: int, checked: bool = False
                        ) -> Refusal:
        people, households = np.sort(people), np.sort(households)
        return Refusal("budget", households=self._names(self.de_keys, households, 3),
                       people=self._names(self.id_keys, people, 3),
                       counts=(len(households), len(people), pairs, int(checked)),
                       key=(REFUSAL_CODES.index("budget"), -1, int(people[0]) if len(people) else 0))

    # ------------------------------------------------------------------ run
    def run(self) -> ManyClasses:
        g = self.g
        n_m, n_n = g.n_identified, g.n_deidentified
        ci, cj = g.class_ei, g.class_ej
        a = g.id_class_size.astype(np.int64)
        b = g.de_class_size.astype(np.int64)
        # class-level components; a component too large to expand is left unsolved without expanding it
        lab = _components(len(a), len(b), ci, cj)
        comp_m, comp_n = lab[g.id_class], lab[len(a) + g.de_class]
        n_lab = int(lab.max()) + 1 if len(lab) else 0
        deg_class, comp_edges = _class_counts(ci, cj, a, b, lab, n_lab)
        for r in np.flatnonzero(deg_class[g.id_class] == 0).tolist():
            self.refusals.append(Refusal("orphan", people=(str(self.id_keys[r]),), counts=(1,), key=(0, -1, r)))
        too_big = comp_edges > self.budget.expand
        for c in np.flatnonzero(too_big).tolist():
            self.unsolved.append(self._budget_refusal(np.flatnonzero(comp_m == c), np.flatnonzero(comp_n == c),
                                                      int(comp_edges[c])))
        keep_edges = _edges_in(ci, lab, too_big)
        em, en = _expand(g, keep_edges)
        id_loc = _location_lists(g.trails.identified.ones, self.n_loc)
        de_loc = _location_lists(g.trails.deidentified.ones, self.n_loc)
        households = np.flatnonzero(~too_big[comp_n])
        refuted = np.zeros(n_lab, bool)
        refuted[comp_m[[self.id_keys_row(r) for r in self.refusals]]] = True      # orphans: their own component
        self._crowded(comp_m, comp_n, too_big, id_loc, de_loc, refuted)
        pb = _build(g, em, en, id_loc, de_loc, households)
        empty = np.flatnonzero(np.diff(pb.k_ptr) == 0)
        crowded = {(r.location, h) for r in self.refusals if r.code == "crowded" for h in r.households}
        for k in empty.tolist():
            n, c = int(pb.k_n[k]), int(pb.k_c[k])
            refuted[comp_n[n]] = True
            if (g.trails.locations[c], str(self.de_keys[n])) in crowded:
                continue
            self.refusals.append(Refusal("no-candidate", g.trails.locations[c], (str(self.de_keys[n]),),
                                         key=(2, c, n)))
        result = self._propagate_and_search(pb, comp_m, comp_n, refuted | too_big)
        self.refusals.sort(key=lambda r: r.key)
        self.unsolved.sort(key=lambda r: r.key)
        unchecked = any(not r.checked for r in self.unsolved)
        consistent: bool | None = False if self.refusals else (None if unchecked else True)
        n_ce = len(ci)
        if consistent is False or result is None:
            zeros = np.zeros(n_ce, bool)
            poss = zeros if self.want_possible else None
            ud = (np.zeros(n_m, np.int64), np.zeros(n_n, np.int64)) if self.want_possible else (None, None)
            return ManyClasses(g, "exact", False if self.refusals else consistent, poss, zeros,
                               np.zeros(n_ce, np.int64), ud[0], ud[1], self.refusals, self.unsolved)
        pm, pn, why, detail, poss_e, flow_pairs = result
        certain = self._class_mask(pm, pn)
        assignment, flow = None, np.zeros(n_ce, np.int64)
        if consistent:
            assignment = np.full(n_m, -1, np.int64)
            assignment[flow_pairs[0]] = flow_pairs[1]
            flow = _flow(g, *flow_pairs)
        if self.want_possible:
            pe_m, pe_n = em[poss_e], en[poss_e]
            class_poss = self._class_mask(pe_m, pe_n)
            ud_i = np.bincount(pe_m, minlength=n_m).astype(np.int64)
            ud_j = np.bincount(pe_n, minlength=n_n).astype(np.int64)
        else:
            class_poss, ud_i, ud_j = None, None, None
        return ManyClasses(g, "exact", consistent, class_poss, certain, flow, ud_i, ud_j, [], self.unsolved,
                           pm, pn, why, detail, assignment)

    def _class_mask(self, m: np.ndarray, n: np.ndarray) -> np.ndarray:
        g = self.g
        mask = np.zeros(len(g.class_ei), bool)
        mask[_find_class_edges(g.class_ei, g.class_ej, g.id_class[m], g.de_class[n])] = True
        return mask

    def _crowded(self, comp_m: np.ndarray, comp_n: np.ndarray, too_big: np.ndarray, id_loc: tuple,
                 de_loc: tuple, refuted: np.ndarray) -> None:
        """Step 1: per component and location, no more households than people (each person stands for one)."""
        ip, il = id_loc
        dp, dl = de_loc
        rows_m = np.repeat(np.arange(len(comp_m)), np.diff(ip))
        rows_n = np.repeat(np.arange(len(comp_n)), np.diff(dp))
        n_loc = self.n_loc
        key_m = comp_m[rows_m] * n_loc + il
        key_n = comp_n[rows_n] * n_loc + dl
        ukeys, cnt_n = np.unique(key_n, return_counts=True)
        cnt_m = np.searchsorted(np.sort(key_m), ukeys, side="right") - np.searchsorted(np.sort(key_m), ukeys)
        bad = np.flatnonzero((cnt_n > cnt_m) & ~too_big[ukeys // n_loc])
        for k in bad.tolist():
            comp, c = divmod(int(ukeys[k]), n_loc)
            refuted[comp] = True
            hs = rows_n[key_n == ukeys[k]]
            ps = rows_m[key_m == ukeys[k]]
            self.refusals.append(Refusal("crowded", self.g.trails.locations[c], self._names(self.de_keys, hs, 5),
                                         self._names(self.id_keys, ps, 5), (int(cnt_n[k]), int(cnt_m[k])),
                                         key=(1, c, int(hs[0]))))

    def _propagate_and_search(self, pb: _Problem, comp_m: np.ndarray, comp_n: np.ndarray, skip: np.ndarray) -> tuple:
        g = self.g
        n_m = g.n_identified
        fixed, why, why_k, alive, sat, conflict = _propagate(pb.p_ptr, pb.em, pb.e_ptr, pb.e_cl, pb.k_ptr,
                                                              pb.k_edge, comp_m, skip)
        for c in np.flatnonzero(conflict >= 0).tolist():
            self.refusals.append(self._conflict(pb, int(conflict[c]), fixed))
        skip = skip | (conflict >= 0)
        open_person = ~skip[comp_m]
        fixed = np.where(open_person, fixed, -1)
        alive = alive & open_person[pb.em]
        sat = sat | skip[comp_n[pb.k_n]]
        # step 3: residual components (persons not fixed, households with an unsatisfied clause)
        res_persons = np.flatnonzero((fixed < 0) & (np.diff(pb.p_ptr) > 0))
        res_edges = np.flatnonzero(alive & (fixed[pb.em] < 0))
        open_cl = np.flatnonzero(~sat)
        singleton_de = g.de_class_size[g.de_class] == 1
        certain_e = [fixed[fixed >= 0]]
        search_e: list[np.ndarray] = []
        poss_e = [fixed[fixed >= 0]]
        model_e = [fixed[fixed >= 0]]
        free_persons: list[np.ndarray] = []            # persons needed by no clause in the solution found
        if len(res_edges):
            lab = _components(n_m, g.n_deidentified, pb.em[res_edges], pb.en[res_edges])
            e_lab = lab[pb.em[res_edges]]
            order = np.argsort(e_lab, kind="stable")
            e_sorted, lab_sorted = res_edges[order], e_lab[order]
            bounds = np.flatnonzero(np.diff(lab_sorted)) + 1
            cl_lab = lab[n_m + pb.k_n[open_cl]]
            cl_order = np.argsort(cl_lab, kind="stable")
            cl_sorted, cl_lab_sorted = open_cl[cl_order], cl_lab[cl_order]
            for part in np.split(np.arange(len(e_sorted)), bounds):
                edges = e_sorted[part]
                comp = lab_sorted[part[0]]
                lo, hi = np.searchsorted(cl_lab_sorted, [comp, comp + 1])
                clauses = cl_sorted[lo:hi]
                persons = np.unique(pb.em[edges])
                if not len(clauses):                   # nobody is needed: everyone is free, nothing certain
                    poss_e.append(edges)
                    free_persons.append(persons)
                    continue
                if len(edges) > self.budget.pairs:
                    self.unsolved.append(self._budget_refusal(persons, np.unique(pb.en[edges]), len(edges)))
                    continue
                settled = bool(self.refusals)       # refuted elsewhere: only whether this part is consistent matters
                want = (self.want_possible and not settled, self.backbone and not settled)
                r = (_search_twins(pb, edges, clauses, alive, self.budget, singleton_de, *want, g.id_class,
                                   g.de_class) if self.symmetry
                     else _search(pb, edges, clauses, alive, self.budget, singleton_de, *want))
                if r["status"] == "budget":
                    self.unsolved.append(self._budget_refusal(persons, np.unique(pb.en[edges]), len(edges)))
                elif r["status"] == "partial":
                    self.unsolved.append(self._budget_refusal(persons, np.unique(pb.en[edges]), len(edges),
                                                              checked=True))
                    search_e.append(edges[r["certain"]])
                    model_e.append(edges[r["model"]])
                    free_persons.append(np.setdiff1d(persons, np.unique(pb.em[edges[r["model"]]])))
                elif r["status"] == "unsat":
                    self.refusals.append(self._core(pb, clauses, r["core"], persons, edges))
                else:
                    search_e.append(edges[r["certain"]])
                    model_e.append(edges[r["model"]])
                    chosen = np.unique(pb.em[edges[r["model"]]])
                    free_persons.append(np.setdiff1d(persons, chosen))
                    if "possible" in r:
                        poss_e.append(edges[r["possible"]])
        del res_persons
        ce = np.concatenate(certain_e)
        se = np.concatenate(search_e) if search_e else np.zeros(0, np.int64)
        all_e = np.concatenate([ce, se])
        whys = np.concatenate([why[pb.em[ce]], np.full(len(se), SEARCH, np.int64)])
        order = np.lexsort((pb.en[all_e], pb.em[all_e]))
        all_e, whys = all_e[order], whys[order]
        detail = [self._detail(pb, int(e), fixed, why_k) if w == ONLY_CANDIDATE else None
                  for e, w in zip(all_e.tolist(), whys.tolist(), strict=True)]
        # one consistent assignment: the solutions found, free persons in their first fitting household
        me = np.concatenate(model_e)
        fp = np.concatenate(free_persons) if free_persons else np.zeros(0, np.int64)
        fp = np.setdiff1d(fp, pb.em[me])
        first_edge = pb.p_ptr[fp]
        flow_m = np.concatenate([pb.em[me], pb.em[first_edge]])
        flow_n = np.concatenate([pb.en[me], pb.en[first_edge]])
        # persons with a component that was not solved are left out of the assignment (it is not known)
        pe = np.unique(np.concatenate(poss_e)) if self.want_possible else None
        if self.want_possible and len(fp):
            pe = np.unique(np.concatenate([pe, np.flatnonzero(np.isin(pb.em, fp))]))
        return pb.em[all_e], pb.en[all_e], whys, detail, pe, (flow_m, flow_n)

    def _detail(self, pb: _Problem, e: int, fixed: np.ndarray, why_k: np.ndarray) -> tuple:
        """(location, [(other candidate, their certain household)]) for a pair fixed as the only candidate left."""
        k = int(why_k[pb.em[e]])
        others = [int(x) for x in pb.k_edge[pb.k_ptr[k]:pb.k_ptr[k + 1]].tolist() if int(x) != e]
        elsewhere = []
        for f in others:
            p = int(pb.em[f])
            if fixed[p] >= 0:
                elsewhere.append((str(self.id_keys[p]), str(self.de_keys[pb.en[fixed[p]]])))
        return self.g.trails.locations[int(pb.k_c[k])], elsewhere

    def _conflict(self, pb: _Problem, k: int, fixed: np.ndarray) -> Refusal:
        n, c = int(pb.k_n[k]), int(pb.k_c[k])
        es = pb.k_edge[pb.k_ptr[k]:pb.k_ptr[k + 1]]
        people = tuple(str(self.id_keys[pb.em[e]]) for e in es.tolist())
        forced = tuple(str(self.de_keys[pb.en[fixed[pb.em[e]]]]) if fixed[pb.em[e]] >= 0 else "?"
                       for e in es.tolist())
        return Refusal("propagation", self.g.trails.locations[c], (str(self.de_keys[n]),), people, forced=forced,
                       key=(3, c, n))

    def _core(self, pb: _Problem, clauses: np.ndarray, core: list[int] | None, persons: np.ndarray,
              edges: np.ndarray) -> Refusal:
        picked = clauses[core] if core else clauses
        picked = picked[np.lexsort((pb.k_n[picked], pb.k_c[picked]))]
        where = tuple((self.g.trails.locations[int(pb.k_c[k])], str(self.de_keys[pb.k_n[k]])) for k in picked)
        households = np.unique(pb.en[edges])
        return Refusal("search", where[0][0], tuple(n for _, n in where[:50]), self._names(self.id_keys, persons, 5),
                       counts=(len(households), len(persons), len(edges)), where=where,
                       key=(4, int(pb.k_c[picked[0]]), int(pb.k_n[picked[0]])))
