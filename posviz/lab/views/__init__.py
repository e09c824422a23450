"""What the lab's pages show, from stored results: answers first, sweeps, figures, live runs.

:mod:`~posviz.lab.views.answer` turns a :class:`~posviz.lab.results.LabResult` into the page's
one-sentence answer, the sweep at a glance and the numbers of one cell;
:mod:`~posviz.lab.views.figures` builds every chart of a lab page (one colour per arm across them);
:mod:`~posviz.lab.views.live` follows a run while it trains (one count and ETA across every arm
and sweep cell) and estimates how long one takes; :mod:`~posviz.lab.views.cards` words the paper
checks' cards.

A package of its own, outside the ``posviz/lab/*.py`` files whose code is hashed into every run id
(:func:`posviz.lab.store.code_version`): these modules read finished runs and never change a
number in one, so rewording a page does not invalidate the stored answers.
"""
