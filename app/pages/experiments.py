"""Experiments page: run the registered simulation experiments on small settings and show their outputs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app import state
from app.components.tables import show_table
from app.components.text import one_line

st.title("Experiments")
st.caption("The thesis's simulation experiments (chapter 5), from the registry shared with the CLI "
           "(`graphlink experiment NAME`). Here they run with `small=True` so they finish in seconds.")

registry = state.optional_module("graphlink.simulation.experiments.registry")
if registry is None:
    state.unavailable("Experiments", "graphlink.simulation.experiments.registry")
    st.stop()
try:
    experiments = registry.load_all()
except Exception as exc:
    st.error("Could not load the experiment registry: " + one_line(exc))
    st.stop()
if not experiments:
    st.warning("**No experiments are registered in this build** (graphlink/experiments has no runner "
               "modules yet). Nothing to run.", icon=":material/block:")
    st.stop()

name = st.selectbox("Experiment", sorted(experiments), key="exp_name",
                    format_func=lambda n: f"{n} — {experiments[n].description}")
c1, c2 = st.columns(2)
runs = int(c1.number_input("Runs per setting", 1, 50, 3, key="exp_runs"))
seed = int(c2.number_input("Seed", 0, 2**31 - 1, 1, key="exp_seed"))


def _progress_callback(bar: Any) -> Any:
    def cb(*args: Any, **_: Any) -> None:
        nums = [a for a in args if isinstance(a, int | float)]
        if len(nums) >= 2 and nums[1]:
            frac = nums[0] / nums[1]
        elif nums:
            frac = float(nums[0])
        else:
            return
        bar.progress(min(max(frac, 0.0), 1.0))

    return cb


@st.cache_resource(max_entries=16, show_spinner=False)
def run_experiment(name: str, runs: int, seed: int, _progress: Any = None) -> tuple[Any, Path]:
    out = Path(tempfile.mkdtemp(prefix=f"graphlink-exp-{name}-"))
    result = experiments[name].run(runs=runs, seed=seed, out=out, small=True, progress=_progress)
    return result, out


if st.button("Run experiment (small settings)", type="primary", key="exp_run"):
    st.session_state["exp_ran"] = (name, runs, seed)
if st.session_state.get("exp_ran") != (name, runs, seed):
    st.stop()

bar = st.progress(0.0, text=f"Running {name}…")
try:
    result, out = run_experiment(name, runs, seed, _progress_callback(bar))
except Exception as exc:
    bar.empty()
    st.error("The experiment failed: " + one_line(exc))
    st.stop()
bar.empty()

comparison = getattr(result, "comparison", None)
if comparison:
    st.markdown("**Comparison with the thesis**")
    st.text(str(comparison))
summary = getattr(result, "summary", None)
if isinstance(summary, dict) and summary:
    with st.expander("Summary"):
        st.json(summary)
frame = getattr(result, "frame", None)
if frame is None and hasattr(result, "to_frame"):
    frame = result.to_frame()
images = sorted(out.rglob("*.png"))
tables = sorted(out.rglob("*.csv"))
for img in images:
    st.image(str(img), caption=img.name)
if isinstance(frame, pd.DataFrame):
    show_table(frame)
for t in tables:
    with st.expander(f"Table: {t.name}"):
        data = pd.read_csv(t)
        show_table(data)
        st.download_button(f"Download {t.name}", t.read_bytes(), file_name=t.name, mime="text/csv",
                           key=f"exp_dl_{t.name}")
if not images and not tables and frame is None:
    st.info(f"The experiment finished but wrote no plots or tables (result: {result!r}).")
