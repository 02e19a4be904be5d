// Link edges computed in Cypher (thesis Definitions 6/17): identified m links de-identified n iff at every
// location the reserved side's value is '*' or equals the other side's value (trails per trails.cypher, with the
// same data model: the engine's recorded on the Release node, else the one-to-one size test).
//
// With x on the reserved side (de-identified when unreserved: the relation is then trail equality) and y on the
// complete side, writing P(x), Q(y) for the locations where they were disclosed and E for the locations where both
// tables have the same size, x links y iff  P(x) ⊆ Q(y)  and  (Q(y) \ P(x)) ∩ E = ∅.
// Candidates y are taken from x's rarest location only, then checked: fine for small and medium releases
// (cost ~ sum over x of |rarest location| x degree). Large releases: graphlink's engine (graphlink.core.linkgraph).
// One-to-many data: x is the identified side and E is empty (no equality rule).
// Output: identified, deidentified (sorted by de-identified, then identified); empty for a 'mixed' release.
//
// @param release  name of the release

// @name link_edges
MATCH (r:Release {name: $release})
MATCH (loc:Location {release: $release})
WITH r, loc ORDER BY loc.index
WITH r, collect({loc: loc,
                 gi: COUNT { (loc)<-[:DISCLOSED_AT]-(:Identified) },
                 gd: COUNT { (loc)<-[:DISCLOSED_AT]-(:Deidentified) }}) AS sizes
WITH sizes, coalesce(r.model_multiplicity, 'one-to-one') AS multiplicity,
     coalesce(r.model_reserved,
              CASE WHEN all(s IN sizes WHERE s.gi = s.gd) THEN 'none'
                   WHEN all(s IN sizes WHERE s.gd <= s.gi) THEN 'deidentified'
                   WHEN all(s IN sizes WHERE s.gi <= s.gd) THEN 'identified'
                   ELSE 'mixed' END) AS reserved
WHERE reserved <> 'mixed'
WITH sizes, CASE multiplicity WHEN 'one-to-many' THEN [] ELSE [s IN sizes WHERE s.gi = s.gd | s.loc] END AS equal,
     CASE WHEN reserved = 'identified' OR multiplicity = 'one-to-many' THEN 'identified'
          ELSE 'deidentified' END AS xside
CALL (xside) {
  MATCH (x:Deidentified {release: $release}) WHERE xside = 'deidentified' RETURN x
  UNION ALL
  MATCH (x:Identified {release: $release}) WHERE xside = 'identified' RETURN x
}
WITH sizes, equal, xside, x, COLLECT { MATCH (x)-[:DISCLOSED_AT]->(l) RETURN l } AS p
// x's location with the fewest complete-side elements
WITH equal, xside, x, p,
     [s IN sizes WHERE s.loc IN p | {loc: s.loc, n: CASE xside WHEN 'identified' THEN s.gd ELSE s.gi END}] AS ps
WITH equal, xside, x, p, reduce(b = head(ps), s IN ps | CASE WHEN s.n < b.n THEN s ELSE b END).loc AS rarest
MATCH (rarest)<-[:DISCLOSED_AT]-(y)
WHERE (xside = 'deidentified' AND y:Identified) OR (xside = 'identified' AND y:Deidentified)
WITH equal, xside, x, p, y, COLLECT { MATCH (y)-[:DISCLOSED_AT]->(l) RETURN l } AS q
WHERE all(l IN p WHERE l IN q) AND none(l IN q WHERE l IN equal AND NOT l IN p)
WITH CASE xside WHEN 'identified' THEN x.key ELSE y.key END AS identified,
     CASE xside WHEN 'identified' THEN y.key ELSE x.key END AS deidentified
RETURN identified, deidentified
ORDER BY deidentified, identified;
