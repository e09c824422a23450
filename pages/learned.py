"""Placeholder until this view lands (see the issues); replaced by the real page."""

import streamlit as st

st.title("learned")
st.info("This view is being built.")
