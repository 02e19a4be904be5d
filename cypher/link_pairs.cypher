// The written link graph as element pairs (Definition 17 edges with their classification), expanded from the
// twin classes: every member pair of a class LINK shares its verdict.  allowed = in some maximum matching (one-to-
// many: in some consistent assignment), vital = a true love (one-to-many: certain).  The expansion is as large as
// the element-level link graph: use it on small releases, or narrow it with $key.
// Output: identified, deidentified, allowed, vital, run (sorted by de-identified, then identified).
//
// @param release  name of the release
// @param key=null  only the pairs of this element (identified or de-identified key)
// @param run=null  run id of the link graph (null: the latest one of the release)

// @name link_pairs
MATCH (a:Analysis {release: $release, kind: 'link-graph'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
CALL (a) {
  MATCH (i:Identified {release: $release, key: $key})-[:IN_CLASS]->(:TrailClass)-[l:LINK {run: a.run}]->(cd)
  MATCH (d:Deidentified)-[:IN_CLASS]->(cd)
  RETURN i, d, l
  UNION
  MATCH (d:Deidentified {release: $release, key: $key})-[:IN_CLASS]->(:TrailClass)<-[l:LINK {run: a.run}]-(ci)
  MATCH (i:Identified)-[:IN_CLASS]->(ci)
  RETURN i, d, l
  UNION
  MATCH (ci:TrailClass {release: $release, side: 'identified', run: a.run})-[l:LINK]->(cd:TrailClass)
  WHERE $key IS NULL
  MATCH (i:Identified)-[:IN_CLASS]->(ci)
  MATCH (d:Deidentified)-[:IN_CLASS]->(cd)
  RETURN i, d, l
}
RETURN i.key AS identified, d.key AS deidentified, l.allowed AS allowed, l.vital AS vital, a.run AS run
ORDER BY deidentified, identified;
