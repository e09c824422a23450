"""The lab's studies: designs (questions, paper checks) and how each kind is judged.

A study's *design* (arms, config, sweep, kind, settings; a paper check's arms, extractor and
published numbers) is hashed into its run ids; its words (titles, explanations, claim sentences,
caveats) and its judging are not: a stored run is judged again, with today's words, on load.
It imports the engine, never :mod:`posviz.lab.present`.
"""
