"""Position lab: Paper checks"""

from posviz.ui.lab_views import papers_page

papers_page()
