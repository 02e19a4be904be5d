#!/usr/bin/env bash
# The README's main command: set everything up, start the local Neo4j (unless NEO4J_URI points elsewhere or
# it cannot start: the app then uses the in-process engine), and open the Streamlit app on the demo release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GRAPHLINK_SKIP_BROWSER=1 bash scripts/bootstrap.sh
venv="${VENV:-$root/.venv}"
if [[ -z "${NEO4J_URI:-}" ]]; then
  "$venv/bin/graphlink" neo4j start || echo "[app] Neo4j did not start; the app uses the in-process engine" >&2
fi
exec "$venv/bin/streamlit" run streamlit_app.py --server.headless true "$@"
