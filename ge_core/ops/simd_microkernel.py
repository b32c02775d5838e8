"""A register-blocked float32 GEMM microkernel written in LLVM IR, for numba kernels to call.

numba's loops auto-vectorise elementwise work, but not a GEMM: the accumulators of a tile live in memory
there, and a hand-blocked numba GEMM ran at 8 GFLOP/s on this machine, against OpenBLAS's ~200 per core.
The microkernel a BLAS is built around is small, so it is written here once as LLVM IR (a numba intrinsic:
compiled into, and cached with, the numba function that calls it): a tile of MR=6 rows by NR=32 columns of C
held in twelve 16-float vector registers, and per step of the reduction two vector loads of B, six broadcast
values of A and twelve fused multiply-adds. It measured 175-220 GFLOP/s on one core (AVX-512), what
OpenBLAS's SkylakeX kernels reach. On a CPU without AVX-512 LLVM splits each vector in two: still correct,
with fewer registers than accumulators.

B is addressed indirectly: step k reads the 32 floats at b + offsets[k]. With offsets of consecutive rows
that is a plain row-major B; with the offsets of a convolution's taps over its flattened, padded input it
is an implicit im2col (conv_direct_jit.py), which is why the kernel takes offsets at all.

numba's on-disk cache keys a compiled kernel by its own source file: after editing this one, delete the
`__pycache__/*.nbi|*.nbc` files of the modules that call it (or touch them), or they keep the old code.
"""

from __future__ import annotations

from typing import Any

MR = 6  # rows of a C tile (A's packed panel is K x MR)
NR = 32  # columns of a C tile: two 16-float vectors
_LANES = 16

try:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic
    NUMBA = True
except ImportError:  # pragma: no cover - the requirements install numba
    NUMBA = False


def _microkernel(typingctx: Any, a_addr: Any, b_addr: Any, offsets_addr: Any, steps: Any, c_addr: Any, ldc: Any,
                 accumulate: Any) -> Any:
    """C[r, j] (+)= sum_k A[k, r] * B[offsets[k] + j] for r < MR, j < NR; addresses as integers: A a packed
    (steps, MR) float32 panel, offsets int64 (in floats), C rows ldc floats apart; accumulate != 0 adds to
    C's values, else overwrites them. steps >= 1. Loads and stores are unaligned."""
    sig = types.void(types.uintp, types.uintp, types.uintp, types.intp, types.uintp, types.intp, types.intp)
    return sig, _codegen_packed_a


def _microkernel_gathered(typingctx: Any, x_addr: Any, offsets_addr: Any, rows_addr: Any, steps: Any,
                          b_addr: Any, c_addr: Any, ldc: Any, accumulate: Any) -> Any:
    """C[r, j] (+)= sum_k X[offsets[k] + rows[r]] * B[k, j] for r < MR, j < NR: A gathered from X (its MR rows
    at int64 positions `rows`, each step k at offset offsets[k]), B a packed (steps, NR) panel; otherwise as
    `microkernel`. A conv whose output pixels are the rows needs no column buffer and computes no padding
    columns (conv_direct_jit.py, small maps)."""
    sig = types.void(types.uintp, types.uintp, types.uintp, types.intp, types.uintp, types.uintp, types.intp,
                     types.intp)
    return sig, _codegen_gathered_a


microkernel: Any = intrinsic(_microkernel) if NUMBA else None  # called from compiled kernels only
microkernel_gathered: Any = intrinsic(_microkernel_gathered) if NUMBA else None


