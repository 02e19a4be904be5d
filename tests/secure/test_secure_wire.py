"""The loopback transport's authenticated framing (graphlink/secure/wire.py) against real sockets: keys per
pair of parties, the hello, caps per message kind checked before a body is read, sequence numbers, and the
limits on connections from outside the run; the caps hold every frame of real protocol runs."""

from __future__ import annotations

import contextlib
import queue
import socket
import struct
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlink.secure import messages as M
from graphlink.secure import wire
from graphlink.secure.protocol import run_stranon

DATA = {
    "A": (["p1", "p2", "p3", "p4", "p5"], ["s1", "s2"]),
    "S": (["p1", "p3", "p5", "p6"], ["s3", "s5", "s6"]),
    "X": (["p2", "p4", "p6", "p7"], ["s4", "s6", "s7"]),
}
PLAN = wire.declare(DATA, {c: 2 for c in DATA}, 4)
SECRET = bytes(range(100, 132))       # a fixed run secret: these tests check what is derived from it
PARTIES = PLAN.parties


class Party:
    """A Listener for ``me`` on a real loopback socket, serving in a thread; frames land in ``inbox``."""

    def __init__(self, me: str = "X", **kw) -> None:
        self.me = me
        self.inbox: queue.Queue = queue.Queue()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(128)
        self.port = self.server.getsockname()[1]
        keys = wire.party_keys(SECRET, PARTIES, me)["in"]
        self.listener = wire.Listener(self.server, PLAN, me, keys,
                                      lambda s, k, b: self.inbox.put((s, k, b)), **kw)
        self.thread = threading.Thread(target=self.listener.serve, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=5)


@pytest.fixture
def party():
    made: list[Party] = []

    def make(me: str = "X", **kw) -> Party:
        made.append(Party(me, **kw))
        return made[-1]

    yield make
    for p in made:
        p.close()


def _connect(port: int, key: bytes, sender: str, recipient: str, source: str = "127.0.0.1"):
    """Hello as ``sender`` with ``key``: the authenticated socket, or None when the listener refuses it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    challenge = wire.recv_exact(s, wire.CHALLENGE_BYTES)
    s.sendall(wire.hello(key, challenge, PARTIES.index(sender), PARTIES.index(recipient)))
    try:
        ok = wire.recv_exact(s, 1) == wire.ACK
    except OSError:
        ok = False
    if ok:
        return s
    s.close()
    return None


def _closed_by_peer(s: socket.socket, timeout: float = 10) -> bool:
    """True once the peer has closed ``s`` (end of stream or reset), reading and dropping what arrives."""
    s.settimeout(timeout)
    try:
        while s.recv(1 << 16):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass
    return True


def _frame_on(s: socket.socket, sender: str, recipient: str, kind: str, seq: int, body: bytes) -> None:
    s.sendall(wire.frame(wire.pair_key(SECRET, sender, recipient), PARTIES.index(sender), PARTIES.index(recipient),
                         kind, seq, body))


# ------------------------------------------------------------------------------------------------ keys
def test_every_ordered_pair_has_its_own_key_and_a_party_holds_only_its_own():
    """n(n−1) distinct keys; a party's keys are exactly those of the pairs it belongs to."""
    pairs = [(s, r) for s in PARTIES for r in PARTIES if s != r]
    keys = {p: wire.pair_key(SECRET, *p) for p in pairs}
    assert len(set(keys.values())) == len(pairs)
    assert wire.pair_key(bytes(32), "A", "X") != keys[("A", "X")]
    for me in PARTIES:
        held = wire.party_keys(SECRET, PARTIES, me)
        assert held["in"] == {s: keys[(s, me)] for s in PARTIES if s != me}
        assert held["out"] == {r: keys[(me, r)] for r in PARTIES if r != me}
        others = {k for (s, r), k in keys.items() if me not in (s, r)}
        assert not others & {*held["in"].values(), *held["out"].values()}
    # names are length-prefixed: no two pairs share the derivation's input
    assert wire.pair_key(SECRET, "ab", "c") != wire.pair_key(SECRET, "a", "bc")


def test_honest_frames_arrive_authenticated_and_in_order(party):
    p = party("X")
    sender = wire.Sender(PLAN, "A", wire.party_keys(SECRET, PARTIES, "A")["out"], {"X": p.port})
    bodies = [b"first", b"second" * 100, b""]
    for b in bodies:
        sender.send("X", "encrypt-request", b)
    got = [p.inbox.get(timeout=10) for _ in bodies]
    sender.close()
    assert got == [("A", "encrypt-request", b) for b in bodies]
    assert p.listener.stats["authenticated"] == 1


