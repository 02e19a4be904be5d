"""Tiny benchmark harness: run a case in a forked child, report wall time and the child's peak RSS."""

from __future__ import annotations

import multiprocessing as mp
import queue
import resource
import time
from collections.abc import Callable


def _child(fn: Callable[[], object], q: mp.Queue) -> None:
    t0 = time.perf_counter()
    info = fn()
    dt = time.perf_counter() - t0
    q.put((dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, info))


def measure(label: str, fn: Callable[[], object]) -> tuple[float, float, object]:
    """Run ``fn`` in a forked process; print and return (seconds, peak RSS MiB, fn's return value)."""
    ctx = mp.get_context("fork")
    q: mp.Queue = ctx.Queue()
    p = ctx.Process(target=_child, args=(fn, q))
    p.start()
    while True:  # a child that dies without an answer (e.g. fork after OpenMP) must not hang the benchmark
        try:
            dt, rss, info = q.get(timeout=1.0)
            break
        except queue.Empty:
            if not p.is_alive():
                print(f"  {label:<58} failed: the child exited with code {p.exitcode} and no result", flush=True)
                return float("nan"), float("nan"), None
    p.join()
    print(f"  {label:<58} {dt:9.2f} s   peak RSS {rss:8.0f} MiB   {info}", flush=True)
    return dt, rss, info


def _spawn(argv: list[str]) -> tuple[float, float, int, str]:
    import os
    import subprocess

    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


_pool = None


def run_command(argv: list[str]) -> tuple[float, float, int, str]:
    """Run ``argv`` as a process of its own; (wall seconds, its peak RSS MiB, exit code, its stderr).

    Started from a small worker of a fork server, not from the benchmark: Linux carries a process's peak RSS across
    ``exec``, and a child forked (or vforked) from a benchmark that holds a large release would report the
    benchmark's peak as its own.
    """
    global _pool
    if _pool is None:
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload([])     # not the benchmark's own module: the server stays small
        _pool = ProcessPoolExecutor(1, mp_context=ctx)
    return _pool.submit(_spawn, argv).result()
