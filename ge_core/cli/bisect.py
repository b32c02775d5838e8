"""The `bisect` verb: numeric bisection over the passes, as the workbench's Debug page runs it.

    python -m ge_core bisect model.onnx --config config.json --inputs inputs.npz --tolerance 1e-4

Every pass's graph runs on the same inputs against the graph as imported (ge_core.debugging.bisect). Exit
code 0 when every pass keeps the outputs within the tolerance, 3 when one drifts beyond it or fails to run
(the first such pass named on stderr), as a reproducer's README expects.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ge_core.cli.options import compile_options, config_from_args, model_options, source_of
from ge_core.compiler import compile as ge_compile
from ge_core.debugging.bisect import DEFAULT_TOLERANCE, BisectResult, bisect_numerics
from ge_core.errors import UsageError, quote
from ge_core.runtime import random_feeds
from ge_core.runtime.npz import read_npz

EXIT_AGREE, EXIT_DRIFT = 0, 3


def add_bisect_verb(verbs: Any) -> None:
    bisect = verbs.add_parser("bisect", parents=[model_options(), compile_options()],
                              help="run the graph after every pass on the same inputs: which pass first moves "
                                   "the outputs beyond --tolerance (exit 3 when one does)")
    bisect.add_argument("--inputs", help="an .npz file keyed by input name (default: seeded random inputs)")
    bisect.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    bisect.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help=f"max relative error a pass may add (default {DEFAULT_TOLERANCE:g})")
    bisect.set_defaults(func=cmd_bisect)


def cmd_bisect(args: argparse.Namespace) -> int:
    if str(args.model).endswith(".gem"):
        raise UsageError(f"{quote(args.model)} is an offline model: it keeps no graph per pass to bisect.",
                         hint="Bisect the .onnx it was compiled from.")
    if not (args.tolerance >= 0 and math.isfinite(args.tolerance)):
        raise UsageError(f"--tolerance {args.tolerance}: give a finite number >= 0, e.g. 1e-4.")
    compiled = ge_compile(source_of(args), config_from_args(args))  # no cache: its entries keep no snapshots
    feeds = read_npz(args.inputs) if args.inputs else random_feeds(compiled.input_graph, args.seed)
    result = bisect_numerics(compiled, feeds, args.tolerance)
    print(result.table().to_string(index=False, float_format=lambda v: f"{v:.2e}"))
    return _verdict(result)


def _verdict(result: BisectResult) -> int:
    """The finding on stdout (all agree) or stderr (the first step that drifts or fails), and the exit code."""
    finding = result.finding()
    if finding is None:
        print(f"Every pass keeps the outputs within {result.tolerance:.1e} of the imported model's.")
        return EXIT_AGREE
    print(f"ge_core bisect: {finding}", file=sys.stderr)
    return EXIT_DRIFT
