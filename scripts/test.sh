#!/usr/bin/env bash
# The README's test command: set everything up, then run the whole suite (unit, property, live Neo4j,
# Streamlit AppTest and headless-browser tests).  Extra arguments go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/bootstrap.sh
venv="${VENV:-$root/.venv}"
"$venv/bin/python" -m ruff check graphlink app tests benchmarks streamlit_app.py
exec "$venv/bin/python" -m pytest "$@"
