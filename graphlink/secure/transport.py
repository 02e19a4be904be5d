"""STRANON parties as separate OS processes talking over loopback TCP (127.0.0.1).

Each party (every location and the sTTP) runs in its own process (``multiprocessing`` *spawn* context:
nothing is inherited, the child gets only its own constructor arguments). It binds a listening socket on
127.0.0.1 (ephemeral port), reports the port to the launcher over a control pipe, receives the directory
{party: port}, and then exchanges length-prefixed protocol frames (``messages.encode``) directly with its
peers. A reader thread per incoming connection drains the socket into a queue, so two parties sending
large datasets to each other can never deadlock on full socket buffers. The control pipe carries only
setup (own data in, port out), the "stop" command, and the final per-party report (own costs, own
disclosure, message summaries) — never protocol traffic.

Frames on the wire are authenticated: the launcher draws a fresh 32-byte key per run (``secrets``) and gives
it to every party over its control pipe; each frame is ``u32 length | HMAC-SHA256(key, frame) | frame``. A
reader checks the length against the run's frame limit (sized from the data) and the tag *before* anything
is parsed; a connection that sends a bad length or tag is logged in one line and closed, and the party keeps
serving.  An authenticated frame that does not decode, or a message its recipient cannot handle, stops the
run: the party reports one line to the launcher, which stops every party and raises
:class:`~graphlink.errors.ProtocolError` at once (so does a party process that dies).  The launcher waits at
most :func:`work_timeout` seconds, sized to the run's scalar multiplications with a floor.

Cost: the same crypto as in-process; the processes run in parallel on all cores (the parallelism the
thesis assumes in App. C.3.2).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import multiprocessing as mp
import queue
import secrets
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import wait as wait_ready

from graphlink.errors import ProtocolError
from graphlink.secure import messages as M
from graphlink.secure.crypto import POINT_BYTES
from graphlink.secure.parties import Location, SemiTrustedThirdParty, send_frame
from graphlink.secure.report import StranonResult, collect, party_report

_LEN = struct.Struct(">I")
TAG_BYTES = 32
log = logging.getLogger("graphlink.secure")

#: the launcher's waits: the floor of the run's time limit, and the assumed slowest scalar-multiplication
#: rate (about 1/18 of one idle core's, 1/4 of the slowest rate measured on a loaded 2-core machine)
FLOOR_SECONDS = 60.0
SLOWEST_MULTS_PER_SECOND = 1_000.0
STARTUP_SECONDS = 60.0


def frame_limit(data: dict, beta: dict, dc_size: int) -> int:
    """The largest frame any party of this run may send, in bytes: every point of every location (data, v_C,
    dummies, lock dummies) twice over, plus every published name four times over (JSON escaping), plus 1 MiB.
    A longer length prefix is refused before its bytes are read.  O(data)."""
    points = sum(len(om) + 1 + int(beta.get(c, 0)) for c, (_, om) in data.items()) + 2 * dc_size
    names = sum(len(str(x).encode("utf-8")) + 8 for gam, _ in data.values() for x in gam)
    names += sum(len(str(c).encode("utf-8")) + 8 for c in data) * (len(data) + 4)
    return (1 << 20) + 2 * POINT_BYTES * points + 4 * names


def work_timeout(data: dict, alpha: dict, beta: dict, dc_size: int) -> float:
    """Seconds the launcher waits for a run: ``FLOOR_SECONDS`` plus the run's scalar multiplications at
    ``SLOWEST_MULTS_PER_SECOND``.  Per location l with s = |ω_l| + β_l + 1 points: s·(|L| + 2) to encrypt,
    s·(|L| + 1) per check round, (|ω_l| + |D_C|)·(|L| + 2) for the return; plus |D_C|·(|L| + 2) at the sTTP
    (App. C.3.2's counts, rounded up).  O(|L|)."""
    n_loc = len(data)
    mults = dc_size * (n_loc + 2)
    for c, (_, om) in data.items():
        s = len(om) + int(beta.get(c, 0)) + 1
        mults += s * (n_loc + 2) + int(alpha.get(c, 0)) * s * (n_loc + 1) + (len(om) + dc_size) * (n_loc + 2)
    return FLOOR_SECONDS + mults / SLOWEST_MULTS_PER_SECOND


def _tag(key: bytes, frame: bytes) -> bytes:
    return hmac.new(key, frame, hashlib.sha256).digest()


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _reader(sock: socket.socket, q: queue.Queue, key: bytes, limit: int, me: str) -> None:
    """Drain one connection: length, tag and frame; a bad length or tag is logged and ends the connection
    (nothing of the frame is parsed)."""
    try:
        peer = "{}:{}".format(*sock.getpeername()[:2])
    except OSError:
        peer = "?"
    try:
        while True:
            head = _recv_exact(sock, 4)
            if head is None:
                return
            n = _LEN.unpack(head)[0]
            if not TAG_BYTES < n <= TAG_BYTES + limit:
                log.warning("graphlink secure: %s refused a frame from %s: length %d outside %d..%d; "
                            "connection closed", me, peer, n, TAG_BYTES + 1, TAG_BYTES + limit)
                return
            body = _recv_exact(sock, n)
            if body is None:
                return
            tag, frame = body[:TAG_BYTES], body[TAG_BYTES:]
            if not hmac.compare_digest(tag, _tag(key, frame)):
                log.warning("graphlink secure: %s refused a frame from %s: not authenticated for this run; "
                            "connection closed", me, peer)
                return
            q.put(frame)
    except OSError:
        return
    finally:
        sock.close()


def _acceptor(server: socket.socket, q: queue.Queue, key: bytes, limit: int, me: str) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_reader, args=(conn, q, key, limit, me), daemon=True).start()


