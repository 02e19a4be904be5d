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
import uuid
from dataclasses import dataclass, field

from graphlink.errors import ReleaseError
from graphlink.secure.dedup_secure import SecureDedupResult
from graphlink.secure.parties import Behaviour, LocalNetwork, Location, SemiTrustedThirdParty


# ------------------------------------------------------------------------------------------ closed forms
def partial_switch_undetected(n: int, f: int, alpha: int = 1) -> float:
    """Exact probability that a partial key switch of f of n values survives α check rounds:
    (f!(n−f)!/n!)^α = C(n, f)^−α (proof of Theorem 12)."""
    return math.comb(n, f) ** (-alpha)


def partial_switch_detection_bound(n_data: int, beta: int, alpha: int, with_vc: bool = True) -> float:
    """Theorem 12 lower bound on detection: 1 − (|D| + β (+1 for v_C))^−α (max over f at f = 1)."""
    return 1.0 - (n_data + beta + (1 if with_vc else 0)) ** (-alpha)


def grab_and_go_undetected(r: int, d: int, f: int) -> float:
    """Theorem 13: probability that f targeted values all fall in return_A (none in D_C):
    C(r, f) / C(r + d, f) ≤ r / (r + d)."""
    return math.comb(r, f) / math.comb(r + d, f) if f <= r else 0.0


def dataset_ops_formula(n_locations: int, alpha_own: int, alphas_all: list[int] | None = None) -> int:
    """Dataset-level encryptions/decryptions of one location (App. C.3.2)."""
    checks = sum(alphas_all) if alphas_all is not None else alpha_own * n_locations
    return 2 * (1 + 1 + n_locations) + checks + 2 * alpha_own


def bandwidth_formula(n_locations: int, n_data: int, n_return: int, *, alpha: int = 0, beta: int = 0,
                      integrity: bool = True, dc_size: int = 0, locking: bool = False,
                      submitted_dummies: bool = True) -> int:
    """Records moved for location l's data: (C.3) with integrity, (C.4) with locking, basic otherwise."""
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
@dataclass
class StranonResult:
    """Outcome of one run: disclosed plaintext per location (empty if aborted), the sTTP's decision,
    cost counters per party, per-owner bandwidth, detections, and each party's received-message summary."""

    k: int
    method: str
    disclosed: dict[str, list[str]]
    dedup: SecureDedupResult | None
    aborted: str | None
    detections: list[str]
    costs: dict[str, dict]
    bandwidth_by_owner: dict[str, int]
    seen: dict[str, list[dict]]
    certification: dict
    unrecovered: dict[str, int]
    wall_seconds: float = 0.0
    veto_rounds: list = field(default_factory=list)
    parties: dict = field(default_factory=dict, repr=False)
    log: list = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return {"k": self.k, "method": self.method, "aborted": self.aborted, "detections": self.detections,
                "disclosed": {c: len(v) for c, v in self.disclosed.items()},
                "costs": self.costs, "bandwidth_records_by_owner": self.bandwidth_by_owner,
                "certification": self.certification, "unrecovered": self.unrecovered,
                "contributor_veto_rounds": self.veto_rounds,
                "wall_seconds": round(self.wall_seconds, 3),
                "contributor_clean_kept": self.dedup.after_contributor_clean if self.dedup else None,
                "trace": self.dedup.trace if self.dedup else []}


def bandwidth_by_owner(log: list[tuple], owner_of) -> dict[str, int]:
    """Sum records per owning dataset (the accounting unit of C.3/C.4). ``owner_of(entry)``."""
    out: dict[str, int] = {}
    for entry in log:
        o = owner_of(entry)
        if o is not None:
            out[o] = out.get(o, 0) + entry[3]
    return out


def _owner_local(entry) -> str | None:
    sender, recipient, kind, _records, _bytes, owner = entry
    if kind in ("encrypt-request", "decrypt-request", "encrypt-reply", "decrypt-reply"):
        return owner
    if kind == "submission":
        return sender
    if kind in ("return", "locked-return"):
        return recipient
    return None


