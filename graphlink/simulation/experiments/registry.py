"""A name -> runner registry so the CLI (``graphlink experiment NAME``) and the app find every experiment.

An experiment module decorates its runner::

    @experiment("uniqueness-grid", "Figures 5.12-5.15: % re-identified over locations and p/alpha")
    def run(*, runs: int, seed: int, out: Path, small: bool = False, progress=None) -> ExperimentResult: ...

``load_all()`` imports every module in ``graphlink/experiments`` so their decorators run.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    run: Callable[..., object]


EXPERIMENTS: dict[str, Experiment] = {}


def experiment(name: str, description: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    def deco(fn: Callable[..., object]) -> Callable[..., object]:
        EXPERIMENTS[name] = Experiment(name, description, fn)
        return fn

    return deco


def load_all() -> dict[str, Experiment]:
    import graphlink.simulation.experiments as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name != "registry":
            importlib.import_module(f"graphlink.simulation.experiments.{mod.name}")
    return EXPERIMENTS
