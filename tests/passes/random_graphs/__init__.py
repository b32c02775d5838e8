"""A seeded generator of random valid GE graphs, for the compile passes' property tests.

`random_graph(seed)` grows a DAG of registered ops through the Graph API, one "move" at a time. A move adds
a few nodes for one pattern the passes look for (Conv+BatchNormalization, Transpose pairs, Reshape chains,
no-ops, constant-only subgraphs, duplicate subexpressions...) or a near miss that must not fire (a scale
that varies over space, a Pad that pads, a Dropout whose mask is read). Every node is inferred as it is
added; a move whose nodes do not infer is rolled back and another one is drawn, so only valid graphs come
out. Dead branches come for free: tips not chosen as graph outputs are read by nobody.

Values stay modest (inputs ~N(0,1), weights scaled by 1/sqrt(fan_in), divisors away from zero) and avoid
discontinuities on rewritten values (Where's condition reads graph inputs only), so that any rewrite the
passes make must keep outputs within 1e-4 relative. Same seed, same graph and feeds.

Modules, by pattern family: builder (the incremental Builder, rollback on Reject), shapes (shared shape
helpers), elementwise, noops, layout (Transpose/Reshape chains), constants (constant subgraphs and
duplicates), cube (MatMul/Gemm/Conv/BatchNormalization), pieces (reductions, Concat/Split/Slice/Gather),
control (an If or a Loop added to some grown graphs, from a draw stream of its own) and generate (the move
table, the growth loop and the outputs).
"""

from __future__ import annotations

from tests.passes.random_graphs.builder import Builder, Move, Reject
from tests.passes.random_graphs.generate import MOVES, MoveKind, random_feeds, random_graph

__all__ = ["MOVES", "Builder", "Move", "MoveKind", "Reject", "random_feeds", "random_graph"]
