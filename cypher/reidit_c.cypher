// REIDIT-C in pure Cypher (thesis Algorithm 2, REIDentification of Individuals in Trails, complete version):
// group the trails of both tables by their signature (trails.cypher); an identified element and a de-identified
// element are re-identified when their common trail occurs exactly once among the identified trails and exactly
// once among the de-identified trails ("bitwise equivalent and unambiguous"). Meant for complete (unreserved)
// releases; on a reserved release a trail with '*' never equals a complete-side trail, so only unambiguous trails
// can match.   Cost: O(sum of degrees x |C|) plus a hash grouping.
// Output: identified, deidentified, trail, reason (sorted by identified).
//
// @param release  name of the release

// @name reidit_c
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
WITH kind, e.key AS key,
     reduce(t = '', s IN sizes | t + CASE WHEN s.loc IN present THEN '1'
                                          WHEN kind = reserved AND s.gi <> s.gd THEN '*'
                                          ELSE '0' END) AS trail
WITH trail, collect(CASE kind WHEN 'identified' THEN key END) AS ids,
            collect(CASE kind WHEN 'deidentified' THEN key END) AS dids
WHERE size(ids) = 1 AND size(dids) = 1
RETURN ids[0] AS identified, dids[0] AS deidentified, trail,
       'trail ' + trail + ' occurs exactly once among the identified and once among the de-identified trails'
         AS reason
ORDER BY identified;
