"""Offline models (`.gem` files, one model or one per gear) and the on-disk compile cache."""

from ge_core.offline.gears import GearSet
from ge_core.offline.gem import FORMAT_VERSION, Contents, read_gem, write_gem
from ge_core.offline.gem_gears import read_gem_gears, write_gem_gears

__all__ = ["FORMAT_VERSION", "Contents", "GearSet", "read_gem", "read_gem_gears", "write_gem", "write_gem_gears"]
