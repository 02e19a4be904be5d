"""The report as a board receives it: ``graphlink report --out report.pdf`` printed by headless Chromium, every page
read back (pypdf).

On the README release (2,000 people, 20 locations): at most 4 pages; the verdict, the recommendation and the risk
left after each protection option on the first page; the commands only in the appendix; no thesis notation, no
command-line flag and no raw method key in the body; commands never split inside a word.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pytest

from graphlink.io.report_pdf import find_chromium
from tests.cli_runner import run_cli
from tests.fixtures import fig34

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTATION = ("|C|", "|S|", "Definition", "Alg.", "Theorem", "ω", "γ", "thesis", "greedy-dedup", "force-dedup",
            "flow-dedup", "deidentified", "= True", "= False")


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        if os.environ.get("GRAPHLINK_BROWSER_REQUIRED") == "1":
            pytest.fail("GRAPHLINK_BROWSER_REQUIRED=1 but no chromium to print with", pytrace=False)
        pytest.skip("no chromium (scripts/setup-browser.sh installs it)")
    return found


@pytest.fixture(scope="module")
def readme_pdf(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    from pypdf import PdfReader

    tmp = tmp_path_factory.mktemp("pdf")
    rel = tmp / "rel.csv"
    sim = run_cli("simulate", "--subjects", "2000", "--locations", "20", "--p", "0.3", "--withhold", "0.3",
                  "--seed", "7", "--out", rel)
    assert sim.returncode == 0, sim.stderr
    out = tmp / "report.pdf"
    res = run_cli("report", rel, "--k", "2", "--out", out, "--title", "Planned DNA release",
                  "--purpose", "Share DNA samples with a genome consortium.", "--prepared-by", "Privacy office",
                  "--recipient", "Genome consortium: every de-identified DNA table")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes().startswith(b"%PDF-")
    # NFKC: the print engine sets ligatures ("ﬃ"), a reader sees letters
    return [unicodedata.normalize("NFKC", page.extract_text() or "") for page in PdfReader(out).pages]


def test_readme_release_report_fits_four_pages_with_the_decision_on_the_first(readme_pdf: list[str]) -> None:
    assert 1 <= len(readme_pdf) <= 4, len(readme_pdf)
    first = " ".join(readme_pdf[0].split())
    assert "Planned DNA release" in first and "Privacy office" in first and "UTC" in first
    assert "Share DNA samples with a genome consortium." in first
    assert "Verdict for k = 2: The release is NOT 2-unlinkable" in first
    assert "k = 2 asks that everyone named" in first                        # what k means, in one sentence
    assert "Recommendation" in first and "Release the version protected by" in first
    assert "Risk left after each option" in first and "the release as it is" in first
    assert "Next steps" in first


def test_report_body_speaks_words_and_keeps_commands_whole_in_the_appendix(readme_pdf: list[str]) -> None:
    text = "\n".join(readme_pdf)
    appendix = text.index("Appendix")
    body, tail = text[:appendix], text[appendix:]
    for token in NOTATION:
        assert token not in body, token
    assert "graphlink unlink" not in body and "--" not in body
    assert "graphlink unlink" in tail
    # every option of every command is printed whole (no "--ou t"): the flags graphlink unlink takes
    flags = set(re.findall(r"--[a-z](?:[a-z-]*[a-z])?", " ".join(tail.split())))
    assert flags >= {"--k", "--method", "--seed", "--out"}, flags
    assert flags <= {"--k", "--method", "--seed", "--out", "--time-budget"}, flags   # keep-most's: the report's


def test_pdf_without_chromium_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "fig34.csv"
    fig34().to_csv(src, index=False)
    out = tmp_path / "r.pdf"
    res = run_cli("report", src, "--out", out, env={"PATH": str(tmp_path), "CHROMIUM": None})  # no browser
    assert res.returncode == 2
    assert "Chromium" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()
