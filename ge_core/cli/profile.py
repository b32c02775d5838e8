"""The `profile` verb and `run --backend npu`: a model on the simulated NPU from the command line.

    python -m ge_core profile MODEL --hardware ascend910 --opt-level O3 --report R.json --trace T.json
    python -m ge_core profile MODEL --hardware ascend310p --real op_summary.csv --calibrate mine.json
    python -m ge_core run MODEL --backend npu --hardware ascend910 --precision-mode allow_fp32_to_fp16

`profile` compiles for the hardware target (formats, TransData, tiling), simulates it, prints the slowest
kernels and the time per unit, and writes the profile report (DESIGN.md schema) and a Chrome trace that
opens in Perfetto; `--real` prints a measured op_summary beside it, `--calibrate` fits the profile to it
(cli/real.py). `run --backend npu` prints and saves the outputs the simulated NPU computes, with the
simulated time and, in a rounding precision mode, each output's error against fp32.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ge_core.cli.options import compile_options, compiled_from_args, model_options
from ge_core.cli.real import add_real_options, report_real
from ge_core.cli.verbs import RUN_OPT_LEVEL, cmd_run, print_outputs
from ge_core.compiler import CompiledModel
from ge_core.errors import printable
from ge_core.hardware import DEFAULT_PROFILE
from ge_core.runtime.npz import read_npz
from ge_core.sim import SimResult, simulate

DEFAULT_HARDWARE = DEFAULT_PROFILE  # profile and run --backend npu need a target


def add_profile_verb(verbs: Any) -> None:
    prof = verbs.add_parser("profile", parents=[model_options(), compile_options()],
                            help="simulate the model on an NPU: per-op timing, trace")
    prof.add_argument("--report", help="write the profile report (JSON) here")
    prof.add_argument("--trace", help="write a Chrome trace (JSON; open it in https://ui.perfetto.dev) here")
    prof.add_argument("--inputs", help="an .npz file keyed by input name (default: seeded random inputs)")
    prof.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    prof.add_argument("--top", type=int, default=15, help="print the N slowest kernels (default 15)")
    add_real_options(prof)
    prof.set_defaults(func=cmd_profile)


def add_run_backend_option(run: argparse.ArgumentParser) -> None:
    """`run --backend cpu|npu` (the NPU's profile and precision mode are compile options)."""
    run.add_argument("--backend", choices=("cpu", "npu"), default="cpu",
                     help="cpu: the reference executor (default); npu: the simulated NPU (real outputs, timing)")
    run.set_defaults(func=cmd_run_on_backend)


def cmd_run_on_backend(args: argparse.Namespace) -> int:
    return cmd_run_npu(args) if args.backend == "npu" else cmd_run(args)


def compile_for_npu(args: argparse.Namespace, default_opt_level: str = "O3") -> CompiledModel:
    return compiled_from_args(args, default_opt_level=default_opt_level, default_hardware=DEFAULT_HARDWARE)


def simulate_for(args: argparse.Namespace, compiled: CompiledModel) -> SimResult:
    feeds = read_npz(args.inputs) if args.inputs else None
    config = compiled.config
    return simulate(compiled, config.hardware or DEFAULT_HARDWARE, feeds, precision=config.precision_mode,
                    seed=args.seed)


def cmd_profile(args: argparse.Namespace) -> int:
    compiled = compile_for_npu(args)
    result = simulate_for(args, compiled)
    print(_summary(result, compiled))
    print(kernel_table(result, args.top))
    print(unit_line(result))
    _print_errors(result)
    report_real(args, compiled, result)
    if args.report:
        Path(args.report).write_text(json.dumps(result.report(), indent=2), encoding="utf-8")
        print(f"wrote profile report to {args.report}")
    if args.trace:
        Path(args.trace).write_text(json.dumps(result.trace()), encoding="utf-8")
        print(f"wrote Chrome trace to {args.trace} (open it in https://ui.perfetto.dev)")
    return 0


def cmd_run_npu(args: argparse.Namespace) -> int:
    """`run --backend npu`: the simulated NPU's outputs (same printout and .npz as the CPU backend)."""
    compiled = compile_for_npu(args, RUN_OPT_LEVEL)
    result = simulate_for(args, compiled)
    print_outputs(result.outputs, args.outputs)
    print(_summary(result, compiled))
    _print_errors(result)
    return 0


def _summary(result: SimResult, compiled: CompiledModel) -> str:
    hw = result.profile
    return (f"{hw.title} ({hw.name}, {hw.peak_flops / 1e12:.0f} TFLOPS fp16, {hw.memory_bandwidth / 1e9:.0f} GB/s), "
            f"{compiled.config.opt_level}, {result.precision}: {len(result.ops)} kernels in "
            f"{result.total_us:.1f} us simulated (roofline floor {result.floor_us:.1f} us)")


def kernel_table(result: SimResult, top: int) -> str:
    lines = [f"{'node':<40} {'op':<18} {'unit':<7} {'start us':>9} {'us':>8} {'floor us':>8} {'bound':<8} "
             f"{'cores':>5}"]
    for r in sorted(result.ops, key=lambda r: -r.latency_us)[:top]:
        name = printable(r.node if len(r.node) <= 40 else "…" + r.node[-39:])
        lines.append(f"{name:<40} {r.op_type:<18} {r.unit:<7} {r.start_us:>9.2f} {r.latency_us:>8.2f} "
                     f"{r.floor_us:>8.2f} {r.bound:<8} {r.block_dim:>5}")
    return "\n".join(lines)


def unit_line(result: SimResult) -> str:
    busy = result.busy_us()
    total = result.total_us or 1.0
    return "busy per unit: " + ", ".join(f"{u} {v:.1f} us ({v / total:.0%})" for u, v in busy.items() if v > 0)


def _print_errors(result: SimResult) -> None:
    for name, error in result.precision_errors.items():
        print(f"{result.precision}: output '{name}' max relative error vs fp32 {error:.2e}")
