#!/usr/bin/env bash
# A container engine and graphlink's Neo4j image, for the container tests (tests/container/) and
# docker/docker-compose.yml. Idempotent and cached: a second run takes seconds.
#
#   bash scripts/setup-containers.sh
#
# 1. The engine: a Docker daemon that answers is used as it is. Otherwise, on Debian as root, podman with runc (crun
#    cannot run containers on a cgroup v1/hybrid host), debootstrap (for the local base image), iptables (published
#    ports) and Debian's docker-compose 1.29 (without the docker.io daemon it recommends) are installed from Debian's
#    packages when missing. The tests serve podman's Docker API on a socket of their own (tests/containers.py).
# 2. The image: scripts/build-image.sh (first run on a machine without an image registry: about 2.5 min for the
#    Debian base, then seconds).
# Without Docker and without root/apt it says so and stops (exit 0); the container tests then skip, or fail under
# GRAPHLINK_CONTAINER_REQUIRED=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/container-env.sh
source scripts/container-env.sh
say() { printf '[setup-containers] %s\n' "$*" >&2; }

engine=$(GRAPHLINK_CONTAINER_ENGINE='' container_engine 2>/dev/null || true)
if [[ $engine != docker ]]; then
  missing=()
  for tool in podman runc debootstrap iptables docker-compose; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
      say "no container engine and no way to install one here (needs root and apt-get): missing ${missing[*]}"
      say "install Docker or podman yourself; the container tests skip until then"
      exit 0
    fi
    say "installing ${missing[*]} from Debian's packages..."
    t0=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q podman runc debootstrap iptables >/dev/null
    apt-get install -y -q --no-install-recommends docker-compose >/dev/null
    say "    installed in $((SECONDS - t0)) s"
  fi
  engine=podman
fi
say "engine: $engine ($($engine --version 2>/dev/null | head -n 1))"
bash scripts/build-image.sh >/dev/null