def _build_party(spec: dict) -> Location | SemiTrustedThirdParty:
    kind = spec.pop("kind")
    return Location(**spec) if kind == "location" else SemiTrustedThirdParty(**spec)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:400]


def party_main(spec: dict, conn) -> None:
    """Entry point of one party process."""
    spec = dict(spec)
    key, limit = spec.pop("auth"), spec.pop("frame_limit")
    kind = spec["kind"]
    party = _build_party(spec)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=_acceptor, args=(server, inbox, key, limit, party.name), daemon=True).start()
    conn.send(("port", server.getsockname()[1]))
    directory = conn.recv()[1]
    out_socks: dict[str, socket.socket] = {}
    sent_log: list[tuple] = []

    def send(msgs) -> None:
        for m in msgs:
            frame, entry = send_frame(party, m)
            sent_log.append(entry)
            s = out_socks.get(m.recipient)
            if s is None:
                s = socket.create_connection(("127.0.0.1", directory[m.recipient]))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                out_socks[m.recipient] = s
            s.sendall(_LEN.pack(TAG_BYTES + len(frame)) + _tag(key, frame) + frame)

    if conn.recv()[0] != "go":
        return

    def control() -> None:  # the launcher's commands join the same queue: the main loop blocks, never polls
        try:
            while True:
                inbox.put(("control", conn.recv()))
        except (EOFError, OSError):
            inbox.put(("control", ("stop",)))

    threading.Thread(target=control, daemon=True).start()
    try:
        if kind == "sttp":
            send(party.start())
        done_reported = False
        while True:
            item = inbox.get()
            if isinstance(item, tuple):
                if item[1][0] == "stop":
                    break
                continue
            what = "a frame"
            try:
                msg = M.decode(item)
                what = f"{msg.kind} from {msg.sender}"
                if msg.recipient != party.name or msg.session != party.session:
                    raise M.MessageError(f"addressed to {msg.recipient!r} in another session")
                send(party.deliver(msg, len(item)))
            except Exception as exc:  # a party that cannot go on stops the run with one line, not a traceback
                conn.send(("error", f"party {party.name} could not handle {what}: "
                                    f"{_one_line(exc) or exc.__class__.__name__}"))
                return
            if kind == "sttp" and party.finished and not done_reported:
                conn.send(("done",))
                done_reported = True
        report = party_report(party)
        report["log"] = sent_log
        conn.send(("report", report))
    finally:
        for s in out_socks.values():
            s.close()
        server.close()


def _next(conns: dict, procs: dict, waiting: set[str], deadline: float, what: str) -> tuple[str, tuple]:
    """The next message from one of the ``waiting`` parties' pipes; ProtocolError when a party reports an
    error, exits, or nothing arrives before ``deadline`` (monotonic seconds)."""
    by_conn = {conns[n]: n for n in waiting}
    by_sentinel = {procs[n].sentinel: n for n in waiting}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProtocolError(f"the secure protocol did not {what} within the time limit "
                                f"(parties still running: {', '.join(sorted(waiting))})")
        ready = wait_ready(list(by_conn) + list(by_sentinel), timeout=left)
        for r in ready:                               # messages first: a party may report, then exit
            if r in by_conn:
                name = by_conn[r]
                try:
                    msg = r.recv()
                except (EOFError, OSError):
                    del by_conn[r]                    # its sentinel tells how it ended
                    continue
                if msg[0] == "error":
                    raise ProtocolError(f"secure protocol stopped: {msg[1]}")
                return name, msg
        for r in ready:
            if r in by_sentinel:
                name = by_sentinel[r]
                procs[name].join(timeout=1)
                raise ProtocolError(f"secure protocol stopped: party {name} exited unexpectedly "
                                    f"(exit code {procs[name].exitcode})")


