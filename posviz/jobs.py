"""Heavy work (lab training, large probes): a slot pool, one computation per key, and claims
shared by replicas. stdlib only.

``with job_slot("lab"):`` blocks until one of ``posviz.settings.settings().max_jobs`` slots is free.
Waiters are served in arrival order (a ticket queue under one condition variable); while waiting,
``on_wait(position)`` is called about every 0.2 s (1 = next in line) so a page can show the queue,
and ``should_stop()`` is polled so a user who leaves (or presses Stop) leaves the queue at once
with :class:`JobCancelled`.

``single_flight(key, compute)`` runs ``compute`` once per key at a time in this process: a second
session asking for a result being computed waits for it (seeing the computation's queue place)
instead of computing it again.

``with claim(directory, key):`` does the same across processes and hosts that share a directory
(the lab store of several replicas): a lock file with the holder's host, pid and a heartbeat, so
a killed replica's claim is taken over instead of blocking the key forever.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from posviz.settings import settings

T = TypeVar("T")

POLL_SECONDS = 0.2


class JobCancelled(RuntimeError):
    """``should_stop()`` turned true while waiting for (or holding) a job slot."""


_shutdown = threading.Event()
_shutdown_at: list[float] = []  # time.monotonic() of the first request_shutdown


def request_shutdown() -> None:
    """The server is stopping (SIGTERM, Ctrl-C): every heavy job stops at its next check.

    A lab run stops between training steps and stores nothing (its claim is released; the next
    start trains it again), so a stop never waits for a run to finish nor leaves half an entry.
    """
    if not _shutdown_at:
        _shutdown_at.append(time.monotonic())
    _shutdown.set()


def shutdown_requested_at() -> float | None:
    """When :func:`request_shutdown` was first called (``time.monotonic()``), or None."""
    return _shutdown_at[0] if _shutdown_at else None


def shutting_down() -> bool:
    """Whether :func:`request_shutdown` was called in this process."""
    return _shutdown.is_set()


_lock = threading.Condition()
_queue: deque[int] = deque()  # tickets waiting, in arrival order
_running: dict[int, str] = {}  # ticket -> kind, for the slots in use
_since: dict[int, float] = {}  # ticket -> time.monotonic() it took its slot
_next_ticket = 0


def queue_length() -> int:
    """Jobs waiting for a slot now (not counting the running ones)."""
    with _lock:
        return len(_queue)


def running() -> int:
    """Jobs holding a slot now."""
    with _lock:
        return len(_running)


def running_ages() -> list[float]:
    """Seconds since each job holding a slot now took it."""
    now = time.monotonic()
    with _lock:
        return [now - _since[ticket] for ticket in _running if ticket in _since]


#: a running job's share done before its remaining time is extrapolated from its pace so far
ESTIMATE_AFTER = 0.05


def wait_text(
    step: str,
    fraction: float,
    elapsed: float,
    *,
    beside: int | None = None,
    step_s: float | None = None,
    left_s: float | str | None = "pace",
) -> str:
    """What a page shows while its heavy job runs: the step (with ``step_s``, the seconds it has
    taken so far, once that is a few seconds less than the whole: a long step is seen
    advancing), the time elapsed, the time left at
    the pace so far (once :data:`ESTIMATE_AFTER` of it is done), the other heavy jobs sharing
    the cores (``beside``, default :func:`running` − 1: the lab's warm-up or another page's
    computation) and, when the 1-minute load average is above the cores, that the machine is
    busy — so a promise made before the job started is not the last word on a slow visit.
    ``left_s``: the seconds left where the caller knows them better (None: not known now)."""
    parts = [f"{elapsed:.0f} s elapsed"]
    if step_s is not None and 2 <= step_s <= elapsed - 2:
        parts.insert(0, f"this step {step_s:.0f} s so far")
    left = left_s if not isinstance(left_s, str) else _pace_left(fraction, elapsed)
    if left is not None:
        minutes = f"about {left / 60:.0f} min left"
        parts.append(f"about {left:.0f} s left" if left < 120 else minutes)
    others = max(running() - 1, 0) if beside is None else beside
    if others:
        parts.append(f"{others} other heavy job{'s' * (others > 1)} (the lab's warm-up or another "
                     "page) share the cores")  # fmt: skip
    cores, load = os.cpu_count() or 1, _load_average()
    if load > cores:
        parts.append(f"slower than usual: the machine is busy (load {load:.1f} on {cores} cores)")
    return f"{step} ({'; '.join(parts)})"


def _pace_left(fraction: float, elapsed: float) -> float | None:
    """Seconds left at the pace so far, once :data:`ESTIMATE_AFTER` is done (else None)."""
    if fraction < ESTIMATE_AFTER or elapsed < 1:
        return None
    return elapsed * (1 - min(fraction, 1.0)) / fraction


def _load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


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
        _about[ticket] = _described_now(kind)
    try:
        while True:
            with _lock:
                position = _queue.index(ticket)
                if position == 0 and len(_running) < settings().max_jobs:
                    _queue.popleft()
                    _running[ticket] = kind
                    _since[ticket] = time.monotonic()
                    _lock.notify_all()
                    break
            _report(position + 1)
            if _shutdown.is_set() or (should_stop is not None and should_stop()):
                raise JobCancelled(f"{kind} job left the queue at position {position + 1}.")
            if on_wait is not None:
                on_wait(position + 1)
            with _lock:
                _lock.wait(POLL_SECONDS)
    except BaseException:
        with _lock:
            _about.pop(ticket, None)
            if ticket in _queue:
                _queue.remove(ticket)
                _lock.notify_all()
        raise
    _report(0)
    try:
        yield
    finally:
        with _lock:
            _running.pop(ticket, None)
            _since.pop(ticket, None)
            _about.pop(ticket, None)
            _lock.notify_all()


# ------------------------------------------------------------------- what a queue waits for
#
# A job may say what it is and how long it has left (:func:`described` around the code that takes
# its slot); a computation waiting in the queue then says what it waits for and about how long
# (:func:`queue_ahead`, :func:`queue_wait_text`), not only its place.

#: how a job that did not describe itself is named in a waiter's queue line, by slot kind
KIND_WORDS = {
    "lab": "a lab training run",
    "model": "a model being prepared for another page",
    "probe": "another page's computation",
}


@dataclass(frozen=True)
class About:
    """What a job is (``what``, plain words) and its seconds left (``remaining()``: None while
    unknown); for a queued job, ``remaining`` is its whole expected duration."""

    what: str
    remaining: Callable[[], float | None] | None = None

    def seconds_left(self) -> float | None:
        if self.remaining is None:
            return None
        try:
            left = self.remaining()
        except (ArithmeticError, ValueError):  # an estimate that cannot be made is unknown
            return None
        return None if left is None or not left >= 0 or left == float("inf") else float(left)


_about: dict[int, About] = {}  # ticket -> what it is, for the tickets queued or running
_describing = threading.local()


@contextmanager
def described(what: str, remaining: Callable[[], float | None] | None = None) -> Iterator[None]:
    """Jobs this thread queues for in the ``with`` block are ``what`` with ``remaining()`` seconds
    left, in other waiters' queue lines (:func:`queue_wait_text`)."""
    stack: list[About] = _describing.__dict__.setdefault("stack", [])
    stack.append(About(what, remaining))
    try:
        yield
    finally:
        stack.pop()


