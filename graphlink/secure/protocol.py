"""STRANON orchestration (thesis Alg. 11 over SCAMD, App. C), integrity bounds (Theorems 11–13) and the
App. C.3.2 cost formulas.

``run_stranon`` builds one ``Location`` per location and one ``SemiTrustedThirdParty`` and lets them talk
(in-process via ``LocalNetwork``, or as separate processes over loopback via ``transport.run_processes``).
The result carries what every party disclosed/learned, the costs, and detections.

Cost formulas (App. C.3.2; |L| locations; α_l check rounds, β_l own dummies, |D_C| lock dummies):
* dataset encryptions/decryptions per location: ``2(1 + 1 + |L|) + Σ_x α_x + 2α_l`` (= the thesis's
  ``α|L| + 2α`` term for equal α; locking swaps the 2 recollection operations for 1 encryption of D_C and
  1 unlock decryption, so the count is unchanged);
* bandwidth of location l's data in records (C.3/C.4): ``2s(|L|−1) + 2r(|L|−1) + s + r + 2αs(|L|−1)``
  (``+ |D_C|`` with locking), s = |D_l| + β_l + 1, r = |return_l| (+ |D_C| with locking).
  Our submission omits the β dummies (the sTTP must not allocate them), so the measured value is the
  formula minus β_l; ``bandwidth_formula(..., submitted_dummies=False)`` gives that exact expectation.
"""

from __future__ import annotations

import math
import time
import uuid

from graphlink.errors import ReleaseError
from graphlink.secure.parties import Behaviour, LocalNetwork, Location, SemiTrustedThirdParty
from graphlink.secure.report import StranonResult, bandwidth_by_owner, collect, party_report
from graphlink.secure.transport import run_processes

# StranonResult, collect, party_report and bandwidth_by_owner live in graphlink.secure.report (shared with the
# transport, so the dependency goes protocol -> transport -> report, no cycle); re-exported for callers.
__all__ = ["StranonResult", "bandwidth_by_owner", "bandwidth_formula", "collect", "dataset_ops_formula",
           "grab_and_go_undetected", "make_parties", "partial_switch_detection_bound", "partial_switch_undetected",
           "party_report", "run_stranon"]


# ------------------------------------------------------------------------------------------ closed forms
def partial_switch_undetected(n: int, f: int, alpha: int = 1) -> float:
    """Exact probability that a partial key switch of f of n values survives α check rounds:
    (f!(n−f)!/n!)^α = C(n, f)^−α (proof of Theorem 12).

    Examples
    --------
    One value of four switched survives one check round with probability 1/4, two rounds 1/16:

    >>> from graphlink.secure.protocol import partial_switch_undetected
    >>> partial_switch_undetected(4, 1), partial_switch_undetected(4, 1, alpha=2)
    (0.25, 0.0625)
    """
    return math.comb(n, f) ** (-alpha)


def partial_switch_detection_bound(n_data: int, beta: int, alpha: int, with_vc: bool = True) -> float:
    """Theorem 12 lower bound on detection: 1 − (|D| + β (+1 for v_C))^−α (max over f at f = 1).

    Examples
    --------
    Three records, two dummies and the check value: a switch is caught with probability at least 1 − 1/6.

    >>> from graphlink.secure.protocol import partial_switch_detection_bound
    >>> round(partial_switch_detection_bound(3, beta=2, alpha=1), 4)
    0.8333
    """
    return 1.0 - (n_data + beta + (1 if with_vc else 0)) ** (-alpha)


def grab_and_go_undetected(r: int, d: int, f: int) -> float:
    """Theorem 13: probability that f targeted values all fall in return_A (none in D_C):
    C(r, f) / C(r + d, f) ≤ r / (r + d).

    Examples
    --------
    One targeted value among three returned records and two lock dummies goes unnoticed with probability 3/5:

    >>> from graphlink.secure.protocol import grab_and_go_undetected
    >>> grab_and_go_undetected(3, 2, 1), grab_and_go_undetected(3, 2, 4)
    (0.6, 0.0)
    """
    return math.comb(r, f) / math.comb(r + d, f) if f <= r else 0.0


def dataset_ops_formula(n_locations: int, alpha_own: int, alphas_all: list[int] | None = None) -> int:
    """Dataset-level encryptions/decryptions of one location (App. C.3.2).

    Examples
    --------
    Four locations, one check round each: 2(1 + 1 + 4) + 4 + 2 operations.

    >>> from graphlink.secure.protocol import dataset_ops_formula
    >>> dataset_ops_formula(4, 1)
    18
    """
    checks = sum(alphas_all) if alphas_all is not None else alpha_own * n_locations
    return 2 * (1 + 1 + n_locations) + checks + 2 * alpha_own


