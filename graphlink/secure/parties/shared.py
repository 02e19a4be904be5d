"""What every STRANON party shares (thesis Alg. 11, App. C.3): cost counters, adversarial behaviours, the
``Party`` base class (accounting and dispatch), and the in-process ``LocalNetwork``.

A party only ever sees decoded frames: :func:`send_frame` encodes a message and charges it to its sender,
for the in-process network here and for the loopback transport (:mod:`graphlink.secure.transport`) alike.
"""

from __future__ import annotations

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

    def _msg(self, cls, to: str, **kw) -> M.Message:
        return cls(sender=self.name, recipient=to, session=self.session, **kw)

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
