// People most likely to be re-identified: each person's most likely record under the pair probabilities written
// with the link graph (graphlink risk RELEASE --store neo4j; docs/risk.md): a pair's probability is its share of
// the assignments of people to records consistent with the release, exact or estimated with a 95 % half-width.
// Read through the twin classes (one LINK per pair of classes; every member pair shares its probability), so the
// cost is O(the people's classes and their LINKs).  A tie among twin records is shown as the record with the
// smallest key and the number of tied records.  Needs a link graph written with probabilities: without them it
// returns no rows.
// Output: identified, deidentified, probability, exact, error, tied, run (most likely first, then by person).
//
// @param release  name of the release
// @param min=0.5  only people whose most likely record has at least this probability
// @param limit=100  at most this many people
// @param run=null  run id of the link graph (null: the latest one of the release)

// @name most_likely_reidentified
MATCH (a:Analysis {release: $release, kind: 'link-graph'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
MATCH (x:TrailClass {release: $release, side: 'identified', run: a.run})-[l:LINK]->(y:TrailClass)
WHERE l.probability IS NOT NULL AND l.probability > 0 AND l.probability >= $min
WITH a, x, l, y ORDER BY l.probability DESC, y.cid
WITH a, x, head(collect({l: l, y: y})) AS best
CALL (best) {
  MATCH (d:Deidentified)-[:IN_CLASS]->(c)
  WHERE c = best.y
  RETURN min(d.key) AS record
}
MATCH (i:Identified)-[:IN_CLASS]->(x)
RETURN i.key AS identified, record AS deidentified, best.l.probability AS probability,
       best.l.probability_exact AS exact, best.l.probability_error AS error, best.y.size AS tied, a.run AS run
ORDER BY probability DESC, identified
LIMIT $limit;
