"""``graphlink secure-demo`` end to end (in-process and as separate processes over loopback)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphlink.cli import app


def _run(args):
    res = CliRunner().invoke(app, ["secure-demo", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_secure_demo_thesis_example_in_process():
    d = _run(["--thesis-example", "--k", "2", "--in-process"])
    assert d["aborted"] is None
    assert d["views"]["external"]["k_unlinkable"] and d["views"]["contributor_all_k_unlinkable"]
    for p in d["parties"]:
        if p["party"] != "sTTP":
            assert p["costs"]["dataset_ops"] == p["formula_dataset_ops"]
            assert p["bandwidth_records"] == p["formula_bandwidth_records"]
    sttp = next(p for p in d["parties"] if p["party"] == "sTTP")
    assert all(key.split(" from ")[0] in {"publish-identified", "submission", "encrypt-reply", "preview-verdict",
                                          "decryption-report", "finished"} for key in sttp["saw"])


def test_secure_demo_detects_adversary():
    d = _run(["--thesis-example", "--in-process", "--adversary", "full-switch:H2:H1"])
    assert d["aborted"] and any("v_C" in x for x in d["detections"])


@pytest.mark.slow
def test_secure_demo_separate_processes():
    d = _run(["--locations", "3", "--subjects", "20", "--k", "2"])
    assert d["transport"].startswith("separate processes")
    assert len(set(d["ports"].values())) == 4
    assert d["aborted"] is None


def test_secure_demo_rejects_bad_adversary_spec():
    res = CliRunner().invoke(app, ["secure-demo", "--thesis-example", "--in-process", "--adversary", "nonsense"])
    assert res.exit_code != 0
