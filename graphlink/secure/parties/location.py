"""A data-holding location of STRANON (thesis Alg. 11 over SCAMD, App. C; adversaries of App. C.3.1).

The location publishes γ_l, has its hashed ω_l encrypted by every other location, runs the α integrity
check rounds (Theorem 12), submits to the sTTP, and recovers its disclosable plaintext from the (possibly
locked, Theorem 13) return.  Cost per record: |L| + 2 + α scalar multiplications for its own data.
"""

from __future__ import annotations

import random

import rbcl

from graphlink.secure import messages as M
from graphlink.secure.crypto import Key, hash_points, random_point
from graphlink.secure.parties import shared
from graphlink.secure.parties.shared import Behaviour, Party


class Location(Party):
    """A data-holding location c_i. Holds γ_i, ω_i and its private keys; never sends plaintext of ω_i or
    any key (the only secret-dependent things it sends are ciphertexts under at least one of its own
    blinding / check / recollection keys, or the sTTP's one-time blinding key)."""

    def __init__(self, name: str, session: str, identified: list[str], deidentified: list[str], *,
                 beta: int = 0, alpha: int = 0, behaviour: Behaviour | None = None,
                 keep_messages: bool = False,
                 pairs: dict[str, str] | None = None) -> None:
        super().__init__(name, session, keep_messages)
        self.pairs = dict(pairs) if pairs is not None else None   # τ_i: own identity -> own element
        self.identified = list(identified)
        self.deidentified = list(deidentified)
        self.beta, self.alpha = beta, alpha
        self.behaviour = behaviour or Behaviour()
        self.rng = shared.protocol_rng()               # the OS CSPRNG: no other party can predict a shuffle
        self.arng = random.Random(self.behaviour.seed)  # an adversary's own choices (tests seed them)
        self.key_m = Key("multi-party")
        self.key_b = Key("blinding")
        self.key_r = Key("recollection")
        switching = ("full-switch", "partial-switch", "seed-aware-switch")
        self.key_bad = Key("bad") if self.behaviour.kind in switching else None
        self._predicted: dict[str, dict] = {}   # seed-aware cheater: its model of each victim's shuffles
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

    # -------------------------------------------------------------------------------- handler
    def handle(self, msg: M.Message) -> list[M.Message]:
        h = getattr(self, "_on_" + msg.kind.replace("-", "_"), None)
        if h is None:
            raise M.MessageError(f"a location does not accept {msg.kind} messages")
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
            return [self._request(M.EncryptRequest, self._enc_queue.pop(0), owner=self.name, points=cur)]
        self.full = self._op(self.key_b, cur, decrypt=True)
        self._round = 0
        return self._next_check()

    def _on_encrypt_request(self, msg: M.EncryptRequest) -> list[M.Message]:
        pts = msg.points
        b = self.behaviour
        if b.kind == "full-switch" and msg.owner == b.victim:
            out = self._op(self.key_bad, pts)
        elif b.kind in ("partial-switch", "seed-aware-switch") and msg.owner == b.victim:
            if b.kind == "partial-switch":
                bad = set(self.arng.sample(range(len(pts)), min(b.f, len(pts))))
            else:
                data_positions = self._predict_setup(msg.owner, len(pts))
                bad = set(self.arng.sample(data_positions, min(b.f, len(data_positions))))
            self._switched[msg.owner] = bad
            self.costs.dataset_ops += 1
            self.costs.element_ops += len(pts)
            out = [rbcl.crypto_scalarmult_ristretto255(
                (self.key_bad if i in bad else self.key_m).scalar, p) for i, p in enumerate(pts)]
        else:
            out = self._op(self.key_m, pts)
        return [self._msg(M.EncryptReply, msg.sender, owner=msg.owner, points=out)]

    def _predict_setup(self, owner: str, n: int) -> list[int]:
        """seed-aware-switch: replay the victim's setup shuffle with ``random.Random(predict)``; the positions
        predicted to hold data (not v_C, not a dummy).  The entries before the shuffle are |D| data, then v_C,
        then β dummies (``_on_setup``), so only n and β matter."""
        rng = random.Random(self.behaviour.predict)
        order = list(range(n))
        rng.shuffle(order)
        self._predicted[owner] = {"rng": rng, "rounds": {}}
        n_data = n - 1 - self.behaviour.victim_beta
        return [j for j, i in enumerate(order) if i < n_data]

    def _predict_check(self, owner: str, round_: int, n: int) -> list[int]:
        """seed-aware-switch: the permutation the victim would draw for check round ``round_`` from the same
        predicted generator (drawn in round order, as the victim does)."""
        model = self._predicted.setdefault(owner, {"rng": random.Random(self.behaviour.predict), "rounds": {}})
        while round_ not in model["rounds"]:
            perm = list(range(n))
            model["rng"].shuffle(perm)
            model["rounds"][len(model["rounds"])] = perm
        return model["rounds"][round_]

    def _on_encrypt_reply(self, msg: M.EncryptReply) -> list[M.Message]:
        return self._next_encrypt(self._reply(msg))

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
            return [self._request(M.DecryptRequest, self._dec_queue.pop(0), owner=self.name, purpose=purpose,
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
        elif b.kind in ("partial-switch", "seed-aware-switch") and victim:
            if b.kind == "seed-aware-switch" and msg.purpose == "check":
                perm = self._predict_check(msg.owner, msg.round, len(pts))
                guess = {j for j, i in enumerate(perm) if i in self._switched.get(msg.owner, set())}
            elif b.kind == "seed-aware-switch":
                guess = set()
            else:
                guess = set(self.arng.sample(range(len(pts)), min(b.f, len(pts))))
            self.costs.dataset_ops += 1
            self.costs.element_ops += len(pts)
            out = [rbcl.crypto_scalarmult_ristretto255(
                (self.key_bad if i in guess else self.key_m).inverse, p) for i, p in enumerate(pts)]
        elif b.kind == "short-reply" and victim:
            out = self._op(self.key_m, pts[1:], decrypt=True)     # a malformed reply: one point missing
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
        return self._next_decrypt(msg.purpose, self._reply(msg))

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
        # imported here: the veto round is optional and unlinkability loads the numba matching kernels
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
