"""Position lab: Re-inject position at every layer?"""

from posviz.ui.lab import question_page

question_page("every_layer")
