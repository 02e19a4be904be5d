"""Helpers for tests that start real processes (Streamlit servers, CLI runs): wait until up, stop cleanly."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from collections.abc import Callable


def wait_healthy(url: str, proc: subprocess.Popen, log: Callable[[], str], timeout: float = 60.0) -> None:
    """Poll ``url`` until it answers 200; RuntimeError with the log tail if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not come up: {log()[-2000:]}")
        time.sleep(0.3)


def stop(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM the process we started, SIGKILL it after ``timeout`` seconds, and reap it."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