def _described_now(kind: str) -> About:
    stack = getattr(_describing, "stack", None)
    return stack[-1] if stack else About(KIND_WORDS.get(kind, f"a {kind} job"))


@dataclass(frozen=True)
class QueueAhead:
    """What a job at one queue place waits for: the jobs ``running`` now and those queued
    ``ahead`` of it, each ``(what, seconds left or None)``; ``slots`` run at once."""

    running: tuple[tuple[str, float | None], ...]
    ahead: tuple[tuple[str, float | None], ...]
    slots: int

    def start_in(self) -> float | None:
        """Seconds until a job at this place starts: every job ahead takes the first slot to
        free up, in queue order; None when a time needed is unknown."""
        free = sorted(left for _, left in self.running if left is not None)
        if len(free) < len(self.running) or any(left is None for _, left in self.ahead):
            return None
        free = sorted([0.0] * max(self.slots - len(free), 0) + free)  # slots idle now first
        for _, duration in self.ahead:
            free = sorted([*free[1:], free[0] + float(duration or 0.0)])
        return free[0]


def queue_ahead(position: int) -> QueueAhead:
    """What a job at queue ``position`` (1 = next) waits for now."""
    with _lock:
        running = [_about.get(t, About(KIND_WORDS.get(k, k))) for t, k in _running.items()]
        ahead = [_about.get(t, About("another computation")) for t in list(_queue)[: position - 1]]
    return QueueAhead(
        tuple((a.what, a.seconds_left()) for a in running),
        tuple((a.what, a.seconds_left()) for a in ahead),
        settings().max_jobs,
    )


