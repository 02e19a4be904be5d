"""Low-entropy releases (few locations, many people; thesis §5.4): every command, the store and every app page work
on twin classes when the element-level link graph is too large to expand, and the class-level explanations equal
the element-level ones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.analysis.audit import audit
from graphlink.analysis.matching import classify_edges
from graphlink.analysis.reidit import _TightSets, reidentify, true_loves
from graphlink.config import set_config
from graphlink.core.linkgraph import build_linkgraph
from graphlink.core.trails import build_trails, trails_from_dense
from graphlink.simulation.simulate import simulate_probabilities
from tests.analysis.test_matching import instances
from tests.cli_runner import run_cli
from tests.oracle import element_tight_set

ROOT = Path(__file__).resolve().parents[2]
#: the scaling experiment's 24-site profile, cut to 8 sites: visit probability 0.5·r^-0.6 for the site of rank r
PROFILE = [0.5 * r ** -0.6 for r in range(1, 9)]


def low_entropy_release():
    """Identified withholding at one-to-one data: the data cannot rule out one-to-many, so every use states it."""
    return simulate_probabilities(2500, PROFILE, withhold=0.5, reserved="identified", seed=5)


ONE = "one-to-one"


@pytest.fixture(scope="module")
def low():
    rel = low_entropy_release()
    g = build_linkgraph(build_trails(rel, multiplicity=ONE))
    assert g.n_expanded_edges > 20 * len(g.class_ei)          # twins dominate: a low-entropy release
    return rel, g.n_expanded_edges, len(g.class_ei)


@pytest.fixture
def no_expansion(low, monkeypatch):
    """Lower the expansion threshold below this release's element edges (in-process and for subprocesses)."""
    limit = low[1] // 4
    monkeypatch.setenv("GRAPHLINK_MAX_EXPANDED_EDGES", str(limit))
    return limit


def forced_pairs(classes):
    g = classes.graph
    r_is_de = g.trails.star_side == "deidentified"
    ti, tj = classes.true_love_pairs
    deg_i, deg_j = g.degrees()
    t_r, t_s = (tj, ti) if r_is_de else (ti, tj)
    deg_r = deg_j if r_is_de else deg_i
    keep = deg_r[t_r] > 1
    return list(zip(t_r[keep].tolist(), t_s[keep].tolist(), strict=True))


