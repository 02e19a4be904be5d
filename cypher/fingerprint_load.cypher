// Write a fingerprint plan and leak attributions (graphlink.store.fingerprint runs these statements in order;
// MERGE on the constraints of fingerprint_schema.cypher makes every plan write idempotent).
//
// @param plan  the plan id
// @param qi=[]  the quasi-identifier columns, in order
// @param rows=[]  batch of rows (see each statement)
// @param props={}  properties of the FingerprintPlan / Leak node
// @param leak=null  the leak id
// @param recipients=[]  names the leak is attributed to
// @param candidates=[]  the smallest candidate sets of an unattributed leak (list of lists of names)

// @name plan
MERGE (p:FingerprintPlan {id: $plan})
SET p += $props, p.qi = $qi, p.stored_at = datetime()
RETURN p.id AS plan;

// @name attributes
// One row per QI: {name, height}.
MATCH (p:FingerprintPlan {id: $plan})
UNWIND $rows AS a
MERGE (x:FPAttribute {plan: $plan, name: a.name})
SET x.height = a.height
MERGE (x)-[:IN_PLAN]->(p);

// @name generalizations
// One row per recipient's node: {pattern, levels, loss, k, suppressed_rows, prec, dm_star, height}.
MATCH (p:FingerprintPlan {id: $plan})
UNWIND $rows AS g
MERGE (n:Generalization {plan: $plan, pattern: g.pattern})
SET n.levels = g.levels, n.loss = g.loss, n.k = g.k, n.suppressed_rows = g.suppressed_rows, n.prec = g.prec,
    n.dm_star = g.dm_star, n.height = g.height
MERGE (n)-[:IN_PLAN]->(p)
WITH n, g
UNWIND range(0, size($qi) - 1) AS i
MATCH (a:FPAttribute {plan: $plan, name: $qi[i]})
MERGE (n)-[at:AT]->(a)
SET at.level = g.levels[i];

// @name recipients
// One row per recipient: {name, pattern, released_rows, distinguishing_rows}.
UNWIND $rows AS r
MATCH (g:Generalization {plan: $plan, pattern: r.pattern})
MERGE (x:Recipient {plan: $plan, name: r.name})
SET x.released_rows = r.released_rows, x.distinguishing_rows = r.distinguishing_rows
MERGE (x)-[:RECEIVED]->(g);

// @name leak
MATCH (p:FingerprintPlan {id: $plan})
CREATE (l:Leak {id: $leak, plan: $plan, at: datetime()})-[:OF_PLAN]->(p)
SET l += $props
WITH l
UNWIND $recipients AS name
MATCH (r:Recipient {plan: $plan, name: name})
MERGE (l)-[:ATTRIBUTED_TO]->(r);

// @name candidates
MATCH (l:Leak {id: $leak})
UNWIND range(0, size($candidates) - 1) AS i
UNWIND $candidates[i] AS name
MATCH (r:Recipient {plan: l.plan, name: name})
MERGE (l)-[:CANDIDATE {set: i}]->(r);
