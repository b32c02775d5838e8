"""`profile MODEL --real op_summary.csv [--calibrate OUT.json]`: a measured profile beside the simulation.

Reads msprof's op_summary (ge_core.sim.op_summary), matches its tasks to the kernels of MODEL as compiled here
(ge_core.sim.real_compare) and prints the totals, the time per op type measured and simulated, and the
kernels the simulator is most wrong on. `--calibrate` fits the profile's efficiency and launch overhead to the
file (ge_core.sim.calibrate) and writes the calibrated profile, usable as `--hardware OUT.json`.
"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ge_core.compiler import CompiledModel
from ge_core.errors import UsageError, printable
from ge_core.sim import SimResult
from ge_core.sim.calibrate import calibrate, write_profile
from ge_core.sim.op_summary import read_op_summary
from ge_core.sim.real_compare import match_tasks, most_wrong, per_op, per_type, totals


def add_real_options(prof: argparse.ArgumentParser) -> None:
    real = prof.add_argument_group("a measured profile (msprof's op_summary CSV)")
    real.add_argument("--real", metavar="CSV", help="an op_summary_*.csv of this model run on a device: printed "
                                                    "beside the simulation, per op type and per op")
    real.add_argument("--infer-id", type=int, help="which inference of the file (its Infer ID; default the last)")
    real.add_argument("--calibrate", metavar="JSON", help="fit the profile's efficiency and launch overhead to "
                                                          "--real and write the calibrated profile here")


def report_real(args: argparse.Namespace, compiled: CompiledModel, sim: SimResult) -> None:
    if args.calibrate and not args.real:
        raise UsageError("--calibrate needs --real: the measured profile to fit.",
                         hint="Give --real op_summary.csv with --calibrate OUT.json.")
    if not args.real:
        return
    summary = read_op_summary(args.real, infer_id=args.infer_id)
    matched = match_tasks(summary, sim, compiled.graph)
    ops = per_op(summary, sim, matched)
    t = totals(summary, sim, ops)
    which = f", Infer ID {summary.infer_id} of {len(summary.infer_ids)}" if summary.infer_ids else ""
    print(f"\nmeasured: {summary.file} ({summary.layout} layout{which}): {int(t['tasks'])} tasks, "
          f"{t['measured_us']:.1f} us; simulated {t['simulated_us']:.1f} us ({t['ratio']:.2f}x). "
          f"{int(t['matched_tasks'])} tasks matched to our {int(t['kernels'])} kernels: measured "
          f"{t['matched_measured_us']:.1f} us, simulated {t['matched_simulated_us']:.1f} us; per-kernel error "
          f"(geomean |ln simulated/measured|) {t['per_op_error']:.3f}")
    print("\nper op type (matched kernels; ratio = simulated / measured):")
    print(_table(per_type(ops), ["op_type", "kernels", "measured_us", "simulated_us", "ratio"]))
    print("\nwhere the simulator is most wrong (largest |simulated - measured|):")
    print(_table(most_wrong(ops, args.top), ["task", "node", "op_type", "measured_us", "simulated_us", "ratio"]))
    unmatched = ops[ops["node"] == ""]
    if len(unmatched):
        print(f"\n{len(unmatched)} measured task(s) match no kernel of ours: "
              + ", ".join(printable(str(n)) for n in unmatched["task"].head(8)) + ("..." if len(unmatched) > 8 else ""))
    if args.calibrate:
        fit = calibrate(compiled, sim.profile, summary, model=str(args.model))
        path = write_profile(fit, args.calibrate)
        params = ", ".join(f"{k} {v:.3g}" for k, v in fit.parameters().items())
        print(f"\ncalibrated on {len(fit.kernels)} kernels: {params}; per-kernel error {fit.error_before:.3f} -> "
              f"{fit.error_after:.3f}. Wrote {path} (use it as --hardware {path})")


def _table(frame: pd.DataFrame, columns: list[str]) -> str:
    lines = ["  ".join(f"{c:>14}" if c.endswith(("_us", "ratio", "kernels")) else f"{c:<24}" for c in columns)]
    for _, row in frame.iterrows():
        cells = []
        for c in columns:
            value = row[c]
            if isinstance(value, float):
                cells.append(f"{'-' if math.isnan(value) else f'{value:.2f}':>14}")
            elif c == "kernels":
                cells.append(f"{value:>14}")
            else:
                text = printable(str(value))
                cells.append(f"{text if len(text) <= 24 else '…' + text[-23:]:<24}")
        lines.append("  ".join(cells))
    return "\n".join(lines)