@pytest.mark.parametrize("holder", [n for n in PARTIES if n != "X"])
def test_a_partys_keys_cannot_pass_as_another_party(party, holder):
    """Every key ``holder`` holds, used in a hello claiming to be any other party, is refused by X; the key
    of that other party's pair is accepted (the control).  On the holder's own authenticated connection, a
    header naming another sender is refused too."""
    p = party("X")
    held = wire.party_keys(SECRET, PARTIES, holder)
    for claimed in PARTIES:
        if claimed in (holder, "X"):
            continue
        for key in [*held["in"].values(), *held["out"].values()]:
            assert _connect(p.port, key, claimed, "X") is None
        good = _connect(p.port, wire.pair_key(SECRET, claimed, "X"), claimed, "X")
        assert good is not None
        good.close()
    s = _connect(p.port, held["out"]["X"], holder, "X")
    assert s is not None
    other = next(c for c in PARTIES if c not in (holder, "X"))
    fields = struct.pack(">HBQI", PARTIES.index(other), wire.KINDS.index("encrypt-request"), 0, 3)
    tag = wire._mac(held["out"]["X"], b"head", struct.pack(">H", PARTIES.index("X")), fields)
    s.sendall(fields + tag)
    assert _closed_by_peer(s)
    s.close()
    assert p.inbox.empty()


# ------------------------------------------------------------------------------------------------ what is read
def test_unauthenticated_peers_get_at_most_a_hello_read(party):
    """Connections that send a megabyte of junk each: at most 40 bytes of each are read, all are refused,
    nothing is delivered."""
    p = party("X")
    socks = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
        with contextlib.suppress(OSError):
            s.sendall(struct.pack(">I", 1 << 20) + bytes(1 << 19))
        socks.append(s)
    assert all(_closed_by_peer(s) for s in socks)
    for s in socks:
        s.close()
    assert p.listener.stats["unauthenticated_bytes"] <= 20 * wire.HELLO.size
    assert p.listener.stats["refused"] == 20 and p.inbox.empty()


def test_a_frame_above_its_kinds_cap_is_refused_before_its_body(party):
    """An authenticated party announces an encryption request one byte above its cap, or a kind it never
    sends to this party: the listener closes the connection after the header, though no body was sent.  A
    frame exactly at the cap is delivered."""
    p = party("X")
    cap = wire.frame_cap(PLAN, "encrypt-request", "A", "X")
    key = wire.pair_key(SECRET, "A", "X")
    for kind, length in (("encrypt-request", cap + 1), ("unlock", 10), ("finished", 10)):
        s = _connect(p.port, key, "A", "X")
        fields = struct.pack(">HBQI", PARTIES.index("A"), wire.KINDS.index(kind), 0, length)
        s.sendall(fields + wire._mac(key, b"head", struct.pack(">H", PARTIES.index("X")), fields))
        assert _closed_by_peer(s), kind
        s.close()
    s = _connect(p.port, key, "A", "X")
    _frame_on(s, "A", "X", "encrypt-request", 0, bytes(cap))
    assert p.inbox.get(timeout=10) == ("A", "encrypt-request", bytes(cap))
    s.close()


def test_a_replayed_frame_is_refused(party):
    """The same authenticated frame sent again (on a new connection) is out of sequence: delivered once."""
    p = party("X")
    key = wire.pair_key(SECRET, "A", "X")
    raw = wire.frame(key, PARTIES.index("A"), PARTIES.index("X"), "encrypt-request", 0, b"payload")
    s = _connect(p.port, key, "A", "X")
    s.sendall(raw)
    assert p.inbox.get(timeout=10) == ("A", "encrypt-request", b"payload")
    s.close()
    deadline = time.monotonic() + 10
    s2 = None
    while s2 is None and time.monotonic() < deadline:      # the first connection's slot frees when it closes
        s2 = _connect(p.port, key, "A", "X")
    assert s2 is not None
    s2.sendall(raw)
    assert _closed_by_peer(s2)
    s2.close()
    assert p.inbox.empty()


def test_one_authenticated_connection_per_sender(party):
    p = party("X")
    key = wire.pair_key(SECRET, "A", "X")
    first = _connect(p.port, key, "A", "X")
    assert first is not None
    assert _connect(p.port, key, "A", "X") is None
    _frame_on(first, "A", "X", "encrypt-request", 0, b"still served")
    assert p.inbox.get(timeout=10) == ("A", "encrypt-request", b"still served")
    first.close()


