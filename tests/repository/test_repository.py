"""The repository speaks for itself (CONTRIBUTING.md, "Layout" and "Style"; docs/algorithms.md#sources).

* CONTRIBUTING's layout map, read from CONTRIBUTING.md, against the tree read from the filesystem: every package of
  ``graphlink/`` and ``app/`` has an entry, every module is named (its own line, or by name in its package's
  entry), and every path the map mentions exists.
* Every ``docs/<page>.md#anchor`` cited in a tracked file names a heading of that page, and every relative link
  in the Markdown pages (README, CONTRIBUTING, docs/) points at a file that exists and, with ``#anchor``, at one
  of its headings.
* No tracked file cites research material that is not in the repository: the notes the code was first written
  from ("the digest", "algorithms.md §…", a seed file) or a path of the machine they lived on.  Papers are cited
  by author and year instead.
* No module of ``graphlink/`` but the store's own (``store/neo4j.py``, ``store/connection.py``) reaches into a
  private attribute of a Store or its Connection (``store._query``, ``self.store._x``, ``conn._x``): the writers
  use the public connection (``store.conn``) and the Store's public methods.

The module lists are never written here: a restructuring that moves modules only has to update the map.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _machine_paths() -> str:
    """Absolute paths a reader's machine does not have: the folder this checkout sits in (wherever it was
    cloned) and users' home folders."""
    parts = [r"(?<![\w.-])/(?:home|Users)/[^/\s]+/"]
    parent = ROOT.parent
    if parent != Path(parent.anchor):           # a checkout at the top of the file system: nothing to name
        parts.append(re.escape(parent.as_posix() + "/"))
    return "|".join(parts)


MACHINE_PATHS = _machine_paths()
THIS = Path(__file__).resolve()
PACKAGES = ("graphlink", "app")                       # the trees whose modules the map must cover
SKIP_DIRS = {".git", ".venv", ".graphlink", "__pycache__", "test-artifacts", ".hypothesis", ".pytest_cache",
             ".ruff_cache", "build", "dist", "node_modules"}
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".ico", ".parquet", ".gz", ".zip", ".jar", ".pdf", ".pyc", ".whl"}

#: citations of material that is not in the repository; each pattern is precise enough not to catch random seeds
#: ("--seed", "seed=", "the plan's seed", "ties vary with the seed") or hashlib's ``digest()``.
BANNED = {
    "the seed's (a source document: cite the paper by author and year)": r"\bthe seed's\b",
    "a numbered seed file": r"\bseed `{0,2}0\d\d\b",
    "the seeds digest": r"\bseeds? digest\b",
    "the digest (research notes)": r"\bthe digest\b",
    "the digest's reading": r"\bdigest's\b",
    "a digest section": r"\bdigest §",
    "a digest fixture id": r"\bF-(?:FP|TR02|SW[AK]?|A-toy|B3)\b",
    "algorithms.md § (use docs/algorithms.md#<anchor>)": r"algorithms\.md §",
    "an absolute path of the machine": MACHINE_PATHS,
    "the research notes folder": r"\bshared/(?:notes|seeds)\b",
    "the issue (say what it was)": r"\bthe issue'?s?\b",
    "a numbered issue (the tracker is not in the repository: say what it asked)": r"\bissues? #?\d+",
}


