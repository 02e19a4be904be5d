"""keep-most on one-to-many releases (graphlink.protect.keep_many, docs/unlink.md#one-to-many-releases): every
output is k-unlinkable by a brute force over every assignment of people to households (tests/oracle.py, straight
from Appendix A's definitions, people allowed to withhold), only people's disclosures are withheld, the lower bound
never exceeds the optimum found by brute force over every set of withheld disclosures; refusals are one line, and
the written file passes ``graphlink audit`` read as one-to-many.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlink.core.release import read_release
from graphlink.errors import ModelAssumptionError, ReleaseError
from graphlink.protect.pipeline import unlink_keep
from tests.oracle import household_oracle

COLUMNS = ["location", "kind", "element"]


def _rows(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    return [tuple(map(str, r)) for r in frame[COLUMNS].itertuples(index=False)]


def oracle_k_unlinkable(rows: list[tuple[str, str, str]], k: int) -> bool:
    """Definition 19 on the possible pairs of Appendix A, people allowed to withhold: every person and every
    household in some consistent assignment has at least k possible partners, or none; with no consistent
    assignment at all the model is refuted and nothing is certified."""
    o = household_oracle(rows, nothing_withheld=False)
    if o["people"] and not o["assignments"]:
        return False
    for side, names in ((0, o["people"]), (1, o["households"])):
        for x in names:
            deg = sum(1 for p in o["possible"] if p[side] == x)
            if 0 < deg < k:
                return False
    return True


@st.composite
def households(draw: st.DrawFn) -> pd.DataFrame:
    """A tiny one-to-many release: 2–3 households of 1–3 members over 2–4 locations; each household's element is
    disclosed wherever a member visited (also members not released), members' records withheld at random."""
    n_loc = draw(st.integers(2, 4))
    locs = [f"L{i}" for i in range(n_loc)]
    rows: list[tuple[str, str, str]] = []
    person = 0
    for h in range(draw(st.integers(2, 3))):
        seen: set[str] = set()
        for _ in range(draw(st.integers(1, 3))):
            visits = draw(st.sets(st.sampled_from(locs), min_size=1))
            seen |= visits
            released = draw(st.sets(st.sampled_from(sorted(visits))))
            rows += [(c, "identified", f"p{person}") for c in sorted(released)]
            person += 1
        rows += [(c, "deidentified", f"H{h}") for c in sorted(seen)]
    ids = [r for r in rows if r[1] == "identified"]
    if not ids:
        rows.append((rows[0][0], "identified", "p_first"))   # a member of the first household's location
    return pd.DataFrame(rows, columns=COLUMNS)


def _brute_optimum(frame: pd.DataFrame, k: int) -> int:
    """The fewest withheld identified disclosures whose release the oracle finds k-unlinkable."""
    ident = list(frame.index[frame.kind == "identified"])
    for size in range(len(ident) + 1):
        for drop in itertools.combinations(ident, size):
            if oracle_k_unlinkable(_rows(frame.drop(index=list(drop))), k):
                return size
    raise AssertionError("withholding every identified record is always k-unlinkable")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=households(), k=st.integers(1, 3), seed=st.integers(0, 3))
def test_one_to_many_output_is_k_unlinkable_by_brute_force(frame, k, seed):
    release = read_release(frame)
    n_homes = frame.loc[frame.kind == "deidentified", "element"].nunique()
    if n_homes < k:
        with pytest.raises(ModelAssumptionError, match="needs at least"):
            unlink_keep(release, k, seed, multiplicity="one-to-many")
        return
    result = unlink_keep(release, k, seed, multiplicity="one-to-many")
    out = result.release.frame
    assert result.certified and result.summary().multiplicity == "one-to-many" and result.side == "identified"
    assert oracle_k_unlinkable(_rows(out), k)
    before, after = set(_rows(frame)), set(_rows(out))
    assert after <= before                                              # withholding only
    assert {r for r in before if r[1] == "deidentified"} <= after       # households' records untouched
    withheld = len(before - after)
    assert withheld == result.summary().rows_withheld
    assert result.lower_bound <= withheld
    if len(frame[frame.kind == "identified"]) <= 7:
        assert result.lower_bound <= _brute_optimum(frame, k) <= withheld


def test_the_oracle_flags_a_household_with_one_possible_member():
    """The oracle is not vacuous: p0 fits only X (the one household disclosed at L0 and L1), so X's one possible
    member and p0's one possible household violate k = 2; withholding p0 at L1 lets p0 be Y as well."""
    rows = [("L0", "identified", "p0"), ("L1", "identified", "p0"), ("L0", "deidentified", "X"),
            ("L1", "deidentified", "X"), ("L0", "deidentified", "Y"), ("L0", "identified", "p1")]
    assert not oracle_k_unlinkable(rows, 2)
    assert oracle_k_unlinkable([r for r in rows if r[:3] != ("L1", "identified", "p0")], 2)
    result = unlink_keep(read_release(pd.DataFrame(rows, columns=COLUMNS)), 2, 0, multiplicity="one-to-many")
    assert oracle_k_unlinkable(_rows(result.release.frame), 2) and result.summary().rows_withheld == 1


