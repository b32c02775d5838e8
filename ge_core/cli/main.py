"""`python -m ge_core VERB MODEL [options]`: inspect and run models from the command line.

Exit codes: 0 success, 2 bad usage, 3 model refused. A refusal is a short paragraph on stderr naming the
node/tensor and what to do; a traceback is printed only with --debug.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ge_core.cli.memory_options import add_memory_options, memory_kwargs, memory_line
from ge_core.cli.profile import add_profile_verb, add_run_backend_options, cmd_run_npu
from ge_core.errors import GEError, UsageError
from ge_core.frontend import import_onnx
from ge_core.frontend.onnx import Source
from ge_core.frontend.summary import summarize

EXIT_INTERNAL = 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except GEError as err:
        if args.debug:
            raise
        print(f"ge_core {args.verb}: {err}", file=sys.stderr)
        return err.exit_code
    except MemoryError:
        if args.debug:
            raise
        print(f"ge_core {args.verb}: ran out of memory. Use smaller input shapes.", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: say so briefly, keep the traceback for --debug
        if args.debug:
            raise
        print(f"ge_core {args.verb}: internal error ({type(exc).__name__}: {exc}). Rerun with --debug for the "
              "traceback and please report it.", file=sys.stderr)
        return EXIT_INTERNAL


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ge_core", description="GE Workbench command line.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("model", help="an .onnx file, or sample:NAME for a bundled sample")
    common.add_argument("--input-shape", "--input_shape", dest="input_shape", default="",
                        help='ATC-style shapes for symbolic dims: "x:1,3,640,640;mask:1,128"')
    common.add_argument("--debug", action="store_true", help="print tracebacks")

    inspect = verbs.add_parser("inspect", parents=[common], help="summary: inputs, outputs, ops, problems")
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")
    inspect.set_defaults(func=cmd_inspect)

    run = verbs.add_parser("run", parents=[common], help="run the model on the CPU executor (or --backend npu)")
    run.add_argument("--opt-level", "--oo_level", dest="opt_level", default="O0",
                     help="compile at O0 (as imported, default), O1 (cleanups) or O3 (all passes) first")
    run.add_argument("--inputs", help="an .npz file keyed by input name (default: seeded random inputs)")
    run.add_argument("--outputs", help="write outputs to this .npz, keyed by graph output name")
    run.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    run.add_argument("--timings", action="store_true", help="print per-node and per-op wall times")
    run.add_argument("--fusion-switch-file", "--fusion_switch_file", dest="switch_file",
                     help="turn passes off by name before running, as for compile")
    add_memory_options(run)
    add_run_backend_options(run)
    run.set_defaults(func=cmd_run)

    comp = verbs.add_parser("compile", parents=[common], help="run the pass pipeline; report and dumps")
    comp.add_argument("--opt-level", "--oo_level", dest="opt_level", default="O3", help="O0, O1 or O3 (default)")
    comp.add_argument("--fusion-switch-file", "--fusion_switch_file", dest="switch_file",
                      help="turn passes off by name: lines 'PassName:off', or GE's JSON switch file")
    comp.add_argument("--dump-dir", help="write the graph after every pass here (text, JSON, and ONNX when "
                                         "standard), like DUMP_GE_GRAPH")
    comp.add_argument("--report", help="write the compile report (JSON) here")
    comp.add_argument("--verify", action="store_true", help="run graph.verify() after every pass")
    comp.add_argument("--hardware", help="lower for this NPU (ascend310, ascend910, ascend910b or a profile .json): "
                                         "formats, TransData, tiling; default: target-independent")
    add_memory_options(comp)
    comp.set_defaults(func=cmd_compile)
    add_profile_verb(verbs, common)
    return parser


def cmd_inspect(args: argparse.Namespace) -> int:
    result = import_onnx(_source(args.model), _input_shapes(args))
    summary = summarize(result)
    if args.json:
        from ge_core.ops import REGISTRY

        print(json.dumps(summary.to_json() | {"supported_ops": REGISTRY.supported()}, indent=2))
    else:
        print(summary.to_text())
    if not result.ok:
        print(f"ge_core inspect: {result.error()}", file=sys.stderr)
        return 3
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from ge_core.compiler import compile as ge_compile
    from ge_core.frontend import load_onnx
    from ge_core.runtime import random_feeds

    if args.backend == "npu":
        return cmd_run_npu(args)
    graph = load_onnx(_source(args.model), _input_shapes(args))
    compiled = ge_compile(graph, opt_level=args.opt_level, switch_file=args.switch_file, **memory_kwargs(args))
    feeds = _read_npz(args.inputs) if args.inputs else random_feeds(graph, args.seed)
    result = compiled.runner.run(feeds)
    for name, value in result.outputs.items():
        print(f"{name}: {value.dtype}{list(value.shape)}  {_stats(value)}")
    if args.outputs:
        np.savez(args.outputs, **result.outputs)  # type: ignore[arg-type]
        print(f"wrote {len(result.outputs)} output(s) to {args.outputs}")
    total = sum(t.seconds for t in result.timings)
    print(f"{len(result.timings)} nodes ({compiled.plan.kernels} kernels, {compiled.config.opt_level}) in "
          f"{total * 1e3:.1f} ms; peak activations {result.peak_live_bytes / (1 << 20):.2f} MiB")
    if args.timings:
        from ge_core.runtime.timings import timing_table

        print(timing_table(result.timings))
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from ge_core.compiler import compile as ge_compile

    compiled = ge_compile(_source(args.model), input_shapes=_input_shapes(args), opt_level=args.opt_level,
                          switch_file=args.switch_file, verify=args.verify, hardware=args.hardware,
                          **memory_kwargs(args))
    print(f"{'#':>3} {'stage':<22} {'pass':<32} {'changed':<7} {'nodes':>13} {'ms':>8}")
    for r in compiled.records:
        print(f"{r.index:>3} {r.stage:<22} {r.name:<32} {'yes' if r.changed else '-':<7} "
              f"{r.nodes_before:>6}->{r.nodes_after:<6} {r.seconds * 1e3:>8.2f}")
    print(f"compiled {len(compiled.input_graph)} -> {len(compiled.graph)} nodes, {compiled.plan.kernels} kernels, "
          f"in {compiled.compile_seconds:.3f} s ({compiled.config.opt_level})")
    print(memory_line(compiled.report))
    if args.hardware:
        from ge_core.passes.npu.report import lowering_line

        print(lowering_line(compiled.graph, compiled.report))
    if args.report:
        Path(args.report).write_text(json.dumps(compiled.report, indent=2), encoding="utf-8")
        print(f"wrote report to {args.report}")
    if args.dump_dir:
        from ge_core.debugging.dump import write_dumps

        files = write_dumps(compiled, args.dump_dir)
        print(f"wrote {len(files)} dump files to {args.dump_dir}")
    return 0


def _source(model: str) -> Source:
    if model.startswith("sample:"):
        from ge_core.samples.registry import sample_bytes

        return sample_bytes(model.removeprefix("sample:"))
    path = Path(model)
    if not path.is_file():
        raise UsageError(f"model file '{model}' not found.",
                         hint="Give a path to an .onnx file, or sample:NAME (see the README for samples).")
    return str(path)


def _input_shapes(args: argparse.Namespace) -> str | None:
    """--input-shape, else a sample's own default shapes for its symbolic dims."""
    if args.input_shape:
        return str(args.input_shape)
    if args.model.startswith("sample:"):
        from ge_core.samples.registry import get_sample

        return get_sample(args.model.removeprefix("sample:")).input_shapes or None
    return None


def _read_npz(path: str) -> dict[str, np.ndarray]:
    if not Path(path).is_file():
        raise UsageError(f"inputs file '{path}' not found.")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise UsageError(f"inputs file '{path}' is not a readable .npz ({exc}).",
                         hint="Write it with numpy.savez(path, input_name=array, ...).") from None


def _stats(value: np.ndarray) -> str:
    if value.size == 0 or value.dtype.kind not in "biuf":
        return ""
    v = value.astype(np.float64)
    return f"min {v.min():.6g}  max {v.max():.6g}  mean {v.mean():.6g}"


if __name__ == "__main__":
    sys.exit(main())