# ---------------------------------------------------------------------------------------------------- files
@cache
def text_files() -> tuple[Path, ...]:
    """Tracked (and new, not ignored) text files; the filesystem when git is not available."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout.decode()
        paths = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*") if not SKIP_DIRS & set(p.relative_to(ROOT).parts)]
    return tuple(p for p in sorted(paths) if p.is_file() and p.suffix.lower() not in BINARY)


@cache
def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def numbered_lines(paths: Iterable[Path]) -> Iterator[tuple[str, int, str]]:
    """(file relative to the repository, line number, line) of every readable text file, this test excepted."""
    for path in paths:
        if path.resolve() != THIS:
            for lineno, line in enumerate((read(path) or "").splitlines(), 1):
                yield rel(path), lineno, line


# ------------------------------------------------------------------------------------------------- headings
def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)       # a link keeps its text
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every heading anchor of a Markdown file (code blocks skipped; repeated headings get -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    fence = None
    for line in (read(path) or "").splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            fence = None if fence and m.group(1)[0] == fence else (fence or m.group(1)[0])
            continue
        if fence:
            continue
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            base = slug(h.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def test_slug_follows_github() -> None:
    assert slug("Union of all maximum matchings") == "union-of-all-maximum-matchings"
    assert slug("One matching, one SCC pass") == "one-matching-one-scc-pass"
    assert slug("### `optimal-gap`: our addition".lstrip("# ")) == "optimal-gap-our-addition"
    assert slug("The reserved side (Lemma 6)") == "the-reserved-side-lemma-6"


# ---------------------------------------------------------------------------------------------- layout map
@dataclass
class Entry:
    path: str            # relative to the repository, "graphlink/qi/" or "graphlink/errors.py"
    text: str            # the description, continuation lines included


@cache
def layout() -> tuple[Entry, ...]:
    """The map in CONTRIBUTING.md's "Layout" section: an entry is a line whose first word, indented by at most
    six spaces, is a path ending in ``/`` or ``.py``; deeper-indented lines continue the entry above; an entry's
    parent is the nearest directory entry above it with less indentation."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "\n## Layout\n" in text, "CONTRIBUTING.md has no '## Layout' section"
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```\w*\n(.*?)```", section, re.S)
    assert block, "the Layout section has no code block with the map"
    entries: list[Entry] = []
    stack: list[tuple[int, str]] = []
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        word, _, rest = line.strip().partition(" ")
        if indent <= 6 and (word.endswith("/") or word.endswith(".py")):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = (stack[-1][1] if stack else "") + word
            entries.append(Entry(path, rest.strip()))
            if word.endswith("/"):
                stack.append((indent, path))
        else:
            assert entries, f"map line before any entry: {line!r}"
            entries[-1].text += " " + line.strip()
    return tuple(entries)


def python_packages() -> list[Path]:
    """Every directory under graphlink/ and app/ (themselves included) that holds Python modules."""
    dirs = []
    for top in PACKAGES:
        for d in [ROOT / top, *sorted((ROOT / top).rglob("*"))]:
            if d.is_dir() and not SKIP_DIRS & set(d.relative_to(ROOT).parts) and any(d.glob("*.py")):
                dirs.append(d)
    return dirs


def test_layout_map_parses() -> None:
    paths = [e.path for e in layout()]
    assert len(paths) == len(set(paths)), "an entry appears twice in the layout map"
    assert {f"{p}/" for p in PACKAGES} <= set(paths)


def test_layout_map_covers_every_package_and_module() -> None:
    entries = {e.path: e for e in layout()}
    missing = []
    for d in python_packages():
        key = rel(d) + "/"
        if key not in entries:
            missing.append(f"package {key} has no entry")
            continue
        for module in sorted(d.glob("*.py")):
            if module.name == "__init__.py" or key + module.name in entries:
                continue
            if not re.search(rf"(?<![\w-]){re.escape(module.stem)}(?:\.py)?(?![\w-])", entries[key].text):
                missing.append(f"module {key}{module.name} is named neither on its own line nor in {key}'s entry")
    assert not missing, "CONTRIBUTING.md's layout map is out of date:\n" + "\n".join(missing)


PATH_TOKEN = re.compile(r"(?<![\w/.-])([\w.-]+(?:/[\w.*-]+)*(?:/|\.py|\.md))(?![\w/-])")


