"""Closed forms for random trails: the simulator oracle (docs/algorithms.md#random-trails) and thesis §5.6 metrics.

Model: ``n`` subjects, each visiting location ``c`` independently with probability ``p_c``; identified and
de-identified trails are the same 0/1 vector (unreserved, complete). REIDIT-C (thesis Alg. 2/3)
re-identifies a subject iff its trail is unique among the ``n``.

* :func:`p_unique` — exact P(unique) for uniform ``p``:  Σ_k C(|C|,k) π_k (1 − π_k)^{n−1},
  π_k = p^k (1−p)^{|C|−k}. O(|C|).
* :func:`var_unique_count` — exact variance of the unique count (for test tolerances). O(|C|²).
* :func:`p_reidit_i_round1` — reserved (0 → ``*``) first-round REIDIT-I bound: a subject with k ≥ 1 ones is
  linked iff no other subject's trail is a superset: Σ_{k≥1} C(|C|,k) π_k (1 − p^k)^{n−1}. O(|C|).
* :func:`p_unique_heterogeneous` / :func:`p_reidit_i_round1_heterogeneous` — the same for per-location
  ``p_c`` (e.g. Zipf), by enumerating all 2^{|C|} patterns (|C| ≤ 24). O(2^{|C|}·|C|).
* :func:`location_entropy`, :func:`system_entropy`, :func:`expected_entropy` — thesis §5.6.1:
  H(c) = −f_c log f_c − (1−f_c) log(1−f_c), H(X) = Σ_c H(c) (bits).
* :func:`auc` (Figure 5.16), :func:`shift` (eq. 5.2), :func:`shape` (eq. 5.3).

Everything is stdlib/numpy; the derivations are in docs/algorithms.md#random-trails (e.g. |C| = 10,
p = 0.5, n = 1000: P(unique) = 0.3768, sd of one run's fraction 0.0154).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, exp, log1p, sqrt

import numpy as np

MAX_ENUMERATED_LOCATIONS = 24


def _pow1m(x: float, e: float) -> float:
    """(1 − x)^e, numerically stable for small x; 0 when x ≥ 1 and e > 0."""
    if e == 0:
        return 1.0
    return 0.0 if x >= 1.0 else exp(e * log1p(-x))


def _check(C: int, p: float, n: int) -> None:
    if C < 0 or n < 1 or not 0.0 <= p <= 1.0:
        raise ValueError(f"need |C| >= 0, n >= 1 and 0 <= p <= 1 (got {C}, {n}, {p})")


def p_unique(C: int, p: float, n: int, exclude_empty: bool = False) -> float:
    """Exact probability that a given subject's trail is unique among ``n`` (docs/algorithms.md#random-trails).

    ``exclude_empty=True`` gives P(unique ∧ non-empty): subjects who visit nothing are absent from every
    table, so a release-based REIDIT-C can re-identify only these (divide by 1 − (1−p)^{|C|} for the fraction
    among subjects present). Expected number re-identified by REIDIT-C = n · P. O(|C|).

    Examples
    --------
    One location visited with probability 1/2 and two subjects: a trail is unique when the other subject's differs:

    >>> from graphlink.simulation import theory
    >>> theory.p_unique(1, 0.5, 2), theory.p_unique(3, 0.5, 1)
    (0.5, 1.0)
    """
    _check(C, p, n)
    return sum(comb(C, k) * p**k * (1 - p) ** (C - k) * _pow1m(p**k * (1 - p) ** (C - k), n - 1)
               for k in range(1 if exclude_empty else 0, C + 1))


def var_unique_count(C: int, p: float, n: int) -> float:
    """Exact variance of the number U of unique trails among ``n`` subjects (docs/algorithms.md#random-trails):
    Var U = nP + n(n−1)P₂ − (nP)², P₂ = Σ_{k,l} N_kl π_k π_l (1 − π_k − π_l)^{n−2},
    N_kl = C(|C|,k)C(|C|,l) − [k=l]C(|C|,k). O(|C|²).

    Examples
    --------
    With one location and two subjects U is 0 or 2, each with probability 1/2: variance 1:

    >>> from graphlink.simulation import theory
    >>> theory.var_unique_count(1, 0.5, 2)
    1.0
    """
    _check(C, p, n)
    pi = [p**k * (1 - p) ** (C - k) for k in range(C + 1)]
    b = [comb(C, k) for k in range(C + 1)]
    P = p_unique(C, p, n)
    if n == 1:
        return 0.0
    P2 = sum((b[a] * b[c] - (b[a] if a == c else 0)) * pi[a] * pi[c] * _pow1m(pi[a] + pi[c], n - 2)
             for a in range(C + 1) for c in range(C + 1))
    return max(0.0, n * P + n * (n - 1) * P2 - (n * P) ** 2)


def sd_unique_fraction(C: int, p: float, n: int) -> float:
    """Standard deviation of one run's REIDIT-C re-identified fraction U/n. O(|C|²).

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.sd_unique_fraction(1, 0.5, 2)          # sqrt(1) / 2
    0.5
    """
    return sqrt(var_unique_count(C, p, n)) / n


def p_reidit_i_round1(C: int, p: float, n: int) -> float:
    """Reserved model (the reserved side knows only its 1s: 0 → ``*``): probability that a subject is linked
    in REIDIT-I's *first* round, i.e. has k ≥ 1 ones and no other subject's trail is a superset:
    Σ_{k≥1} C(|C|,k) π_k (1 − p^k)^{n−1}. A lower bound on REIDIT-I's full result. O(|C|).

    Examples
    --------
    One location, two subjects: linked in the first round when visited (1/2) and the other one is not (1/2):

    >>> from graphlink.simulation import theory
    >>> theory.p_reidit_i_round1(1, 0.5, 2)
    0.25
    """
    _check(C, p, n)
    return sum(comb(C, k) * p**k * (1 - p) ** (C - k) * _pow1m(p**k, n - 1) for k in range(1, C + 1))


# --------------------------------------------------------------------------------------------------
# heterogeneous p_c: enumerate all patterns


def _patterns(probs: np.ndarray, chunk: int = 1 << 16):
    """Yield (bits (m, C) bool, log π(x), log P(superset of x)) for all 2^C patterns, in chunks."""
    C = probs.size
    if C > MAX_ENUMERATED_LOCATIONS:
        raise ValueError(f"exact enumeration supports at most {MAX_ENUMERATED_LOCATIONS} locations, got {C}; "
                         "use Monte Carlo")
    with np.errstate(divide="ignore"):
        lp, lq = np.log(probs), np.log1p(-probs)
    shifts = np.arange(C, dtype=np.int64)
    for start in range(0, 1 << C, chunk):
        codes = np.arange(start, min(start + chunk, 1 << C), dtype=np.int64)
        bits = ((codes[:, None] >> shifts[None, :]) & 1).astype(bool)
        logpi = np.where(bits, lp, lq).sum(axis=1)
        logsup = np.where(bits, lp, 0.0).sum(axis=1)
        yield bits, logpi, logsup


def _pow1m_vec(x: np.ndarray, e: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp(e * np.log1p(-np.minimum(x, 1.0)))
    return np.where(x >= 1.0, 0.0 if e > 0 else 1.0, out)


def p_unique_heterogeneous(probabilities: Sequence[float], n: int, exclude_empty: bool = False) -> float:
    """Exact P(unique) for per-location visit probabilities p_c: Σ_x π(x) (1 − π(x))^{n−1} over all 2^{|C|}
    patterns x, π(x) = Π_c p_c^{x_c} (1−p_c)^{1−x_c}. Used for the Zipf reference line (|C| ≤ 24).
    O(2^{|C|}·|C|).

    Examples
    --------
    Equal probabilities give :func:`p_unique`:

    >>> from graphlink.simulation import theory
    >>> theory.p_unique_heterogeneous([0.5], 2), theory.p_unique(1, 0.5, 2)
    (0.5, 0.5)
    """
    probs = np.asarray(probabilities, dtype=float)
    total = 0.0
    for bits, logpi, _ in _patterns(probs):
        pi = np.exp(logpi)
        term = pi * _pow1m_vec(pi, n - 1)
        if exclude_empty:
            term = np.where(bits.any(axis=1), term, 0.0)
        total += float(term.sum())
    return total


def p_reidit_i_round1_heterogeneous(probabilities: Sequence[float], n: int) -> float:
    """First-round REIDIT-I bound (0 → ``*``) for per-location p_c: Σ_{x≠0} π(x) (1 − Π_{c∈x} p_c)^{n−1}.
    O(2^{|C|}·|C|).

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.p_reidit_i_round1_heterogeneous([0.5], 2), theory.p_reidit_i_round1(1, 0.5, 2)
    (0.25, 0.25)
    """
    probs = np.asarray(probabilities, dtype=float)
    total = 0.0
    for bits, logpi, logsup in _patterns(probs):
        term = np.exp(logpi) * _pow1m_vec(np.exp(logsup), n - 1)
        total += float(np.where(bits.any(axis=1), term, 0.0).sum())
    return total


# --------------------------------------------------------------------------------------------------
# entropy (thesis §5.6.1) and curve metrics (§5.6, Figures 5.16-5.18)


def binary_entropy(f: float | np.ndarray) -> np.ndarray:
    """H(f) = −f log₂ f − (1−f) log₂(1−f), with 0 log 0 = 0 (bits).

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.binary_entropy([0.0, 0.5, 1.0]).tolist()
    [0.0, 1.0, 0.0]
    """
    f = np.asarray(f, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(f * np.log2(f)) - ((1 - f) * np.log2(1 - f))
    return np.where((f <= 0) | (f >= 1), 0.0, h)


def location_entropy(visits: np.ndarray) -> np.ndarray:
    """Per-location entropy H(c) of a 0/1 trail matrix (subjects × locations), f_c = fraction of 1s
    (thesis §5.6.1). O(n·|C|).

    Examples
    --------
    Half the subjects visit the first location, nobody the second:

    >>> from graphlink.simulation import theory
    >>> theory.location_entropy([[1, 0], [0, 0]]).tolist()
    [1.0, 0.0]
    """
    v = np.asarray(visits)
    if v.shape[0] == 0:
        return np.zeros(v.shape[1])
    return binary_entropy(v.mean(axis=0))


def system_entropy(visits: np.ndarray) -> float:
    """H(X) = Σ_c H(c) (thesis §5.6.1), in bits; locations are allocated independently. O(n·|C|).

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.system_entropy([[1, 0], [0, 1]])
    2.0
    """
    return float(location_entropy(visits).sum())


def expected_entropy(probabilities: Sequence[float]) -> float:
    """Σ_c H(p_c): the population limit of :func:`system_entropy`. O(|C|).

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.expected_entropy([0.5, 0.5, 1.0])
    2.0
    """
    return float(binary_entropy(np.asarray(probabilities, dtype=float)).sum())


def auc(x: Sequence[float], y: Sequence[float]) -> float:
    """Area under a mean re-identification curve (Figure 5.16), trapezoid rule over the parameter axis.

    Examples
    --------
    >>> from graphlink.simulation import theory
    >>> theory.auc([0, 1, 2], [0, 1, 1])                 # a triangle of area 1/2 and a unit square
    1.5
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))


