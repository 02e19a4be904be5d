#!/usr/bin/env bash
# Build graphlink's Neo4j image (docker/neo4j/Containerfile): Neo4j Community 5.26 LTS from the runtime that
# scripts/setup-neo4j.sh resolves from Maven Central, on Debian bookworm with OpenJDK 17. docs/neo4j.md, "Containers".
#
#   bash scripts/build-image.sh            # idempotent: nothing to do when the image was built from the same inputs
#   bash scripts/build-image.sh --force    # rebuild the image (the cached base is kept)
#
# The base: debian:bookworm-slim when the engine has it or an image registry answers (a user with Docker); otherwise
# (no registry, as on the project's CI machines) a Debian bookworm + OpenJDK 17 base built here once by debootstrap
# from the machine's Debian mirror (about 2.5 min) and kept in the engine's image storage; its .deb files are cached
# in ~/.cache/graphlink/debootstrap, so even a rebuild of the base downloads nothing.
#   GRAPHLINK_NEO4J_IMAGE=NAME   the image to build (default: localhost/graphlink/neo4j:5.26)
#   GRAPHLINK_IMAGE_BASE=NAME    use this base image
#   GRAPHLINK_CONTAINER_ENGINE=docker|podman, GRAPHLINK_CACHE: scripts/container-env.sh
# Needs: Docker or podman (scripts/setup-containers.sh installs podman on Debian); for the local base, root and
# debootstrap. The image's name is the last line on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/container-env.sh
source scripts/container-env.sh
say() { printf '[build-image] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

image="${GRAPHLINK_NEO4J_IMAGE:-localhost/graphlink/neo4j:5.26}"
local_base=localhost/graphlink/bookworm-jre17:1
slim=docker.io/library/debian:bookworm-slim
force=0
[[ "${1:-}" == "--force" ]] && force=1

engine=$(container_engine) || die "no container engine: install Docker, or podman (bash scripts/setup-containers.sh)"
[[ $engine == podman ]] && podman_setup
mkdir -p "$graphlink_cache/containers"
exec 9>"$graphlink_cache/containers/build.lock"
flock 9          # one build at a time on this machine (worktrees and CI share the engine's storage)

bash scripts/setup-neo4j.sh
runtime="${GRAPHLINK_NEO4J_DIR:-$root/.graphlink/neo4j}/runtime"
[[ -f "$runtime/VERSION" ]] || die "no Neo4j runtime in $runtime (bash scripts/setup-neo4j.sh)"

registry_answers() {  # the registry of docker.io images accepts a TCP connection within 3 s
  timeout 3 bash -c 'exec 3<>/dev/tcp/registry-1.docker.io/443' 2>/dev/null
}

# Debian bookworm minbase + OpenJDK 17 from the machine's own Debian mirror (apt's configuration), imported as an image
build_local_base() {
  command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap), or set GRAPHLINK_IMAGE_BASE"
  [[ $(id -u) -eq 0 ]] || die "building the local base image needs root (debootstrap); or set GRAPHLINK_IMAGE_BASE"
  local mirror rootfs t0=$SECONDS
  rm -rf "$graphlink_cache"/containers/rootfs.*     # what a build that was killed left (this one holds the lock)
  mirror=$(apt-cache policy 2>/dev/null | awk '$3 == "bookworm/main" && $5 == "Packages" { print $2; exit }')
  rootfs=$(mktemp -d "$graphlink_cache/containers/rootfs.XXXXXX")
  mkdir -p "$graphlink_cache/debootstrap"
  say "building the base $local_base with debootstrap (bookworm minbase + openjdk-17-jre-headless${mirror:+ from $mirror})..."
  if ! debootstrap --variant=minbase --include=openjdk-17-jre-headless --cache-dir="$graphlink_cache/debootstrap" \
        bookworm "$rootfs" ${mirror:+"$mirror"} > "$rootfs.log" 2>&1; then
    tail -n 5 "$rootfs.log" >&2
    rm -rf "$rootfs"
    die "debootstrap failed (the full log: $rootfs.log)"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs.log"
  tar -C "$rootfs" -c . | $engine import --change 'CMD ["/bin/bash"]' - "$local_base" >/dev/null
  rm -rf "$rootfs"
  say "    base built in $((SECONDS - t0)) s"
}

if [[ -n "${GRAPHLINK_IMAGE_BASE:-}" ]]; then
  base=$GRAPHLINK_IMAGE_BASE
elif [[ $engine == docker ]] || $engine image inspect "$slim" >/dev/null 2>&1 || registry_answers; then
  base=$slim
else
  $engine image inspect "$local_base" >/dev/null 2>&1 || build_local_base
  base=$local_base
fi
base_id=$($engine image inspect --format '{{.Id}}' "$base" 2>/dev/null || echo "$base")

# Everything the image is made of; the hash is the image's label, so an unchanged image is not rebuilt
inputs=$( {
  echo "$base $base_id"
  sha256sum docker/neo4j/Containerfile docker/neo4j/docker-entrypoint.sh docker/neo4j/healthcheck.sh
  (cd "$runtime" && find . -type f -printf '%P %s\n' | LC_ALL=C sort && sha256sum VERSION classes/*.class)
} | sha256sum | cut -c1-32)
have=$($engine image inspect --format '{{ index .Config.Labels "org.graphlink.inputs" }}' "$image" 2>/dev/null || true)
old_id=$($engine image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
if [[ $force -eq 0 && "$have" == "$inputs" ]]; then
  say "$image is up to date (base $base)"
  echo "$image"
  exit 0
fi

# The build context: the runtime (hard links where the file system allows) and the two scripts
context="$root/.graphlink/image-context"
rm -rf "$context"
mkdir -p "$context/runtime"
for part in lib plugins classes VERSION; do
  cp -al "$runtime/$part" "$context/runtime/" 2>/dev/null || cp -a "$runtime/$part" "$context/runtime/"
done
cp docker/neo4j/docker-entrypoint.sh docker/neo4j/healthcheck.sh "$context/"
format=()
[[ $engine == podman ]] && format=(--format docker)
say "building $image on $base ($engine)..."
t0=$SECONDS
$engine build "${format[@]}" --build-arg BASE="$base" --label org.graphlink.inputs="$inputs" \
  --label org.opencontainers.image.title="graphlink Neo4j $(cat "$runtime/VERSION")" \
  -t "$image" -f docker/neo4j/Containerfile "$context" >&2
rm -rf "$context"
say "built $image in $((SECONDS - t0)) s"
# the image it replaces, now without a name (kept while a container still uses it)
if [[ -n "$old_id" && "$old_id" != "$($engine image inspect --format '{{.Id}}' "$image")" ]]; then
  $engine rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "$image"
