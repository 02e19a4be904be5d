"""REIDIT-C/I/I-K/M and true loves: thesis and Malin 2002 worked examples, oracle properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graphlink.analysis.matching import classify_edges
from graphlink.analysis.reidit import evaluate, reidentify, reidit_c, reidit_i, reidit_ik, reidit_m, true_loves
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.release import read_release
from graphlink.core.trails import build_trails, trails_from_dense
from graphlink.errors import ReleaseError
from graphlink.simulation.simulate import simulate_uniform
from tests.analysis.test_matching import instances
from tests.fixtures import A14_M, A14_N, FIG34_TRUTH, FIG71_X, FIG71A_Y, NAMES, fig34
from tests.reference import reidit_i_precomp

S = -1


def pairs(result) -> set[tuple[str, str]]:
    return set(zip(result.pairs["identified"], result.pairs["deidentified"], strict=True))


def test_fig34_reidit_i_links_all_four() -> None:
    """Figures 3.4/3.5/4.1: REIDIT-I links actg–Ali, tgac–Charlie, gatc–Dan, ctga–Bob."""
    rel = read_release(fig34(), truth=FIG34_TRUTH)
    res = reidentify(rel, "incomplete")
    assert pairs(res) == {("Ali", "actg"), ("Charlie", "tgac"), ("Dan", "gatc"), ("Bob", "ctga")}
    assert res.summary.wrong == 0 and res.summary.recall == 1.0
    reasons = dict(zip(res.pairs["deidentified"], res.pairs["reason"], strict=True))
    assert reasons["actg"] == "actg is only compatible with Ali"


def test_fig35_printed_matrices_give_the_same_links() -> None:
    """Figure 3.5 as printed (more '*' than the equality rule gives): same four links, gatc second round."""
    Y = np.array([[1, 1, 1, S], [S, 1, S, 1], [1, S, 1, 1], [S, 1, 1, S]])
    tr = trails_from_dense(FIG71_X, Y, reserved="deidentified", id_keys=NAMES,
                           de_keys=["actg", "ctga", "tgac", "gatc"])
    res = reidit_i(build_linkgraph(tr), flip=False)
    assert pairs(res) == {("Ali", "actg"), ("Charlie", "tgac"), ("Dan", "gatc"), ("Bob", "ctga")}
    reasons = dict(zip(res.pairs["deidentified"], res.pairs["reason"], strict=True))
    assert "Ali ↔ actg" in reasons["gatc"]           # Figure 4.1: Ali is removed first, then gatc -> Dan


def test_fig34_true_loves_and_reasons() -> None:
    res = reidentify(read_release(fig34()), "true-loves")
    assert pairs(res) == {("Ali", "actg"), ("Charlie", "tgac"), ("Dan", "gatc"), ("Bob", "ctga")}
    reasons = dict(zip(res.pairs["deidentified"], res.pairs["reason"], strict=True))
    assert reasons["gatc"] == "actg can only be Ali, so gatc must be Dan"


def test_fig71a_unreserved_reidit_c() -> None:
    tr = trails_from_dense(FIG71_X, FIG71A_Y, reserved="none", id_keys=NAMES, de_keys=["actg", "ctga", "tgac", "gatc"])
    assert pairs(reidit_c(tr)) == {("Ali", "actg"), ("Bob", "ctga"), ("Charlie", "tgac"), ("Dan", "gatc")}


def test_fig_b3_three_people_three_samples() -> None:
    """App. B Fig. B.3: REIDIT-C links all three; with 0 read as ambiguous (TR02), REIDIT-I links John first
    and then Brad and Bob, while REIDIT-M only links John."""
    ids, dna = ["John", "Brad", "Bob"], ["catg", "actg", "tgca"]
    full = np.array([[1, 1, 1], [1, 0, 1], [1, 1, 0]])
    assert len(reidit_c(trails_from_dense(full, full, reserved="none", id_keys=ids, de_keys=dna))) == 3
    incomplete = np.where(full == 0, S, full)
    tr = trails_from_dense(incomplete, full, reserved="identified", id_keys=ids, de_keys=dna)
    g = build_linkgraph(tr)
    res = reidit_i(g, flip=False)
    assert pairs(res) == {("John", "catg"), ("Brad", "actg"), ("Bob", "tgca")}
    assert res.pairs["identified"].iloc[0] == "John"
    assert pairs(reidit_m(g)) == {("John", "catg")}


def test_tr02_example_31() -> None:
    """TR02 Example 3.1: N_t = {010, 110, 011} incomplete, P_t = {110, 111, 011}: REIDIT-I = REIDIT-M = ∅,
    REIDIT-C on the complete reading links two, and no edge is in every maximum matching."""
    P = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    N = np.array([[0, 1, 0], [1, 1, 0], [0, 1, 1]])
    g = build_linkgraph(trails_from_dense(P, np.where(N == 0, S, N), reserved="deidentified"))
    assert len(reidit_i(g)) == 0 and len(reidit_m(g)) == 0
    assert len(true_loves(g)) == 0
    assert pairs(reidit_c(trails_from_dense(P, N, reserved="none"))) == {("m1", "n2"), ("m3", "n3")}


def test_four_website_households_reidit_m() -> None:
    """Four websites, two households: REIDIT-M links alice→ip1, bob→ip1, carol→ip2; dave has two supertrails."""
    M = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]])
    N = np.array([[1, 1, 1, 0], [1, 0, 0, 1]])
    tr = trails_from_dense(np.where(M == 0, S, M), N, reserved="identified",
                           id_keys=["alice", "bob", "carol", "dave"], de_keys=["ip1", "ip2"])
    assert pairs(reidit_m(build_linkgraph(tr))) == {("alice", "ip1"), ("bob", "ip1"), ("carol", "ip2")}


def test_a14_tight_set_explanation() -> None:
    g = build_linkgraph(trails_from_dense(A14_M, A14_N, reserved="deidentified"))
    assert len(reidit_i(g)) == 0
    res = true_loves(g)
    assert pairs(res) == {("m3", "n3")}
    assert res.pairs["reason"].iloc[0] == "n1, n2 can only be m1 or m2 (2 records, 2 candidates), so n3 must be m3"


def test_reidit_ik_groups() -> None:
    g = build_linkgraph(trails_from_dense(A14_M, A14_N, reserved="deidentified"))
    res = reidit_ik(g, 3)
    got = res.pairs.groupby("deidentified")["identified"].apply(set).to_dict()
    assert got == {"n1": {"m1", "m2"}, "n2": {"m1", "m2"}, "n4": {"m5", "m6"}}
    truth = pd.DataFrame({"identified": ["m1", "m2", "m3", "m6"], "deidentified": ["n1", "n2", "n3", "n4"]})
    ev = evaluate(res, truth)
    assert ev.correct == 3 and ev.wrong == 0


@settings(max_examples=200, deadline=None)
@given(instances())
def test_queue_reidit_i_equals_thesis_precomp(inst) -> None:
    M, N, reserved = inst
    tr = trails_from_dense(M, N, reserved=reserved)
    g = build_linkgraph(tr)
    c = classify_edges(g)
    if not c.hall_ok:
        return        # the fixpoint is order-dependent only on data that breaks the model
    res = reidit_i(g)
    r_is_de = reserved != "identified"
    got = set()
    for a, b in zip(res.pairs["identified"], res.pairs["deidentified"], strict=True):
        i, j = tr.identified.index_of(a), tr.deidentified.index_of(b)
        got.add((j, i) if r_is_de else (i, j))
    assert got == reidit_i_precomp(tr)
    # and every REIDIT-I pair is a true love (Theorem 4 + §4.2.4)
    assert pairs(res) <= pairs(true_loves(c))


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 300), st.integers(3, 14), st.floats(0.1, 0.9), st.floats(0.0, 0.6), st.integers(0, 10_000))
def test_simulated_releases_have_no_wrong_reidentification(n, c, p, q, seed) -> None:
    try:
        rel = simulate_uniform(n, c, p, withhold=q, reserved="deidentified", seed=seed)
    except ReleaseError:                     # a population that visited nothing: no release to analyse
        assume(False)
    tr = build_trails(rel, "deidentified")   # the simulator's model; the default decision is tested elsewhere
    g = build_linkgraph(tr)
    tl = true_loves(g)
    assert tl.summary.model_ok
    for method in ("complete", "incomplete", "true-loves"):
        res = reidentify(g, method, truth=rel.truth)
        assert res.summary.wrong == 0, method
        if method != "true-loves":
            assert pairs(res) <= pairs(tl)
    assert reidentify(g, "incomplete-k", k=3, truth=rel.truth).summary.wrong == 0


def test_advisor_table_a1() -> None:
    from graphlink.analysis.advisor import advise

    assert advise("one-to-one", "none").methods[:2] == ("true-loves", "complete")
    assert advise("one-to-one", "identified").methods[1] == "incomplete"
    assert advise("one-to-many", "identified").methods == ("multiple",)
    assert advise("one-to-many", "deidentified").dominant is None     # the thesis's N/A cell


def test_reidit_variants_run_on_twin_classes_without_expanding() -> None:
    """Low-entropy data: many twins; REIDIT-I/I-K/M must not build the element-level edge list, and
    must agree with the same algorithms run after expansion on a fresh graph."""
    rel = simulate_uniform(3000, 6, 0.5, withhold=0.2, reserved="deidentified", seed=11)
    g = build_linkgraph(build_trails(rel, "deidentified"))
    assert g.n_expanded_edges > 20 * len(g.class_ei)
    res = {m: reidentify(g, m, k=3, truth=rel.truth) for m in ("incomplete", "incomplete-k", "multiple")}
    assert "_expanded" not in g.__dict__
    for r in res.values():
        assert r.summary.wrong == 0
    g2 = build_linkgraph(build_trails(rel, "deidentified"))
    g2.ei  # noqa: B018  (force the expansion)
    assert pairs(reidentify(g2, "incomplete")) == pairs(res["incomplete"])
    assert pairs(res["incomplete"]) <= pairs(true_loves(g2))


# ------------------------------------------------------------------------------ frozen results, immutable pairs
def test_reidentification_is_immutable_and_with_summary_copies() -> None:
    import copy
    import pickle

    from graphlink.analysis.reidit import Reidentification

    res = reidentify(read_release(fig34()), "complete")
    for name, value in (("summary", res.summary), ("method", "x"), ("pairs", res.pairs), ("_pairs", None)):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(res, name, value)
    with pytest.raises(AttributeError, match="immutable"):
        del res.method
    changed = res.with_summary(engine="elsewhere")
    assert changed is not res and changed.summary.engine == "elsewhere" and res.summary.engine != "elsewhere"
    assert changed.pairs is res.pairs                                  # the pairs are shared, not copied
    for clone in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res)):
        assert isinstance(clone, Reidentification) and clone.method == res.method
        assert clone.summary == res.summary and clone.pairs.equals(res.pairs)


def test_reidentify_with_a_truth_puts_its_evaluation_in_the_summary() -> None:
    from graphlink.io.examples import thesis_example

    rel = thesis_example()                            # Fig. 3.4 with its truth: the summary holds the evaluation
    res = reidentify(rel, "true-loves")
    ev = evaluate(res, rel.truth)
    assert ev.truth_pairs == 4 and res.summary.truth_pairs == 4
    assert (res.summary.correct, res.summary.wrong, res.summary.recall) == (ev.correct, ev.wrong, ev.recall)


@settings(max_examples=100, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5))),
       st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5))))
def test_evaluate_counts_pairs_as_sets(found: set[tuple[int, int]], truth: set[tuple[int, int]]) -> None:
    """Oracle: the definition on plain sets (correct = found ∩ truth, wrong = found − truth)."""
    import dataclasses

    from graphlink.analysis.reidit import Reidentification
    from graphlink.analysis.results import Evaluation

    def frame(pairs: set[tuple[int, int]], reason: bool) -> pd.DataFrame:
        cols = {"identified": [f"m{a}" for a, _ in sorted(pairs)], "deidentified": [f"n{b}" for _, b in sorted(pairs)]}
        return pd.DataFrame({**cols, **({"reason": ["given"] * len(pairs)} if reason else {})}, dtype=object)

    ev = evaluate(Reidentification("complete", frame(found, True)), frame(truth, False))
    assert isinstance(ev, Evaluation) and dataclasses.is_dataclass(ev)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.correct = 0  # type: ignore[misc]
    assert ev.correct == len(found & truth) and ev.wrong == len(found - truth) and ev.truth_pairs == len(truth)
    assert ev.precision == (len(found & truth) / len(found) if found else None)
    assert ev.recall == (len(found & truth) / len(truth) if truth else 0.0)
    assert ev.as_dict() == {"correct": ev.correct, "wrong": ev.wrong, "truth_pairs": ev.truth_pairs,
                            "precision": ev.precision, "recall": ev.recall}
