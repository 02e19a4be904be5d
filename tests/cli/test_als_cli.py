"""The ALS from the command line: ``reidentify|audit --qi-links``, ``qi links`` (ALS only) and ``qi fraud``, on the
genotype–phenotype worked example (thesis App. B.2) shipped with the package; bad input exits 2 on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graphlink.io.examples import DATA
from tests.cli.test_qi_cli import run_cli

GENPHEN = DATA / "genphen"
RELEASE, ALS, TRUTH = GENPHEN / "release.csv", GENPHEN / "als.yaml", GENPHEN / "truth.csv"
#: who the trails alone single out (unique trails 111, 100, 001); the ALS alone cannot tell Hal from Ian
BY_TRAILS = {("John Doe", "catg"), ("Hal Ito", "ccgg"), ("Ian Kerr", "ggcc")}


def truth_pairs() -> set[tuple[str, str]]:
    t = pd.read_csv(TRUTH, dtype=str)
    return set(zip(t["identified"], t["deidentified"], strict=True))


def pairs(doc: dict, key: str = "pairs") -> set[tuple[str, str]]:
    return {(p["identified"], p["deidentified"]) for p in doc[key]}


def json_out(*args: str) -> dict:
    out = run_cli(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_trails_and_quasi_identifiers_together_name_everyone() -> None:
    plain = json_out("reidentify", str(RELEASE), "--method", "true-loves", "--truth", str(TRUTH))
    assert pairs(plain) == BY_TRAILS
    both = json_out("reidentify", str(RELEASE), "--method", "true-loves", "--truth", str(TRUTH),
                    "--qi-links", str(ALS))
    assert pairs(both) == truth_pairs() and both["summary"]["wrong"] == 0
    only = json_out("qi", "links", str(RELEASE), "--als", str(ALS), "--truth", str(TRUTH))
    assert pairs(only, "rows") == truth_pairs() - {("Hal Ito", "ccgg"), ("Ian Kerr", "ggcc")}
    assert only["wrong"] == 0
    for method in ("incomplete", "multiple"):
        doc = json_out("reidentify", str(RELEASE), "--method", method, "--truth", str(TRUTH), "--qi-links", str(ALS))
        assert doc["summary"]["wrong"] == 0 and pairs(doc) <= truth_pairs()


def test_audit_on_the_constrained_graph() -> None:
    plain = json_out("audit", str(RELEASE), "--k", "2")
    both = json_out("audit", str(RELEASE), "--k", "2", "--qi-links", str(ALS))
    assert plain["true_loves"] == 3 and both["true_loves"] == 9
    assert not both["k_unlinkable"] and len(both["violations"]) == 18      # every element has one partner


def test_attribute_files_named_by_the_als(tmp_path: Path) -> None:
    """Attributes kept apart from the release (a folder release has no room for them) give the same answer."""
    frame = pd.read_csv(RELEASE, dtype=str, keep_default_na=False)
    folder = tmp_path / "rel"
    folder.mkdir()
    for kind in ("identified", "deidentified"):
        part = frame[frame["kind"] == kind]
        for loc, at in frame.groupby("location"):
            (folder / loc).mkdir(exist_ok=True)
            at.loc[at["kind"] == kind, ["element"]].rename(columns={"element": "key"}).to_csv(
                folder / loc / f"{kind}.csv", index=False)
        cols = ["birthdate", "gender", "visit_date"] if kind == "identified" else ["age", "gender", "visit_date"]
        part[["element", *cols]].drop_duplicates().rename(columns={"element": "id"}).to_csv(
            tmp_path / f"{kind}_attrs.csv", index=False)
    als = tmp_path / "als.yaml"
    als.write_text(ALS.read_text() + "attributes: {identified: identified_attrs.csv, "
                   "deidentified: deidentified_attrs.csv, key: id}\n")
    doc = json_out("reidentify", str(folder), "--method", "true-loves", "--id-key", "key", "--deid-key", "key",
                   "--qi-links", str(als))
    assert pairs(doc) == truth_pairs()
    out = run_cli("reidentify", str(folder), "--method", "true-loves", "--id-key", "key", "--deid-key", "key",
                  "--qi-links", str(ALS))
    assert out.returncode == 2 and "attributes" in out.stderr and len(out.stderr.strip().splitlines()) <= 3


@pytest.mark.parametrize("als_text, expected", [
    ("relations:\n  - {identified: shoe_size, deidentified: age}\n", "shoe_size"),
    ("relations:\n  - {identified: birthdate, deidentified: age, map: decade}\n", "unknown map"),
    ("relations: []\n", "non-empty list 'relations'"),
    ("relations:\n  - {identified: gender, deidentified: gender}\nattributes: {identified: x.csv}\n", "attributes"),
])
def test_bad_als_exits_2_on_one_line(tmp_path: Path, als_text: str, expected: str) -> None:
    als = tmp_path / "bad.yaml"
    als.write_text(als_text)
    out = run_cli("reidentify", str(RELEASE), "--method", "true-loves", "--qi-links", str(als))
    assert out.returncode == 2 and expected in out.stderr and "Traceback" not in out.stderr


def test_reidit_c_refuses_qi_links() -> None:
    out = run_cli("reidentify", str(RELEASE), "--method", "complete", "--qi-links", str(ALS))
    assert out.returncode == 2 and "--qi-links" in out.stderr


def test_fraud_mode_flags_a_face_on_unrelated_cards(tmp_path: Path) -> None:
    """Cards a, b (the Smiths) are used only where face1 is seen; cards c (Jones) and d (Lee) only where face2 is:
    face2 is flagged, face1 is explained by the declared family."""
    rows = [("S1", "identified", "a", "smith"), ("S3", "identified", "b", "smith"), ("S2", "identified", "c", "jones"),
            ("S4", "identified", "c", "jones"), ("S4", "identified", "d", "lee")]
    faces = {"face1": ["S1", "S2", "S3"], "face2": ["S2", "S4"], "face3": ["S5"]}
    rows += [(s, "deidentified", f, "") for f, stores in faces.items() for s in stores]
    path = tmp_path / "stores.csv"
    pd.DataFrame(rows, columns=["location", "kind", "element", "family"]).to_csv(path, index=False)
    doc = json_out("qi", "fraud", str(path), "--related", "family")
    got = {r["face"]: r for r in doc["rows"]}
    assert set(got) == {"face1", "face2"}
    assert got["face2"]["flagged"] and got["face2"]["cards"] == "c, d"
    assert not got["face1"]["flagged"] and got["face1"]["cards"] == "a, b"
    unexplained = json_out("qi", "fraud", str(path))
    assert unexplained["flagged"] == 2
    out = run_cli("qi", "fraud", str(path), "--related", "household")
    assert out.returncode == 2 and "household" in out.stderr