def _about_time(seconds: float) -> str:
    return f"about {seconds:.0f} s" if seconds < 90 else f"about {seconds / 60:.0f} min"


def queue_wait_text(position: int, *, what: str, ahead: QueueAhead | None = None) -> str:
    """What a page says while its computation ``what`` waits at queue ``position``: what runs
    now and for about how long, how many wait ahead of it, and when it should start."""
    ahead = queue_ahead(position) if ahead is None else ahead
    slots = ahead.slots
    at_once = (
        f"{slots} heavy computations at once" if slots > 1 else "one heavy computation at a time"
    )
    busy = [f"{name} ({_about_time(left)} left)" if left is not None else name
            for name, left in ahead.running]  # fmt: skip
    now = f": {_listing(busy)} {'is' if len(busy) == 1 else 'are'} running" if busy else ""
    queued = len(ahead.ahead)
    before = f"; {queued} more wait{'s' * (queued == 1)} ahead of it" if queued else ""
    start = ahead.start_in()
    when = (
        f"It should start in {_about_time(start)}."
        if start is not None
        else "When it starts depends on how long those take, which is not known yet."
    )
    return f"{what} waits for its turn. This server runs {at_once}{now}{before}. {when}"


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --------------------------------------------------------------------------- reporting a wait
#
# A computation that waits for a job slot tells whoever waits *for it* where it stands: job_slot
# reports its queue place (and 0 once it runs) to every reporter the calling thread registered
# (a single flight's leader, a claim's holder), so callers need no extra plumbing.

_reporters = threading.local()


@contextmanager
def _reporting(report: Callable[[int], None]) -> Iterator[None]:
    stack: list[Callable[[int], None]] = _reporters.__dict__.setdefault("stack", [])
    stack.append(report)
    try:
        yield
    finally:
        stack.remove(report)


def _report(position: int) -> None:
    for report in list(getattr(_reporters, "stack", ())):
        report(position)


# --------------------------------------------------------------------------- single flight


@dataclass
class _Flight:
    """One computation in progress; guarded by ``_flights_cond``."""

    position: int = 0  # the leader's place in the job queue; 0 = not queued (starting/running)
    followers: int = 0  # callers waiting for this computation
    leaderless: bool = False  # the leader left (``retry_on``): the next follower computes
    finished: bool = False
    value: Any = None
    error: BaseException | None = None

    def report(self, position: int) -> None:
        self.position = position


_flights: dict[Hashable, _Flight] = {}
_flights_cond = threading.Condition()


