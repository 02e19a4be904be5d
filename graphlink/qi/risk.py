"""Re-identification risk of a table over its quasi-identifiers: the three attacker models, the risk
distribution, population-uniqueness estimates and the distinction/separation of attribute sets.

All measures start from the *equivalence classes* of the table over the QI (rows with equal QI values; their
sizes ``f_j``, ``J`` classes, ``n`` rows). docs/qi.md gives every formula with its reference; in short:

* **Prosecutor** (El Emam & Dankar, JAMIA 15(5) 2008; El Emam, *Guide to the De-Identification of Personal
  Health Information*, 2013; ARX ``RiskModelSampleSummary``): the attacker knows the target is in the table;
  a record's risk is ``1/f_j``. Records at risk: the fraction of records whose risk exceeds the threshold;
  highest risk ``1/min f_j``; average risk (success rate) ``J/n``.
* **Journalist**: the attacker matches against the population the table was drawn from; a record's risk is
  ``1/F_j`` with ``F_j`` the size of its class in the population. ``F_j`` comes from a population table (its
  classes over the same QI), or, given only a sampling fraction ``π``, is estimated as ``f_j/π`` (the
  expected population class size under Bernoulli sampling). Highest ``1/min F_j``; average
  ``max(J/Σ_j F_j, (1/n)·Σ_j f_j/F_j)`` (as ARX computes it). Without population information the population
  is the table: the prosecutor's figures.
* **Marketer**: the attacker re-identifies as many records as possible; expected fraction
  ``(1/n)·Σ_j f_j/F_j`` (``J/n`` without population information).
* **Risk distribution** (ARX ``RiskModelSampleRiskDistribution``): the fraction of records per prosecutor
  risk interval ``(low, high]`` with ARX's interval bounds.
* **Population uniqueness** (needs the sampling fraction ``π = n/N``): the fraction of the population that is
  unique on the QI, estimated from the class-size frequencies ``c_i`` (classes of size i in the sample) by
  Zayatz 1991, Pitman's model (Hoshino 2001: maximum-likelihood θ, α of the Pitman sampling formula, then
  ``Γ(θ+1)/Γ(θ+α)·N^α`` uniques) and the shifted negative binomial (SNB; Chen & Keller-McNulty 1998), and
  chosen by **Dankar's decision rule** (Dankar, El Emam, Neisa & Roffey, BMC Med Inform Decis Mak 12:66,
  2012): Pitman when ``π ≤ 0.1`` (Zayatz if Pitman has no estimate), else the smaller of Zayatz and SNB (Zayatz
  if SNB has none). No sample unique: 0.
* **Distinction and separation** of every attribute set (Motwani & Xu, VLDB workshop 2007; ARX
  ``RiskModelAttributes``): distinction = distinct value combinations / n; separation = the fraction of record
  pairs that differ on the set, ``1 − Σ_j f_j(f_j − 1) / (n(n − 1))``.

Everything is vectorised over the classes; the estimators solve at most a two-parameter equation system
(scipy). O(n·m) to form the classes, O(2^m · n) for the attribute sets (at most :data:`MAX_SETS` sets).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from graphlink.errors import ReleaseError
from graphlink.qi.checks import equivalence_classes
from graphlink.qi.table import as_labels, check_columns, pack

#: ARX's risk intervals (``RiskModelSampleRiskDistribution``): upper bounds, each interval ``(previous, high]``
RISK_BOUNDS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.125,
               0.143, 0.167, 0.2, 0.25, 0.334, 0.5, 1.0)
MAX_SETS = 4095         # attribute sets for distinction/separation: all of them up to 12 QIs
DANKAR_PITMAN_FRACTION = 0.1


@dataclass(frozen=True)
class AttackerRisk:
    """One attacker model's figures (fractions in [0, 1]; ``None`` where the model has no such figure).

    ``records_at_risk``: records whose risk exceeds the threshold; ``highest``: the largest record risk;
    ``average``: the expected fraction of records re-identified (success rate).

    Examples
    --------
    One model of :class:`RiskSummary`:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.risk import risk
    >>> from graphlink.qi.table import read_table
    >>> summary = risk(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"])
    >>> summary.prosecutor.model, summary.prosecutor.highest
    ('prosecutor', 0.5)
    """

    model: str
    records_at_risk: float | None
    highest: float | None
    average: float


@dataclass(frozen=True)
class Uniqueness:
    """Population-uniqueness estimates: fractions of the population unique on the QI (``None``: no estimate).

    ``sample`` is the fraction of the table's records that are unique in the table; ``dankar_model`` names
    the estimator Dankar's rule chose (``"none"`` when the table has no unique record).

    Examples
    --------
    Returned by :func:`uniqueness` (and in :class:`RiskSummary` when a sampling fraction or a population is
    given); SW-K Figure 2's classes of 2, 2, 2, 3 and 2 records hold no unique record:

    >>> import numpy as np
    >>> from graphlink.qi.risk import uniqueness
    >>> u = uniqueness(np.array([2, 2, 2, 3, 2]), 1.0)
    >>> u.sample, u.population_size
    (0.0, 11.0)
    """

    sample: float
    sampling_fraction: float
    population_size: float
    zayatz: float | None
    pitman: float | None
    snb: float | None
    dankar: float | None
    dankar_model: str


@dataclass(frozen=True)
class AttributeSetRisk:
    """Distinction and separation of one set of QI columns.

    Examples
    --------
    One row of :class:`RiskSummary`'s ``attribute_sets``: how well each set of QI columns tells records apart:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.risk import risk
    >>> from graphlink.qi.table import read_table
    >>> summary = risk(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"])
    >>> first = summary.attribute_sets[0]
    >>> first.attributes, round(first.distinction, 4)
    (('Race',), 0.1818)
    """

    attributes: tuple[str, ...]
    distinction: float
    separation: float


@dataclass(frozen=True)
class RiskSummary:
    """What ``graphlink qi risk`` reports (see the module docstring for every definition).

    ``population`` says where the journalist's population came from: ``"table"`` (the table itself),
    ``"population table"`` or ``"sampling fraction"``. ``distribution`` pairs each ARX risk interval's upper
    bound with the fraction of records whose prosecutor risk falls in it. ``attribute_sets`` is empty when
    there are more than 12 QIs.

    Examples
    --------
    Returned by :func:`risk`; SW-K Figure 2 has classes of 2 and 3 records, so a prosecutor is right with
    probability 1/2 at most:

    >>> from graphlink.qi.datasets import SWEENEY
    >>> from graphlink.qi.risk import risk
    >>> from graphlink.qi.table import read_table
    >>> summary = risk(read_table(SWEENEY / "fig2.csv"), ["Race", "Birth", "Gender", "ZIP"])
    >>> summary.rows, summary.classes, summary.prosecutor.highest
    (11, 5, 0.5)
    """

    rows: int
    classes: int
    threshold: float
    population: str
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: AttackerRisk
    distribution: tuple[tuple[float, float], ...]
    uniqueness: Uniqueness | None
    attribute_sets: tuple[AttributeSetRisk, ...]

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------- attackers
def prosecutor(sizes: np.ndarray, threshold: float) -> AttackerRisk:
    """El Emam's prosecutor risk from the class sizes ``f_j``.

    Examples
    --------
    Four classes of 1, 2, 3 and 4 records: a prosecutor picks the right record with probability 1/f in a class
    of f; at a threshold of 0.3 the classes of 1, 2 and 3 (6 of 10 records) are at risk:

    >>> from graphlink.qi.risk import prosecutor
    >>> r = prosecutor([1, 2, 3, 4], 0.3)
    >>> r.records_at_risk, r.highest, r.average
    (0.6, 1.0, 0.4)
    """
    f = np.asarray(sizes, dtype=np.float64)
    n = f.sum()
    return AttackerRisk("prosecutor", float(f[1.0 / f > threshold].sum() / n), float(1.0 / f.min()),
                        float(len(f) / n))


def journalist(sizes: np.ndarray, population: np.ndarray, threshold: float) -> AttackerRisk:
    """The journalist's risk from the sample class sizes ``f_j`` and their population sizes ``F_j``.

    Examples
    --------
    The same classes, held 3, 2, 6 and 10 times in the population: 1/F exceeds 0.2 for the classes of 1 and 2
    records (3 of 10), the highest is 1/2:

    >>> from graphlink.qi.risk import journalist
    >>> r = journalist([1, 2, 3, 4], [3, 2, 6, 10], 0.2)
    >>> r.records_at_risk, r.highest, round(r.average, 4)
    (0.3, 0.5, 0.2233)
    """
    f, big = np.asarray(sizes, dtype=np.float64), np.asarray(population, dtype=np.float64)
    n = f.sum()
    average = max(len(f) / big.sum(), float((f / big).sum() / n))
    return AttackerRisk("journalist", float(f[1.0 / big > threshold].sum() / n), float(1.0 / big.min()), average)


def marketer(sizes: np.ndarray, population: np.ndarray) -> AttackerRisk:
    """The marketer's expected success rate ``(1/n)·Σ f_j/F_j``.

    Examples
    --------
    (1/3 + 2/2 + 3/6 + 4/10) / 10 right guesses per record:

    >>> from graphlink.qi.risk import marketer
    >>> round(marketer([1, 2, 3, 4], [3, 2, 6, 10]).average, 4)
    0.2233
    """
    f, big = np.asarray(sizes, dtype=np.float64), np.asarray(population, dtype=np.float64)
    return AttackerRisk("marketer", None, None, float((f / big).sum() / f.sum()))


def distribution(sizes: np.ndarray) -> tuple[tuple[float, float], ...]:
    """The fraction of records per ARX risk interval ``(low, high]`` of the prosecutor risk ``1/f``."""
    f = np.asarray(sizes, dtype=np.float64)
    idx = np.searchsorted(np.asarray(RISK_BOUNDS), 1.0 / f, side="left")
    share = np.bincount(idx, weights=f, minlength=len(RISK_BOUNDS)) / f.sum()
    return tuple((float(b), float(x)) for b, x in zip(RISK_BOUNDS, share, strict=True))


# ---------------------------------------------------------------------------------------------- uniqueness
def size_histogram(sizes: np.ndarray) -> dict[int, int]:
    """``{i: c_i}``: how many classes have size i."""
    values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def zayatz(hist: dict[int, int], n: int, big_n: float) -> float | None:
    """Zayatz 1991 (ARX ``ModelZayatz``): the fraction of the population unique on the QI.

    ``P = (c_1/u)·H(1 | N, 1, n) / Σ_i (c_i/u)·H(1 | N, i, n)`` with ``H(1 | N, i, n)`` the hypergeometric
    probability that a population class of size i leaves exactly one record in a sample of n from N;
    uniques ``c_1·P/π``."""
    c1 = hist.get(1, 0)
    if c1 == 0:
        return 0.0
    sizes = np.array(sorted(hist), dtype=np.float64)
    counts = np.array([hist[int(i)] for i in sizes], dtype=np.float64)
    pop = int(round(big_n))
    h = stats.hypergeom.pmf(1, pop, sizes.astype(np.int64), n)
    denom = float((counts * h).sum())
    if denom <= 0 or not math.isfinite(denom):
        return None
    p = c1 * float(stats.hypergeom.pmf(1, pop, 1, n)) / denom
    return _fraction(c1 * p / (n / big_n), big_n)


def pitman_loglik(theta: float, alpha: float, hist: dict[int, int], n: int) -> float:
    """Log-likelihood of the Pitman sampling formula for class-size frequencies ``hist`` (Hoshino 2001):
    ``Σ_{i<u} log(θ + iα) − Σ_{i<n} log(θ + i) + Σ_j Σ_{l<f_j} log(l − α)`` (constants dropped), in closed form
    with log-gamma functions."""
    u = sum(hist.values())
    if not 0 < alpha < 1 or theta <= -alpha:
        return -math.inf
    first = (u - 1) * math.log(alpha) + special.gammaln(theta / alpha + u) - special.gammaln(theta / alpha + 1)
    second = special.gammaln(theta + n) - special.gammaln(theta + 1)
    third = sum(c * (special.gammaln(i - alpha) - special.gammaln(1 - alpha)) for i, c in hist.items())
    return float(first - second + third)


def pitman_fit(hist: dict[int, int], n: int) -> tuple[float, float] | None:
    """The maximum-likelihood ``(θ, α)`` of the Pitman sampling formula (:func:`pitman_loglik`), searched from
    ARX's initial guess and three others (Nelder-Mead on ``log(θ + α)``, ``logit α``)."""
    c1, u = hist.get(1, 0), sum(hist.values())
    c2 = hist.get(2, 0) or 1                                  # ARX's initial guess (overestimates when c2 = 0)
    c = c1 * (c1 - 1) / c2
    den = 2 * c1 * u + c1 * c - n * c
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / den if den else 1.0
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    starts = [(t0, a0), (1.0, 0.5), (float(u), 0.1), (float(u) / 10, 0.9)]
    best = None
    for t, a in starts:
        a = min(max(a, 1e-6), 1 - 1e-6)
        t = max(t, -a + 1e-6)
        x0 = np.array([math.log(t + a), special.logit(a)])   # θ = e^x − α keeps θ > −α, α = expit(y)

        def neg(x: np.ndarray) -> float:
            al = float(special.expit(x[1]))
            return -pitman_loglik(math.exp(x[0]) - al, al, hist, n)

        res = optimize.minimize(neg, x0, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12,
                                                                        "maxiter": 4000})
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return None
    alpha = float(special.expit(best.x[1]))
    return math.exp(best.x[0]) - alpha, alpha


def pitman(hist: dict[int, int], n: int, big_n: float) -> float | None:
    """Pitman's model (Hoshino 2001; ARX ``ModelPitman``): maximum-likelihood (θ, α) (:func:`pitman_fit`),
    then ``Γ(θ+1)/Γ(θ+α)·N^α`` population uniques (no estimate when it is not in [0, N])."""
    if hist.get(1, 0) == 0:
        return 0.0
    fit = pitman_fit(hist, n)
    if fit is None:
        return None
    theta, alpha = fit
    uniques = math.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * math.log(big_n))
    return _fraction(uniques, big_n) if 0 <= uniques <= big_n else None


