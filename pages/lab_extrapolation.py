"""Position lab: Train short, test long"""

from posviz.ui.lab import question_page

question_page("extrapolation")
