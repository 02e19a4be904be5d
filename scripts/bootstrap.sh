#!/usr/bin/env bash
# Set-up shared by the two README commands: a project virtualenv with the pinned dependencies, the local
# Neo4j runtime (Maven Central) and, for the browser tests, Debian's chromium.  Idempotent; safe to re-run.
#   VENV=path   use another virtualenv location (default: .venv)
#   GRAPHLINK_SKIP_NEO4J=1 / GRAPHLINK_SKIP_BROWSER=1   skip those parts
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv="${VENV:-$root/.venv}"
say() { printf '[bootstrap] %s\n' "$*" >&2; }

if [[ ! -x "$venv/bin/python" ]]; then
  say "creating virtualenv $venv"
  python3 -m venv "$venv"
fi
stamp="$venv/.graphlink-installed"
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" ]]; then
  say "installing graphlink and its pinned dependencies (pip)"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -e ".[dev,spark]"
  touch "$stamp"
fi
if [[ "${GRAPHLINK_SKIP_NEO4J:-0}" != "1" && -f scripts/setup-neo4j.sh ]]; then
  bash scripts/setup-neo4j.sh
fi
if [[ "${GRAPHLINK_SKIP_BROWSER:-0}" != "1" && -f scripts/setup-browser.sh ]]; then
  bash scripts/setup-browser.sh
fi
