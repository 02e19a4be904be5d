"""The command line starts without loading the heavy libraries (issue 12, item 5).

``graphlink --help`` must list every command and choice without importing numba (JIT kernels), scipy, neo4j
or matplotlib, and ``graphlink trails`` on a small release must summarise it without them: each command
imports the library it needs when it runs.  Neither loads pandas or pyarrow either (a third of a second): a
small CSV release is read by the plain path of ``graphlink.ingest`` and summarised by
``graphlink.trailsio.summary_dict``.  Checked on ``sys.modules`` in a fresh interpreter (a behavioural test,
not a timing test).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numba", "scipy", "neo4j", "matplotlib", "pandas", "pyarrow")


def _loaded_after(code: str) -> set[str]:
    """Top-level heavy modules present in ``sys.modules`` after running ``code`` in a new interpreter."""
    probe = (f"import sys\n{code}\nimport json\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert _loaded_after("import graphlink.cli") == set()


def test_help_lists_commands_without_heavy_libraries() -> None:
    code = ("import contextlib, io\nimport graphlink.cli as cli\nsys.argv = ['graphlink', '--help']\n"
            "buf = io.StringIO()\nwith contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            "    cli.main()\nassert 'reidentify' in buf.getvalue() and 'qi' in buf.getvalue(), buf.getvalue()")
    assert _loaded_after(code) == set()


@pytest.mark.parametrize("fmt, needle", [("json", '"distinct_trails"'), ("table", "distinct trails")])
def test_trails_summary_of_a_small_release_loads_no_heavy_library(fmt: str, needle: str) -> None:
    """Neither pandas nor pyarrow (nor numba, scipy, ...) for the summary of the thesis example, as JSON or tables."""
    example = ROOT / "graphlink" / "data" / "thesis_fig3_4.csv"
    code = ("import contextlib, io\nimport graphlink.cli as cli\n"
            f"sys.argv = ['graphlink', 'trails', {str(example)!r}, '--format', {fmt!r}]\n"
            "buf = io.StringIO()\nwith contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            f"    cli.main()\nassert {needle!r} in buf.getvalue(), buf.getvalue()")
    assert _loaded_after(code) == set()
