"""`python -m ge_core`: the command line (see ge_core/cli/)."""

import sys

from ge_core.cli.main import main

sys.exit(main())
