"""GE Workbench core: ONNX -> GE Graph -> (passes) -> CPU executor / NPU simulator.

The public API (see DESIGN.md, "Contracts"):
    ge_core.load_onnx(source, input_shapes=None) -> Graph
    ge_core.execute(graph, feeds) -> dict[str, np.ndarray]
    ge_core.compile(graph, opt_level="O3") -> CompiledModel (.report, .run(feeds), .records)
"""

from ge_core.compiler import CompiledModel, compile
from ge_core.errors import GEError
from ge_core.frontend import import_onnx, load_onnx, parse_input_shapes
from ge_core.ir import Graph, Node, TensorDesc
from ge_core.runtime import Executor, execute, random_feeds

__version__ = "0.1.0"

__all__ = [
    "CompiledModel",
    "Executor",
    "GEError",
    "Graph",
    "Node",
    "TensorDesc",
    "compile",
    "execute",
    "import_onnx",
    "load_onnx",
    "parse_input_shapes",
    "random_feeds",
]
