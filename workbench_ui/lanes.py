"""Two lanes for the work a page does on its own thread (issue 41): heavy work (a big model's import, compile or
numeric bisection) takes one of a few slots, first come first served; light work (a small model's) takes no
slot at all, so it never waits behind heavy work.

    lane = Lane(slots=1)
    with lane.slot(waiting=show):   # show(ahead) while heavy jobs ahead of this one hold the slots
        heavy_work()

Why a lane when worker processes exist: under the GIL, N heavy page threads of one server share one core, and a
light page's thread gets 1/(N+1) of it; with the heavy ones in one lane it gets about half. The work that
stays in the server process is the work whose result costs as much to pickle back as to compute (see
workbench_ui.heavy). Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

POLL_SECONDS = 1.0  # how often a waiting page's message is refreshed


class Lane:
    """At most `slots` heavy jobs at once in this process; the others wait in arrival order."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._queue: list[object] = []  # tickets of waiting and running jobs, in arrival order
        self._changed = threading.Condition()

    @property
    def queued(self) -> int:
        with self._changed:
            return len(self._queue)

    @contextmanager
    def slot(self, waiting: Callable[[int], None]) -> Iterator[None]:
        """Hold a slot while the block runs; `waiting(ahead)` is called while jobs ahead hold every slot."""
        ticket = object()
        with self._changed:
            self._queue.append(ticket)
        try:
            self._wait_for_slot(ticket, waiting)
            yield
        finally:
            with self._changed:
                self._queue.remove(ticket)
                self._changed.notify_all()

    def _wait_for_slot(self, ticket: object, waiting: Callable[[int], None]) -> None:
        while True:
            with self._changed:
                ahead = self._queue.index(ticket) - self.slots + 1
                if ahead <= 0:
                    return
            waiting(ahead)  # outside the lock: it draws
            with self._changed:
                self._changed.wait(POLL_SECONDS)  # a release notifies; the timeout covers one missed meanwhile
