"""What the lab's pages show, from stored results: answers first, sweeps, figures, live runs.

:mod:`~posviz.lab.present.answer` turns a :class:`~posviz.lab.engine.results.LabResult` into the
page's
one-sentence answer, the sweep at a glance and the numbers of one cell;
:mod:`~posviz.lab.present.figures` builds every chart of a lab page (one colour per arm across
them);
:mod:`~posviz.lab.present.live` follows a run while it trains (one count and ETA across every arm
and sweep cell) and estimates how long one takes; :mod:`~posviz.lab.present.cards` words the paper
checks' cards.
:mod:`~posviz.lab.present.cli` is the ``python -m posviz lab`` commands.

Nothing here is hashed into a run id (:mod:`posviz.lab.engine.store`): these modules read
finished runs and never change a number in one, so rewording a page retrains nothing.
"""