def shift(x: Sequence[float], E: Sequence[float], R: Sequence[float]) -> float:
    """Shift σ(E, R) of eq. 5.2: distance along the parameter axis between the peaks of the entropy
    curve E and the re-identification curve R (the thesis writes |max_x R(x) − max_x E(x)|, meaning
    the arg-max).

    Examples
    --------
    The entropy curve peaks at x = 1, the re-identification curve at x = 0:

    >>> from graphlink.simulation import theory
    >>> theory.shift([0, 1, 2], [1, 3, 2], [3, 2, 1])
    1.0
    """
    x = np.asarray(x, dtype=float)
    return float(abs(x[int(np.argmax(R))] - x[int(np.argmax(E))]))


def shape(E: Sequence[float], R: Sequence[float]) -> float:
    """Shape κ(E, R) of eq. 5.3: Σ_i |E(i)·max(R)/max(E) − R(i)| over the 10-point curves.

    Examples
    --------
    Curves of the same shape (one a multiple of the other) have shape 0; otherwise E scaled to R's peak
    ([2, 4, 2]) is compared with R point by point (|2 − 4| + |4 − 2| + 0):

    >>> from graphlink.simulation import theory
    >>> theory.shape([1, 2, 1], [2, 4, 2]), theory.shape([1, 2, 1], [4, 2, 2])
    (0.0, 4.0)
    """
    E, R = np.asarray(E, dtype=float), np.asarray(R, dtype=float)
    mE = E.max()
    scale = R.max() / mE if mE > 0 else 0.0
    return float(np.abs(E * scale - R).sum())
