"""STRANON end to end: thesis Figures 8.1–8.7, what every party receives, App. C.3.2 cost formulas, the
loopback multi-process transport, and ``secure_unlink``."""

from __future__ import annotations

import numpy as np
import pytest

from graphlink.secure import messages as M
from graphlink.secure.crypto import hash_to_point
from graphlink.secure.protocol import bandwidth_formula, dataset_ops_formula, run_stranon
from graphlink.secure.unlinkability import (
    central_view,
    contributor_view,
    external_view,
    links,
    trails,
)

LOCS = ["H1", "H2", "H3", "H4"]
# Figure 8.1 (= Figure 3.4): identified Ψ and de-identified Δ of four hospitals
GAMMA = {"H1": {"Ali", "Bob", "Charlie"}, "H2": {"Ali", "Bob", "Dan"}, "H3": {"Ali", "Charlie", "Dan"},
         "H4": {"Bob", "Charlie", "Dan"}}
OMEGA = {"H1": {"actg", "tgac"}, "H2": {"actg", "ctga", "gatc"}, "H3": {"actg", "tgac", "gatc"},
         "H4": {"ctga", "tgac"}}
TRUTH = {"Ali": "actg", "Bob": "ctga", "Charlie": "tgac", "Dan": "gatc"}
# Figure 8.3 / 8.5: the sTTP's suppressions (external protection only)
FIG_8_3 = {"H1": {"actg"}, "H2": {"gatc"}, "H3": {"tgac"}, "H4": {"ctga"}}
DATA = {c: (sorted(GAMMA[c]), sorted(OMEGA[c])) for c in LOCS}


def _tau(c):
    return {m: TRUTH[m] for m in GAMMA[c] if TRUTH[m] in OMEGA[c]}


def test_figure_8_2_trails_seen_by_sttp():
    """Figure 8.2: the sTTP's trail matrix for h(Δ) (0 where |γ_c| = |ω_c|: H2, H3)."""
    m_keys, m_ones, n_keys, n_known, n_ones = trails(LOCS, GAMMA, OMEGA)
    shown = {n: "".join("*" if not n_known[j, c] else str(int(n_ones[j, c])) for c in range(4))
             for j, n in enumerate(n_keys)}
    assert shown == {"actg": "111*", "ctga": "*101", "tgac": "1011", "gatc": "*11*"}


def test_figure_8_4_external_2_unlinkability_holds():
    ext = external_view(LOCS, GAMMA, FIG_8_3, 2)
    assert ext.k_unlinkable and ext.n_null == 0
    # every link is in some maximum matching (U_YX = L_YX), degree 3 on both sides
    assert set(ext.union_degree_right.values()) == {3} and set(ext.union_degree_left.values()) == {3}


def test_figure_8_4_agrees_with_core_audit():
    pytest.importorskip("graphlink.analysis.audit")
    import pandas as pd

    from graphlink.analysis.audit import audit
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.release import read_release
    from graphlink.core.trails import build_trails

    rows = [(c, "identified", m) for c in LOCS for m in sorted(GAMMA[c])]
    rows += [(c, "deidentified", n) for c in LOCS for n in sorted(FIG_8_3[c])]
    rel = read_release(pd.DataFrame(rows, columns=["location", "kind", "element"]))
    res = audit(build_linkgraph(build_trails(rel, reserved="deidentified")), 2)
    assert res.k_unlinkable == external_view(LOCS, GAMMA, FIG_8_3, 2).k_unlinkable


def test_figures_8_5_8_6_central_view_reidentifies_everything():
    """B = Q·Pᵀ with P = identity (Fig. 8.5): the union of maximum matchings is the identity, so the sTTP
    re-identifies all four samples although external 2-unlinkability holds."""
    m_keys, m_ones, n_keys, n_known, n_ones = trails(LOCS, GAMMA, OMEGA)
    ei, ej = links(m_ones, n_known, n_ones)
    Q = np.zeros((4, 4), int)
    Q[ei, ej] = 1
    order_m = ["Ali", "Bob", "Charlie", "Dan"]
    order_n = ["actg", "ctga", "tgac", "gatc"]
    Qp = Q[np.ix_([m_keys.index(m) for m in order_m], [n_keys.index(n) for n in order_n])]
    # thesis prints Q (rows = samples, columns = identities)
    assert Qp.T.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]]
    cen = central_view(LOCS, GAMMA, OMEGA, {c: sorted(v) for c, v in FIG_8_3.items()}, 2)
    assert not cen.k_unlinkable
    got = {m: loc.split("#")[0] for m, loc in cen.reidentified}
    assert got == {"Ali": "H1", "Dan": "H2", "Charlie": "H3", "Bob": "H4"}  # actg, gatc, tgac, ctga


