// Locations ranked by how much they contribute to re-identification in a written run (REIDENTIFIED edges):
// for each location, the number of re-identified pairs whose identified element was disclosed there (the pair's
// trail has a 1 there, so the location's disclosure is part of the evidence), and that number as a share of the
// location's identified disclosures. See leave_one_location_out.cypher for the counterfactual view (pairs lost
// when the location is dropped).
// Output: location, reidentified, identified_here, share, method, run (sorted by reidentified, descending).
//
// @param release  name of the release
// @param run=null  run id of the re-identification (null: the latest one of the release)

// @name locations_by_contribution
MATCH (a:Analysis {release: $release, kind: 'reidentification'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
MATCH (loc:Location {release: $release})
WITH a, loc,
     COUNT { (loc)<-[:DISCLOSED_AT]-(:Identified)-[x:REIDENTIFIED]->(:Deidentified) WHERE x.run = a.run }
       AS reidentified,
     COUNT { (loc)<-[:DISCLOSED_AT]-(:Identified) } AS identified_here
RETURN loc.name AS location, reidentified, identified_here,
       CASE identified_here WHEN 0 THEN 0.0 ELSE round(toFloat(reidentified) / identified_here, 4) END AS share,
       a.method AS method, a.run AS run
ORDER BY reidentified DESC, share DESC, location;
