"""Streamlit glue. The only part of posviz that imports streamlit; pages import from here.

Direction of imports: ``pages -> posviz.ui -> posviz.*``, never back.
"""

from posviz.governor import pin_threads
from posviz.navigation import PageSpec, all_pages, sections
from posviz.ui.compat import make_altair_setters_thread_safe, route_through_app
from posviz.ui.display import show_chart, user_errors
from posviz.ui.state import (
    url_checkbox,
    url_field,
    url_int_list,
    url_multiselect,
    url_number,
    url_numbers,
    url_radio,
    url_select,
    url_slider,
    url_text,
)
from posviz.ui.text import safe_md
from posviz.urlparams import NumberField

__all__ = [
    "NumberField",
    "PageSpec",
    "all_pages",
    "safe_md",
    "sections",
    "show_chart",
    "url_checkbox",
    "url_field",
    "url_int_list",
    "url_multiselect",
    "url_number",
    "url_numbers",
    "url_radio",
    "url_select",
    "url_slider",
    "url_text",
    "user_errors",
]

# Streamlit runs sessions in threads; Altair's method setters are not thread-safe (see compat).
make_altair_setters_thread_safe()
route_through_app()
# One BLAS/OpenMP thread count before any page computes: a page's numbers must not depend on
# another session's heavy work (posviz.governor).
pin_threads()
