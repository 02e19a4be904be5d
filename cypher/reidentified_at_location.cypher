// Elements re-identified at a location: the pairs of a written re-identification run (REIDENTIFIED edges, see
// `graphlink reidentify ... --store neo4j` / Store.write_reidentification) whose identified element was
// disclosed at $location, with whether the de-identified element was disclosed there too (it may have withheld).
// Output: identified, deidentified, deidentified_here, method, reason, run.
//
// @param release  name of the release
// @param location  name of the location
// @param run=null  run id of the re-identification (null: the latest one of the release)

// @name reidentified_at_location
MATCH (a:Analysis {release: $release, kind: 'reidentification'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
MATCH (loc:Location {release: $release, name: $location})<-[:DISCLOSED_AT]-(i:Identified)
      -[x:REIDENTIFIED]->(d:Deidentified)
WHERE x.run = a.run
RETURN i.key AS identified, d.key AS deidentified, EXISTS { (d)-[:DISCLOSED_AT]->(loc) } AS deidentified_here,
       x.method AS method, x.reason AS reason, a.run AS run
ORDER BY identified;
