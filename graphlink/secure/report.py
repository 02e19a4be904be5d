"""What a STRANON run reports (thesis Alg. 11; App. C.3.2 bandwidth accounting).

:func:`party_report` is everything the orchestrator may learn from one finished party; :func:`collect`
gathers the parties' reports into a :class:`StranonResult`.  Both transports use them: the in-process
network (:func:`graphlink.secure.protocol.run_stranon`) and the loopback processes
(:func:`graphlink.secure.transport.run_processes`).  O(messages) for the bandwidth sums.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphlink.secure.dedup_secure import SecureDedupResult
from graphlink.secure.parties import SemiTrustedThirdParty


@dataclass
class StranonResult:
    """Outcome of one run: disclosed plaintext per location (empty if aborted), the sTTP's decision,
    cost counters per party, per-owner bandwidth, detections, and each party's received-message summary.

    Examples
    --------
    Returned by :func:`graphlink.secure.protocol.run_stranon`; ``to_dict`` is its JSON:

    >>> from graphlink.secure.protocol import run_stranon
    >>> result = run_stranon({"H1": (["a", "b", "c"], ["x", "y"]), "H2": (["b", "c", "d"], ["y", "z"])}, 2)
    >>> result.k, result.method, sorted(result.costs)
    (2, 'greedy-dedup-secure', ['H1', 'H2', 'sTTP'])
    """

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
