"""Position lab: Does a transformer need positions at all?"""

from posviz.ui.lab import question_page

question_page("need_positions")
