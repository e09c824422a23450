"""Placeholder until this view lands (see the issues); replaced by the real page."""

import streamlit as st

st.title("probing")
st.info("This view is being built.")
