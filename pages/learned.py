"""Learned position tables: what a real model's table looks like, next to a sinusoid."""

import streamlit as st

from posviz.ui.tables import describe_table, pick_table

st.title("Learned position tables")
table = pick_table("Table", key="lrn_a")
if table is not None:
    describe_table(table)
