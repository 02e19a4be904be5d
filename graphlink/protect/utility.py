"""Utility of a suppressed release (thesis §7.2.1, eqs. 7.1 and 7.2)."""

from __future__ import annotations

from graphlink.protect.instance import Sets


def utility(omega: Sets, omega_prime: Sets) -> dict[str, int]:
    """Utility metrics of §7.2.1 for original Ω and disclosed Ω'.

    ``withheld`` = |∪ω_c| − |∪ω'_c| (eq. 7.1, deduplication), ``locations_empty`` = |{c : ω'_c = ∅}|
    (eq. 7.2), ``disclosed`` = |∪ω'_c| (distinct de-identified elements still disclosed),
    ``locations_disclosing`` = |C| − eq. 7.2, and record-level (location, element) counts.  O(rows).

    Examples
    --------
    Of three records, only x is still disclosed; location B discloses nothing:

    >>> from graphlink.protect import utility
    >>> u = utility({"A": {"x", "y"}, "B": {"z"}}, {"A": ["x"], "B": []})
    >>> u["disclosed"], u["withheld"], u["locations_empty"]
    (1, 2, 1)
    """
    all_e = set().union(*[set(v) for v in omega.values()]) if omega else set()
    dis_e = set().union(*[set(v) for v in omega_prime.values()]) if omega_prime else set()
    locs = set(omega) | set(omega_prime)
    empty = sum(1 for c in locs if not list(omega_prime.get(c, ())))
    rows_before = sum(len(set(v)) for v in omega.values())
    rows_after = sum(len(set(v)) for v in omega_prime.values())
    return {"disclosed": len(dis_e), "withheld": len(all_e) - len(dis_e), "total": len(all_e),
            "locations": len(locs), "locations_disclosing": len(locs) - empty, "locations_empty": empty,
            "rows_disclosed": rows_after, "rows_withheld": rows_before - rows_after}
