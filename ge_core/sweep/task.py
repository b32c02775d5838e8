"""One sweep task on a worker: import, compile (passes and memory plan), simulate, and check the numbers
against the graph as imported (O0) on seeded inputs. Whatever happens, the task returns its row.

    ok        compiled, simulated (with a target), outputs within tolerance of O0
    refused   the workbench refused the model or the config (a GEError: its message is the error)
    failed    anything else: a bug (the exception and where), a crash of the task's process, outputs that
              moved more than NUMERIC_TOLERANCE from O0 in an exact precision mode, a worker that kept dying
    timeout   still running when its time was up
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from functools import partial
from pathlib import Path

from ge_core.compiler import compile as ge_compile
from ge_core.errors import GEError, printable, quote
from ge_core.runtime import execute, random_feeds, relative_error
from ge_core.samples import sample_bytes
from ge_core.sim import simulate
from ge_core.sim.precision import exact, parse_precision
from ge_core.sweep.isolate import Outcome, run_isolated
from ge_core.sweep.plan import SAMPLE_PREFIX, Task
from ge_core.sweep.results import Row, empty_row

NUMERIC_TOLERANCE = 1e-3  # max relative error vs O0 for a compile that must not change the numbers


def execute_task(task: Task, timeout: float | None = None) -> Row:
    """What a worker runs: the task in a child process (ge_core.sweep.isolate), always a row back."""
    start = time.perf_counter()
    outcome = run_isolated(partial(run_task, task), timeout)
    row = outcome.value if outcome.returned else _lost_row(task, outcome, timeout)
    row["seconds"] = time.perf_counter() - start
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


def run_task(task: Task) -> Row:
    """The task's row, measured in this process; every exception becomes the row's status."""
    row = empty_row(task)
    try:
        _measure(task, row)
    except GEError as err:
        row.update(status="refused", error=str(err))
    except MemoryError:
        row.update(status="failed", error="ran out of memory. Give the workers more memory or leave the model out.")
    except Exception as exc:  # a bug of ours: the row says what and where, the sweep goes on
        row.update(status="failed", error=internal_error(exc))
    return row


def _measure(task: Task, row: Row) -> None:
    config = task.compile_config()
    source: bytes | str = (sample_bytes(task.model.source.removeprefix(SAMPLE_PREFIX))
                           if task.model.source.startswith(SAMPLE_PREFIX) else task.model.source)
    compiled = ge_compile(source, config)
    plan = compiled.memory
    row.update(nodes=len(compiled.graph), kernels=compiled.plan.kernels, compile_seconds=compiled.compile_seconds,
               arena_bytes=plan.arena_bytes if plan is not None else None,
               theory_min_bytes=plan.theory_min_bytes if plan is not None else None)
    feeds = random_feeds(compiled.input_graph, task.seed)
    want = execute(compiled.input_graph, feeds)  # the O0 graph: as imported, before any pass
    exact_numbers = True  # the CPU executor, or a precision mode that rounds nothing
    if task.hardware:
        result = simulate(compiled, task.hardware, feeds)
        row["simulated_us"] = result.total_us
        got = result.outputs
        exact_numbers = exact(parse_precision(result.precision))
    else:
        got = compiled.run(feeds)
    errors = {name: relative_error(got[name], value) for name, value in want.items()}
    worst = max(errors, key=lambda name: errors[name], default=None)
    row["max_rel_error"] = errors[worst] if worst is not None else 0.0
    if worst is not None and errors[worst] > NUMERIC_TOLERANCE and exact_numbers:
        row.update(status="failed", error=f"output {quote(worst)} differs from the O0 graph's by a relative "
                                          f"{errors[worst]:.3g} (more than {NUMERIC_TOLERANCE:g}): the compile "
                                          "changed the numbers; bisect the passes with the Debug page.")
        return
    row["status"] = "ok"


def internal_error(exc: BaseException) -> str:
    """`internal error ValueError: ... (at ge_core/passes/x.py:12 in run)`: enough to find it again."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {_short_path(last.filename)}:{last.lineno} in {last.name})"
    return printable(f"internal error {type(exc).__name__}: {exc}{where}. Please report it.")


def _short_path(filename: str) -> str:
    parts = Path(filename).parts
    return str(Path(*parts[parts.index("ge_core"):])) if "ge_core" in parts else filename


def _lost_row(task: Task, outcome: Outcome, timeout: float | None) -> Row:
    row = empty_row(task)
    if outcome.timed_out:
        row.update(status="timeout", error=f"still running after the {timeout:g} s timeout; give it a larger "
                                           "--timeout or leave the model out.")
    else:
        row.update(status="failed", error=f"the task's process died ({outcome.died}) before it reported: a crash "
                                          "in a kernel, or killed for its memory.")
    return row
