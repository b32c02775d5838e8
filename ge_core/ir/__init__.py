"""The GE Graph IR: Graph, Node, TensorDesc."""

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import UNKNOWN_DIM, TensorDesc, desc_of

__all__ = ["UNKNOWN_DIM", "Graph", "Node", "TensorDesc", "desc_of"]
