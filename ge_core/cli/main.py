"""`python -m ge_core VERB MODEL [options]`: inspect and run models from the command line.

Exit codes: 0 success, 2 bad usage, 3 model refused. A refusal is a short paragraph on stderr naming the
node/tensor and what to do; a traceback is printed only with --debug.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ge_core.cli.bisect import add_bisect_verb
from ge_core.cli.dynamic import add_dynamic_options
from ge_core.cli.options import add_tables_option, compile_options, model_options
from ge_core.cli.profile import add_profile_verb, add_run_backend_option
from ge_core.cli.sweep import add_sweep_verb
from ge_core.cli.verbs import cmd_compile, cmd_inspect
from ge_core.cli.warmup import add_warmup_verb
from ge_core.errors import GEError
from ge_core.runtime.process import tune_process

EXIT_INTERNAL = 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    tune_process()  # the CLI's own runs: freed buffers kept, small BLAS products on one thread (process.py)
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
    parser = argparse.ArgumentParser(prog="python -m ge_core", description="GE Workbench command line.",
                                     epilog="MODEL may be model.py:FUNCTION, a PyTorch model (FUNCTION returns "
                                            "(module, example_inputs)): this runs the file's code, so give "
                                            "trusted local files only.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    model, compiling = model_options(), compile_options()

    inspect = verbs.add_parser("inspect", parents=[model], help="summary: inputs, outputs, ops, problems")
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")
    inspect.set_defaults(func=cmd_inspect)

    run = verbs.add_parser("run", parents=[model, compiling],
                           help="compile (at O0 unless told) and run on the CPU executor (or --backend npu)")
    run.add_argument("--inputs", help="an .npz file keyed by input name (default: seeded random inputs)")
    run.add_argument("--outputs", help="write outputs to this .npz, keyed by graph output name")
    run.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    run.add_argument("--timings", action="store_true", help="print per-node and per-op wall times")
    add_run_backend_option(run)

    comp = verbs.add_parser("compile", parents=[model, compiling], help="run the pass pipeline; report and dumps")
    comp.add_argument("--dump-dir", help="write the graph at the stages --dump-graph-level picks here (text, "
                                         "JSON, and ONNX when standard), like DUMP_GE_GRAPH")
    comp.add_argument("--dump-format", default="workbench",
                      help="what --dump-dir writes, '|'-separated: workbench (text, JSON, ONNX, Model Explorer per "
                           "pass; the default), ge_proto and onnx (GE's own ge_proto_*.txt / ge_onnx_*.pbtxt dumps, "
                           "as DUMP_GRAPH_FORMAT)")
    comp.add_argument("--dump-ge-graph", type=int, default=2, choices=(1, 2, 3),
                      help="GE forms' content, as DUMP_GE_GRAPH: 1 with weights, 2 without (default), 3 structure only")
    comp.add_argument("--dump-graph-level", default="2",
                      help="which stages every form writes, as DUMP_GRAPH_LEVEL: 1 all (every pass), 2 GE's "
                           "whitelist (default: as imported, AfterInfershape, PreRunAfterOptimizeOriginalGraph, "
                           "Build), 3 Build, 4 PreRunBegin, or names like 'PreRunBegin|Build' (stages containing them)")
    comp.add_argument("--report", help="write the compile report (JSON) here")
    comp.add_argument("--output", metavar="M.gem", help="write the compiled model here as an offline model (.gem); "
                                                        "run, compile and profile take it as MODEL")
    add_tables_option(comp)
    comp.set_defaults(func=cmd_compile)

    add_profile_verb(verbs)
    for name, verb in (("run", run), ("compile", comp), ("profile", verbs.choices["profile"])):
        add_dynamic_options(verb, name)  # -1 / LOW~HIGH dims and gears go through ge_core.Session
    add_bisect_verb(verbs)
    add_sweep_verb(verbs)
    add_warmup_verb(verbs)
    return parser


if __name__ == "__main__":
    sys.exit(main())