def bandwidth_formula(n_locations: int, n_data: int, n_return: int, *, alpha: int = 0, beta: int = 0,
                      integrity: bool = True, dc_size: int = 0, locking: bool = False,
                      submitted_dummies: bool = True) -> int:
    """Records moved for location l's data: (C.3) with integrity, (C.4) with locking, basic otherwise.

    Examples
    --------
    Three locations, four records and two returned, with the check value and no check rounds: s = 5, r = 2,
    2·5·2 + 2·2·2 + 5 + 2 records.

    >>> from graphlink.secure.protocol import bandwidth_formula
    >>> bandwidth_formula(3, 4, 2), bandwidth_formula(3, 4, 2, integrity=False)
    (35, 30)
    """
    L = n_locations
    s = n_data + (beta + 1 if integrity else 0)
    r = n_return + (dc_size if locking else 0)
    total = 2 * s * (L - 1) + 2 * r * (L - 1) + s + r + 2 * alpha * s * (L - 1)
    if locking:
        total += dc_size
    if not submitted_dummies:
        total -= beta
    return total


# ------------------------------------------------------------------------------------------ orchestration
def make_parties(data: dict[str, tuple[list[str], list[str]]], k: int, method: str, *,
                 alpha: int | dict = 0, beta: int | dict = 0, integrity: bool = True, locking: bool = False,
                 dc_size: int = 0, behaviours: dict[str, Behaviour] | None = None, certify: bool = True,
                 certify_limit: int = 4_000_000, keep_messages: bool = False, session: str | None = None,
                 pairs: dict[str, dict[str, str]] | None = None, contributor_veto: bool = False):
    """Create the parties for one session. ``data[loc] = (identified γ, de-identified ω)``.

    Nothing is seeded: every shuffle, dummy, key and tie-break comes from a CSPRNG (docs/secure.md)."""
    if not data:
        raise ReleaseError("no locations")
    session = session or uuid.uuid4().hex
    locs = list(data)
    behaviours = behaviours or {}
    a = alpha if isinstance(alpha, dict) else {c: alpha for c in locs}
    b = beta if isinstance(beta, dict) else {c: beta for c in locs}
    parties: dict = {}
    for loc in locs:
        gam, om = data[loc]
        parties[loc] = Location(loc, session, gam, om, alpha=a.get(loc, 0) if integrity else 0,
                                beta=b.get(loc, 0) if integrity else 0, behaviour=behaviours.get(loc),
                                keep_messages=keep_messages, pairs=(pairs or {}).get(loc))
    parties["sTTP"] = SemiTrustedThirdParty(session, locs, k, method, integrity=integrity,
                                            locking=locking, dc_size=dc_size, certify=certify,
                                            certify_limit=certify_limit, keep_messages=keep_messages,
                                            contributor_veto=contributor_veto)
    return parties


def run_stranon(data: dict[str, tuple[list[str], list[str]]], k: int, method: str = "greedy-dedup-secure", *,
                alpha: int | dict = 1, beta: int | dict = 2, integrity: bool = True,
                locking: bool = True, dc_size: int = 8, behaviours: dict[str, Behaviour] | None = None,
                certify: bool = True, certify_limit: int = 4_000_000, keep_messages: bool = False,
                processes: bool = False, pairs: dict[str, dict[str, str]] | None = None,
                contributor_veto: bool = False, timeout: float | None = None) -> StranonResult:
    """Run STRANON (Alg. 11) among ``data``'s locations and an sTTP.

    processes=False: in-process parties exchanging encoded frames (``LocalNetwork``).
    processes=True: every party in its own OS process, talking over 127.0.0.1 TCP (``transport``), with
    authenticated frames; ``timeout`` defaults to one sized to the work (``transport.work_timeout``) and a
    party that fails or exits stops the run at once (``ProtocolError``).
    There is no seed: the protocol's randomness is the OS CSPRNG, so no party can predict another's shuffles.
    Cost: ≈ (|L| + 2 + Σα) scalar multiplications per record plus the secure DEDUP (see dedup_secure).

    Examples
    --------
    Two locations, each with its identified and its de-identified values (y at both); at k = 2 the protocol
    withholds every de-identified value here, and no integrity check fires:

    >>> from graphlink.secure.protocol import run_stranon
    >>> data = {"H1": (["a", "b", "c"], ["x", "y"]), "H2": (["b", "c", "d"], ["y", "z"])}
    >>> result = run_stranon(data, 2)
    >>> result.disclosed, result.aborted, result.detections
    ({'H1': [], 'H2': []}, None, [])
    """
    if processes:
        return run_processes(data, k, method, alpha=alpha, beta=beta, integrity=integrity,
                             locking=locking, dc_size=dc_size, behaviours=behaviours, certify=certify,
                             certify_limit=certify_limit, pairs=pairs, contributor_veto=contributor_veto,
                             timeout=timeout)
    parties = make_parties(data, k, method, alpha=alpha, beta=beta, integrity=integrity,
                           locking=locking, dc_size=dc_size, behaviours=behaviours, certify=certify,
                           certify_limit=certify_limit, keep_messages=keep_messages, pairs=pairs,
                           contributor_veto=contributor_veto)
    t0 = time.perf_counter()
    net = LocalNetwork(parties, keep_log=keep_messages)
    net.run(parties["sTTP"].start())
    wall = time.perf_counter() - t0
    res = collect({n: party_report(p) for n, p in parties.items()}, k, method, net.log, wall)
    res.parties = parties
    res.frames = net.frames
    return res