def flights_waiting(key: Hashable) -> int:
    """Callers waiting for the computation of ``key`` now (0 when none runs)."""
    with _flights_cond:
        flight = _flights.get(key)
        return flight.followers if flight is not None else 0


def single_flight(
    key: Hashable,
    compute: Callable[[], T],
    *,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    retry_on: tuple[type[BaseException], ...] = (JobCancelled,),
) -> T:
    """``compute()`` once per ``key`` at a time in this process: a caller that finds ``key``
    being computed waits for that result instead of computing it again.

    While waiting, ``on_wait(position)`` is called about every :data:`POLL_SECONDS`: ``position``
    is the running computation's place in the job queue (1 = next; reported by
    :func:`job_slot` inside ``compute``), or 0 when it is not queued (it is being computed).
    ``should_stop()`` is polled: a waiter that leaves gets :class:`JobCancelled`; the
    computation goes on for the others. When the computation fails (an ``Exception``), every
    waiter gets the same exception, except for ``retry_on`` (its caller left) and exceptions
    that are not ``Exception`` (the caller's thread was stopped: a Streamlit rerun, an exit):
    then one waiter computes it in its place and the others wait for that one.

    Cache the result yourself (the flight only lives while ``compute`` runs).
    """
    with _flights_cond:
        flight = _flights.get(key)
        lead = flight is None
        if flight is None:
            flight = _flights[key] = _Flight()
        else:
            flight.followers += 1
    while not lead:
        lead = _follow(key, flight, on_wait, should_stop)
        if not lead:
            if flight.error is not None:
                raise flight.error
            return flight.value
    try:
        with _reporting(flight.report):
            value = compute()
    except Exception as error:
        if not isinstance(error, retry_on):
            _finish(key, flight, error=error)
            raise
        _hand_over(key, flight)
        raise
    except BaseException:  # the leader's thread was stopped (a rerun, an exit): not a failure
        _hand_over(key, flight)
        raise
    _finish(key, flight, value=value)
    return value


