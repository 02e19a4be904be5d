"""graphlink analyst app — entry point in a checkout: ``streamlit run streamlit_app.py``.

The app is the package in ``app/``, installed as ``graphlink_app`` (``setup.py``); ``graphlink app`` starts an
installed one from any folder. Run from the repository, this file makes ``graphlink_app`` the ``app/`` folder next to
it (and the ``graphlink`` folder importable) even without an install, then draws the app: the pages live in
``app/pages`` and every number they show comes from the graphlink library.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # make `graphlink` importable when streamlit runs from another directory
    sys.path.insert(0, str(ROOT))
if "graphlink_app" not in sys.modules:   # this checkout's app/, whatever else is installed under that name
    _spec = importlib.util.spec_from_file_location("graphlink_app", ROOT / "app" / "__init__.py",
                                                   submodule_search_locations=[str(ROOT / "app")])
    assert _spec is not None and _spec.loader is not None
    sys.modules["graphlink_app"] = _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)

from graphlink_app.main import run  # noqa: E402

run()
