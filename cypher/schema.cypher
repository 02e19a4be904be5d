// graphlink graph model: uniqueness constraints and indexes (Neo4j 5.x Community).
//
// Idempotent (IF NOT EXISTS): Store.apply_schema() runs it before every load; analysts may run it too:
//   graphlink cypher cypher/schema.cypher --write
// Community Edition has one user database, so every node carries its release name and the constraints are
// composite (release, key): several releases live side by side without clashing.

// One node per release.
CREATE CONSTRAINT release_name IF NOT EXISTS
FOR (r:Release) REQUIRE r.name IS UNIQUE;

// One node per location of a release (index = position in the release's location order).
CREATE CONSTRAINT location_key IF NOT EXISTS
FOR (l:Location) REQUIRE (l.release, l.name) IS UNIQUE;

// One node per identified element (a row of the identified table, e.g. a patient id) of a release.
CREATE CONSTRAINT identified_key IF NOT EXISTS
FOR (e:Identified) REQUIRE (e.release, e.key) IS UNIQUE;

// One node per de-identified element (e.g. a DNA sample id) of a release.
CREATE CONSTRAINT deidentified_key IF NOT EXISTS
FOR (e:Deidentified) REQUIRE (e.release, e.key) IS UNIQUE;

// Optional simulated ground truth: one node per entity, linked to its identified/de-identified elements.
CREATE CONSTRAINT entity_key IF NOT EXISTS
FOR (t:Entity) REQUIRE (t.release, t.id) IS UNIQUE;

// One node per twin class of a written link graph (identical trails on one side; Store.write_link_graph).
CREATE CONSTRAINT trailclass_key IF NOT EXISTS
FOR (c:TrailClass) REQUIRE (c.release, c.side, c.cid) IS UNIQUE;

// One node per analysis run (link graph, re-identification, audit): provenance of written results.
CREATE CONSTRAINT analysis_run IF NOT EXISTS
FOR (a:Analysis) REQUIRE a.run IS UNIQUE;

// One load at a time per release name: a load creates its lock node first, and a second one cannot
// (Store.load_lock; the node is deleted when the load ends).
CREATE CONSTRAINT load_lock IF NOT EXISTS
FOR (l:LoadLock) REQUIRE l.release IS UNIQUE;

// "All elements of release X" lookups (the composite constraint indexes need both properties).
CREATE INDEX identified_release IF NOT EXISTS FOR (e:Identified) ON (e.release);
CREATE INDEX deidentified_release IF NOT EXISTS FOR (e:Deidentified) ON (e.release);
CREATE INDEX location_release IF NOT EXISTS FOR (l:Location) ON (l.release);
CREATE INDEX analysis_release IF NOT EXISTS FOR (a:Analysis) ON (a.release, a.kind);
CREATE INDEX trailclass_release IF NOT EXISTS FOR (c:TrailClass) ON (c.release);

// Results of one run. LINK edges have no run index: every query reaches a run's LINKs from its TrailClass
// nodes (which carry the run) or from the release's Identified nodes, and on a low-entropy release the index
// held millions of entries of one value, which took longer to build after a bulk import than the import's
// relationship linking.
CREATE INDEX reidentified_run IF NOT EXISTS FOR ()-[r:REIDENTIFIED]-() ON (r.run);
