"""``unlink --max-risk P`` (graphlink.protect.maxrisk): the written release, read back from its file, has no pair
above P, by the risk computation run independently and, on tiny releases, by a brute-force enumeration of every
maximum matching written here from the definition (a pair's probability is its share of the consistent
assignments, docs/risk.md).  The CLI's words, exit codes and refusals.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from fractions import Fraction

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlink.analysis.risk import pair_probabilities
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails
from graphlink.protect.maxrisk import MaxRiskError, start_level, unlink_max_risk
from tests.cli_runner import run_cli
from tests.protect.test_unlink_properties import small_releases
from tests.unlink_oracle import is_k_unlinkable, trails


def brute_force_probabilities(frame: pd.DataFrame) -> dict[tuple[Hashable, Hashable], Fraction]:
    """Every (person, record) pair's share of the maximum matchings of the link graph, by enumeration.

    Trails by FillTrails (``tests/unlink_oracle.trails``: 1 where disclosed, 0 where a location disclosed as many
    records as people, unknown elsewhere); a person links to a record when they agree wherever the record is known.
    The side with fewer elements is padded with null trails linked to everybody; a real matching of size m
    extends to a maximum one exactly when m is the largest real size (the other side always has enough people
    left for the nulls), and every such matching extends in the same number of ways, so the share among the
    largest real matchings is the share among the maximum matchings."""
    people, mt, nt, _ = trails(frame)
    records = list(nt)
    links = {r: [m for m in people if all(v is None or v == mt[m][i] for i, v in enumerate(nt[r]))]
             for r in records}
    best, found = -1, []

    def walk(i: int, used: frozenset, pairs: tuple) -> None:
        nonlocal best, found
        if i == len(records):
            if len(pairs) > best:
                best, found = len(pairs), []
            if len(pairs) == best:
                found.append(pairs)
            return
        r = records[i]
        for m in links[r]:
            if m not in used:
                walk(i + 1, used | {m}, (*pairs, (m, r)))
        walk(i + 1, used, pairs)

    walk(0, frozenset(), ())
    counts: dict = {}
    for matching in found:
        for pair in matching:
            counts[pair] = counts.get(pair, 0) + 1
    return {pair: Fraction(c, len(found)) for pair, c in counts.items()}


def _reread_risk(path) -> pd.DataFrame:
    rel = read_release(path)
    return pair_probabilities(build_linkgraph(build_trails(rel, "deidentified", "one-to-one"))).pairs()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=small_releases(max_people=5, max_locations=3), p=st.sampled_from([0.3, 0.34, 0.5, 0.6, 0.75]),
       seed=st.integers(0, 3))
def test_written_release_has_no_pair_above_p(frame, p, seed, tmp_path_factory):
    release = read_release(frame)
    try:
        result = unlink_max_risk(release, p, seed=seed, multiplicity="one-to-one")
    except MaxRiskError as exc:
        # on releases this small every probability is exact, so the only refusal is withholding everything
        assert "withholding every" in str(exc)
        return
    path = tmp_path_factory.mktemp("maxrisk") / "protected.csv"
    result.release.to_csv(path)
    pairs = _reread_risk(path)                           # the file as anybody would read it, computed anew
    assert bool(pairs["exact"].all())
    assert (pairs["probability"] <= p + 1e-9).all()
    brute = brute_force_probabilities(pd.read_csv(path, dtype=str))
    assert all(v <= Fraction(p).limit_denominator(1000) for v in brute.values()), brute
    assert result.highest == pytest.approx(float(max(brute.values(), default=0)))
    # only records were withheld, and the protected release keeps some of them
    kept = pd.read_csv(path, dtype=str)
    assert set(map(tuple, kept.to_numpy().tolist())) <= set(map(tuple, frame.astype(str).to_numpy().tolist()))
    assert (kept["kind"] == "deidentified").any()
    assert (kept["kind"] == "identified").sum() == (frame["kind"] == "identified").sum()
    assert result.k_unlinkable == is_k_unlinkable(kept, result.k)      # the audit's flag, by Definition 19


def test_k_unlinkability_at_one_over_p_is_not_enough_and_the_loop_goes_further():
    """docs/risk.md's three records: 2-unlinkable, yet one pair has probability 2/3.  Asked for 1/2 on a release
    where keep-most at k = 2 withholds nothing, the loop withholds until no pair exceeds 1/2."""
    rows = [("A", "identified", "x1"), ("B", "identified", "x1"), ("A", "identified", "x2"),
            ("B", "identified", "x2"), ("C", "identified", "x2"), ("B", "identified", "x3"),
            ("C", "identified", "x3"), ("A", "deidentified", "y1"), ("B", "deidentified", "y2"),
            ("C", "deidentified", "y3")]
    frame = pd.DataFrame(rows, columns=["location", "kind", "element"])
    assert max(brute_force_probabilities(frame).values()) == Fraction(2, 3)
    result = unlink_max_risk(read_release(frame), 0.5, seed=0)
    assert result.unlinked.certified and result.k == 2
    after = brute_force_probabilities(result.release.frame)
    assert max(after.values()) <= Fraction(1, 2) and result.highest <= 0.5
    assert result.by_method == 0 and result.by_rounds == result.rows_withheld >= 1 and result.risk.exact


@pytest.mark.parametrize("seed", [1, 2])
def test_estimated_pairs_count_only_by_their_upper_bound(seed):
    """With exact counting switched off, the blocks are estimated: the loop stops only when every estimated pair's
    upper 95 % bound is at most P, and the exact count of the written release (the default budget counts these
    blocks) stays at most P up to the estimate's own error."""
    from graphlink.simulation.simulate import simulate_uniform

    release = simulate_uniform(14, 5, 0.5, withhold=0.3, seed=seed)
    p = 0.5
    result = unlink_max_risk(release, p, seed=0, max_exact_states=0, budget=0.2, multiplicity="one-to-one")
    est = ~result.risk.class_exact & result.risk.classes.class_allowed
    assert est.any() and not result.exact
    upper = result.risk.class_probability + result.risk.class_error
    assert (upper <= p + 1e-9).all() and result.highest_upper <= p + 1e-9
    exact = pair_probabilities(build_linkgraph(build_trails(result.release, "deidentified", "one-to-one")))
    assert exact.exact and (exact.class_probability <= p + 0.05).all()


