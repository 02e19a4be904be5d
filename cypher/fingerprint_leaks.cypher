// Leaks attributed against a stored fingerprint plan (graphlink fingerprint attribute … --store neo4j): who each
// was attributed to (exact match or the smallest colluding set), or, when it could not be attributed, why and
// the candidate sets. Newest first. Cost O(leaks + their edges).
// Output: leak, source, rows, exact, recipients, reason, candidates ([{set, members}]), at.
//
// @param plan  the plan id

// @name leaks
MATCH (l:Leak {plan: $plan})
OPTIONAL MATCH (l)-[:ATTRIBUTED_TO]->(r:Recipient)
WITH l, collect(r.name) AS recipients
OPTIONAL MATCH (l)-[c:CANDIDATE]->(s:Recipient)
WITH l, recipients, c.set AS set, collect(s.name) AS members
WITH l, recipients, [x IN collect({set: set, members: members}) WHERE x.set IS NOT NULL] AS candidates
RETURN l.id AS leak, l.source AS source, l.rows AS rows, l.exact AS exact, recipients, l.reason AS reason,
       candidates, toString(l.at) AS at
ORDER BY at DESC;
