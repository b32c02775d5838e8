"""Debugging a compile: failures in plain words, numeric bisection over the passes, reproducer zips."""

from ge_core.debugging.bisect import DEFAULT_TOLERANCE, BisectResult, StepNumerics, bisect_numerics, reference_failure
from ge_core.debugging.dump import dump_zip, write_dumps
from ge_core.debugging.failures import Failure, bug_failure, error_failure, import_failure, nodes_named, nodes_of
from ge_core.debugging.reproducer import ReplayCommand, replay_commands, reproducer_zip

__all__ = [
    "DEFAULT_TOLERANCE",
    "BisectResult",
    "Failure",
    "ReplayCommand",
    "StepNumerics",
    "bisect_numerics",
    "bug_failure",
    "dump_zip",
    "error_failure",
    "import_failure",
    "nodes_named",
    "nodes_of",
    "reference_failure",
    "replay_commands",
    "reproducer_zip",
    "write_dumps",
]