def cached_flight(
    key: Hashable,
    cached: Callable[[], T | None],
    compute: Callable[[], T],
    *,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> T:
    """``cached()`` when it is not None, else ``compute()`` through :func:`single_flight`.

    The cache is read again once the flight is this caller's (a flight that finished while it
    waited to lead may have stored the value), so a value is computed once per cache.
    """
    found = cached()
    if found is not None:
        return found

    def once() -> T:
        again = cached()
        return again if again is not None else compute()

    return single_flight(key, once, on_wait=on_wait, should_stop=should_stop)


def _hand_over(key: Hashable, flight: _Flight) -> None:
    """The leader left before a result: the next follower computes (or nobody, if none wait)."""
    with _flights_cond:
        flight.position, flight.leaderless = 0, True
        if not flight.followers:
            del _flights[key]
        _flights_cond.notify_all()


def _finish(key: Hashable, flight: _Flight, *, value: Any = None, error: Any = None) -> None:
    with _flights_cond:
        flight.value, flight.error, flight.finished = value, error, True
        del _flights[key]
        _flights_cond.notify_all()


def _follow(
    key: Hashable,
    flight: _Flight,
    on_wait: Callable[[int], None] | None,
    should_stop: Callable[[], bool] | None,
) -> bool:
    """Wait until ``flight`` finishes (False) or needs a new leader, which is us (True)."""
    while True:
        with _flights_cond:
            if flight.finished or flight.leaderless:
                flight.followers -= 1
                if flight.leaderless:
                    flight.leaderless = False
                    return True
                return False
            position = flight.position
        if _shutdown.is_set() or (should_stop is not None and should_stop()):
            with _flights_cond:
                flight.followers -= 1
                if flight.leaderless and not flight.followers:
                    _flights.pop(key, None)  # nobody left to compute it
            raise JobCancelled("Left while waiting for the same computation.")
        if on_wait is not None:
            on_wait(position)
        with _flights_cond:
            if not (flight.finished or flight.leaderless):
                _flights_cond.wait(POLL_SECONDS)


# ------------------------------------------------------------------ claims across processes

#: seconds between a claim holder's heartbeats (the claim file's modification time).
CLAIM_HEARTBEAT_S = 2.0
#: a claim whose heartbeat is older than this is stale (its holder froze or its host died).
CLAIM_STALE_S = 30.0
#: how often a process waiting for another's claim looks again (a shared volume may be NFS).
CLAIM_POLL_S = 0.5
#: the claims log (one line per claim, take-over and release) is rotated past this size.
CLAIM_LOG_BYTES = 256 * 1024
_CLAIM_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClaimHolder:
    """Who holds a claim: written into the claim file as JSON."""

    token: str
    host: str
    pid: int
    since: float  # seconds since the epoch
    position: int = 0  # the holder's place in its job queue; 0 = not queued (running)

    def to_json(self) -> bytes:
        return json.dumps(dataclasses.asdict(self)).encode()


def _read_holder(path: Path) -> ClaimHolder | None:
    """The claim in ``path``; None when there is none. An unreadable file counts as a holder
    with no known process, so it becomes stale by its age alone."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        fields = json.loads(data)
        return ClaimHolder(
            token=str(fields["token"]),
            host=str(fields["host"]),
            pid=int(fields["pid"]),
            since=float(fields["since"]),
            position=int(fields.get("position", 0)),
        )
    except (ValueError, KeyError, TypeError):
        return ClaimHolder(token="", host="", pid=0, since=0.0)


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _claim_stale(path: Path, holder: ClaimHolder, stale_after: float) -> str:
    """Why ``holder``'s claim no longer holds ("" while it does)."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return "released"
    if holder.host == socket.gethostname() and not _process_alive(holder.pid):
        return f"process {holder.pid} is gone"
    if age > stale_after:
        return f"no heartbeat for {age:.0f} s"
    return ""


@contextmanager
def flocked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive ``fcntl.flock`` on ``lock_file`` (created if missing): one holder at a
    time across the processes and replicas that share it."""
    with open(lock_file, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _directory_lock(directory: Path) -> AbstractContextManager[None]:
    """Serialise claim decisions on one directory across processes."""
    return flocked(directory / ".claims.lock")


def _write_claim(path: Path, holder: ClaimHolder) -> None:
    temporary = path.with_name(f".{path.name}.{holder.token}")
    temporary.write_bytes(holder.to_json())
    os.replace(temporary, path)


def _claims_log(directory: Path, line: str) -> None:
    """Append one line to ``<directory>/claims.log`` (rotated to ``claims.log.1``)."""
    log = directory / "claims.log"
    try:
        if log.exists() and log.stat().st_size > CLAIM_LOG_BYTES:
            os.replace(log, directory / "claims.log.1")
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except OSError as error:  # the log is for operators; a full disk must not stop a run
        _log.warning("could not write %s: %s", log, error)


class Claim:
    """A held claim: :meth:`beat` and :meth:`report` keep it alive and tell waiters its state."""

    def __init__(self, directory: Path, key: str, holder: ClaimHolder) -> None:
        self.directory, self.key, self.holder = directory, key, holder
        self.path = directory / f"{key}.claim"
        self.lost = threading.Event()  # set when another process took the claim over
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._heartbeat, name=f"posviz-claim-{key[:16]}", daemon=True
        )

    def _ours(self) -> bool:
        holder = _read_holder(self.path)
        return holder is not None and holder.token == self.holder.token

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                with _directory_lock(self.directory):
                    if not self._ours():
                        self.lost.set()
                        _log.warning("claim on %s was taken over by another process", self.key)
                        return
                    os.utime(self.path)
            except OSError as error:
                _log.warning("heartbeat of claim %s failed: %s", self.key, error)

    def report(self, position: int) -> None:
        """Publish the holder's queue place (0 = running) for processes waiting on the claim."""
        if position == self.holder.position or self.lost.is_set():
            return
        self.holder = dataclasses.replace(self.holder, position=position)
        with _directory_lock(self.directory):
            if self._ours():
                _write_claim(self.path, self.holder)

    def note(self, event: str) -> None:
        """Record ``event`` (one word, e.g. "training") for this claim in ``claims.log``: how an
        operator (and the scale smoke) counts what the holders did."""
        if not re.fullmatch(r"[a-z-]{1,32}", event):
            raise ValueError(f"event {event!r} must be 1-32 lower-case letters or '-'.")
        _claims_log(self.directory, f"{event} {self.key} {self._who()}")

    def start(self, heartbeat_s: float) -> None:
        self.heartbeat_s = heartbeat_s
        self._thread.start()

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        with _directory_lock(self.directory):
            if self._ours():
                self.path.unlink()
                _claims_log(self.directory, f"released {self.key} {self._who()}")

    def _who(self) -> str:
        return f"host={self.holder.host} pid={self.holder.pid}"


@contextmanager
def claim(
    directory: Path,
    key: str,
    *,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    done: Callable[[], bool] | None = None,
    stale_after: float = CLAIM_STALE_S,
    heartbeat_s: float = CLAIM_HEARTBEAT_S,
) -> Iterator[Claim | None]:
    """Hold ``key`` in ``directory`` (shared by every replica) for the ``with`` block.

    One process at a time holds a key: the others wait, polling every :data:`CLAIM_POLL_S`
    seconds, until the holder releases it; then the next one takes it. With ``done``, a process
    that finds the key free asks ``done()`` first (is the result there, e.g. in a shared store,
    left by the holder it waited for?): if so it does not claim and the block gets None, so a
    result computed once is claimed once. Without ``done`` the block should check for the result
    itself. The claim is the file
    ``<directory>/<key>.claim`` (JSON: host, pid, start, queue place), created and taken over
    under ``fcntl.flock`` on ``<directory>/.claims.lock``; the holder touches it every
    ``heartbeat_s``. A dead holder cannot keep it: a waiter on the same host takes it over as
    soon as the holder's pid is gone; any waiter takes it over once the heartbeat is older than
    ``stale_after`` (a killed container, a lost host). ``<directory>/claims.log`` records every
    claim, take-over and release. Inside the block, :func:`job_slot` publishes the holder's queue
    place; waiters get it as ``on_wait(position)`` (0 = the holder is computing).

    Raises:
        ValueError: ``key`` is not 1-100 letters, digits, ``_``, ``.`` or ``-``.
        JobCancelled: ``should_stop()`` turned true while waiting.
    """
    if not _CLAIM_KEY.match(key):
        raise ValueError(f"claim key {key!r} must be 1-100 letters, digits, _ . or -.")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key}.claim"
    me = ClaimHolder(uuid.uuid4().hex, socket.gethostname(), os.getpid(), time.time())
    while True:
        with _directory_lock(directory):
            holder = _read_holder(path)
            why = "" if holder is None else _claim_stale(path, holder, stale_after)
            free = holder is None and done is not None  # ask done() before claiming
            if (holder is None or why) and not free:
                _write_claim(path, me)
                line = f"claimed {key} host={me.host} pid={me.pid}"
                if holder is not None:
                    line += f" (took over from host={holder.host} pid={holder.pid}: {why})"
                _claims_log(directory, line)
                break
        if free:  # outside the lock: done() may read files
            if done is not None and done():
                yield None
                return
            done = None  # not done: claim it next time round (if still free)
            continue
        if _shutdown.is_set() or (should_stop is not None and should_stop()):
            raise JobCancelled(f"Left while another process computed {key}.")
        if on_wait is not None:
            on_wait(holder.position)
        time.sleep(CLAIM_POLL_S)
    held = Claim(directory, key, me)
    held.start(heartbeat_s)
    with _held_lock:
        _held.add(held)
    try:
        with _reporting(held.report):
            yield held
    finally:
        held.release()
        with _held_lock:
            _held.discard(held)


