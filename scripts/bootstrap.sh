#!/usr/bin/env bash
# Set-up shared by the two README commands: a project virtualenv with graphlink[dev] at the versions pinned in
# constraints.txt (pyproject.toml states the compatible ranges; scripts/freeze-constraints.py writes the pins), the local
# Neo4j runtime (Maven Central), for the browser tests Debian's chromium and, for the container tests, a container
# engine and the project's Neo4j image (scripts/setup-containers.sh).  Idempotent; safe to re-run.
#   VENV=path   use another virtualenv location (default: .venv)
#   GRAPHLINK_EXTRAS=app,data   install only what the app needs (default: dev, everything the tests need)
#   GRAPHLINK_SKIP_NEO4J=1 / GRAPHLINK_SKIP_BROWSER=1 / GRAPHLINK_SKIP_CONTAINERS=1   skip those parts
#   (a failed container set-up is a warning, unless GRAPHLINK_CONTAINER_REQUIRED=1: then it fails, as in CI)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv="${VENV:-$root/.venv}"
say() { printf '[bootstrap] %s\n' "$*" >&2; }

if [[ ! -x "$venv/bin/python" ]]; then
  say "creating virtualenv $venv"
  python3 -m venv "$venv"
fi
# What to install: `dev` (everything, for the tests) unless GRAPHLINK_EXTRAS says less (scripts/app.sh: `app`). The
# stamp records the extras installed; `dev` includes `app`, so a test venv serves the app without a second install.
extras="${GRAPHLINK_EXTRAS:-dev}"
stamp="$venv/.graphlink-installed"
installed=$(cat "$stamp" 2>/dev/null || true)
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" || constraints.txt -nt "$stamp" \
      || ( "$installed" != "dev" && "$installed" != "$extras" ) ]]; then
  say "installing graphlink[$extras] with the versions of constraints.txt (pip; the first time takes 1-3 minutes)"
  # pip's own lines ("Collecting ...") are the progress on a terminal; CI and logs get the quiet form
  quiet=(-q); [[ -t 2 ]] && quiet=(--progress-bar on)
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install "${quiet[@]}" -c constraints.txt -e ".[$extras]"
  echo "$extras" > "$stamp"
  say "installed graphlink[$extras]"
fi
if [[ "${GRAPHLINK_SKIP_NEO4J:-0}" != "1" && -f scripts/setup-neo4j.sh ]]; then
  bash scripts/setup-neo4j.sh
fi
if [[ "${GRAPHLINK_SKIP_BROWSER:-0}" != "1" && -f scripts/setup-browser.sh ]]; then
  bash scripts/setup-browser.sh
fi
if [[ "${GRAPHLINK_SKIP_CONTAINERS:-0}" != "1" && "${GRAPHLINK_SKIP_NEO4J:-0}" != "1" \
      && -f scripts/setup-containers.sh ]]; then
  if ! bash scripts/setup-containers.sh; then
    [[ "${GRAPHLINK_CONTAINER_REQUIRED:-0}" == "1" ]] && exit 1
    say "warning: the container set-up failed; the container tests will be skipped"
  fi
fi
