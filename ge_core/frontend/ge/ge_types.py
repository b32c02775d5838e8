"""GE's data types and formats as its dumps spell them, and ours.

A dump's TensorDescriptor carries `dtype` as ge.proto's DataType enum (DT_FLOAT = 1, ...: the proto enum,
not ge::DataType's C++ numbering) and `layout` as ge::Format's serial string ("NC1HWC0"). GE types with no
numpy storage of their own (the quantized and dual types, HIFLOAT8, UINT1, COMPLEX32) read as the storage
type of the same width; writing those back gives the storage type's DataType (a one-way mapping, noted in
the report). Source of the format numbers: ge::Format in hicann/ge inc/framework/executor_c/types.h.
"""

from __future__ import annotations

# ge.proto DataType name -> our dtype name (ir/dtypes.py). The first entry for a name is the one written.
GE_TO_DTYPE: dict[str, str] = {
    "DT_FLOAT": "float32", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16", "DT_DOUBLE": "float64",
    "DT_INT8": "int8", "DT_UINT8": "uint8", "DT_INT16": "int16", "DT_UINT16": "uint16",
    "DT_INT32": "int32", "DT_UINT32": "uint32", "DT_INT64": "int64", "DT_UINT64": "uint64",
    "DT_BOOL": "bool", "DT_STRING": "str", "DT_COMPLEX64": "complex64", "DT_COMPLEX128": "complex128",
    "DT_INT4": "int4", "DT_INT2": "int2", "DT_UINT2": "uint2",
    "DT_FLOAT8_E5M2": "float8_e5m2", "DT_FLOAT8_E4M3FN": "float8_e4m3fn", "DT_FLOAT8_E8M0": "float8_e8m0fnu",
    "DT_FLOAT6_E3M2": "float6_e3m2fn", "DT_FLOAT6_E2M3": "float6_e2m3fn", "DT_FLOAT4_E2M1": "float4_e2m1fn",
    # storage stand-ins (read only: writing gives the DataType above of the same storage)
    "DT_QINT8": "int8", "DT_QUINT8": "uint8", "DT_QINT16": "int16", "DT_QUINT16": "uint16", "DT_QINT32": "int32",
    "DT_DUAL_SUB_INT8": "int8", "DT_DUAL_SUB_UINT8": "uint8", "DT_HIFLOAT8": "uint8", "DT_UINT1": "uint8",
    "DT_STRING_REF": "str", "DT_COMPLEX32": "complex64",
}
DTYPE_TO_GE: dict[str, str] = {}
for _ge, _ours in GE_TO_DTYPE.items():
    DTYPE_TO_GE.setdefault(_ours, _ge)

# The serial strings GE's onnx dump writes for dtypes (TypeUtils::DataTypeToSerialString) are the same names.
UNDEFINED_GE = "DT_UNDEFINED"

# ge::Format numbers (origin_format_for_int / format_for_int in a desc's attrs).
FORMAT_NUMBERS: dict[str, int] = {
    "NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "NC1C0HWPAD": 5, "NHWC1C0": 6, "FSR_NCHW": 7,
    "FRACTAL_DECONV": 8, "C1HWNC0": 9, "FRACTAL_DECONV_TRANSPOSE": 10, "FRACTAL_DECONV_SP_STRIDE_TRANS": 11,
    "NC1HWC0_C04": 12, "FRACTAL_Z_C04": 13, "CHWN": 14, "FRACTAL_DECONV_SP_STRIDE8_TRANS": 15, "HWCN": 16,
    "NC1KHKWHWC0": 17, "BN_WEIGHT": 18, "FILTER_HWCK": 19, "C1HWNCoC0": 25, "MD": 26, "NDHWC": 27,
    "FRACTAL_ZZ": 28, "FRACTAL_NZ": 29, "NCDHW": 30, "DHWCN": 31, "NDC1HWC0": 32, "FRACTAL_Z_3D": 33, "CN": 34,
    "NC": 35, "DHWNC": 36, "FRACTAL_Z_3D_TRANSPOSE": 37, "FRACTAL_ZN_LSTM": 38, "FRACTAL_Z_G": 39,
    "RESERVED": 40,
}


def dtype_from_ge(name: str) -> str:
    """Our dtype for a ge.proto DataType name ("undefined" for DT_UNDEFINED and names we do not know)."""
    return GE_TO_DTYPE.get(name, "undefined")


def dtype_to_ge(dtype: str) -> str:
    return DTYPE_TO_GE.get(dtype, UNDEFINED_GE)


def format_number(fmt: str) -> int:
    """ge::Format's number for a format name (its primary part: "FRACTAL_Z:..." is FRACTAL_Z)."""
    return FORMAT_NUMBERS.get(fmt.split(":", 1)[0], FORMAT_NUMBERS["RESERVED"])
