// The pattern-list of a stored fingerprint plan (FP §3.1 step 9): every recipient, the generalization it
// received (its level per quasi-identifier), that release's loss and actual k, and how many of its rows name it
// alone. Lowest loss first. One row per recipient; cost O(R·m) for R recipients and m QIs. The same as
// `graphlink fingerprint plan`'s pattern-list (the plan file is the source of truth).
// Output: recipient, pattern, levels (["qi=level", …]), loss, k, suppressed_rows, distinguishing_rows.
//
// @param plan  the plan id (graphlink fingerprint plan … --store neo4j prints it)

// @name recipients
MATCH (r:Recipient {plan: $plan})-[:RECEIVED]->(g:Generalization)-[at:AT]->(a:FPAttribute)
WITH r, g, collect(a.name + '=' + toString(at.level)) AS levels
RETURN r.name AS recipient, g.pattern AS pattern, levels, g.loss AS loss, g.k AS k,
       g.suppressed_rows AS suppressed_rows, r.distinguishing_rows AS distinguishing_rows
ORDER BY loss, recipient;