def shlosser(hist: dict[int, int], fraction: float) -> float:
    """Shlosser's estimate of the non-empty classes in the population (Shlosser 1981; Haas et al. 1995):
    ``u + c_1·Σ_i (1−π)^i c_i / Σ_i i·π·(1−π)^{i−1} c_i``."""
    u, c1 = sum(hist.values()), hist.get(1, 0)
    q = 1.0 - fraction
    num = sum(q ** i * c for i, c in hist.items())
    den = sum(i * fraction * q ** (i - 1) * c for i, c in hist.items())
    return u + c1 * num / den if den > 0 else float(u)


def snb_expected(alpha: float, beta: float, k: float, fraction: float) -> tuple[float, float]:
    """Expected sample classes of size 1 and 2 under the shifted negative binomial (Chen & Keller-McNulty 1998):
    population class sizes ``F = 1 + G``, ``G ~ NB(α, β)``, each record sampled with probability π."""
    d = (1.0 - fraction) * (1.0 - beta)
    b = beta / (1.0 - d)
    e1 = k * fraction * b ** alpha * (1.0 + alpha * d / (1.0 - d))
    e2 = k * alpha * beta ** alpha * fraction ** 2 * (1.0 - beta) * (2.0 - (1.0 - alpha) * d) / (
        2.0 * (1.0 - d) ** (alpha + 2.0))
    return e1, e2


