"""Position lab: the questions only training can answer, each on its own page."""

from posviz.ui.answer import next_question
from posviz.ui.lab import index_page

index_page()
next_question("pages/lab.py")
