"""posviz: the router. Every view lives in pages/; this file only lists them."""

import streamlit as st

from posviz.ui import PAGES
from posviz.ui.display import PAGE_STYLE
from posviz.ui.lab_runs import start_warmup

st.set_page_config(page_title="posviz: positional encodings, seen", page_icon="🧭", layout="wide")
start_warmup()  # POSVIZ_LAB_WARMUP=1 (run-app.sh): the lab's default answers, in the background
navigation = st.navigation(
    {
        section: [
            st.Page(
                spec.path,
                title=spec.title,
                icon=spec.icon,
                url_path=spec.url_path,
                default=spec.url_path == "home",
            )
            for spec in specs
        ]
        for section, specs in PAGES.items()
    }
)
st.html(PAGE_STYLE)  # contrast and chart toolbars, on every page
navigation.run()