def test_figure_8_7_h1_contributor_view_stays_2_unlinkable():
    w1 = contributor_view(LOCS, GAMMA, FIG_8_3, 2, _tau("H1"))
    assert w1.k_unlinkable
    assert w1.union_degree_left == {"Bob": 2, "Dan": 2}
    assert w1.union_degree_right == {"ctga": 2, "gatc": 2}


@pytest.mark.parametrize("method", ["greedy-dedup-secure", "force-dedup-secure"])
def test_stranon_on_figure_8_1_satisfies_all_three(method):
    res = run_stranon(DATA, 2, method)
    assert res.aborted is None and not res.detections
    assert res.certification["external"] and res.certification["central"]
    disclosed = {c: set(v) for c, v in res.disclosed.items()}
    assert all(disclosed[c] <= OMEGA[c] for c in LOCS)
    assert external_view(LOCS, GAMMA, disclosed, 2).k_unlinkable
    assert all(contributor_view(LOCS, GAMMA, disclosed, 2, _tau(c)).k_unlinkable for c in LOCS)
    assert sum(map(len, disclosed.values())) == res.dedup.disclosed() > 0


def _frames_by_recipient(res):
    out = {}
    for to, frame in res.frames:
        out.setdefault(to, []).append(frame)
    return out


@pytest.mark.parametrize("locking", [True, False])
def test_no_party_receives_plaintext_or_keys(locking):
    """Inspect every frame each party receives: no de-identified plaintext, no unencrypted hash point
    H(x) of any de-identified value, no other party's key (scalar or inverse). The one designed exception
    is the sTTP's one-time lock key z_C^l sent to l in ``Unlock``."""
    pairs = {c: _tau(c) for c in LOCS}
    res = run_stranon(DATA, 2, alpha=2, beta=3, locking=locking, dc_size=4, keep_messages=True,
                      pairs=pairs, contributor_veto=True)
    assert res.aborted is None
    parties = res.parties
    plain = {x for c in LOCS for x in OMEGA[c]}
    hashed = {hash_to_point(x) for x in plain}
    by_to = _frames_by_recipient(res)
    assert set(by_to) == set(parties)
    for name, frames in by_to.items():
        for frame in frames:
            msg = M.decode(frame)
            header = frame[4: 4 + int.from_bytes(frame[:4], "big")].decode()
            for x in plain:
                assert f'"{x}"' not in header, (name, msg.kind)
            for field in msg.point_fields:
                assert not hashed & set(getattr(msg, field)), (name, msg.kind)
            for other, party in parties.items():
                if other == name:
                    continue
                designed = (parties["sTTP"].lock_keys[name].inverse
                            if isinstance(msg, M.Unlock) and other == "sTTP" else None)
                for secret in party.secrets():
                    if secret == designed:
                        continue
                    assert secret not in frame, (name, msg.kind, other)
    # the sTTP receives only fully encrypted values: each submission equals H(ω_c) under every y^m
    keys = [parties[c].key_m for c in LOCS]
    for c in LOCS:
        expect = [hash_to_point(x) for x in OMEGA[c]]
        for k in keys:
            expect = k.encrypt(expect)
        sub = [m for m in parties["sTTP"].received if isinstance(m, M.Submission) and m.sender == c][0]
        assert set(sub.points) == set(expect)
    # the sTTP never receives a de-identified plaintext or an identified->deidentified pairing
    assert all(m.kind in {"publish-identified", "submission", "decryption-report", "finished", "encrypt-reply",
                          "preview-verdict"} for m in parties["sTTP"].received)
    # what a location sees in the veto preview is exactly what publication will show it
    for c in LOCS:
        prev = [m for m in parties[c].received if isinstance(m, M.Preview)][-1]
        assert prev.counts == {p: len(v) for p, v in res.disclosed.items()}


