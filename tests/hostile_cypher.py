"""Hostile Cypher for the console's tests (static lock, live server, CLI and app page): what each must refuse.

Every entry is ``(query, words the refusal names)``. ``SERVER_REFUSED`` passes the static lock and is refused by
the server-side locks (the ``EXPLAIN`` plan's operators and query type, the READ session). ``ESCAPED`` holds the
``\\uXXXX`` bypasses reported against the first console and their relatives (escapes in keywords, names,
strings, comments and backticked names; Java's odd hex syntax: signs, full-width and Arabic-Indic digits): the
lexer of the first console took them all, Neo4j decoded them and ran them (``EFFECTIVE`` lists those a plain READ
session really runs: the corpus is checked to be a real attack, not a strawman). ``LOOKALIKES`` spell keywords
with letters from other scripts: Neo4j reads them as names, so they must fail and never run.
"""

from __future__ import annotations

# (query, words the refusal must mention) refused in every mode
ALWAYS_REFUSED = [
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l LIMIT 2", "LOAD CSV"),
    ("LOAD CSV WITH HEADERS FROM 'https://example.org/x.csv' AS row RETURN row", "LOAD CSV"),
    ("LOAD CSV FROM 'file:///../../../../etc/shadow' AS l RETURN l", "LOAD CSV"),
    ("CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value", "apoc.load"),
    ("CALL apoc.load.csv('http://127.0.0.1:7474/') YIELD map RETURN map", "apoc.load"),
    ("CALL apoc.import.csv([{fileName: 'file:///etc/passwd', labels: ['X']}], [], {})", "apoc.import"),
    ("CALL apoc.export.csv.all('/tmp/leak.csv', {})", "apoc.export"),
    ("CALL apoc.export.json.query('MATCH (n) RETURN n', 'leak.json', {})", "apoc.export"),
    ("CALL apoc.cypher.run('MATCH (n) RETURN n', {}) YIELD value RETURN value", "apoc.cypher"),
    ("CALL apoc.cypher.runMany('CREATE (:X);', {})", "apoc.cypher"),
    ("RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n', {}) AS x", "apoc.cypher"),
    ("CALL apoc.cypher.doIt('CREATE (:X)', {}) YIELD value RETURN value", "apoc.cypher"),
    ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})", "apoc.periodic"),
    ("CALL apoc.do.when(true, 'CREATE (:X)', '', {})", "apoc.do"),
    ("CALL apoc.trigger.add('t', 'RETURN 1', {})", "apoc.trigger"),
    ("CALL apoc.bolt.execute('bolt://elsewhere', 'MATCH (n) RETURN n', {})", "apoc.bolt"),
    ("CALL dbms.listConfig()", "dbms"),
    ("CALL dbms.components()", "dbms"),
    ("CALL genai.vector.encode('secret', 'OpenAI', {})", "genai"),
    ("SHOW USERS", "SHOW USERS"),
    ("SHOW USER neo4j PRIVILEGES", "SHOW PRIVILEGES"),
    ("SHOW ROLES", "SHOW ROLES"),
    ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    ("SHOW SETTINGS YIELD name, value", "SHOW SETTINGS"),
    ("SHOW DATABASES", "SHOW DATABASE"),
    ("SHOW CURRENT USER", "SHOW CURRENT"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    ("ALTER USER neo4j SET PASSWORD 'pwned-pass' CHANGE NOT REQUIRED", "ALTER"),
    ("ALTER CURRENT USER SET PASSWORD FROM 'a' TO 'b'", "SET OWN PASSWORD"),
    ("CREATE USER eve SET PASSWORD 'eve-pass'", "CREATE USER"),
    ("CREATE OR REPLACE DATABASE pwned", "CREATE DATABASE"),
    ("CREATE DATABASE pwned", "CREATE DATABASE"),
    ("DROP DATABASE neo4j", "DROP DATABASE"),
    ("START DATABASE neo4j", "START DATABASE"),
    ("STOP DATABASE neo4j", "STOP DATABASE"),
    ("GRANT ROLE admin TO eve", "GRANT"),
    ("DENY READ {*} ON GRAPH * TO PUBLIC", "DENY"),
    ("REVOKE ROLE admin FROM neo4j", "REVOKE"),
    ("USE system SHOW USERS", "USE"),
    ("USE neo4j MATCH (n) RETURN n", "USE"),
    ("USE `neo4j` CALL db.stats.retrieve('QUERIES')", "USE"),
    # other sessions' queries and the server's state, without any escape
    ("CALL db.stats.collect('QUERIES')", "db.stats.collect"),
    ("CALL db.stats.retrieve('QUERIES')", "db.stats.retrieve"),
    ("CALL db.stats.retrieveAllAnonymized('graph')", "db.stats"),
    ("CALL db.stats.status()", "db.stats.status"),
    ("CALL db.stats.stop('QUERIES')", "db.stats.stop"),
    ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
    ("CALL db.info()", "db.info"),
    ("CALL custom.proc()", "custom.proc"),
    ("SHOW TRANSACTIONS YIELD transactionId, currentQuery, parameters RETURN *", "SHOW TRANSACTIONS"),
    ("SHOW SERVERS", "SHOW SERVERS"),
    ("SHOW ALIASES FOR DATABASES", "SHOW ALIASES"),
    ("CALL dbms.setConfigValue('db.logs.query.enabled', 'INFO')", "dbms.setConfigValue"),
    # several statements, subqueries, prefixes
    ("RETURN 1 AS x; SHOW SETTINGS YIELD name RETURN name AS x", "one statement"),
    ("CALL () { CALL db.stats.retrieve('QUERIES') YIELD section RETURN section } RETURN section", "db.stats"),
    ("CALL { LOAD CSV FROM 'http://127.0.0.1:9/x.csv' AS l RETURN l } RETURN l", "LOAD CSV"),
    ("MATCH (n) CALL (n) { SHOW SETTINGS YIELD name RETURN name } RETURN name", "SHOW"),  # Neo4j 5 refuses it
    ("RETURN 1 AS x UNION ALL CALL db.stats.retrieve('QUERIES') YIELD section RETURN 1 AS x", "db.stats"),
    ("PROFILE SHOW SETTINGS YIELD name RETURN name", "SHOW SETTINGS"),
    ("EXPLAIN SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    ("CYPHER runtime=slotted SHOW SETTINGS YIELD name RETURN name", "SHOW SETTINGS"),
    # functions that run Cypher text or reach files and URLs, where APOC is installed
    ("RETURN apoc.cypher.runFirstColumnSingle('SHOW SETTINGS YIELD name RETURN name', {}) AS x", "apoc.cypher"),
    ("RETURN apoc.util.compress('x', {}) AS x", "apoc.util"),
    ("RETURN `apoc.cypher`.runFirstColumnMany('MATCH (n) RETURN n', {}) AS x", "apoc.cypher"),
    # mixed case and whitespace do not hide a keyword
    ("sHoW sEtTiNgS", "SHOW SETTINGS"),
    ("load\tcsv from 'file:///etc/passwd' as l return l", "LOAD CSV"),
    ("Call Db.Stats.Retrieve('QUERIES')", "Db.Stats.Retrieve"),
]

# \uXXXX escapes: Neo4j replaces them before it lexes, everywhere. Raw strings: the backslashes
# reach Neo4j as typed.
ESCAPED = [
    (r"S\u0048OW SETTINGS YIELD name, value WHERE name STARTS WITH 'server.directories' RETURN name, value",
     "SHOW SETTINGS"),
    (r"SHOW TR\u0041NSACTIONS YIELD transactionId, currentQuery, parameters RETURN *", "SHOW TRANSACTIONS"),
    (r"SHOW\u0020TRANSACTIONS", "SHOW TRANSACTIONS"),
    (r"TERMIN\u0041TE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    (r"L\u004fAD CSV FROM 'http://127.0.0.1:9/leak.csv' AS l RETURN l", "LOAD CSV"),
    (r"L\u004FAD CSV FROM 'file:///etc/passwd' AS l RETURN l LIMIT 2", "LOAD CSV"),
    (r"CR\u0045ATE USER eve SET PASSWORD 'eve-pass-123' CHANGE NOT REQUIRED", "CREATE USER"),
    (r"\u0041LTER USER neo4j SET PASSWORD 'pwned-pass-123' CHANGE NOT REQUIRED", "ALTER"),
    (r"CALL db.st\u0061ts.retrieve('QUERIES')", "db.stats.retrieve"),
    (r"CALL `db`.`st\u0061ts`.retrieve('QUERIES')", "db.stats.retrieve"),
    (r"CALL db\u002estats.collect('QUERIES')", "db.stats.collect"),
    # an escaped quote ends the string: the rest is code to Neo4j
    (r"RETURN 'a\u0027 AS x UNION CALL db.stats.retrieve('QUERIES') YIELD section RETURN section AS x //'",
     "db.stats.retrieve"),
    (r"RETURN 1 AS x UNION ALL CALL db.stats.collect(\u0027QUERIES\u0027) YIELD section RETURN 1 AS x",
     "db.stats.collect"),
    # an escaped line break ends a // comment, an escaped */ ends a block comment
    ("MATCH (n) RETURN count(n) AS c // \\u000aUNION ALL CALL db.stats.retrieve('QUERIES') YIELD section "
     "RETURN count(section) AS c", "db.stats.retrieve"),
    (r"/* \u002a/ SHOW SETTINGS YIELD name RETURN name /* */", "SHOW SETTINGS"),
    (r"RETURN 1 AS x /* \u002A/ UNION ALL SHOW SETTINGS YIELD name RETURN 1 AS x /* */", "SHOW"),  # Neo4j 5 refuses it
    # Java's Integer.parseInt(s, 16): a sign, full-width and Arabic-Indic digits all decode
    (r"SHOW S\u+045TTINGS", "SHOW SETTINGS"),
    ("SHOW S\\u\uff10\uff10\uff14\uff15TTINGS", "SHOW SETTINGS"),
    ("SHOW S\\u\u0660\u0660\u0664\u0665TTINGS", "SHOW SETTINGS"),
    # escapes with --write: administration stays refused
    (r"CR\u0045ATE DATABASE pwned", "CREATE DATABASE"),
    (r"GR\u0041NT ROLE admin TO eve", "GRANT"),
]
#: the reported bypass of the first console: a ``//`` comment "ended" by a Unicode line break that Neo4j does not end
#: a comment at (escaped or raw: U+2028, U+000B, U+000C, U+0085, U+2029), then a quote the first console took for
#: the start of a string hiding the next line, on which Neo4j reads the payload as code
_PAYLOAD = "apoc.cypher.runFirstColumnSingle('SHOW SETTINGS YIELD name RETURN name', {})"
COMMENT_BYPASSES = [(f'RETURN 1 AS a // x{brk} "\n, {_PAYLOAD} AS b //"', "apoc.cypher.runFirstColumnSingle")
                    for code in ("2028", "000b", "000c", "0085", "2029")
                    for brk in ("\\u" + code, chr(int(code, 16)))]
COMMENT_BYPASSES += [(f"RETURN 1 AS a // x{brk} '\nUNION ALL CALL db.stats.retrieve('QUERIES') YIELD section "
                      "RETURN 1 AS a //'", "db.stats.retrieve") for brk in ("\\u2028", "\u2029")]

#: queries of ESCAPED that a plain READ session (no console) really runs or sends out: the threat is real
EFFECTIVE = [q for q, _ in ESCAPED if any(k in q for k in ("S\\u0048OW", "TR\\u0041NS", "\\u0020TRANS",
                                                            "st\\u0061ts", "a\\u0027", "\\u000a",
                                                            "\\u002a/ SHOW", "\\u+045"))]

JAVA_DECODED = [  # (text as typed, what Neo4j 5.26 reads; each verified against the server, see the live test)
    (r"\u0041", "A"),
    (r"\\u0041", r"\\u0041"),                 # an escaped backslash: no escape
    (r"\\\u0041", "\\\\A"),                # an odd backslash before: an escape again
    (r"\u005cu0041", r"\u0041"),               # a decoded backslash escapes nothing
    (r"\u+041", "A"),                          # Integer.parseInt takes a sign ...
    (r"\u-041", "\uffbf"),                     # ... and a minus wraps around as a char
    ("\\u\uff10\uff10\uff14\uff11", "A"),        # full-width digits
    ("\\u\u0660\u0660\u0664\u0661", "A"),        # Arabic-Indic digits
    (r"\uD83D\uDE00", "\U0001F600"),           # a surrogate pair becomes one character
    (r"\U0041", r"\U0041"),                    # only a lower-case u
    ("\\u0041\\", "A\\"),
    (r"\u+0041", "\x041"),                      # four units: '+004' is 4, then '1'
]

#: the characters that matter to \\u escapes, for random texts
ESCAPE_CHARS = ["\\", "u", "0", "4", "1", "a", "F", "+", "-", "\uff10", "\u0664", "x", " ", "'"]

# letters from other scripts that look like Latin ones: Neo4j reads a name, not a keyword
LOOKALIKES = [
    "\u0405HOW SETTINGS",                      # Cyrillic Dze
    "SH\u041eW SETTINGS",                      # Cyrillic O
    "\uff33\uff28\uff2f\uff37 SETTINGS",    # full-width SHOW
    "L\u039fAD CSV FROM 'file:///etc/passwd' AS l RETURN l",   # Greek Omicron
    "CALL db.st\u0430ts.retrieve('QUERIES')",  # Cyrillic a
    "\u0421REATE USER eve SET PASSWORD 'eve-pass-123'",         # Cyrillic Es
]
# refused when writing is not allowed, accepted by the static lock with write=True
READ_ONLY_REFUSED = [
    ("CALL () { MATCH (n) RETURN n } IN TRANSACTIONS OF 10 ROWS RETURN count(n)", "IN TRANSACTIONS"),
    ("CALL { MATCH (n) RETURN n } IN TRANSACTIONS RETURN count(n)", "IN TRANSACTIONS"),
    ("CALL () { MATCH (n) RETURN n } IN 2 CONCURRENT TRANSACTIONS RETURN 1", "IN TRANSACTIONS"),
    ("CREATE INDEX pwned FOR (n:Pwned) ON (n.x)", "schema"),
    ("CREATE RANGE INDEX pwned IF NOT EXISTS FOR (n:Pwned) ON (n.x)", "schema"),
    ("CREATE CONSTRAINT pwned FOR (n:Pwned) REQUIRE n.x IS UNIQUE", "schema"),
    ("DROP CONSTRAINT release_name IF EXISTS", "schema"),
    ("DROP INDEX some_index", "schema"),
]
# what analysts do: all pass in both modes (writes are left to the server's plan check)
ACCEPTED = [
    "MATCH (r:Release) RETURN r.name AS name ORDER BY name",
    "MATCH (n) RETURN count(n) AS nodes",
    "RETURN 'LOAD CSV FROM file:///etc/passwd' AS harmless_string",
    'RETURN "CALL apoc.load.json(\\"x\\")" AS s, \'it\\\'s\' AS t, \'back\\\\\' AS u',
    "MATCH (n) RETURN n // LOAD CSV FROM 'file:///etc/passwd'",
    "MATCH (n) /* CALL apoc.cypher.run('x') */ RETURN n",
    "MATCH (n:Show {use: 1, alter: 2}) RETURN n.show AS s, n.load AS l, n.grant AS g",
    "MATCH (a)-[:USE|GRANT]->(b:DROP) RETURN a",
    "RETURN `LOAD` AS x, `a``b` AS y",
    "SHOW INDEXES",
    "SHOW CONSTRAINTS YIELD name RETURN name",
    "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'db.' RETURN name",
    "SHOW USER DEFINED FUNCTIONS",
    "SHOW ALL FUNCTIONS",
    "CALL db.labels() YIELD label RETURN label",
    "CALL db.labels YIELD label RETURN label",
    "CALL db.schema.visualization()",
    "RETURN apoc.coll.sum([1, 2, 3]) AS s",
    "MATCH p = (a)-[:LINK*1..3]->(b) RETURN length(p) AS hops, $release AS release",
    "CREATE (n:Scratch {x: 1}) RETURN n",          # a write: the plan check refuses it in read-only mode
    "MATCH (n) WITH n CALL (n) { RETURN n.x AS x } RETURN x",
]
# pass the static lock; the plan check (query type not "r") or the READ session refuses them
SERVER_REFUSED = [
    ("CREATE (:Pwned {x: 1})", "plan"),
    ("MATCH (n) DETACH DELETE n", "plan"),
    ("MERGE (r:Release {name: 'pwned'}) RETURN r", "plan"),
    ("MATCH (r:Release) SET r.name = 'pwned' RETURN r", "plan"),
    ("CALL db.labels() YIELD label CREATE (:Pwned {label: label})", "plan"),
    ("MATCH (n) FOREACH (x IN [1] | SET n.pwned = true)", "plan"),
]
#: payloads for parameter values: each must come back verbatim, never run
INJECTIONS = [
    "x'}) DETACH DELETE n RETURN 1 //",
    "' RETURN 1 UNION MATCH (n) DETACH DELETE n //",
    '"}) CALL apoc.cypher.doIt("CREATE (:Pwned)", {}) YIELD value RETURN value //',
    "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    "$release` } ) MATCH (n) DETACH DELETE n /*",
    "\\'; CREATE (:Pwned); //",
]

# reads an analyst writes: every one must pass the console in read-only mode (the allowlists are not too tight)
READS = [
    "MATCH (r:Release {name: $release}) RETURN r.rows AS rows",
    "MATCH (e:Identified) WHERE e.release = $release AND e.key STARTS WITH 'a' RETURN e.key ORDER BY e.key LIMIT 5",
    "MATCH (e:Identified) WHERE e.key CONTAINS 'x' RETURN count(e) AS n",
    "MATCH (e:Identified) WHERE e.key ENDS WITH 'x' RETURN count(e) AS n",
    "MATCH (e:Identified {release: $release}) WHERE e.key IN $ids RETURN e.key",
    "MATCH (l:Location) WHERE l.index > 2 AND l.index <= 10 RETURN l.name",
    "MATCH (a:Identified)-[:DISCLOSED_AT]->(l:Location)<-[:DISCLOSED_AT]-(b:Deidentified) "
    "RETURN a.key, b.key, count(l) AS shared ORDER BY shared DESC LIMIT 10",
    "OPTIONAL MATCH (r:Release {name: $release})-[:HAS_LOCATION]->(l) RETURN r, collect(l.name) AS locations",
    "MATCH p = shortestPath((a:Identified)-[*..4]-(b:Deidentified)) WHERE a.release = $release RETURN length(p)",
    "MATCH p = allShortestPaths((a:Identified)-[*..3]-(b:Deidentified)) RETURN count(p)",
    "MATCH (a:Identified) ((x)-[:DISCLOSED_AT]->(y)){1,2} (b) RETURN count(*) AS n",
    "MATCH p = SHORTEST 1 (a:Identified)-[:DISCLOSED_AT]-+(b:Location) RETURN length(p) LIMIT 3",
    "MATCH (a)-[r:REIDENTIFIED]->(b) WHERE r.method = 'reidit' RETURN count(r)",
    "MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n",
    "MATCH (n) RETURN labels(n) AS labels, count(*) AS n",
    "MATCH (n:Identified|Deidentified) RETURN count(n)",
    "MATCH (n:!Location) RETURN count(n)",
    "MATCH (n:Identified&!Location) RETURN count(n)",
    "MATCH (e:Identified) WHERE EXISTS { (e)-[:DISCLOSED_AT]->(:Location) } RETURN count(e)",
    "MATCH (e:Identified) RETURN e.key, COUNT { (e)-->() } AS degree ORDER BY degree DESC LIMIT 5",
    "MATCH (e:Identified) RETURN e.key, COLLECT { MATCH (e)-->(l) RETURN l.name } AS at LIMIT 5",
    "MATCH (e:Identified) CALL (e) { MATCH (e)-->(l) RETURN count(l) AS c } RETURN e.key, c LIMIT 5",
    "MATCH (e:Identified) RETURN [(e)-->(l) | l.name] AS at, [x IN range(1, 3) WHERE x > 1 | x * 2] AS xs",
    "UNWIND $ids AS id MATCH (e:Identified {key: id}) RETURN e",
    "MATCH (e:Identified) RETURN DISTINCT e.release",
    "MATCH (a:Identified) RETURN a.key AS k UNION MATCH (b:Deidentified) RETURN b.key AS k",
    "MATCH (n) WHERE elementId(n) = 'x' RETURN n",
    "MATCH (n) WHERE id(n) = 0 RETURN n",
    "MATCH ()-[r]->() WHERE elementId(r) = 'x' RETURN r",
    "MATCH (a:Identified), (b:Deidentified) WHERE a.key = b.key RETURN count(*)",
    "MATCH (a:Identified) WITH a ORDER BY a.key SKIP 2 LIMIT 3 RETURN a.key",
    "MATCH (n:Location) RETURN n.name ORDER BY n.index, n.name LIMIT 3",
    "MATCH (l:Location) RETURN reduce(s = 0, x IN [l.identified, l.deidentified] | s + coalesce(x, 0)) AS t",
    "MATCH (l:Location) RETURN CASE WHEN l.identified > 1 THEN 'many' ELSE 'few' END AS size",
    "MATCH (a)-[:DISCLOSED_AT]->(l)<-[:DISCLOSED_AT]-(b) WHERE NOT (a)-[:REIDENTIFIED]->(b) RETURN count(*)",
    "MATCH (r:Release) RETURN r.name, toString(r.loaded_at) AS at, date() AS today, duration.between(date(), date())",
    "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name",
    "SHOW CONSTRAINTS",
    "CALL db.schema.nodeTypeProperties()",
    "MATCH (n) RETURN count(n) AS nodes",
    "MATCH (a:Identified) MATCH (a)-[:DISCLOSED_AT]->(l) WITH l, collect(a) AS as RETURN l.name, size(as)",
    "MATCH (l:Location) WITH min(l.index) AS lo, max(l.index) AS hi, avg(l.index) AS mean, "
    "percentileCont(l.index, 0.5) AS med, stDev(l.index) AS sd RETURN *",
]
