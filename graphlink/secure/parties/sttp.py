"""The semi-trusted third party of STRANON (thesis Alg. 11, Algorithms 12/14 on ciphertexts, Theorems 11, 13).

It sees the published γ's in plaintext and the fully encrypted h(ω)'s only; it checks the common dummy
(Theorem 11), runs the secure DEDUP, optionally certifies external/central k-unlinkability and runs the
contributor veto, and answers each location plainly or locked (Theorem 13).  Cost: the secure DEDUP (see
:mod:`graphlink.secure.dedup_secure`) plus one certification per repair round.
"""

from __future__ import annotations

import time
from collections import Counter

from graphlink.secure import messages as M
from graphlink.secure.crypto import Key, random_point
from graphlink.secure.dedup_secure import SecureDedupResult, run_secure_dedup, withhold_location
from graphlink.secure.parties.shared import Party, protocol_rng


class SemiTrustedThirdParty(Party):
    """The sTTP: sees published γ's (plaintext) and fully encrypted h(ω)'s only; runs the secure DEDUP,
    the Theorem 11 check, the Theorem 13 lock, and (optionally) certifies external and central
    k-unlinkability on ciphertexts before answering (withholding more if a check fails)."""

    def __init__(self, session: str, locations: list[str], k: int, method: str, *,
                 integrity: bool = True, locking: bool = False, dc_size: int = 0, certify: bool = True,
                 certify_limit: int = 4_000_000, keep_messages: bool = False,
                 contributor_veto: bool = False) -> None:
        super().__init__(M.STTP, session, keep_messages)
        self.contributor_veto = contributor_veto
        self.verdicts: dict[str, M.PreviewVerdict] = {}
        self.veto_rounds: list[dict] = []
        self.locations = list(locations)
        self.k, self.method = k, method
        self.integrity, self.locking, self.dc_size = integrity, locking, dc_size
        self.certify, self.certify_limit = certify, certify_limit
        self.rng = protocol_rng()     # the lock mixture's shuffle: a cheater must not know where D_C sits
        self.gamma: dict[str, set[str]] = {}
        self.submissions: dict[str, list[bytes]] = {}
        self.vc_seen: dict[str, list[bytes]] = {}
        self.reports: dict[str, bool] = {}
        self.finished_locs: dict[str, int] = {}
        self.detections: list[str] = []
        self.result: SecureDedupResult | None = None
        self.certification: dict = {}
        self.key_b = Key("sTTP-blinding")
        self.lock_keys: dict[str, Key] = {}
        self._dc_full: list[bytes] | None = None

    def secrets(self) -> list[bytes]:
        out = list(self.key_b.secret_material())
        for k in self.lock_keys.values():
            out.extend(k.secret_material())
        return out

    def start(self) -> list[M.Message]:
        t0 = time.thread_time()
        try:
            return self._start()
        finally:
            self.costs.cpu_seconds += time.thread_time() - t0

    def _start(self) -> list[M.Message]:
        vc = [random_point()] if self.integrity else []
        out: list[M.Message] = [self._msg(M.Setup, loc, locations=self.locations, k=self.k, method=self.method,
                                          common_dummy=vc, locking=self.locking) for loc in self.locations]
        if self.locking:
            self._dc = [random_point() for _ in range(self.dc_size)]
            self._dc_queue = list(self.locations)
            cur = self._op(self.key_b, self._dc)
            out.append(self._request(M.EncryptRequest, self._dc_queue.pop(0), owner=self.name, points=cur))
        return out

    def handle(self, msg: M.Message) -> list[M.Message]:
        if self.aborted:
            return []
        if isinstance(msg, M.PublishIdentified):
            self.gamma[msg.sender] = set(msg.identified)
        elif isinstance(msg, M.Submission):
            self.submissions[msg.sender] = list(msg.points)
            self.vc_seen[msg.sender] = list(msg.common_dummy)
        elif isinstance(msg, M.EncryptReply):
            points = self._reply(msg)
            if self._dc_queue:
                return [self._request(M.EncryptRequest, self._dc_queue.pop(0), owner=self.name, points=points)]
            self._dc_full = self._op(self.key_b, points, decrypt=True)
        elif isinstance(msg, M.Alarm):
            self.detections.append(f"alarm from {msg.sender}: {msg.reason}")
            return self._abort(f"integrity alarm raised by {msg.sender}")
        elif isinstance(msg, M.DecryptionReport):
            self.reports[msg.sender] = msg.ok
            if not msg.ok:
                self.detections.append(f"{msg.sender}: D_C did not come back after full decryption (Thm 13)")
                return self._abort(f"dishonest decryption detected by {msg.sender}; no unlock keys released")
            if len(self.reports) == len(self.locations):
                return [self._msg(M.Unlock, loc, key=self.lock_keys[loc].inverse) for loc in self.locations]
            return []
        elif isinstance(msg, M.PreviewVerdict):
            return self._on_verdict(msg)
        elif isinstance(msg, M.Finished):
            self.finished_locs[msg.sender] = msg.disclosed
            self.finished = len(self.finished_locs) == len(self.locations)
            return []
        return self._maybe_analyse()

    def _abort(self, reason: str) -> list[M.Message]:
        self.aborted = reason
        self.finished = True
        return [self._msg(M.Abort, loc, reason=reason) for loc in self.locations]

    def _maybe_analyse(self) -> list[M.Message]:
        ready = (len(self.gamma) == len(self.locations) and len(self.submissions) == len(self.locations)
                 and (not self.locking or self._dc_full is not None))
        if not ready or self.result is not None:
            return []
        if self.integrity:  # Theorem 11
            vcs = {loc: (v[0] if v else None) for loc, v in self.vc_seen.items()}
            if None in vcs.values() or len(set(vcs.values())) != 1:
                groups: dict = {}
                for loc, v in vcs.items():
                    groups.setdefault(v, []).append(loc)
                odd = sorted(min(groups.values(), key=len))
                self.detections.append(f"common dummy v_C differs (full key switch or missing v_C); odd group: {odd}")
                return self._abort("Theorem 11 check failed: the encrypted common dummy differs between submissions")
        h_omega = {loc: set(self.submissions[loc]) for loc in self.locations}
        gamma = {loc: self.gamma[loc] for loc in self.locations}
        self.result = run_secure_dedup(self.method, gamma, h_omega, self.k)   # ties: CSPRNG order
        self._gamma_h = (gamma, h_omega)
        if self.certify:
            self._certify(gamma, h_omega)
        if self.contributor_veto:
            return self._preview()
        return self._send_returns()

    def _preview(self) -> list[M.Message]:
        """Contributor veto round (extension; see docs/secure.md): show every location the planned
        disclosure as it will look once published, restricted to what that location can recognise."""
        gamma, h_omega = self._gamma_h
        self.verdicts = {}
        counts = {loc: len(self.result.returns[loc]) for loc in self.locations}
        pub = {loc: sorted(gamma[loc]) for loc in self.locations}
        out: list[M.Message] = []
        for j in self.locations:
            known, at = [], []
            for p in self.locations:
                for y in self.result.returns[p]:
                    if y in h_omega[j]:
                        known.append(y)
                        at.append(p)
            out.append(self._msg(M.Preview, j, counts=counts, known=known, known_at=at, gamma=pub,
                                 round=len(self.veto_rounds)))
        return out

    def _on_verdict(self, msg: M.PreviewVerdict) -> list[M.Message]:
        self.verdicts[msg.sender] = msg
        if len(self.verdicts) < len(self.locations):
            return []
        bad = {loc: v.blame for loc, v in self.verdicts.items() if not v.ok}
        self.veto_rounds.append({"objections": {loc: sorted(set(b)) for loc, b in bad.items()}})
        if not bad:
            return self._send_returns()
        blame = Counter(b for bl in bad.values() for b in bl if self.result.returns.get(b))
        if not blame:
            blame = Counter({loc: len(v) for loc, v in self.result.returns.items() if v})
        worst = max(sorted(blame), key=lambda c: blame[c])
        withhold_location(self.result, worst, f"contributor veto by {sorted(bad)}")
        if self.certify:
            self._certify(*self._gamma_h)
        return self._preview()

    def _send_returns(self) -> list[M.Message]:
        out: list[M.Message] = []
        for loc in self.locations:
            ret = list(self.result.returns[loc])
            if not self.locking:
                out.append(self._msg(M.Return, loc, points=ret))
                continue
            key = Key(f"lock-{loc}")
            self.lock_keys[loc] = key
            mix = self._dc_full + ret
            self.rng.shuffle(mix)
            out.append(self._msg(M.LockedReturn, loc, points=self._op(key, mix),
                                 blinded_dummies=self._op(key, self._dc)))
        return out

    def _certify(self, gamma, h_omega) -> None:
        """External (Def. 22) and central (Def. 24) checks on ciphertexts; withhold whole allocations of the
        location with most violations until both pass. Skipped (and reported) above ``certify_limit``."""
        # imported here: certification is optional and unlinkability loads the numba matching kernels
        from graphlink.secure.unlinkability import central_view, external_view

        n_m = len(set().union(*gamma.values()))
        n_n = len(set().union(*h_omega.values()))
        if n_m * n_n > self.certify_limit:
            # the facts as data too, so an edge can word them (the reason is the technical note)
            self.certification = {"checked": False, "reason": f"|M|·|N| = {n_m * n_n} above certify_limit",
                                  "pairs": n_m * n_n, "limit": self.certify_limit}
            return
        repairs = list(self.certification.get("repairs", []))
        while True:
            disclosed = {loc: set(v) for loc, v in self.result.returns.items()}
            ext = external_view(self.locations, gamma, disclosed, self.k, n_deidentified_total=max(n_m, n_n))
            cen = central_view(self.locations, gamma, h_omega, self.result.returns, self.k)
            if ext.k_unlinkable and cen.k_unlinkable:
                break
            owner = {y: loc for loc, v in self.result.returns.items() for y in v}
            counts: dict[str, int] = {}
            for y in ext.violations_right:
                counts[owner[y]] = counts.get(owner[y], 0) + 1
            for name in cen.violations_right:
                loc = name.split("#")[0]
                counts[loc] = counts.get(loc, 0) + 1
            if not counts:  # violations only on identities: withhold the largest allocation
                counts = {loc: len(v) for loc, v in self.result.returns.items() if v}
            if not counts:
                break
            worst = max(counts, key=lambda c: (counts[c], c))
            withhold_location(self.result, worst, "external/central check failed")
            repairs.append(worst)
        self.certification = {"checked": True, "external": ext.k_unlinkable, "central": cen.k_unlinkable,
                              "repairs": repairs}
