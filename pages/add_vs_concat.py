"""Placeholder until this view lands (see the issues); replaced by the real page."""

import streamlit as st

st.title("add_vs_concat")
st.info("This view is being built.")
