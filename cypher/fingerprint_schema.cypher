// k-anonymity fingerprinting plans (graphlink fingerprint plan --store neo4j / fingerprint load): constraints and
// indexes (Neo4j 5.x Community), idempotent. graphlink.store.fingerprint applies it before every write.
//
//   (:FingerprintPlan {id, table_fingerprint, source, rows, qi, k, loss, max_suppression, recipients, ...})
//   (:FPAttribute {plan, name, height})-[:IN_PLAN]->(:FingerprintPlan)          one per quasi-identifier
//   (:Generalization {plan, pattern, levels, loss, k, suppressed_rows, prec, dm_star, height})-[:IN_PLAN]->(plan)
//   (:Generalization)-[:AT {level}]->(:FPAttribute)                              the node's level per QI
//   (:Recipient {plan, name, released_rows, distinguishing_rows})-[:RECEIVED]->(:Generalization)
//   (:Leak {id, plan, rows, exact, reason, pattern, ...})-[:ATTRIBUTED_TO]->(:Recipient)
//   (:Leak)-[:CANDIDATE {set}]->(:Recipient)          each smallest set that could explain an unattributed leak

CREATE CONSTRAINT fp_plan_id IF NOT EXISTS
FOR (p:FingerprintPlan) REQUIRE p.id IS UNIQUE;

CREATE CONSTRAINT fp_attribute_key IF NOT EXISTS
FOR (a:FPAttribute) REQUIRE (a.plan, a.name) IS UNIQUE;

CREATE CONSTRAINT fp_generalization_key IF NOT EXISTS
FOR (g:Generalization) REQUIRE (g.plan, g.pattern) IS UNIQUE;

CREATE CONSTRAINT fp_recipient_key IF NOT EXISTS
FOR (r:Recipient) REQUIRE (r.plan, r.name) IS UNIQUE;

CREATE CONSTRAINT fp_leak_id IF NOT EXISTS
FOR (l:Leak) REQUIRE l.id IS UNIQUE;

CREATE INDEX fp_recipient_plan IF NOT EXISTS FOR (r:Recipient) ON (r.plan);
CREATE INDEX fp_generalization_plan IF NOT EXISTS FOR (g:Generalization) ON (g.plan);
CREATE INDEX fp_leak_plan IF NOT EXISTS FOR (l:Leak) ON (l.plan);
