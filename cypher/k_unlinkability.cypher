// k-unlinkability violators (thesis Definition 19) from a written link graph (LINK edges, Store.write_link_graph).
// The union degree of an element is the number of its edges that lie in some maximum matching: its allowed LINK
// edges plus its allowed edges to null trails (the withheld records, thesis §4.2.4; written on the element as
// null_union_degree for that run). It violates k-unlinkability when its union degree is below $k, unless none of
// those edges goes to a disclosed record (Definition 19 clause 2: it can never be linked). Same decisions as
// graphlink.audit.audit().
// Output: side, element, union_degree, union_degree_non_null, run (sorted by union_degree, side, element).
//
// @param release  name of the release
// @param k=2  required minimum number of plausible partners
// @param run=null  run id of the link graph (null: the latest one of the release)

// @name k_unlinkability
MATCH (a:Analysis {release: $release, kind: 'link-graph'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
CALL () {
  MATCH (x:Identified {release: $release}) RETURN x, 'identified' AS side
  UNION ALL
  MATCH (x:Deidentified {release: $release}) RETURN x, 'deidentified' AS side
}
WITH a, side, x, COUNT { (x)-[l:LINK]-() WHERE l.run = a.run AND l.allowed } AS non_null
WITH a, side, x, non_null,
     non_null + CASE WHEN x.null_run = a.run THEN x.null_union_degree ELSE 0 END AS union_degree
WHERE non_null > 0 AND union_degree < $k
RETURN side, x.key AS element, union_degree, non_null AS union_degree_non_null, a.run AS run
ORDER BY union_degree, side, element;
