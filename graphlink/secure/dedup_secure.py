"""The sTTP's unlinking algorithms on encrypted data (thesis ch. 8.3): Greedy-Dedup-Secure (Alg. 12),
Contributor-Clean (Alg. 13), Force-Dedup-Secure (Alg. 14), with their own Explicit-Clean (Proc. 8) and
Reduce (Proc. 9) over (plaintext identified, encrypted de-identified) sets.

Inputs: ``gamma[c]`` — the identified database γ_c each location publishes (plaintext keys);
``h_omega[c]`` — the fully encrypted de-identified database h(ω_c) (any hashable ciphertexts: equality of
ciphertexts = equality of plaintexts, nothing else is used). Output: for every location the subset
h(ω_c') ⊆ h(ω_c) the sTTP returns for decryption and disclosure, plus the protectors it reserved.

Selection rule (thesis §7.3.1): "elements in the least number of databases" — ascending frequency in the
current Θ (protectees) or Γ' (protectors); ties are broken by a random permutation, so results vary between
runs like the thesis's 25 runs.  The sTTP draws it from the OS CSPRNG (``seed=None``); a seed is for tests
of these functions on their own.

Readings of garbled pseudo-code (documented in docs/secure.md):
* Alg. 12 line 6 picks ``argmin |θ_c| ≥ k``: a location whose Θ-set has fallen below k can never be
  allocated (sets only shrink) and Lemma 16 needs ≥ k-or-0, so our Explicit-Clean for the secure
  algorithms also clears locations with ``0 < |θ_c| < k`` (otherwise the loop of line 5 never ends).
* Alg. 12 line 7 allocates all of θ_p but line 8 needs as many protectors: we allocate
  ``min(|θ_p|, |γ_p'|)`` protectees (as Alg. 7 line 6 does), which is ≥ k after the clean.
* Alg. 13 line 4 prints ``θ_i ← θ_i ∩ θ_j``; we intersect with the *submitted* ``h(ω_j)`` — Lemma 18 only
  needs ``h(ω_i') ⊆ h(ω_i) ∩ h(ω_j)`` and this makes the result independent of the pair order.
* Alg. 14 lines 17–18 are garbled; we follow the prose ("each location is allocated as many protectors as
  protectees"): the boost step adds Δ = min(|θ_p|, |γ_p'|) protectees and Δ protectors.

Complexity: Contributor-Clean O(|C|²·s) set operations (s = largest set); each allocation round
O(Σ|θ_c| + Σ|γ_c| + s log s); at most |C| rounds per phase ⇒ O(|C|·(Σ sizes) + |C|² s).
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from graphlink.errors import ReleaseError

SECURE_METHODS = ("greedy-dedup-secure", "force-dedup-secure")


@dataclass
class SecureDedupResult:
    """What the sTTP decided. ``returns[c]`` = h(ω_c') (ordered), ``protectors[c]`` = γ_c^k."""

    method: str
    k: int
    returns: dict[str, list]
    protectors: dict[str, list[str]]
    after_contributor_clean: dict[str, int]
    trace: list[str] = field(default_factory=list)

    def disclosed(self) -> int:
        return sum(len(v) for v in self.returns.values())


def contributor_clean(gamma: Mapping[str, set], h_omega: Mapping[str, set], k: int,
                      trace: list[str] | None = None) -> dict[str, set]:
    """Algorithm 13 Contributor-Clean: for every ordered pair (c_i, c_j), i ≠ j, if the worst-case number of
    identities that protect h(ω_i) against c_j's private knowledge,
    ``max(|γ_i \\ γ_j|, |γ_i| − |h(ω_j)|, |h(ω_i) \\ h(ω_j)|)`` (Theorem 8; equals |γ_i| − |③| − |④max| of
    App. D), is below k, keep only ``θ_i ∩ h(ω_j)`` (values c_j already knows, Lemma 18).
    O(|C|² · s)."""
    locs = list(h_omega)
    theta = {c: set(h_omega[c]) for c in locs}
    for i in locs:
        gi, hi = gamma[i], h_omega[i]
        for j in locs:
            if i == j:
                continue
            gj, hj = gamma[j], h_omega[j]
            worst = max(len(gi - gj), len(gi) - len(hj), len(hi - hj))
            if worst < k:
                before = len(theta[i])
                theta[i] &= hj
                if trace is not None and len(theta[i]) != before:
                    trace.append(f"contributor-clean: {i} w.r.t. {j}: worst-case protectors {worst} < k={k};"
                                 f" keep {len(theta[i])} of {before} (values {j} already holds)")
    return theta


def _explicit_clean(gamma_p: dict[str, set], theta: dict[str, set], k: int, among, trace) -> None:
    """Procedure 8 for the secure algorithms: clear c if |γ_c'| < k or |θ_c| < k (see module doc)."""
    for c in among:
        if theta[c] and (len(gamma_p[c]) < k or len(theta[c]) < k):
            if trace is not None:
                trace.append(f"explicit-clean: {c} cleared (|γ'|={len(gamma_p[c])}, |θ|={len(theta[c])}, k={k})")
            theta[c] = set()
            gamma_p[c] = set()


def _least_frequent(pool: set, sets: Mapping[str, set], n: int, order: dict) -> list:
    """n elements of ``pool`` in the least number of the ``sets``; ties by the seeded ``order``. O(s log s)."""
    if n <= 0:
        return []
    freq: Counter = Counter()
    for s in sets.values():
        freq.update(s & pool)
    return sorted(pool, key=lambda x: (freq[x], order[x]))[:n]


def _reduce(gamma_p: dict[str, set], theta: dict[str, set], prot: list, protectees: list) -> None:
    """Procedure 9 Reduce: remove allocated protectors / protectees from every location. O(|C|·a)."""
    ps, qs = set(prot), set(protectees)
    for c in gamma_p:
        gamma_p[c] -= ps
        theta[c] -= qs


def _orders(gamma, h_omega, seed):
    rng = secrets.SystemRandom() if seed is None else random.Random(seed)
    ids = sorted({x for s in gamma.values() for x in s})
    enc = sorted({x for s in h_omega.values() for x in s}, key=repr)
    rng.shuffle(ids)
    rng.shuffle(enc)
    return {x: r for r, x in enumerate(ids)}, {x: r for r, x in enumerate(enc)}, rng


def _validate(gamma, h_omega, k):
    if k < 1:
        raise ReleaseError(f"k must be at least 1, got {k}")
    if set(gamma) != set(h_omega):
        raise ReleaseError("identified and encrypted databases must cover the same locations")


@dataclass
class _Working:
    """The sTTP's working copies for Algorithms 12/14 after Contributor-Clean and the first Explicit-Clean:
    Γ' (``gamma_p``), Θ (``theta``), the seeded tie orders, and the allocation built so far."""

    k: int
    gamma_p: dict[str, set]
    theta: dict[str, set]
    id_order: dict
    enc_order: dict
    after_contributor_clean: dict[str, int]
    trace: list[str]
    returns: dict[str, list]
    protectors: dict[str, list[str]]

    @classmethod
    def start(cls, gamma: Mapping[str, set], h_omega: Mapping[str, set], k: int, seed: int | None) -> _Working:
        """Validate, run Contributor-Clean (Alg. 13) and Explicit-Clean (Proc. 8).  O(|C|²·s)."""
        _validate(gamma, h_omega, k)
        trace: list[str] = []
        id_order, enc_order, _ = _orders(gamma, h_omega, seed)
        gamma_p = {c: set(gamma[c]) for c in h_omega}
        theta = contributor_clean(gamma, h_omega, k, trace)
        after_cc = {c: len(v) for c, v in theta.items()}
        _explicit_clean(gamma_p, theta, k, list(theta), trace)
        return cls(k, gamma_p, theta, id_order, enc_order, after_cc, trace, {c: [] for c in h_omega},
                   {c: [] for c in h_omega})

    def pick(self, p: str, n_protectees: int, n_protectors: int) -> tuple[list, list]:
        """Location p's least-frequent protectees (from θ_p) and protectors (from γ'_p).  O(s log s)."""
        return (_least_frequent(self.theta[p], self.theta, n_protectees, self.enc_order),
                _least_frequent(self.gamma_p[p], self.gamma_p, n_protectors, self.id_order))

    def result(self, method: str) -> SecureDedupResult:
        return SecureDedupResult(method, self.k, self.returns, self.protectors, self.after_contributor_clean,
                                 self.trace)


def greedy_dedup_secure(gamma: Mapping[str, set], h_omega: Mapping[str, set], k: int,
                        seed: int | None = None) -> SecureDedupResult:
    """Algorithm 12 Greedy-Dedup-Secure(Γ, h(Ω), k) run by the sTTP on ciphertexts.

    Guarantees (given the model assumptions: one-to-one, Ω reserved to Γ, semi-honest parties): output
    deduplicated (Lemma 15), every non-empty h(ω_c') has ≥ k elements and ≥ as many protectors (Lemma 16).
    External/central/contributor k-unlinkability are *checked* separately (see ``unlinkability``), never
    assumed. Complexity: see module doc."""
    w = _Working.start(gamma, h_omega, k, seed)
    gamma_p, theta, returns, protectors, trace = w.gamma_p, w.theta, w.returns, w.protectors, w.trace
    while True:
        cand = [c for c in theta if len(theta[c]) >= k]
        if not cand:
            break
        p = min(cand, key=lambda c: (len(theta[c]), list(theta).index(c)))
        n_alloc = min(len(theta[p]), len(gamma_p[p]))
        chosen, prot = w.pick(p, n_alloc, max(n_alloc, k))
        returns[p], protectors[p] = chosen, prot
        trace.append(f"allocate {p}: {len(chosen)} protectees, {len(prot)} protectors")
        theta[p] = set()
        gamma_p[p] = set()
        _reduce(gamma_p, theta, prot, chosen)
        _explicit_clean(gamma_p, theta, k, list(theta), trace)
    return w.result("greedy-dedup-secure")


def force_dedup_secure(gamma: Mapping[str, set], h_omega: Mapping[str, set], k: int,
                       seed: int | None = None) -> SecureDedupResult:
    """Algorithm 14 Force-Dedup-Secure(Γ, h(Ω), k): force phase (k protectees + k protectors for as many
    locations as possible, smallest |θ_c| first), then boost phase (allocated locations take Δ more
    protectees and Δ more protectors). Same guarantees and checks as Greedy-Dedup-Secure."""
    w = _Working.start(gamma, h_omega, k, seed)
    gamma_p, theta, returns, protectors, trace = w.gamma_p, w.theta, w.returns, w.protectors, w.trace
    locs = list(theta)
    avail = list(locs)
    allocated: list[str] = []
    while True:  # FORCE PHASE
        cand = [c for c in avail if len(theta[c]) >= k and len(gamma_p[c]) >= k]
        if not cand:
            break
        p = min(cand, key=lambda c: (len(theta[c]), locs.index(c)))
        avail.remove(p)
        allocated.append(p)
        chosen, prot = w.pick(p, k, k)
        returns[p], protectors[p] = list(chosen), list(prot)
        trace.append(f"force {p}: {k} protectees, {k} protectors")
        _reduce(gamma_p, theta, prot, chosen)
        _explicit_clean(gamma_p, theta, k, avail, trace)
    while True:  # BOOST PHASE
        cand = [c for c in allocated if min(len(gamma_p[c]), len(theta[c])) > 0]
        if not cand:
            break
        p = min(cand, key=lambda c: (len(theta[c]), locs.index(c)))
        delta = min(len(theta[p]), len(gamma_p[p]))
        chosen, prot = w.pick(p, delta, delta)
        returns[p] += chosen
        protectors[p] += prot
        trace.append(f"boost {p}: +{delta} protectees, +{delta} protectors")
        _reduce(gamma_p, theta, prot, chosen)
        theta[p] = set()
    return w.result("force-dedup-secure")


def run_secure_dedup(method: str, gamma: Mapping[str, set], h_omega: Mapping[str, set], k: int,
                     seed: int | None = None) -> SecureDedupResult:
    """Dispatch on ``method`` (accepts 'greedy-dedup', 'force-dedup' and their '-secure' names)."""
    m = method if method.endswith("-secure") else f"{method}-secure"
    if m == "greedy-dedup-secure":
        return greedy_dedup_secure(gamma, h_omega, k, seed)
    if m == "force-dedup-secure":
        return force_dedup_secure(gamma, h_omega, k, seed)
    raise ReleaseError(f"unknown secure method {method!r}; choose one of {', '.join(SECURE_METHODS)}")


def withhold_location(result: SecureDedupResult, location: str, reason: str) -> None:
    """Repair step: withhold a location's whole allocation (keeps the ≥ k-or-0 property). O(1)."""
    result.returns[location] = []
    result.trace.append(f"certification repair: withheld all of {location} ({reason})")

