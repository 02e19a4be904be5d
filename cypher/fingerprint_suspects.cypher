// Who could have leaked data of a given granularity (FP §3.2): $levels maps each quasi-identifier to the finest
// level seen in the leak (graphlink fingerprint attribute prints it as "pattern"; a QI not in the map counts as
// suppressed). A recipient can produce the leak if it received every QI at that level or finer (it can only
// generalize further); "exact" when its levels are those of the leak. Exact matches first. The smallest
// colluding sets are computed by graphlink fingerprint attribute (a set cover), not here: prefer the library
// for a verdict; this query answers "who could have" in the graph. Cost O(R·m).
// Output: recipient, pattern, exact.
//
// @param plan  the plan id
// @param levels={}  map QI -> finest level seen in the leak, e.g. {"sex": 0, "birthdate": 2}

// @name suspects
MATCH (r:Recipient {plan: $plan})-[:RECEIVED]->(g:Generalization)-[at:AT]->(a:FPAttribute)
WITH r, g, collect({name: a.name, level: at.level, seen: coalesce($levels[a.name], a.height)}) AS qi
WHERE all(x IN qi WHERE x.level <= x.seen)
RETURN r.name AS recipient, g.pattern AS pattern, all(x IN qi WHERE x.level = x.seen) AS exact
ORDER BY exact DESC, recipient;