def snb_fit(hist: dict[int, int], fraction: float) -> tuple[float, float, float] | None:
    """``(K, α, β)`` of the SNB model: K from :func:`shlosser`, α and β solved so that the expected sample
    classes of size 1 and 2 (:func:`snb_expected`) equal ``c_1`` and ``c_2`` (None when no solution)."""
    c1, c2 = hist.get(1, 0), hist.get(2, 0)
    k = shlosser(hist, fraction)

    def residual(x: np.ndarray) -> np.ndarray:
        alpha, beta = math.exp(x[0]), float(special.expit(x[1]))
        e1, e2 = snb_expected(alpha, beta, k, fraction)
        return np.array([(e1 - c1) / max(c1, 1), (e2 - c2) / max(c1, 1)])

    best = None
    for a0, b0 in [(1.0, 0.5), (0.1, 0.1), (5.0, 0.9), (0.5, 0.01), (20.0, 0.99)]:
        res = optimize.least_squares(residual, np.array([math.log(a0), special.logit(b0)]), xtol=1e-14,
                                     ftol=1e-14, gtol=1e-14, max_nfev=2000)
        if best is None or res.cost < best.cost:
            best = res
    if best is None or not np.all(np.abs(best.fun) < 1e-6):
        return None
    return k, math.exp(best.x[0]), float(special.expit(best.x[1]))