def test_every_path_in_the_layout_map_exists() -> None:
    bad = []
    for e in layout():
        if not (ROOT / e.path).exists():
            bad.append(f"entry {e.path}")
        here = ROOT / e.path if e.path.endswith("/") else (ROOT / e.path).parent
        for token in PATH_TOKEN.findall(e.text):
            bases = [here, *here.parents]
            bases = bases[:bases.index(ROOT) + 1] if ROOT in bases else [ROOT]
            found = any(list(b.glob(token.rstrip("/"))) if "*" in token else (b / token).exists() for b in bases)
            if not found:
                bad.append(f"{token} (in the entry of {e.path})")
    assert not bad, "paths in CONTRIBUTING.md's layout map that do not exist:\n" + "\n".join(bad)


# ----------------------------------------------------------------------------------------------- citations
CITATION = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)(?:#([\w-]+))?")


def test_every_docs_citation_resolves() -> None:
    bad = []
    for where, lineno, line in numbered_lines(text_files()):
        for page, anchor in CITATION.findall(line):
            target = ROOT / "docs" / page
            if not target.is_file():
                bad.append(f"{where}:{lineno}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(target):
                bad.append(f"{where}:{lineno}: docs/{page} has no heading #{anchor}")
    assert not bad, "citations that do not resolve:\n" + "\n".join(bad)


REPO_PATH = re.compile(r"(?<![\w/.<-])((?:tests|graphlink|app|benchmarks|scripts|cypher|docker|docs)/[\w./-]*"
                       r"\.(?:py|sh|cypher|md|csv|yaml|yml|json|toml|java))(?:::(\w+))?(?![\w<*])")


def test_every_repository_path_cited_exists() -> None:
    """A file named anywhere (``tests/core/test_x.py``, ``graphlink/engines/spark/fill.py``, ``cypher/trails.cypher``)
    exists, and a test named as ``tests/core/test_x.py::test_name`` is defined there."""
    bad = []
    for where, lineno, line in numbered_lines(text_files()):
        for path, name in REPO_PATH.findall(line):
            if re.search(r"/[A-Z_]+\.\w+$", path):                     # a placeholder: cypher/NAME.cypher
                continue
            target = ROOT / path
            if not target.is_file():
                bad.append(f"{where}:{lineno}: {path} does not exist")
            elif name and not re.search(rf"^\s*(?:async\s+)?def {name}\(", read(target) or "", re.M):
                bad.append(f"{where}:{lineno}: {path} defines no {name}")
    assert not bad, "paths and tests cited that do not exist:\n" + "\n".join(bad)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_pages() -> list[Path]:
    return [p for p in text_files() if p.suffix.lower() == ".md"]


def test_markdown_links_resolve() -> None:
    bad = []
    for where, lineno, line in numbered_lines(markdown_pages()):
        page = ROOT / where
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):              # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                bad.append(f"{where}:{lineno}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{where}:{lineno}: {target} (no such heading)")
    assert not bad, "Markdown links that do not resolve:\n" + "\n".join(bad)


def test_algorithms_page_has_the_sections_the_code_cites() -> None:
    """The anchors are part of the page's contract: the code cites them, so renaming a heading breaks citations
    (and the test above says where)."""
    have = anchors(ROOT / "docs" / "algorithms.md")
    assert {"sources", "true-loves", "null-trails", "twin-classes", "one-to-many-data",
            "errata-and-decisions"} <= have


# ---------------------------------------------------------------------------------------------- banned words
@pytest.mark.parametrize("what", sorted(BANNED))
def test_no_citation_of_material_outside_the_repository(what: str) -> None:
    pattern = re.compile(BANNED[what], re.IGNORECASE)
    hits = [f"{where}:{lineno}: {line.strip()[:120]}" for where, lineno, line in numbered_lines(text_files())
            if pattern.search(line)]
    assert not hits, f"{what}:\n" + "\n".join(hits)


@pytest.mark.parametrize("line,what", [
    ("FillTrails decision (we follow the digest's reading)", "the digest's reading"),
    ("see algorithms.md §2.2 for the closed form", "algorithms.md § (use docs/algorithms.md#<anchor>)"),
    ("The seed's nine steps:", "the seed's (a source document: cite the paper by author and year)"),
    ("FP (seed `001`, digest §2)", "a numbered seed file"),
    (f"read {ROOT.parent.as_posix()}/shared/notes/x.md", "an absolute path of the machine"),
    ("see /home/someone/graphlink/README.md", "an absolute path of the machine"),
    ("a fast --help (issue 12)", "a numbered issue (the tracker is not in the repository: say what it asked)"),
])
def test_banned_patterns_catch_what_they_are_for(line: str, what: str) -> None:
    assert re.search(BANNED[what], line, re.IGNORECASE)


@pytest.mark.parametrize("line", [
    "graphlink simulate --subjects 2000 --seed 7", "ties vary with the seed", "the seed must be a non-negative integer",
    "h = hashlib.sha512(data).digest()", "return h.hexdigest()[:16]", "seeded by the plan's seed",
])
def test_banned_patterns_leave_random_seeds_and_hashes_alone(line: str) -> None:
    assert not any(re.search(p, line, re.IGNORECASE) for p in BANNED.values())


#: the modules that own a Store's and a Connection's private state
STORE_OWNERS = ("graphlink/store/neo4j.py", "graphlink/store/connection.py")
#: names the code gives a Store or a Connection (a heuristic: the attribute's object is spelt like one of these)
STORE_NAMES = re.compile(r"(?:^|_)(?:store|conn|connection)$")


def private_store_uses(source: str) -> list[tuple[int, str]]:
    """``(line, expression)`` of every ``X._name`` in ``source`` whose ``X`` is named like a Store or a Connection
    (``store``, ``self.store``, ``neo4j_store``, ``conn``, ``store.conn``...); dunders are not private."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if STORE_NAMES.search(name):
            out.append((node.lineno, ast.unparse(node)))
    return out


@pytest.mark.parametrize("line", ["store._query('RETURN 1')", "self.store._query(q, p)", "store._auth",
                                  "store.conn._target", "neo4j_store._as_owner(n, q)", "conn._driver",
                                  "store._schema_applied = True"])
def test_private_store_uses_are_found(line: str) -> None:
    """The check catches the calls the writers made before they had a public connection."""
    assert private_store_uses(line)


@pytest.mark.parametrize("line", ["store.conn.query('RETURN 1')", "store.__class__", "store_bulk._has_newline(x)",
                                  "self._query(q)", "restore._x"])
def test_public_and_unrelated_uses_pass(line: str) -> None:
    assert not private_store_uses(line)


def test_no_module_reaches_into_a_store() -> None:
    """Outside the store's own modules, nothing calls or reads a private attribute of a Store or a Connection."""
    found = [f"{rel(path)}:{line}: {expr}" for path in sorted((ROOT / "graphlink").rglob("*.py"))
             if rel(path) not in STORE_OWNERS for line, expr in private_store_uses(path.read_text(encoding="utf-8"))]
    assert not found, "private Store/Connection attributes used outside the store:\n" + "\n".join(found)


#: the test folders, one per layer or domain of the package (CONTRIBUTING.md "Tests")
TEST_FOLDERS = {"foundation", "core", "analysis", "protect", "qi", "fingerprint", "secure", "report", "simulation",
                "store", "engines", "cli", "app", "repository", "container"}


def test_every_test_file_sits_in_a_layer_folder() -> None:
    tests = ROOT / "tests"
    loose = sorted(p.name for p in tests.glob("test_*.py"))
    assert not loose, f"test files outside a layer folder (CONTRIBUTING.md 'Tests'): {loose}"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == TEST_FOLDERS, folders ^ TEST_FOLDERS
    for folder in folders:                     # packages: test modules of the same name in two folders stay apart
        assert (tests / folder / "__init__.py").exists(), folder
    documented = set(re.findall(r"`tests/(\w+)/`", (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")))
    assert documented >= TEST_FOLDERS, TEST_FOLDERS - documented
