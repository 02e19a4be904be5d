// k-unlinkability violators (thesis Definition 19) from a written link graph (LINK edges, Store.write_link_graph):
// an element violates k-unlinkability when fewer than $k of its link edges are allowed, i.e. lie in some maximum
// matching (its union degree over the real, non-null link edges; the engine's audit adds the null-trail clause).
// Output: side, element, union_degree, run (sorted by union_degree, side, element).
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
WITH a, side, x, COUNT { (x)-[l:LINK]-() WHERE l.run = a.run AND l.allowed } AS union_degree
WHERE union_degree < $k
RETURN side, x.key AS element, union_degree, a.run AS run
ORDER BY union_degree, side, element;