def snb(hist: dict[int, int], n: int, big_n: float) -> float | None:
    """The SNB model (Chen & Keller-McNulty 1998; ARX ``ModelSNB``; :func:`snb_fit`): population uniques
    ``K·β^α`` (``P(F = 1) = β^α``)."""
    if hist.get(1, 0) == 0:
        return 0.0
    fit = snb_fit(hist, n / big_n)
    if fit is None:
        return None
    k, alpha, beta = fit
    uniques = k * beta ** alpha
    return _fraction(uniques, big_n) if 0 <= uniques <= big_n else None


def _fraction(uniques: float, big_n: float) -> float | None:
    return float(uniques / big_n) if math.isfinite(uniques) else None


def uniqueness(sizes: np.ndarray, sampling_fraction: float) -> Uniqueness:
    """Every population-uniqueness estimate and Dankar et al.'s decision rule for a sample drawn with
    ``sampling_fraction`` (``N = n/π``).

    Examples
    --------
    The whole population (sampling fraction 1): two of the seven records are alone in their class:

    >>> import numpy as np
    >>> from graphlink.qi.risk import uniqueness
    >>> u = uniqueness(np.array([1, 1, 2, 3]), 1.0)
    >>> round(u.sample, 4), u.population_size
    (0.2857, 7.0)
    """
    if not 0.0 < sampling_fraction <= 1.0:
        raise ReleaseError(f"the sampling fraction must lie in (0, 1], got {sampling_fraction}")
    hist = size_histogram(sizes)
    n = int(np.asarray(sizes).sum())
    big_n = n / sampling_fraction
    sample = hist.get(1, 0) / n
    if hist.get(1, 0) == 0:
        return Uniqueness(0.0, sampling_fraction, big_n, 0.0, 0.0, 0.0, 0.0, "none")
    z, p, s = zayatz(hist, n, big_n), pitman(hist, n, big_n), snb(hist, n, big_n)
    if sampling_fraction <= DANKAR_PITMAN_FRACTION:
        chosen, model = (p, "pitman") if p else (z, "zayatz")
    elif s:
        chosen, model = (z, "zayatz") if z is not None and z < s else (s, "snb")
    else:
        chosen, model = z, "zayatz"
    return Uniqueness(sample, sampling_fraction, big_n, z, p, s, chosen, model)


