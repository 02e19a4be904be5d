"""The command line starts without loading the heavy libraries.

``graphlink --help`` must list every command and choice without importing numba (JIT kernels), scipy, neo4j
or matplotlib, and ``graphlink trails`` on a small release must summarise it without them: each command
imports the library it needs when it runs.  Neither loads pandas or pyarrow either (a third of a second): a
small CSV release is read by the plain path of ``graphlink.core.ingest`` and summarised by
``graphlink.io.trails.overview``.  Checked on ``sys.modules`` in a fresh interpreter (a behavioural test,
not a timing test).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def test_reidit_c_on_a_large_parquet_release_loads_no_pandas(tmp_path: Path) -> None:
    """The Arrow path (a Parquet release over ``FAST_MIN_ROWS`` rows) through REIDIT-C to CSV pairs never needs
    pandas (0.25 s of imports in the end-to-end benchmark): Arrow arrays are built from NumPy buffers, not with
    ``pa.array``, and the pairs are written from Arrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphlink.core.ingest import FAST_MIN_ROWS

    rng = np.random.default_rng(5)
    n, locs = FAST_MIN_ROWS // 6, 24
    rows, cols = np.nonzero(rng.random((n, locs)) < 0.25)
    loc = np.char.add("L", cols.astype(str))
    element = np.concatenate([np.char.add("p", rows.astype(str)), np.char.add("s", rows.astype(str))])
    table = pa.table({"location": np.concatenate([loc, loc]),
                      "kind": ["identified"] * len(rows) + ["deidentified"] * len(rows), "element": element})
    assert table.num_rows >= FAST_MIN_ROWS
    path, out = tmp_path / "big.parquet", tmp_path / "pairs.csv"
    pq.write_table(table, path)
    code = ("import contextlib\nimport graphlink.cli as cli\n"
            f"sys.argv = ['graphlink', 'reidentify', {str(path)!r}, '--method', 'complete', '--reserved', 'none', "
            "'--format', 'csv']\n"
            f"with open({str(out)!r}, 'w') as fh, contextlib.redirect_stdout(fh), contextlib.suppress(SystemExit):\n"
            "    cli.main()\n")
    assert "pandas" not in _loaded_after(code)
    lines = out.read_text().splitlines()
    assert lines[0] == "identified,deidentified" and len(lines) > 1000
    assert all(line.split(",")[0][1:] == line.split(",")[1][1:] for line in lines[1:])   # p<i> with s<i>
