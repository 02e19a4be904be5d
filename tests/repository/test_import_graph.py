"""The package's module import graph has no cycles and no import runs from a lower layer to a higher one,
counting imports inside functions too.

A function-level import that only dodges a cycle keeps the cycle: the two modules still cannot be
understood, tested or split apart one at a time. So every ``import`` / ``from … import`` anywhere in a module
(top level, functions, methods) is an edge; only imports under ``if TYPE_CHECKING:`` are not (they never
run). ``from pkg import name`` is an edge to the submodule ``pkg.name`` when that is a module, else to
``pkg``. Importing a submodule is not counted as importing its parent package: a package ``__init__``
that re-exports its own submodules is the usual layout and is not a cycle unless a submodule imports the
package back. Imports that no ``import`` statement shows count too: ``importlib.import_module("pkg.mod")`` (or
``import_module``, ``__import__``, and a module's own wrapper named in ``IMPORTERS``) with a literal name, or an
f-string whose literal head names a package (an edge to that package), and attribute access through an imported
package (``import graphlink`` then ``graphlink.protect.unlink(...)`` is an edge to ``graphlink.protect``). Names
computed at run time (the public API's table of exports, the registry's ``"module:attribute"`` references) are
not seen; those modules document what they may load. Exceptions that cannot be removed are listed in
``ALLOWED_CYCLES`` with the reason.

The layers are defined once, in CONTRIBUTING.md's "Layers" table (bottom layer first); this file reads them from
there.  Every module belongs to the row of the longest name that covers it (``graphlink.core`` covers
``graphlink.core`` and its modules; ``graphlink.__init__`` covers the package's ``__init__`` only).  An import from
a module to one of a higher row is an error unless ``ALLOWED_UPWARD`` lists it with the reason.  The folders
(packages) of one row are independent of each other: a module of one imports a module of another only where the
row's last cell says so (`` `fingerprint` uses `qi` ``, `` `report` uses `protect` and `qi` ``), and every such
sentence must name an import that exists.  numba is imported only by ``graphlink.kernels`` and the modules
``NUMBA_ELSEWHERE`` lists with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the packages the graph covers: installed name -> its folder in the repository (setup.py installs app/ as
#: graphlink_app, and the app's modules import each other under that name)
PACKAGES = {"graphlink": "graphlink", "graphlink_app": "app"}

#: frozenset of module names of a strongly connected component -> why it cannot be broken (none today)
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

#: (importing module, imported module) -> why it may run from a lower layer to a higher one (none today)
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

#: modules outside graphlink.kernels that import numba -> why
NUMBA_ELSEWHERE: dict[str, str] = {
    "graphlink.analysis.onetomany": "its propagation and union-find kernels move into kernels/ once the solver's "
                                    "current rework has landed (moving them now would collide with it)",
    "graphlink.simulation.experiments.common": "sets numba's thread count in each worker process; no kernel",
}


def modules(root: Path, packages: tuple[str, ...] | dict[str, str]) -> dict[str, tuple[Path, bool]]:
    """``{dotted module name: (file, is_package)}`` for every ``.py`` file of ``packages`` under ``root``: package
    names (each in the folder of its name), or installed name -> folder."""
    folders = packages if isinstance(packages, dict) else {pkg: pkg for pkg in packages}
    out: dict[str, tuple[Path, bool]] = {}
    for pkg, folder in folders.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = [pkg, *path.relative_to(root / folder).with_suffix("").parts]
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of import nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


#: functions that import the module their first argument names: importlib's own, and the app's wrapper that
#: tolerates a module another engineer has not landed yet (``app.state.optional_module``)
IMPORTERS = frozenset({"import_module", "__import__", "optional_module"})


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes inside annotations: with ``from __future__ import annotations`` they never run."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        roots: list[ast.AST | None] = []
        if isinstance(node, ast.arg):
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        skip.update(id(n) for r in roots if r is not None for n in ast.walk(r))
    return skip


def _dynamic_name(call: ast.Call) -> tuple[str, bool] | None:
    """(module name, whether only its literal head is known) of an ``import_module``-like call; None otherwise."""
    func = call.func
    fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if fname not in IMPORTERS or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value, False
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rstrip("."), True
    return None


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]`` when the chain ends in a plain name; None otherwise."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def import_graph(mods: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its body.  O(total source size)."""

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _type_checking_only(tree) | _annotation_nodes(tree)
        deps: set[str] = set()
        #: local name -> the project module an ``import`` bound to it (``import graphlink.core`` binds graphlink)
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                deps.update(filter(None, (known(alias.name) for alias in node.names)))
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    target = alias.name if alias.asname else alias.name.split(".")[0]
                    if target in mods:
                        bound[local] = target
            elif isinstance(node, ast.Call) and (dynamic := _dynamic_name(node)) is not None:
                target = known(dynamic[0])
                if target:
                    deps.add(target)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name if is_pkg else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in mods else known(base)
                    if target:
                        deps.add(target)
                    if sub in mods and mods[sub][1]:
                        bound[alias.asname or alias.name] = sub
        # attribute access through a bound package reaches the longest module the chain names
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Attribute):
                continue
            parts = _dotted(node)
            if parts and parts[0] in bound:
                target = known(".".join([bound[parts[0]], *parts[1:]]))
                if target and target != bound[parts[0]]:
                    deps.add(target)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative).  O(V + E)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(frozenset(comp))
    return found