def test_refusals_are_one_line_in_words():
    refuted = pd.DataFrame([("L1", "identified", "a"), ("L1", "deidentified", "X"), ("L2", "identified", "a"),
                            ("L2", "deidentified", "Y"), ("L1", "identified", "b")], columns=COLUMNS)
    with pytest.raises(ModelAssumptionError, match="one-to-many model does not hold"):
        unlink_keep(read_release(refuted), 2, 0, multiplicity="one-to-many")
    ok = pd.DataFrame([("L1", "identified", "a"), ("L1", "identified", "b"), ("L1", "deidentified", "X"),
                       ("L1", "deidentified", "Y")], columns=COLUMNS)
    with pytest.raises(ReleaseError, match="records that must stay disclosed cannot be asked for"):
        unlink_keep(read_release(ok), 2, 0, multiplicity="one-to-many", must_keep=[("L1", "a")])
    with pytest.raises(ModelAssumptionError, match="withholds identified records"):
        unlink_keep(read_release(ok), 2, 0, multiplicity="one-to-many", side="deidentified")


@pytest.fixture(scope="module")
def households_file(tmp_path_factory: pytest.TempPathFactory):
    """A simulated one-to-many release (sparse visits, so that some people are re-identified by REIDIT-M)."""
    import graphlink as gl

    path = tmp_path_factory.mktemp("many") / "hh.csv"
    gl.simulate_households(120, 0.12, locations=16, withhold=0.2, seed=4).to_csv(path)
    return path


@pytest.mark.parametrize("k", [2, 3])
def test_cli_end_to_end_the_written_release_passes_the_one_to_many_audit(households_file, tmp_path, k):
    import json

    from tests.cli_runner import run_cli

    out = tmp_path / f"protected-k{k}.csv"
    done = run_cli("unlink", str(households_file), "--k", str(k), "--method", "keep-most", "--seed", "1",
                   "--out", str(out), "--format", "json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    assert s["certified"] and s["multiplicity"] == "one-to-many" and s["side"] == "identified"
    assert s["true_loves_before"] > 0 and s["true_loves_after"] == 0
    assert s["lower_bound"] <= s["rows_withheld"]
    for reading in (["--reserved", "identified", "--multiplicity", "one-to-many"], []):
        audit = run_cli("audit", str(out), "--k", str(k), "--format", "json", *reading)
        assert audit.returncode == 0, audit.stderr
        verdict = json.loads(audit.stdout)
        assert verdict["k_unlinkable"] and verdict["counts"]["multiplicity"] == "one-to-many"
    table = run_cli("unlink", str(households_file), "--k", str(k), "--method", "keep-most", "--seed", "1",
                    "--out", str(tmp_path / "again.csv"))
    assert table.returncode == 0 and "read as one-to-many: people may withhold" in table.stdout


def test_cli_refusals_exit_2_with_one_line(households_file, tmp_path):
    from tests.cli_runner import run_cli

    out = tmp_path / "o.csv"
    dedup = run_cli("unlink", str(households_file), "--k", "2", "--method", "force-dedup", "--out", str(out))
    assert dedup.returncode == 2 and "--method keep-most" in dedup.stderr and not out.exists()
    stated = run_cli("unlink", str(households_file), "--k", "2", "--multiplicity", "one-to-many", "--out", str(out))
    assert stated.returncode == 2 and "keep-most" in stated.stderr
    refuted = tmp_path / "refuted.csv"
    pd.DataFrame([("L1", "identified", "a"), ("L1", "deidentified", "X"), ("L2", "identified", "a"),
                  ("L2", "deidentified", "Y"), ("L1", "identified", "b")], columns=COLUMNS).to_csv(refuted,
                                                                                                   index=False)
    many = run_cli("unlink", str(refuted), "--k", "2", "--method", "keep-most", "--multiplicity", "one-to-many",
                   "--out", str(out))
    assert many.returncode == 2 and "does not hold" in many.stderr and not out.exists()
    for err in (dedup.stderr, stated.stderr, many.stderr):
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    keep = tmp_path / "keep.csv"
    keep.write_text("location,element\nL01,x\n")
    opt = run_cli("unlink", str(households_file), "--k", "2", "--method", "keep-most", "--keep", str(keep),
                  "--out", str(out))
    assert opt.returncode == 2 and "one-to-many" in opt.stderr and not out.exists()


def test_identified_withholding_that_fits_both_readings_keeps_the_one_to_one_path_unless_stated():
    """A one-to-one release whose locations withhold people's records, with a record for everyone: the data fit
    both readings, so keep-most certifies it one-to-one on the identified side, as before; stated one-to-many, it
    takes the one-to-many path and passes the one-to-many oracle."""
    from graphlink.protect.certify import audit_release
    from graphlink.simulation.simulate import simulate_zipf

    release = simulate_zipf(subjects=40, locations=5, alpha=0.5, withhold=[0.0, 0.0, 0.3, 0.3, 0.3],
                            reserved="identified", seed=2)
    one = unlink_keep(release, 2, 0, audit_before=False)
    assert one.side == "identified" and one.summary().multiplicity == "one-to-one"
    assert audit_release(one.release, 2, "identified")[0].k_unlinkable
    many = unlink_keep(release, 2, 0, audit_before=False, multiplicity="one-to-many")
    assert many.summary().multiplicity == "one-to-many" and many.certified
