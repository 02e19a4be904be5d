"""Hostile Cypher for the console's tests (static lock, live server, CLI and app page): what each must refuse.

Every entry is ``(query, words the refusal names)``. ``SERVER_REFUSED`` passes the static lock and is refused by
the server-side locks (the ``EXPLAIN`` query type, the READ session).
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
    ("SHOW USER neo4j PRIVILEGES", "SHOW USER"),
    ("SHOW ROLES", "SHOW ROLES"),
    ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    ("SHOW SETTINGS YIELD name, value", "SHOW SETTINGS"),
    ("SHOW DATABASES", "SHOW DATABASES"),
    ("SHOW CURRENT USER", "SHOW CURRENT"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    ("ALTER USER neo4j SET PASSWORD 'pwned-pass' CHANGE NOT REQUIRED", "ALTER"),
    ("ALTER CURRENT USER SET PASSWORD FROM 'a' TO 'b'", "ALTER"),
    ("CREATE USER eve SET PASSWORD 'eve-pass'", "CREATE USER"),
    ("CREATE OR REPLACE DATABASE pwned", "CREATE OR"),
    ("CREATE DATABASE pwned", "CREATE DATABASE"),
    ("DROP DATABASE neo4j", "DROP DATABASE"),
    ("START DATABASE neo4j", "START DATABASE"),
    ("STOP DATABASE neo4j", "STOP DATABASE"),
    ("GRANT ROLE admin TO eve", "GRANT"),
    ("DENY READ {*} ON GRAPH * TO PUBLIC", "DENY"),
    ("REVOKE ROLE admin FROM neo4j", "REVOKE"),
    ("USE system SHOW USERS", "USE"),
    ("USE neo4j MATCH (n) RETURN n", "USE"),
]
# refused when writing is not allowed, accepted by the static lock with write=True
READ_ONLY_REFUSED = [
    ("CALL () { MATCH (n) RETURN n } IN TRANSACTIONS OF 10 ROWS RETURN count(n)", "IN TRANSACTIONS"),
    ("CALL { MATCH (n) RETURN n } IN TRANSACTIONS RETURN count(n)", "IN TRANSACTIONS"),
    ("CALL () { MATCH (n) RETURN n } IN 2 CONCURRENT TRANSACTIONS RETURN 1", "IN TRANSACTIONS"),
    ("CREATE INDEX pwned FOR (n:Pwned) ON (n.x)", "CREATE INDEX"),
    ("CREATE RANGE INDEX pwned IF NOT EXISTS FOR (n:Pwned) ON (n.x)", "CREATE RANGE"),
    ("CREATE CONSTRAINT pwned FOR (n:Pwned) REQUIRE n.x IS UNIQUE", "CREATE CONSTRAINT"),
    ("DROP CONSTRAINT release_name IF EXISTS", "DROP CONSTRAINT"),
    ("DROP INDEX some_index", "DROP INDEX"),
    ("CALL custom.proc()", "custom.proc"),
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
    ("CALL db.createLabel('Pwned')", "plan"),
    ("CALL db.clearQueryCaches()", "plan"),
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
