"""Apply a suppression to a release and certify it with the core's exact audit (thesis Definitions 19, 21).

The thesis's proof that its heuristics give k-unlinkable output has gaps (e.g. Lemma 13), so nothing is
taken on trust: :func:`certify` audits the suppressed release (union of all maximum matchings,
:func:`graphlink.analysis.audit.audit`) and withholds more records until the audit passes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from graphlink.diagnostics import Diagnostic
from graphlink.errors import ModelAssumptionError


def check_model(release: Any, multiplicity: str = "auto") -> None:
    """Definition 21 needs one-to-one data with Ω reserved to Γ (or unreserved): |ω_c| ≤ |γ_c| at every location.

    One-to-many releases (several people per de-identified element, thesis Appendix A; the data model is decided
    by :mod:`graphlink.core.model`) are refused: the Dedup family withholds de-identified records, which the
    one-to-many model leaves without a sound reading (keep-most protects them through the people's side,
    :mod:`graphlink.protect.keep_many`).

    Examples
    --------
    The thesis example is one-to-one, so it passes (a one-to-many release raises ``ModelAssumptionError``):

    >>> import graphlink as gl
    >>> from graphlink.protect import check_model
    >>> check_model(gl.thesis_example()) is None
    True
    """

    if multiplicity != "one-to-one" and reads_one_to_many(release, multiplicity):
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "unlink-one-to-many",
            "the Dedup methods protect one-to-one releases, but this release is read as one-to-many: several "
            "identified people share a de-identified element",
            remedy="protect it with keep-most, which withholds people's records instead, or state the multiplicity "
                   "as one-to-one if every de-identified element belongs to one person"))
    sizes = release.sizes()
    bad = sizes.index[sizes["deidentified"] > sizes["identified"]].tolist()
    if bad:
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "unlink-identified-withholding",
            "unlink suppresses de-identified records only, which needs every location "
            f"to disclose at most as many de-identified as identified records; violated at: "
            f"{', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''}",
            {"locations": [str(c) for c in bad[:50]], "count": len(bad)}))


def reads_one_to_many(release: Any, multiplicity: str, *, refuted_one_to_one: bool = False) -> bool:
    """Whether the release is read as one-to-many (the core's data-model decision with ``multiplicity``); a
    release whose reading the data cannot settle is refused in words.  ``refuted_one_to_one``: only when the data
    rule one-to-one out (by the element counts or the links), not when one-to-many is the tie-break of identified
    withholding, which fits both readings (keep-most keeps its one-to-one reading of the identified side there
    unless one-to-many is stated).  O(trails)."""
    from graphlink.core.trails import build_trails

    try:
        trails = build_trails(release, "auto", multiplicity)
        if refuted_one_to_one and trails.one_to_many:
            return trails.model.decided_by in ("counts", "links")
        return trails.one_to_many
    except ModelAssumptionError as exc:
        if "cannot tell" not in str(exc):
            raise
        raise ModelAssumptionError(diagnostic=Diagnostic(
            "unlink-side-undecided",
            "cannot tell whether this release is one-to-one (de-identified records withheld) or one-to-many "
            "(several people per de-identified element), and protection depends on it",
            remedy="state the multiplicity (one-to-one or one-to-many) to protect it")) from None


_reads_one_to_many = reads_one_to_many      # the name graphlink.protect.maxrisk imports


def apply_disclosure(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]]) -> Any:
    """The release with all identified rows and exactly the de-identified rows in ``disclosed``.

    Row order of the input is kept.  O(rows) with integer pair keys (no per-row Python objects).

    Examples
    --------
    Withholding every de-identified record keeps the 12 identified rows of Fig. 3.4 only:

    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> from graphlink.protect import apply_disclosure
    >>> len(release.frame), len(apply_disclosure(release, {"H1": [], "H2": [], "H3": [], "H4": []}).frame)
    (22, 12)
    """
    frame = release.frame
    deid = (frame["kind"] == "deidentified").to_numpy()
    locs = [c for c, es in disclosed.items() for _ in es]
    elems = [e for es in disclosed.values() for e in es]
    loc_index = pd.Index(pd.unique(frame["location"]))
    el_index = pd.Index(pd.unique(frame.loc[deid, "element"]))
    n_el = max(len(el_index), 1)
    row_key = (loc_index.get_indexer(frame.loc[deid, "location"]).astype(np.int64) * n_el
               + el_index.get_indexer(frame.loc[deid, "element"]).astype(np.int64))
    lk = loc_index.get_indexer(pd.Index(locs, dtype=object)).astype(np.int64)
    ek = el_index.get_indexer(pd.Index(elems, dtype=object)).astype(np.int64)
    ok = (lk >= 0) & (ek >= 0)
    keep = ~deid
    keep[np.flatnonzero(deid)] = np.isin(row_key, lk[ok] * n_el + ek[ok])
    return release.select(keep)


def audit_release(release: Any, k: int, reserved: str = "deidentified") -> tuple[Any, Any]:
    """Exact k-unlinkability audit of a release by the core (Definition 19): (AuditResult, EdgeClasses).

    Examples
    --------
    Fig. 3.4 as published: every person is a true love (union degree 1), so it is not 2-unlinkable:

    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> from graphlink.protect import audit_release
    >>> result, classes = audit_release(release, 2)
    >>> result.k_unlinkable, result.true_loves
    (False, 4)
    """
    # imported here, not at the top: the core's numba kernels load only when an audit runs
    from graphlink.analysis.audit import audit
    from graphlink.analysis.matching import classify_edges
    from graphlink.core.linkgraph import build_linkgraph
    from graphlink.core.trails import build_trails

    classes = classify_edges(build_linkgraph(build_trails(release, reserved, "one-to-one")))
    return audit(classes, k), classes


def _violating_records(result: Any, classes: Any) -> set[Hashable]:
    """De-identified elements to withhold so that the audit's violations go away.

    A de-identified violator is withheld itself; an identified violator loses every disclosed record it
    is linked to in the union of maximum matchings (it then only has null-trail edges, Def. 19 clause 2).
    """
    viol = result.violations
    out: set[Hashable] = set(viol.loc[viol["side"] == "deidentified", "element"].tolist())
    id_viol = viol.loc[viol["side"] == "identified", "element"].tolist()
    if id_viol:
        graph = classes.graph
        keys_m = graph.trails.identified.keys
        keys_n = graph.trails.deidentified.keys
        pos = {key: i for i, key in enumerate(keys_m)}
        allowed_n = _allowed_neighbours(classes, [pos[m] for m in id_viol if m in pos])
        out.update(keys_n[allowed_n].tolist())
        if not allowed_n.size:        # no real neighbour to cut: fall back to every neighbour
            for m in id_viol:
                if m in pos:
                    out.update(keys_n[graph.neighbours_of_identified(pos[m])].tolist())
    return out


def _allowed_neighbours(classes: Any, rows: list[int]) -> np.ndarray:
    """De-identified rows joined to identified ``rows`` by an allowed (max-matching) edge.

    Works on the twin classes of the link graph (an allowed class edge means every member pair is
    allowed, by the twin-swap symmetry).  O(E_class + |N|).
    """
    graph = classes.graph
    if not rows:
        return np.zeros(0, np.int64)
    cls_m = np.unique(graph.id_class[np.asarray(rows, np.int64)])
    sel = np.isin(graph.class_ei, cls_m) & np.asarray(classes.class_allowed, bool)
    return np.flatnonzero(np.isin(graph.de_class, np.unique(graph.class_ej[sel])))


def audit_counts(result: Any) -> dict[str, int]:
    """True loves and violations (per side) of an AuditResult, for the before/after report.  O(violations)."""
    viol = result.violations
    return {"true_loves": int(result.true_loves), "violations": int(len(viol)),
            "violations_deidentified": int((viol["side"] == "deidentified").sum()) if len(viol) else 0,
            "violations_identified": int((viol["side"] == "identified").sum()) if len(viol) else 0,
            "k_unlinkable": bool(result.k_unlinkable)}


def disclosed_of(release: Any) -> dict[Hashable, list[Hashable]]:
    """``{location: de-identified elements}`` of a release (every location, possibly empty).  O(rows).

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> from graphlink.protect import disclosed_of
    >>> disclosed_of(release)["H1"]
    ['actg', 'tgac']
    """
    return omega_sets(release.frame)


def certify(release: Any, disclosed: Mapping[Hashable, Iterable[Hashable]], k: int, *,
            max_rounds: int = 1000, progress: Callable[[str], None] | None = None
            ) -> tuple[Any, dict[Hashable, list[Hashable]], Any, list[Hashable], int]:
    """Certify a suppression of ``release`` with the core's exact audit, withholding more until it passes.

    ``disclosed`` must be a subset of the release's de-identified rows (Definition 21).  Loop: build the
    suppressed release, audit it (:func:`graphlink.analysis.audit.audit`, Definition 19); on failure withhold
    :func:`_violating_records` (or, if that is empty, everything left) and repeat.  Withholding every
    de-identified record leaves only null trails, which Definition 19 clause 2 always accepts, so the loop
    ends.  Returns (release, disclosed, AuditResult, records withheld by the repair, repair rounds).
    O(rounds · audit).

    Examples
    --------
    Certifying the release as published withholds records until the exact audit passes:

    >>> import graphlink as gl
    >>> release = gl.thesis_example()                         # Fig. 3.4: four hospitals, four people
    >>> from graphlink.protect import certify, disclosed_of
    >>> protected, disclosed, result, withheld, rounds = certify(release, disclosed_of(release), 2)
    >>> result.k_unlinkable, len(protected.frame) < len(release.frame)
    (True, True)
    """
    omega = omega_sets(release.frame)
    allowed = {(c, e) for c, es in omega.items() for e in es}
    disclosed = {c: list(dict.fromkeys(es)) for c, es in disclosed.items()}
    extra = [(c, e) for c, es in disclosed.items() for e in es if (c, e) not in allowed]
    if extra:
        raise ModelAssumptionError(f"a suppression may only withhold records, but {len(extra)} disclosed records "
                                   f"are not in the release (first: {extra[0]})")
    repair: list[Hashable] = []
    rounds = 0
    out = apply_disclosure(release, disclosed)
    while True:
        result, classes = audit_release(out, k)
        if result.k_unlinkable:
            return out, disclosed, result, repair, rounds
        rounds += 1
        remaining = {e for es in disclosed.values() for e in es}
        if not remaining:
            raise ModelAssumptionError(diagnostic=Diagnostic(
                "unlink-impossible",
                f"the audit reports {len(result.violations)} violations even with every de-identified record "
                f"withheld: this release cannot be made {k}-unlinkable by suppressing de-identified records",
                {"k": k, "violations": len(result.violations)}))
        drop = _violating_records(result, classes) & remaining
        if not drop or rounds > max_rounds:
            drop = remaining
        if progress:
            progress(f"audit failed ({len(result.violations)} violations); withholding {len(drop)} more records")
        repair.extend(sorted(drop, key=repr))
        disclosed = {c: [e for e in es if e not in drop] for c, es in disclosed.items()}
        out = apply_disclosure(release, disclosed)


def omega_sets(frame: pd.DataFrame) -> dict[Hashable, list[Hashable]]:
    """``{location: de-identified elements}`` of a long release table, every location present.  O(rows)."""
    part = frame[frame["kind"] == "deidentified"]
    sets: dict[Hashable, list[Hashable]] = {c: [] for c in pd.unique(frame["location"])}
    for c, grp in part.groupby("location", sort=False)["element"]:
        sets[c] = grp.tolist()
    return sets
