"""The dump writers against the compile they dump: `compile --dump-dir` on a Relu chain of N nodes.

    python bench/bench_dumps.py [--nodes 30000] [--levels 2] [--forms workbench,ge_proto|onnx]

The target (issue 38): at the default level (DUMP_GRAPH_LEVEL=2, GE's whitelist: the graph as imported, the
end of AfterInfershape and of OptimizeOriginalGraph, and Build) writing the dumps costs no more than the
compile itself. The chain (bench/synthetic.py) is compiled once at O3 (no compile cache); each form is then
written at each level into a fresh temporary folder, timed (wall), its files counted and sized. The load
average is printed beside the table: on the shared 2-core machine absolute times move with it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.synthetic import relu_chain
from ge_core.debugging.dump import write_dumps
from ge_core.debugging.ge_stages import GeDumpOptions, write_ge_dumps

GE_FORMS = ("ge_proto", "onnx")


def write(compiled: ge_core.CompiledModel, form: str, level: str, folder: Path) -> list[Path]:
    if form == "workbench":
        return write_dumps(compiled, folder, stages=level)
    return write_ge_dumps(compiled, folder, GeDumpOptions(2, level, tuple(form.split("|"))))


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=30_000)
    parser.add_argument("--levels", default="2", help="DUMP_GRAPH_LEVEL values, comma-separated (default 2)")
    parser.add_argument("--forms", default="workbench,ge_proto|onnx", help="comma-separated: workbench, "
                                                                           "ge_proto|onnx, ge_proto, onnx")
    args = parser.parse_args()
    ge_core.tune_process()
    model = relu_chain(args.nodes)
    start = time.perf_counter()
    compiled = ge_core.compile(model, ge_core.CompileConfig(opt_level="O3"), cache=None)
    compile_s = time.perf_counter() - start
    print(f"Relu chain of {args.nodes:,} nodes: O3 compile {compile_s:.1f} s ({len(compiled.records)} pass records); "
          f"load average {load()} before the dumps")
    print()
    print("| form | DUMP_GRAPH_LEVEL | files | MB | dump s | dump / compile |")
    print("|---|---|---:|---:|---:|---:|")
    for level in args.levels.split(","):
        for form in args.forms.split(","):
            with tempfile.TemporaryDirectory(prefix="ge_bench_dumps_") as tmp:
                start = time.perf_counter()
                files = write(compiled, form, level, Path(tmp))
                seconds = time.perf_counter() - start
                size = sum(p.stat().st_size for p in files)
            print(f"| {form} | {level} | {len(files)} | {size / 1e6:,.1f} | {seconds:.1f} | "
                  f"{seconds / compile_s:.2f}x |")
    print()
    print(f"load average {load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
