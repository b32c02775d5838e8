"""Runtimes: the CPU executor (numpy reference kernels)."""

from ge_core.runtime.executor import ExecutionResult, Executor, NodeTiming, execute
from ge_core.runtime.feeds import check_feeds, random_feeds

__all__ = ["ExecutionResult", "Executor", "NodeTiming", "check_feeds", "execute", "random_feeds"]
