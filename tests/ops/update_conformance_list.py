"""Regenerate tests/ops/conformance_passing.txt: the conformance cases that run as must-pass and pass.

    python3 -m tests.ops.update_conformance_list          # rewrite the list, print what changed
    python3 -m tests.ops.update_conformance_list --check  # only print; exit 1 if the list would change

A must-pass candidate is a supported case that is neither refused on purpose (REFUSED) nor a known gap
(GAPS) in tests/ops/test_conformance.py. Candidates that fail are printed and left out: fix them, or add
them to GAPS with a reason (test_conformance fails on a case that is in neither). Known gaps that pass
now are printed too: remove them from GAPS, then run this again. Review the diff before committing.
"""

from __future__ import annotations

import argparse
import sys

from tests.ops.conformance import run_case
from tests.ops.test_conformance import GAPS, PASSING_LIST, RUNS, SUPPORTED, expected_refusal, listed_passing

HEADER = "# Conformance cases that must pass (tests/ops/test_conformance.py); regenerate, never edit by hand:\n" \
         "#   python3 -m tests.ops.update_conformance_list\n"


def passes(case: object) -> str | None:
    """None when the case passes, else the first line of why not."""
    try:
        run_case(case)  # type: ignore[arg-type]
    except Exception as err:  # any failure keeps the case off the list
        return f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the list would change")
    args = parser.parse_args(argv)
    failing = {c.name: why for c in RUNS if (why := passes(c)) is not None}
    fixed_gaps = [c.name for c in SUPPORTED if c.name in GAPS and expected_refusal(c) is None and passes(c) is None]
    names = sorted(c.name for c in RUNS if c.name not in failing)
    old = set(listed_passing())
    for name, why in sorted(failing.items()):
        print(f"fails, left off (fix it or add it to GAPS): {name}: {why}")
    for name in fixed_gaps:
        print(f"known gap passes now (remove it from GAPS, then run this again): {name}")
    for name in sorted(old - set(names)):
        print(f"- {name}")
    for name in sorted(set(names) - old):
        print(f"+ {name}")
    print(f"{len(names)} must-pass cases ({len(old)} listed before), {len(failing)} failing, "
          f"{len(fixed_gaps)} known gaps passing")
    if args.check:
        return int(set(names) != old or bool(failing) or bool(fixed_gaps))
    PASSING_LIST.write_text(HEADER + "".join(f"{name}\n" for name in names))
    print(f"wrote {PASSING_LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
