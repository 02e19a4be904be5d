"""Adversarial locations (App. C.3.1) against the real protocol, and Monte Carlo against Theorems 11–13."""

from __future__ import annotations

import math

import pytest

from graphlink.secure.parties import Behaviour
from graphlink.secure.protocol import (
    grab_and_go_undetected,
    partial_switch_detection_bound,
    partial_switch_undetected,
    run_stranon,
)

DATA = {
    "A": (["p1", "p2", "p3", "p4", "p5"], ["s1", "s2"]),
    "S": (["p1", "p3", "p5", "p6"], ["s3", "s5", "s6"]),
    "X": (["p2", "p4", "p6", "p7"], ["s4", "s6", "s7"]),
}


def _tol(p: float, n: int) -> float:
    return 4.5 * math.sqrt(p * (1 - p) / n) + 1.0 / n


def test_closed_forms():
    assert partial_switch_undetected(25, 1) == pytest.approx(1 / 25)
    assert partial_switch_undetected(25, 2) == pytest.approx(1 / 300)
    assert partial_switch_undetected(25, 12) == pytest.approx(1 / 5_200_300)
    assert max(partial_switch_undetected(25, f) for f in range(1, 25)) == pytest.approx(1 / 25)
    assert partial_switch_detection_bound(24, 0, 1, with_vc=True) == pytest.approx(1 - 1 / 25)
    assert grab_and_go_undetected(10, 10, 1) == pytest.approx(0.5)
    assert grab_and_go_undetected(10, 10, 2) == pytest.approx(90 / 380)
    for d in range(0, 12):
        vals = [grab_and_go_undetected(10, d, f) for f in range(1, 11)]
        assert vals == sorted(vals, reverse=True)  # monotone, max at f = 1
        assert vals[0] == pytest.approx(10 / (10 + d))


@pytest.mark.parametrize("seed", range(4))
def test_full_key_switch_always_detected_by_sttp(seed):
    """Theorem 11: the encrypted common dummy v_C differs ⇒ the sTTP aborts; the victim's own decryption
    checks pass (a location cannot see a full switch), so the detection is the sTTP's."""
    res = run_stranon(DATA, 2, alpha=2, beta=2,
                      behaviours={"S": Behaviour("full-switch", victim="A", seed=seed)})
    assert res.aborted is not None and "Theorem 11" in res.aborted
    assert any("v_C" in d for d in res.detections)
    assert res.parties["A"].alarm is None
    assert all(not v for v in res.disclosed.values())


def test_full_switch_without_vc_check_goes_unnoticed_and_breaks_dedup():
    """Without the v_C check the switch is invisible and A's values no longer match anyone's."""
    res = run_stranon(DATA, 1, integrity=False, locking=False,
                      behaviours={"S": Behaviour("full-switch", victim="A")})
    assert res.aborted is None and not res.detections
    subs = {c: set(res.parties["sTTP"].submissions[c]) for c in DATA}
    assert not subs["A"] & (subs["S"] | subs["X"])


def _partial_switch_rate(n_data_extra_beta: int, f: int, alpha: int, runs: int) -> tuple[float, float]:
    undetected = 0
    for r in range(runs):
        res = run_stranon(DATA, 2, alpha=alpha, beta=n_data_extra_beta, locking=False,
                          certify=False, behaviours={"S": Behaviour("partial-switch", victim="A", f=f, seed=r)})
        alarm = res.parties["A"].alarm is not None
        undetected += not alarm
    n = len(DATA["A"][1]) + n_data_extra_beta + 1  # |D_A| + β + v_C
    return undetected / runs, partial_switch_undetected(n, f, alpha)


@pytest.mark.parametrize("beta,f,alpha,runs", [(1, 1, 1, 300), (1, 2, 1, 250), (0, 1, 2, 250)])
def test_partial_key_switch_detection_monte_carlo(beta, f, alpha, runs):
    """Theorem 12: a partial switch of f values survives α rounds with probability C(n, f)^−α,
    n = |D_A| + β + 1; detection ≥ 1 − n^−α."""
    rate, expected = _partial_switch_rate(beta, f, alpha, runs)
    assert abs(rate - expected) <= _tol(expected, runs), (rate, expected)
    n = len(DATA["A"][1]) + beta + 1
    assert 1 - rate >= partial_switch_detection_bound(len(DATA["A"][1]), beta, alpha) - _tol(expected, runs)
    assert n >= 3


def test_refusing_to_decrypt_is_locked_out():
    """Theorem 13 with f = everything: A's D_C dummies do not come back, the sTTP releases no unlock key,
    and the cheater S gets nothing either."""
    res = run_stranon(DATA, 1, locking=True, dc_size=4,
                      behaviours={"S": Behaviour("refuse-decrypt", victim="A")})
    assert res.aborted is not None
    assert res.parties["A"].report_ok is False
    assert res.parties["S"].disclosed == []
    assert any("D_C" in d for d in res.detections)


