"""The project version (the offline model, the compile cache and reports record it)."""

__version__ = "0.1.0"
