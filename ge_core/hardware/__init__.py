"""Hardware profiles of Ascend parts and the tiling of kernels onto their on-chip buffers.

    load_profile("ascend910") / load_profile("my_part.json") -> HardwareProfile
    profile_names() -> ["ascend310", "ascend310p", "ascend910", "ascend910b"]
    tile_node(node, graph, profile) -> Tiling (block dim, tile shapes, per-buffer bytes, describe()); remembered
        per graph node (the compile's TilingPass tiles every kernel, the simulator reuses them); forget_tilings()
"""

from ge_core.hardware.loader import DEFAULT_PROFILE, ProfileError, build_profile, load_profile, profile_names
from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.tiling import Tiling, forget_tilings, kernel_kind, tile_node

__all__ = ["DEFAULT_PROFILE", "HardwareProfile", "ProfileError", "Tiling", "build_profile", "forget_tilings",
           "kernel_kind", "load_profile", "profile_names", "tile_node"]