def test_package_import_graph_is_acyclic() -> None:
    graph = import_graph(modules(ROOT, PACKAGES))
    assert len(graph) > 50 and "graphlink.protect.pipeline" in graph    # the walk really saw the package
    unexpected = [sorted(c) for c in cycles(graph) if c not in ALLOWED_CYCLES]
    assert not unexpected, f"import cycles (function-level imports count): {unexpected}"


def test_the_app_is_imported_under_its_installed_name_only() -> None:
    """setup.py installs the app/ folder as ``graphlink_app``: an ``import app`` anywhere would find nothing once the
    package is installed (or another project's ``app``), and beside an editable install it would load the app's
    modules a second time, with caches of their own."""
    files = [*sorted((ROOT / "graphlink").rglob("*.py")), *sorted((ROOT / "app").rglob("*.py")),
             *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "benchmarks").rglob("*.py")),
             ROOT / "streamlit_app.py"]
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "app"]
    assert not found, f"imports of a top-level `app` (the app is `graphlink_app`): {found}"
    graph = import_graph(modules(ROOT, PACKAGES))
    assert "graphlink_app.session" in graph["graphlink_app.main"]       # the walk saw the app under its name


def test_the_former_cycles_now_go_one_way() -> None:
    graph = import_graph(modules(ROOT, PACKAGES))
    assert "graphlink.protect.flow" in graph["graphlink.protect.optimal"]
    assert not any("graphlink.protect.optimal" in deps for m, deps in graph.items()
                   if m.startswith("graphlink.protect"))
    assert "graphlink.secure.transport" in graph["graphlink.secure.protocol"]
    assert "graphlink.secure.protocol" not in graph["graphlink.secure.transport"]


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("files", "expected"), [
    # a cycle hidden behind a function-level import is still a cycle
    ({"p/__init__.py": "", "p/a.py": "from p.b import f\n",
      "p/b.py": "def f():\n    from p.a import g\n    return g\n"}, [{"p.a", "p.b"}]),
    # relative imports, and `from pkg import module`
    ({"p/__init__.py": "", "p/a.py": "from . import b\n", "p/b.py": "from .c import x\n",
      "p/c.py": "def x():\n    import p.a\n"}, [{"p.a", "p.b", "p.c"}]),
    # a submodule importing its own package back closes a cycle through the package __init__
    ({"p/__init__.py": "from p.a import f\n", "p/a.py": "from p import g\n"}, [{"p", "p.a"}]),
    # a package __init__ re-exporting its submodules, type-only imports and one-way imports: no cycle
    ({"p/__init__.py": "from p.a import f\nfrom p.b import g\n", "p/a.py": "from p.b import g\n",
      "p/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import f\n"}, []),
])
def test_cycle_finder_on_small_packages(tmp_path: Path, files: dict[str, str], expected: list[set[str]]) -> None:
    _write(tmp_path, files)
    found = cycles(import_graph(modules(tmp_path, ("p",))))
    assert sorted(map(sorted, found)) == sorted(map(sorted, expected))


