#!/usr/bin/env bash
# Install the system browser used by tests/app/test_app_browser.py (Debian chromium + chromedriver).
# Idempotent: does nothing when chromium is already installed. Never downloads Playwright's browsers:
# the test launches /usr/bin/chromium (or $CHROMIUM) through Playwright's executable_path.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium already installed: $(chromium --version 2>/dev/null | head -n1)"
    exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium chromium-driver fonts-dejavu-core
chromium --version | head -n1
