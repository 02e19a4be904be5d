"""Protect page (placeholder until graphlink.unlink lands)."""

from __future__ import annotations

import streamlit as st

from app import state

st.title("Protect")
state.require_release()
if state.optional_module("graphlink.unlink") is None:
    state.unavailable("Protection (Greedy-/Force-Dedup)", "graphlink.unlink")
    st.stop()
