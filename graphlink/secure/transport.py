"""STRANON parties as separate OS processes talking over loopback TCP (127.0.0.1).

Each party (every location and the sTTP) runs in its own process (``multiprocessing`` *spawn* context:
nothing is inherited, the child gets only its own constructor arguments). It binds a listening socket on
127.0.0.1 (ephemeral port), reports the port to the launcher over a control pipe, receives the directory
{party: port}, and then exchanges length-prefixed protocol frames (``messages.encode``) directly with its
peers. A reader thread per incoming connection drains the socket into a queue, so two parties sending
large datasets to each other can never deadlock on full socket buffers. The control pipe carries only
setup (own data in, port out), the "stop" command, and the final per-party report (own costs, own
disclosure, message summaries) — never protocol traffic.

Frames on the wire are authenticated (:mod:`graphlink.secure.wire`): the launcher draws a fresh run secret
(``secrets``) and keeps it; every party gets, over its control pipe, only the keys of the ordered pairs of
parties it belongs to (one key per pair, derived from the secret) and the run's declared sizes.  A
connection starts with an authenticated hello, and every frame with a fixed-size header carrying its own
tag, kind, sequence number and length, which is checked (against the cap of that kind, sized from the
declared sizes) before a byte of the body is read; connections from outside the run get at most the 40 bytes
of a hello read and are closed within the handshake timeout, with caps on how many may wait.  A refused
connection is logged in one line and closed, and the party keeps serving.  An authenticated frame that does
not decode, whose message claims another sender or kind than it was authenticated as, or a message its
recipient cannot handle, stops the run: the party reports one line to the launcher, which stops every party
and raises :class:`~graphlink.errors.ProtocolError` at once (so does a party process that dies).  The
launcher waits at most :func:`work_timeout` seconds, sized to the run's scalar multiplications with a floor.

Cost: the same crypto as in-process; the processes run in parallel on all cores (the parallelism the
thesis assumes in App. C.3.2).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import wait as wait_ready

from graphlink.errors import ProtocolError
from graphlink.secure import messages as M
from graphlink.secure import wire
from graphlink.secure.parties import Location, SemiTrustedThirdParty, send_frame
from graphlink.secure.report import StranonResult, collect, party_report

log = logging.getLogger("graphlink.secure")

#: the launcher's waits: the floor of the run's time limit, and the assumed slowest scalar-multiplication
#: rate (about 1/18 of one idle core's, 1/4 of the slowest rate measured on a loaded 2-core machine)
FLOOR_SECONDS = 60.0
SLOWEST_MULTS_PER_SECOND = 1_000.0
STARTUP_SECONDS = 60.0


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


def _build_party(spec: dict) -> Location | SemiTrustedThirdParty:
    kind = spec.pop("kind")
    return Location(**spec) if kind == "location" else SemiTrustedThirdParty(**spec)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:400]


def party_main(spec: dict, conn) -> None:
    """Entry point of one party process: listen, authenticate, and run the party until told to stop."""
    spec = dict(spec)
    plan, keys = spec.pop("plan"), spec.pop("keys")
    handshake = spec.pop("handshake_seconds", wire.HANDSHAKE_SECONDS)
    kind = spec["kind"]
    party = _build_party(spec)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    inbox: queue.Queue = queue.Queue()
    listener = wire.Listener(server, plan, party.name, keys["in"],
                             lambda sender, k, body: inbox.put(("frame", sender, k, body)),
                             handshake_seconds=handshake)
    threading.Thread(target=listener.serve, daemon=True, name="stranon-accept").start()
    conn.send(("port", server.getsockname()[1]))
    first = conn.recv()
    if first[0] != "directory":                   # stopped before the run began
        listener.close()
        return
    directory = first[1]
    out = wire.Sender(plan, party.name, keys["out"], directory, handshake_seconds=handshake)
    sent_log: list[tuple] = []

    def send(msgs) -> None:
        for m in msgs:
            frame, entry = send_frame(party, m)
            sent_log.append(entry)
            out.send(m.recipient, m.kind, frame)

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
        try:
            if kind == "sttp":
                send(party.start())
        except Exception as exc:  # one line to the launcher, not a traceback
            conn.send(("error", f"party {party.name} could not start: {_one_line(exc) or exc.__class__.__name__}"))
            return
        done_reported = False
        while True:
            item = inbox.get()
            if item[0] == "control":
                if item[1][0] == "stop":
                    break
                continue
            _, sender, frame_kind, frame = item
            what = f"{frame_kind} from {sender}"
            try:
                msg = M.decode(frame)
                # the frame was authenticated as (sender, kind): the message inside must say the same
                if msg.sender != sender or msg.kind != frame_kind:
                    raise M.MessageError(f"the message inside claims to be {msg.kind} from {msg.sender}")
                if msg.recipient != party.name or msg.session != party.session:
                    raise M.MessageError(f"addressed to {msg.recipient!r} in another session")
                send(party.deliver(msg, len(frame)))
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
        out.close()
        listener.close()


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
                  handshake_seconds: float = wire.HANDSHAKE_SECONDS,
                  on_start: Callable[[dict[str, int], dict[str, int]], None] | None = None) -> StranonResult:
    """Run STRANON with every party in its own process over loopback TCP; returns a ``StranonResult``.

    ``timeout`` (seconds) defaults to :func:`work_timeout`.  ``on_start(ports, pids)`` is called once every
    party listens, before the run starts (to show or probe the parties).  ``handshake_seconds`` is how long a
    party waits for a new connection's authenticated hello.  Raises
    :class:`~graphlink.errors.ProtocolError` (one line) when a party fails, exits or the run outlasts the
    timeout; every party process is stopped."""
    session = uuid.uuid4().hex
    secret = wire.new_run_secret()          # stays in the launcher; each party gets only its own pair keys
    locs = list(data)
    behaviours = behaviours or {}
    a = alpha if isinstance(alpha, dict) else {c: alpha for c in locs}
    b = beta if isinstance(beta, dict) else {c: beta for c in locs}
    a = {c: (a.get(c, 0) if integrity else 0) for c in locs}
    b = {c: (b.get(c, 0) if integrity else 0) for c in locs}
    plan = wire.declare(data, b, dc_size)
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
        p = ctx.Process(target=party_main, args=({**spec, "plan": plan, "handshake_seconds": handshake_seconds,
                                                      "keys": wire.party_keys(secret, plan.parties, name)}, child),
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
        # a party that died since it reported its port is found by _next (its sentinel), not by a broken pipe
        for c in conns.values():
            with contextlib.suppress(OSError):
                c.send(("directory", ports))
        t0 = time.perf_counter()
        for c in conns.values():
            with contextlib.suppress(OSError):
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
