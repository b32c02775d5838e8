"""HardwareProfile: what the simulator and the tiler know about one Ascend part, as plain frozen data.

Profiles live in JSON files (ge_core/hardware/profiles/*.json, or any user file; see loader.py). Sizes are
bytes, bandwidths bytes per cycle per core unless the name says otherwise, the clock in GHz. Derived
figures (peak FLOP/s, off-chip bytes per second) are properties, so a profile file never states one
number twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

# ATC's --precision_mode values. ATC compiles with force_fp16 unless told otherwise ("参数默认值: force_fp16",
# CANN ATC docs, e.g. canncommercial 6.0.1 atctool_0090, for the inference and training series alike); a
# profile may name another default (`default_precision_mode`), which a compile with no mode of its own takes.
PRECISION_MODES = ("force_fp32", "must_keep_origin_dtype", "allow_fp32_to_fp16", "force_fp16")
ATC_DEFAULT_PRECISION = "force_fp16"


@dataclass(frozen=True)
class Buffers:
    """On-chip buffer sizes per AI Core (l2 is shared by the whole chip)."""

    l0a: int
    l0b: int
    l0c: int
    l1: int
    ub: int
    l2: int


@dataclass(frozen=True)
class Bandwidths:
    """Bytes per cycle per core on each data path (CANN's [AICoreMemoryRates])."""

    ddr_read: int  # MTE2 global memory -> L1/UB, data not in L2
    ddr_write: int  # MTE3 UB -> global memory, to DDR/HBM
    l2_read: int  # MTE2 global memory -> L1/UB, data already in L2
    l2_write: int  # MTE3 UB -> global memory through L2
    l1_to_l0a: int  # MTE1
    l1_to_l0b: int  # MTE1
    l1_to_ub: int
    ub_to_l1: int
    l0c_to_ub: int  # FixPipe: accumulators out of L0C


@dataclass(frozen=True)
class Alignment:
    """Start-address alignment in bytes of each buffer; every tile is rounded up to it."""

    ub: int
    l1: int
    l0a: int
    l0b: int
    l0c: int


@dataclass(frozen=True)
class Overheads:
    kernel_launch_us: float  # per kernel: task dispatch by the runtime (graph sink mode)
    scalar_cycles_per_kernel: int  # scalar unit: tiling parameters, address setup, block sync
    scalar_cycles_per_tile: int  # scalar unit: loop control and instruction issue per tile


@dataclass(frozen=True)
class Efficiency:
    """What fraction of its modelled rate a unit attains (1: as modelled). A calibration fits these to a measured
    profile (ge_core.sim.calibrate): cube and vector divide those units' cycles, memory every data path's
    (MTE1/2/3, FixPipe) and the off-chip bandwidth."""

    cube: float = 1.0
    vector: float = 1.0
    memory: float = 1.0


@dataclass(frozen=True)
class HardwareProfile:
    name: str
    title: str
    ai_cores: int  # cores with a cube unit
    vector_cores: int  # cores running vector kernels (= ai_cores unless cube and vector are separate)
    clock_ghz: float
    cube_m: int
    cube_k: int
    cube_n: int
    cube_fp32_ratio: float  # fp32 cube throughput relative to fp16 (fp32 inputs take more passes)
    vector_bytes_per_cycle: int  # one vector repeat: 256 B = 128 fp16 or 64 fp32 lanes
    vector_class_cycles: dict[str, int] = field(hash=False)  # cycles per repeat per instruction class
    buffers: Buffers
    bandwidth: Bandwidths
    memory_bandwidth_gbps: float  # off-chip DDR/HBM, whole chip, GB/s (1e9 bytes/s)
    alignment: Alignment
    overheads: Overheads
    separated_vector_cores: bool = False  # 910B-like: vector kernels run on their own cores
    default_precision_mode: str = ATC_DEFAULT_PRECISION  # what ATC compiles with when no mode is given
    efficiency: Efficiency = Efficiency()
    # Where the figures stand against reality: a calibration's record (what it was fitted on, its error before
    # and after) and the published figures it was checked on (bench/bench_fidelity.py). Display only.
    calibration: dict[str, object] = field(default_factory=dict, hash=False, compare=False)
    fidelity: dict[str, object] = field(default_factory=dict, hash=False, compare=False)
    sources: dict[str, str] = field(default_factory=dict, hash=False)
    description: str = ""
    path: str = ""  # the file it came from

    # Derived figures: computed once per profile (the simulator reads them for every kernel).
    @cached_property
    def clock_hz(self) -> float:
        return self.clock_ghz * 1e9

    @property
    def cube_macs_per_cycle(self) -> int:
        """fp16 multiply-accumulates per cycle per core (16x16x16 = 4096)."""
        return self.cube_m * self.cube_k * self.cube_n

    @cached_property
    def peak_flops(self) -> float:
        """fp16 cube peak of the chip: cores x MACs x 2 FLOP x clock."""
        return self.ai_cores * self.cube_macs_per_cycle * 2 * self.clock_hz

    @cached_property
    def memory_bandwidth(self) -> float:
        """Off-chip bytes per second, whole chip."""
        return self.memory_bandwidth_gbps * 1e9

    @cached_property
    def chip_bytes_per_cycle(self) -> float:
        """Off-chip bytes per cycle, whole chip."""
        return self.memory_bandwidth / self.clock_hz

    def cores_for(self, unit: str) -> int:
        """Cores a kernel of this kind can spread over: cube kernels over AI cores, vector ones over vector cores."""
        return self.ai_cores if unit == "cube" else self.vector_cores

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e3)

    def to_json(self) -> dict[str, object]:
        """The report's `hardware` section: the contract's name, peak_flops, memory_bandwidth, then the rest."""
        return {
            "name": self.name, "title": self.title, "peak_flops": self.peak_flops,
            "memory_bandwidth": self.memory_bandwidth, "ai_cores": self.ai_cores,
            "vector_cores": self.vector_cores, "clock_ghz": self.clock_ghz,
            "cube": [self.cube_m, self.cube_k, self.cube_n],
            "buffers": vars(self.buffers).copy(), "path": self.path,
        }
