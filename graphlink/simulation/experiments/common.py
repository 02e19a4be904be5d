"""Shared machinery for the simulation experiments (thesis ch. 5, 9): results, parallel map with a progress bar,
fast REIDIT-C on trail equality, and the bridge from a :class:`~graphlink.simulation.simulate.Population` to the core's
trails / link graph for REIDIT-I, REIDIT-I-K and true loves.

Every experiment runner has the registry signature
``run(*, runs: int | None = None, seed: int = 0, out: Path | str = "experiments", small: bool = False,
progress=None, workers: int | None = None) -> ExperimentResult``; ``progress`` is ``None`` (a rich progress bar
on stderr) or a callable ``progress(done, total)`` (the Streamlit app passes one), or ``False`` (silent).
An experiment with a quick and a thesis-size preset writes only ``body(settings: RunSettings)`` and gets that
signature from :func:`with_presets`.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphlink.simulation.simulate import Population

ProgressArg = Callable[[int, int], None] | bool | None


@dataclass
class ExperimentResult:
    """What an experiment produced: the tidy table, the files written and the thesis comparison."""

    name: str
    frame: pd.DataFrame
    csv: Path
    png: Path
    comparison: str
    summary: dict[str, Any] = field(default_factory=dict)
    extra_files: list[Path] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.name}: wrote {self.csv} and {self.png}\n{self.comparison}"


# ------------------------------------------------------------------------------------------------------------
# parallel map with progress


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def parallel_map(fn: Callable[[Any], Any], tasks: Sequence[Any], *, workers: int | None = None,
                 progress: ProgressArg = None, description: str = "simulating") -> list[Any]:
    """Apply ``fn`` to every task, in a process pool of ``workers`` (default: both cores) when there is more
    than one task, showing a rich progress bar (or calling ``progress(done, total)``). Results are returned in
    task order, so output is deterministic regardless of scheduling. ``fn`` must be a module-level function."""
    total = len(tasks)
    workers = default_workers() if workers is None else max(1, workers)
    results: list[Any] = [None] * total
    bar = None
    tick: Callable[[int], None]
    if progress is None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), transient=False)
        bar.start()
        tid = bar.add_task(description, total=total)

        def tick(done: int) -> None:
            bar.update(tid, completed=done)
    elif callable(progress):
        def tick(done: int) -> None:
            progress(done, total)
    else:
        def tick(done: int) -> None:
            return None
    try:
        if workers == 1 or total <= 1:
            for i, t in enumerate(tasks):
                results[i] = fn(t)
                tick(i + 1)
        else:
            # forkserver, not fork: the parent may already run numba/threaded code, which is not fork-safe
            ctx = multiprocessing.get_context("forkserver")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init) as pool:
                futures = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
                for done, fut in enumerate(as_completed(futures), start=1):
                    results[futures[fut]] = fut.result()
                    tick(done)
    finally:
        if bar is not None:
            bar.stop()
    return results


def gather_rows(measure: Callable[[Any], list[dict[str, Any]]], tasks: Sequence[Any], *, workers: int | None = None,
                progress: ProgressArg = None, description: str = "simulating") -> pd.DataFrame:
    """Run ``measure`` on every task (:func:`parallel_map`) and stack the row dicts each returns into one
    table, in task order."""
    parts = parallel_map(measure, tasks, workers=workers, progress=progress, description=description)
    return pd.DataFrame([row for part in parts for row in part])


def _worker_init() -> None:
    """One numba thread per worker process: the pool already uses every core (no oversubscription)."""
    from graphlink.config import export

    export("NUMBA_NUM_THREADS", "1", replace=True)
    try:
        import numba

        numba.set_num_threads(1)
    except Exception:  # numba absent or already fixed: nothing to tune
        pass


def task_seed(seed: int, *parts: int) -> list[int]:
    """A deterministic per-task seed (numpy accepts a sequence of ints as entropy)."""
    return [int(seed), *[int(p) for p in parts]]


# ------------------------------------------------------------------------------------------------------------
# REIDIT-C on trail equality (thesis Alg. 2/3), vectorised


def pack_rows(mask: np.ndarray) -> np.ndarray:
    """One hashable key per row of a 0/1 matrix: an int64 when |C| ≤ 62, else the packed bytes. O(n·|C|)."""
    mask = np.asarray(mask, dtype=bool)
    n, C = mask.shape
    if C <= 62:
        return mask.astype(np.int64) @ (np.int64(1) << np.arange(C, dtype=np.int64))
    packed = np.ascontiguousarray(np.packbits(mask, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def reidit_c_matrix(identified: np.ndarray, deidentified: np.ndarray,
                    partner: np.ndarray | None = None) -> tuple[int, int]:
    """REIDIT-C (thesis Alg. 2/3) on unreserved 0/1 trail matrices, by sorting: an identified trail is
    re-identified when its pattern is non-empty, occurs exactly once among the identified trails and exactly
    once among the de-identified trails. Rows that are all 0 are elements absent from the release.
    Returns (re-identified, correct); ``partner[i]`` is the true de-identified row of identified row i
    (default: the same row). O(n log n · |C|/64)."""
    km, kn = pack_rows(identified), pack_rows(deidentified)
    if partner is None:
        partner = np.arange(len(km))
    zero_m = ~np.asarray(identified, bool).any(axis=1)
    zero_n = ~np.asarray(deidentified, bool).any(axis=1)
    um, im, cm = np.unique(km, return_inverse=True, return_counts=True)
    un, cn = np.unique(kn[~zero_n], return_counts=True)
    ones_n = un[cn == 1]
    uniq_m = (cm[im] == 1) & ~zero_m
    hit = uniq_m & np.isin(km, ones_n)
    correct = hit & (kn[partner] == km) & ~zero_n[partner]
    return int(hit.sum()), int(correct.sum())


# ------------------------------------------------------------------------------------------------------------
# bridge to the core (trails built directly from the simulated matrices)


def _pack_bits(mask: np.ndarray) -> np.ndarray:
    """(n, C) bool -> (n, W) uint64, bit c in word c // 64, bit c % 64 (docs/core-api.md)."""
    mask = np.asarray(mask, dtype=bool)
    n, C = mask.shape
    W = max(1, (C + 63) // 64)
    out = np.zeros((n, W), dtype=np.uint64)
    for w in range(W):
        block = mask[:, w * 64:(w + 1) * 64].astype(np.uint64)
        out[:, w] = block @ (np.uint64(1) << np.arange(block.shape[1], dtype=np.uint64))
    return out


def population_trails(pop: Population, reserved: str | None = None):
    """FillTrails (thesis Alg. 1, equality reading, as :func:`graphlink.core.trails.build_trails`) straight from
    the population's masks, without building the long release table: the rows are the elements present in the
    release; the reserved side gets ``*`` where absent except at locations where both sides released the same
    number of records; the complete side gets 0 (households: the one-to-many fill of
    :mod:`graphlink.core.trails`). ``reserved`` defaults to the population's. O(n·|C|).
    Equivalent to ``build_trails(pop.to_release(), reserved)`` (tested)."""
    from graphlink.core.trails import Trails, TrailSide, full_mask, pack_columns

    reserved = reserved or pop.reserved
    C = len(pop.locations)
    rel_i, rel_d = pop.released_identified(), pop.released_deidentified()
    pres_i, pres_d = np.flatnonzero(rel_i.any(axis=1)), np.flatnonzero(rel_d.any(axis=1))
    size_i, size_d = rel_i.sum(axis=0), rel_d.sum(axis=0)
    sizes = pd.DataFrame({"identified": size_i, "deidentified": size_d},
                         index=pd.Index(pop.locations, name="location"))
    equal_cols = np.flatnonzero(size_i == size_d)
    eq_row = pack_columns(np.zeros(len(equal_cols), dtype=np.int64), equal_cols, 1, C)
    sides = {}
    for kind, rel, pres, keys in (("identified", rel_i, pres_i, pop.identified_keys()),
                                  ("deidentified", rel_d, pres_d, pop.deidentified_keys())):
        r, c = np.nonzero(rel[pres])
        ones = pack_columns(r, c, len(pres), C)
        if not pop.one_to_one:        # households: the one-to-many fill ('*' wherever a member is absent)
            known = ones if kind == "identified" else full_mask(len(pres), C)
        else:
            known = (ones | eq_row) if kind == reserved else full_mask(len(pres), C)
        sides[kind] = TrailSide(keys[pres], known, ones, C)
    return Trails(list(pop.locations), sides["identified"], sides["deidentified"], reserved,
                  f"{reserved} (simulation)", sizes, "one-to-one" if pop.one_to_one else "one-to-many", "requested")


def release_of(pop: Population, columns: Iterable[int] | None = None):
    """The population's :class:`Release`, optionally restricted to some location columns."""
    from graphlink.core.release import read_release

    frame = pop.frame()
    truth = pop.truth_frame()
    if columns is not None:
        keep = [pop.locations[c] for c in columns]
        frame = frame[frame["location"].isin(keep)].reset_index(drop=True)
        present = set(frame["element"])
        truth = truth[truth["identified"].isin(present) & truth["deidentified"].isin(present)]
    return read_release(frame, name=pop.name, truth=truth.reset_index(drop=True))


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def count_correct(pairs: pd.DataFrame, truth: pd.DataFrame) -> tuple[int, int]:
    """(re-identified identified elements, of which correct) for a pairs table against a truth table."""
    if pairs is None or len(pairs) == 0:
        return 0, 0
    t = set(zip(truth["identified"], truth["deidentified"], strict=True))
    p = pairs.drop_duplicates(["identified", "deidentified"])
    ok = sum((a, b) in t for a, b in zip(p["identified"], p["deidentified"], strict=True))
    return int(p["identified"].nunique()), int(ok)


def preset(small: bool, runs: int | None, small_cfg: dict, full_cfg: dict) -> dict:
    """An experiment's settings: the quick or the thesis-size preset, with ``runs`` overriding its runs."""
    cfg = dict(small_cfg if small else full_cfg)
    if runs is not None:
        cfg["runs"] = int(runs)
    return cfg


def out_dir(out: Path | str | None) -> Path:
    d = Path(out) if out is not None else Path("experiments")
    d.mkdir(parents=True, exist_ok=True)
    return d


@dataclass(frozen=True)
class RunSettings:
    """One run of a preset-based experiment: the chosen settings (``cfg``), the created output folder and the
    registry's options."""

    cfg: dict
    out: Path
    seed: int
    small: bool
    progress: ProgressArg
    workers: int | None

    def rows(self, measure: Callable[[Any], list[dict[str, Any]]], tasks: Sequence[Any], description: str, *,
             serial: bool = False) -> pd.DataFrame:
        """:func:`gather_rows` over ``tasks``: in this process on the quick preset or when ``serial`` (e.g.
        tasks that need the whole machine's memory), else on ``workers`` processes."""
        return gather_rows(measure, tasks, workers=1 if self.small or serial else self.workers,
                           progress=self.progress, description=description)


def with_presets(small_cfg: dict, full_cfg: dict) -> Callable[[Callable[[RunSettings], ExperimentResult]],
                                                              Callable[..., ExperimentResult]]:
    """Give ``body(settings)`` the registry's runner signature (see the module docstring): ``small`` picks
    ``small_cfg`` or ``full_cfg``, ``runs`` overrides its runs (:func:`preset`) and ``out`` is created."""

    def deco(body: Callable[[RunSettings], ExperimentResult]) -> Callable[..., ExperimentResult]:
        def run(*, runs: int | None = None, seed: int = 0, out: Path | str | None = "experiments",
                small: bool = False, progress: ProgressArg = None, workers: int | None = None) -> ExperimentResult:
            return body(RunSettings(preset(small, runs, small_cfg, full_cfg), out_dir(out), seed, small, progress,
                                    workers))

        run.__name__, run.__qualname__, run.__doc__ = body.__name__, body.__qualname__, body.__doc__
        run.__module__ = body.__module__
        return run

    return deco


def fmt_pct(x: float) -> str:
    return f"{100 * x:.1f}%"
