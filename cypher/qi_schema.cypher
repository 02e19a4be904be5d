// Quasi-identifier tables (graphlink qi load): constraints and indexes (Neo4j 5.x Community), idempotent.
// graphlink.store.qi applies it before every QI write; analysts may run it too:
//   graphlink cypher cypher/qi_schema.cypher --write
//
//   (:QITable {name, domain, rows, qi, source, fingerprint, status})
//   (:QIValue {domain, attribute, level, label})-[:GENERALIZES_TO]->(:QIValue)     the hierarchies (DGH/VGH)
//   (:QIRecord {table, row, key?, sensitive?})-[:HAS_VALUE]->(:QIValue {level: 0})   the records
//   (:QIRelease {run, table, algorithm, k, levels, prec, dm_star, ...})-[:OF]->(:QITable)
//   (:QIRecord)-[:RELEASED_AS {run}]->(:QIValue)      each released cell;  (:QIRecord)-[:SUPPRESSED_IN]->(:QIRelease)
//   (:QIRecord)-[:QI_LINK {run}]->(:QIRecord)          identified record -> compatible released record

CREATE CONSTRAINT qi_table_name IF NOT EXISTS
FOR (t:QITable) REQUIRE t.name IS UNIQUE;

// Tables of one domain share their hierarchy nodes, so records of two tables meet at the same values.
CREATE CONSTRAINT qi_value_key IF NOT EXISTS
FOR (v:QIValue) REQUIRE (v.domain, v.attribute, v.level, v.label) IS UNIQUE;

CREATE CONSTRAINT qi_record_key IF NOT EXISTS
FOR (r:QIRecord) REQUIRE (r.table, r.row) IS UNIQUE;

CREATE CONSTRAINT qi_release_run IF NOT EXISTS
FOR (r:QIRelease) REQUIRE r.run IS UNIQUE;

CREATE INDEX qi_record_table IF NOT EXISTS FOR (r:QIRecord) ON (r.table);
CREATE INDEX qi_release_table IF NOT EXISTS FOR (r:QIRelease) ON (r.table);
CREATE INDEX qi_released_run IF NOT EXISTS FOR ()-[x:RELEASED_AS]-() ON (x.run);
CREATE INDEX qi_link_run IF NOT EXISTS FOR ()-[x:QI_LINK]-() ON (x.run);
