#!/bin/bash
# Health check of graphlink's Neo4j image: the default database has answered a query (docker-entrypoint.sh leaves
# /tmp/neo4j-ready when the launcher says so) and the Bolt port of neo4j.conf answers a Bolt handshake (versions
# 5.0-5.8 offered; a Neo4j 5 server picks one). Exit 0 healthy, 1 not (yet).
set -euo pipefail
[[ -e /tmp/neo4j-ready ]]
conf=${NEO4J_HOME:-/var/lib/neo4j}/conf/neo4j.conf
address=$(sed -n 's/^server\.bolt\.listen_address=//p' "$conf" 2>/dev/null)
port=${address##*:}
exec 3<>"/dev/tcp/127.0.0.1/${port:-7687}"
printf '\x60\x60\xb0\x17\x00\x08\x08\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' >&3
reply=$(timeout 4 head -c 4 <&3 | od -An -tx1 | tr -d ' \n')
[[ $reply =~ ^0000..05$ ]]
