"""Secure protocol page (placeholder until graphlink.secure lands)."""

from __future__ import annotations

import streamlit as st

from app import state

st.title("Secure protocol")
if state.optional_module("graphlink.secure.stranon") is None:
    state.unavailable("The secure protocol simulation", "graphlink.secure")
    st.stop()
