"""Runtimes: the CPU executor (numpy reference kernels) and the arena executor (a MemoryPlan taken at its word)."""

from ge_core.runtime.arena import ArenaExecutor
from ge_core.runtime.executor import ExecutionResult, Executor, NodeTiming, execute
from ge_core.runtime.feeds import check_feeds, random_feeds

__all__ = ["ArenaExecutor", "ExecutionResult", "Executor", "NodeTiming", "check_feeds", "execute", "random_feeds"]
