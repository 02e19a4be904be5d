"""Suppression-based unlinking (thesis ch. 7): thesis figures, procedures, invariants, CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from graphlink.core.release import read_release
from graphlink.protect import (
    METHODS,
    Instance,
    allocate,
    audit_release,
    certify,
    explicit_clean,
    final_clean,
    least_frequent,
    reduce_databases,
    unlink,
    utility,
)
from tests.unlink_oracle import is_k_unlinkable, union_degrees

# Figure 7.1(a): four hospitals, identified Ψ and DNA Δ, every DNA record uniquely re-identifiable.
FIG71_G = {"H1": ["Ali", "Bob", "Charlie"], "H2": ["Ali", "Bob", "Dan"], "H3": ["Ali", "Charlie", "Dan"],
           "H4": ["Bob", "Charlie", "Dan"]}
FIG71_W = {"H1": ["actg", "ctga", "tgac"], "H2": ["actg", "ctga", "gatc"], "H3": ["actg", "tgac", "gatc"],
           "H4": ["ctga", "tgac", "gatc"]}
# Figure 7.1(b): the suppressed databases Δ' the thesis shows as 2-unlinkable.
FIG71_WB = {"H1": ["actg", "ctga"], "H2": ["actg", "gatc"], "H3": ["tgac", "gatc"], "H4": ["ctga", "tgac"]}
# Figure 7.2(a): two hospitals; (c) is the Greedy-Dedup result for k = 3.
FIG72_G = {"H1": ["Ali", "Bob", "Charlie"], "H2": ["Dan"]}
FIG72_W = {"H1": ["actg", "ctga", "tgac"], "H2": ["gacg"]}

#: the methods that allocate disclosures per location (the Dedup family); keep-most (a whole-release method, its own
#: tests in tests/protect/test_unlink_keep.py) is not one of them
DEDUP = tuple(m for m in METHODS if __import__("graphlink.registry", fromlist=["get"]).get(m).input == "instance")


def frame_of(gamma: dict, omega: dict) -> pd.DataFrame:
    rows = [(c, "identified", e) for c in gamma for e in gamma[c]]
    rows += [(c, "deidentified", e) for c in omega for e in omega[c]]
    return pd.DataFrame(rows, columns=["location", "kind", "element"])


def release_of(gamma: dict, omega: dict):
    return read_release(frame_of(gamma, omega))


# ------------------------------------------------------------------------------------------------ Figure 7.1

def test_figure_7_1_original_is_1_unlinkable_and_suppressed_is_2_unlinkable():
    original = release_of(FIG71_G, FIG71_W)
    res, _ = audit_release(original, 2, "auto")
    assert not res.k_unlinkable and res.true_loves == 4          # U_XY is the identity: all re-identified
    deg_m, deg_n, _, z = union_degrees(frame_of(FIG71_G, FIG71_W))
    assert z == 0 and set(deg_m.values()) == {1} and set(deg_n.values()) == {1}
    suppressed = release_of(FIG71_G, FIG71_WB)
    res_b, _ = audit_release(suppressed, 2)
    assert res_b.k_unlinkable and res_b.true_loves == 0
    assert is_k_unlinkable(frame_of(FIG71_G, FIG71_WB), 2)
    assert not is_k_unlinkable(frame_of(FIG71_G, FIG71_WB), 3)
    assert not audit_release(suppressed, 3)[0].k_unlinkable


@pytest.mark.parametrize("method", DEDUP)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_figure_7_1_methods_give_certified_2_unlinkable_subsets(method, seed):
    original = release_of(FIG71_G, FIG71_W)
    result = unlink(original, 2, method, seed)
    assert result.certified and not result.repair_withheld
    out = result.release.frame
    # identified rows untouched, de-identified rows a subset (Definition 21)
    pd.testing.assert_frame_equal(out[out.kind == "identified"].reset_index(drop=True),
                                  original.frame[original.frame.kind == "identified"].reset_index(drop=True))
    orig_pairs = set(map(tuple, original.frame[original.frame.kind == "deidentified"][["location", "element"]].values))
    out_pairs = set(map(tuple, out[out.kind == "deidentified"][["location", "element"]].values))
    assert out_pairs <= orig_pairs
    assert is_k_unlinkable(out, 2)
    assert result.before["true_loves"] == 4 and result.after["true_loves"] == 0


def test_figure_7_1_greedy_by_hand():
    # every |γ_c| = 3: the first location takes min(3, 3) = 3 protectees and 3 protectors, which leaves
    # every other location one protector (< k = 2), so Explicit-Clean empties them.
    for seed in range(5):
        a = allocate(Instance.from_sets(FIG71_G, FIG71_W), 2, "greedy-dedup", seed)
        sizes = sorted(len(v) for v in a.disclosed.values())
        assert sizes == [0, 0, 0, 3]
        (c,) = [c for c, v in a.disclosed.items() if v]
        assert set(a.disclosed[c]) == set(FIG71_W[c]) and set(a.protectors[c]) == set(FIG71_G[c])


# ------------------------------------------------------------------------------------------------ Figure 7.2

@pytest.mark.parametrize("method", ["greedy-dedup", "force-dedup"])
def test_figure_7_2_reproduces_the_3_unlinkable_result(method):
    release = release_of(FIG72_G, FIG72_W)
    result = unlink(release, 3, method, seed=0)
    # Figure 7.2(c): actg, ctga, tgac disclosed by H1 (trail 1*), gacg withheld (null trail)
    assert {c: sorted(v) for c, v in result.allocation.disclosed.items()} == {
        "H1": ["actg", "ctga", "tgac"], "H2": []}
    assert sorted(result.allocation.protectors["H1"]) == ["Ali", "Bob", "Charlie"]
    assert result.certified and not result.repair_withheld and not result.allocation.final_clean_withheld
    assert is_k_unlinkable(result.release.frame, 3)
    # Dan's only union edge goes to the null trail (Def. 19 clause 2); Ali/Bob/Charlie have 3 real edges
    deg_m, deg_n, null_ok, z = union_degrees(result.release.frame)
    assert z == 1 and deg_m == {"Ali": 3, "Bob": 3, "Charlie": 3, "Dan": 0} and null_ok["Dan"]
    assert set(deg_n.values()) == {3}
    assert result.metrics["withheld"] == 1 and result.metrics["locations_empty"] == 1


# ------------------------------------------------------------------------------------------------ procedures

def test_explicit_clean_procedure_8():
    gamma = {"a": {1, 2, 3}, "b": {4, 5}, "c": {6, 7, 8}}
    omega = {"a": {"x"}, "b": {"y"}, "c": set()}
    g, w = explicit_clean(gamma, omega, 3)
    assert g == {"a": {1, 2, 3}, "b": set(), "c": set()}        # b: |γ| < k; c: |ω| = 0
    assert w == {"a": {"x"}, "b": set(), "c": set()}
    assert gamma["b"] == {4, 5}                                  # inputs untouched
    g2, _ = explicit_clean(gamma, omega, 3, only=["c"])
    assert g2["b"] == {4, 5} and g2["c"] == set()


def test_reduce_procedure_9():
    gamma = {"a": {1, 2, 3}, "b": {2, 3, 4}}
    omega = {"a": {"x", "y"}, "b": {"y", "z"}}
    g, w = reduce_databases({2, 3}, {"y"}, gamma, omega)
    assert g == {"a": {1}, "b": {4}} and w == {"a": {"x"}, "b": {"z"}}


def test_least_frequent_prefers_rare_elements_and_seeds_ties():
    dbs = {"a": {1, 2, 3, 4}, "b": {1, 2}, "c": {1}}
    assert least_frequent([1, 2, 3, 4], dbs, 2, np.random.default_rng(0)) in ([3, 4], [4, 3])
    assert least_frequent([1, 2, 3, 4], dbs, 3, np.random.default_rng(0))[2] == 2
    picks = {tuple(least_frequent([3, 4, 5, 6], {"a": {3, 4, 5, 6}}, 1, np.random.default_rng(s)))
             for s in range(20)}
    assert len(picks) > 1                                        # ties vary with the seed
    assert least_frequent([3, 4], dbs, 1, np.random.default_rng(7)) == \
        least_frequent([3, 4], dbs, 1, np.random.default_rng(7))  # and are reproducible


def test_final_clean_withdraws_until_null_trails_protect():
    # a links only to wa (r = 1) and there are z = 1 null trails: union degree 2 < k = 3
    gamma = {"H1": {"a", "b", "c"}, "H2": {"d", "e", "f", "g"}}
    disclosed = {"H1": ["wa"], "H2": ["wd", "we", "wf", "wg"]}
    out = final_clean(gamma, disclosed, 3, n_identified=6)       # z = 6 - 5 = 1
    assert out["H1"] == ["wa"] and len(out["H2"]) == 3           # one record from the largest allocation
    assert final_clean(gamma, disclosed, 3) == disclosed         # |M| = 7: z = 2 = k - 1, nothing to do


def test_utility_metrics_eq_7_1_and_7_2():
    omega = {"a": ["x", "y"], "b": ["y", "z"], "c": ["w"]}
    u = utility(omega, {"a": ["x"], "b": ["z"], "c": []})
    assert u["disclosed"] == 2 and u["withheld"] == 2 and u["total"] == 4      # |{x,y,z,w}| - |{x,z}|
    assert u["locations_empty"] == 1 and u["locations_disclosing"] == 2
    assert u["rows_disclosed"] == 2 and u["rows_withheld"] == 3


# ------------------------------------------------------------------------------------------------ certification

def test_certify_repairs_a_failing_suppression():
    # disclosing everything of Figure 7.1 is 1-unlinkable: certify must withhold until the audit passes
    original = release_of(FIG71_G, FIG71_W)
    out, disclosed, res, repair, rounds = certify(original, FIG71_W, 2)
    assert res.k_unlinkable and repair and rounds >= 1
    assert is_k_unlinkable(out.frame, 2)


def test_certify_rejects_records_not_in_the_release():
    from graphlink.errors import ModelAssumptionError
    with pytest.raises(ModelAssumptionError):
        certify(release_of(FIG72_G, FIG72_W), {"H1": ["zzzz"]}, 2)


def test_identified_reserved_release_is_rejected():
    from graphlink.errors import ModelAssumptionError
    with pytest.raises(ModelAssumptionError):
        unlink(release_of({"H1": ["Ali"]}, {"H1": ["actg", "ctga"]}), 2)


@pytest.mark.parametrize("method", DEDUP)
def test_simulated_release_invariants(method):
    from graphlink.simulation.simulate import simulate_uniform

    release = simulate_uniform(150, 8, 0.5, reserved="none", seed=3)
    inst = Instance.from_frame(release.frame)
    for k in (2, 5, 12):
        result = unlink(release, k, method, seed=1)
        a = result.allocation
        assert result.certified and not result.repair_withheld and not a.final_clean_withheld
        seen: set = set()
        used: set = set()
        for c in a.locations:
            d, p = set(a.disclosed[c]), set(a.protectors[c])
            assert d <= set(inst.de_keys[inst.omega(a.locations.index(c))])      # ω'_c ⊆ ω_c
            assert p <= set(inst.id_keys[inst.gamma(a.locations.index(c))])      # P_c ⊆ γ_c
            assert not d & seen and not p & used                                # Lemma 8, Corollary 4
            if d:
                assert len(p) >= max(k, len(d))                                  # Lemmas 9, 10
            seen |= d
            used |= p
        assert result.after["true_loves"] == 0


# ------------------------------------------------------------------------------------------------ CLI

def test_cli_unlink_json(tmp_path):
    from graphlink.cli import app

    src = tmp_path / "fig71.csv"
    frame_of(FIG71_G, FIG71_W).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(app, ["unlink", str(src), "--k", "2", "--method", "force-dedup", "--seed", "1",
                                   "--out", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    for key in ("k", "method", "disclosed", "withheld", "locations_disclosing", "certified",
                "true_loves_before", "true_loves_after"):
        assert key in summary
    assert summary["certified"] and summary["k"] == 2 and summary["true_loves_before"] == 4
    written = read_release(out)
    assert audit_release(written, 2)[0].k_unlinkable
    assert summary["disclosed"] == written.frame[written.frame.kind == "deidentified"].element.nunique()
    assert (written.frame.kind == "identified").sum() == 12


def test_cli_secure_without_provider_is_a_clear_error(tmp_path, monkeypatch):
    import graphlink.secure as secure
    from graphlink.cli import app
    from graphlink.cli.commands.unlink import SecureUnavailableError

    monkeypatch.delattr(secure, "secure_unlink", raising=False)
    src = tmp_path / "fig72.csv"
    frame_of(FIG72_G, FIG72_W).to_csv(src, index=False)
    res = CliRunner().invoke(app, ["unlink", str(src), "--k", "3", "--secure", "--out", str(tmp_path / "o.csv")])
    assert isinstance(res.exception, SecureUnavailableError) and res.exception.exit_code == 2
    assert "secure_unlink" in str(res.exception)
    assert not (tmp_path / "o.csv").exists()


def test_cli_secure_output_is_certified(tmp_path, monkeypatch):
    """A provider that discloses too much is caught by the audit and repaired before writing."""
    import graphlink.secure as secure
    from graphlink.cli import app

    monkeypatch.setattr(secure, "secure_unlink", lambda release, k, method, seed: release, raising=False)
    src = tmp_path / "fig71.csv"
    frame_of(FIG71_G, FIG71_W).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(app, ["unlink", str(src), "--k", "2", "--secure", "--out", str(out),
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["certified"] and summary["repair_withheld"] > 0
    assert audit_release(read_release(out), 2)[0].k_unlinkable


@pytest.mark.slow
def test_cli_secure_with_the_real_protocol(tmp_path):
    """End to end with graphlink.secure.secure_unlink (STRANON): the written release is certified."""
    import graphlink.secure as secure
    from graphlink.cli import app

    if getattr(secure, "secure_unlink", None) is None:
        pytest.skip("graphlink.secure.secure_unlink not available")
    src = tmp_path / "fig72.csv"
    frame_of(FIG72_G, FIG72_W).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(app, ["unlink", str(src), "--k", "3", "--method", "greedy-dedup", "--secure",
                                   "--out", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["certified"] and summary["secure"]
    written = read_release(out)
    assert audit_release(written, 3)[0].k_unlinkable and is_k_unlinkable(written.frame, 3)
