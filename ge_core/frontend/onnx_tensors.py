"""TensorProto -> numpy with every size checked before anything is allocated or decoded.

Every ONNX data type decodes to an array of its own dtype (ml_dtypes' for bfloat16, float8, int4...: see
ge_core/ir/dtypes.py); sub-byte types arrive packed (raw_data, or one packed byte per int32_data entry)
and come out one element per byte.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, numpy_helper

from ge_core.errors import ModelError
from ge_core.frontend.onnx_reader import tensor_dtype_name
from ge_core.ir.dtypes import dtype_bits, packed_nbytes
from ge_core.ir.limits import check_tensor_size

# The repeated field holding a tensor's values when raw_data is not used, per data type.
_TYPED_FIELD: dict[int, str] = {
    TensorProto.FLOAT: "float_data", TensorProto.COMPLEX64: "float_data",
    TensorProto.DOUBLE: "double_data", TensorProto.COMPLEX128: "double_data",
    TensorProto.INT64: "int64_data", TensorProto.UINT32: "uint64_data", TensorProto.UINT64: "uint64_data",
    TensorProto.STRING: "string_data",
}
_COMPLEX = (TensorProto.COMPLEX64, TensorProto.COMPLEX128)


def tensor_to_array(tensor: TensorProto, what: str) -> np.ndarray:
    """Decode a TensorProto; `what` names it in errors ("initializer 'w'", "attribute 'value' of node 'c'")."""
    dtype = tensor_dtype_name(tensor.data_type)
    if dtype is None:
        name = TensorProto.DataType.Name(tensor.data_type) if tensor.data_type in TensorProto.DataType.values() \
            else str(tensor.data_type)
        raise ModelError(f"{what} has data type {name}, which GE Workbench cannot hold.",
                         hint="Cast it to float32/float16/int64 when exporting.")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise ModelError(f"{what} has a negative dim in {dims}.", hint="Fix the exporter's output.")
    check_tensor_size(what, dims, dtype)
    numel = math.prod(dims)
    _check_payload(tensor, what, dtype, numel)
    try:
        array = numpy_helper.to_array(tensor)
    except Exception as exc:  # malformed payloads that passed the size check
        raise ModelError(f"{what} could not be decoded ({exc}).") from None
    if dtype == "str":
        array = np.vectorize(lambda b: b.decode("utf-8", "replace") if isinstance(b, bytes) else b,
                             otypes=[object])(array) if array.size else array.astype(object)
    return array


def _check_payload(tensor: TensorProto, what: str, dtype: str, numel: int) -> None:
    if tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL:
        raise ModelError(f"{what} still refers to external data that was not loaded.")
    if tensor.HasField("raw_data"):
        if dtype == "str":
            raise ModelError(f"{what} is a string tensor stored as raw bytes, which ONNX does not allow.")
        want = packed_nbytes(numel, dtype)
        if len(tensor.raw_data) != want:
            raise ModelError(f"{what}: raw data holds {len(tensor.raw_data)} bytes but dims "
                             f"{list(tensor.dims)} of {dtype} need {want}.",
                             hint="The file is corrupt or was truncated; re-export it.")
        return
    field = _TYPED_FIELD.get(tensor.data_type, "int32_data")
    have = len(getattr(tensor, field))
    want = numel * (2 if tensor.data_type in _COMPLEX else 1)
    if dtype_bits(dtype) in (2, 4):  # one packed byte per int32_data entry (6-bit types: one element each)
        want = packed_nbytes(numel, dtype)
    if have != want:
        raise ModelError(f"{what}: {field} holds {have} values but dims {list(tensor.dims)} need {want}.",
                         hint="The file is corrupt or was truncated; re-export it.")

