"""Importing ge_core and running a model change no process-wide state (environment variables, glibc malloc
settings, OpenBLAS's thread count, an OpenMP runtime); `ge_core.tune_process()`, the explicit call the CLI,
the app and the benchmarks make, does make its settings (runtime/process.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys
before = dict(os.environ)
import ge_core
from ge_core.ops import blas
from ge_core.runtime import host_memory
from ge_core.samples.registry import sample_bytes
threads = blas.blas_threads()
graph = ge_core.load_onnx(sample_bytes("resnet50"))
ge_core.compile(graph, opt_level="O3").run(ge_core.random_feeds(graph, seed=0))
state = {
    "env": sorted(k for k in set(os.environ) | set(before) if os.environ.get(k) != before.get(k)),
    "malloc_set": host_memory.keep_freed_host_memory.cache_info().currsize,
    "blas_set": blas._current[0],
    "threads": [threads, blas.blas_threads()],
    "openmp": "libgomp" in open("/proc/self/maps").read(),
}
if sys.argv[1] == "tune":
    state["tuned"] = ge_core.tune_process()
    state["malloc_set"] = host_memory.keep_freed_host_memory.cache_info().currsize
print(json.dumps(state))
"""


def _probe(mode: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_and_running_change_no_process_state() -> None:
    state = _probe("plain")
    assert state["env"] == []
    assert state["malloc_set"] == 0  # mallopt never called
    threads = state["threads"]
    assert isinstance(threads, list) and threads[0] == threads[1]
    # OpenBLAS's count is never changed for good: the only call is calibrating a sample's batch norms on one
    # thread (samples/calibrate.py), which puts numpy's count back when it ends (an empty cache, as in CI)
    assert state["blas_set"] in (0, threads[0])
    assert state["openmp"] is False  # no OpenMP runtime loaded: the kernels run on the calling thread


def test_tune_process_makes_its_settings_and_says_which() -> None:
    state = _probe("tune")
    tuned = state["tuned"]
    assert isinstance(tuned, list) and any("malloc" in line for line in tuned)
    assert state["malloc_set"] == 1
