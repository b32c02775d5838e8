"""The NPU simulator: a compiled model on an Ascend hardware profile, per-op timing and real outputs.

    simulate(compiled, "ascend910", feeds=None, precision="force_fp32") -> SimResult
        .ops (per-op rows), .total_us, .outputs, .precision_errors, .report() (DESIGN.md schema), .trace()

docs/simulator.md describes the model, its assumptions and a worked example. Real profiles: msprof's op_summary
read into a SimResult (op_summary.py), matched to our kernels (real_compare.py) and a profile calibrated on it
(calibrate.py); docs/fidelity.md says how far the simulator is from published figures.
"""

from ge_core.sim.cost import UNITS, KernelCost, Precision, kernel_cost
from ge_core.sim.precision import PRECISION_MODES, parse_precision
from ge_core.sim.simulator import OpRow, SimResult, simulate

__all__ = ["PRECISION_MODES", "UNITS", "KernelCost", "OpRow", "Precision", "SimResult", "kernel_cost",
           "parse_precision", "simulate"]
