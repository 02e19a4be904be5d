"""Synthetic populations for trail re-identification studies (thesis ch. 5.4, 5.6, Appendix A).

Every generator draws a :class:`Population` — the subjects' visit matrix plus which released records the
reserved side withholds — and turns it into a :class:`graphlink.core.release.Release` (with ``release.truth`` set)
or into plain DataFrames.

Model (thesis §5.6 and §5.3.2/§5.4):

* Subject ``x`` visits location ``c`` independently with probability ``p_c``: uniform (``p_c = p``), Zipf
  (eq. 5.1: the location of popularity rank ``r`` is visited with probability ``r^(-alpha)``), or explicit
  per-location probabilities (e.g. ``visitors / population`` read from a CSV of location popularities, as the
  Homenet-based scaling study of §5.4 does).
* At a visited location both the identified record (key ``p000123``) and the de-identified record (key
  ``s000123``) are released, except that the *reserved* side loses each of its records independently with
  probability ``withhold`` (one rate, Figure 5.8's ``miss``; or one rate per location, §5.4's
  ``1 - purchasers/visitors``). ``reserved="none"`` withholds nothing.
* One-to-many (Appendix A): households of several members. Each member has an identified trail of their own;
  the household has one de-identified element whose trail is the union (OR) of its members' trails (one shared
  computer / IP address). Default household sizes are Homenet's: 56, 9, 14, 5, 1, 1 households of size 1–6.

Subjects who visit nothing appear in no table and therefore not in the release. The truth table lists
the pairs (identified, de-identified) whose *both* elements appear in the release.

Determinism: the same arguments and ``seed`` give bit-identical output (numpy ``default_rng(seed)``; visits
are drawn before withholding, so changing only ``withhold`` keeps the same visits — common random numbers).

Complexity: O(n·|C|) time and memory for the draw; the release has O(Σ visits) rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from graphlink.errors import ReleaseError

if TYPE_CHECKING:  # pragma: no cover
    from graphlink.core.release import Release

Reserved = Literal["deidentified", "identified", "none"]
RESERVED_CHOICES: tuple[str, ...] = ("deidentified", "identified", "none")

#: Homenet household sizes (thesis §5.2 / Appendix A): number of households of size 1, 2, ..., 6.
HOMENET_HOUSEHOLD_SIZES: tuple[int, ...] = (56, 9, 14, 5, 1, 1)

RateLike = float | Sequence[float] | np.ndarray
#: the largest draw (subjects × locations) a generator attempts: the draw needs about 20 bytes per cell at
#: its peak, so this is ~10 GB; larger requests are refused up front instead of failing to allocate
MAX_CELLS = 500_000_000


def check_size(subjects: int, locations: int) -> None:
    """Refuse a draw of ``subjects × locations`` cells above :data:`MAX_CELLS` (ReleaseError). O(1)."""
    if int(subjects) * int(locations) > MAX_CELLS:
        what = f"{int(subjects):,} subjects × " if int(subjects) > 1 else ""
        raise ReleaseError(f"{what}{int(locations):,} locations is more than the generator draws at once "
                           f"(at most {MAX_CELLS:,} cells, about 20 bytes each)")


def check_seed(seed: object) -> None:
    """Refuse a negative integer seed (numpy's generators need non-negative entropy). O(1)."""
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed < 0:
        raise ReleaseError(f"the seed must be a non-negative integer, got {seed}")


# --------------------------------------------------------------------------------------------------
# keys and probability helpers


def location_names(n: int) -> list[str]:
    """``L01``, ``L02``, ... zero-padded to at least two digits (wider when ``n >= 100``)."""
    width = max(2, len(str(n)))
    return [f"L{i:0{width}d}" for i in range(1, n + 1)]


def element_keys(prefix: str, n: int) -> np.ndarray:
    """Object array ``prefix000001 .. prefix{n}``: 1-based, zero-padded to at least six digits."""
    width = max(6, len(str(n)))
    return np.array([f"{prefix}{i:0{width}d}" for i in range(1, n + 1)], dtype=object)


def zipf_probabilities(locations: int, alpha: float) -> np.ndarray:
    """Visit probabilities of thesis eq. 5.1: the location of popularity rank ``r`` (1-based) is visited with
    probability ``r^(-alpha)``. ``alpha = 0`` is uniform with p = 1; ``alpha = 1`` is a true Zipf.
    Location ``L01`` has rank 1 (most visited). O(|C|)."""
    if locations < 1:
        raise ReleaseError(f"locations must be at least 1, got {locations}")
    check_size(1, locations)
    if not np.isfinite(alpha) or alpha < 0:
        raise ReleaseError(f"Zipf alpha must be >= 0, got {alpha}")
    return np.arange(1, locations + 1, dtype=float) ** (-float(alpha))


def _check_prob_vector(values: RateLike, n: int, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ReleaseError(f"{what}: expected one value per location ({n}), got {arr.shape[0]}")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ReleaseError(f"{what}: value {float(arr[i])} at location {i + 1} is not a probability in [0, 1]")
    return arr


def read_popularities(path: str | Path, population: int | None = None) -> pd.DataFrame:
    """Read a CSV of location popularities (thesis §5.4) into columns ``location``, ``p``, ``withhold``.

    Accepted columns (names case-insensitive): ``location`` (optional; default ``L01``...), and either
    ``p`` / ``probability`` (visit probability) or ``visitors`` (divided by ``population``, taken from the
    argument or a ``population`` column). Optional withholding: ``withhold`` (rate) or ``purchasers`` (rate
    ``1 - purchasers/visitors``, the §5.4 model). Missing withholding gives NaN (the caller's global rate
    applies). The file rules (encoding, quoting, blank rows, row numbers) are those of
    :mod:`graphlink.core.tabular`; a value that is not a number in range is refused naming its row and column.
    O(rows)."""
    from graphlink.core.tabular import read_table

    table = read_table(path, expected="location,p (or probability, or visitors)")
    file = table.file
    if table.n_rows == 0:
        raise ReleaseError("popularity CSV has no rows", file=file)
    cols: dict[str, str] = {}
    for name in table.names:
        key = name.lower()
        if key in cols:
            raise ReleaseError(f"column {name!r} appears twice (names are case-insensitive)", file=file,
                               column=name)
        cols[key] = name

    def text(key: str) -> pd.Series:
        return table.column(cols[key]).reset_index(drop=True).astype(object)

    def number(key: str) -> pd.Series:
        return pd.to_numeric(text(key), errors="coerce").astype(float)

    def refuse(bad: np.ndarray, key: str, what: str) -> None:
        row = int(np.flatnonzero(bad)[0])
        raise ReleaseError(f"{what} {text(key).iloc[row]!r} is not in [0, 1]", file=file,
                           row=table.row_of(row), column=cols[key])

    out = pd.DataFrame()
    if "location" in cols:
        locs = text("location").map(lambda v: str(v).strip())
        blank = (locs == "").to_numpy()
        if blank.any():
            raise ReleaseError("empty location name", file=file, row=table.row_of(int(blank.argmax())),
                               column=cols["location"])
        dup = locs.duplicated().to_numpy()
        if dup.any():
            raise ReleaseError(f"location {locs.iloc[int(dup.argmax())]!r} appears twice", file=file,
                               row=table.row_of(int(dup.argmax())), column=cols["location"])
        out["location"] = locs
    else:
        out["location"] = pd.Series(location_names(table.n_rows))
    visitors = None
    if "p" in cols or "probability" in cols:
        key = "p" if "p" in cols else "probability"
        p = number(key)
    elif "visitors" in cols:
        key = "visitors"
        visitors = number(key)
        bad = (visitors.isna() | ~np.isfinite(visitors) | (visitors < 0)).to_numpy()
        if bad.any():
            row = int(bad.argmax())
            raise ReleaseError(f"visitors {text(key).iloc[row]!r} is not a non-negative number", file=file,
                               row=table.row_of(row), column=cols[key])
        pop = population
        if pop is None and "population" in cols:
            pop = number("population").max()
        if pop is None or not np.isfinite(pop) or pop <= 0:
            raise ReleaseError("column 'visitors' needs a positive population size (a population parameter or a "
                               "'population' column)", file=file)
        p = visitors / float(pop)
    else:
        raise ReleaseError(f"expected a column 'p', 'probability' or 'visitors' (found: "
                           f"{', '.join(map(repr, table.names))})", file=file)
    bad = (p.isna() | (p < 0) | (p > 1)).to_numpy()
    if bad.any():
        refuse(bad, key, "visit probability")
    out["p"] = p.to_numpy(dtype=float)
    w = pd.Series(np.nan, index=out.index)
    if "withhold" in cols:
        key = "withhold"
        w = number(key)
    elif "purchasers" in cols:
        key = "purchasers"
        if visitors is None:
            raise ReleaseError("column 'purchasers' needs a 'visitors' column", file=file)
        purchasers = number(key)
        bad = (purchasers.isna() | (purchasers < 0)).to_numpy()
        if bad.any():
            row = int(bad.argmax())
            raise ReleaseError(f"purchasers {text(key).iloc[row]!r} is not a non-negative number", file=file,
                               row=table.row_of(row), column=cols[key])
        with np.errstate(divide="ignore", invalid="ignore"):
            w = 1.0 - purchasers / visitors.replace(0, np.nan)
        w = w.fillna(0.0)                # nobody visited: nothing to withhold
    if "withhold" in cols or "purchasers" in cols:
        badw = (w.isna() | (w < 0) | (w > 1)).to_numpy()
        if badw.any():
            refuse(badw, key, "withholding rate")
    out["withhold"] = w.to_numpy(dtype=float)
    return out


# --------------------------------------------------------------------------------------------------
# the population


@dataclass(frozen=True)
class Population:
    """A drawn synthetic population (the matrices; see :meth:`to_release` for the release).

    ``visits[x, c]`` — identified subject ``x`` visited location ``c`` (its identified trail).
    ``household[x]`` — index of the de-identified element of subject ``x`` (``arange(n)`` when one-to-one).
    ``deid_visits[h, c]`` — de-identified element ``h`` was seen at ``c`` (OR over its members).
    ``withheld_identified`` / ``withheld_deidentified`` — the record at ``(row, c)`` is withheld (only
    meaningful where the element visited ``c``; all False on the side that is not reserved).
    """

    visits: np.ndarray
    household: np.ndarray
    deid_visits: np.ndarray
    withheld_identified: np.ndarray
    withheld_deidentified: np.ndarray
    locations: list[str]
    probabilities: np.ndarray
    withhold_rates: np.ndarray
    reserved: str
    seed: int | None
    name: str = "simulated"
    meta: dict = field(default_factory=dict)

    # sizes ---------------------------------------------------------------------------------------
    @property
    def n_identified(self) -> int:
        return int(self.visits.shape[0])

    @property
    def n_deidentified(self) -> int:
        return int(self.deid_visits.shape[0])

    @property
    def one_to_one(self) -> bool:
        return self.n_identified == self.n_deidentified and bool(
            np.array_equal(self.household, np.arange(self.n_identified)))

    def identified_keys(self) -> np.ndarray:
        return element_keys("p", self.n_identified)

    def deidentified_keys(self) -> np.ndarray:
        return element_keys("s", self.n_deidentified)

    # released records (boolean masks) ------------------------------------------------------------
    def released_identified(self) -> np.ndarray:
        """(n_identified, |C|) bool: identified record released at that location."""
        return self.visits & ~self.withheld_identified

    def released_deidentified(self) -> np.ndarray:
        """(n_deidentified, |C|) bool: de-identified record released at that location."""
        return self.deid_visits & ~self.withheld_deidentified

    # frames --------------------------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """The release as a long table ``location, kind, element`` (location-major, identified first).
        O(rows)."""
        locs = np.asarray(self.locations, dtype=object)
        parts = []
        for kind, mask, keys in (("identified", self.released_identified(), self.identified_keys()),
                                 ("deidentified", self.released_deidentified(), self.deidentified_keys())):
            c, r = np.nonzero(mask.T)
            parts.append(pd.DataFrame({"location": locs[c], "kind": kind, "element": keys[r]}, copy=False))
        df = pd.concat(parts, ignore_index=True)
        order = np.argsort(pd.Categorical(df["location"], categories=self.locations).codes, kind="stable")
        return df.iloc[order].reset_index(drop=True)

    def truth_frame(self) -> pd.DataFrame:
        """Truth pairs ``identified, deidentified`` whose both elements appear in the release."""
        present_i = self.released_identified().any(axis=1)
        present_d = self.released_deidentified().any(axis=1)
        rows = np.flatnonzero(present_i & present_d[self.household])
        return pd.DataFrame({"identified": self.identified_keys()[rows],
                             "deidentified": self.deidentified_keys()[self.household[rows]]})

    def to_release(self, name: str | None = None) -> Release:
        """Build the validated :class:`graphlink.core.release.Release` with ``truth`` set."""
        from graphlink.core.release import read_release

        frame = self.frame()
        if frame.empty:
            raise ReleaseError("the simulated population released nothing (every visit probability is 0?)")
        return read_release(frame, name=name or self.name, truth=self.truth_frame())

    def write(self, out: str | Path, truth: str | Path | None = None) -> None:
        """Write the release (CSV; Parquet when ``out`` ends in ``.parquet``) and optionally the truth CSV.

        Atomic (:mod:`graphlink.fileio`): both files are written completely before either replaces its target,
        so an interrupted run leaves the previous files, never a partial release or a release without its truth.
        """
        from contextlib import ExitStack

        from graphlink.fileio import atomic_path, frame_writer

        with ExitStack() as stack:
            tmp_out = stack.enter_context(atomic_path(out))
            frame_writer(self.frame(), out)(tmp_out)
            if truth is not None:
                tmp_truth = stack.enter_context(atomic_path(truth))
                self.truth_frame().to_csv(tmp_truth, index=False)

    # statistics used by the experiments ----------------------------------------------------------
    def visit_frequencies(self) -> np.ndarray:
        """Observed fraction of identified subjects visiting each location (f_c of §5.6.1)."""
        return self.visits.mean(axis=0) if self.n_identified else np.zeros(len(self.locations))


def _draw_withheld(rng: np.random.Generator, shape: tuple[int, int], rates: np.ndarray,
                   on: bool) -> np.ndarray:
    u = rng.random(shape)  # always drawn: the stream does not depend on the rates (common random numbers)
    if not on:
        return np.zeros(shape, dtype=bool)
    return u < rates[None, :]


def draw_population(subjects: int, probabilities: RateLike, *, withhold: RateLike = 0.0,
                    reserved: Reserved = "deidentified", seed: int | None = None,
                    household_sizes: Sequence[int] | np.ndarray | None = None,
                    locations: Sequence[str] | None = None, name: str = "simulated",
                    meta: Mapping | None = None) -> Population:
    """General generator: independent Bernoulli visits with per-location probabilities (thesis §5.4, §5.6).

    ``subjects`` is the number of identified subjects, or — when ``household_sizes`` (one size per
    household) is given — ignored in favour of ``sum(household_sizes)`` members in ``len(household_sizes)``
    households (Appendix A; the household's de-identified trail is the OR of its members' trails).
    ``withhold`` is one rate or one per location, applied to each record of the ``reserved`` side.
    O(n·|C|)."""
    if reserved not in RESERVED_CHOICES:
        raise ReleaseError(f"reserved must be one of {', '.join(RESERVED_CHOICES)}, got {reserved!r}")
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim != 1 or probs.size == 0:
        raise ReleaseError("need at least one location probability")
    C = probs.size
    probs = _check_prob_vector(probs, C, "visit probability")
    rates = _check_prob_vector(withhold, C, "withholding rate")
    names = list(locations) if locations is not None else location_names(C)
    if len(names) != C:
        raise ReleaseError(f"{len(names)} location names for {C} probabilities")
    if household_sizes is not None:
        sizes = np.asarray(household_sizes, dtype=np.int64)
        if sizes.ndim != 1 or sizes.size == 0 or (sizes < 1).any():
            raise ReleaseError("household sizes must be a non-empty list of positive integers")
        check_size(int(sizes.sum()), C)
        household = np.repeat(np.arange(sizes.size), sizes)
        n = int(sizes.sum())
    else:
        if int(subjects) != subjects or subjects < 1:
            raise ReleaseError(f"subjects must be a positive integer, got {subjects}")
        check_size(subjects, C)
        n = int(subjects)
        household = np.arange(n)
    check_size(n, C)
    check_seed(seed)
    rng = np.random.default_rng(seed)
    visits = rng.random((n, C)) < probs[None, :]
    n_h = int(household[-1]) + 1
    if household_sizes is None:
        deid_visits = visits
    else:
        deid_visits = np.zeros((n_h, C), dtype=bool)
        np.logical_or.at(deid_visits, household, visits)
    w_id = _draw_withheld(rng, (n, C), rates, reserved == "identified")
    w_de = _draw_withheld(rng, (n_h, C), rates, reserved == "deidentified")
    return Population(visits=visits, household=household, deid_visits=deid_visits, withheld_identified=w_id,
                      withheld_deidentified=w_de, locations=names, probabilities=probs,
                      withhold_rates=rates if reserved != "none" else np.zeros(C), reserved=reserved,
                      seed=seed, name=name, meta=dict(meta or {}))


def uniform_population(subjects: int, locations: int, p: float, withhold: RateLike = 0.0,
                       reserved: Reserved = "deidentified", seed: int | None = None) -> Population:
    """Uniform visits (thesis §5.6: every b_{x,c} = 1 with probability p). O(n·|C|)."""
    if locations < 1:
        raise ReleaseError(f"locations must be at least 1, got {locations}")
    check_size(1, locations)
    probs = _check_prob_vector(p, locations, "visit probability p")
    return draw_population(subjects, probs, withhold=withhold, reserved=reserved, seed=seed,
                           name=f"uniform-n{subjects}-c{locations}-p{p}",
                           meta={"distribution": "uniform", "p": p})


def zipf_population(subjects: int, locations: int, alpha: float, withhold: RateLike = 0.0,
                    reserved: Reserved = "deidentified", seed: int | None = None) -> Population:
    """Zipf visits (thesis eq. 5.1: rank r visited with probability r^(-alpha)). O(n·|C|)."""
    return draw_population(subjects, zipf_probabilities(locations, alpha), withhold=withhold,
                           reserved=reserved, seed=seed, name=f"zipf-n{subjects}-c{locations}-a{alpha}",
                           meta={"distribution": "zipf", "alpha": alpha})


def household_sizes_from_weights(households: int | None, weights: Sequence[float] = HOMENET_HOUSEHOLD_SIZES,
                                 seed: int | None = None) -> np.ndarray:
    """Sizes of ``households`` households: ``weights[k]`` is the relative frequency of size ``k + 1``.

    ``households=None`` returns the weights taken as exact counts (default: Homenet's 86 households —
    56×1, 9×2, 14×3, 5×4, 1×5, 1×6, i.e. 147 members). Otherwise sizes are drawn i.i.d. from the
    normalised weights with ``default_rng(seed)`` (the caller passes a derived seed). O(households)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise ReleaseError("household size weights must be non-negative with a positive sum")
    if households is None:
        if not np.allclose(w, np.round(w)):
            raise ReleaseError("without a household count the weights must be whole counts")
        check_size(float(np.round(w) @ np.arange(1, w.size + 1)), 1)
        return np.repeat(np.arange(1, w.size + 1), np.round(w).astype(np.int64))
    if households < 1:
        raise ReleaseError(f"households must be at least 1, got {households}")
    check_size(households, 1)
    check_seed(seed)
    rng = np.random.default_rng(seed)
    return rng.choice(np.arange(1, w.size + 1), size=int(households), p=w / w.sum())


def household_population(households: int | None, probabilities: RateLike, *,
                         size_weights: Sequence[float] = HOMENET_HOUSEHOLD_SIZES, withhold: RateLike = 0.0,
                         reserved: Reserved = "identified", seed: int | None = None,
                         locations: int | None = None) -> Population:
    """One-to-many population (thesis Appendix A): members' identified trails, one de-identified element per
    household whose trail is the OR of its members' trails. ``probabilities`` is a vector, or a scalar
    uniform p with ``locations`` given. Default ``reserved="identified"`` follows Appendix A (the members'
    purchase lists are reserved to the household IP logs). O(members·|C|)."""
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim == 0:
        if locations is None:
            raise ReleaseError("a scalar visit probability needs the number of locations")
        check_size(1, locations)
        probs = np.full(int(locations), float(probs))
    check_seed(seed)
    ss = np.random.SeedSequence(seed)
    size_seed, draw_seed = (int(s.generate_state(1)[0]) for s in ss.spawn(2))
    sizes = household_sizes_from_weights(households, size_weights, seed=size_seed)
    return draw_population(0, probs, withhold=withhold, reserved=reserved, seed=draw_seed,
                           household_sizes=sizes, name=f"households-h{sizes.size}-c{probs.size}",
                           meta={"distribution": "households", "sizes": np.bincount(sizes).tolist()})


# --------------------------------------------------------------------------------------------------
# the core contract (docs/core-api.md) and release-returning conveniences


def simulate_uniform(subjects: int, locations: int, p: float, withhold: float = 0.0,
                     reserved: Reserved = "deidentified", seed: int | None = None) -> Release:
    """A uniform synthetic release with ground truth (thesis §5.6).

    Each subject visits each location with probability ``p``; at a visited location the identified record is
    released, and the record of the ``reserved`` side is withheld with probability ``withhold`` (``"none"``
    withholds nothing).  Keys ``p000001`` / ``s000001``, locations ``L01``....  Deterministic for a seed.

    Parameters
    ----------
    subjects, locations : int
    p : float
        Visit probability.
    withhold : float
        Withholding rate on the reserved side.
    reserved : {"deidentified", "identified", "none"}
    seed : int, optional

    Returns
    -------
    Release
        With ``truth`` set (the pairs whose both elements were released).

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.simulate_uniform(200, 12, 0.3, withhold=0.2, seed=1)
    >>> len(release.locations), release.truth is not None
    (12, True)
    >>> gl.reidentify(release, "true-loves").summary.wrong
    0

    Complexity: O(n·|C|).
    """
    return uniform_population(subjects, locations, p, withhold, reserved, seed).to_release()


def simulate_zipf(subjects: int, locations: int, alpha: float, withhold: RateLike = 0.0,
                  reserved: Reserved = "deidentified", seed: int | None = None) -> Release:
    """Zipf release (Malin 2006 eq. 5.1: the location of rank r is visited with probability r^(-alpha)) with
    ground truth.  Deterministic for a seed.  O(n·|C|).

    Parameters
    ----------
    subjects, locations : int
    alpha : float
        Zipf exponent (0: every location visited with probability 1).
    withhold : float or sequence of float
        Withholding rate on the reserved side (one per location, or one for all).
    reserved : {"deidentified", "identified", "none"}
    seed : int, optional

    Returns
    -------
    Release
        With ``truth`` set.

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.simulate_zipf(300, 10, 1.0, seed=2)
    >>> len(release.locations), len(release.truth)
    (10, 300)
    >>> gl.reidentify(release, "true-loves").summary.wrong
    0
    """
    return zipf_population(subjects, locations, alpha, withhold, reserved, seed).to_release()


def simulate_probabilities(subjects: int, probabilities: RateLike, withhold: RateLike = 0.0,
                           reserved: Reserved = "deidentified", seed: int | None = None,
                           locations: Sequence[str] | None = None) -> Release:
    """Release from explicit per-location visit probabilities and (optionally per-location) withholding
    rates (§5.4). O(n·|C|).

    Examples
    --------
    Fifty subjects and three locations visited with probabilities 0.5, 0.2 and 0.9 (seeded); the truth holds the
    subjects who visit at least one location:

    >>> from graphlink.simulation.simulate import simulate_probabilities
    >>> release = simulate_probabilities(50, [0.5, 0.2, 0.9], seed=1)
    >>> sorted(release.frame["location"].unique()), len(release.truth)
    (['L01', 'L02', 'L03'], 48)
    """
    return draw_population(subjects, probabilities, withhold=withhold, reserved=reserved, seed=seed,
                           locations=locations).to_release()


def simulate_households(households: int | None, probabilities: RateLike, *,
                        size_weights: Sequence[float] = HOMENET_HOUSEHOLD_SIZES, withhold: RateLike = 0.0,
                        reserved: Reserved = "identified", seed: int | None = None,
                        locations: int | None = None) -> Release:
    """One-to-many release (Malin 2006 Appendix A) with truth: several identified members per household.

    Each member's identified trail is drawn per location; the household's one de-identified element carries the
    OR of its members' trails.  Deterministic for a seed.  O(members·|C|).

    Parameters
    ----------
    households : int or None
        Number of households (sizes drawn from ``size_weights``); None takes ``size_weights`` as exact counts.
    probabilities : float or sequence of float
        Visit probability per location, or one for all (then ``locations`` is needed).
    size_weights : sequence of float
        Relative frequency of household size 1, 2, ... (default: Homenet's 86 households).
    withhold : float or sequence of float
        Withholding rate on the reserved side.
    reserved : {"identified", "deidentified", "none"}
        Default ``"identified"`` as in Appendix A.
    seed : int, optional
    locations : int, optional
        The number of locations when ``probabilities`` is one number.

    Returns
    -------
    Release
        With ``truth`` (member, household) pairs.

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.simulate_households(50, 0.4, seed=3, locations=6)
    >>> len(release.locations), len(release.truth)
    (6, 73)
    >>> gl.build_trails(release).multiplicity
    'one-to-many'
    """
    return household_population(households, probabilities, size_weights=size_weights, withhold=withhold,
                                reserved=reserved, seed=seed, locations=locations).to_release()
