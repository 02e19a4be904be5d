"""The parties of STRANON (thesis Alg. 11) over SCAMD (App. C): ``Location`` and ``SemiTrustedThirdParty``.

Each party is a message-driven state machine: ``handle(message) -> [messages to send]`` (plus ``start()``
for the sTTP). Parties share no objects; the in-process network (``LocalNetwork``) and the loopback
transport (``transport.py``) deliver the serialised bytes, so a party only ever sees what it decodes.

Protocol (semi-honest core = Alg. 11 / SCAMD Steps 1–5, with the App. C.3 extensions switchable):

1. sTTP → every location: ``Setup`` (k, method, the common dummy v_C of Theorem 11, locking flag). With
   locking the sTTP also runs its dummy set D_C through every location's encryption (Thm 13).
2. location l: publishes γ_l (``PublishIdentified``); takes H(ω_l) + [v_C] + β own dummies, shuffles,
   blinds with y_l^b, encrypts with y_l^m, and sends the set to every other location in turn
   (``EncryptRequest``/``EncryptReply``); then strips y_l^b.
3. Integrity (Thm 12): α rounds; each blinds the fully encrypted set with a fresh check key, shuffles,
   has every location decrypt it (``DecryptRequest`` purpose=check), strips the check key and compares
   with H(ω_l ∪ {v_C} ∪ dummies). Mismatch ⇒ ``Alarm``.
4. l → sTTP: ``Submission`` (data without the β dummies, and the encrypted v_C separately).
5. sTTP: Theorem 11 check (all encrypted v_C equal, else ``Abort``), runs Greedy-/Force-Dedup-Secure,
   optionally certifies and repairs, and returns N_l ⊆ h(ω_l): plainly (``Return``; l then blinds with its
   recollection key y_l^r and has everyone decrypt) or locked (``LockedReturn``: [D_C, N_l] blinded with a
   one-time y_C^l, plus h(D_C, y_C^l)); after full decryption l reports whether h(D_C, y_C^l) came back
   (``DecryptionReport``); only when all report ok does the sTTP send each l its ``Unlock`` key z_C^l.
6. l maps the recovered H-points back to its own plaintext (it alone has the dictionary) and discloses.

Adversarial behaviours (``Behaviour``) reproduce App. C.3.1: full / partial key switch against a victim,
refusing to decrypt the victim's return, and grab-and-go with f targeted values.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import rbcl

from graphlink.secure import messages as M
from graphlink.secure.crypto import Key, hash_points, random_point
from graphlink.secure.dedup_secure import SecureDedupResult, run_secure_dedup


@dataclass
class Costs:
    """Per-party cost counters (App. C.3.2): dataset-level and element-level crypto operations, traffic."""

    dataset_ops: int = 0          # encryptions/decryptions of a whole dataset (the unit of C.3.2)
    element_ops: int = 0          # scalar multiplications
    hash_ops: int = 0             # hash-to-group evaluations
    messages_sent: int = 0
    messages_received: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    records_sent: int = 0
    records_received: int = 0
    cpu_seconds: float = 0.0      # CPU time spent handling messages (thread CPU time, not wall)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Behaviour:
    """How a location deviates (App. C.3.1). kind: honest | full-switch | partial-switch | refuse-decrypt |
    grab-and-go. ``victim`` = the location whose data is attacked; ``f`` = values switched / targeted."""

    kind: str = "honest"
    victim: str | None = None
    f: int = 1
    seed: int | None = None


class Party:
    """Shared plumbing: name, session, counters, a record of every message received."""

    def __init__(self, name: str, session: str, keep_messages: bool = False) -> None:
        self.name = name
        self.session = session
        self.costs = Costs()
        self.keep_messages = keep_messages
        self.received: list[M.Message] = []
        self.seen: list[dict] = []         # summary of every received message (kind, sender, records, bytes)
        self.finished = False
        self.aborted: str | None = None

    def _op(self, key: Key, points: list[bytes], decrypt: bool = False) -> list[bytes]:
        self.costs.dataset_ops += 1
        self.costs.element_ops += len(points)
        return key.decrypt(points) if decrypt else key.encrypt(points)

    def deliver(self, msg: M.Message, nbytes: int) -> list[M.Message]:
        """Account for a received message, then handle it."""
        self.costs.messages_received += 1
        self.costs.bytes_received += nbytes
        self.costs.records_received += M.n_records(msg)
        self.seen.append({"kind": msg.kind, "from": msg.sender, "records": M.n_records(msg), "bytes": nbytes})
        if self.keep_messages:
            self.received.append(msg)
        if msg.session != self.session:
            return []
        t0 = time.thread_time()
        try:
            return self.handle(msg)
        finally:
            self.costs.cpu_seconds += time.thread_time() - t0

    def account_sent(self, msg: M.Message, nbytes: int) -> None:
        self.costs.messages_sent += 1
        self.costs.bytes_sent += nbytes
        self.costs.records_sent += M.n_records(msg)

    def handle(self, msg: M.Message) -> list[M.Message]:  # pragma: no cover - abstract
        raise NotImplementedError


class Location(Party):
    """A data-holding location c_i. Holds γ_i, ω_i and its private keys; never sends plaintext of ω_i or
    any key (the only secret-dependent things it sends are ciphertexts under at least one of its own
    blinding / check / recollection keys, or the sTTP's one-time blinding key)."""

    def __init__(self, name: str, session: str, identified: list[str], deidentified: list[str], *,
                 beta: int = 0, alpha: int = 0, behaviour: Behaviour | None = None,
                 seed: int | None = None, keep_messages: bool = False,
                 pairs: dict[str, str] | None = None) -> None:
        super().__init__(name, session, keep_messages)
        self.pairs = dict(pairs) if pairs is not None else None   # τ_i: own identity -> own element
        self.identified = list(identified)
        self.deidentified = list(deidentified)
        self.beta, self.alpha = beta, alpha
        self.behaviour = behaviour or Behaviour()
        self.rng = random.Random(seed)
        self.arng = random.Random(self.behaviour.seed)
        self.key_m = Key("multi-party")
        self.key_b = Key("blinding")
        self.key_r = Key("recollection")
        self.key_bad = Key("bad") if self.behaviour.kind in ("full-switch", "partial-switch") else None
        self.check_keys: list[Key] = []
        self.disclosed: list[str] = []
        self.unrecovered = 0
        self.alarm: str | None = None
        self.report_ok: bool | None = None
        self._switched: dict[str, set[int]] = {}

    # -------------------------------------------------------------------------------- helpers
    def secrets(self) -> list[bytes]:
        """All secret scalars of this location (for leak tests)."""
        out = []
        for k in [self.key_m, self.key_b, self.key_r, *self.check_keys] + ([self.key_bad] if self.key_bad else []):
            out.extend(k.secret_material())
        return out

    def _msg(self, cls, to: str, **kw) -> M.Message:
        return cls(sender=self.name, recipient=to, session=self.session, **kw)

    # -------------------------------------------------------------------------------- handler
    def handle(self, msg: M.Message) -> list[M.Message]:
        h = getattr(self, "_on_" + msg.kind.replace("-", "_"))
        return h(msg)

    def _on_setup(self, msg: M.Setup) -> list[M.Message]:
        self.locations = list(msg.locations)
        self.peers = [x for x in self.locations if x != self.name]
        self.k, self.locking = msg.k, msg.locking
        data_pts = hash_points(self.deidentified)
        self.costs.hash_ops += len(data_pts)
        self.lookup = dict(zip(data_pts, self.deidentified, strict=True))
        entries = [("data", p) for p in data_pts]
        entries += [("vc", p) for p in msg.common_dummy]
        entries += [("dummy", random_point()) for _ in range(self.beta)]
        self.rng.shuffle(entries)
        self.roles = [r for r, _ in entries]
        self.plain_points = [p for _, p in entries]
        cur = self._op(self.key_m, self._op(self.key_b, self.plain_points))
        out: list[M.Message] = [self._msg(M.PublishIdentified, M.STTP, identified=self.identified)]
        self._enc_queue = list(self.peers)
        return out + self._next_encrypt(cur)

    def _next_encrypt(self, cur: list[bytes]) -> list[M.Message]:
        if self._enc_queue:
            return [self._msg(M.EncryptRequest, self._enc_queue.pop(0), owner=self.name, points=cur)]
        self.full = self._op(self.key_b, cur, decrypt=True)
        self._round = 0
        return self._next_check()

    def _on_encrypt_request(self, msg: M.EncryptRequest) -> list[M.Message]:
        pts = msg.points
        b = self.behaviour
        if b.kind == "full-switch" and msg.owner == b.victim:
            out = self._op(self.key_bad, pts)
        elif b.kind == "partial-switch" and msg.owner == b.victim:
            bad = set(self.arng.sample(range(len(pts)), min(b.f, len(pts))))
            self._switched[msg.owner] = bad
            self.costs.dataset_ops += 1
            self.costs.element_ops += len(pts)
            out = [rbcl.crypto_scalarmult_ristretto255(
                (self.key_bad if i in bad else self.key_m).scalar, p) for i, p in enumerate(pts)]
        else:
            out = self._op(self.key_m, pts)
        return [self._msg(M.EncryptReply, msg.sender, owner=msg.owner, points=out)]

    def _on_encrypt_reply(self, msg: M.EncryptReply) -> list[M.Message]:
        return self._next_encrypt(msg.points)

    # integrity check rounds (Theorem 12)
    def _next_check(self) -> list[M.Message]:
        if self._round >= self.alpha:
            return self._submit()
        key = Key(f"check-{self._round}")
        self.check_keys.append(key)
        perm = list(range(len(self.full)))
        self.rng.shuffle(perm)
        self._perm = perm
        cur = self._op(key, [self.full[i] for i in perm])
        cur = self._op(self.key_m, cur, decrypt=True)
        self._dec_queue = list(self.peers)
        return self._next_decrypt("check", cur)

    def _next_decrypt(self, purpose: str, cur: list[bytes]) -> list[M.Message]:
        if self._dec_queue:
            return [self._msg(M.DecryptRequest, self._dec_queue.pop(0), owner=self.name, purpose=purpose,
                              round=self._round, points=cur)]
        return self._finish_check(cur) if purpose == "check" else self._finish_return(cur)

    def _finish_check(self, cur: list[bytes]) -> list[M.Message]:
        back = self._op(self.check_keys[-1], cur, decrypt=True)
        expected = [self.plain_points[i] for i in self._perm]
        if back != expected:
            wrong = sum(a != b for a, b in zip(back, expected, strict=True))
            self.alarm = f"decryption check {self._round + 1} failed: {wrong} values wrong"
            return [self._msg(M.Alarm, M.STTP, reason=self.alarm)]
        self._round += 1
        return self._next_check()

    def _submit(self) -> list[M.Message]:
        data = [p for p, r in zip(self.full, self.roles, strict=True) if r == "data"]
        vc = [p for p, r in zip(self.full, self.roles, strict=True) if r == "vc"]
        return [self._msg(M.Submission, M.STTP, points=data, common_dummy=vc)]

    def _on_decrypt_request(self, msg: M.DecryptRequest) -> list[M.Message]:
        pts = msg.points
        b = self.behaviour
        victim = msg.owner == b.victim
        if b.kind == "full-switch" and victim:
            out = self._op(self.key_bad, pts, decrypt=True)
        elif b.kind == "partial-switch" and victim:
            guess = set(self.arng.sample(range(len(pts)), min(b.f, len(pts))))
            self.costs.dataset_ops += 1
            self.costs.element_ops += len(pts)
            out = [rbcl.crypto_scalarmult_ristretto255(
                (self.key_bad if i in guess else self.key_m).inverse, p) for i, p in enumerate(pts)]
        elif b.kind == "refuse-decrypt" and victim and msg.purpose == "return":
            out = list(pts)
        elif b.kind == "grab-and-go" and victim and msg.purpose == "return":
            skip = set(self.arng.sample(range(len(pts)), min(b.f, len(pts))))
            self.costs.dataset_ops += 1
            self.costs.element_ops += len(pts) - len(skip)
            out = [p if i in skip else rbcl.crypto_scalarmult_ristretto255(self.key_m.inverse, p)
                   for i, p in enumerate(pts)]
        else:
            out = self._op(self.key_m, pts, decrypt=True)
        return [self._msg(M.DecryptReply, msg.sender, owner=msg.owner, purpose=msg.purpose,
                          round=msg.round, points=out)]

    def _on_decrypt_reply(self, msg: M.DecryptReply) -> list[M.Message]:
        return self._next_decrypt(msg.purpose, msg.points)

    # return path
    def _on_return(self, msg: M.Return) -> list[M.Message]:
        pts = list(msg.points)
        self.rng.shuffle(pts)
        cur = self._op(self.key_m, self._op(self.key_r, pts), decrypt=True)
        self._dec_queue = list(self.peers)
        return self._next_decrypt("return", cur)

    def _on_locked_return(self, msg: M.LockedReturn) -> list[M.Message]:
        self._blinded_dummies = list(msg.blinded_dummies)
        cur = self._op(self.key_m, list(msg.points), decrypt=True)
        self._dec_queue = list(self.peers)
        return self._next_decrypt("return", cur)

    def _finish_return(self, cur: list[bytes]) -> list[M.Message]:
        if not self.locking:
            return self._recover(self._op(self.key_r, cur, decrypt=True))
        remaining = list(cur)
        ok = True
        for d in self._blinded_dummies:
            try:
                remaining.remove(d)
            except ValueError:
                ok = False
        self._locked_remaining = remaining
        self.report_ok = ok
        return [self._msg(M.DecryptionReport, M.STTP, ok=ok)]

    def _on_unlock(self, msg: M.Unlock) -> list[M.Message]:
        self.costs.dataset_ops += 1
        self.costs.element_ops += len(self._locked_remaining)
        pts = [rbcl.crypto_scalarmult_ristretto255(msg.key, p) for p in self._locked_remaining]
        return self._recover(pts)

    def _recover(self, points: list[bytes]) -> list[M.Message]:
        rec = [self.lookup.get(p) for p in points]
        self.disclosed = sorted(x for x in rec if x is not None)
        self.unrecovered = sum(1 for x in rec if x is None)
        self.finished = True
        return [self._msg(M.Finished, M.STTP, disclosed=len(self.disclosed))]

    def _on_preview(self, msg: M.Preview) -> list[M.Message]:
        """Contributor veto round: evaluate Definition 25 for this location on the planned disclosure."""
        from graphlink.secure.unlinkability import contributor_view

        if self.pairs is None:  # a location that does not know its own pairing cannot object
            return [self._msg(M.PreviewVerdict, M.STTP, ok=True, round=msg.round)]
        own = {f: self.lookup[p] for f, p, r in zip(self.full, self.plain_points, self.roles, strict=True)
               if r == "data"}
        locs = list(msg.counts)
        disclosed: dict[str, set] = {c: set() for c in locs}
        for pt, at in zip(msg.known, msg.known_at, strict=True):
            disclosed[at].add(own[pt])
        for c in locs:
            for t in range(int(msg.counts[c]) - len(disclosed[c])):
                disclosed[c].add(("?", c, t))
        gamma = {c: set(v) for c, v in msg.gamma.items()}
        total = len(set().union(*gamma.values()))
        view = contributor_view(locs, gamma, disclosed, self.k, self.pairs, total, name=f"contributor:{self.name}")
        if view.k_unlinkable:
            return [self._msg(M.PreviewVerdict, M.STTP, ok=True, round=msg.round)]
        where = {x: c for c, v in disclosed.items() for x in v}
        blame = [where[x] for x in view.violations_right]
        for m in view.violations_left:
            blame += [c for c in locs if m in gamma[c] and msg.counts[c] > 0]
        return [self._msg(M.PreviewVerdict, M.STTP, ok=False, blame=blame, round=msg.round)]

    def _on_abort(self, msg: M.Abort) -> list[M.Message]:
        self.aborted = msg.reason
        self.finished = True
        return []


class SemiTrustedThirdParty(Party):
    """The sTTP: sees published γ's (plaintext) and fully encrypted h(ω)'s only; runs the secure DEDUP,
    the Theorem 11 check, the Theorem 13 lock, and (optionally) certifies external and central
    k-unlinkability on ciphertexts before answering (withholding more if a check fails)."""

    def __init__(self, session: str, locations: list[str], k: int, method: str, *, seed: int | None = None,
                 integrity: bool = True, locking: bool = False, dc_size: int = 0, certify: bool = True,
                 certify_limit: int = 4_000_000, keep_messages: bool = False,
                 contributor_veto: bool = False) -> None:
        super().__init__(M.STTP, session, keep_messages)
        self.contributor_veto = contributor_veto
        self.verdicts: dict[str, M.PreviewVerdict] = {}
        self.veto_rounds: list[dict] = []
        self.locations = list(locations)
        self.k, self.method, self.seed = k, method, seed
        self.integrity, self.locking, self.dc_size = integrity, locking, dc_size
        self.certify, self.certify_limit = certify, certify_limit
        self.rng = random.Random(seed)
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

    def _msg(self, cls, to: str, **kw) -> M.Message:
        return cls(sender=self.name, recipient=to, session=self.session, **kw)

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
            out.append(self._msg(M.EncryptRequest, self._dc_queue.pop(0), owner=self.name, points=cur))
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
            if self._dc_queue:
                return [self._msg(M.EncryptRequest, self._dc_queue.pop(0), owner=self.name, points=msg.points)]
            self._dc_full = self._op(self.key_b, msg.points, decrypt=True)
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
        self.result = run_secure_dedup(self.method, gamma, h_omega, self.k, self.seed)
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
        from collections import Counter

        from graphlink.secure.dedup_secure import withhold_location

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
        from graphlink.secure.unlinkability import central_view, external_view

        n_m = len(set().union(*gamma.values()))
        n_n = len(set().union(*h_omega.values()))
        if n_m * n_n > self.certify_limit:
            self.certification = {"checked": False, "reason": f"|M|·|N| = {n_m * n_n} above certify_limit"}
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
            from graphlink.secure.dedup_secure import withhold_location
            withhold_location(self.result, worst, "external/central check failed")
            repairs.append(worst)
        self.certification = {"checked": True, "external": ext.k_unlinkable, "central": cen.k_unlinkable,
                              "repairs": repairs}


class LocalNetwork:
    """In-process message router: every message is encoded to bytes, delivered FIFO and decoded by the
    recipient — the same frames the socket transport carries. Keeps a log for inspection."""

    def __init__(self, parties: dict[str, Party], keep_log: bool = False) -> None:
        self.parties = parties
        self.keep_log = keep_log
        self.log: list[tuple] = []   # (sender, recipient, kind, records, bytes, owner)
        self.frames: list[tuple[str, bytes]] = []

    def run(self, initial: list[M.Message], max_messages: int = 10_000_000) -> None:
        from collections import deque

        queue: deque = deque()

        def send(msgs):
            for m in msgs:
                frame = M.encode(m)
                self.parties[m.sender].account_sent(m, len(frame))
                self.log.append((m.sender, m.recipient, m.kind, M.n_records(m), len(frame), getattr(m, "owner", None)))
                if self.keep_log:
                    self.frames.append((m.recipient, frame))
                queue.append((m.recipient, frame))

        send(initial)
        n = 0
        while queue:
            n += 1
            if n > max_messages:
                raise RuntimeError("message limit exceeded")
            to, frame = queue.popleft()
            party = self.parties[to]
            send(party.deliver(M.decode(frame), len(frame)))
