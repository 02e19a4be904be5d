# Sourced (not run) by scripts/build-image.sh, scripts/setup-containers.sh and the container tests (tests/containers.py):
# which container engine to use and, for podman, the configuration its containers run with.
#
#   GRAPHLINK_CONTAINER_ENGINE=docker|podman   force one (default: a Docker daemon that answers, else podman)
#   GRAPHLINK_CACHE=DIR                        caches kept outside the clone (default: ~/.cache/graphlink)
#   CONTAINERS_CONF=FILE                       podman configuration to use instead of the generated one

graphlink_cache="${GRAPHLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graphlink}"

# The engine's command: "docker" when a real Docker daemon answers (DOCKER_HOST unset or not a podman socket),
# otherwise "podman" when installed. Fails (status 1) when there is neither.
container_engine() {
  if [[ -n "${GRAPHLINK_CONTAINER_ENGINE:-}" ]]; then
    echo "$GRAPHLINK_CONTAINER_ENGINE"
  elif command -v docker >/dev/null && timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
       && ! timeout 10 docker version 2>/dev/null | grep -qi 'podman engine'; then
    echo docker
  elif command -v podman >/dev/null; then
    echo podman
  else
    return 1
  fi
}

# podman's configuration for this machine kind, exported as CONTAINERS_CONF: runc as the OCI runtime where installed
# (crun cannot run containers on a cgroup v1/hybrid host), default ulimits below this process's hard limits (podman's
# defaults are higher, and raising a hard limit is refused here: "setrlimit RLIMIT_NOFILE: operation not permitted"),
# events to a file (no journald). A CONTAINERS_CONF already set is kept.
podman_setup() {
  [[ -n "${CONTAINERS_CONF:-}" ]] && return 0
  local nofile nproc dir file
  # open files: as many as this process may have, up to 65536 (Neo4j asks for 40000 or more); processes: 4096 per
  # container user, far more threads than one Neo4j needs (a higher value than about 32768 is refused here too)
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [[ $nofile == unlimited || $nofile -gt 65536 ]] && nofile=65536
  [[ $nproc == unlimited || $nproc -gt 4096 ]] && nproc=4096
  dir="$graphlink_cache/containers"
  file="$dir/containers-$nofile-$nproc.conf"
  mkdir -p "$dir"
  {
    echo "# written by scripts/container-env.sh (graphlink); regenerated when missing"
    echo "[containers]"
    echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
    echo "[engine]"
    echo 'events_logger = "file"'
    command -v runc >/dev/null && echo 'runtime = "runc"'
  } > "$file.$$"
  mv -f "$file.$$" "$file"
  export CONTAINERS_CONF="$file"
}
