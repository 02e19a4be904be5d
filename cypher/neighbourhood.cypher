// Neighbourhood of one element, for visualisation (Neo4j Browser, the app's graph view): the element's
// locations, its link edges and its re-identifications, one row per relationship.
// Output: source_label, source, relationship, target_label, target, properties.
//
// @param release  name of the release
// @param key  element key
// @param kind=identified  'identified' or 'deidentified'
// @param limit=200  maximum number of rows

// @name neighbourhood
CALL () {
  MATCH (e:Identified {release: $release, key: $key}) WHERE $kind = 'identified' RETURN e
  UNION
  MATCH (e:Deidentified {release: $release, key: $key}) WHERE $kind = 'deidentified' RETURN e
}
CALL (e) {
  MATCH (e)-[r:DISCLOSED_AT]->(n) RETURN r, n
  UNION ALL
  MATCH (e)-[r:LINK]-(n) RETURN r, n
  UNION ALL
  MATCH (e)-[r:REIDENTIFIED]-(n) RETURN r, n
  UNION ALL
  MATCH (e)<-[r:APPEARS_AS]-(n) RETURN r, n
}
RETURN labels(e)[0] AS source_label, e.key AS source, type(r) AS relationship, labels(n)[0] AS target_label,
       coalesce(n.key, n.name, n.id) AS target, properties(r) AS properties
ORDER BY relationship, target
LIMIT $limit;
