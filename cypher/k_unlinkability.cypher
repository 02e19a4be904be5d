// k-unlinkability violators (thesis Definition 19) from a written link graph (Store.write_link_graph), through its
// twin classes.  The union degree of an element is the number of its edges that lie in some maximum matching:
// the sizes of the classes its class reaches by allowed LINKs, plus its allowed edges to null trails (the
// withheld records, thesis §4.2.4: the class's null_degree).  It violates k-unlinkability when its union degree is
// below $k, unless none of those edges goes to a disclosed record (Definition 19 clause 2: it can never be
// linked).  Same decisions as graphlink.analysis.audit.audit(); one-to-many link graphs count possible partners.
// Cost: O(classes + class edges + violators).
// Output: side, element, union_degree, union_degree_non_null, run (sorted by union_degree, side, element).
//
// @param release  name of the release
// @param k=2  required minimum number of plausible partners
// @param run=null  run id of the link graph (null: the latest one of the release)

// @name k_unlinkability
MATCH (a:Analysis {release: $release, kind: 'link-graph'})
WHERE $run IS NULL OR a.run = $run
WITH a ORDER BY a.at DESC LIMIT 1
MATCH (c:TrailClass {release: $release, run: a.run})
CALL (c) {
  MATCH (c)-[l:LINK]-(o:TrailClass) WHERE l.allowed
  RETURN sum(o.size) AS non_null
}
WITH a, c, non_null, non_null + c.null_degree AS union_degree
WHERE non_null > 0 AND union_degree < $k
MATCH (x)-[:IN_CLASS]->(c)
RETURN c.side AS side, x.key AS element, union_degree, non_null AS union_degree_non_null, a.run AS run
ORDER BY union_degree, side, element;
