"""STRANON parties as separate OS processes talking over loopback TCP (127.0.0.1).

Each party (every location and the sTTP) runs in its own process (``multiprocessing`` *spawn* context:
nothing is inherited, the child gets only its own constructor arguments). It binds a listening socket on
127.0.0.1 (ephemeral port), reports the port to the launcher over a control pipe, receives the directory
{party: port}, and then exchanges length-prefixed protocol frames (``messages.encode``) directly with its
peers. A reader thread per incoming connection drains the socket into a queue, so two parties sending
large datasets to each other can never deadlock on full socket buffers. The control pipe carries only
setup (own data in, port out), the "stop" command, and the final per-party report (own costs, own
disclosure, message summaries) — never protocol traffic.

Cost: the same crypto as in-process; the processes run in parallel on all cores (the parallelism the
thesis assumes in App. C.3.2).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import socket
import struct
import threading
import time
import uuid

from graphlink.secure import messages as M
from graphlink.secure.parties import Location, SemiTrustedThirdParty, send_frame
from graphlink.secure.report import StranonResult, collect, party_report

_LEN = struct.Struct(">I")


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _reader(sock: socket.socket, q: queue.Queue) -> None:
    try:
        while True:
            head = _recv_exact(sock, 4)
            if head is None:
                return
            frame = _recv_exact(sock, _LEN.unpack(head)[0])
            if frame is None:
                return
            q.put(frame)
    except OSError:
        return


def _acceptor(server: socket.socket, q: queue.Queue) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_reader, args=(conn, q), daemon=True).start()


def _build_party(spec: dict) -> Location | SemiTrustedThirdParty:
    kind = spec.pop("kind")
    return Location(**spec) if kind == "location" else SemiTrustedThirdParty(**spec)


def party_main(spec: dict, conn) -> None:
    """Entry point of one party process."""
    party = _build_party(dict(spec))
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=_acceptor, args=(server, inbox), daemon=True).start()
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
            s.sendall(_LEN.pack(len(frame)) + frame)

    if conn.recv()[0] != "go":
        return

    def control() -> None:  # the launcher's commands join the same queue: the main loop blocks, never polls
        try:
            while True:
                inbox.put(("control", conn.recv()))
        except (EOFError, OSError):
            inbox.put(("control", ("stop",)))

    threading.Thread(target=control, daemon=True).start()
    if spec["kind"] == "sttp":
        send(party.start())
    done_reported = False
    while True:
        item = inbox.get()
        if isinstance(item, tuple):
            if item[1][0] == "stop":
                break
            continue
        send(party.deliver(M.decode(item), len(item)))
        if spec["kind"] == "sttp" and party.finished and not done_reported:
            conn.send(("done",))
            done_reported = True
    report = party_report(party)
    report["log"] = sent_log
    conn.send(("report", report))
    for s in out_socks.values():
        s.close()
    server.close()


def run_processes(data, k: int, method: str, *, seed=None, alpha=0, beta=0, integrity=True, locking=False,
                  dc_size=0, behaviours=None, certify=True, certify_limit=4_000_000, pairs=None,
                  contributor_veto=False, timeout: float = 3600.0) -> StranonResult:
    """Run STRANON with every party in its own process over loopback TCP; returns a ``StranonResult``."""
    session = uuid.uuid4().hex
    locs = list(data)
    behaviours = behaviours or {}
    a = alpha if isinstance(alpha, dict) else {c: alpha for c in locs}
    b = beta if isinstance(beta, dict) else {c: beta for c in locs}
    specs: dict[str, dict] = {}
    for n, loc in enumerate(locs):
        gam, om = data[loc]
        specs[loc] = {"kind": "location", "name": loc, "session": session, "identified": list(gam),
                      "deidentified": list(om), "alpha": a.get(loc, 0) if integrity else 0,
                      "beta": b.get(loc, 0) if integrity else 0, "behaviour": behaviours.get(loc),
                      "seed": None if seed is None else seed * 7919 + n, "pairs": (pairs or {}).get(loc)}
    specs["sTTP"] = {"kind": "sttp", "session": session, "locations": locs, "k": k, "method": method,
                     "seed": seed, "integrity": integrity, "locking": locking, "dc_size": dc_size,
                     "certify": certify, "certify_limit": certify_limit, "contributor_veto": contributor_veto}
    ctx = mp.get_context("spawn")
    procs, conns = {}, {}
    for name, spec in specs.items():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=party_main, args=(spec, child), name=f"stranon-{name}", daemon=True)
        p.start()
        procs[name], conns[name] = p, parent
    try:
        ports = {name: conns[name].recv()[1] for name in specs}
        for c in conns.values():
            c.send(("directory", ports))
        t0 = time.perf_counter()
        for c in conns.values():
            c.send(("go",))
        if not conns["sTTP"].poll(timeout):
            raise TimeoutError("STRANON run did not finish in time")
        conns["sTTP"].recv()
        # let in-flight Finished/decryption traffic settle, then stop everyone
        time.sleep(0.05)
        wall = time.perf_counter() - t0
        for c in conns.values():
            c.send(("stop",))
        reports = {}
        for name, c in conns.items():
            tag, rep = c.recv()
            reports[name] = rep
        log = [e for r in reports.values() for e in r.pop("log")]
        res = collect(reports, k, method, log, wall)
        res.ports = ports
        return res
    finally:
        for p in procs.values():
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
