"""Position lab: Does a learned table help?"""

from posviz.ui.lab import question_page

question_page("learned")
