"""Debugging a compile: failures in plain words, numeric bisection over the passes, reproducer zips; and what
real GE left behind: its error logs read into a chain of explained errors, its fusion_result.json, its graph
dumps as a compiled model the pages show (load_ge_dump)."""

from ge_core.debugging.bisect import DEFAULT_TOLERANCE, BisectResult, StepNumerics, bisect_numerics, reference_failure
from ge_core.debugging.dump import dump_zip, fusion_result, fusion_result_text, write_dumps
from ge_core.debugging.failures import Failure, bug_failure, error_failure, import_failure, nodes_named, nodes_of
from ge_core.debugging.ge_codes import CodeExplanation, ErrorCode, StatusExplanation, explain_code, explain_status
from ge_core.debugging.ge_fusion_result import (
    FusionResult,
    GraphFusion,
    PassCounts,
    compare_fusion_results,
    fusion_result_frame,
    fusion_result_from_dict,
    read_fusion_result,
    read_fusion_result_file,
)
from ge_core.debugging.ge_log import (
    ChainEntry,
    GELog,
    chain_frame,
    example_ge_log,
    parse_ge_log_text,
    read_ge_log_file,
    read_ge_log_stream,
)
from ge_core.debugging.ge_log_lines import Names
from ge_core.debugging.ge_model import (
    NamesOnGraph,
    final_stage,
    ge_dump_facts,
    load_ge_dump,
    names_on_graph,
    priced_dump,
    unpriced_nodes,
)
from ge_core.debugging.reproducer import ReplayCommand, replay_commands, reproducer_zip

__all__ = [
    "DEFAULT_TOLERANCE",
    "BisectResult",
    "ChainEntry",
    "CodeExplanation",
    "ErrorCode",
    "Failure",
    "FusionResult",
    "GELog",
    "GraphFusion",
    "Names",
    "NamesOnGraph",
    "PassCounts",
    "ReplayCommand",
    "StatusExplanation",
    "StepNumerics",
    "bisect_numerics",
    "bug_failure",
    "chain_frame",
    "compare_fusion_results",
    "dump_zip",
    "error_failure",
    "example_ge_log",
    "explain_code",
    "explain_status",
    "final_stage",
    "fusion_result",
    "fusion_result_frame",
    "fusion_result_from_dict",
    "fusion_result_text",
    "ge_dump_facts",
    "import_failure",
    "load_ge_dump",
    "names_on_graph",
    "nodes_named",
    "nodes_of",
    "parse_ge_log_text",
    "priced_dump",
    "read_fusion_result",
    "read_fusion_result_file",
    "read_ge_log_file",
    "read_ge_log_stream",
    "reference_failure",
    "replay_commands",
    "reproducer_zip",
    "unpriced_nodes",
    "write_dumps",
]