def run_processes(data, k: int, method: str, *, alpha=0, beta=0, integrity=True, locking=False,
                  dc_size=0, behaviours=None, certify=True, certify_limit=4_000_000, pairs=None,
                  contributor_veto=False, timeout: float | None = None,
                  on_start: Callable[[dict[str, int], dict[str, int]], None] | None = None) -> StranonResult:
    """Run STRANON with every party in its own process over loopback TCP; returns a ``StranonResult``.

    ``timeout`` (seconds) defaults to :func:`work_timeout`.  ``on_start(ports, pids)`` is called once every
    party listens, before the run starts (to show or probe the parties).  Raises
    :class:`~graphlink.errors.ProtocolError` (one line) when a party fails, exits or the run outlasts the
    timeout; every party process is stopped."""
    session = uuid.uuid4().hex
    auth = secrets.token_bytes(32)
    locs = list(data)
    behaviours = behaviours or {}
    a = alpha if isinstance(alpha, dict) else {c: alpha for c in locs}
    b = beta if isinstance(beta, dict) else {c: beta for c in locs}
    a = {c: (a.get(c, 0) if integrity else 0) for c in locs}
    b = {c: (b.get(c, 0) if integrity else 0) for c in locs}
    limit = frame_limit(data, b, dc_size)
    timeout = work_timeout(data, a, b, dc_size) if timeout is None else float(timeout)
    specs: dict[str, dict] = {}
    for loc in locs:
        gam, om = data[loc]
        specs[loc] = {"kind": "location", "name": loc, "session": session, "identified": list(gam),
                      "deidentified": list(om), "alpha": a[loc], "beta": b[loc],
                      "behaviour": behaviours.get(loc), "pairs": (pairs or {}).get(loc)}
    specs["sTTP"] = {"kind": "sttp", "session": session, "locations": locs, "k": k, "method": method,
                     "integrity": integrity, "locking": locking, "dc_size": dc_size,
                     "certify": certify, "certify_limit": certify_limit, "contributor_veto": contributor_veto}
    ctx = mp.get_context("spawn")
    procs, conns = {}, {}
    for name, spec in specs.items():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=party_main, args=({**spec, "auth": auth, "frame_limit": limit}, child),
                        name=f"stranon-{name}", daemon=True)
        p.start()
        procs[name], conns[name] = p, parent
    try:
        ports: dict[str, int] = {}
        deadline = time.monotonic() + STARTUP_SECONDS
        while len(ports) < len(specs):
            name, msg = _next(conns, procs, set(specs) - set(ports), deadline, "start")
            ports[name] = msg[1]
        if on_start is not None:
            on_start(dict(ports), {n: p.pid for n, p in procs.items()})
        for c in conns.values():
            c.send(("directory", ports))
        t0 = time.perf_counter()
        for c in conns.values():
            c.send(("go",))
        deadline = time.monotonic() + timeout
        while _next(conns, procs, set(specs), deadline, f"finish ({timeout:.0f} s)")[0] != "sTTP":
            pass                                    # only the sTTP reports done before the stop
        # let in-flight Finished/decryption traffic settle, then stop everyone
        time.sleep(0.05)
        wall = time.perf_counter() - t0
        for c in conns.values():
            c.send(("stop",))
        reports: dict[str, dict] = {}
        deadline = time.monotonic() + STARTUP_SECONDS
        while len(reports) < len(specs):
            name, msg = _next(conns, procs, set(specs) - set(reports), deadline, "report")
            reports[name] = msg[1]
        log_entries = [e for r in reports.values() for e in r.pop("log")]
        res = collect(reports, k, method, log_entries, wall)
        res.ports = ports
        return res
    finally:
        for c in conns.values():
            with contextlib.suppress(OSError, ValueError):   # a party that already ended
                c.send(("stop",))
        for p in procs.values():
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
