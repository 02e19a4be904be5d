"""``graphlink fingerprint``: the CLI contract of docs/fingerprint.md (plan → release → attribute, JSON keys),
outputs checked independently of the code that wrote them, and bad input exiting 2 with one line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from graphlink.qi import datasets
from graphlink.qi.table import read_table
from tests.cli.test_qi_cli import run_cli
from tests.fp_helpers import FP, FP_HIER
from tests.qi_helpers import is_k_anonymous

T1, T6 = str(FP / "table1.csv"), str(FP / "table6.csv")


def fp(*args: str) -> subprocess.CompletedProcess:
    return run_cli("fingerprint", *args)


def one_line_error(out: subprocess.CompletedProcess, *needles: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphlink: error:"), out.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.fixture
def seed_plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.json"
    out = fp("plan", T1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "2", "--hierarchies", str(FP_HIER),
             "--loss", "samarati", "--l-min", "1", "--l-max", "2", "--discretise", "exact", "--out", str(plan),
             "--format", "json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert [(r["name"], r["levels"]) for r in d["recipients"]] == [("R1", {"sex": 1, "birthdate": 1}),
                                                                   ("R2", {"sex": 0, "birthdate": 2})]
    assert d["capacity"]["upper_bound"] == 6 and d["loss_spread"]["spread"] == 0
    return plan


def test_plan_release_attribute_on_the_seed(seed_plan: Path, tmp_path: Path) -> None:
    """FP §3.3 through the CLI: each release is 2-anonymous, has the recipient's granularity and is attributed
    to it; a record from R2's release (sex kept, year of birth) names R2 (FP §3.2)."""
    for name, sex, birth in (("R1", {"p"}, {"03.1970", "04.1970"}), ("R2", {"m", "f"}, {"1970"})):
        out_csv = tmp_path / f"{name}.csv"
        done = fp("release", str(seed_plan), T1, "--recipient", name, "--out", str(out_csv), "--drop", "name")
        assert done.returncode == 0, done.stderr
        rel = read_table(out_csv)
        assert list(rel.columns) == ["sex", "birthdate", "disease"] and len(rel) == 4
        assert set(rel["sex"]) == sex and set(rel["birthdate"]) == birth
        assert is_k_anonymous(rel, ["sex", "birthdate"], 2)
        d = json.loads(fp("attribute", str(seed_plan), str(out_csv), "--format", "json").stdout)
        assert d["recipients"] == [name] and d["exact"] is True and d["explained_rows"] == 4
        assert isinstance(d["reason"], str) and name in d["reason"]
    one = tmp_path / "one.csv"
    read_table(tmp_path / "R2.csv").head(1).to_csv(one, index=False)
    d = json.loads(fp("attribute", str(seed_plan), str(one), "--format", "json").stdout)
    assert (d["recipients"], d["exact"], d["explained_rows"]) == (["R2"], True, 1)
    table = fp("attribute", str(seed_plan), str(one))
    assert table.returncode == 0 and "R2" in table.stdout and "exact match" in table.stdout