# ------------------------------------------------------------------------------------------------------- layers
def _table_rows(text: str) -> list[list[str]]:
    """The cells of every row of the "Layers" table in CONTRIBUTING.md's text, bottom layer first."""
    assert "\n## Layers\n" in text, "CONTRIBUTING.md has no '## Layers' section"
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[0] == "layer" or not cells[0].strip("-: "):
            continue
        rows.append(cells)
    assert rows, "the Layers section has no table"
    return rows


def layer_table(text: str) -> list[tuple[str, list[str]]]:
    """(layer, module names) of every row of the "Layers" table in CONTRIBUTING.md's text, bottom layer first."""
    return [(cells[0], re.findall(r"`([\w.]+)`", cells[1])) for cells in _table_rows(text)]


_USES = re.compile(r"`(\w+)` uses ((?:`\w+`(?! uses)(?:, | and )?)+)")


def declared_uses(text: str) -> set[tuple[str, str]]:
    """(folder, folder) pairs a row's last cell allows: `` `a` uses `b` `` or `` `a` uses `b`, `c` and `d` ``.

    The short names are the last part of the row's own names (`` `qi` `` is ``graphlink.qi`` in its row).
    """
    out: set[tuple[str, str]] = set()
    for cells in _table_rows(text):
        names = re.findall(r"`([\w.]+)`", cells[1])
        full = {n.rpartition(".")[2]: n for n in names}
        for user, used in _USES.findall(cells[-1]):
            for target in re.findall(r"`(\w+)`", used):
                assert user in full and target in full, \
                    f"'{user} uses {target}' names a folder outside the row of layer {cells[0]}"
                out.add((full[user], full[target]))
    return out


def _name_of(module: str, rows: list[tuple[str, list[str]]]) -> tuple[int, str] | None:
    """(row, name) of the longest name that covers ``module``; None when no name does."""
    best: tuple[int, str] | None = None
    for i, (_, names) in enumerate(rows):
        for name in names:
            if _covers(name, module) and (best is None or len(name) > len(best[1])):
                best = (i, name)
    return best


def sibling_imports(graph: dict[str, set[str]], rows: list[tuple[str, list[str]]],
                    packages: set[str]) -> dict[tuple[str, str], list[str]]:
    """(folder, folder) -> the imports between two folders (packages) of one row, as readable lines.  O(V + E)."""
    out: dict[tuple[str, str], list[str]] = {}
    for module, deps in sorted(graph.items()):
        here = _name_of(module, rows)
        for dep in sorted(deps):
            there = _name_of(dep, rows)
            if (here is None or there is None or here[0] != there[0] or here[1] == there[1]
                    or here[1] not in packages or there[1] not in packages):
                continue
            out.setdefault((here[1], there[1]), []).append(f"{module} imports {dep}")
    return out


def _covers(name: str, module: str) -> bool:
    if name.endswith(".__init__"):
        return module == name.removesuffix(".__init__")
    return module == name or module.startswith(name + ".")


def layer_of(module: str, rows: list[tuple[str, list[str]]]) -> int | None:
    """Index of the row whose longest name covers ``module``; None when no name does."""
    found = _name_of(module, rows)
    return found[0] if found else None


def upward_imports(graph: dict[str, set[str]], rows: list[tuple[str, list[str]]]) -> list[str]:
    """Every import from a module to one of a higher layer, as readable lines.  O(V + E)."""
    out = []
    for module, deps in sorted(graph.items()):
        here = layer_of(module, rows)
        for dep in sorted(deps):
            there = layer_of(dep, rows)
            if here is not None and there is not None and there > here:
                out.append(f"{module} ({rows[here][0]}) imports {dep} ({rows[there][0]})")
    return out


