"""posviz: the router. Every view lives in pages/; this file only lists them."""

import streamlit as st

from posviz.ui import PAGES

st.set_page_config(page_title="posviz: positional encodings, seen", page_icon="🧭", layout="wide")
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
navigation.run()
