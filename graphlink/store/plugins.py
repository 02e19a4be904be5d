"""Plugin procedures and functions (APOC): which families the Cypher console may call where a server has them, and
which it never calls, whatever a setting says (docs/security.md, "The Cypher console").

Both the console's check (:mod:`graphlink.store.guard`) and the local server's
``dbms.security.procedures.allowlist`` (:func:`graphlink.store.server.procedure_allowlist`) use these lists, so a
family refused here is neither called by the console nor registered by the project's server. O(families) per
name.
"""

from __future__ import annotations

__all__ = ["NEVER", "PLUGIN_FUNCTIONS", "never_allowed"]

#: plugin function namespaces allowed where a server has them (the project's own server loads none): APOC's pure
#: helpers on values, which read no file, URL or other session and run no Cypher text
PLUGIN_FUNCTIONS = ("apoc.coll.", "apoc.map.", "apoc.text.", "apoc.math.", "apoc.number.", "apoc.bitwise.",
                    "apoc.agg.", "apoc.date.", "apoc.temporal.", "apoc.label.", "apoc.node.", "apoc.rel.",
                    "apoc.any.", "apoc.scoring.", "apoc.hashing.")
#: function and procedure families refused whatever an allowlist says: they run text as Cypher (``apoc.cypher``,
#: ``apoc.periodic``, ``apoc.do``, ``apoc.trigger``, ``apoc.custom``), read or write files and URLs
#: (``apoc.load``, ``apoc.import``, ``apoc.export``, ``apoc.util``, ``apoc.bolt``, ``apoc.log``), or reach other
#: databases and the system graph (``apoc.systemdb``, ``apoc.cypher``)
NEVER = ("apoc.cypher.", "apoc.periodic.", "apoc.load.", "apoc.import.", "apoc.export.", "apoc.util.", "apoc.do.",
         "apoc.trigger.", "apoc.custom.", "apoc.bolt.", "apoc.log.", "apoc.systemdb.", "apoc.when", "apoc.case")


def never_allowed(name: str) -> bool:
    """``name`` (a procedure or function) belongs to a family of :data:`NEVER`, in any letter case or spacing.

    Examples
    --------
    >>> from graphlink.store.plugins import never_allowed
    >>> never_allowed("apoc.load.json"), never_allowed("APOC . Cypher . run"), never_allowed("apoc.text.join")
    (True, True, False)
    """
    low = ".".join(p.strip() for p in name.lower().split("."))
    return low.startswith(NEVER)
