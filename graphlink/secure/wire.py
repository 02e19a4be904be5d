"""Authenticated framing for the loopback transport: keys per pair of parties, an authenticated hello, frame
headers with their own tag, size caps per message kind, and a listener whose memory stays bounded whoever
connects.

Keys.  The launcher draws one 32-byte run secret (``secrets``) and keeps it.  Every ordered pair of parties
(sender s, recipient r) gets its own key ``K(s→r)`` = HKDF-Expand-SHA256(run secret, context ‖ s ‖ r) (RFC 5869,
one block; the secret is uniformly random, so it serves as the pseudorandom key without an extract step).  A
party is given only the keys of the pairs it belongs to, so the keys a party holds authenticate frames *from
it* or *to it*, never a frame between two other parties: location A cannot make X accept a frame as the
sTTP's, which a key shared by the whole run allowed.

Connection.  The listener sends a fresh 16-byte challenge; the connecting party answers with a hello of
``HELLO.size`` (40) bytes, ``magic | sender id | recipient id | HMAC(K(s→r), "hello" ‖ challenge ‖ ...)``, and
gets one acknowledgement byte.  Until then the listener reads at most those 40 bytes from the connection and
holds nothing else for it; a connection without a valid hello within ``handshake_seconds`` is closed; at most
``pending_total`` connections (``pending_per_address`` per peer address) may wait for their hello, a new one
pushing out the oldest waiting one; at most one authenticated connection per sender is open at a time.
An honest party that was pushed out connects again (:class:`Sender`), so connections from outside the run
cannot keep the parties apart.

Frames.  Each frame on an authenticated connection is a fixed header ``HEADER.size`` (47) bytes, ``sender id
| kind | sequence number | body length | HMAC(K, "head" ‖ recipient ‖ fields)``, then the body and
``HMAC(K, "body" ‖ header fields ‖ body)``.  The header is checked before a byte of the body is read: its tag,
its sender (the connection's), its kind (one this sender sends to this recipient), its length (at most
:func:`frame_cap` for that kind, sender and recipient: the largest legitimate frame given the run's declared
sizes, plus :data:`MARGIN`), and its sequence number (the next one of that sender: a replayed or reordered
frame is refused).  Only then is the body read, its tag checked, and the frame handed on with the sender it
was authenticated as.

Memory: O(``pending_total`` · ``HELLO.size``) for connections from outside the run, plus at most one frame
under its cap per authenticated sender.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import selectors
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graphlink.errors import ReleaseError
from graphlink.secure import messages as M
from graphlink.secure.crypto import POINT_BYTES

log = logging.getLogger("graphlink.secure")

MAGIC = b"GLS2"
CHALLENGE_BYTES = 16
TAG_BYTES = 32
ACK = b"\x01"
HELLO = struct.Struct(">4sHH32s")          # magic, sender id, recipient id, tag: 40 bytes
HEADER = struct.Struct(">HBQI32s")         # sender id, kind, sequence number, body length, tag: 47 bytes
_HEAD_FIELDS = struct.Struct(">HBQI")
#: the message kinds in wire order (the header's kind byte is an index into this tuple)
KINDS: tuple[str, ...] = tuple(M.MESSAGE_TYPES)
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}

#: what a cap allows beyond the variable parts it counts: the JSON skeleton, field names, the session id,
#: numbers and the protocol's own short texts (abort and alarm reasons)
MARGIN = 4096
HANDSHAKE_SECONDS = 10.0
PENDING_TOTAL = 64
PENDING_PER_ADDRESS = 32
CONNECT_SECONDS = 60.0
#: refusals of one reason a party logs one line each for; later ones are counted (``Listener.stats``)
LOG_LINES_PER_REASON = 20
_KDF_CONTEXT = b"graphlink/stranon/v2/frame-key"


# ------------------------------------------------------------------------------------------------ keys
def new_run_secret() -> bytes:
    """32 bytes from the operating system's CSPRNG: the run secret every pair key is derived from. O(1)."""
    return secrets.token_bytes(32)


def _lp(name: str) -> bytes:
    b = name.encode("utf-8", "surrogatepass")
    return struct.pack(">I", len(b)) + b


def pair_key(secret: bytes, sender: str, recipient: str) -> bytes:
    """The key of frames from ``sender`` to ``recipient``: HKDF-Expand-SHA256 (RFC 5869, one 32-byte block)
    of the run secret with info = context ‖ len ‖ sender ‖ len ‖ recipient (length-prefixed, so no two pairs
    share an info string).  O(len of the names)."""
    return hmac.new(secret, _KDF_CONTEXT + _lp(sender) + _lp(recipient) + b"\x01", hashlib.sha256).digest()


