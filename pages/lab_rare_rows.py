"""Position lab: Are rarely-seen rows untrained?"""

from posviz.ui.lab import question_page

question_page("rare_rows")
