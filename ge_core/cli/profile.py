"""The `profile` verb and `run --backend npu`: a model on the simulated NPU from the command line.

    python -m ge_core profile MODEL --hardware ascend910 --opt-level O3 --report R.json --trace T.json
    python -m ge_core run MODEL --backend npu --hardware ascend910 --precision-mode allow_fp32_to_fp16

`profile` compiles for the hardware target (formats, TransData, tiling), simulates it, prints the slowest
kernels and the time per unit, and writes the profile report (DESIGN.md schema) and a Chrome trace that
opens in Perfetto. `run --backend npu` prints and saves the outputs the simulated NPU computes, with the
simulated time and, in a rounding precision mode, each output's error against fp32.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ge_core.cli.memory_options import add_memory_options, memory_kwargs

if TYPE_CHECKING:
    from ge_core.compiler import CompiledModel
    from ge_core.sim import SimResult

DEFAULT_HARDWARE = "ascend910"


def _precision_help() -> str:
    from ge_core.sim import PRECISION_MODES

    return f"ATC precision mode: {', '.join(PRECISION_MODES)} (default force_fp32)"


def add_hardware_options(parser: argparse.ArgumentParser, *, with_hardware: bool = True) -> None:
    if with_hardware:
        parser.add_argument("--hardware", default=DEFAULT_HARDWARE,
                            help="NPU profile: ascend310, ascend910 (default), ascend910b, or a profile .json")
    parser.add_argument("--precision-mode", "--precision_mode", dest="precision_mode", default="force_fp32",
                        help=_precision_help())


def add_run_backend_options(run: argparse.ArgumentParser) -> None:
    """`run --backend cpu|npu` (+ the NPU's profile and precision mode)."""
    run.add_argument("--backend", choices=("cpu", "npu"), default="cpu",
                     help="cpu: the reference executor (default); npu: the simulated NPU (real outputs, timing)")
    add_hardware_options(run)


def add_profile_verb(verbs: Any, common: argparse.ArgumentParser) -> None:
    prof = verbs.add_parser("profile", parents=[common], help="simulate the model on an NPU: per-op timing, trace")
    prof.add_argument("--opt-level", "--oo_level", dest="opt_level", default="O3", help="O0, O1 or O3 (default)")
    prof.add_argument("--fusion-switch-file", "--fusion_switch_file", dest="switch_file",
                      help="turn passes off by name: lines 'PassName:off', or GE's JSON switch file")
    add_hardware_options(prof)
    prof.add_argument("--report", help="write the profile report (JSON) here")
    prof.add_argument("--trace", help="write a Chrome trace (JSON; open it in https://ui.perfetto.dev) here")
    prof.add_argument("--inputs", help="an .npz file keyed by input name (default: seeded random inputs)")
    prof.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    prof.add_argument("--top", type=int, default=15, help="print the N slowest kernels (default 15)")
    add_memory_options(prof)
    prof.set_defaults(func=cmd_profile)


def compile_for(args: argparse.Namespace) -> CompiledModel:
    from ge_core.cli.main import _input_shapes, _source
    from ge_core.compiler import compile as ge_compile

    return ge_compile(_source(args.model), input_shapes=_input_shapes(args), opt_level=args.opt_level,
                      switch_file=getattr(args, "switch_file", None), hardware=args.hardware, **memory_kwargs(args))


def simulate_for(args: argparse.Namespace, compiled: CompiledModel) -> SimResult:
    from ge_core.cli.main import _read_npz
    from ge_core.sim import simulate

    feeds = _read_npz(args.inputs) if args.inputs else None
    return simulate(compiled, args.hardware, feeds, precision=args.precision_mode, seed=args.seed)


def cmd_profile(args: argparse.Namespace) -> int:
    compiled = compile_for(args)
    result = simulate_for(args, compiled)
    print(_summary(result, compiled))
    print(kernel_table(result, args.top))
    print(unit_line(result))
    _print_errors(result)
    if args.report:
        Path(args.report).write_text(json.dumps(result.report(), indent=2), encoding="utf-8")
        print(f"wrote profile report to {args.report}")
    if args.trace:
        Path(args.trace).write_text(json.dumps(result.trace()), encoding="utf-8")
        print(f"wrote Chrome trace to {args.trace} (open it in https://ui.perfetto.dev)")
    return 0


def cmd_run_npu(args: argparse.Namespace) -> int:
    """`run --backend npu`: the simulated NPU's outputs (same printout and .npz as the CPU backend)."""
    from ge_core.cli.main import _stats

    compiled = compile_for(args)
    result = simulate_for(args, compiled)
    for name, value in result.outputs.items():
        print(f"{name}: {value.dtype}{list(value.shape)}  {_stats(value)}")
    if args.outputs:
        np.savez(args.outputs, **result.outputs)  # type: ignore[arg-type]
        print(f"wrote {len(result.outputs)} output(s) to {args.outputs}")
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
        name = r.node if len(r.node) <= 40 else "…" + r.node[-39:]
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
