// Equivalence classes of a QI table (graphlink qi load): at any full-domain lattice node, given as a map
// $levels from attribute to generalization level (attributes not in the map stay at level 0), walking the
// hierarchy upward from each record's values. The smallest classes first: every class smaller than $k is a
// k-anonymity violation, and its rows are the records in it.
//
// @param table  name of the QI table
// @param levels={}  map attribute -> level, e.g. {"BirthDate": 2}
// @param k=2  the protection level to flag
// @param limit=50  how many classes to return

// @name classes
MATCH (r:QIRecord {table: $table})-[:HAS_VALUE]->(v:QIValue)-[:GENERALIZES_TO*0..]->(g:QIValue)
WHERE g.level = coalesce($levels[v.attribute], 0)
WITH r, g ORDER BY g.attribute
WITH r, collect(g.attribute + '=' + g.label) AS class
WITH class, count(r) AS size, collect(r.row) AS rows
RETURN class, size, size < $k AS below_k, rows[0..20] AS rows
ORDER BY size, class
LIMIT $limit;
