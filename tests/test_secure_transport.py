"""The loopback transport under attack: frames from outside the run, a party that dies, a party that sends a
malformed message, frames that do not decode, and the time limit sized to the work."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import time

import pytest

from graphlink.errors import ProtocolError
from graphlink.secure import messages as M
from graphlink.secure.crypto import random_point
from graphlink.secure.parties import Behaviour
from graphlink.secure.protocol import run_stranon
from graphlink.secure.transport import FLOOR_SECONDS, frame_limit, run_processes, work_timeout

DATA = {
    "A": (["p1", "p2", "p3", "p4", "p5"], ["s1", "s2"]),
    "S": (["p1", "p3", "p5", "p6"], ["s3", "s5", "s6"]),
    "X": (["p2", "p4", "p6", "p7"], ["s4", "s6", "s7"]),
}


def _send(port: int, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(payload)


@pytest.mark.slow
def test_frames_from_outside_the_run_are_refused_and_the_run_completes(capfd):
    """An oversized length, a garbage frame and a well-formed message without the run's key, sent to every
    party before the run starts: each is refused in one logged line (nothing parsed), and the run finishes."""
    forged = M.encode(M.Abort(sender="sTTP", recipient="A", session="x" * 32, reason="forged"))

    def attack(ports: dict[str, int], pids: dict[str, int]) -> None:
        for port in ports.values():
            _send(port, struct.pack(">I", 0xFFFFFFF0) + b"x" * 64)              # length beyond the limit
            _send(port, struct.pack(">I", 80) + os.urandom(80))                 # random bytes
            _send(port, struct.pack(">I", 32 + len(forged)) + bytes(32) + forged)   # right shape, no key

    res = run_processes(DATA, 2, "greedy-dedup-secure", alpha=1, beta=2, locking=True, dc_size=4,
                        on_start=attack)
    assert res.aborted is None
    assert sum(len(v) for v in res.disclosed.values()) > 0
    err = capfd.readouterr().err
    refused = [line for line in err.splitlines() if "refused a frame" in line]
    assert len(refused) == 3 * (len(DATA) + 1), err
    assert sum("length" in line for line in refused) == len(DATA) + 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_party_that_dies_stops_the_run_at_once():
    """A killed party process ends the run within seconds with one line naming it (not a wait of the whole
    time limit)."""
    def kill(ports: dict[str, int], pids: dict[str, int]) -> None:
        os.kill(pids["X"], signal.SIGKILL)

    t0 = time.monotonic()
    with pytest.raises(ProtocolError, match="party X exited unexpectedly") as exc:
        run_processes(DATA, 2, "greedy-dedup-secure", alpha=1, beta=2, timeout=600, on_start=kill)
    assert time.monotonic() - t0 < 60
    assert "\n" not in str(exc.value)


@pytest.mark.slow
def test_a_malformed_message_from_a_party_stops_the_run_with_one_line():
    """S answers A's decryption request with one point missing (an authenticated but malformed message): A
    refuses it instead of losing a value, and the launcher stops every party at once."""
    t0 = time.monotonic()
    with pytest.raises(ProtocolError, match="party A could not handle decrypt-reply from S") as exc:
        run_processes(DATA, 2, "greedy-dedup-secure", alpha=1, beta=2, timeout=600,
                      behaviours={"S": Behaviour("short-reply", victim="A")})
    assert time.monotonic() - t0 < 60
    assert "does not answer the request" in str(exc.value) and "\n" not in str(exc.value)


def test_short_reply_is_refused_in_process_too():
    with pytest.raises(M.MessageError, match="does not answer the request"):
        run_stranon(DATA, 2, alpha=1, beta=2, behaviours={"S": Behaviour("short-reply", victim="A")})


@pytest.mark.parametrize("frame", [
    b"", b"\x00\x00", b"\x00\x00\x00\x09{}", b"\x00\x00\x00\x02[]",
    b"\x00\x00\x00\x03NaN",
    b"\x00\x00\x00\x10" + b'{"kind":"nope"}' + b" ",
    struct.pack(">I", 200_000) + b"[" * 100_000 + b"]" * 100_000,
])
def test_decode_refuses_malformed_frames_with_one_line(frame):
    with pytest.raises(M.MessageError) as exc:
        M.decode(frame)
    assert "\n" not in str(exc.value)


def _frame(header: dict, blob: bytes = b"") -> bytes:
    h = json.dumps(header).encode()
    return struct.pack(">I", len(h)) + h + blob


BASE = {"sender": "A", "recipient": "S", "session": "s"}


@pytest.mark.parametrize(("header", "blob", "why"), [
    ({"kind": "encrypt-request", **BASE, "owner": "A", "points": 2}, b"x" * 32, "past the end"),
    ({"kind": "encrypt-request", **BASE, "owner": "A", "points": -1}, b"", "non-negative"),
    ({"kind": "encrypt-request", **BASE, "owner": "A", "points": True}, b"", "non-negative"),
    ({"kind": "encrypt-request", **BASE, "owner": "A", "points": 1}, b"\xff" * 32, "ristretto255"),
    ({"kind": "encrypt-request", **BASE, "owner": 7, "points": 0}, b"", "wrong type"),
    ({"kind": "setup", **BASE, "k": "2"}, b"", "wrong type"),
    ({"kind": "setup", **BASE, "locations": ["a", 1]}, b"", "wrong type"),
    ({"kind": "unlock", **BASE, "key": "00"}, b"", "wrong type"),
    ({"kind": "unlock", **BASE, "key": {"__hex__": "zz"}}, b"", "not hex"),
    ({"kind": "preview", **BASE, "counts": {"a": "1"}}, b"", "wrong type"),
    ({"kind": "alarm", **BASE, "extra": 1}, b"", "unknown field"),
    ({"kind": "alarm", "sender": "A", "recipient": "S"}, b"", "missing field"),
])
def test_decode_checks_every_field(header, blob, why):
    with pytest.raises(M.MessageError, match=why):
        M.decode(_frame(header, blob))


def test_every_message_round_trips():
    p = random_point()
    msgs = [M.Setup("sTTP", "A", "s", locations=["A", "B"], k=3, common_dummy=[p], locking=True),
            M.DecryptRequest("A", "B", "s", owner="A", points=[p, p], purpose="check", round=2),
            M.Preview("sTTP", "A", "s", counts={"A": 2}, known=[p], known_at=["A"], gamma={"A": ["x"]}),
            M.Unlock("sTTP", "A", "s", key=b"\x01" * 32), M.Finished("A", "sTTP", "s", disclosed=4)]
    for m in msgs:
        assert M.decode(M.encode(m)) == m


def test_limits_are_sized_to_the_work():
    """The frame limit holds the largest message of the run; the time limit grows with the scalar
    multiplications and never falls below the floor."""
    beta = {c: 2 for c in DATA}
    limit = frame_limit(DATA, beta, 4)
    biggest = M.encode(M.Preview("sTTP", "A", "s" * 32, counts={c: 9 for c in DATA}, known=[random_point()] * 8,
                                 known_at=["A"] * 8, gamma={c: g for c, (g, _) in DATA.items()}))
    assert len(biggest) < limit < 2 << 20
    small = work_timeout(DATA, {c: 1 for c in DATA}, beta, 4)
    big = work_timeout({c: (g * 1000, om * 1000) for c, (g, om) in DATA.items()}, {c: 1 for c in DATA}, beta, 4)
    assert FLOOR_SECONDS <= small < FLOOR_SECONDS + 5 and big > small + 60