_held: set[Claim] = set()  # the claims this process holds now
_held_lock = threading.Lock()


def release_held_claims() -> int:
    """Release every claim this process holds (a stopping server whose runs did not reach their
    next check in time); how many. Their holders' own releases then find nothing to do."""
    with _held_lock:
        held = list(_held)
    for each in held:
        each.release()
    return len(held)


# ------------------------------------------------------------- computations pages follow
#
# A page's heavy computation runs in a thread of its own, not in the page's script run: a
# Streamlit rerun (the visitor changed a control) stops the script at its next Streamlit call,
# which used to abandon the computation half done and start it again from nothing. Detached,
# it goes on; the rerun finds it by its key and follows it again. It leaves the job queue only
# when nobody has followed it for DETACHED_IDLE_S (every visitor left) or the server stops.

#: seconds a detached computation waits in the job queue without a follower before it leaves
#: (a rerun follows it again within a few seconds; a closed tab never does).
DETACHED_IDLE_S = 30.0


@dataclass(frozen=True)
class DetachedView:
    """A consistent copy of a detached computation's state, for drawing.

    ``position``: its place in the job queue (0: not queued); ``fraction`` in [0, 1] and
    ``step``: the latest progress report; ``elapsed_s``: seconds it has computed (time queued
    left out); ``step_s``: seconds since ``step`` began; ``left_s``: seconds left at the pace of
    the latest report, counted down since (None before :data:`ESTIMATE_AFTER` is done, or once a
    step outlasts it: a long step must not make the estimate grow without bound).
    """

    what: str
    position: int
    fraction: float
    step: str
    elapsed_s: float
    step_s: float
    started: bool
    left_s: float | None = None
    queued_s: float = 0.0  # seconds spent in the job queue so far

    def lines(self) -> tuple[str, str]:
        """``(the line above the progress bar, the bar's text)`` a page shows for this state."""
        if self.position:
            name = self.what.split(" (")[0]  # its name, without the duration it promises
            line = queue_wait_text(self.position, what=f"Computing {name}")
            return line, f"Waiting for its turn ({self.queued_s:.0f} s so far) …"
        if not self.started:
            return f"Computing {self.what} …", f"Starting ({self.elapsed_s:.0f} s elapsed) …"
        text = wait_text(
            self.step, self.fraction, self.elapsed_s, step_s=self.step_s, left_s=self.left_s
        )
        return f"Computing {self.what} …", text