def party_keys(secret: bytes, parties: list[str] | tuple[str, ...], me: str) -> dict[str, dict[str, bytes]]:
    """The keys one party is given: ``{"in": {s: K(s→me)}, "out": {r: K(me→r)}}`` over every other party.
    Nothing in it authenticates a frame between two other parties.  O(|parties|)."""
    others = [p for p in parties if p != me]
    return {"in": {s: pair_key(secret, s, me) for s in others},
            "out": {r: pair_key(secret, me, r) for r in others}}


def _mac(key: bytes, *parts: bytes) -> bytes:
    h = hmac.new(key, digestmod=hashlib.sha256)
    for p in parts:
        h.update(p)
    return h.digest()


# ------------------------------------------------------------------------------------------------ caps
@dataclass(frozen=True)
class Plan:
    """What every party is told about the run before it starts (the run's declared sizes).

    Attributes
    ----------
    parties : tuple of str
        The locations, then the sTTP; a party's position is its id on the wire.
    points : dict
        Per location, the points of its dataset chains: |ω| + β + 1 (data, own dummies, v_C).  Every other
        location sees this number during the encryption chain anyway.
    gamma_json : dict
        Per location, the bytes of its published γ as a JSON list (γ is public).
    gamma_count : dict
        Per location, |γ|.
    dc_size : int
        |D_C|, the sTTP's lock dummies.
    """

    parties: tuple[str, ...]
    points: dict[str, int]
    gamma_json: dict[str, int]
    gamma_count: dict[str, int]
    dc_size: int


def _json_len(x: str) -> int:
    return len(json.dumps(x))      # the encoder's own escaping (ensure_ascii): exact


def declare(data: Mapping[str, tuple[list[str], list[str]]], beta: Mapping[str, int], dc_size: int) -> Plan:
    """The run's declared sizes from each location's (γ, ω) and β.  O(size of the γ's).

    Raises :class:`~graphlink.errors.ReleaseError` beyond 65,534 locations (a party's id is two bytes)."""
    locs = list(data)
    if len(locs) + 1 > 0xFFFF:
        raise ReleaseError(f"the secure protocol takes at most 65,534 locations, not {len(locs)}")
    return Plan(parties=(*locs, M.STTP),
                points={c: len(om) + int(beta.get(c, 0)) + 1 for c, (_, om) in data.items()},
                gamma_json={c: 2 + sum(_json_len(str(x)) + 1 for x in gam) for c, (gam, _) in data.items()},
                gamma_count={c: len(gam) for c, (gam, _) in data.items()},
                dc_size=int(dc_size))


def frame_cap(plan: Plan, kind: str, sender: str, recipient: str) -> int | None:
    """The largest body (one encoded message) of ``kind`` that ``sender`` may send ``recipient`` in this run,
    or None when the protocol never sends that kind from ``sender`` to ``recipient``.

    Each cap is the largest legitimate message of its kind given the declared sizes, plus :data:`MARGIN`
    and room for every name the message can carry: points are ``POINT_BYTES`` each (a dataset chain of
    location o carries at most ``points[o]`` points, ``points[o] + |D_C|`` on the return pass, the sTTP's
    chain |D_C|; a preview shows location r at most its own submitted values, since the secure DEDUP
    returns every ciphertext at most once, Lemma 15); names and γ's count their exact JSON length.  So a
    short message (a report, a verdict on nothing, an unlock key) gets a cap of a few KiB however large the
    data.  O(|L|) for the kinds that carry every location's name, O(1) otherwise.
    """
    sttp = M.STTP
    locs = plan.parties[:-1]
    if sender == recipient or sender not in plan.parties or recipient not in plan.parties:
        return None
    names = 2 + sum(_json_len(c) + 1 for c in locs)
    longest = max(_json_len(c) for c in plan.parties)
    base = MARGIN + 4 * longest
    dc = plan.dc_size

    def own(o: str) -> int:              # the points of o's dataset chain
        return dc if o == sttp else plan.points[o]

    s_loc, r_loc = sender != sttp, recipient != sttp
    if kind == "setup" and not s_loc:
        return base + names + POINT_BYTES
    if kind == "encrypt-request" and r_loc:
        return base + POINT_BYTES * own(sender)
    if kind == "encrypt-reply" and s_loc:
        return base + POINT_BYTES * own(recipient)
    if kind == "decrypt-request" and s_loc and r_loc:
        return base + POINT_BYTES * (own(sender) + dc)
    if kind == "decrypt-reply" and s_loc and r_loc:
        return base + POINT_BYTES * (own(recipient) + dc)
    if s_loc and not r_loc:              # location -> sTTP
        if kind == "publish-identified":
            return base + plan.gamma_json[sender]
        if kind == "submission":
            return base + POINT_BYTES * own(sender)
        if kind in ("decryption-report", "alarm", "finished"):
            return base
        if kind == "preview-verdict":
            blamed = sum(plan.points.values()) + len(locs) * sum(plan.gamma_count.values())
            return base + blamed * (longest + 1)
    if not s_loc and r_loc:              # sTTP -> location
        if kind == "return":
            return base + POINT_BYTES * own(recipient)
        if kind == "locked-return":
            return base + POINT_BYTES * (own(recipient) + 2 * dc)
        if kind in ("abort", "unlock"):
            return base + 4 * TAG_BYTES
        if kind == "preview":
            known = own(recipient)
            return (base + 2 * names + 24 * len(locs) + sum(plan.gamma_json.values())
                    + known * (POINT_BYTES + longest + 1))
    return None


