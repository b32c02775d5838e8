"""Runtimes: the interpreter (one node loop), the CPU executor over it, and the arena executor (a MemoryPlan
taken at its word); `relative_error` compares their outputs."""

from ge_core.runtime.arena import ArenaExecutor
from ge_core.runtime.compare import relative_error
from ge_core.runtime.executor import Executor, execute
from ge_core.runtime.feeds import check_feeds, random_feeds
from ge_core.runtime.interpreter import ExecutionResult, Interpreter, NodeTiming

__all__ = ["ArenaExecutor", "ExecutionResult", "Executor", "Interpreter", "NodeTiming", "check_feeds", "execute",
           "random_feeds", "relative_error"]