def test_waiting_connections_are_capped_per_address_and_in_total_and_time_out(party):
    """Silent connections from three loopback addresses: never more than 4 wait per address or 8 in all
    (older ones are pushed out), an honest sender still gets through while they keep coming, and every
    silent connection is closed within the handshake timeout."""
    p = party("X", handshake_seconds=1.0, pending_total=8, pending_per_address=4)
    silent = []
    for i in range(60):
        silent.append(socket.create_connection(("127.0.0.1", p.port), timeout=10,
                                               source_address=(f"127.0.0.{1 + i % 3}", 0)))
    sender = wire.Sender(PLAN, "S", wire.party_keys(SECRET, PARTIES, "S")["out"], {"X": p.port})
    sender.send("X", "decrypt-request", b"through the crowd")
    assert p.inbox.get(timeout=10) == ("S", "decrypt-request", b"through the crowd")
    assert all(_closed_by_peer(s, timeout=10) for s in silent)
    for s in silent:
        s.close()
    sender.close()
    st_ = p.listener.stats
    assert st_["peak_waiting"] <= 8 and st_["peak_waiting_per_address"] <= 4
    assert st_["pushed_out"] + st_["timed_out"] >= 60 - 8
    assert st_["timed_out"] >= 1


# ------------------------------------------------------------------------------------------------ caps
def test_short_messages_get_small_caps_however_large_the_data():
    """A report, an alarm, an abort or an unlock key is capped at a few KiB even when a γ holds a million
    names; the messages that carry γ or datasets are capped by them."""
    big = {c: ([f"person-{c}-{i}" for i in range(10**6 if c == "A" else 3)], om) for c, (_, om) in DATA.items()}
    plan = wire.declare(big, {c: 2 for c in big}, 4)
    for kind, s, r in [("finished", "A", "sTTP"), ("alarm", "A", "sTTP"), ("decryption-report", "A", "sTTP"),
                       ("abort", "sTTP", "A"), ("unlock", "sTTP", "A")]:
        assert wire.frame_cap(plan, kind, s, r) < 8 << 10, kind
    assert wire.frame_cap(plan, "publish-identified", "A", "sTTP") > 10**6 * 16
    assert wire.frame_cap(plan, "publish-identified", "S", "sTTP") < 8 << 10
    # kinds that never go that way have no cap at all
    assert wire.frame_cap(plan, "abort", "A", "X") is None
    assert wire.frame_cap(plan, "submission", "A", "X") is None
    assert wire.frame_cap(plan, "setup", "A", "sTTP") is None


_name = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)


@st.composite
def _runs(draw):
    """A small release with arbitrary names (quotes, control characters, non-ASCII) and random settings."""
    n_locs = draw(st.integers(2, 4))
    locs = draw(st.lists(_name.filter(lambda x: x != M.STTP), min_size=n_locs, max_size=n_locs, unique=True))
    n_subj = draw(st.integers(3, 14))
    people = draw(st.lists(_name, min_size=n_subj, max_size=n_subj, unique=True))
    values = [f"v{i}:{p}" for i, p in enumerate(people)]
    data, pairs = {}, {}
    for c in locs:
        seen = draw(st.lists(st.booleans(), min_size=n_subj, max_size=n_subj))
        kept = draw(st.lists(st.booleans(), min_size=n_subj, max_size=n_subj))
        gam = [people[i] for i in range(n_subj) if seen[i]]
        om = [values[i] for i in range(n_subj) if seen[i] and kept[i]]
        data[c] = (gam, om)
        pairs[c] = {people[i]: values[i] for i in range(n_subj) if seen[i] and kept[i]}
    opts = {"alpha": draw(st.integers(0, 2)), "beta": draw(st.integers(0, 3)), "integrity": draw(st.booleans()),
            "locking": draw(st.booleans()), "dc_size": draw(st.integers(0, 4)),
            "contributor_veto": draw(st.booleans()), "certify": draw(st.booleans()),
            "method": draw(st.sampled_from(["greedy-dedup-secure", "force-dedup-secure"]))}
    return data, pairs, opts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_every_frame_of_a_real_run_fits_its_cap(run):
    """Property: in runs of the real protocol (every option, arbitrary names), every frame a party sends has
    a cap for its kind, sender and recipient, and fits it."""
    data, pairs, opts = run
    method = opts.pop("method")
    res = run_stranon(data, 2, method, keep_messages=True, pairs=pairs, **opts)
    beta = {c: (opts["beta"] if opts["integrity"] else 0) for c in data}
    plan = wire.declare(data, beta, opts["dc_size"])
    assert res.frames
    for recipient, frame in res.frames:
        msg = M.decode(frame)
        cap = wire.frame_cap(plan, msg.kind, msg.sender, recipient)
        assert cap is not None, (msg.kind, msg.sender, recipient)
        assert len(frame) <= cap, (msg.kind, len(frame), cap)