def test_start_level_is_one_over_p_rounded_up():
    assert [start_level(p) for p in (0.9, 0.5, 0.34, 1 / 3, 0.2, 0.01)] == [2, 2, 3, 3, 5, 100]


@pytest.fixture(scope="module")
def fig34_file(tmp_path_factory):
    import graphlink as gl

    path = tmp_path_factory.mktemp("fig") / "fig34.csv"
    gl.thesis_example().to_csv(path)
    return path


def test_cli_max_risk_words_and_written_file(fig34_file, tmp_path):
    out_path = tmp_path / "protected.csv"
    out = run_cli("unlink", str(fig34_file), "--max-risk", "0.5", "--seed", "0", "--out", str(out_path))
    assert out.returncode == 0, out.stderr
    assert "Withheld 2 of 10 de-identified records" in out.stdout
    assert "Highest remaining probability that a record is a given person: 0.500 (exact)" in out.stdout
    assert "no pair's probability exceeds 0.5 (every probability exact)" in out.stdout
    assert "Expected people re-identified correctly" in out.stdout
    assert "The written release is 2-unlinkable by the exact audit." in out.stdout
    pairs = _reread_risk(out_path)
    assert (pairs["probability"] <= 0.5 + 1e-9).all()
    js = run_cli("unlink", str(fig34_file), "--max-risk", "0.34", "--seed", "0", "--out", str(out_path),
                 "--format", "json")
    assert js.returncode == 0, js.stderr
    s = json.loads(js.stdout)
    assert s["certified"] and s["k"] == 3 and s["highest"] <= 0.34 and s["highest_exact"]
    assert s["rows_withheld"] == s["withheld_by_method"] + s["withheld_by_rounds"]
    assert max(brute_force_probabilities(pd.read_csv(out_path, dtype=str)).values()) <= Fraction(34, 100)


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.2", "abc", "nan", ""])
def test_cli_bad_max_risk_is_one_line_exit_2(fig34_file, tmp_path, value):
    out = run_cli("unlink", str(fig34_file), "--max-risk", value, "--out", str(tmp_path / "o.csv"))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "strictly between 0 and 1" in out.stderr
    assert not (tmp_path / "o.csv").exists()


