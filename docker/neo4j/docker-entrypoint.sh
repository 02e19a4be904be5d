#!/bin/bash
# Entry point of graphlink's Neo4j image (docker/neo4j/Containerfile): writes neo4j.conf from the environment the way
# the official neo4j image reads it, then runs Neo4j (SIGTERM shuts the DBMS down cleanly).
#
#   NEO4J_AUTH       none                  authentication off
#                    neo4j/<password>      the initial password of the user neo4j (first start only; >= 8 characters)
#                    (unset)               Neo4j's default user neo4j/neo4j, whose password must be changed first
#   NEO4J_<setting>  any neo4j.conf setting: NEO4J_server_memory_pagecache_size=512m -> server.memory.pagecache.size
#                    ("_" becomes ".", "__" becomes "_"); the heap settings become the JVM's -Xms / -Xmx, and
#                    NEO4J_server_jvm_additional (flags separated by blanks or new lines) extra JVM flags
#   GRAPHLINK_NEO4J_JVM_OPTS  extra JVM flags too
# Any other command (e.g. `bash`) runs instead of Neo4j.
set -euo pipefail

if [[ $# -gt 0 && "$1" != "neo4j" ]]; then
  exec "$@"
fi
die() { printf 'docker-entrypoint: %s\n' "$*" >&2; exit 1; }

home=${NEO4J_HOME:-/var/lib/neo4j}
runtime=/opt/neo4j/runtime
mkdir -p "$home/conf"

# The defaults: every interface of the container (the host decides what it publishes), the project's hardening
# (docs/security.md): no LOAD CSV from file URLs, no plugin procedure, no usage report.
declare -A conf=(
  [server.default_listen_address]=0.0.0.0
  [server.bolt.enabled]=true
  [server.bolt.listen_address]=:7687
  [server.http.enabled]=true
  [server.http.listen_address]=:7474
  [server.https.enabled]=false
  [server.directories.data]=/data
  [server.directories.logs]=/logs
  [server.directories.import]=/import
  [server.directories.plugins]=$runtime/plugins
  [server.memory.pagecache.size]=256m
  [dbms.security.auth_enabled]=true
  [dbms.security.allow_csv_import_from_file_urls]=false
  [dbms.security.procedures.allowlist]=
  [dbms.usage_report.enabled]=false
  [internal.dbms.bolt.netty_server_shutdown_quiet_period]=0
)
# NEO4J_<setting> variables, as the official image maps them; its own upper-case variables are not settings
while IFS='=' read -r -d '' name value; do
  [[ $name =~ ^NEO4J_[a-z][A-Za-z0-9_]*$ ]] || continue
  key=${name#NEO4J_}
  key=${key//__/@}
  key=${key//_/.}
  conf[${key//@/_}]=$value
done < <(env -0)

password=
case "${NEO4J_AUTH-}" in
  "") ;;
  none) conf[dbms.security.auth_enabled]=false ;;
  neo4j/*)
    password=${NEO4J_AUTH#neo4j/}
    [[ "$password" != */* ]] || die "NEO4J_AUTH: expected neo4j/<password> or none (a '/true' suffix is not supported)"
    [[ "$password" != neo4j ]] || die "NEO4J_AUTH: the password cannot be 'neo4j', which is the default"
    min=${conf[dbms.security.auth_minimum_password_length]:-8}
    (( ${#password} >= min )) || die "NEO4J_AUTH: the password needs at least $min characters"
    ;;
  *) die "NEO4J_AUTH: expected neo4j/<password> or none (the admin user must be neo4j)" ;;
esac

size() {  # a Neo4j memory size (512m, 1G, 2g, 1024k) as a JVM size
  [[ $1 =~ ^([0-9]+)([kKmMgG])i?[bB]?$ ]] || die "$2=$1: expected a size such as 512m or 1G"
  printf '%s%s' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
}
# JVM flags, as the official image takes them; not a line of neo4j.conf (the launcher starts no second JVM)
read -r -d '' -a additional <<< "${conf[server.jvm.additional]:-}" || true
unset 'conf[server.jvm.additional]'
xms=$(size "${conf[server.memory.heap.initial_size]:-256m}" server.memory.heap.initial_size)
xmx=$(size "${conf[server.memory.heap.max_size]:-1g}" server.memory.heap.max_size)

{
  echo "# written by docker-entrypoint.sh at every start from the defaults and the NEO4J_* environment"
  for key in $(printf '%s\n' "${!conf[@]}" | sort); do
    printf '%s=%s\n' "$key" "${conf[$key]}"
  done
} > "$home/conf/neo4j.conf"

flags=(-Xms"$xms" -Xmx"$xmx" -XX:+UseG1GC -Dfile.encoding=UTF-8
       --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
       --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
       -Dio.netty.tryReflectionSetAccessible=true)
if [[ -n "$password" ]]; then
  # the launcher writes the initial user from this file before Bolt opens (ignored once the system database exists)
  umask 077
  printf '%s' "$password" > "$home/conf/initial-password"
  flags+=(-Dgraphlink.passwordFile="$home/conf/initial-password")
fi
read -r -a extra <<< "${GRAPHLINK_NEO4J_JVM_OPTS:-}"
echo "docker-entrypoint: Neo4j $(cat "$runtime/VERSION"), Bolt ${conf[server.bolt.listen_address]}," \
     "HTTP ${conf[server.http.listen_address]} (enabled: ${conf[server.http.enabled]})," \
     "authentication ${conf[dbms.security.auth_enabled]}, heap $xms..$xmx"
# The launcher prints NEO4J_READY once the default database has answered a query: that line leaves a marker for
# healthcheck.sh. This shell stays PID 1 and hands SIGTERM/SIGINT to the JVM, whose shutdown hook stops the DBMS.
ready=/tmp/neo4j-ready
rm -f "$ready"
java "${flags[@]}" "${additional[@]}" "${extra[@]}" -cp "$runtime/classes:$runtime/plugins/*:$runtime/lib/*" \
  Neo4jLauncher "$home" > >(
    while IFS= read -r line; do
      printf '%s\n' "$line"
      [[ $line == NEO4J_READY ]] && : > "$ready"
    done) &
jvm=$!
stopping=0
trap 'stopping=1; kill -TERM "$jvm" 2>/dev/null' TERM INT
status=0
wait "$jvm" || status=$?
while kill -0 "$jvm" 2>/dev/null; do    # a trapped signal ends the first wait; the JVM is still shutting down
  status=0
  wait "$jvm" || status=$?
done
rm -f "$ready"
# a JVM that ran its shutdown hook on the SIGTERM it was handed exits with 143: that is a clean stop
(( stopping && status == 143 )) && status=0
exit "$status"
