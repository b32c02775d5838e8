"""Offline models (`.gem` files) and the on-disk compile cache."""

from ge_core.offline.gem import FORMAT_VERSION, Contents, read_gem, write_gem

__all__ = ["FORMAT_VERSION", "Contents", "read_gem", "write_gem"]