def test_cli_refusals(fig34_file, tmp_path):
    target = tmp_path / "o.csv"
    unreachable = run_cli("unlink", str(fig34_file), "--max-risk", "0.2", "--seed", "0", "--out", str(target))
    assert unreachable.returncode == 2 and not target.exists()
    assert unreachable.stderr.strip().splitlines()[-1].endswith(
        "cannot be reached without withholding every de-identified record; nothing written")
    budget = run_cli("unlink", str(fig34_file), "--k", "2", "--budget", "3", "--out", str(target))
    assert budget.returncode == 2 and "--budget is an option of --max-risk" in budget.stderr
    neither = run_cli("unlink", str(fig34_file), "--out", str(target))
    assert neither.returncode == 2 and "--k" in neither.stderr and "--max-risk" in neither.stderr
    assert len(neither.stderr.strip().splitlines()) == 1
    secure = run_cli("unlink", str(fig34_file), "--max-risk", "0.5", "--secure", "--out", str(target))
    assert secure.returncode == 2 and "--secure is not available with --max-risk" in secure.stderr
    household = tmp_path / "household.csv"                  # records that stand for whole households
    made = run_cli("simulate", "--subjects", "40", "--locations", "6", "--p", "0.4", "--households", "--seed", "3",
                   "--out", str(household))
    assert made.returncode == 0, made.stderr
    many = run_cli("unlink", str(household), "--max-risk", "0.5", "--out", str(target))
    assert many.returncode == 2 and "not computed for one-to-many" in many.stderr
    assert len(many.stderr.strip().splitlines()) == 1 and not target.exists()


def test_words_for_an_estimated_result():
    """An estimated highest probability is shown with its error and the bound the certificate used."""
    from graphlink.cli.commands.unlink import _risk_lines

    s = {"side": "deidentified", "rows_before": 200, "rows_withheld": 50, "withheld_by_method": 20,
         "withheld_by_rounds": 30, "method": "keep-most", "k": 2, "max_risk": 0.5, "records_withheld": 1,
         "records_before": 60, "highest": 0.458, "highest_exact": False, "highest_error": 0.0092,
         "highest_upper": 0.467, "exact": False, "expected_correct": 12.34, "k_unlinkable": False}
    lines = _risk_lines(s, 70)
    assert lines[0].startswith("Withheld 50 of 200 de-identified records (location, record) (25.0 %): 20 by "
                               "keep-most at k = 2, 30 more where a pair was still above 0.5; 1 of 60 records")
    assert lines[1] == ("Highest remaining probability that a record is a given person: 0.458 (estimated, ± 0.009); "
                        "no pair's probability exceeds 0.5 (estimated pairs counted by their 95 % upper bound, at "
                        "most 0.467).")
    assert lines[2].endswith("record: 12.3 of 70.")
    assert lines[3].startswith("The written release is NOT 2-unlinkable by the exact audit")


def test_cli_k_alone_still_runs_the_dedup_default(fig34_file, tmp_path):
    out = run_cli("unlink", str(fig34_file), "--k", "2", "--out", str(tmp_path / "o.csv"), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["method"] == "force-dedup"


@pytest.mark.parametrize(("options", "flag"), [(["--k", "2", "--method", "keep-most", "--time-budget", "nan"],
                                                 "--time-budget"),
                                                (["--k", "2", "--method", "keep-most", "--time-budget", "inf"],
                                                 "--time-budget"),
                                                (["--max-risk", "0.5", "--budget", "nan"], "--budget")])
def test_cli_time_limits_that_are_not_numbers_are_refused(fig34_file, tmp_path, options, flag):
    """A time limit of nan or inf would mean no limit at all: one line naming the option, exit 2, nothing
    written."""
    target = tmp_path / "o.csv"
    out = run_cli("unlink", str(fig34_file), *options, "--out", str(target))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert flag in out.stderr and not target.exists()
