"""``graphlink app`` — start the Streamlit analyst app of an installed graphlink (docs/app.md).

The app is the package ``graphlink_app`` (the repository's ``app/`` folder, installed under that name by setup.py;
``pip install 'graphlink[app]'`` brings Streamlit). This command finds its entry script without importing it and
replaces itself with ``python -m streamlit run`` on that script, so it works from any folder and Ctrl-C reaches
the server directly. The settings the repository's ``.streamlit/config.toml`` gives a checkout are passed on the
command line, since an installed app has no such folder: loopback only unless asked, no usage statistics, the
viewer's toolbar and the app's accent colour.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from graphlink.config import child_environ
from graphlink.errors import MissingExtraError

#: the installed name of the app's package, and its entry script (graphlink_app/main.py)
APP_PACKAGE = "graphlink_app"
ENTRY = "main.py"
#: Streamlit options every start passes (the checkout's .streamlit/config.toml says the same); an installed app's
#: files do not change while it runs, so nothing watches them
STREAMLIT_OPTIONS = ("--server.headless", "true", "--browser.gatherUsageStats", "false",
                     "--client.toolbarMode", "viewer", "--theme.primaryColor", "#0072B2",
                     "--server.fileWatcherType", "none")


def _installed(name: str) -> Path | None:
    """Where the top-level package or module ``name`` would be imported from, without importing it; None when it is
    not installed (or an import hook refuses it)."""
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def entry_script() -> Path:
    """The app's entry script, ``graphlink_app/main.py`` of the installed package.  O(1) file-system lookups.

    Raises
    ------
    MissingExtraError
        Streamlit (the ``app`` extra) is not installed, or the app's package is missing from the install.
    """
    if _installed("streamlit") is None:
        raise MissingExtraError("the app needs the streamlit package: pip install 'graphlink[app]'")
    package = _installed(APP_PACKAGE)
    script = package.parent / ENTRY if package is not None else None
    if script is None or not script.is_file():
        raise MissingExtraError(f"this graphlink install has no app (the {APP_PACKAGE} package): reinstall it "
                                "with pip install 'graphlink[app]'")
    return script


def streamlit_command(script: Path, port: int, address: str) -> list[str]:
    """The command line that serves ``script`` on ``address``:``port`` with this interpreter's Streamlit."""
    return [sys.executable, "-m", "streamlit", "run", str(script), *STREAMLIT_OPTIONS,
            "--server.address", address, "--server.port", str(port)]


def app_cmd(port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve the app on")] = 8501,
            address: Annotated[str, typer.Option(
                "--address", help="Address to listen on: 127.0.0.1 (this machine only) unless you mean to expose "
                "the app (0.0.0.0: every interface; read docs/security.md first)")] = "127.0.0.1") -> None:
    """Start the analyst app (Streamlit) in a browser-ready server, from any folder: needs
    pip install 'graphlink\\[app]'. The app opens on the thesis's four-hospital demo."""
    if not address.strip():
        raise typer.BadParameter("expected an address to listen on, such as 127.0.0.1", param_hint="'--address'")
    command = streamlit_command(entry_script(), port, address.strip())
    shown = "127.0.0.1" if address.strip() in ("0.0.0.0", "::") else address.strip()
    typer.echo(f"graphlink: serving the app at http://{shown}:{port} (Ctrl-C stops it)", err=True)
    sys.stdout.flush()
    sys.stderr.flush()          # exec replaces this process: nothing buffered would be written
    os.execve(sys.executable, command, child_environ())


def register(app: typer.Typer) -> None:
    app.command("app")(app_cmd)
