"""A process-wide pool of slots for heavy work (lab training, large probes), first come first
served.

``with job_slot("lab"):`` blocks until one of ``posviz.settings.settings().max_jobs`` slots is free.
Waiters are served in arrival order (a ticket queue under one condition variable); while waiting,
``on_wait(position)`` is called about every 0.2 s (1 = next in line) so a page can show the queue,
and ``should_stop()`` is polled so a user who leaves (or presses Stop) leaves the queue at once
with :class:`JobCancelled`. stdlib only.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from posviz.settings import settings

POLL_SECONDS = 0.2


class JobCancelled(RuntimeError):
    """``should_stop()`` turned true while waiting for (or holding) a job slot."""


_lock = threading.Condition()
_queue: deque[int] = deque()  # tickets waiting, in arrival order
_running: dict[int, str] = {}  # ticket -> kind, for the slots in use
_next_ticket = 0


def queue_length() -> int:
    """Jobs waiting for a slot now (not counting the running ones)."""
    with _lock:
        return len(_queue)


def running() -> int:
    """Jobs holding a slot now."""
    with _lock:
        return len(_running)


@contextmanager
def job_slot(
    kind: str,
    *,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[None]:
    """Hold one of ``settings().max_jobs`` slots for the ``with`` block (FIFO across threads).

    Raises:
        JobCancelled: ``should_stop()`` returned true while waiting (the slot is not taken).
    """
    global _next_ticket
    with _lock:
        ticket = _next_ticket
        _next_ticket += 1
        _queue.append(ticket)
    try:
        while True:
            with _lock:
                position = _queue.index(ticket)
                if position == 0 and len(_running) < settings().max_jobs:
                    _queue.popleft()
                    _running[ticket] = kind
                    _lock.notify_all()
                    break
            if should_stop is not None and should_stop():
                raise JobCancelled(f"{kind} job left the queue at position {position + 1}.")
            if on_wait is not None:
                on_wait(position + 1)
            with _lock:
                _lock.wait(POLL_SECONDS)
    except BaseException:
        with _lock:
            if ticket in _queue:
                _queue.remove(ticket)
                _lock.notify_all()
        raise
    try:
        yield
    finally:
        with _lock:
            _running.pop(ticket, None)
            _lock.notify_all()