def _codegen_packed_a(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    a_int, b_int, offsets_int, steps, c_int, ldc, accumulate = args
    f32, i64 = ir.FloatType(), ir.IntType(64)
    a_ptr = builder.inttoptr(a_int, f32.as_pointer())
    b_ptr = builder.inttoptr(b_int, f32.as_pointer())
    offsets = builder.inttoptr(offsets_int, i64.as_pointer())

    def step(k: Any) -> tuple[list[Any], Any]:
        a_row = builder.gep(a_ptr, [builder.mul(k, ir.Constant(i64, MR))])
        a = [builder.load(builder.gep(a_row, [ir.Constant(i64, r)]), align=4) for r in range(MR)]
        return a, builder.gep(b_ptr, [builder.load(builder.gep(offsets, [k]), align=8)])

    _tile_loop(context, builder, step, steps, c_int, ldc, accumulate)
    return context.get_dummy_value()


def _codegen_gathered_a(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    x_int, offsets_int, rows_int, steps, b_int, c_int, ldc, accumulate = args
    f32, i64 = ir.FloatType(), ir.IntType(64)
    x_ptr = builder.inttoptr(x_int, f32.as_pointer())
    b_ptr = builder.inttoptr(b_int, f32.as_pointer())
    offsets = builder.inttoptr(offsets_int, i64.as_pointer())
    rows_ptr = builder.inttoptr(rows_int, i64.as_pointer())
    rows = [builder.gep(x_ptr, [builder.load(builder.gep(rows_ptr, [ir.Constant(i64, r)]), align=8)])
            for r in range(MR)]  # each row's base, loaded once

    def step(k: Any) -> tuple[list[Any], Any]:
        offset = builder.load(builder.gep(offsets, [k]), align=8)
        a = [builder.load(builder.gep(row, [offset]), align=4) for row in rows]
        return a, builder.gep(b_ptr, [builder.mul(k, ir.Constant(i64, NR))])

    _tile_loop(context, builder, step, steps, c_int, ldc, accumulate)
    return context.get_dummy_value()


def _tile_loop(context: Any, builder: Any, step: Any, steps: Any, c_int: Any, ldc: Any, accumulate: Any) -> None:
    """The reduction loop over a C tile of MR x NR held in 2*MR vector registers: per step k, `step(k)` gives
    the MR values of A and the address of B's NR floats; then the tile is stored to C."""
    f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
    vec = ir.VectorType(f32, _LANES)
    fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec, vec, vec]),
                                         f"llvm.fma.v{_LANES}f32")
    c_ptr = builder.inttoptr(c_int, f32.as_pointer())

    def c_vector_ptr(r: int, half: int) -> Any:
        row = builder.gep(c_ptr, [builder.mul(ir.Constant(i64, r), ldc)])
        return builder.bitcast(builder.gep(row, [ir.Constant(i64, half * _LANES)]), vec.as_pointer())

    load_c = builder.append_basic_block("mk_load_c")
    loop = builder.append_basic_block("mk_loop")
    done = builder.append_basic_block("mk_done")
    entry = builder.basic_block
    builder.cbranch(builder.icmp_signed("!=", accumulate, ir.Constant(i64, 0)), load_c, loop)
    builder.position_at_end(load_c)
    loaded = [builder.load(c_vector_ptr(t // 2, t % 2), align=4) for t in range(2 * MR)]
    builder.branch(loop)

    builder.position_at_end(loop)
    k = builder.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), entry)
    k.add_incoming(ir.Constant(i64, 0), load_c)
    zero = ir.Constant(vec, [0.0] * _LANES)
    accs = []
    for t in range(2 * MR):
        acc = builder.phi(vec)
        acc.add_incoming(zero, entry)
        acc.add_incoming(loaded[t], load_c)
        accs.append(acc)
    a_values, b_row = step(k)
    b0 = builder.load(builder.bitcast(b_row, vec.as_pointer()), align=4)
    b1 = builder.load(builder.bitcast(builder.gep(b_row, [ir.Constant(i64, _LANES)]), vec.as_pointer()), align=4)
    undef = ir.Constant(vec, ir.Undefined)
    splat = ir.Constant(ir.VectorType(i32, _LANES), [0] * _LANES)
    updated = []
    for r, a in enumerate(a_values):
        a_vec = builder.shuffle_vector(builder.insert_element(undef, a, ir.Constant(i32, 0)), undef, splat)
        updated.append(builder.call(fma, [a_vec, b0, accs[2 * r]]))
        updated.append(builder.call(fma, [a_vec, b1, accs[2 * r + 1]]))
    k_next = builder.add(k, ir.Constant(i64, 1))
    k.add_incoming(k_next, builder.basic_block)
    for acc, value in zip(accs, updated, strict=True):
        acc.add_incoming(value, builder.basic_block)
    builder.cbranch(builder.icmp_signed("<", k_next, steps), loop, done)

    builder.position_at_end(done)
    for t, value in enumerate(updated):
        builder.store(value, c_vector_ptr(t // 2, t % 2), align=4)
