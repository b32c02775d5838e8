"""`python -m ge_core VERB MODEL [options]`: inspect, run, compile and profile models from the command line."""

from ge_core.cli.main import main

__all__ = ["main"]
