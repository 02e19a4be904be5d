"""The app as an installed package (setup.py, ``graphlink app``): the repository's ``app/`` folder is installed as
``graphlink_app``, never as a top-level ``app`` that would collide with another project's, and ``graphlink app``
starts the installed app from any folder.

The slow test builds the wheel from a copy of the sources (offline: ``pip wheel --no-build-isolation`` with the
setuptools of the dev extra), reads its top-level names, installs it with ``--no-deps`` into a throw-away virtualenv
that borrows this one's dependencies (a path entry to its site-packages: that folder's ``.pth`` files, the editable
install among them, are not run), and drives the installed app from a folder outside the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from graphlink.cli.commands.webapp import entry_script, streamlit_command
from tests.cli_runner import run_cli
from tests.processes import stop, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
#: what a source build reads: the project files and the two package folders (setup.py copies the user guide)
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "graphlink", "app", "docs/guide.md")


def test_app_help_names_its_options_and_the_extra() -> None:
    done = run_cli("app", "--help")
    assert done.returncode == 0, done.stderr
    assert "--port" in done.stdout and "--address" in done.stdout
    assert "pip install 'graphlink[app]'" in " ".join(done.stdout.split())


def test_app_refuses_an_empty_address_in_one_line() -> None:
    done = run_cli("app", "--address", " ")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "expected an address to listen on" in done.stderr, done.stderr


def test_app_serves_the_installed_entry_on_loopback_unless_told() -> None:
    """Under the editable install, the entry is this checkout's app/main.py, reached by its installed name."""
    script = entry_script()
    assert script == ROOT / "app" / "main.py"
    command = streamlit_command(script, 8502, "127.0.0.1")
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(script)]
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.address"] == "127.0.0.1" and options["--server.port"] == "8502"
    assert options["--server.headless"] == "true" and options["--browser.gatherUsageStats"] == "false"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    for name in SOURCES:
        source, target = ROOT / name, src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target)
    dist = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--wheel-dir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=600, cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = dist.glob("graphlink-*.whl")
    return wheel


def _venv_with_wheel(tmp: Path, wheel: Path) -> Path:
    """A fresh virtualenv holding only the wheel; its dependencies come from this virtualenv's site-packages."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # a plain path line: the folder joins sys.path, but its own .pth files (the editable install's finder) do not run
    (Path(purelib) / "borrowed-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-index", "--quiet", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


#: run by the throw-away virtualenv's python in a folder outside the repository: where the packages come from, and
#: the installed app's entry under Streamlit's AppTest (the Data page on the thesis demo, then the user guide)
INSTALLED = textwrap.dedent('''
    import importlib.util, json, sys
    import graphlink, graphlink_app, graphlink_app.main
    from pathlib import Path
    from streamlit.testing.v1 import AppTest

    entry = Path(graphlink_app.__file__).parent / "main.py"
    at = AppTest.from_file(str(entry), default_timeout=300).run()
    data = {"exception": [str(e.value) for e in at.exception], "titles": [t.value for t in at.title],
            "subheaders": [s.value for s in at.subheader]}
    at.switch_page("pages/docs.py").run()
    print(json.dumps({"graphlink": graphlink.__file__, "app": graphlink_app.__file__,
                      "top_level_app": importlib.util.find_spec("app") is not None, "data": data,
                      "docs_exception": [str(e.value) for e in at.exception],
                      "docs": " ".join(m.value for m in at.markdown)}))
''')


@pytest.mark.slow
def test_the_wheel_installs_the_app_as_graphlink_app_and_graphlink_app_starts_it(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"graphlink", "graphlink_app"}, top                   # no top-level `app`
    assert {"graphlink_app/main.py", "graphlink_app/navigation.py", "graphlink_app/pages/data.py",
            "graphlink_app/components/words.py", "graphlink_app/guide.md"} <= set(names)
    assert not any(n.startswith("graphlink_app/") and "state.py" in n for n in names)

    venv = _venv_with_wheel(tmp_path, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONNOUSERSITE": "1",
           "GRAPHLINK_DEMO": "thesis"}
    done = subprocess.run([str(venv / "bin" / "python"), "-c", INSTALLED], capture_output=True, text=True,
                          timeout=900, cwd=elsewhere, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    site = str(venv / "lib")
    assert got["graphlink"].startswith(site) and got["app"].startswith(site), got   # the wheel's, not the checkout's
    assert got["top_level_app"] is False
    assert got["data"]["exception"] == [] and got["data"]["titles"][:1] == ["Data"], got["data"]
    assert any(s.startswith("Summary — Thesis Figure 3") for s in got["data"]["subheaders"]), got["data"]
    assert got["docs_exception"] == [] and "missing from this installation" not in got["docs"]
    first_section = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8").split("\n## ")[1].splitlines()[0]
    assert "## " + first_section in got["docs"]                 # the guide's text, from the wheel's copy

    helped = subprocess.run([str(venv / "bin" / "graphlink"), "app", "--help"], capture_output=True, text=True,
                            timeout=300, cwd=elsewhere, env=env)
    assert helped.returncode == 0 and "--port" in helped.stdout, helped.stderr

    port = _free_port()
    log = tmp_path / "app.log"
    with log.open("w") as out:
        proc = subprocess.Popen([str(venv / "bin" / "graphlink"), "app", "--port", str(port)], cwd=elsewhere,
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc, log.read_text, timeout=180)
    finally:
        stop(proc)
    assert f"serving the app at http://127.0.0.1:{port}" in log.read_text()