class Detached:
    """One heavy computation in its own daemon thread (:func:`detached`): its progress, queue
    place and result, for every page that follows it (thread-safe)."""

    def __init__(self, key: Hashable, what: str, *, idle_s: float) -> None:
        self.key, self.what, self.idle_s = key, what, idle_s
        self._lock = threading.Lock()
        self._done = threading.Event()
        now = time.monotonic()
        self._seen = now  # the last time a follower looked
        self._start = now
        self._queued_s = 0.0  # seconds spent in the job queue so far
        self._queued_at: float | None = None  # since when it waits now (None: not queued)
        self._position = 0
        self._fraction, self._step, self._step_at = 0.0, "", now
        self._started = False  # a progress report came
        self._left: float | None = None  # seconds left at the latest report's pace
        self._report_at = now
        self._value: Any = None
        self._error: BaseException | None = None

    def on_wait(self, position: int) -> None:
        """A queue report (``0``: it left the queue or runs)."""
        now = time.monotonic()
        with self._lock:
            if position and self._queued_at is None:
                self._queued_at = now
            elif not position:
                self._leave_queue(now)
            self._position = int(position)

    def progress(self, fraction: float, step: str) -> None:
        """A progress report: it runs (not queued), ``fraction`` done, doing ``step``."""
        now = time.monotonic()
        with self._lock:
            self._leave_queue(now)
            self._position, self._started = 0, True
            self._fraction = max(self._fraction, min(max(float(fraction), 0.0), 1.0))
            if step != self._step:
                self._step, self._step_at = step, now
            elapsed = now - self._start - self._queued_s
            self._left = _pace_left(self._fraction, elapsed)  # counted down until the next report
            self._report_at = now

    def _leave_queue(self, now: float) -> None:
        if self._queued_at is not None:
            self._queued_s += now - self._queued_at
            self._queued_at = None

    def should_stop(self) -> bool:
        """Whether it should leave the queue: the server stops, or nobody followed it for
        ``idle_s`` seconds."""
        with self._lock:
            idle = time.monotonic() - self._seen > self.idle_s
        return _shutdown.is_set() or idle

    def view(self) -> DetachedView:
        """Its state now (a follower's look, which keeps it wanted)."""
        with self._lock:
            self._seen = time.monotonic()
        return self.view_quietly()

    def view_quietly(self) -> DetachedView:
        """Its state now, without counting as a follower's look."""
        now = time.monotonic()
        with self._lock:
            queued = self._queued_s + (now - self._queued_at if self._queued_at else 0.0)
            left = None if self._left is None else self._left - (now - self._report_at)
            return DetachedView(
                left_s=left if left is not None and left > 0 else None,
                queued_s=queued,
                what=self.what,
                position=self._position,
                fraction=self._fraction,
                step=self._step,
                elapsed_s=max(now - self._start - queued, 0.0),
                step_s=now - self._step_at,
                started=self._started,
            )

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the result; whether it is there (a follower's
        look, which keeps it wanted)."""
        with self._lock:
            self._seen = time.monotonic()
        return self._done.wait(timeout)

    def result(self) -> Any:
        """The value, or the exception the computation raised (raised again here)."""
        if not self._done.is_set():
            raise RuntimeError(f"{self.what} is still being computed; wait() for it first.")
        if self._error is not None:
            raise self._error
        return self._value

    def seconds_left(self) -> float | None:
        """Seconds left (:attr:`DetachedView.left_s`), None while not known."""
        return self.view_quietly().left_s

    def _run(self, run: Callable[..., Any], about: str) -> None:
        try:
            # _reporting: a slot taken without a progress report after it (a checkpoint's
            # one-time conversion) still tells its followers that it left the queue
            with described(about, self.seconds_left), _reporting(self.on_wait):
                self._value = run(
                    on_wait=self.on_wait, should_stop=self.should_stop, progress=self.progress
                )
        except BaseException as error:  # handed to every follower, raised in their threads
            self._error = error
        finally:
            with _detached_lock:
                if _detached.get(self.key) is self:
                    del _detached[self.key]
            self._done.set()


_detached: dict[Hashable, Detached] = {}
_detached_lock = threading.Lock()


def detached(
    key: Hashable,
    what: str,
    run: Callable[..., Any],
    *,
    about: str = "",
    idle_s: float = DETACHED_IDLE_S,
) -> Detached:
    """The computation of ``key``: the one running now in this process, else ``run(on_wait=,
    should_stop=, progress=)`` started in a daemon thread. Follow it with
    :meth:`Detached.wait` / :meth:`Detached.view` and take :meth:`Detached.result`; a follower
    that stops following (a rerun, a closed tab) does not stop it. ``run`` should cache its
    result (the computation is forgotten once it ends). ``about``: how other computations'
    queue lines name it (default ``what``)."""
    with _detached_lock:
        job = _detached.get(key)
        if job is not None:
            return job
        job = _detached[key] = Detached(key, what, idle_s=idle_s)
    name = f"posviz-detached-{str(key)[:40]}"
    threading.Thread(target=job._run, args=(run, about or what), name=name, daemon=True).start()
    return job
