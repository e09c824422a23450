"""posviz: the router. Every view lives in pages/; this file only lists them."""

import streamlit as st

from posviz.ui.display import PAGE_STYLE
from posviz.ui.lab import question_page
from posviz.ui.lab_runs import start_warmup
from posviz.ui.routes import navigation_pages, sidebar_links

st.set_page_config(page_title="posviz: positional encodings, seen", page_icon="🧭", layout="wide")
start_warmup()  # POSVIZ_LAB_WARMUP=1 (run-app.sh): the lab's default answers, in the background
pages = navigation_pages(question_page)  # scripts, and one page per study
navigation = st.navigation(pages, position="hidden")  # its sidebar list fails axe's list rules
sidebar_links()  # the same pages, by section, as valid links
st.html(PAGE_STYLE)  # contrast and chart toolbars, on every page
navigation.run()
