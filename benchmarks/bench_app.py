"""App interaction latency on a simulated 10 000-subject release (Streamlit AppTest, server-side script time).

Run: ``python benchmarks/bench_app.py [--subjects 10000 --locations 10]``. Prints the first (cold, computing)
and the repeated (warm, cached) wall time of each interaction; the quality bar is ~2 s warm.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subjects", type=int, default=10_000)
    ap.add_argument("--locations", type=int, default=10)
    ap.add_argument("--p", type=float, default=0.3)
    ap.add_argument("--withhold", type=float, default=0.2)
    a = ap.parse_args()
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
