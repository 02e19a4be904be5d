"""Write constraints.txt: the exact versions the suite runs on, for graphlink[dev] and everything it pulls in.

Run in a working virtualenv (``.venv/bin/python scripts/freeze-constraints.py``): it walks the installed
distributions' requirements from ``graphlink[dev]`` (markers evaluated, extras followed) and pins what it reaches
at the installed version, so a tool installed in the virtualenv by hand does not end up in the file.
``scripts/bootstrap.sh`` installs with ``pip install -c constraints.txt``; pyproject.toml keeps the ranges.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(root: str, extras: set[str]) -> dict[str, str]:
    """Installed distribution name -> version, for every distribution ``root[extras]`` requires."""
    seen: dict[str, str] = {}
    todo: list[tuple[str, set[str]]] = [(root, extras)]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, want = todo.pop()
        if (canonical(name), frozenset(want)) in done:
            continue
        done.add((canonical(name), frozenset(want)))
        dist = metadata.distribution(name)
        if canonical(name) != canonical(root):
            seen[dist.metadata["Name"]] = dist.version
        for line in dist.requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in want] or [{"extra": ""}]
            if req.marker is not None and not any(req.marker.evaluate(env) for env in envs):
                continue
            todo.append((req.name, set(req.extras)))
    return seen


def main() -> None:
    pins = closure("graphlink", {"dev"})
    lines = ["# Exact versions the test suite runs on: graphlink[dev] and its dependencies, from a working virtualenv",
             "# (scripts/freeze-constraints.py). scripts/bootstrap.sh installs with `pip install -c constraints.txt`;",
             "# pyproject.toml states the compatible ranges.",
             *(f"{name}=={version}" for name, version in sorted(pins.items(), key=lambda kv: canonical(kv[0])))]
    (ROOT / "constraints.txt").write_text("\n".join(lines) + "\n")
    print(f"constraints.txt: {len(pins)} pins", file=sys.stderr)


if __name__ == "__main__":
    main()
