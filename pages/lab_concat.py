"""Position lab: Add or concatenate?"""

from posviz.ui.lab import question_page

question_page("concat")
