// Load one release (long format: location, kind, element) into the graph model. Idempotent: every write is a
// MERGE on a uniqueness constraint, so loading the same rows twice changes nothing and an interrupted load
// completes when it is run again. Store.load_release() runs these statements in order, batching the $rows /
// $keys lists (UNWIND) in transactions with retry; they are usable from cypher-shell too. A new release on the
// project's empty local server is bulk-imported instead (graphlink/store/bulk.py): the same graph, the same
// properties, with load_method 'bulk-import' instead of 'unwind'.
//
// @param release  name of the release (every node is scoped to it)
// @param source=null  where the release came from (file path), kept on the Release node
// @param fingerprint=null  content hash of the release rows (sha256), kept on the Release node
// @param locations=[]  list of {name, index}: the release's locations in their order
// @param elements=[]  list of {key, at}: an element and the indexes of the locations it was disclosed at
// @param truth=[]  list of {id, identified, deidentified} (statement truth)

// @name release
MERGE (r:Release {name: $release})
  ON CREATE SET r.created_at = datetime()
SET r.status = 'loading', r.source = $source, r.fingerprint = $fingerprint, r.load_method = 'unwind'
RETURN r.name AS release;

// @name locations
MATCH (r:Release {name: $release})
UNWIND $locations AS loc
MERGE (l:Location {release: $release, name: loc.name})
SET l.index = loc.index
MERGE (r)-[:HAS_LOCATION]->(l)
RETURN count(l) AS locations;

// @name elements_identified
// One row per element with the positions (Location.index) of the locations it was disclosed at: one index
// seek per element instead of one per disclosure. MERGE: idempotent, completes an interrupted load.
MATCH (loc:Location {release: $release})
WITH loc ORDER BY loc.index
WITH collect(loc) AS locs
UNWIND $elements AS el
MERGE (e:Identified {release: $release, key: el.key})
WITH e, el, locs
UNWIND el.at AS i
WITH e, locs[i] AS l
MERGE (e)-[:DISCLOSED_AT]->(l)
RETURN count(*) AS n;

// @name elements_deidentified
MATCH (loc:Location {release: $release})
WITH loc ORDER BY loc.index
WITH collect(loc) AS locs
UNWIND $elements AS el
MERGE (e:Deidentified {release: $release, key: el.key})
WITH e, el, locs
UNWIND el.at AS i
WITH e, locs[i] AS l
MERGE (e)-[:DISCLOSED_AT]->(l)
RETURN count(*) AS n;

// @name create_identified
// Fast path, used only when the Release node did not exist before this load (nothing of it is in the graph):
// CREATE skips the existence checks; the uniqueness constraints still guard against duplicates.
MATCH (loc:Location {release: $release})
WITH loc ORDER BY loc.index
WITH collect(loc) AS locs
UNWIND $elements AS el
CREATE (e:Identified {release: $release, key: el.key})
WITH e, el, locs
UNWIND el.at AS i
WITH e, locs[i] AS l
CREATE (e)-[:DISCLOSED_AT]->(l)
RETURN count(*) AS n;

// @name create_deidentified
MATCH (loc:Location {release: $release})
WITH loc ORDER BY loc.index
WITH collect(loc) AS locs
UNWIND $elements AS el
CREATE (e:Deidentified {release: $release, key: el.key})
WITH e, el, locs
UNWIND el.at AS i
WITH e, locs[i] AS l
CREATE (e)-[:DISCLOSED_AT]->(l)
RETURN count(*) AS n;

// @name truth
// USING INDEX SEEK keeps both lookups seeks: without it Neo4j 5.26 planned one of them as a scan of the whole
// (release, key) index filtered per row, |truth| × |elements| index entries per batch (8 of the 10 s of a
// 1e5-row load, and quadratic in the release).
UNWIND $truth AS t
MERGE (x:Entity {release: $release, id: t.id})
WITH x, t
OPTIONAL MATCH (i:Identified {release: $release, key: t.identified})
  USING INDEX SEEK i:Identified(release, key)
OPTIONAL MATCH (d:Deidentified {release: $release, key: t.deidentified})
  USING INDEX SEEK d:Deidentified(release, key)
FOREACH (_ IN CASE WHEN i IS NULL THEN [] ELSE [1] END | MERGE (x)-[:APPEARS_AS]->(i))
FOREACH (_ IN CASE WHEN d IS NULL THEN [] ELSE [1] END | MERGE (x)-[:APPEARS_AS]->(d));

// @name finalize
// Per-location sizes |γ_c| (identified) and |ω_c| (de-identified), release totals and the reserved direction
// (same rule as graphlink.core.trails.build_trails(reserved="auto")), then mark the release loaded.
MATCH (r:Release {name: $release})
CALL (r) {
  MATCH (l:Location {release: r.name})
  SET l.identified = COUNT { (l)<-[:DISCLOSED_AT]-(:Identified) },
      l.deidentified = COUNT { (l)<-[:DISCLOSED_AT]-(:Deidentified) }
  RETURN collect(l) AS locs
}
SET r.locations = size(locs),
    r.identified = COUNT { (:Identified {release: r.name}) },
    r.deidentified = COUNT { (:Deidentified {release: r.name}) },
    r.rows = reduce(n = 0, l IN locs | n + l.identified + l.deidentified),
    r.reserved = CASE WHEN all(l IN locs WHERE l.identified = l.deidentified) THEN 'none'
                      WHEN all(l IN locs WHERE l.deidentified <= l.identified) THEN 'deidentified'
                      WHEN all(l IN locs WHERE l.identified <= l.deidentified) THEN 'identified'
                      ELSE 'mixed' END,
    r.entities = COUNT { (:Entity {release: r.name}) },
    r.status = 'loaded',
    r.loaded_at = datetime()
RETURN r.name AS release, r.rows AS rows, r.locations AS locations, r.identified AS identified,
       r.deidentified AS deidentified, r.reserved AS reserved;
