"""``secure_unlink``: run STRANON on a Release and return the protected Release plus a report.

This is the entry point ``graphlink unlink --secure`` calls. Each location's private inputs (its γ_c and
ω_c) come from the release's long table; the parties then run Alg. 11 exactly as in ``secure-demo``
(in-process by default, or as loopback processes with ``processes=True``). The returned release holds every
identified row and the de-identified rows that the locations decrypted and disclosed; the caller (the
``unlink`` command) re-certifies it with the core's exact audit.

If the release carries ground truth, the report also evaluates contributor k-unlinkability (Def. 25) for
every location with its own private pairs τ_c = {(m, α(m)) : m ∈ γ_c, α(m) ∈ ω_c} — the knowledge a
location really has — and the central view (Def. 24) the sTTP could form.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from graphlink import registry
from graphlink.errors import ReleaseError
from graphlink.secure.protocol import StranonResult, run_stranon
from graphlink.secure.unlinkability import contributor_view, external_view


class SecureUnlinkOutput(NamedTuple):
    """(release, report); also usable as ``out.release`` / ``out.report``.

    Examples
    --------
    Returned by :func:`secure_unlink`; unpacks as a pair:

    >>> import graphlink as gl
    >>> from graphlink.secure import secure_unlink
    >>> protected, report = secure_unlink(gl.thesis_example(), 2, "greedy-dedup")
    >>> report["k"], report["method"]
    (2, 'greedy-dedup-secure')
    """

    release: Any
    report: dict


def release_sets(release) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """Locations and per-location identified / de-identified element lists (first-appearance order)."""
    f = release.frame
    locs = list(release.locations)
    gamma = {c: [] for c in locs}
    omega = {c: [] for c in locs}
    for loc, kind, el in zip(f["location"], f["kind"], f["element"], strict=True):
        (gamma if kind == "identified" else omega)[loc].append(str(el))
    return locs, gamma, omega


def private_pairs(release, gamma, omega) -> dict[str, dict[str, str]] | None:
    """τ_c for every location from ``release.truth`` (None when the release has no truth)."""
    if release.truth is None:
        return None
    truth = dict(zip(release.truth["identified"].astype(str), release.truth["deidentified"].astype(str),
                     strict=True))
    out = {}
    for c in gamma:
        om = set(omega[c])
        out[c] = {m: truth[m] for m in gamma[c] if m in truth and truth[m] in om}
    return out


def secure_unlink(release, k: int, method: str, seed: int | None = None, *, processes: bool = False,
                  alpha: int = 1, beta: int = 2, locking: bool = True, dc_size: int = 8,
                  contributor_veto: bool = True, evaluate_limit: int = 4_000_000) -> SecureUnlinkOutput:
    """Run STRANON (Alg. 11) with Greedy-Dedup-Secure (Alg. 12) or Force-Dedup-Secure (Alg. 14).

    ``method``: greedy-dedup | force-dedup (or their ``-secure`` names). ``seed`` is accepted for the signature
    shared with :func:`graphlink.protect.unlink` and not used: the protocol's shuffles, dummies, keys and
    tie-breaks come from the OS CSPRNG, so no party can predict them (docs/secure.md, "Randomness").
    Raises ``ReleaseError`` for other methods (no secure variant) and if the protocol aborted (an integrity
    check fired).

    Each location's private pairing τ_c (which identity owns which of its de-identified values) comes from
    ``release.truth`` when present — a location knows its own database — and enables the contributor veto
    round (``contributor_veto``), which makes contributor k-unlinkability (Def. 25) hold exactly instead of
    relying on Contributor-Clean's pairwise bound (Theorem 8), which is not sufficient. Complexity: see
    ``run_stranon``; the evaluation views are O(|M|·|N|·|C|/64 + E√V) and skipped above ``evaluate_limit``
    (|M|·|N|).

    Examples
    --------
    The four hospitals of the thesis (Fig. 3.4), protected at k = 2 without any party seeing another's data; the
    protocol's randomness is not seeded, so the example shows what holds on every run:

    >>> import graphlink as gl
    >>> from graphlink.secure import secure_unlink
    >>> out = secure_unlink(gl.thesis_example(), 2, "greedy-dedup")
    >>> out.report["aborted"], out.report["views"]["external"]["k_unlinkable"]
    (None, True)
    >>> len(out.release.frame) < len(gl.thesis_example().frame)      # some de-identified records withheld
    True
    """
    base = method.removesuffix("-secure")
    if base not in registry.secure_names():
        raise ReleaseError(f"the secure protocol supports {' and '.join(registry.secure_names())}, not "
                           f"{method!r}")
    if k < 1:
        raise ReleaseError(f"k must be at least 1, got {k}")
    locs, gamma, omega = release_sets(release)
    data = {c: (gamma[c], omega[c]) for c in locs}
    pairs = private_pairs(release, gamma, omega)
    veto = bool(contributor_veto and pairs is not None)
    res: StranonResult = run_stranon(data, k, f"{base}-secure", alpha=alpha, beta=beta,
                                     locking=locking, dc_size=dc_size, processes=processes, pairs=pairs,
                                     contributor_veto=veto)
    if res.aborted:
        raise ReleaseError(f"secure protocol aborted: {res.aborted}; detections: {'; '.join(res.detections)}")
    keep = {(c, e) for c, v in res.disclosed.items() for e in v}
    f = release.frame
    mask = (f["kind"] == "identified") | pd.Series(
        [(loc, el) in keep for loc, el in zip(f["location"], f["element"], strict=True)], index=f.index)
    out_release = release.with_frame(f.loc[mask].reset_index(drop=True))
    report = res.to_dict()
    report["contributor_veto"] = veto
    report["views"] = evaluate_views(locs, gamma, omega, res.disclosed, k, release, evaluate_limit)
    return SecureUnlinkOutput(out_release, report)


def evaluate_views(locs, gamma, omega, disclosed, k, release=None, limit: int = 4_000_000) -> dict:
    """External view on the plaintext disclosure and, with truth, every location's contributor view."""
    g = {c: set(gamma[c]) for c in locs}
    d = {c: set(disclosed.get(c, [])) for c in locs}
    n_m = len(set().union(*g.values()))
    n_n = len(set().union(*(set(omega[c]) for c in locs)))
    if n_m * max(1, sum(len(v) for v in d.values())) > limit:
        return {"checked": False, "reason": "above evaluate_limit"}
    total = max(n_m, n_n)
    out: dict = {"checked": True, "external": external_view(locs, g, d, k, total).to_dict()}
    pairs = private_pairs(release, gamma, omega) if release is not None else None
    if pairs is not None:
        out["contributor"] = {c: contributor_view(locs, g, d, k, pairs[c], total, name=f"contributor:{c}").to_dict()
                              for c in locs}
        out["contributor_all_k_unlinkable"] = all(v["k_unlinkable"] for v in out["contributor"].values())
    return out
