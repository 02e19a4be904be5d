// QI links: Sweeney's linking attack in Cypher. For each record of an identified table (e.g. a voter list
// loaded with `graphlink qi load --domain` of the released table), the released records it is compatible
// with: every released label is its value or an ancestor of it. A k-anonymous release gives every identified
// record 0 or at least k candidates. graphlink.store.qi.write_links stores them as QI_LINK edges
// (qi_load.cypher, statement links).
//
// @param identified  name of the identified QI table
// @param run  the release run id (QIRelease.run)
// @param limit=100  how many identified records to return

// @name link_counts
MATCH (rel:QIRelease {run: $run})
MATCH (i:QIRecord {table: $identified})-[:HAS_VALUE]->(:QIValue)-[:GENERALIZES_TO*0..]->(a:QIValue)
WITH rel, i, collect(a) AS ancestors
MATCH (r:QIRecord {table: rel.table})-[:RELEASED_AS {run: $run}]->(g:QIValue)
WHERE g IN ancestors
WITH rel, i, r, count(DISTINCT g) AS matched
WHERE matched = size(rel.qi)
RETURN i.row AS identified_row, i.key AS key, count(r) AS candidates, collect(r.row)[0..20] AS released_rows
ORDER BY candidates, identified_row
LIMIT $limit;