def imports_numba(path: Path) -> bool:
    """Whether a module imports numba anywhere (``if TYPE_CHECKING:`` blocks excepted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "numba":
            return True
    return False


def _rows() -> list[tuple[str, list[str]]]:
    return layer_table((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))


def test_every_module_is_in_a_layer_and_every_layer_name_is_a_module() -> None:
    mods = modules(ROOT, PACKAGES)
    rows = _rows()
    assert [r[0] for r in rows][:3] == ["foundation", "kernels", "core"]      # the table really was read
    homeless = sorted(m for m in mods if layer_of(m, rows) is None)
    assert not homeless, f"modules in no row of CONTRIBUTING.md's Layers table: {homeless}"
    stale = sorted(n for _, names in rows for n in names if not any(_covers(n, m) for m in mods))
    assert not stale, f"names in CONTRIBUTING.md's Layers table that are no module of the tree: {stale}"
    named = [n for _, names in rows for n in names]
    assert len(named) == len(set(named)), "a name appears in two rows of the Layers table"


def test_no_import_runs_from_a_lower_layer_to_a_higher_one() -> None:
    graph = import_graph(modules(ROOT, PACKAGES))
    rows = _rows()
    allowed = {f"{a} ({rows[layer_of(a, rows)][0]}) imports {b} ({rows[layer_of(b, rows)][0]})"
               for a, b in ALLOWED_UPWARD}
    found = upward_imports(graph, rows)
    assert not [line for line in found if line not in allowed], \
        "imports that run up the layers (CONTRIBUTING.md#layers):\n" + "\n".join(found)
    assert allowed <= set(found), "ALLOWED_UPWARD lists imports that no longer exist"


def test_the_folders_of_one_row_import_each_other_only_where_the_row_says_so() -> None:
    mods = modules(ROOT, PACKAGES)
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = layer_table(text)
    declared = declared_uses(text)
    assert ("graphlink.fingerprint", "graphlink.qi") in declared          # the row's sentence really was read
    found = sibling_imports(import_graph(mods), rows, {m for m, (_, is_pkg) in mods.items() if is_pkg})
    undeclared = [line for pair, lines in sorted(found.items()) if pair not in declared for line in lines]
    assert not undeclared, ("imports between folders of one row of CONTRIBUTING.md's Layers table that the row "
                            "does not declare ('`a` uses `b`'):\n" + "\n".join(undeclared))
    stale = sorted(f"{a} uses {b}" for a, b in declared - set(found))
    assert not stale, f"the Layers table declares uses that no import makes: {stale}"


def test_numba_is_imported_by_the_kernels_only() -> None:
    users = {m for m, (path, _) in modules(ROOT, PACKAGES).items() if imports_numba(path)}
    assert users, "no module imports numba: the scan is broken"
    outside = sorted(m for m in users if not _covers("graphlink.kernels", m) and m not in NUMBA_ELSEWHERE)
    assert not outside, f"numba outside graphlink/kernels/: {outside}"
    assert set(NUMBA_ELSEWHERE) <= users, "NUMBA_ELSEWHERE lists modules that no longer import numba"


TABLE = """
## Layers

| layer | modules | why |
|---|---|---|
| low | `p.__init__`, `p.a` | the bottom |
| high | `p.b` | above |

## Next
"""


@pytest.mark.parametrize(("files", "expected"), [
    # an import from the lower layer up, hidden in a function, is found; the import down is fine
    ({"p/__init__.py": "", "p/a.py": "def f():\n    from p.b import g\n", "p/b.py": "from p.a import f\n"},
     ["p.a (low) imports p.b (high)"]),
    # the package face sits in the low layer, so its re-export of a high module runs up
    ({"p/__init__.py": "from p.b import g\n", "p/a.py": "", "p/b.py": ""}, ["p (low) imports p.b (high)"]),
    # type-only imports never run
    ({"p/__init__.py": "", "p/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import g\n",
      "p/b.py": ""}, []),
])
def test_layer_checker_on_small_packages(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    _write(tmp_path, files)
    rows = layer_table(TABLE)
    assert rows == [("low", ["p.__init__", "p.a"]), ("high", ["p.b"])]
    assert upward_imports(import_graph(modules(tmp_path, ("p",))), rows) == expected


SIBLINGS = """
## Layers