def test_plan_pattern_list_as_csv(tmp_path: Path) -> None:
    out = fp("plan", T1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "2", "--hierarchies", str(FP_HIER),
             "--loss", "samarati", "--l-min", "1", "--l-max", "2", "--discretise", "exact", "--out",
             str(tmp_path / "p.json"), "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = pd.read_csv(io.StringIO(out.stdout))
    assert rows[["recipient", "sex", "birthdate", "k"]].values.tolist() == [["R1", 1, 1, 2], ["R2", 0, 2, 2]]


def test_collusion_and_unattributable_leaks(tmp_path: Path) -> None:
    """A leak mixing two recipients' releases (FP §4, complementary releases) is covered by the two; a leak
    coarser than several recipients' data is not attributed, with the reason and the candidate sets."""
    plan = tmp_path / "p6.json"
    names = tmp_path / "names.csv"
    pd.DataFrame({"name": ["Uni A", "Uni B", "Lab C", "Agency D"]}).to_csv(names, index=False)
    done = fp("plan", T6, "--qi", "sex,birthdate,zip", "--k", "1", "--recipients", str(names), "--hierarchies",
              str(FP_HIER), "--out", str(plan), "--seed", "4", "--format", "json")
    assert done.returncode == 0, done.stderr
    got = {r["name"]: r["levels"] for r in json.loads(done.stdout)["recipients"]}
    assert list(got) == ["Uni A", "Uni B", "Lab C", "Agency D"]
    # two recipients whose nodes are incomparable: each has some QI finer than the other
    qi = ["sex", "birthdate", "zip"]
    pairs = [(a, b) for a in got for b in got if a < b
             and any(got[a][q] < got[b][q] for q in qi) and any(got[b][q] < got[a][q] for q in qi)]
    assert pairs
    a, b = pairs[0]
    rel = {}
    for x in (a, b):
        fp("release", str(plan), T6, "--recipient", x, "--out", str(tmp_path / f"{x}.csv"))
        rel[x] = read_table(tmp_path / f"{x}.csv")
    leak = tmp_path / "mixed.csv"
    pd.concat([rel[a].head(2), rel[b].head(2)]).to_csv(leak, index=False)
    d = json.loads(fp("attribute", str(plan), str(leak), "--format", "json").stdout)
    pattern = {q: min(got[a][q], got[b][q]) for q in qi}
    assert d["pattern"] == pattern and d["exact"] is False
    alone = [x for x in got if all(got[x][q] <= pattern[q] for q in qi)]
    if not alone:   # nobody could write it alone: a smallest colluding set, which must be {a, b} or a tie
        assert d["minimum_size"] == 2
        assert (sorted(d["recipients"]) == sorted([a, b])) or (not d["recipients"] and
                                                               sorted([a, b]) in map(sorted, d["candidates"]))
    coarse = tmp_path / "coarse.csv"
    pd.DataFrame({"sex": ["p"], "birthdate": ["1970"], "zip": ["*"]}).to_csv(coarse, index=False)
    d = json.loads(fp("attribute", str(plan), str(coarse), "--format", "json").stdout)
    assert d["recipients"] == [] and d["exact"] is False and d["explained_rows"] == 0
    assert d["candidate_sets"] == 4 and d["reason"].startswith("cannot be attributed")


def test_bad_input_exits_2_with_one_line(seed_plan: Path, tmp_path: Path) -> None:
    leak = tmp_path / "leak.csv"
    pd.DataFrame({"sex": ["m", "q"], "birthdate": ["1970", "1970"]}).to_csv(leak, index=False)
    one_line_error(fp("attribute", str(seed_plan), str(leak)), "row 3", "column 'sex'", "'q'", "fits no node")
    one_line_error(fp("release", str(seed_plan), T6, "--recipient", "R1", "--out", str(tmp_path / "x.csv")),
                   "another table")
    one_line_error(fp("release", str(seed_plan), T1, "--recipient", "Bob", "--out", str(tmp_path / "x.csv")),
                   "no recipient 'Bob'")
    one_line_error(fp("plan", T1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "3", "--hierarchies",
                      str(FP_HIER), "--loss", "samarati", "--l-max", "2", "--discretise", "exact", "--out",
                      str(tmp_path / "p.json")), "3 recipients need 3 distinct")
    one_line_error(fp("plan", T1, "--qi", "sex,age", "--k", "2", "--recipients", "2", "--out",
                      str(tmp_path / "p.json")), "column 'age'")
    (tmp_path / "junk.json").write_text("[1, 2]")
    one_line_error(fp("attribute", str(tmp_path / "junk.json"), str(leak)), "not a fingerprint plan")
    one_line_error(fp("plan", T1, "--qi", "sex,birthdate", "--k", "2", "--recipients", "2", "--discretise",
                      "width:-1", "--out", str(tmp_path / "p.json")), "unknown discretisation")
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "p.json").exists()


def test_console_script(seed_plan: Path, tmp_path: Path) -> None:
    """The real entry point in a fresh interpreter: JSON on stdout; one line on stderr and exit 2."""
    exe = [sys.executable, "-m", "graphlink.cli", "fingerprint"]
    leak = tmp_path / "l.csv"
    pd.DataFrame({"sex": ["p"], "birthdate": ["04.1970"]}).to_csv(leak, index=False)
    done = subprocess.run([*exe, "attribute", str(seed_plan), str(leak), "--format", "json"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["recipients"] == ["R1"]
    bad = subprocess.run([*exe, "release", str(seed_plan), T6, "--recipient", "R1", "--out", str(tmp_path / "o.csv")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_cps1988_plan_for_many_recipients(tmp_path: Path) -> None:
    """Real data: 30 recipients on CPS 1988 (k = 5, 1% suppression); every release is 5-anonymous, and a single
    row of each names its recipient."""
    d = tmp_path / "cps"
    assert run_cli("qi", "dataset", "cps1988", "--out", str(d)).returncode == 0
    qi = ",".join(datasets.SPECS["cps1988"].qi)
    plan = tmp_path / "cps.json"
    out = fp("plan", str(d / "cps1988.csv"), "--qi", qi, "--k", "5", "--recipients", "30", "--hierarchies",
             str(d / "hierarchies"), "--max-suppression", "0.01", "--out", str(plan), "--format", "json")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert len(s["recipients"]) == 30 and s["capacity"]["k_anonymous"] >= 30
    assert s["loss_spread"]["spread"] == pytest.approx(s["loss_spread"]["max"] - s["loss_spread"]["min"])
    for r in s["recipients"][::10]:
        rel_path = tmp_path / f"{r['name']}.csv"
        assert fp("release", str(plan), str(d / "cps1988.csv"), "--recipient", r["name"], "--out",
                  str(rel_path)).returncode == 0
        rel = read_table(rel_path)
        assert len(rel) == r["released_rows"] and is_k_anonymous(rel, qi.split(","), 5)
        rel.sample(1, random_state=0).to_csv(tmp_path / "one.csv", index=False)
        v = json.loads(fp("attribute", str(plan), str(tmp_path / "one.csv"), "--format", "json").stdout)
        assert v["recipients"] == [r["name"]] and v["exact"]
