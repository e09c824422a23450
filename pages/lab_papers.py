"""Position lab: Paper checks"""

from posviz.ui.answer import next_question
from posviz.ui.lab_sections import papers_page

papers_page()
next_question("pages/lab_papers.py")
