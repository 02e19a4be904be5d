"""The import paths of graphlink's flat 0.x layout, kept working for a deprecation period.

The package is laid out by layer (CONTRIBUTING.md#layers): ``graphlink.reidit`` is now ``graphlink.analysis.reidit``,
``graphlink.unlink`` is ``graphlink.protect``, ``graphlink.spark`` is ``graphlink.engines.spark``, and so on
(:data:`MOVED`).  Importing an old path still works: it warns once per process (``DeprecationWarning``, naming the
new path) and gives the module at its new place — the module object itself, so its classes, functions and anything
patched on it are shared with the new path.  The names the former module ``graphlink.kernels`` held are found in the
kernels package's modules the same way (:data:`KERNEL_NAMES`).  ``graphlink.reference`` (the thesis's dense
formulations, for tests) left the library for ``tests/reference.py`` and has no alias.

How: :func:`install` puts a finder first on ``sys.meta_path`` that answers only the old paths.  It must come before
the path finder: once ``graphlink.spark`` is an alias of ``graphlink.engines.spark``, the path finder would load
``graphlink.spark.fill`` from the aliased package's folder a second time, as a different module.  ``graphlink.audit``
and ``graphlink.unlink`` are old module paths and public functions of the package at once; the import system binds
an imported submodule to its parent's attribute, so their aliases are modules that can also be called as the
functions (:class:`_ModuleAndFunction`).
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

#: old module path -> new one.  An old package's path also covers its submodules (``graphlink.unlink.flow`` ->
#: ``graphlink.protect.flow``) unless a submodule has an entry of its own (``graphlink.spark.cli``).
MOVED: dict[str, str] = {
    "graphlink.rowops": "graphlink.kernels.rows",
    "graphlink.tabular": "graphlink.core.tabular",
    "graphlink.ingest": "graphlink.core.ingest",
    "graphlink.release": "graphlink.core.release",
    "graphlink.model": "graphlink.core.model",
    "graphlink.trails": "graphlink.core.trails",
    "graphlink.linkgraph": "graphlink.core.linkgraph",
    "graphlink.matching": "graphlink.analysis.matching",
    "graphlink.onetomany": "graphlink.analysis.onetomany",
    "graphlink.reidit": "graphlink.analysis.reidit",
    "graphlink.audit": "graphlink.analysis.audit",
    "graphlink.advisor": "graphlink.analysis.advisor",
    "graphlink.unlink": "graphlink.protect",
    "graphlink.optimal": "graphlink.protect.optimal",
    "graphlink.als": "graphlink.qi.als",
    "graphlink.qitrails": "graphlink.qi.qitrails",
    "graphlink.simulate": "graphlink.simulation.simulate",
    "graphlink.theory": "graphlink.simulation.theory",
    "graphlink.experiments": "graphlink.simulation.experiments",
    "graphlink.trailsio": "graphlink.io.trails",
    "graphlink.pairsio": "graphlink.io.pairs",
    "graphlink.examples": "graphlink.io.examples",
    "graphlink.spark": "graphlink.engines.spark",
    "graphlink.spark.cli": "graphlink.engines.spark.backend",
    "graphlink.commands": "graphlink.cli.commands",
}

#: the old packages among :data:`MOVED` (their submodules follow them)
PACKAGES = frozenset({"graphlink.unlink", "graphlink.experiments", "graphlink.spark", "graphlink.commands"})

#: public names of the former module ``graphlink.kernels`` -> the module of the kernels package that holds each now
KERNEL_NAMES: dict[str, str] = {
    "Progress": "links", "block_pairs": "links", "class_links": "links", "first_links": "links",
    "class_max_flow": "flow", "counting_order": "flow", "group_pointers": "flow", "pair_members": "flow",
    "twin_flow": "flow",
    "classify_positions": "scc", "masked_class_degrees": "scc", "residual_scc": "scc",
    "closure": "propagate", "propagate_classes": "propagate",
    "dedupe_strings": "hashing", "factorize_rows": "hashing", "gather_codes": "hashing", "group_rows": "hashing",
    "pack_rows": "hashing",
    "csr": "rows", "fingerprint": "rows", "members": "rows", "row_classes": "rows",
}


def new_path(old: str) -> str | None:
    """The new module path of an old one, or None when ``old`` did not move."""
    if old in MOVED:
        return MOVED[old]
    head = old
    while "." in head:
        head = head.rpartition(".")[0]
        if head in PACKAGES:
            return MOVED[head] + old[len(head):]
    return None


def _warn(old: str, new: str) -> None:
    # stacklevel 3: past this function and the loader; the import machinery's own frames are skipped by warnings
    warnings.warn(f"{old} has moved to {new}; import it from there (the old path goes in a later release)",
                  DeprecationWarning, stacklevel=3)


class _ModuleAndFunction(ModuleType):
    """The alias of an old module path that is also a public function of the package (``graphlink.audit``,
    ``graphlink.unlink``): attributes come from the module, a call goes to the function."""

    def __init__(self, name: str, module: ModuleType, function: Any) -> None:
        super().__init__(name, module.__doc__)
        self.__dict__["_module"] = module
        self.__dict__["_function"] = function

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_module"], name)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__["_module"])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_function"](*args, **kwargs)


class _Loader:
    """Loads an old path as its new module (``create_module``/``exec_module`` of the import protocol)."""

    def __init__(self, new: str, exports: dict[str, tuple[str, str]]) -> None:
        self.new = new
        self.exports = exports

    def create_module(self, spec: ModuleSpec) -> None:
        return None                                   # the default module, replaced in exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        _warn(old, self.new)
        target = import_module(self.new)
        parent, _, leaf = old.rpartition(".")
        if parent == "graphlink" and leaf in self.exports:
            where, attr = self.exports[leaf]
            target = _ModuleAndFunction(old, target, getattr(import_module(where), attr))
        sys.modules[old] = target                     # what the import statement returns and binds


class _Finder:
    """``sys.meta_path`` entry that answers the old paths only (every other name: None, at once)."""

    def __init__(self, exports: dict[str, tuple[str, str]]) -> None:
        self.exports = exports

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if not name.startswith("graphlink."):
            return None
        new = new_path(name)
        return None if new is None else ModuleSpec(name, _Loader(new, self.exports))


def install(exports: dict[str, tuple[str, str]]) -> None:
    """Put the old-path finder first on ``sys.meta_path`` (once).  ``exports``: the package's public names
    (``graphlink._EXPORTS``), for the old paths that are also public functions."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(exports))


def kernel_name(name: str) -> Any:
    """A name of the former module ``graphlink.kernels`` from its new module, with a ``DeprecationWarning``
    (``graphlink.kernels.__getattr__``); AttributeError for any other name."""
    if name not in KERNEL_NAMES:
        raise AttributeError(f"module 'graphlink.kernels' has no attribute {name!r}")
    new = f"graphlink.kernels.{KERNEL_NAMES[name]}"
    warnings.warn(f"graphlink.kernels.{name} has moved to {new}.{name}; import it from there (the old path goes "
                  "in a later release)", DeprecationWarning, stacklevel=3)
    value = getattr(import_module(new), name)
    setattr(sys.modules["graphlink.kernels"], name, value)       # once: later lookups find it without a warning
    return value
