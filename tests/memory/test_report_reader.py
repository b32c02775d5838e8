"""An independent reader validates a memory plan from the compile report's `memory` section alone (DESIGN.md:
"An independent reader must be able to validate the memory plan from this section alone").

The reader below uses nothing of ge_core but the report's JSON: execution-order steps (inputs, outputs,
in-place pairs, no-task Concats), allocations (offset, size, shape, dtype), declared aliases (view -> base)
and the graph outputs. Two tensors alive at one step must not share bytes unless the report declares why:
one is a view of the other (same root), one is a slice of a no-copy Concat's output, or one was written in
place over the other at the step where the other dies.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import ml_dtypes  # noqa: F401  (numpy learns bfloat16, float8_*, int4... by name)
import numpy as np
import pytest

import ge_core
from ge_core.samples import get_sample, sample_bytes

SAMPLES = ["conv_bn_relu", "residual_block", "squeezenet", "bert_encoder_torch", "ocr_rec_crnn_paddle"]


# ONNX packs these sub-byte types (bits per element); every other dtype takes its numpy (ml_dtypes) itemsize.
PACKED_BITS = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2, "float6_e2m3fn": 6,
               "float6_e3m2fn": 6}


def _bytes(alloc: dict[str, Any]) -> int:
    n = math.prod(alloc["shape"])
    bits = PACKED_BITS.get(alloc["dtype"])
    return -(-n * bits // 8) if bits else n * np.dtype(alloc["dtype"]).itemsize


def report_problems(memory: dict[str, Any]) -> list[str]:
    steps, aliases = memory["steps"], memory["aliases"]
    allocs = {a["tensor"]: a for a in memory["allocations"]}

    def root(t: str) -> str:
        while t in aliases:
            t = aliases[t]
        return t

    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, step in enumerate(steps):
        for t in step["outputs"]:
            first.setdefault(t, i)
            last.setdefault(t, i)
        for t in step["inputs"]:
            if t in first:
                last[t] = i
    for t in memory["graph_outputs"]:
        if t in first:
            last[t] = len(steps) - 1
    for view in sorted(aliases, key=lambda v: -first.get(v, 0)):  # a view keeps its base alive
        base = aliases[view]
        if base in last and view in last:
            last[base] = max(last[base], last[view])
    holder = {t: s["outputs"][0] for s in steps if s.get("no_task") for t in s["inputs"]}
    inplace = {out: x for s in steps for out, x in s.get("inplace", {}).items()}

    def held(outer: str, inner: str) -> bool:
        t = root(inner)
        while t in holder:
            t = root(holder[t])
            if t == root(outer):
                return True
        return False

    def legal(a: str, b: str) -> bool:
        if root(a) == root(b) or held(a, b) or held(b, a):
            return True
        return any(inplace.get(new) is not None and root(inplace[new]) == root(old) and last[old] == first[new]
                   for new, old in ((a, b), (b, a)))

    problems = []
    for t in first:
        if t not in allocs:
            problems.append(f"{t}: no allocation")
        elif allocs[t]["size"] < _bytes(allocs[t]) and t not in aliases:
            problems.append(f"{t}: {allocs[t]['size']} bytes reserved for {_bytes(allocs[t])}")
        elif allocs[t]["offset"] + allocs[t]["size"] > memory["arena_bytes"]:
            problems.append(f"{t}: outside the arena")
    names = [t for t in first if t in allocs]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            alive_together = first[a] <= last[b] and first[b] <= last[a]
            ra, rb = allocs[a], allocs[b]
            overlap = ra["offset"] < rb["offset"] + rb["size"] and rb["offset"] < ra["offset"] + ra["size"]
            if alive_together and overlap and not legal(a, b):
                problems.append(f"{a} and {b} share bytes while both alive")
    return problems


@pytest.mark.parametrize("name", SAMPLES)
def test_the_report_alone_validates_the_plan(name: str) -> None:
    compiled = ge_core.compile(sample_bytes(name), opt_level="O3", input_shapes=get_sample(name).input_shapes)
    memory = compiled.report["memory"]
    assert report_problems(memory) == []


def test_the_reader_needs_the_declared_aliases() -> None:
    """Without `aliases` a view's bytes look like a second tensor on its base's bytes: the plan looks wrong."""
    memory = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O0").report["memory"]
    assert memory["aliases"], "conv_bn_relu keeps a Flatten view at O0"
    undeclared = copy.deepcopy(memory)
    undeclared["aliases"] = {}
    assert report_problems(undeclared)


def test_the_reader_catches_a_corrupted_plan() -> None:
    memory = copy.deepcopy(ge_core.compile(sample_bytes("residual_block"), opt_level="O0").report["memory"])
    for alloc in memory["allocations"]:  # every tensor onto the same bytes: the skip connection collides
        alloc["offset"] = 0
    assert any("share bytes while both alive" in p for p in report_problems(memory))
