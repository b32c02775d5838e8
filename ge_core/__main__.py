"""`python -m ge_core`: the command line (see ge_core/cli.py)."""

import sys

from ge_core.cli import main

sys.exit(main())