# ---------------------------------------------------------------------------------------------- attributes
def _codes(frame: pd.DataFrame, qi: Sequence[str]) -> tuple[list[np.ndarray], list[int]]:
    cols, cards = [], []
    for c in qi:
        codes, uniq = pd.factorize(as_labels(frame[c]))
        cols.append(codes.astype(np.int64))
        cards.append(max(len(uniq), 1))
    return cols, cards


def attribute_sets(frame: pd.DataFrame, qi: Sequence[str]) -> tuple[AttributeSetRisk, ...]:
    """Distinction and separation of every non-empty subset of the QI (by size, then QI order); empty when the
    QI has more than 12 columns (2^m − 1 sets)."""
    m, n = len(qi), len(frame)
    if (1 << m) - 1 > MAX_SETS:
        return ()
    cols, cards = _codes(frame, qi)
    pairs = n * (n - 1)
    out = []
    for size in range(1, m + 1):
        for combo in itertools.combinations(range(m), size):
            keys, _ = pack([cols[i] for i in combo], [cards[i] for i in combo])
            f = np.unique(keys, return_counts=True)[1].astype(np.float64)
            separation = 1.0 - float((f * (f - 1)).sum()) / pairs if pairs else 1.0
            out.append(AttributeSetRisk(tuple(qi[i] for i in combo), len(f) / n, separation))
    return tuple(out)


