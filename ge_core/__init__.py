"""GE Workbench core: ONNX -> GE Graph -> (passes) -> CPU executor / NPU simulator.

The public API (see DESIGN.md, "Contracts"); the web UI reaches the library only through this module and
`ge_core.viz`, `ge_core.debugging`, `ge_core.samples`, `ge_core.errors`, `ge_core.config`:
    ge_core.load_onnx(source, input_shapes=None) -> Graph
    ge_core.execute(graph, feeds) -> dict[str, np.ndarray]
    ge_core.CompileConfig(...); ge_core.compile(graph, config) -> CompiledModel (.report, .run(feeds), .records)
    ge_core.simulate(compiled, hardware) -> SimResult
    ge_core.Session(options): add_graph / build_graph / run_graph / warm_up / stats / save (GE's option names)
    compiled.save("m.gem"); ge_core.load_compiled("m.gem", shapes=None, gear=None) -> CompiledModel (a gear)
    ge_core.GearedModel.load("m.gem"): every gear of a model compiled with gears (.model_for, .run, .save)
    ge_core.sweep(models, configs, hardware, workers | scheduler, out) -> rows (ge_core/sweep: Dask)
    ge_core.from_torch(module, example_inputs, dynamic_shapes=None) -> Graph           (needs PyTorch)
    torch.compile(model, backend=ge_core.torch_backend(config)); ge_core.torch_stats()  (needs PyTorch)
    ge_core.tune_process()  the CLI's, the app's and the benchmarks' process settings (malloc, BLAS threads)
PyTorch is optional: importing ge_core does not import it. Importing ge_core changes no environment
variable, allocator setting or thread count (runtime/process.py).
"""

import importlib
from typing import Any

from ge_core.compiler import CompiledModel, GearedModel, compile, load_compiled
from ge_core.config import PRECISION_MODES, CompileConfig, MemoryConfig, fusion_pass_names, pass_names
from ge_core.dynamo import TorchStats, torch_backend, torch_stats
from ge_core.errors import GEError
from ge_core.frontend import ImportResult, import_onnx, load_onnx, parse_input_shapes
from ge_core.frontend.summary import ModelSummary, summarize
from ge_core.frontend.torch import from_torch
from ge_core.hardware import HardwareProfile, load_profile, profile_names
from ge_core.ir import Graph, Node, TensorDesc
from ge_core.kernels.jit import compiles as kernel_compiles
from ge_core.offline.cache import CompileCache
from ge_core.passes.infra.instruments import PassRecord
from ge_core.passes.infra.pipeline import OptLevel
from ge_core.runtime import ExecutionResult, Executor, execute, random_feeds
from ge_core.runtime.process import tune_process
from ge_core.session import STRATEGIES as DYNAMIC_STRATEGIES
from ge_core.session import STRATEGY_TITLES as DYNAMIC_STRATEGY_TITLES
from ge_core.session import DynamicAxis, Playback, RunRecord, Session, SessionOptions, request_sizes
from ge_core.session import play as play_requests
from ge_core.session import symbols as dynamic_symbols
from ge_core.session.prefill import prefill_spec as prefill_input_shapes
from ge_core.sim import SimResult, simulate
from ge_core.version import __version__ as __version__  # re-exported

__all__ = [
    "DYNAMIC_STRATEGIES",
    "DYNAMIC_STRATEGY_TITLES",
    "PRECISION_MODES",
    "CompileCache",
    "CompileConfig",
    "CompiledModel",
    "DynamicAxis",
    "ExecutionResult",
    "Executor",
    "GEError",
    "GearedModel",
    "Graph",
    "HardwareProfile",
    "ImportResult",
    "MemoryConfig",
    "ModelSummary",
    "Node",
    "OptLevel",
    "PassRecord",
    "Playback",
    "RunRecord",
    "Session",
    "SessionOptions",
    "SimResult",
    "TensorDesc",
    "TorchStats",
    "compile",
    "dynamic_symbols",
    "execute",
    "from_torch",
    "fusion_pass_names",
    "import_onnx",
    "kernel_compiles",
    "load_compiled",
    "load_onnx",
    "load_profile",
    "parse_input_shapes",
    "pass_names",
    "play_requests",
    "prefill_input_shapes",
    "profile_names",
    "random_feeds",
    "request_sizes",
    "simulate",
    "summarize",
    "sweep",
    "torch_backend",
    "torch_stats",
    "tune_process",
]


def __getattr__(name: str) -> Any:
    """`ge_core.sweep` is imported on first use: `import ge_core` stays free of dask (half a second)."""
    if name == "sweep":
        return importlib.import_module("ge_core.sweep")
    raise AttributeError(f"module 'ge_core' has no attribute {name!r}")
