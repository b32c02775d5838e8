"""Memory planning: activation lifetimes in execution order, several assigners, one arena (GE's memory stage)."""

from ge_core.memory.lifetimes import Lifetimes, TensorLife, compute_lifetimes, static_problem
from ge_core.memory.plan import Allocation, MemoryPlan, PlanStep
from ge_core.memory.planners import STRATEGIES, check_strategy, plan_memory
from ge_core.memory.validate import MemoryPlanError, validate_plan

__all__ = ["STRATEGIES", "Allocation", "Lifetimes", "MemoryPlan", "MemoryPlanError", "PlanStep", "TensorLife",
           "check_strategy", "compute_lifetimes", "plan_memory", "static_problem", "validate_plan"]
