// Leave-one-location-out sensitivity of REIDIT-C (reidit_c.cypher): for every location c, how many pairs REIDIT-C
// still re-identifies when c's column is dropped from the trails, and how many it loses. Dropping a location can
// only merge trail groups, so reidentified_without <= reidentified_all; `lost` ranks the locations whose
// disclosures make most re-identifications possible. Dropping a column of the FillTrails matrices is exactly
// FillTrails on the release without that location (the '*' positions of the other locations do not change);
// elements disclosed only at c leave the release with it.
// Cost: O(|C| x (|M| + |N|) x |C|) memory and time: small and medium releases.
// Output: location, reidentified_all, reidentified_without, lost (sorted by lost, descending).
//
// @param release  name of the release

// @name leave_one_location_out
MATCH (loc:Location {release: $release})
WITH loc ORDER BY loc.index
WITH collect({loc: loc,
              gi: COUNT { (loc)<-[:DISCLOSED_AT]-(:Identified) },
              gd: COUNT { (loc)<-[:DISCLOSED_AT]-(:Deidentified) }}) AS sizes
WITH sizes,
     CASE WHEN all(s IN sizes WHERE s.gi = s.gd) THEN 'none'
          WHEN all(s IN sizes WHERE s.gd <= s.gi) THEN 'deidentified'
          WHEN all(s IN sizes WHERE s.gi <= s.gd) THEN 'identified'
          ELSE 'mixed' END AS reserved
CALL () {
  MATCH (e:Identified {release: $release}) RETURN e, 'identified' AS kind
  UNION ALL
  MATCH (e:Deidentified {release: $release}) RETURN e, 'deidentified' AS kind
}
WITH sizes, reserved, kind, e, COLLECT { MATCH (e)-[:DISCLOSED_AT]->(l) RETURN l } AS present
WITH sizes, collect({kind: kind,
                     ch: [s IN sizes | CASE WHEN s.loc IN present THEN '1'
                                            WHEN kind = reserved AND s.gi <> s.gd THEN '*'
                                            ELSE '0' END]}) AS rows
UNWIND range(-1, size(sizes) - 1) AS c          // c = -1: all locations kept
UNWIND rows AS r
WITH c, sizes, r.kind AS kind, CASE c WHEN -1 THEN r.ch ELSE r.ch[0..c] + r.ch[c + 1..] END AS signature
WHERE '1' IN signature                          // an element disclosed only at c is not in the reduced release
WITH c, sizes, signature, count(CASE kind WHEN 'identified' THEN 1 END) AS ni,
     count(CASE kind WHEN 'deidentified' THEN 1 END) AS nd
WITH c, sizes, sum(CASE WHEN ni = 1 AND nd = 1 THEN 1 ELSE 0 END) AS reidentified
ORDER BY c
WITH sizes, collect(reidentified) AS counts
UNWIND range(0, size(sizes) - 1) AS c
RETURN sizes[c].loc.name AS location, counts[0] AS reidentified_all, counts[c + 1] AS reidentified_without,
       counts[0] - counts[c + 1] AS lost
ORDER BY lost DESC, location;
