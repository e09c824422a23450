"""Run ids under an edit: what each study's "which ids move" tests compare."""

from __future__ import annotations

from collections.abc import Callable


def ids_with_edit(monkeypatch, edited: str | None, **own: Callable[[], str]) -> dict[str, str]:
    """Every registered study's run id (the questions' defaults and the paper checks), and
    ``own[name]()`` for each extra name, when the hashed source of the file named ``edited`` has
    one more line (None: as it is)."""
    from posviz.lab import QUESTIONS, RunStore
    from posviz.lab.engine import store as store_module
    from posviz.lab.studies.cards import card_run_id
    from posviz.lab.studies.papers import PAPER_CHECKS

    monkeypatch.undo()  # one edit at a time: never read through an earlier call's patch
    real = store_module.read_source

    def read(file):
        text = real(file)
        return text + b"\n# an edit\n" if edited and file.name == edited else text

    monkeypatch.setattr(store_module, "read_source", read)
    store_module.clear_code_caches()
    try:
        ids = {name: run_id() for name, run_id in own.items()}
        ids |= {q.id: RunStore().run_id(q, q.default) for q in QUESTIONS.values()}
        return ids | {c.id: card_run_id(c) for c in PAPER_CHECKS.values()}
    finally:
        store_module.clear_code_caches()
