"""tune_process()'s malloc settings (runtime/host_memory.py): repeated runs reuse the heap's pages instead of
faulting in fresh ones.

Each case runs in a fresh interpreter process, so that its malloc state (and environment) is its own."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A graph whose activations are 4 MB each (well above glibc's default 128 KB mmap bar): ten runs after a
# warm-up, counting the process's minor page faults during them.
PROBE = """
import json, resource, numpy as np, onnx
from onnx import TensorProto, helper
import ge_core
nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
         helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Neg", ["c"], ["y"])]
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
ge_core.tune_process()  # what the CLI, the app and the benchmarks call first
executor = ge_core.Executor(ge_core.load_onnx(model.SerializeToString()))
feeds = {"x": np.ones((1024, 1024), np.float32)}
for _ in range(3):
    executor.run(feeds)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    executor.run(feeds)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
from ge_core.runtime.host_memory import keep_freed_host_memory
print(json.dumps({"faults_per_run": faults / 10, "set": keep_freed_host_memory()}))
"""


def probe(extra_env: dict[str, str]) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(extra_env)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's")


@glibc_only
def test_repeated_runs_fault_in_no_fresh_pages() -> None:
    # Three 4 MB activations a run: ~3,000 page faults a run when each is a fresh mmap (the default).
    result = probe({})
    assert result["set"] is True
    assert result["faults_per_run"] < 100, result


@glibc_only
def test_the_users_own_malloc_setting_is_left_alone() -> None:
    # With the user's (here: glibc's default) trim threshold tune_process changes nothing, and the
    # fresh pages are faulted in every run again: what the test above guards against.
    result = probe({"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert result["set"] is False
    assert result["faults_per_run"] > 1000, result
