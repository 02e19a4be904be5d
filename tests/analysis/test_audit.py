"""k-unlinkability audit (Definition 19) on thesis figures and against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from graphlink.analysis.audit import audit
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.trails import trails_from_dense
from tests.analysis.test_matching import instances
from tests.fixtures import DNA, FIG71_X, FIG71A_Y, FIG71B_U, FIG71B_Y, FIG83_Y, FIG84_L, NAMES
from tests.oracle import oracle_from_dense


def _graph(Y, reserved):
    return build_linkgraph(trails_from_dense(FIG71_X, Y, reserved=reserved, id_keys=NAMES, de_keys=DNA))


def _union(g, c) -> set[tuple[str, str]]:
    keys_i, keys_j = g.trails.identified.keys, g.trails.deidentified.keys
    return {(keys_i[i], keys_j[j]) for i, j, a in zip(g.ei, g.ej, c, strict=True) if a}


@pytest.mark.slow
def test_fig71a_is_1_unlinkable_only() -> None:
    g = _graph(FIG71A_Y, "none")
    assert audit(g, 1).k_unlinkable
    r = audit(g, 2)
    assert not r.k_unlinkable and r.true_loves == 4 and len(r.violations) == 8


def test_fig71b_is_2_unlinkable() -> None:
    from graphlink.analysis.matching import classify_edges

    g = _graph(FIG71B_Y, "deidentified")
    c = classify_edges(g)
    assert _union(g, c.allowed) == FIG71B_U
    assert audit(c, 2).k_unlinkable and not audit(c, 3).k_unlinkable


def test_fig84_external_2_unlinkable_and_union_equals_links() -> None:
    from graphlink.analysis.matching import classify_edges

    g = _graph(FIG83_Y, "deidentified")
    links = {(NAMES[i], DNA[j]) for j in range(4) for i in range(4) if FIG84_L[j, i]}
    assert set(zip(g.trails.identified.keys[g.ei], g.trails.deidentified.keys[g.ej], strict=True)) == links
    c = classify_edges(g)
    assert _union(g, c.allowed) == links           # Figure 8.4(b): U_YX = L_YX
    assert audit(c, 2).k_unlinkable and audit(c, 3).k_unlinkable is False


@settings(max_examples=200, deadline=None)
@given(instances())
def test_audit_equals_brute_force_definition_19(inst) -> None:
    M, N, reserved = inst
    g = build_linkgraph(trails_from_dense(M, N, reserved=reserved))
    o = oracle_from_dense(M, N, g.null_side, g.n_null)
    for k in (1, 2, 3):
        # brute force Definition 19 on the explicitly padded graph: count union edges incl. null trails
        bad = set()
        nm, nn = len(M), len(N)
        union = set().union(*o["mms"]) if o["mms"] else set()
        for side, n_real in (("identified", nm), ("deidentified", nn)):
            for v in range(n_real):
                edges = [e for e in union if (e[0] if side == "identified" else e[1]) == v]
                non_null = [e for e in edges if e[0] < nm and e[1] < nn]
                keys = g.trails.identified.keys if side == "identified" else g.trails.deidentified.keys
                if non_null and len(edges) < k:
                    bad.add((side, str(keys[v])))
        r = audit(g, k)
        assert set(zip(r.violations["side"], r.violations["element"], strict=True)) == bad
        assert r.k_unlinkable == (not bad)


def test_null_edges_count_toward_k() -> None:
    """|M| = 3, one disclosed sample linking m1 and m2: m3 only has null edges (exempt)."""
    M = np.array([[1, 0], [1, 1], [0, 1]])
    N = np.array([[1, -1]])
    g = build_linkgraph(trails_from_dense(M, N, reserved="deidentified"))
    assert g.n_null == 2
    r = audit(g, 3)
    # m1, m2: 1 non-null + 2 null edges = 3 -> fine; n1: 2 union edges < 3 -> violation
    assert r.violations[["side", "element"]].values.tolist() == [["deidentified", "n1"]]


# ---------------------------------------------------------------------------------------------- one side empty
@pytest.mark.parametrize("kept", ["identified", "deidentified"])
@pytest.mark.parametrize("command", ["audit", "unlink", "report"])
def test_a_release_with_one_side_empty_is_refused_not_called_unlinkable(tmp_path, kept: str, command: str) -> None:
    """Only identified rows (or only de-identified ones): nothing can be linked, so "every person and every record
    has at least k candidates" would describe records (or people) that do not exist. The audit, unlink and report
    say what is missing in one line and exit 2, and write nothing."""
    from graphlink.io.examples import DATA
    from tests.cli_runner import run_cli

    rows = [line for line in (DATA / "thesis_fig3_4.csv").read_text().splitlines()[1:]
            if line.split(",")[1] == kept]
    release = tmp_path / "one_side.csv"
    release.write_text("location,kind,element\n" + "\n".join(rows) + "\n")
    out = tmp_path / ("out.html" if command == "report" else "out.csv")
    extra = {"audit": [], "unlink": ["--out", out], "report": ["--out", out]}[command]
    done = run_cli(command, release, "--k", "2", *extra)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    missing = "no de-identified records" if kept == "identified" else "no identified people"
    assert len(lines) == 1 and missing in lines[0] and "no k-unlinkability to judge" in lines[0], lines
    assert "unlinkable:" not in done.stdout and not out.exists()
    both = tmp_path / "both.csv"                # one record on the other side is enough to be judged again
    other = next(line for line in (DATA / "thesis_fig3_4.csv").read_text().splitlines()[1:]
                 if line.split(",")[1] != kept)
    both.write_text(release.read_text() + other + "\n")
    again = run_cli(command, both, "--k", "2", *extra)     # (unlink may refuse it for other reasons: one-to-many)
    assert "no k-unlinkability to judge" not in again.stderr and (again.returncode == 0 or command == "unlink")
