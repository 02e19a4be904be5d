// Neighbourhood of one element, for visualisation (Neo4j Browser, the app's graph view): the element's
// locations, its twin class and the classes that class links to (with their sizes: the written link graph is
// stored by class, Store.write_link_graph), element-level link edges where the release is small enough to have
// them, and its re-identifications; one row per relationship.  O(degree of the element's class).
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
  MATCH (e)-[r:IN_CLASS]->(n) RETURN r, n
  UNION ALL
  MATCH (e)-[:IN_CLASS]->(:TrailClass)-[r:LINK]-(n:TrailClass) RETURN r, n
  UNION ALL
  MATCH (e)-[r:LINK]-(n) RETURN r, n
  UNION ALL
  MATCH (e)-[r:REIDENTIFIED]-(n) RETURN r, n
  UNION ALL
  MATCH (e)<-[r:APPEARS_AS]-(n) RETURN r, n
}
RETURN labels(e)[0] AS source_label, e.key AS source, type(r) AS relationship, labels(n)[0] AS target_label,
       coalesce(n.key, n.name, n.id, n.trail) AS target,
       CASE WHEN n:TrailClass THEN r {.*, class_size: n.size} ELSE properties(r) END AS properties
ORDER BY relationship, target
LIMIT $limit;
