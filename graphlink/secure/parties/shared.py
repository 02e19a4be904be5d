"""What every STRANON party shares (thesis Alg. 11, App. C.3): cost counters, adversarial behaviours, the
``Party`` base class (accounting and dispatch), and the in-process ``LocalNetwork``.

A party only ever sees decoded frames: :func:`send_frame` encodes a message and charges it to its sender,
for the in-process network here and for the loopback transport (:mod:`graphlink.secure.transport`) alike.

Randomness: every shuffle a party makes on the protocol path comes from :func:`protocol_rng`, the operating
system's CSPRNG; dummies and keys come from libsodium's (:mod:`graphlink.secure.crypto`).  Nothing on the
protocol path is seeded: a shuffle another party can predict voids the decryption checks of Theorem 12
(see docs/secure.md, "Randomness").
"""

from __future__ import annotations

import random
import secrets
import time
from collections import deque
from dataclasses import dataclass

from graphlink.secure import messages as M
from graphlink.secure.crypto import Key


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


def protocol_rng() -> random.Random:
    """The random source of every shuffle on the protocol path: ``secrets.SystemRandom`` (the OS CSPRNG).

    Never seeded: with a seeded generator every party can recompute another's shuffles, and a cheater then
    undoes exactly its own switched positions in the victim's check rounds (the ``seed-aware-switch``
    behaviour), which Theorem 12's bound assumes impossible.  O(1).
    """
    return secrets.SystemRandom()


@dataclass
class Behaviour:
    """How a location deviates (App. C.3.1). kind: honest | full-switch | partial-switch | refuse-decrypt |
    grab-and-go | seed-aware-switch | short-reply. ``victim`` = the location whose data is attacked; ``f`` =
    values switched / targeted; ``seed`` seeds the cheater's own choices (test reproducibility only).

    ``seed-aware-switch`` is a partial key switch by a cheater that believes it can predict the victim's
    shuffles: it assumes the victim shuffles with ``random.Random(predict)`` (as a run seeded from a public
    ``--seed`` once did), switches f of the victim's *data* positions only (so the common dummy v_C of
    Theorem 11 stays intact) and, in each check round, decrypts with its switched key exactly where it
    predicts those values now sit.  ``victim_beta`` is the victim's number of own dummies (a public
    parameter), which the prediction needs.  Against unpredictable shuffles it is a blind partial switch.

    ``short-reply`` answers the victim's decryption requests with one point missing: a malformed message
    from an authenticated party, which stops the run (the victim cannot check or recover its data)."""

    kind: str = "honest"
    victim: str | None = None
    f: int = 1
    seed: int | None = None
    predict: int | None = None
    victim_beta: int = 0


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

    def _msg(self, cls, to: str, **kw) -> M.Message:
        return cls(sender=self.name, recipient=to, session=self.session, **kw)

    def _request(self, cls, to: str, **kw) -> M.Message:
        """An encrypt/decrypt request; the reply must come from ``to`` with as many points (``_reply``)."""
        self._awaiting = (to, len(kw["points"]))
        return self._msg(cls, to, **kw)

    def _reply(self, msg: M.Message) -> list[bytes]:
        """The points of a reply to the last request, refused (MessageError) unless it comes from the party
        asked and has one point per point sent: a short or unasked-for reply would silently drop data."""
        to, n = getattr(self, "_awaiting", (None, -1))
        if msg.sender != to or len(msg.points) != n:
            raise M.MessageError(f"{msg.kind} from {msg.sender} with {len(msg.points)} points does not answer "
                                 f"the request sent to {to} with {n}")
        self._awaiting = (None, -1)
        return msg.points

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


def send_frame(party: Party, msg: M.Message) -> tuple[bytes, tuple]:
    """Encode ``msg``, charge it to its sender ``party`` and return (frame, log entry).

    The log entry is (sender, recipient, kind, records, bytes, owner), the unit of the App. C.3.2 bandwidth
    accounting.  O(size of the message).
    """
    frame = M.encode(msg)
    party.account_sent(msg, len(frame))
    return frame, (msg.sender, msg.recipient, msg.kind, M.n_records(msg), len(frame), getattr(msg, "owner", None))


class LocalNetwork:
    """In-process message router: every message is encoded to bytes, delivered FIFO and decoded by the
    recipient — the same frames the socket transport carries. Keeps a log for inspection."""

    def __init__(self, parties: dict[str, Party], keep_log: bool = False) -> None:
        self.parties = parties
        self.keep_log = keep_log
        self.log: list[tuple] = []   # (sender, recipient, kind, records, bytes, owner)
        self.frames: list[tuple[str, bytes]] = []

    def run(self, initial: list[M.Message], max_messages: int = 10_000_000) -> None:
        queue: deque = deque()

        def send(msgs):
            for m in msgs:
                frame, entry = send_frame(self.parties[m.sender], m)
                self.log.append(entry)
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
