"""Region sizes the sTTP can compute or bound for Contributor-Clean (thesis §8.3.1 Theorem 8, Figs 8.8–8.10,
Appendix D Lemmas 20–21).

For locations c_i (whose disclosure is protected) and c_j (the contributor-adversary) the sTTP sees γ_i,
γ_j in plaintext and h(ω_i), h(ω_j) as ciphertexts, so it knows |γ_i \\ γ_j|, |γ_i ∩ γ_j|,
|h(ω_i) ∩ h(ω_j)| exactly but not which identity owns which ciphertext. Regions:

* ① γ_i \\ γ_j (protect); ③ h(ω_i) ∩ h(ω_j) (never protect);
* ② common identities whose element is in ω_i \\ ω_j; ``②min = max(0, |h(ω_i)| − |③| − |①|)`` (8.2);
* ④ common identities whose element is in ω_j \\ ω_i;
  ``④max = min(|h(ω_j)|, |γ_i ∩ γ_j| − ②min) − |③|`` (8.3), ``④min = max(0, |h(ω_j)| − |③| − |γ_j \\ γ_i|)`` (D.1);
* ⑤ common identities whose element is in neither (protect).

Lemma 20: Contributor-Clean underestimates by ``④max − ④min`` = min of the six terms (I)–(VI).
Lemma 21: unreserved ⇒ no underestimate. All functions are O(set sizes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Regions:
    """The sTTP-computable sizes and bounds for the pair (c_i, c_j).

    Examples
    --------
    Returned by :func:`regions`; ``to_dict`` adds the derived quantities:

    >>> from graphlink.secure.bounds import regions
    >>> r = regions({"a", "b", "c"}, {"b", "c", "d"}, {1, 2}, {2})
    >>> r.underestimate, r.six_terms
    (0, (0, 1, 1, 1, 2, 2))
    """

    one: int              # |γ_i \ γ_j|
    common: int           # |γ_i ∩ γ_j|
    j_only: int           # |γ_j \ γ_i|
    three: int            # |h(ω_i) ∩ h(ω_j)|
    hi: int               # |h(ω_i)|
    hj: int               # |h(ω_j)|
    gi: int               # |γ_i|
    gj: int               # |γ_j|
    two_min: int
    four_max: int
    four_min: int

    @property
    def underestimate(self) -> int:
        """|④max| − |④min| (Lemma 20)."""
        return self.four_max - self.four_min

    @property
    def six_terms(self) -> tuple[int, int, int, int, int, int]:
        """Terms (I)–(VI) of Lemma 20."""
        return (
            self.hj - self.three,                                               # (I)
            self.common - self.three,                                           # (II)
            self.gi - self.hi,                                                  # (III)
            self.j_only,                                                        # (IV)
            self.gj - self.hj,                                                  # (V)
            (self.gi + self.gj - self.common) - (self.hi + self.hj - self.three),  # (VI)
        )

    @property
    def worst_case_protectors(self) -> int:
        """|γ_i| − |③| − |④max|: identities certainly available to protect h(ω_i') against c_j."""
        return self.gi - self.three - self.four_max

    @property
    def contributor_clean_quantity(self) -> int:
        """Alg. 13 line 3: max(|γ_i \\ γ_j|, |γ_i| − |h(ω_j)|, |h(ω_i) \\ h(ω_j)|)."""
        return max(self.one, self.gi - self.hj, self.hi - self.three)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(underestimate=self.underestimate, six_terms=list(self.six_terms),
                 worst_case_protectors=self.worst_case_protectors,
                 contributor_clean_quantity=self.contributor_clean_quantity)
        return d


def regions(gamma_i: set, gamma_j: set, h_i: set, h_j: set) -> Regions:
    """Compute the App. D region sizes from what the sTTP holds (plaintext γ, encrypted h(ω)).

    Examples
    --------
    Two locations sharing the identities b and c, each disclosing one ciphertext in common (2):

    >>> from graphlink.secure.bounds import regions
    >>> r = regions({"a", "b", "c"}, {"b", "c", "d"}, {1, 2}, {2})
    >>> r.one, r.common, r.three, r.four_max, r.worst_case_protectors, r.contributor_clean_quantity
    (1, 2, 1, 0, 2, 2)
    """
    one = len(gamma_i - gamma_j)
    common = len(gamma_i & gamma_j)
    j_only = len(gamma_j - gamma_i)
    three = len(h_i & h_j)
    two_min = max(0, len(h_i) - three - one)
    four_max = min(len(h_j), common - two_min) - three
    four_min = max(0, len(h_j) - three - j_only)
    return Regions(one, common, j_only, three, len(h_i), len(h_j), len(gamma_i), len(gamma_j),
                   two_min, four_max, four_min)


def true_regions(gamma_i: set, gamma_j: set, omega_i: set, omega_j: set,
                 truth: Mapping[str, str]) -> dict[str, int]:
    """Exact region sizes when the identity→element map is known (tests / evaluation only).

    ``truth[m]`` = the de-identified element of identity m. Returns sizes of ②, ③, ④, ⑤ and the true number
    of identities protecting c_i's disclosures against c_j, |γ_i| − |③| − |④|."""
    common = gamma_i & gamma_j
    two = sum(1 for m in common if truth.get(m) in omega_i and truth.get(m) not in omega_j)
    three = sum(1 for m in common if truth.get(m) in omega_i and truth.get(m) in omega_j)
    four = sum(1 for m in common if truth.get(m) in omega_j and truth.get(m) not in omega_i)
    five = len(common) - two - three - four
    return {"two": two, "three": three, "four": four, "five": five,
            "protectors": len(gamma_i) - three - four}


def pairwise_bounds(gamma: Mapping[str, set], h_omega: Mapping[str, set]) -> list[dict]:
    """The bound table for every ordered location pair (i ≠ j), as the sTTP sees it. O(|C|² · s).

    Examples
    --------
    Alg. 13's quantity is not symmetric: H1 has two ciphertexts outside H2's one, H2 none outside H1's:

    >>> from graphlink.secure.bounds import pairwise_bounds
    >>> rows = pairwise_bounds({"H1": {"a", "b", "c"}, "H2": {"b", "c", "d"}}, {"H1": {1, 2}, "H2": {2}})
    >>> [(row["i"], row["j"], row["contributor_clean_quantity"]) for row in rows]
    [('H1', 'H2', 2), ('H2', 'H1', 1)]
    """
    rows = []
    for i in gamma:
        for j in gamma:
            if i != j:
                r = regions(set(gamma[i]), set(gamma[j]), set(h_omega[i]), set(h_omega[j]))
                rows.append({"i": i, "j": j, **r.to_dict()})
    return rows