@pytest.mark.parametrize("integrity,locking,alpha,beta,dc", [
    (False, False, 0, 0, 0), (True, False, 1, 2, 0), (True, True, 2, 3, 5), (True, True, 0, 0, 3)])
def test_cost_counters_match_appendix_c32(integrity, locking, alpha, beta, dc):
    res = run_stranon(DATA, 2, alpha=alpha, beta=beta, integrity=integrity, locking=locking, dc_size=dc)
    assert res.aborted is None
    L = len(LOCS)
    a = alpha if integrity else 0
    b = beta if integrity else 0
    for c in LOCS:
        assert res.costs[c]["dataset_ops"] == dataset_ops_formula(L, a)
        expected = bandwidth_formula(L, len(OMEGA[c]), len(res.dedup.returns[c]), alpha=a, beta=b,
                                     integrity=integrity, dc_size=dc, locking=locking, submitted_dummies=False)
        assert res.bandwidth_by_owner[c] == expected
        # element-level work: every record of every dataset l touches is one scalar multiplication
        assert res.costs[c]["element_ops"] > 0
    # bytes counted on both ends agree
    assert sum(p["bytes_sent"] for p in res.costs.values()) == sum(p["bytes_received"] for p in res.costs.values())


@pytest.mark.slow
def test_separate_processes_over_loopback_agree_with_in_process():
    pytest.importorskip("multiprocessing")
    a = run_stranon(DATA, 2, "force-dedup-secure", processes=True)
    b = run_stranon(DATA, 2, "force-dedup-secure", processes=False)
    assert a.aborted is None and b.aborted is None
    assert all(len(set(a.ports.values())) == len(a.ports) for _ in [0])
    for c in LOCS:
        assert a.costs[c]["dataset_ops"] == b.costs[c]["dataset_ops"]
        assert a.bandwidth_by_owner[c] == b.bandwidth_by_owner[c]
    assert {c: len(v) for c, v in a.disclosed.items()} == {c: len(v) for c, v in b.disclosed.items()}


def test_secure_unlink_returns_release_and_report():
    from graphlink.secure import secure_unlink
    from graphlink.simulation.simulate import simulate_uniform

    rel = simulate_uniform(40, 4, 0.5, withhold=0.3, seed=2)
    out = secure_unlink(rel, 2, "greedy-dedup", 4)
    new, report = out
    assert out.release is new
    f, g = rel.frame, new.frame
    assert (g["kind"] == "identified").sum() == (f["kind"] == "identified").sum()
    orig = set(map(tuple, f[["location", "kind", "element"]].to_numpy()))
    assert set(map(tuple, g[["location", "kind", "element"]].to_numpy())) <= orig
    assert report["views"]["external"]["k_unlinkable"]
    assert sum(report["disclosed"].values()) == (g["kind"] == "deidentified").sum()
    with pytest.raises(Exception, match="secure"):
        secure_unlink(rel, 2, "flow-dedup", 0)


def test_secure_unlink_output_passes_core_certification():
    unlink = pytest.importorskip("graphlink.protect")
    from graphlink.secure import secure_unlink
    from graphlink.simulation.simulate import simulate_uniform

    rel = simulate_uniform(60, 5, 0.5, withhold=0.2, seed=9)
    new, _ = secure_unlink(rel, 3, "force-dedup", 1)
    result = unlink.finish(rel, unlink.disclosed_of(new), 3, "force-dedup (secure)", 1)
    assert result.certified


def test_contributor_veto_makes_contributor_views_exact():
    """With the veto round every location's Definition 25 view is k-unlinkable (checked with the truth);
    Contributor-Clean alone does not guarantee it (see test_secure_dedup::..._gap_in_theorem_8)."""
    import random

    from graphlink.secure import secure_unlink
    from graphlink.simulation.simulate import simulate_uniform

    for seed in range(15):
        rng = random.Random(seed)
        rel = simulate_uniform(rng.randint(6, 30), rng.randint(2, 5), rng.uniform(0.3, 0.8),
                               withhold=rng.uniform(0, 0.6), seed=seed)
        _, rep = secure_unlink(rel, 2, "greedy-dedup", seed, alpha=0, beta=0, locking=False)
        assert rep["contributor_veto"]
        assert rep["views"]["external"]["k_unlinkable"]
        assert rep["views"]["contributor_all_k_unlinkable"], seed
