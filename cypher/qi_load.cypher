// Write a quasi-identifier table, its hierarchies and its anonymized releases (graphlink.store.qi runs these
// statements in order, batching the $rows lists; MERGE on the constraints of qi_schema.cypher makes every
// write idempotent).
//
// @param table  name of the QI table
// @param domain  hierarchy namespace (tables of one domain share QIValue nodes)
// @param qi=[]  the quasi-identifier columns, in order
// @param rows=[]  batch of rows (see each statement)
// @param run=null  release run id
// @param props={}  properties of the QITable / QIRelease node
// @param identified=null  the identified table of statement links

// @name table
MERGE (t:QITable {name: $table})
SET t += $props, t.domain = $domain, t.qi = $qi, t.status = 'loading', t.loaded_at = datetime()
RETURN t.name AS table;

// @name values
// One row per (attribute, level, label, parent): the hierarchy tree, parent = the label one level up.
UNWIND $rows AS v
MERGE (n:QIValue {domain: $domain, attribute: v.attribute, level: v.level, label: v.label})
WITH n, v WHERE v.parent IS NOT NULL
MERGE (p:QIValue {domain: $domain, attribute: v.attribute, level: v.level + 1, label: v.parent})
MERGE (n)-[:GENERALIZES_TO]->(p);

// @name records
// One row per record: {row, key, sensitive, labels: [ground label per QI]}.
UNWIND $rows AS r
MERGE (x:QIRecord {table: $table, row: r.row})
SET x.key = r.key, x.sensitive = r.sensitive
WITH x, r
UNWIND range(0, size($qi) - 1) AS i
MATCH (v:QIValue {domain: $domain, attribute: $qi[i], level: 0, label: r.labels[i]})
MERGE (x)-[:HAS_VALUE]->(v);

// @name loaded
MATCH (t:QITable {name: $table})
OPTIONAL MATCH (x:QIRecord {table: $table})
WITH t, count(x) AS n
SET t.status = 'loaded', t.rows = n
RETURN properties(t) AS table;

// @name release
MATCH (t:QITable {name: $table})
CREATE (rel:QIRelease {run: $run, table: $table, qi: $qi, at: datetime()})-[:OF]->(t)
SET rel += $props
RETURN rel.run AS run;

// @name released
// One row per released record: {row, levels: [level per QI], labels: [released label per QI]}.
UNWIND $rows AS r
MATCH (x:QIRecord {table: $table, row: r.row})
UNWIND range(0, size($qi) - 1) AS i
MATCH (v:QIValue {domain: $domain, attribute: $qi[i], level: r.levels[i], label: r.labels[i]})
CREATE (x)-[:RELEASED_AS {run: $run}]->(v);

// @name suppressed
// One row per suppressed record: {row}.
MATCH (rel:QIRelease {run: $run})
UNWIND $rows AS r
MATCH (x:QIRecord {table: $table, row: r.row})
CREATE (x)-[:SUPPRESSED_IN]->(rel);

// @name links
// QI_LINK edges from each record of table $identified to the released records it is compatible with (see
// qi_links.cypher).
MATCH (rel:QIRelease {run: $run})
MATCH (i:QIRecord {table: $identified})-[:HAS_VALUE]->(:QIValue)-[:GENERALIZES_TO*0..]->(a:QIValue)
WITH rel, i, collect(a) AS ancestors
MATCH (r:QIRecord {table: rel.table})-[:RELEASED_AS {run: $run}]->(g:QIValue)
WHERE g IN ancestors
WITH rel, i, r, count(DISTINCT g) AS matched
WHERE matched = size(rel.qi)
MERGE (i)-[:QI_LINK {run: $run}]->(r)
RETURN count(*) AS links;
