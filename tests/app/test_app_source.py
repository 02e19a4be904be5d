"""Rules the app's source keeps (app/, installed as graphlink_app): every key it keeps in ``st.session_state`` is
named once, in app/session.py; it catches the exceptions the library documents, never ``Exception``; and it imports
the library's own modules as what they are, parts of the install, not optional extras.

Each rule is an AST scan of the source; the small cases below hold the scans to what they must find.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
SESSION = APP / "session.py"


def _files() -> list[Path]:
    return [*sorted(APP.rglob("*.py")), ROOT / "streamlit_app.py"]


def _is_session_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def _literal_key(node: ast.AST | None) -> bool:
    """A key written in place: a string or an f-string, not a name of app/session.py."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr)


def literal_session_keys(source: str) -> list[int]:
    """Lines that read or write ``st.session_state`` under a key written in place (``["x"]``, ``.get("x")``,
    ``.pop("x")``, ``.setdefault("x")``, ``"x" in``).  O(size of the source)."""
    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript):
            return _is_session_state(node.value) and _literal_key(node.slice)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return (_is_session_state(node.func.value) and node.func.attr in {"get", "pop", "setdefault"}
                    and bool(node.args) and _literal_key(node.args[0]))
        if isinstance(node, ast.Compare):
            return (_literal_key(node.left) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
                    and any(_is_session_state(c) for c in node.comparators))
        return False

    return sorted(node.lineno for node in ast.walk(ast.parse(source)) if literal(node))


def broad_handlers(source: str) -> list[int]:
    """Lines of ``except:``, ``except Exception`` and ``except BaseException`` (alone or in a tuple)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler):
            types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if node.type is None or any(isinstance(t, ast.Name) and t.id in {"Exception", "BaseException"}
                                        for t in types):
                lines.append(node.lineno)
    return lines


def dynamic_imports(source: str) -> list[int]:
    """Lines that import a module by a computed name (``importlib.import_module``, ``__import__``): the app's
    imports are written out, so a missing part of the library fails at start, not as a page's silence."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in {"importlib.import_module", "import_module", "__import__"}:
                lines.append(node.lineno)
    return lines


def _offences(scan) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}" for path in _files() if path != SESSION
            for line in scan(path.read_text(encoding="utf-8"))]


def test_session_keys_are_named_once_in_session_py() -> None:
    assert not _offences(literal_session_keys), "st.session_state keys written in place (name them in app/session.py)"


def test_session_py_names_each_key_once() -> None:
    tree = ast.parse(SESSION.read_text(encoding="utf-8"))
    values = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
              and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
              and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)]
    assert len(values) > 20, values                              # the scan saw the keys
    assert len(values) == len(set(values)), sorted(v for v in values if values.count(v) > 1)
    prefixes = [v for v in values if v.endswith("_")]
    assert not [(p, v) for p in prefixes for v in values if v != p and v.startswith(p)], "a key inside a prefix"


def test_the_app_catches_specific_exceptions() -> None:
    assert not _offences(broad_handlers), "broad exception handlers in the app (catch what the library raises)"


def test_the_app_imports_the_library_by_name() -> None:
    assert not _offences(dynamic_imports), "modules imported by a computed name in the app"


@pytest.mark.parametrize(("source", "scan", "expected"), [
    ('st.session_state["loaded"] = 1\nx = st.session_state.get("reserved", "auto")\n', literal_session_keys, [1, 2]),
    ('if "k" not in st.session_state:\n    st.session_state.pop(f"loo_{key}", None)\n', literal_session_keys, [1, 2]),
    ("st.session_state[session.LOADED] = 1\nst.session_state.get(session.PREFIX + key)\n", literal_session_keys, []),
    ("try:\n    f()\nexcept Exception:\n    pass\ntry:\n    g()\nexcept (OSError, BaseException):\n    pass\n",
     broad_handlers, [3, 7]),
    ("try:\n    f()\nexcept:\n    pass\ntry:\n    g()\nexcept (GraphlinkError, OSError):\n    pass\n",
     broad_handlers, [3]),
    ('m = importlib.import_module("graphlink.store.neo4j")\nfrom graphlink.store import neo4j\n', dynamic_imports,
     [1]),
])
def test_the_scans_on_small_sources(source: str, scan, expected: list[int]) -> None:
    assert scan(source) == expected
