"""ONNX's node conformance cases through GEBackend, counted as ONNX's own runner counts them.

    python bench/bench_conformance.py [--ops Relu,LSTM] [--failures] [--json out.json]

Each of the node cases onnx generates (`onnx.backend.test.case.node.collect_testcases`) is prepared with
`ge_core.runtime.backend.GEBackend`, its inputs normalised as ONNX's runner does (TensorProto -> numpy),
and its outputs compared with `onnx.backend.test.runner.Runner.assert_similar_outputs` at the case's own
rtol/atol. A case passes only when every data set compares equal; a clean refusal (a GEError) is counted
as refused, not as a pass; anything else raised is a crash. Prints the totals and, per operator, what
fails and why (the first line of each distinct reason).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import numpy as np
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases
from onnx.backend.test.case.test_case import TestCase
from onnx.backend.test.runner import Runner

from ge_core.errors import GEError
from ge_core.runtime.backend import GEBackend


@dataclass(frozen=True)
class Outcome:
    case: str
    ops: tuple[str, ...]
    status: str  # "pass", "refused", "wrong" (compared unequal), "crash"
    reason: str = ""


def _normalize(value: object) -> object:
    """ONNX's runner turns TensorProto data (Cast cases) into numpy before comparing."""
    return numpy_helper.to_array(value) if hasattr(value, "data_type") else value


def run_case(case: TestCase) -> Outcome:
    ops = tuple(sorted({n.op_type for n in case.model.graph.node}))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            prepared = GEBackend.prepare(case.model, "CPU")
            for inputs, expected in case.data_sets:
                got = prepared.run([_normalize(v) for v in inputs])
                Runner.assert_similar_outputs([_normalize(v) for v in expected], list(got), case.rtol, case.atol)
    except GEError as err:
        return Outcome(case.name, ops, "refused", str(err).splitlines()[0][:160])
    except AssertionError as err:
        return Outcome(case.name, ops, "wrong", " ".join(str(err).split())[:160])
    except Exception as err:  # a crash: not a refusal on purpose
        return Outcome(case.name, ops, "crash", f"{type(err).__name__}: {err}"[:160])
    return Outcome(case.name, ops, "pass")


def all_cases() -> list[TestCase]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c for c in collect_testcases(None) if c.model is not None]


def report(outcomes: list[Outcome], failures: bool) -> str:
    totals = Counter(o.status for o in outcomes)
    n = len(outcomes)
    lines = [f"{n} node cases: {totals['pass']} pass ({totals['pass'] / max(n, 1):.1%}), "
             f"{totals['refused']} refused, {totals['wrong']} wrong, {totals['crash']} crash", "",
             "| op | cases | pass | refused | wrong | crash | why (most common) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    by_op: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_op[o.ops[-1] if len(o.ops) == 1 else "+".join(o.ops[:3]) + ("+…" if len(o.ops) > 3 else "")].append(o)
    rows = []
    for op, items in by_op.items():
        count = Counter(o.status for o in items)
        if count["pass"] == len(items) and not failures:
            continue
        reasons = Counter(o.reason for o in items if o.status != "pass").most_common(1)
        why = reasons[0][0].replace("|", "/") if reasons else ""
        rows.append((len(items) - count["pass"], op, len(items), count, why))
    for _, op, total, count, why in sorted(rows, key=lambda r: (-r[0], r[1])):
        lines.append(f"| {op} | {total} | {count['pass']} | {count['refused']} | {count['wrong']} | "
                     f"{count['crash']} | {why} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", help="only cases using one of these ops (comma-separated)")
    parser.add_argument("--failures", action="store_true", help="list every op, fully passing ones too")
    parser.add_argument("--json", help="write every case's outcome to this file")
    args = parser.parse_args()
    cases = all_cases()
    if args.ops:
        wanted = set(args.ops.split(","))
        cases = [c for c in cases if wanted & {n.op_type for n in c.model.graph.node}]
    outcomes = [run_case(c) for c in cases]
    print(report(outcomes, args.failures))
    if args.json:
        Path(args.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
