"""Graph fusion: declarative pattern rewrites (GE's PatternFusionBasePass), each decision explained.

pattern.py declares patterns as data and matches them; driver.py runs a pass's patterns, judges every
candidate and logs a FusionDecision for each; one file per pattern family holds its patterns and pass.
"""

from ge_core.passes.fusion.graph.attention import AttentionFusionPass
from ge_core.passes.fusion.graph.conv_activation import ConvActivationFusionPass
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.gelu import GeluFusionPass
from ge_core.passes.fusion.graph.hard_activation import HardActivationFusionPass
from ge_core.passes.fusion.graph.layer_norm import LayerNormFusionPass
from ge_core.passes.fusion.graph.matmul_add import MatMulAddFusionPass

__all__ = ["AttentionFusionPass", "ConvActivationFusionPass", "GeluFusionPass", "HardActivationFusionPass",
           "LayerNormFusionPass", "MatMulAddFusionPass", "PatternFusionPass"]
