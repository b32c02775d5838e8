"""The heavy lane (issue 41): heavy work on pages' threads takes a slot, first come first served, and a waiting
job is told how many are ahead; light work takes no slot, so it goes on while a hostile heavy job holds the
lane; a heavy job that fails frees its slot."""

from __future__ import annotations

import threading

import pytest

from workbench_ui.heavy import heavy_lane, in_lane, is_light
from workbench_ui.lanes import Lane

WAIT = 30.0  # generous: the machine is shared


def hold(lane: Lane, release: threading.Event, entered: threading.Event) -> threading.Thread:
    """A heavy job that holds a slot of `lane` until `release` is set (a hostile one: until the test ends)."""
    def job() -> None:
        with lane.slot(waiting=lambda ahead: None):
            entered.set()
            release.wait(WAIT)

    thread = threading.Thread(target=job, daemon=True)
    thread.start()
    assert entered.wait(WAIT)
    return thread


def test_a_heavy_job_waits_for_the_slot_and_is_told_how_many_are_ahead() -> None:
    lane = Lane(slots=1)
    release, entered = threading.Event(), threading.Event()
    holder = hold(lane, release, entered)
    told: list[int] = []
    ran = threading.Event()

    def second() -> None:
        with lane.slot(waiting=told.append):
            ran.set()

    waiter = threading.Thread(target=second, daemon=True)
    waiter.start()
    assert not ran.wait(1.5)  # the slot is held
    assert told and told[0] == 1 and lane.queued == 2
    release.set()
    assert ran.wait(WAIT)
    holder.join(WAIT)
    waiter.join(WAIT)
    assert lane.queued == 0


def test_light_work_never_waits_behind_a_hostile_heavy_job() -> None:
    lane = heavy_lane()
    release, entered = threading.Event(), threading.Event()
    hogs = [hold(lane, release, threading.Event() if i else entered) for i in range(lane.slots)]
    try:
        assert is_light(nodes=10, nbytes=2_000) and not is_light(nodes=176) and not is_light(nbytes=100 << 20)
        done = threading.Event()

        def light() -> None:
            with in_lane("Compiling", nodes=10):
                done.set()

        threading.Thread(target=light, daemon=True).start()
        assert done.wait(5.0)  # at once, though every heavy slot is taken
    finally:
        release.set()
        for hog in hogs:
            hog.join(WAIT)


def test_a_failing_heavy_job_frees_its_slot() -> None:
    lane = Lane(slots=1)
    with pytest.raises(KeyError), lane.slot(waiting=lambda ahead: None):
        raise KeyError("a bug of ours")
    assert lane.queued == 0
    with lane.slot(waiting=lambda ahead: pytest.fail("nothing is ahead")):
        pass