# ---------------------------------------------------------------------------------------------- summary
def population_sizes(frame: pd.DataFrame, qi: Sequence[str], population: pd.DataFrame, classes_values: pd.DataFrame,
                     sizes: np.ndarray, source: str | None = None) -> np.ndarray:
    """``F_j``: the size in ``population`` of each sample class (given by its QI values). Refuses a sample
    class the population does not hold at least as often (the sample must be drawn from it)."""
    check_columns(population, list(qi), source, role="quasi-identifier (population table)")
    pop = pd.DataFrame({c: as_labels(population[c]) for c in qi})
    counts = pop.groupby(list(qi), sort=False).size().rename("F").reset_index()
    merged = classes_values.astype(str).merge(counts.astype({c: str for c in qi}), on=list(qi), how="left")
    big = merged["F"].to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~(big >= sizes))
    if len(bad):
        j = int(bad[0])
        values = ", ".join(f"{c}={classes_values.iloc[j][c]}" for c in qi)
        have = 0 if math.isnan(big[j]) else int(big[j])
        raise ReleaseError(f"the population table holds {values} {have} time(s) but the table {int(sizes[j])}; "
                           "the table must be a sample of the population", file=source)
    return big


def risk(frame: pd.DataFrame, qi: Sequence[str], *, threshold: float = 0.2, population: pd.DataFrame | None = None,
         sampling_fraction: float | None = None, attributes: bool = True, source: str | None = None,
         population_source: str | None = None) -> RiskSummary:
    """The re-identification risk of ``frame`` over ``qi`` (module docstring).

    Parameters
    ----------
    frame : DataFrame
        The table as released (values compared as they are).
    qi : sequence of str
        The quasi-identifier columns.
    threshold : float
        A record is *at risk* when its risk exceeds this (ARX's default 0.2 = classes smaller than 5).
    population : DataFrame, optional
        The population the table was drawn from, for the journalist and marketer; its size also gives the
        sampling fraction.
    sampling_fraction : float, optional
        ``n/N`` when no population table is given: journalist/marketer class sizes estimated as ``f/π`` and the
        population-uniqueness estimates. Without either, the population is the table itself and no
        uniqueness estimate is made.
    attributes : bool
        Whether to compute distinction/separation of every attribute set.

    Returns
    -------
    RiskSummary

    Examples
    --------
    >>> import pandas as pd
    >>> r = risk(pd.DataFrame({"zip": ["1", "1", "2"]}), ["zip"])
    >>> r.prosecutor.highest, r.prosecutor.average
    (1.0, 0.6666666666666666)
    """
    if not 0.0 <= threshold <= 1.0:
        raise ReleaseError(f"the risk threshold must lie in [0, 1], got {threshold}")
    if population is not None and sampling_fraction is not None:
        raise ReleaseError("give a population table or a sampling fraction, not both")
    classes = equivalence_classes(frame, qi, source=source)
    f = classes.sizes.astype(np.float64)
    n = len(frame)
    if population is not None:
        big = population_sizes(frame, qi, population, classes.values, f, population_source)
        where, fraction = "population table", n / len(population)
    elif sampling_fraction is not None:
        if not 0.0 < sampling_fraction <= 1.0:
            raise ReleaseError(f"the sampling fraction must lie in (0, 1], got {sampling_fraction}")
        big, where, fraction = f / sampling_fraction, "sampling fraction", sampling_fraction
    else:
        big, where, fraction = f, "table", None
    return RiskSummary(
        rows=n, classes=len(f), threshold=threshold, population=where,
        prosecutor=prosecutor(f, threshold), journalist=journalist(f, big, threshold), marketer=marketer(f, big),
        distribution=distribution(f),
        uniqueness=uniqueness(f, fraction) if fraction is not None else None,
        attribute_sets=attribute_sets(frame, list(qi)) if attributes else ())
