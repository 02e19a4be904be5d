"""Tiny benchmark harness: run a case in a forked child, report wall time and the child's peak RSS."""

from __future__ import annotations

import multiprocessing as mp
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
    dt, rss, info = q.get()
    p.join()
    print(f"  {label:<58} {dt:9.2f} s   peak RSS {rss:8.0f} MiB   {info}", flush=True)
    return dt, rss, info
