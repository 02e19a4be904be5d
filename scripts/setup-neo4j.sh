#!/usr/bin/env bash
# Resolve a local Neo4j Community 5.26 LTS runtime from Maven Central and compile its tiny launcher.
#
#   bash scripts/setup-neo4j.sh            # idempotent: does nothing when the runtime is already complete
#   bash scripts/setup-neo4j.sh --force    # re-resolve from scratch
#
# Output: $GRAPHLINK_NEO4J_DIR/runtime (default: <repo>/.graphlink/neo4j/runtime, git-ignored) with
#   lib/      the server classpath (org.neo4j:neo4j + Bolt + HTTP server + Neo4j Browser + the bulk importer behind
#             neo4j-admin database import), from docker/local/pom.xml
#   plugins/  APOC core + its dependencies (optional; skipped with a warning if it cannot be resolved)
#   classes/  Neo4jLauncher.class and CypherCheck.class (the Cypher console's parser worker: Neo4j's own parser)
#             compiled from docker/local/*.java
#   VERSION   the Neo4j version, written last: its presence marks a complete runtime
# Needs: Java 17 (javac) and Maven 3.8+ with access to Maven Central. No Docker.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
src="$root/docker/local"
base="${GRAPHLINK_NEO4J_DIR:-$root/.graphlink/neo4j}"
out="$base/runtime"
force=0
[[ "${1:-}" == "--force" ]] && force=1

say() { printf '[setup-neo4j] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

version=$(sed -n 's:.*<neo4j.version>\(.*\)</neo4j.version>.*:\1:p' "$src/pom.xml" | head -n 1)
[[ -n "$version" ]] || die "cannot read <neo4j.version> from $src/pom.xml"

sources=("$src/Neo4jLauncher.java" "$src/CypherCheck.java")
compiled() {  # every class is newer than its source
  local s
  for s in "${sources[@]}"; do
    [[ -f "$1/$(basename "${s%.java}").class" && "$1/$(basename "${s%.java}").class" -nt "$s" ]] || return 1
  done
}
if [[ $force -eq 0 && -f "$out/VERSION" && "$(cat "$out/VERSION")" == "$version" ]]; then
  if compiled "$out/classes"; then
    say "Neo4j $version runtime already complete in $out ($(ls "$out/lib" | wc -l) jars); nothing to do."
    exit 0
  fi
  # the jars are there, a source changed: compile the classes again, nothing else
  command -v javac >/dev/null || die "javac not found: install a full JDK 17 (openjdk-17-jdk-headless), not only the JRE"
  rm -rf "$out/classes.tmp" && mkdir -p "$out/classes.tmp"
  javac -nowarn -cp "$out/lib/*" -d "$out/classes.tmp" "${sources[@]}"
  rm -rf "$out/classes" && mv "$out/classes.tmp" "$out/classes"
  say "compiled $(basename -a "${sources[@]}" | tr '\n' ' ')into $out/classes"
  exit 0
fi

command -v java >/dev/null || die "java not found: install OpenJDK 17 (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)"
command -v javac >/dev/null || die "javac not found: install a full JDK 17 (openjdk-17-jdk-headless), not only the JRE"
command -v mvn >/dev/null || die "mvn not found: install Maven 3.8+ (Debian/Ubuntu: apt-get install maven)"
jv=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
[[ -n "$jv" && "$jv" -ge 17 ]] || die "Neo4j 5.26 needs Java 17 or 21; found '$(java -version 2>&1 | head -n 1)'"

# Maven 3.8.7 binds the ancient maven-dependency-plugin 2.8 by default; pin a current one.
DEP=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
MVN=(mvn -B -Dstyle.color=never)
[[ -n "${MAVEN_ARGS_EXTRA:-}" ]] && MVN+=($MAVEN_ARGS_EXTRA)

tmp="$base/runtime.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/lib" "$tmp/plugins" "$tmp/classes"
t0=$SECONDS

say "1/3 resolving Neo4j $version (org.neo4j:neo4j + Bolt + HTTP + Browser) from Maven Central..."
# Progress: one line per artifact Maven copies; the first run downloads about 140 MB into ~/.m2.
set +e
"${MVN[@]}" -f "$src/pom.xml" "$DEP:copy-dependencies" -DincludeScope=runtime -DoutputDirectory="$tmp/lib" 2>&1 \
  | awk '/Downloaded from .*\.jar/ { n++; if (n % 20 == 1 && match($0, /[^\/ ]+\.jar/)) printf "    downloaded %d jars so far (%s)\n", n, substr($0, RSTART, RLENGTH) }
         /ERROR|BUILD FAILURE/ { print "    " $0 }' >&2
rc=${PIPESTATUS[0]}
set -e
[[ $rc -eq 0 ]] || die "Maven failed (exit $rc): is Maven Central reachable? Re-run with --force after fixing."
n=$(find "$tmp/lib" -name '*.jar' | wc -l)
[[ -f "$tmp/lib/neo4j-$version.jar" ]] || die "Maven did not deliver neo4j-$version.jar (see the output above)"
[[ -f "$tmp/lib/neo4j-import-tool-$version.jar" ]] || die "Maven did not deliver neo4j-import-tool-$version.jar (bulk import)"
say "    $n jars, $(du -sh "$tmp/lib" | cut -f1)"

say "2/3 resolving APOC core (optional)..."
if "${MVN[@]}" -q -f "$src/apoc/pom.xml" "$DEP:copy-dependencies" -DincludeScope=runtime \
      -DoutputDirectory="$tmp/plugins" >"$tmp/apoc-mvn.log" 2>&1; then
  # drop jars Neo4j already ships (any version): one copy per library on the class path
  for jar in "$tmp"/plugins/*.jar; do
    stem=$(basename "$jar" | sed -E 's/-[0-9][0-9A-Za-z.]*(-[A-Za-z0-9.]+)?\.jar$//')
    if compgen -G "$tmp/lib/$stem-[0-9]*.jar" >/dev/null; then rm -f "$jar"; fi
  done
  say "    $(ls "$tmp/plugins" | wc -l) plugin jars ($(ls "$tmp/plugins" | grep -o '^apoc-core-[0-9.]*[0-9]' || true))"
else
  sed 's/\x1b\[[0-9;]*m//g' "$tmp/apoc-mvn.log" | grep -E 'ERROR' | head -n 3 >&2 || true
  say "    warning: APOC could not be resolved; the server runs without it"
  rm -f "$tmp"/plugins/*.jar
fi

say "3/3 compiling the launcher and the console's parser worker..."
javac -nowarn -cp "$tmp/lib/*" -d "$tmp/classes" "${sources[@]}"

rm -f "$tmp/apoc-mvn.log"
echo "$version" > "$tmp/VERSION"
rm -rf "$out"
mv "$tmp" "$out"
say "done in $((SECONDS - t0)) s: Neo4j $version runtime in $out"