def frame_caps(plan: Plan, me: str) -> dict[tuple[str, str], int]:
    """``{(sender, kind): cap}`` for every frame ``me`` may receive.  O(|L|² · kinds)."""
    out: dict[tuple[str, str], int] = {}
    for s in plan.parties:
        for kind in KINDS:
            cap = frame_cap(plan, kind, s, me)
            if cap is not None:
                out[(s, kind)] = cap
    return out


# ------------------------------------------------------------------------------------------------ sending
def hello(key: bytes, challenge: bytes, sender_id: int, recipient_id: int) -> bytes:
    """The 40-byte hello answering ``challenge``.  O(1)."""
    fields = struct.pack(">4sHH", MAGIC, sender_id, recipient_id)
    return fields + _mac(key, b"hello", challenge, fields)


def frame(key: bytes, sender_id: int, recipient_id: int, kind: str, seq: int, body: bytes) -> bytes:
    """One frame on the wire: authenticated header, body, body tag.  O(len(body))."""
    fields = _HEAD_FIELDS.pack(sender_id, _KIND_CODE[kind], seq, len(body))
    head = fields + _mac(key, b"head", struct.pack(">H", recipient_id), fields)
    return head + body + _mac(key, b"body", fields, body)


def recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """Exactly ``n`` bytes from a blocking socket, or None at end of stream.  O(n)."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class Sender:
    """One party's outgoing connections: one per recipient, opened on first use with the challenge and
    hello, and opened again (until ``connect_seconds`` pass) when the listener closed it before its
    acknowledgement (it pushes out the oldest waiting connection when connections from outside the run
    crowd it).  Sequence numbers count per recipient from 0.  O(frame) per send."""

    def __init__(self, plan: Plan, me: str, keys_out: Mapping[str, bytes], ports: Mapping[str, int], *,
                 host: str = "127.0.0.1", connect_seconds: float = CONNECT_SECONDS,
                 handshake_seconds: float = HANDSHAKE_SECONDS) -> None:
        self.ids = {name: i for i, name in enumerate(plan.parties)}
        self.me, self.keys, self.ports, self.host = me, dict(keys_out), dict(ports), host
        self.connect_seconds, self.handshake_seconds = connect_seconds, handshake_seconds
        self.socks: dict[str, socket.socket] = {}
        self.seq: dict[str, int] = {}
        self.reconnects = 0

    def _connect(self, recipient: str) -> socket.socket:
        deadline = time.monotonic() + self.connect_seconds
        wait = 0.02
        why = "no answer"
        while True:
            s = None
            try:
                s = socket.create_connection((self.host, self.ports[recipient]), timeout=self.handshake_seconds)
                challenge = recv_exact(s, CHALLENGE_BYTES)
                if challenge is not None:
                    s.sendall(hello(self.keys[recipient], challenge, self.ids[self.me], self.ids[recipient]))
                    if recv_exact(s, 1) == ACK:
                        s.settimeout(None)
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        return s
                why = "the connection was closed before the acknowledgement"
            except OSError as exc:
                why = exc.__class__.__name__
            if s is not None:
                s.close()
            if time.monotonic() + wait > deadline:
                raise ConnectionError(f"{self.me} could not open an authenticated connection to {recipient} "
                                      f"within {self.connect_seconds:.0f} s ({why})")
            self.reconnects += 1
            time.sleep(wait)
            wait = min(2 * wait, 1.0)

    def send(self, recipient: str, kind: str, body: bytes) -> None:
        """Send one encoded message of ``kind`` to ``recipient``."""
        s = self.socks.get(recipient)
        if s is None:
            s = self.socks[recipient] = self._connect(recipient)
        seq = self.seq.get(recipient, 0)
        self.seq[recipient] = seq + 1
        s.sendall(frame(self.keys[recipient], self.ids[self.me], self.ids[recipient], kind, seq, body))

    def close(self) -> None:
        """Close every outgoing connection.  O(connections)."""
        for s in self.socks.values():
            s.close()


# ------------------------------------------------------------------------------------------------ receiving
@dataclass
class _Waiting:
    sock: socket.socket
    host: str
    peer: str
    challenge: bytes
    deadline: float
    buf: bytearray


class Listener:
    """Turns connections to one party's listening socket into authenticated frames (see the module doc).

    ``deliver(sender, kind, body)`` gets every frame whose header and body were authenticated as coming from
    ``sender``.  :meth:`serve` runs the accept and hello loop in the calling thread (one selector, no thread
    per waiting connection); each authenticated connection gets a reader thread (at most one per other
    party).  ``stats`` counts what happened (``accepted``, ``authenticated``, ``refused``, ``timed_out``,
    ``pushed_out``, ``closed_early``, ``unauthenticated_bytes``, ``peak_waiting``, ``peak_waiting_per_address``,
    ``frames``).
    """

    def __init__(self, server: socket.socket, plan: Plan, me: str, keys_in: Mapping[str, bytes],
                 deliver: Callable[[str, str, bytes], None], *, handshake_seconds: float = HANDSHAKE_SECONDS,
                 pending_total: int = PENDING_TOTAL, pending_per_address: int = PENDING_PER_ADDRESS) -> None:
        self.server, self.plan, self.me, self.keys = server, plan, me, dict(keys_in)
        self.deliver = deliver
        self.handshake_seconds = handshake_seconds
        self.pending_total, self.pending_per_address = pending_total, pending_per_address
        self.names = plan.parties
        self.my_id = plan.parties.index(me)
        self.caps = frame_caps(plan, me)
        self.stats: Counter = Counter()
        self._lock = threading.Lock()
        self._active: set[str] = set()
        self._expected: dict[str, int] = {s: 0 for s in self.keys}
        self._logged: Counter = Counter()
        self._waiting: dict[socket.socket, _Waiting] = {}
        self._closed = threading.Event()

    # ---------------------------------------------------------------- logging
    def _refuse(self, reason: str, peer: str, text: str) -> None:
        with self._lock:
            self.stats["refused"] += 1
            self._logged[reason] += 1
            n = self._logged[reason]
        if n <= LOG_LINES_PER_REASON:
            log.warning("graphlink secure: %s refused a connection from %s: %s; connection closed",
                        self.me, peer, text)
        if n == LOG_LINES_PER_REASON:
            log.warning("graphlink secure: %s: further refusals of this kind are counted, not logged", self.me)

    # ---------------------------------------------------------------- accept and hello
    def close(self) -> None:
        """Stop serving: the loop ends and waiting connections are closed."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self.server.close()

    def _drop(self, sel: selectors.BaseSelector, w: _Waiting) -> None:
        self._waiting.pop(w.sock, None)
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(w.sock)
        w.sock.close()

    def _admit(self, sel: selectors.BaseSelector, conn: socket.socket, addr) -> None:
        host = str(addr[0])
        peer = f"{addr[0]}:{addr[1]}"
        self.stats["accepted"] += 1
        # room first: the oldest waiting connection of this address, then the oldest overall, goes out
        same = [w for w in self._waiting.values() if w.host == host]
        while len(same) >= self.pending_per_address:
            self._drop(sel, same.pop(0))
            self.stats["pushed_out"] += 1
        while len(self._waiting) >= self.pending_total:
            self._drop(sel, next(iter(self._waiting.values())))
            self.stats["pushed_out"] += 1
        challenge = secrets.token_bytes(CHALLENGE_BYTES)
        try:
            conn.setblocking(False)
            conn.send(challenge)           # 16 bytes into an empty send buffer: never partial
        except OSError:
            conn.close()
            return
        w = _Waiting(conn, host, peer, challenge, time.monotonic() + self.handshake_seconds, bytearray())
        self._waiting[conn] = w
        sel.register(conn, selectors.EVENT_READ, w)
        self.stats["peak_waiting"] = max(self.stats["peak_waiting"], len(self._waiting))
        self.stats["peak_waiting_per_address"] = max(self.stats["peak_waiting_per_address"], len(same) + 1)

    def _hello(self, sel: selectors.BaseSelector, w: _Waiting) -> None:
        try:
            chunk = w.sock.recv(HELLO.size - len(w.buf))     # never more than the hello
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.stats["closed_early"] += 1
            self._drop(sel, w)
            return
        self.stats["unauthenticated_bytes"] += len(chunk)
        w.buf += chunk
        if len(w.buf) < HELLO.size:
            return
        magic, sid, rid, tag = HELLO.unpack(bytes(w.buf))
        sender = self.names[sid] if sid < len(self.names) else None
        key = self.keys.get(sender) if sender is not None else None
        if magic != MAGIC or rid != self.my_id or key is None or not hmac.compare_digest(
                tag, _mac(key, b"hello", w.challenge, bytes(w.buf[:8]))):
            self._drop(sel, w)
            self._refuse("hello", w.peer, "no valid hello for this run")
            return
        with self._lock:
            taken = sender in self._active
            if not taken:
                self._active.add(sender)
        if taken:
            self._drop(sel, w)
            self._refuse("second", w.peer, f"{sender} already has an authenticated connection")
            return
        self._waiting.pop(w.sock, None)
        sel.unregister(w.sock)
        try:
            w.sock.setblocking(True)
            w.sock.sendall(ACK)
        except OSError:
            w.sock.close()
            with self._lock:
                self._active.discard(sender)
            return
        self.stats["authenticated"] += 1
        threading.Thread(target=self._read_frames, args=(w.sock, sender, w.peer), daemon=True,
                         name=f"stranon-read-{sender}").start()

    def serve(self) -> None:
        """Accept connections and read hellos until :meth:`close` (or the listening socket fails)."""
        sel = selectors.DefaultSelector()
        self.server.setblocking(False)
        sel.register(self.server, selectors.EVENT_READ, None)
        try:
            while not self._closed.is_set():
                now = time.monotonic()
                for w in [w for w in self._waiting.values() if w.deadline <= now]:
                    self._drop(sel, w)
                    self.stats["timed_out"] += 1
                    self._refuse("timeout", w.peer, f"no hello within {self.handshake_seconds:g} s")
                nxt = min((w.deadline for w in self._waiting.values()), default=now + 1.0)
                for key, _ in sel.select(timeout=max(0.0, min(nxt - now, 1.0))):
                    if key.data is None:
                        while True:
                            try:
                                conn, addr = self.server.accept()
                            except (BlockingIOError, InterruptedError):
                                break
                            self._admit(sel, conn, addr)
                    elif key.data.sock in self._waiting:
                        self._hello(sel, key.data)
        except (OSError, ValueError):      # the listening socket was closed
            pass
        finally:
            for w in list(self._waiting.values()):
                self._drop(sel, w)
            sel.close()

    # ---------------------------------------------------------------- frames of an authenticated sender
    def _read_frames(self, conn: socket.socket, sender: str, peer: str) -> None:
        key = self.keys[sender]
        sid = self.names.index(sender)
        rid = struct.pack(">H", self.my_id)
        try:
            while True:
                head = recv_exact(conn, HEADER.size)
                if head is None:
                    return
                fields, tag = head[:-TAG_BYTES], head[-TAG_BYTES:]
                s, code, seq, length = _HEAD_FIELDS.unpack(fields)
                if s != sid or not hmac.compare_digest(tag, _mac(key, b"head", rid, fields)):
                    self._refuse("header", peer, f"a frame header on {sender}'s connection is not authenticated")
                    return
                kind = KINDS[code] if code < len(KINDS) else f"kind {code}"
                cap = self.caps.get((sender, kind))
                if cap is None:
                    self._refuse("kind", peer, f"{sender} never sends {kind} to {self.me}")
                    return
                if length > cap:
                    self._refuse("length", peer, f"{kind} of {length} bytes from {sender} is above its limit of "
                                                 f"{cap} bytes (refused before its body)")
                    return
                with self._lock:
                    fresh = seq == self._expected[sender]
                    if fresh:
                        self._expected[sender] += 1
                if not fresh:
                    self._refuse("sequence", peer, f"frame {seq} from {sender} is out of sequence (replayed?)")
                    return
                rest = recv_exact(conn, length + TAG_BYTES)
                if rest is None:
                    return
                body, btag = rest[:-TAG_BYTES], rest[-TAG_BYTES:]
                if not hmac.compare_digest(btag, _mac(key, b"body", fields, body)):
                    self._refuse("body", peer, f"the body of {kind} from {sender} is not authenticated")
                    return
                with self._lock:
                    self.stats["frames"] += 1
                self.deliver(sender, kind, body)
        except OSError:
            return
        finally:
            # free the sender's slot before the peer can see the close: a sender that reconnects at once (after a
            # refused frame) must not find its old connection still counted
            with self._lock:
                self._active.discard(sender)
            conn.close()
