"""The lab's engine: what trains and what is stored; it imports no study and no presentation.

Every module here is hashed into every run id (:data:`posviz.lab.engine.store.ENGINE_MODULES`
names them), except the runner (:mod:`~posviz.lab.engine.run`), the store and its result types
(versioned by ``STORE_FORMAT``), the metrics and bounds that judging reads, and the ``lab:``
table source (:mod:`~posviz.lab.engine.tables`): they schedule, store or read runs without
changing a stored number.
"""
