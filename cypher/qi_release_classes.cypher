// Equivalence classes of a stored anonymized release (QIRelease.run, from graphlink qi anonymize --store
// neo4j): the released records grouped by their released labels, smallest first, with the release's k.
//
// @param run  the release run id
// @param limit=50  how many classes to return

// @name classes
MATCH (rel:QIRelease {run: $run})
MATCH (r:QIRecord {table: rel.table})-[:RELEASED_AS {run: $run}]->(g:QIValue)
WITH r, g ORDER BY g.attribute
WITH r, collect(g.attribute + '=' + g.label) AS class
WITH class, count(r) AS size, collect(r.row) AS rows
WITH collect({class: class, size: size, rows: rows}) AS all, min(size) AS k
UNWIND all AS c
RETURN c.class AS class, c.size AS size, k, c.rows[0..20] AS rows
ORDER BY size, class
LIMIT $limit;