def test_refusing_to_decrypt_without_lock_is_a_successful_grab_and_go():
    res = run_stranon(DATA, 1, locking=False,
                      behaviours={"S": Behaviour("refuse-decrypt", victim="A")})
    ret_a = len(res.dedup.returns["A"])
    assert ret_a > 0 and res.aborted is None
    assert res.parties["A"].unrecovered == ret_a and res.parties["A"].disclosed == []
    assert len(res.parties["S"].disclosed) == len(res.dedup.returns["S"]) > 0


@pytest.mark.parametrize("f,dc,runs", [(1, 3, 250), (2, 2, 250)])
def test_grab_and_go_monte_carlo(f, dc, runs):
    """Theorem 13: undetected grab-and-go (S leaves f of A's values encrypted, none of them from D_C)
    happens with probability C(r, f)/C(r + |D_C|, f) ≤ r/(r + |D_C|)."""
    undetected, expected_sum = 0, 0.0
    for r in range(runs):
        res = run_stranon(DATA, 1, alpha=0, beta=0, locking=True, dc_size=dc, certify=False,
                          behaviours={"S": Behaviour("grab-and-go", victim="A", f=f, seed=r)})
        ret = len(res.dedup.returns["A"])
        expected_sum += grab_and_go_undetected(ret, dc, f)
        a = res.parties["A"]
        if a.report_ok and a.unrecovered > 0:
            undetected += 1
            assert res.aborted is None and res.parties["S"].finished
        else:
            assert res.aborted is not None and res.parties["S"].disclosed == []
        assert grab_and_go_undetected(ret, dc, f) <= ret / (ret + dc) + 1e-12
    rate, expected = undetected / runs, expected_sum / runs
    assert abs(rate - expected) <= _tol(expected, runs), (rate, expected)


# ------------------------------------------------------------------ predictable shuffles (the seed-aware switch)
SEED_AWARE = {"beta": 8, "f": 2, "alpha": 3, "runs": 30}


def _seed_aware_runs(predict: int) -> list:
    """``runs`` protocol runs in which S switches f of A's data values and undoes them where it predicts A's
    check rounds put them, assuming A shuffles with ``random.Random(predict)``."""
    out = []
    for r in range(SEED_AWARE["runs"]):
        cheat = Behaviour("seed-aware-switch", victim="A", f=SEED_AWARE["f"], seed=r, predict=predict,
                          victim_beta=SEED_AWARE["beta"])
        out.append(run_stranon(DATA, 2, alpha=SEED_AWARE["alpha"], beta=SEED_AWARE["beta"], locking=False,
                               certify=False, behaviours={"S": cheat}))
    return out


def _honest_submission(res) -> set[bytes]:
    """A's submission had nobody cheated: H(ω_A) under every location's multi-party key."""
    from graphlink.secure.crypto import encrypt_many, hash_points

    keys = [res.parties[c].key_m for c in DATA]
    return set(encrypt_many(keys, hash_points(DATA["A"][1])))


def test_seed_aware_switch_goes_unnoticed_when_shuffles_are_predictable(monkeypatch):
    """The attack as it was: with every party's shuffles drawn from a generator others can rebuild (a public
    seed), S switches A's data, undoes exactly those positions in A's α check rounds, and is never caught —
    A's submission reaches the sTTP under S's other key."""
    import random

    from graphlink.secure.parties import shared

    monkeypatch.setattr(shared, "protocol_rng", lambda: random.Random(0))
    for res in _seed_aware_runs(predict=0):
        assert res.aborted is None and res.parties["A"].alarm is None and not res.detections
        switched = res.parties["S"]._switched["A"]
        assert len(switched) == SEED_AWARE["f"]
        submitted = set(res.parties["sTTP"].submissions["A"])
        assert len(submitted - _honest_submission(res)) == SEED_AWARE["f"]     # the switch went through


def test_seed_aware_switch_is_detected_with_csprng_shuffles():
    """The same cheater against the real protocol (OS CSPRNG shuffles): its predictions are worthless, and
    each run escapes with probability at most C(n, f)^−α (Theorem 12's proof), n = |D_A| + β + 1. Here
    n = 11, f = 2, α = 3: 55^−3 ≈ 6e-6 per run, so all 30 runs are caught except with probability < 2e-4."""
    n = len(DATA["A"][1]) + SEED_AWARE["beta"] + 1
    bound = partial_switch_undetected(n, SEED_AWARE["f"], SEED_AWARE["alpha"])
    assert bound * SEED_AWARE["runs"] < 2e-4
    assert 1 - bound >= partial_switch_detection_bound(len(DATA["A"][1]), SEED_AWARE["beta"], SEED_AWARE["alpha"])
    for res in _seed_aware_runs(predict=0):
        assert res.aborted is not None, "a seed-aware switch went unnoticed"
        assert res.parties["A"].alarm is not None or any("v_C" in d for d in res.detections)
        assert all(not v for v in res.disclosed.values())


def test_protocol_randomness_is_the_os_csprng():
    """Every party shuffles with secrets.SystemRandom (no seed anywhere on the protocol path)."""
    import secrets

    from graphlink.secure.protocol import make_parties

    parties = make_parties(DATA, 2, "greedy-dedup-secure")
    assert all(isinstance(p.rng, secrets.SystemRandom) for p in parties.values())
