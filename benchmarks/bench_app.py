"""App interaction latency on a simulated 10 000-subject release (Streamlit AppTest, server-side script time).

Run: ``python benchmarks/bench_app.py [--subjects 10000 --locations 10]``. Prints the first (cold, computing)
and the repeated (warm, cached) wall time of each interaction; the quality bar is ~2 s warm.

``--first-load N``: instead, the first load of the Link graph page on the 3,000-subject demo as a person meets it:
a new server process opens on the demo (``GRAPHLINK_DEMO=simulated``), the person reads the Data page for
``--think`` seconds (default 3), then opens Link graph. N times, each in a fresh process, alternating with the
same run without the background start of the kernels (``graphlink_app.caches.warm_kernels`` replaced by a no-op).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")


def timed(label: str, fn, rows: list) -> None:  # noqa: ANN001
    t = time.perf_counter()
    at = fn()
    dt = time.perf_counter() - t
    assert not at.exception, at.exception
    rows.append((label, dt))
    print(f"{label:<55} {dt:7.2f} s", flush=True)


def first_load(warm: bool, think: float) -> float:
    """One fresh app: the Data page on the simulated demo, ``think`` seconds, then Link graph (seconds)."""
    import os

    os.environ["GRAPHLINK_DEMO"] = "simulated"
    if not warm:
        import threading

        from graphlink_app import caches

        caches.warm_kernels = lambda: threading.Thread()   # noqa: E731  (the app's start-up without it)
    at = AppTest.from_file(APP, default_timeout=600).run()
    assert not at.exception, at.exception
    time.sleep(think)
    t = time.perf_counter()
    at.switch_page("app/pages/linkgraph.py").run()
    dt = time.perf_counter() - t
    assert not at.exception, at.exception
    return dt


def first_loads(repeat: int, think: float) -> None:
    import os
    import subprocess
    import sys

    runs: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(repeat):
        for label in ("without", "with"):
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, __file__, "--child", label, "--think", str(think)],
                                 capture_output=True, text=True, check=True).stdout
            dt = float(out.strip().splitlines()[-1])
            runs[label].append(dt)
            print(f"Link graph first load, {label:>7} the background start: {dt:5.2f} s (load {load:.2f})",
                  flush=True)
    print("median: " + ", ".join(f"{k} {sorted(v)[len(v) // 2]:.2f} s" for k, v in runs.items()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--first-load", type=int, default=0, help="time the Link graph page's first load N times")
    ap.add_argument("--think", type=float, default=3.0)
    ap.add_argument("--child", choices=["with", "without"], help=argparse.SUPPRESS)
    ap.add_argument("--subjects", type=int, default=10_000)
    ap.add_argument("--locations", type=int, default=10)
    ap.add_argument("--p", type=float, default=0.3)
    ap.add_argument("--withhold", type=float, default=0.2)
    a = ap.parse_args()
    if a.child:
        print(first_load(a.child == "with", a.think))
        return
    if a.first_load:
        first_loads(a.first_load, a.think)
        return
    at = AppTest.from_file(APP, default_timeout=600).run()
    at.slider(key="sim_subjects").set_value(a.subjects)
    at.slider(key="sim_locations").set_value(a.locations)
    at.slider(key="sim_p").set_value(a.p)
    at.slider(key="sim_withhold").set_value(a.withhold)
    rows: list = []
    print(f"release: {a.subjects} subjects, {a.locations} locations, p={a.p}, withhold={a.withhold}")
    timed("simulate + trails (cold)", lambda: at.button(key="sim_run").click().run(), rows)
    print("   ", {m.label: m.value for m in at.metric})
    timed("data page rerun (warm)", lambda: at.run(), rows)
    timed("trails page (cold)", lambda: at.switch_page("app/pages/trails.py").run(), rows)
    timed("trails page: filter rows by location (warm)",
          lambda: at.selectbox(key="trail_filter").set_value("L03").run(), rows)
    timed("link graph page (cold: graph + matching)", lambda: at.switch_page("app/pages/linkgraph.py").run(), rows)
    print("   ", {m.label: m.value for m in at.metric})
    timed("link graph: pick another element (warm)",
          lambda: at.selectbox(key="lg_element").set_value(at.selectbox(key="lg_element").options[7]).run(), rows)
    timed("link graph: 3 hops (warm)", lambda: at.slider(key="lg_hops").set_value(3).run(), rows)
    timed("link graph: de-identified side (warm)",
          lambda: at.radio(key="lg_side").set_value("deidentified").run(), rows)
    timed("link graph: connected component (cold: components)",
          lambda: at.radio(key="lg_mode").set_value("Connected component").run(), rows)
    timed("link graph: connected component rerun (warm)", lambda: at.run(), rows)
    timed("re-identification page", lambda: at.switch_page("app/pages/reidentification.py").run(), rows)
    timed("re-identification: run all five methods (cold)", lambda: at.button(key="reid_run").click().run(), rows)
    print("   ", {m.label: m.value for m in at.metric})
    timed("re-identification: rerun (warm)", lambda: at.run(), rows)
    timed("re-identification: show another method's pairs (warm)",
          lambda: at.selectbox(key="reid_shown").set_value("incomplete").run(), rows)
    warm = [dt for label, dt in rows if "warm" in label]
    print(f"max warm interaction: {max(warm):.2f} s")


if __name__ == "__main__":
    main()
