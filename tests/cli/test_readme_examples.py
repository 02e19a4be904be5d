"""The README's examples run as written: every ``graphlink`` line of its quick start, of the first analysis and of
the attribute-linkage block, in the order the README gives them, and the figures its comments promise.

The commands are read from README.md itself (not copied here), so an edit of the README that breaks an example
fails this test.  Paths under ``/tmp/`` are moved into the test's own folder; nothing else is changed.
"""

from __future__ import annotations

import re
import shlex
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def bash_blocks(heading: str) -> list[str]:
    """The ```bash blocks of the README section that starts with ``heading`` (up to the next heading)."""
    start = README.index(heading)
    end = README.find("\n#", start + len(heading))
    section = README[start:end if end >= 0 else None]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def commands(block: str, tmp: Path) -> list[tuple[list[str], str]]:
    """``(argv after 'graphlink', the comment)`` of every graphlink line of a block, continuation lines joined,
    shell variables of the block (``G=...``) expanded and ``/tmp/`` moved under ``tmp``."""
    out, variables = [], {}
    for line in block.replace("\\\n", " ").splitlines():
        code, _, comment = line.partition("#")
        code = code.strip()
        if m := re.fullmatch(r"(\w+)=(\S+)", code):
            variables[m.group(1)] = m.group(2)
            continue
        if not code.startswith("graphlink "):
            continue
        for name, value in variables.items():
            code = code.replace(f"${name}", value)
        code = code.replace("/tmp/", f"{tmp}/")
        out.append((shlex.split(code)[1:], comment.strip()))
    return out


def run(argv: list[str]):  # noqa: ANN201
    result = run_cli(*argv, cwd=ROOT)
    assert result.returncode == 0, (argv, result.stderr)
    return result


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.slow
def test_quick_start_and_first_analysis_run_as_written(tmp_path: Path) -> None:
    (quick,) = bash_blocks("## Quick start")[:1]
    first = bash_blocks("### A first analysis")[0]
    cmds = commands(quick, tmp_path) + commands(first, tmp_path)
    assert [c[0][0] for c in cmds] == ["simulate", "reidentify", "reidentify", "audit", "unlink", "audit",
                                        "trails", "audit", "report"]
    results = [(argv, comment, run(argv)) for argv, comment in cmds]
    said = {i: flat(r.stdout + r.stderr) for i, (_, _, r) in enumerate(results)}
    # the figures the comments promise
    assert "483 certain, 0 wrong" in results[1][1]
    assert "true loves: 483 of" in said[1] and "483 correct, 0 wrong" in said[1]
    assert "REIDIT-I: 441" in results[2][1] and "REIDIT-I: 441 of" in said[2]
    assert "certified" in results[5][1]
    assert "k = 2: k-unlinkable: every person and every record has at least 2 candidates." in said[5], said[5]
    assert "certified k-unlinkable (exact audit) │ yes" in said[4], said[4]
    # the report the first analysis ends in, with the figure the README quotes after it
    report = Path(results[8][0][results[8][0].index("--out") + 1])
    html = report.read_text(encoding="utf-8")
    assert "483 of 1,998" in README
    text = []

    class Text(HTMLParser):
        def handle_data(self, data: str) -> None:
            text.append(data)

    Text().feed(html)
    assert "483" in flat(" ".join(text)) and "1,998" in flat(" ".join(text))


def test_attribute_linkage_block_runs_as_written(tmp_path: Path) -> None:
    block = next(b for b in re.findall(r"```bash\n(.*?)```", README, re.S) if "qi fraud" in b)
    cmds = commands(block, tmp_path)
    assert [c[0][:2] for c in cmds] == [["reidentify", "graphlink/data/genphen/release.csv"],
                                        ["qi", "links"], ["reidentify", "graphlink/data/genphen/release.csv"],
                                        ["qi", "fraud"]]
    said = [flat((r := run(argv)).stdout + r.stderr) for argv, _ in cmds]
    assert "3 of 9" in cmds[0][1] and "true loves: 3 of 9" in said[0]
    assert "ALS alone: 7" in cmds[1][1] and "Attributes alone: 7 of 9" in said[1]
    assert "both: 9" in cmds[2][1] and "true loves: 9 of 9" in said[2]
    assert "1 of 2 faces flagged" in cmds[3][1] and "1 of 2 face(s)" in said[3]


def test_thesis_example_output_in_the_readme_is_what_the_cli_prints() -> None:
    block = re.search(r"```text\n\$ graphlink reidentify graphlink/data/thesis_fig3_4.csv --method true-loves\n"
                      r"(.*?)```", README, re.S)
    assert block, "the README's thesis example moved"
    promised = [line.split()[:2] for line in block.group(1).splitlines()[1:] if line.strip()]
    out = run(["reidentify", "graphlink/data/thesis_fig3_4.csv", "--method", "true-loves", "--format", "csv"])
    got = [line.split(",")[:2] for line in out.stdout.splitlines()[1:]]
    assert sorted(got) == sorted(promised)
