// Trails per element (FillTrails, thesis Algorithm 1), derived from the DISCLOSED_AT pattern alone.
//
// A trail has one character per location, in the release's location order (Location.index):
//   '1' the element was disclosed at that location;
//   '0' it was not, and its table is complete there;
//   '*' it was not, but it is on the reserved side and the two tables differ in size there (it may have withheld).
// Data model: the one the engine decided and Store.write_link_graph recorded on the Release node (model_reserved,
// model_multiplicity; see graphlink/core/model.py), else $reserved / $multiplicity, else the one-to-one size test:
// unreserved ('none') if |γ_c| = |ω_c| at every location c; de-identified reserved if every |ω_c| <= |γ_c|;
// identified reserved if every |γ_c| <= |ω_c|; otherwise 'mixed' (such trails have no '*').
// One-to-many data (several people per de-identified element, Appendix A): identified trails get '*' wherever the
// person is absent (no equality rule), de-identified trails 0.
// Output: kind, element, trail, reserved, multiplicity.   Cost: O(sum of degrees x |C|).
//
// @param release  name of the release
// @param kind=null  'identified' or 'deidentified' to return one side only
// @param reserved=null  override the reserved side ('none', 'identified', 'deidentified')
// @param multiplicity=null  override the multiplicity ('one-to-one', 'one-to-many')

// @name trails
MATCH (r:Release {name: $release})
MATCH (loc:Location {release: $release})
WITH r, loc ORDER BY loc.index
WITH r, collect({loc: loc,
                 gi: COUNT { (loc)<-[:DISCLOSED_AT]-(:Identified) },
                 gd: COUNT { (loc)<-[:DISCLOSED_AT]-(:Deidentified) }}) AS sizes
WITH sizes, coalesce($multiplicity, r.model_multiplicity, 'one-to-one') AS multiplicity,
     coalesce($reserved, r.model_reserved,
              CASE WHEN all(s IN sizes WHERE s.gi = s.gd) THEN 'none'
                   WHEN all(s IN sizes WHERE s.gd <= s.gi) THEN 'deidentified'
                   WHEN all(s IN sizes WHERE s.gi <= s.gd) THEN 'identified'
                   ELSE 'mixed' END) AS reserved
CALL () {
  MATCH (e:Identified {release: $release}) WHERE coalesce($kind, 'identified') = 'identified'
  RETURN e, 'identified' AS kind
  UNION ALL
  MATCH (e:Deidentified {release: $release}) WHERE coalesce($kind, 'deidentified') = 'deidentified'
  RETURN e, 'deidentified' AS kind
}
WITH sizes, reserved, multiplicity, kind, e, COLLECT { MATCH (e)-[:DISCLOSED_AT]->(l) RETURN l } AS present
RETURN kind, e.key AS element,
       reduce(t = '', s IN sizes | t + CASE WHEN s.loc IN present THEN '1'
                                            WHEN multiplicity = 'one-to-many' AND kind = 'identified' THEN '*'
                                            WHEN multiplicity = 'one-to-one' AND kind = reserved
                                                 AND s.gi <> s.gd THEN '*'
                                            ELSE '0' END) AS trail,
       reserved, multiplicity
ORDER BY kind DESC, element;
