"""Per-node timing tables for `run --timings`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ge_core.runtime.interpreter import NodeTiming


def timing_table(timings: Sequence[NodeTiming], top: int = 15) -> str:
    """The slowest nodes, then wall time per op type with its share of the total."""
    total = sum(t.seconds for t in timings) or 1e-12
    lines = [f"{'node':<40} {'op':<20} {'ms':>9} {'share':>6}"]
    for t in sorted(timings, key=lambda t: -t.seconds)[:top]:
        lines.append(f"{_tail(t.node, 40):<40} {t.op_type:<20} {t.seconds * 1e3:>9.3f} {t.seconds / total:>6.1%}")
    per_op: dict[str, list[float]] = defaultdict(list)
    for t in timings:
        per_op[t.op_type].append(t.seconds)
    lines.append("")
    lines.append(f"{'op':<20} {'count':>6} {'ms':>9} {'share':>6}")
    for op, secs in sorted(per_op.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"{op:<20} {len(secs):>6} {sum(secs) * 1e3:>9.3f} {sum(secs) / total:>6.1%}")
    return "\n".join(lines)


def _tail(name: str, width: int) -> str:
    """Exported names put the informative part last (`/encoder/layer.0/.../Erf`): keep the end."""
    return name if len(name) <= width else "…" + name[-(width - 1):]
