"""``scripts/app.sh`` installs only what the app uses and says where it serves (the set-up a new user runs first).

The script runs in a copy of ``scripts/`` beside stub ``bootstrap.sh``, ``graphlink`` and ``streamlit`` programs that
record how they were called, so the test sees what app.sh asks of the set-up without installing anything.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stub(path: Path, record: Path) -> None:
    path.write_text(f'#!/usr/bin/env bash\n{{ echo "$0 $*"; env | grep -E "^GRAPHLINK_(EXTRAS|SKIP_[A-Z]+)=" | sort; }}'
                    f' >> "{record}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run_app_sh(tmp_path: Path, *args: str) -> tuple[str, str]:
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "app.sh", checkout / "scripts" / "app.sh")
    record = tmp_path / "calls.txt"
    _stub(checkout / "scripts" / "bootstrap.sh", record)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for program in ("graphlink", "streamlit"):
        _stub(venv / "bin" / program, record)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHLINK_", "NEO4J_"))}
    env["VENV"] = str(venv)
    proc = subprocess.run(["bash", str(checkout / "scripts" / "app.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return record.read_text(), proc.stderr


def test_app_sh_installs_the_app_extra_without_browser_or_container_engine(tmp_path: Path) -> None:
    calls, _ = _run_app_sh(tmp_path)
    bootstrap = calls.split("\n", 1)[1].split("/graphlink neo4j start")[0]
    assert "GRAPHLINK_EXTRAS=app,data" in bootstrap
    assert "GRAPHLINK_SKIP_BROWSER=1" in bootstrap
    assert "GRAPHLINK_SKIP_CONTAINERS=1" in bootstrap
    assert "neo4j start" in calls  # no NEO4J_URI: the local server is started


def test_app_sh_names_the_address_it_serves_and_passes_the_port_on(tmp_path: Path) -> None:
    calls, stderr = _run_app_sh(tmp_path, "--server.port", "8602")
    assert "http://127.0.0.1:8602" in stderr
    assert "streamlit run streamlit_app.py" in calls and "--server.port 8602" in calls
    _, default = _run_app_sh(tmp_path / "default")
    assert "http://127.0.0.1:8501" in default
