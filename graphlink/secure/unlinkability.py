"""External (Def. 22), central (Def. 24, B = Q·Pᵀ) and contributor (Def. 25) k-unlinkability checks.

All three reduce to Definition 19 on a bipartite graph (identities M on the left, de-identified elements on
the right, null trails allowed on the right): a vertex is fine if it has ≥ k edges in the union of maximum
matchings, or all its union edges go to null trails. The union of maximum matchings is computed exactly
(Hopcroft–Karp + one strongly-connected-components pass, Dulmage–Mendelsohn; docs/algorithms.md#true-loves), null
trails adjacent to every identity are handled in closed form (docs/algorithms.md#null-trails), never materialised.

Trails follow FillTrails (Alg. 1) for Ω reserved to Γ: identified side 1/0; de-identified side 1 where
disclosed, 0 where absent at a location with |γ_c| = |ω_c|, * otherwise. Elements are plain hashables, so
the sTTP can run the same code on ciphertexts (equality is all that matters).

Complexity: link generation O(|M|·|N|·|C|/64) vectorised; audit O(E·√V).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from graphlink.analysis.matching import dm_classify


@dataclass
class ViewAudit:
    """Definition 19 on one view. Violations name the elements with < k union edges (not null-exempt).

    Examples
    --------
    Returned by :func:`external_view` and the other views; ``to_dict`` is its JSON:

    >>> from graphlink.secure.unlinkability import external_view
    >>> view = external_view(["H1", "H2"], {"H1": {"a", "b"}, "H2": {"b", "c"}}, {"H1": {"x"}, "H2": set()}, 2)
    >>> view.view, view.k_unlinkable, view.n_left, view.n_right, view.n_null
    ('external', True, 3, 1, 2)
    """

    view: str
    k: int
    k_unlinkable: bool
    violations_left: list = field(default_factory=list)
    violations_right: list = field(default_factory=list)
    reidentified: list = field(default_factory=list)   # (identity, element) pairs with union-degree 1 both ends
    union_degree_left: dict = field(default_factory=dict)
    union_degree_right: dict = field(default_factory=dict)
    n_left: int = 0
    n_right: int = 0
    n_null: int = 0

    def to_dict(self) -> dict:
        return {"view": self.view, "k": self.k, "k_unlinkable": self.k_unlinkable,
                "violations_identified": [str(x) for x in self.violations_left],
                "violations_deidentified": [str(x) for x in self.violations_right],
                "reidentified": [[str(a), str(b)] for a, b in self.reidentified],
                "identified": self.n_left, "deidentified": self.n_right, "null_trails": self.n_null}


def allowed_edges(n_left: int, n_right: int, ei: np.ndarray, ej: np.ndarray):
    """Edges in at least one maximum matching: the core's Dulmage–Mendelsohn classification
    (:func:`graphlink.analysis.matching.dm_classify`, numba Hopcroft–Karp + SCC).  Returns (allowed mask,
    mate_left, ν, D_left) where D_left marks left vertices unmatched by some maximum matching."""
    ei = np.asarray(ei, np.int64)
    ej = np.asarray(ej, np.int64)
    if n_left == 0 or n_right == 0 or len(ei) == 0:
        return np.zeros(len(ei), bool), np.full(n_left, -1, np.int64), 0, np.ones(n_left, bool)
    r = dm_classify(n_left, n_right, ei, ej)
    return r["allowed"], r["mate_left"], r["nu"], r["d_left"]


def audit_graph(view: str, k: int, left: Sequence, right: Sequence, ei, ej, *,
                null_right: np.ndarray | None = None, n_full_null: int = 0) -> ViewAudit:
    """Definition 19 on an explicit bipartite graph plus ``n_full_null`` null trails adjacent to every
    left vertex (closed form, docs/algorithms.md#null-trails). ``null_right[j]`` marks explicit right vertices that are
    null trails (exempt, and edges to them count as null edges). O(E·√V)."""
    nl, nr = len(left), len(right)
    ei = np.asarray(ei, np.int64)
    ej = np.asarray(ej, np.int64)
    null_right = np.zeros(nr, bool) if null_right is None else np.asarray(null_right, bool)
    allowed, _, nu, d_left = allowed_edges(nl, nr, ei, ej)
    null_deg = np.zeros(nl, np.int64)
    if n_full_null > 0:
        deficiency = nl - nu
        if n_full_null > deficiency:
            allowed = np.ones(len(ei), bool)
            null_deg[:] = n_full_null
        else:
            null_deg[d_left] = n_full_null
    a_ei, a_ej = ei[allowed], ej[allowed]
    to_null = null_right[a_ej]
    deg_l_real = np.bincount(a_ei[~to_null], minlength=nl)
    deg_l = deg_l_real + np.bincount(a_ei[to_null], minlength=nl) + null_deg
    deg_r = np.bincount(a_ej, minlength=nr)
    bad_l = [left[i] for i in range(nl) if deg_l[i] < k and deg_l_real[i] > 0]
    bad_r = [right[j] for j in range(nr) if not null_right[j] and deg_r[j] < k]
    reid = [(left[int(i)], right[int(j)]) for i, j in zip(a_ei, a_ej, strict=True)
            if deg_r[j] == 1 and deg_l[i] == 1 and not null_right[j]]
    return ViewAudit(view, k, not bad_l and not bad_r, bad_l, bad_r, reid,
                     {left[i]: int(deg_l[i]) for i in range(nl)},
                     {right[j]: int(deg_r[j]) for j in range(nr) if not null_right[j]},
                     nl, int((~null_right).sum()), int(null_right.sum()) + n_full_null)


# ----------------------------------------------------------------------------------------------- trails
def trails(locations: Sequence[str], gamma: Mapping[str, set], omega: Mapping[str, set]):
    """FillTrails (Alg. 1) for Ω reserved to Γ. Returns (M keys, M ones (|M|,|C|) bool,
    N keys, N known, N ones). O((|M|+|N|)·|C|)."""
    m_keys = sorted({x for c in locations for x in gamma[c]}, key=repr)
    n_keys = sorted({x for c in locations for x in omega[c]}, key=repr)
    mi = {x: r for r, x in enumerate(m_keys)}
    ni = {x: r for r, x in enumerate(n_keys)}
    C = len(locations)
    m_ones = np.zeros((len(m_keys), C), bool)
    n_ones = np.zeros((len(n_keys), C), bool)
    n_known = np.zeros((len(n_keys), C), bool)
    for c, loc in enumerate(locations):
        for x in gamma[loc]:
            m_ones[mi[x], c] = True
        for x in omega[loc]:
            n_ones[ni[x], c] = True
        n_known[:, c] = n_ones[:, c] | (len(gamma[loc]) == len(omega[loc]))
    return m_keys, m_ones, n_keys, n_known, n_ones


def links(m_ones: np.ndarray, n_known: np.ndarray, n_ones: np.ndarray, chunk: int = 2048):
    """Link edges (m, n): at every location n is * or equals m (Def. 6/17). Chunked, vectorised."""
    eis, ejs = [], []
    for s in range(0, len(n_ones), chunk):
        kn, on = n_known[s:s + chunk], n_ones[s:s + chunk]
        bad = ((m_ones[None, :, :] != on[:, None, :]) & kn[:, None, :]).any(axis=2)
        jj, ii = np.nonzero(~bad)
        eis.append(ii)
        ejs.append(jj + s)
    if not eis:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(eis).astype(np.int64), np.concatenate(ejs).astype(np.int64)


def external_view(locations, gamma, disclosed, k: int, n_deidentified_total: int | None = None) -> ViewAudit:
    """Definition 22: links between M_Γ and N_Ω' plus null trails for everything not disclosed
    (one-to-one ⇒ |N| = |M|, so |M| − |N'| null trails unless ``n_deidentified_total`` says otherwise).

    Examples
    --------
    Patient b visits both hospitals, a only H1, c only H2; disclosing y at both and x at H1 gives a and b away:

    >>> from graphlink.secure.unlinkability import external_view
    >>> gamma = {"H1": {"a", "b"}, "H2": {"b", "c"}}
    >>> view = external_view(["H1", "H2"], gamma, {"H1": {"x", "y"}, "H2": {"y"}}, 2)
    >>> view.k_unlinkable, view.reidentified
    (False, [('a', 'x'), ('b', 'y')])
    >>> external_view(["H1", "H2"], gamma, {"H1": {"x"}, "H2": set()}, 2).k_unlinkable
    True
    """
    m_keys, m_ones, n_keys, n_known, n_ones = trails(locations, gamma, disclosed)
    ei, ej = links(m_ones, n_known, n_ones)
    total = len(m_keys) if n_deidentified_total is None else n_deidentified_total
    return audit_graph("external", k, m_keys, n_keys, ei, ej, n_full_null=max(0, total - len(n_keys)))


def central_view(locations, gamma, h_omega, returns: Mapping[str, Sequence], k: int) -> ViewAudit:
    """Definition 24: the sTTP's view B = Q·Pᵀ.

    Q links identities to the *submitted* encrypted trails (from Γ and h(Ω)); P (Omega-Map, Def. 23) maps
    each disclosed element of location p to every ciphertext in h(ω_p') (the sTTP knows the set, not the
    bijection), and each null (suppressed) disclosed trail to every suppressed ciphertext. Identities whose
    element was never submitted (|M| > |N|) add null trails adjacent to everyone. O(|M|·|N|·|C|/64 + E·√V)."""
    m_keys, m_ones, n_keys, n_known, n_ones = trails(locations, gamma, h_omega)
    ei, ej = links(m_ones, n_known, n_ones)
    nidx = {x: r for r, x in enumerate(n_keys)}
    q = [set() for _ in n_keys]
    for i, j in zip(ei.tolist(), ej.tolist(), strict=True):
        q[j].add(i)
    right, null_flags, bi, bj = [], [], [], []

    def add_block(names: list[str], ciphertexts: list[int], null: bool) -> None:
        # P maps each of these disclosed trails to every ciphertext of the block, so each is linked to
        # every identity Q links to any of them
        nb = set().union(*(q[y] for y in ciphertexts)) if ciphertexts else set()
        for name in names:
            bi.extend(nb)
            bj.extend([len(right)] * len(nb))
            right.append(name)
            null_flags.append(null)

    returned = set()
    for loc in locations:
        grp = [nidx[y] for y in returns.get(loc, [])]
        returned.update(grp)
        add_block([f"{loc}#disclosed{t}" for t in range(len(grp))], grp, False)
    suppressed = [y for y in range(len(n_keys)) if y not in returned]
    add_block([f"null#{t}" for t in range(len(suppressed))], suppressed, True)
    return audit_graph("central", k, m_keys, right, np.array(bi, np.int64), np.array(bj, np.int64),
                       null_right=np.array(null_flags, bool), n_full_null=max(0, len(m_keys) - len(n_keys)))


def contributor_view(locations, gamma, disclosed, k: int, private_pairs: Mapping[str, str],
                     n_deidentified_total: int | None = None, name: str = "contributor") -> ViewAudit:
    """Definition 25 for one location c_i: the external graph with the nodes of every pair ⟨m, n⟩ ∈ τ_i
    removed (c_i knows those links already). ``private_pairs`` = {identity: element} of τ_i. A removed n
    that was not disclosed removes one null trail."""
    m_keys, m_ones, n_keys, n_known, n_ones = trails(locations, gamma, disclosed)
    ei, ej = links(m_ones, n_known, n_ones)
    total = len(m_keys) if n_deidentified_total is None else n_deidentified_total
    n_null = max(0, total - len(n_keys))
    drop_m = {m for m in private_pairs if m in set(m_keys)}
    disclosed_all = set(n_keys)
    drop_n = {n for m, n in private_pairs.items() if m in drop_m and n in disclosed_all}
    n_null -= sum(1 for m, n in private_pairs.items() if m in drop_m and n not in disclosed_all)
    keep_m = np.array([x not in drop_m for x in m_keys], bool)
    keep_n = np.array([x not in drop_n for x in n_keys], bool)
    new_m = np.cumsum(keep_m) - 1
    new_n = np.cumsum(keep_n) - 1
    sel = keep_m[ei] & keep_n[ej]
    left = [x for x, kp in zip(m_keys, keep_m, strict=True) if kp]
    right = [x for x, kp in zip(n_keys, keep_n, strict=True) if kp]
    return audit_graph(name, k, left, right, new_m[ei[sel]], new_n[ej[sel]], n_full_null=max(0, n_null))
