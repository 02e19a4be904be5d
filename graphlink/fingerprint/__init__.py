"""k-anonymity-based fingerprinting (Schrittwieser et al. 2011, "An Algorithm for k-anonymity-based
Fingerprinting" — **FP**): give every recipient of a table its own k-anonymous full-domain
generalization of (nearly) equal information loss, so that the generalization pattern of a single leaked record
names the recipient who leaked it.

* :mod:`~graphlink.fingerprint.plan` — FP §3.1: the middle-height lattice search with monotone (predictive)
  tagging, loss bounds, clustering by loss with FP's discretisation, one node per recipient, the
  fingerprint capacity (FP §4's upper bound Π nᵢ) and the loss spread; the plan file.
* :mod:`~graphlink.fingerprint.release` — each recipient's generalized table (checked against the planned table).
* :mod:`~graphlink.fingerprint.attribute` — FP §3.2: the pattern of a leak, exact match, else the smallest sets
  of recipients whose releases together explain it (collusion, FP Table 6), and why a leak cannot be attributed.

Built on :mod:`graphlink.qi` (hierarchies, the encoded table, the lattice, the loss measures): nothing of its own
below the planning level. See docs/fingerprint.md.
"""

from pathlib import Path

from graphlink.fingerprint.attribute import Attribution, attribute
from graphlink.fingerprint.plan import LOSSES, Discretisation, Plan, Recipient, make_plan, plan_from_nodes
from graphlink.fingerprint.release import release_frame, table_fingerprint

#: FP's worked examples: table1.csv, table6.csv and their hierarchies (graphlink/data/fingerprint)
EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "fingerprint"

__all__ = ["EXAMPLES", "LOSSES", "Attribution", "Discretisation", "Plan", "Recipient", "attribute", "make_plan",
           "plan_from_nodes", "release_frame", "table_fingerprint"]
