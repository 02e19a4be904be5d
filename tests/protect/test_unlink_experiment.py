"""The ``dedup`` experiment (thesis §9.2.2) on tiny settings: files, certification, dominance bookkeeping."""

from __future__ import annotations

import pandas as pd

from graphlink.simulation.experiments import registry


def test_dedup_experiment_small(tmp_path):
    exp = registry.load_all()["dedup"]
    calls = []
    res = exp.run(runs=2, seed=1, out=tmp_path, subjects=60, locations=6, p=0.5, ks=[2, 4, 8],
                  gap_subjects=12, gap_locations=3, gap_ks=[2, 3], gap_runs=1,
                  progress=lambda d, t: calls.append((d, t)), workers=1)
    df = pd.read_csv(res.csv)
    assert set(df.method) == {"greedy-dedup", "force-dedup", "flow-dedup"}
    assert len(df) == 2 * 3 * 3
    assert df.certified.all() and (df.repair_withheld == 0).all()          # every output passes the audit
    assert (df.locations_disclosing <= df.theoretical_max_locations).all()
    assert res.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gap = pd.read_csv(tmp_path / "dedup-gap.csv")
    assert (gap.records_gap >= 0).all() and (gap.locations_gap >= 0).all() and gap.optimal.all()
    assert "thesis" in res.comparison and "force_dominates" in res.summary
    assert calls and calls[-1][0] == calls[-1][1]
