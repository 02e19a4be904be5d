#!/usr/bin/env bash
# The README's main command: set everything up, start the local Neo4j (unless NEO4J_URI points elsewhere or
# it cannot start: the app then uses the in-process engine), and open the Streamlit app on the demo release.
#
# The app listens on 127.0.0.1 only (.streamlit/config.toml). GRAPHLINK_EXPOSE=1 makes it listen on every
# interface (--server.address 0.0.0.0); an explicit --server.address argument wins. The Cypher page is off unless
# GRAPHLINK_CYPHER_CONSOLE=1, or GRAPHLINK_CYPHER_CONSOLE_TOKEN=<secret> (the page then asks for it). GRAPHLINK_SKIP_SETUP=1 skips the set-up and the Neo4j start.
# Extra arguments go to `streamlit run`, e.g. `--server.port 8502` for another port (default 8501).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv="${VENV:-$root/.venv}"
if [[ "${GRAPHLINK_SKIP_SETUP:-0}" != "1" ]]; then
  # the app needs the app extra (and the data one for the real-data demos) and the Neo4j runtime; not the browser, the container engine or the test tools
  GRAPHLINK_EXTRAS="${GRAPHLINK_EXTRAS:-app,data}" GRAPHLINK_SKIP_BROWSER=1 GRAPHLINK_SKIP_CONTAINERS=1 \
    bash scripts/bootstrap.sh
  if [[ -z "${NEO4J_URI:-}" ]]; then
    echo "[app] starting the local Neo4j (the first start takes up to a minute)" >&2
    "$venv/bin/graphlink" neo4j start || echo "[app] Neo4j did not start; the app uses the in-process engine" >&2
  fi
fi
address=()
if [[ "${GRAPHLINK_EXPOSE:-0}" == "1" && " $* " != *" --server.address"* ]]; then
  address=(--server.address 0.0.0.0)
  echo "[app] GRAPHLINK_EXPOSE=1: listening on every interface; Cypher console" \
       "$([[ "${GRAPHLINK_CYPHER_CONSOLE:-0}" == "1" ]] && echo on || \
          { [[ -n "${GRAPHLINK_CYPHER_CONSOLE_TOKEN:-}" ]] && echo "behind its token" || echo off; })" >&2
fi
port=8501
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --server.port=*) port="${args[$i]#--server.port=}" ;;
    --server.port) port="${args[$((i + 1))]:-$port}" ;;
  esac
done
echo "[app] serving the app at http://127.0.0.1:$port (Ctrl-C stops it)" >&2
exec "$venv/bin/streamlit" run streamlit_app.py --server.headless true "${address[@]}" "$@"