| layer | modules | why |
|---|---|---|
| low | `p.__init__` | the face |
| mid | `p.a`, `p.b`, `p.c` | `c` uses `a` and `b` |

## Next
"""


@pytest.mark.parametrize(("files", "expected"), [
    # a declared use is allowed; an undeclared one between folders of the row is reported
    ({"p/__init__.py": "", "p/a/__init__.py": "", "p/a/x.py": "from p.b.y import f\n",
      "p/b/__init__.py": "", "p/b/y.py": "", "p/c/__init__.py": "", "p/c/z.py": "import p.a.x\n"},
     {("p.a", "p.b"): ["p.a.x imports p.b.y"], ("p.c", "p.a"): ["p.c.z imports p.a.x"]}),
    # the import hidden in importlib.import_module is one too
    ({"p/__init__.py": "", "p/a/__init__.py": "", "p/a/x.py": "import importlib\n"
      "def f():\n    return importlib.import_module('p.b.y')\n",
      "p/b/__init__.py": "", "p/b/y.py": "", "p/c/__init__.py": ""},
     {("p.a", "p.b"): ["p.a.x imports p.b.y"]}),
])
def test_sibling_checker_on_small_packages(tmp_path: Path, files: dict[str, str],
                                           expected: dict[tuple[str, str], list[str]]) -> None:
    _write(tmp_path, files)
    mods = modules(tmp_path, ("p",))
    rows = layer_table(SIBLINGS)
    assert declared_uses(SIBLINGS) == {("p.c", "p.a"), ("p.c", "p.b")}
    found = sibling_imports(import_graph(mods), rows, {m for m, (_, is_pkg) in mods.items() if is_pkg})
    assert found == expected


@pytest.mark.parametrize(("source", "expected"), [
    # importlib with a literal name, imported either way, and __import__
    ("import importlib\ndef f():\n    return importlib.import_module('p.b')\n", {"p.b"}),
    ("from importlib import import_module\nm = import_module('p.b')\n", {"p.b"}),
    ("m = __import__('p.b')\n", {"p.b"}),
    # an f-string whose literal head names a package: an edge to that package
    ("import importlib\ndef f(n):\n    return importlib.import_module(f'p.sub.{n}')\n", {"p.sub"}),
    # a name computed at run time cannot be seen
    ("import importlib\ndef f(n):\n    return importlib.import_module(n)\n", set()),
    # attribute access through an imported package reaches the module it names
    ("import p\ndef f():\n    return p.b.g()\n", {"p", "p.b"}),
    ("import p.sub\ndef f():\n    return p.sub.c.h\n", {"p.sub", "p.sub.c"}),
    ("import p.sub as s\ndef f():\n    return s.c.h\n", {"p.sub", "p.sub.c"}),
    ("from p import sub\ndef f():\n    return sub.c.h\n", {"p.sub", "p.sub.c"}),
    # an annotation never runs (postponed evaluation), nor does a TYPE_CHECKING block
    ("from __future__ import annotations\nimport p\ndef f(x: p.b.G) -> p.sub.c.H:\n    return x\n", {"p"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import importlib\n"
     "    importlib.import_module('p.b')\n", set()),
    # a name that merely shares the package's name is no import
    ("def f(p):\n    return p.b\n", set()),
])
def test_imports_without_an_import_statement_count(tmp_path: Path, source: str, expected: set[str]) -> None:
    _write(tmp_path, {"p/__init__.py": "", "p/a.py": source, "p/b.py": "def g():\n    pass\n",
                      "p/sub/__init__.py": "", "p/sub/c.py": ""})
    assert import_graph(modules(tmp_path, ("p",)))["p.a"] == expected


def test_numba_scan_sees_function_level_imports(tmp_path: Path) -> None:
    _write(tmp_path, {"m.py": "def f():\n    import numba\n", "n.py": "from numba import njit\n",
                      "o.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numba\n"})
    assert [imports_numba(tmp_path / f) for f in ("m.py", "n.py", "o.py")] == [True, True, False]
