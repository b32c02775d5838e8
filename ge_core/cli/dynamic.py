"""Dynamic shapes on `run`, `compile` and `profile`, through ge_core.Session.

    python -m ge_core compile MODEL --input-shape "hidden:1,-1,64;mask:1,-1" --dynamic-dims "16,16;64,64" \
                                    --output M.gem
    python -m ge_core run     MODEL --input-shape "x:-1,3,224,224" --dynamic-batch-size 1,2,4,8 --inputs IN.npz
    python -m ge_core profile MODEL --input-shape "hidden:1,1~512,64;mask:1,1~512" --fusion-mode online

A verb takes this path when --input-shape has -1 or LOW~HIGH dims, or a dynamic flag is given; every other
compile flag builds the same CompileConfig as on the static path. `compile` compiles what the strategy
compiles ahead (a model per gear; the range once in online mode; nothing for an offline range) and with
--output writes every gear into one offline model (as ATC's .om holds every gear), `run` and
`profile` run the inputs (--inputs, else seeded random inputs of the first gear or the range's low end)
on the model the strategy picks, compiles or decides, and print the session's counts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from copy import copy
from dataclasses import replace
from typing import Any

from ge_core.cli.options import GEM_SUFFIX, cache_of, config_from_args, graph_of
from ge_core.cli.profile import kernel_table, unit_line
from ge_core.cli.verbs import RUN_OPT_LEVEL, cache_line, print_outputs
from ge_core.errors import UsageError, quote
from ge_core.hardware import DEFAULT_PROFILE
from ge_core.runtime.npz import read_npz
from ge_core.session import FUSION_MODES, Session
from ge_core.session.shapes import feed_shapes, shapes_text
from ge_core.sim import simulate

GRAPH_ID = 1
Verb = Callable[[argparse.Namespace], int]
_STATIC_ONLY = ("report", "dump_dir", "tables", "trace")  # one compiled model's files


def add_dynamic_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """The dynamic-shape flags on `parser`; its verb goes through the Session when they ask for it."""
    group = parser.add_argument_group("dynamic shapes (with -1 or LOW~HIGH dims in --input-shape)")
    group.add_argument("--dynamic-dims", "--dynamic_dims", dest="dynamic_dims", metavar="GEARS",
                       help='gears: one value per -1 dim of --input-shape, gears separated by ";" ("16,16;64,64"); '
                            "one compile per gear, a run picks the gear its inputs equal")
    group.add_argument("--dynamic-batch-size", "--dynamic_batch_size", dest="dynamic_batch_size", metavar="SIZES",
                       help='batch gears for the -1 dims of --input-shape ("1,2,4,8")')
    group.add_argument("--fusion-mode", dest="fusion_mode", choices=FUSION_MODES,
                       help="offline (default): compile per shape; online: compile once for the range and decide "
                            "UB fusion and tiling per new shape at run time")
    group.add_argument("--gear", metavar="GEAR",
                       help='with an offline model compiled with gears (M.gem): the gear to use, as --dynamic-dims '
                            'or --dynamic-batch-size wrote it ("64,64", "4"); default: the gear of --inputs\' '
                            "shapes, else the first")
    static_verb: Verb = parser.get_default("func")
    parser.set_defaults(func=lambda args: run_dynamic(args, verb) if is_dynamic(args) else static_verb(args))


def is_dynamic(args: argparse.Namespace) -> bool:
    return bool(args.dynamic_dims or args.dynamic_batch_size or args.fusion_mode == "online" or _unknown_dims(args))


def _unknown_dims(args: argparse.Namespace) -> bool:
    """Whether --input-shape has -1 or LOW~HIGH dims."""
    shape = str(getattr(args, "input_shape", "") or "")
    dims = [d.strip() for part in shape.split(";") for d in part.rpartition(":")[2].split(",")]
    return "~" in shape or "-1" in dims


def run_dynamic(args: argparse.Namespace, verb: str) -> int:
    _check_flags(args)
    session = _session(args, verb)
    build_seconds = session.build_graph(GRAPH_ID)
    if verb == "compile":
        code = _report_build(session, build_seconds)
        if args.output:
            print(f"wrote the offline model with every gear to {session.save(GRAPH_ID, args.output)} "
                  f"(run it: python -m ge_core run {args.output} --inputs IN.npz)")
        return code
    feeds = read_npz(args.inputs) if args.inputs else session.dummy_feeds(GRAPH_ID, seed=args.seed)
    if verb == "profile":
        model = session.model_for(GRAPH_ID, feed_shapes(feeds))
        result = simulate(model, feeds=feeds)
        print(f"{result.profile.name}, {model.config.opt_level}, inputs {shapes_text(feed_shapes(feeds))}: "
              f"{len(result.ops)} kernels in {result.total_us:.1f} us simulated")
        print(kernel_table(result, args.top))
        print(unit_line(result))
    else:
        print_outputs(session.run_graph(GRAPH_ID, feeds), args.outputs)
        record = session.last_run(GRAPH_ID)
        if record is not None:
            simulated = f", {record.simulated_us:.1f} us simulated" if record.simulated_us is not None else ""
            print(f"ran {shapes_text(record.shapes)} on the model for {shapes_text(record.model_shapes)} "
                  f"({record.kernels} kernels) in {record.seconds * 1e3:.1f} ms{simulated}")
    print(stats_line(session.stats(GRAPH_ID)))
    return 0


def _check_flags(args: argparse.Namespace) -> None:
    """Refuse, before compiling, what dynamic shapes cannot do."""
    if str(args.model).endswith(GEM_SUFFIX) and not str(args.model).startswith("sample:"):
        raise UsageError(f"{quote(args.model)} is an offline model: its shapes (its gears, if any) were fixed when "
                         "it was compiled.", hint="Run it without dynamic-shape flags (--gear picks a gear), or "
                         "compile the .onnx again.")
    given = [f"--{f.replace('_', '-')}" for f in _STATIC_ONLY if getattr(args, f, None)]
    if given:
        raise UsageError(f"{', '.join(given)} write one compiled model; dynamic shapes make several.",
                         hint="Give a static --input-shape (one shape) for reports, dumps, tables and traces.")
    if args.gear is not None:
        raise UsageError("--gear picks a gear of an offline model (M.gem); here the run picks the gear its "
                         "inputs equal.", hint="Give --inputs of the gear's shapes.")
    if getattr(args, "output", None) and _unknown_dims(args) and not (args.dynamic_dims or args.dynamic_batch_size):
        raise UsageError("--output saves the models compiled ahead: gears, or one static shape; input shape "
                         "ranges compile each shape at run time.",
                         hint="Give gears (--dynamic-dims or --dynamic-batch-size), or a static --input-shape.")


def _session(args: argparse.Namespace, verb: str) -> Session:
    static_args = copy(args)
    static_args.input_shape = ""  # the shapes go to the Session: CompileConfig holds static ones only
    default_hardware = DEFAULT_PROFILE if verb == "profile" or getattr(args, "backend", "cpu") == "npu" else None
    config = config_from_args(static_args, default_opt_level=RUN_OPT_LEVEL if verb == "run" else "O3",
                              default_hardware=default_hardware)
    options: dict[str, Any] = {"ge.inputShape": args.input_shape, "ge.dynamicDims": args.dynamic_dims,
                               "ge.dynamicBatchSize": args.dynamic_batch_size, "ge.fusionMode": args.fusion_mode}
    session = Session({k: v for k, v in options.items() if v}, config=replace(config, input_shapes=""),
                      cache=cache_of(args))
    session.add_graph(GRAPH_ID, graph_of(args))
    return session


def _report_build(session: Session, build_seconds: float) -> int:
    models = session.models(GRAPH_ID)
    options = session.options_of(GRAPH_ID)
    if not models:
        print("range: nothing to compile ahead; each distinct input shape compiles on first use (run, profile), "
              "through the compile cache")
    for model in models:
        what = model.config.input_shapes or "the range (online fusion: UB fusion and tiling decided per shape)"
        print(f"compiled {what}: {len(model.input_graph)} -> {len(model.graph)} nodes, {model.plan.kernels} kernels "
              f"in {model.compile_seconds:.3f} s; {cache_line(model.report)}")
    print(f"built in {build_seconds:.3f} s ({options.config.opt_level}, fusion mode {options.fusion_mode})")
    print(stats_line(session.stats(GRAPH_ID)))
    return 0


def stats_line(stats: dict[str, float | int]) -> str:
    return (f"session: {stats['compiles']} compile(s) in {stats['compile_seconds']:.3f} s, {stats['cache_hits']} "
            f"cache hit(s), {stats['decisions']} run-time decision(s) in {stats['decision_seconds']:.3f} s, "
            f"{stats['runs']} run(s) in {stats['run_seconds']:.3f} s")