def make_parties(data: dict[str, tuple[list[str], list[str]]], k: int, method: str, *, seed: int | None = None,
                 alpha: int | dict = 0, beta: int | dict = 0, integrity: bool = True, locking: bool = False,
                 dc_size: int = 0, behaviours: dict[str, Behaviour] | None = None, certify: bool = True,
                 certify_limit: int = 4_000_000, keep_messages: bool = False, session: str | None = None,
                 pairs: dict[str, dict[str, str]] | None = None, contributor_veto: bool = False):
    """Create the parties for one session. ``data[loc] = (identified γ, de-identified ω)``."""
    if not data:
        raise ReleaseError("no locations")
    session = session or uuid.uuid4().hex
    locs = list(data)
    behaviours = behaviours or {}
    a = alpha if isinstance(alpha, dict) else {c: alpha for c in locs}
    b = beta if isinstance(beta, dict) else {c: beta for c in locs}
    parties: dict = {}
    for n, loc in enumerate(locs):
        gam, om = data[loc]
        parties[loc] = Location(loc, session, gam, om, alpha=a.get(loc, 0) if integrity else 0,
                                beta=b.get(loc, 0) if integrity else 0, behaviour=behaviours.get(loc),
                                seed=None if seed is None else seed * 7919 + n, keep_messages=keep_messages,
                                pairs=(pairs or {}).get(loc))
    parties["sTTP"] = SemiTrustedThirdParty(session, locs, k, method, seed=seed, integrity=integrity,
                                            locking=locking, dc_size=dc_size, certify=certify,
                                            certify_limit=certify_limit, keep_messages=keep_messages,
                                            contributor_veto=contributor_veto)
    return parties


def party_report(party) -> dict:
    """Everything the orchestrator may learn from a finished party (no keys, no other party's data)."""
    rep = {"name": party.name, "costs": party.costs.to_dict(), "seen": party.seen, "aborted": party.aborted}
    if isinstance(party, SemiTrustedThirdParty):
        rep.update(result=party.result, detections=party.detections, certification=party.certification,
                   veto_rounds=party.veto_rounds)
    else:
        rep.update(disclosed=party.disclosed, unrecovered=party.unrecovered, alarm=party.alarm,
                   report_ok=party.report_ok)
    return rep


def collect(reports: dict[str, dict], k: int, method: str, log: list, wall: float) -> StranonResult:
    """Gather a ``StranonResult`` from the parties' reports (``party_report``)."""
    sttp = reports["sTTP"]
    locs = [c for c in reports if c != "sTTP"]
    aborted = sttp["aborted"]
    disclosed = {c: ([] if aborted else list(reports[c]["disclosed"])) for c in locs}
    detections = list(sttp["detections"]) + [f"{c}: {reports[c]['alarm']}" for c in locs if reports[c]["alarm"]
                                             and not any(reports[c]["alarm"] in d for d in sttp["detections"])]
    return StranonResult(
        k=k, method=method, disclosed=disclosed, dedup=sttp["result"], aborted=aborted, detections=detections,
        costs={name: r["costs"] for name, r in reports.items()},
        bandwidth_by_owner=bandwidth_by_owner(log, _owner_local), seen={n: r["seen"] for n, r in reports.items()},
        certification=sttp["certification"], unrecovered={c: reports[c]["unrecovered"] for c in locs},
        wall_seconds=wall, log=log, veto_rounds=sttp.get("veto_rounds", []))


def run_stranon(data: dict[str, tuple[list[str], list[str]]], k: int, method: str = "greedy-dedup-secure", *,
                seed: int | None = None, alpha: int | dict = 1, beta: int | dict = 2, integrity: bool = True,
                locking: bool = True, dc_size: int = 8, behaviours: dict[str, Behaviour] | None = None,
                certify: bool = True, certify_limit: int = 4_000_000, keep_messages: bool = False,
                processes: bool = False, pairs: dict[str, dict[str, str]] | None = None,
                contributor_veto: bool = False) -> StranonResult:
    """Run STRANON (Alg. 11) among ``data``'s locations and an sTTP.

    processes=False: in-process parties exchanging encoded frames (``LocalNetwork``).
    processes=True: every party in its own OS process, talking over 127.0.0.1 TCP (``transport``).
    Cost: ≈ (|L| + 2 + Σα) scalar multiplications per record plus the secure DEDUP (see dedup_secure)."""
    import time

    if processes:
        from graphlink.secure.transport import run_processes

        return run_processes(data, k, method, seed=seed, alpha=alpha, beta=beta, integrity=integrity,
                             locking=locking, dc_size=dc_size, behaviours=behaviours, certify=certify,
                             certify_limit=certify_limit, pairs=pairs, contributor_veto=contributor_veto)
    parties = make_parties(data, k, method, seed=seed, alpha=alpha, beta=beta, integrity=integrity,
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