@st.composite
def twin_heavy(draw):
    """Few locations, more elements: many twins (and the small instances of the matching tests)."""
    if draw(st.booleans()):
        return draw(instances())
    c = draw(st.integers(2, 4))
    nm = draw(st.integers(5, 40))
    reserved = draw(st.sampled_from(["deidentified", "identified"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    M = (rng.random((nm, c)) < draw(st.sampled_from([0.3, 0.6]))).astype(int)
    nn = int(rng.integers(1, nm + 1))
    N = np.where(rng.random((nn, c)) < 0.4, -1, M[rng.choice(nm, nn, replace=False)])
    return (N, M, reserved) if reserved == "identified" else (M, N, reserved)


@settings(max_examples=150, deadline=None)
@given(twin_heavy())
def test_class_level_tight_sets_equal_element_level_ones(inst) -> None:
    """Same matching, two searches: on twin classes (what reasons use) and on expanded element edges."""
    M, N, reserved = inst
    g = build_linkgraph(trails_from_dense(M, N, reserved=reserved))
    for engine in ("elements", "twins"):
        c = classify_edges(g, engine=engine)
        if not c.hall_ok:
            continue
        ts = _TightSets(g, c.class_flow)
        for r, s in forced_pairs(c):
            u, nu = ts.tight_set(r, s)
            assert (set(u.tolist()), set(nu.tolist())) == element_tight_set(g, c, r, s), engine
            assert len(u) == len(nu) and r not in set(u.tolist())


def test_every_analysis_runs_on_classes_without_expanding(low, no_expansion) -> None:
    rel = low[0]
    g = build_linkgraph(build_trails(rel, multiplicity=ONE))
    assert not g.expandable and g.prefers_twins
    c = classify_edges(g)
    assert c.engine == "twins"
    tl = true_loves(c, explain=True)
    assert tl.summary.model_ok and len(tl) > 0
    res = {m: reidentify(g, m, k=2, truth=rel.truth) for m in ("complete", "incomplete", "incomplete-k",
                                                                 "multiple", "true-loves")}
    assert all(r.summary.wrong == 0 for r in res.values())
    a = audit(c, 2)
    assert a.hall_ok
    assert "_expanded" not in g.__dict__                     # nothing asked for the element edges
    # forced pairs carry a tight-set reason that is a Hall certificate on the class graph
    forced = forced_pairs(c)
    assert forced, "the fixture should have true loves forced by tight sets"
    reasons = dict(zip(zip(tl.pairs["identified"], tl.pairs["deidentified"], strict=True), tl.pairs["reason"],
                       strict=True))
    M, N = g.trails.identified, g.trails.deidentified
    r_is_de = g.trails.star_side == "deidentified"
    for r, s in forced[:20]:
        i, j = (s, r) if r_is_de else (r, s)
        assert "can only be" in reasons[(str(M.keys[i]), str(N.keys[j]))]
    # the same answers as with expansion allowed (element engine)
    set_config(max_expanded_edges=10**12)
    g2 = build_linkgraph(build_trails(rel, multiplicity=ONE))
    c2 = classify_edges(g2, engine="elements")
    assert set(zip(*map(list, c2.true_love_pairs), strict=True)) == set(zip(*map(list, c.true_love_pairs),
                                                                            strict=True))
    assert (c2.union_degree_identified == c.union_degree_identified).all()


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env)


@pytest.mark.slow
def test_every_cli_command_on_a_low_entropy_release(low, no_expansion, tmp_path) -> None:
    rel = low[0]
    path, truth = tmp_path / "low.parquet", tmp_path / "truth.csv"
    rel.frame.to_parquet(path)
    rel.truth.to_csv(truth, index=False)
    for method in ("complete", "incomplete", "incomplete-k", "multiple", "true-loves"):
        out = cli("reidentify", str(path), "--method", method, "--k", "2", "--truth", str(truth), "--explain",
                  "--format", "json", "--multiplicity", ONE)
        assert out.returncode == 0, (method, out.stderr[-1500:])
        doc = json.loads(out.stdout)
        assert doc["summary"]["wrong"] == 0
    out = cli("audit", str(path), "--k", "2", "--format", "json", "--multiplicity", ONE)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hall_condition"] is True
    out = cli("trails", str(path), "--format", "json", "--multiplicity", ONE)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["elements"]["identified"] == len(rel.elements("identified"))
    assert doc["distinct_trails"]["identified"] < doc["elements"]["identified"]
    out = cli("trails", str(path), "--multiplicity", ONE)
    assert out.returncode == 0 and "distinct trails" in " ".join(out.stdout.split())
    assert len(out.stdout.splitlines()) < 150                 # a summary, not one line per element
    for fmt in ("csv", "parquet"):
        dest = tmp_path / f"trails.{fmt}"
        out = cli("trails", str(path), "--format", fmt, "--out", str(dest), "--multiplicity", ONE)
        assert out.returncode == 0, out.stderr
        back = pd.read_csv(dest, dtype=str) if fmt == "csv" else pd.read_parquet(dest)
        tr = build_trails(rel, multiplicity=ONE)
        assert len(back) == len(tr.identified) + len(tr.deidentified)
        row = back[(back["side"] == "identified") & (back["element"] == str(tr.identified.keys[0]))].iloc[0]
        got = "".join("*" if pd.isna(v) or v == "*" else str(int(float(v))) for v in row[tr.locations])
        assert got == tr.identified.trail_str(0)
    # protection suppresses de-identified records only (Definition 21): identified withholding is refused in
    # one line, never a traceback or a half-written file
    out = cli("unlink", str(path), "--k", "2", "--out", str(tmp_path / "safe.csv"), "--format", "json",
              "--multiplicity", ONE)
    assert out.returncode == 2 and "de-identified records only" in out.stderr and "Traceback" not in out.stderr
    assert "Definition" not in out.stderr                        # thesis numbering stays in the docs
    assert not (tmp_path / "safe.csv").exists()
    for args in (["advise", "--release", str(path)],):
        out = cli(*args)
        assert out.returncode == 0, out.stderr
    assert "expansion" not in out.stderr


@pytest.mark.neo4j
def test_store_write_back_on_a_low_entropy_release(low, no_expansion, neo4j_store, release_name,
                                                   monkeypatch) -> None:
    rel, n_edges, n_class = low
    set_config(element_links_max=n_edges // 2)
    trails = build_trails(rel, multiplicity=ONE)
    neo4j_store.load_release(rel, name=release_name)
    c = classify_edges(build_linkgraph(trails))
    neo4j_store.write_link_graph(release_name, c)
    counts = neo4j_store.run_cypher(
        """RETURN COUNT { (:TrailClass {release: $n})-[:LINK]->() } AS class_links,
                  COUNT { (:Identified {release: $n})-[:LINK]->() } AS element_links,
                  COUNT { (:Identified {release: $n})-[:IN_CLASS]->() } AS members""", {"n": release_name}).iloc[0]
    assert counts["class_links"] == n_class and counts["element_links"] == 0
    assert counts["members"] == len(trails.identified)
    for k in (2, 5):
        want = audit(c, k).violations
        got = neo4j_store.run_file("k_unlinkability", {"release": release_name, "k": k})
        assert set(map(tuple, got[["side", "element", "union_degree"]].to_numpy())) == \
            set(map(tuple, want[["side", "element", "union_degree"]].astype({"union_degree": int}).to_numpy()))
    key = str(trails.identified.keys[0])
    pairs = neo4j_store.run_file("link_pairs", {"release": release_name, "key": key})
    row = 0
    assert set(pairs["deidentified"]) == {str(trails.deidentified.keys[j])
                                          for j in c.graph.neighbours_of_identified(row)}


def test_every_app_page_on_a_low_entropy_release(low, no_expansion, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GRAPHLINK_DEMO", "none")
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    at.run()
    data = low[0].frame.to_csv(index=False).encode()
    at.file_uploader(key="upload_release").set_value(("low.csv", data, "text/csv")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    next(s for s in at.selectbox if s.label == "Multiplicity").set_value(ONE).run()
    for page in ("trails", "linkgraph", "reidentification"):
        at.switch_page(f"app/pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        assert not at.error, (page, [e.value for e in at.error])
    at.button(key="reid_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    m = {x.label: x.value for x in at.metric}
    assert int(m["True loves (exact)"].replace(",", "")) > 0
    at.selectbox(key="reid_shown").set_value("true-loves").run()
    pairs = next(d.value for d in at.dataframe if "reason" in d.value.columns)   # the pairs, not the probabilities
    assert pairs["reason"].str.contains("can only be").any()
    for page in ("protect", "cypher", "experiments", "docs"):
        at.switch_page(f"app/pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
    assert np.isfinite(len(pairs))
