# Generated from ge_ir.proto (beside this file) by protoc 35.1 (grpcio-tools 1.85.4); do not edit by hand.
# Regenerate after an edit of ge_ir.proto, with grpcio-tools as a dev-time tool only (never a runtime dependency):
#     python3 -m pip install --target /tmp/grpctools grpcio-tools
#     cd ge_core/frontend/ge && PYTHONPATH=/tmp/grpctools python3 -m grpc_tools.protoc -I. --python_out=. \
#         --pyi_out=. ge_ir.proto
# then put this header back. At run time it needs only protobuf >= 7.35.1 (pyproject.toml pins it).
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DT_UNDEFINED: _ClassVar[DataType]
    DT_FLOAT: _ClassVar[DataType]
    DT_FLOAT16: _ClassVar[DataType]
    DT_INT8: _ClassVar[DataType]
    DT_UINT8: _ClassVar[DataType]
    DT_INT16: _ClassVar[DataType]
    DT_UINT16: _ClassVar[DataType]
    DT_INT32: _ClassVar[DataType]
    DT_INT64: _ClassVar[DataType]
    DT_UINT32: _ClassVar[DataType]
    DT_UINT64: _ClassVar[DataType]
    DT_BOOL: _ClassVar[DataType]
    DT_DOUBLE: _ClassVar[DataType]
    DT_STRING: _ClassVar[DataType]
    DT_DUAL_SUB_INT8: _ClassVar[DataType]
    DT_DUAL_SUB_UINT8: _ClassVar[DataType]
    DT_COMPLEX64: _ClassVar[DataType]
    DT_COMPLEX128: _ClassVar[DataType]
    DT_QINT8: _ClassVar[DataType]
    DT_QINT16: _ClassVar[DataType]
    DT_QINT32: _ClassVar[DataType]
    DT_QUINT8: _ClassVar[DataType]
    DT_QUINT16: _ClassVar[DataType]
    DT_RESOURCE: _ClassVar[DataType]
    DT_STRING_REF: _ClassVar[DataType]
    DT_DUAL: _ClassVar[DataType]
    DT_VARIANT: _ClassVar[DataType]
    DT_BF16: _ClassVar[DataType]
    DT_INT4: _ClassVar[DataType]
    DT_UINT1: _ClassVar[DataType]
    DT_INT2: _ClassVar[DataType]
    DT_UINT2: _ClassVar[DataType]
    DT_COMPLEX32: _ClassVar[DataType]
    DT_HIFLOAT8: _ClassVar[DataType]
    DT_FLOAT8_E5M2: _ClassVar[DataType]
    DT_FLOAT8_E4M3FN: _ClassVar[DataType]
    DT_FLOAT8_E8M0: _ClassVar[DataType]
    DT_FLOAT6_E3M2: _ClassVar[DataType]
    DT_FLOAT6_E2M3: _ClassVar[DataType]
    DT_FLOAT4_E2M1: _ClassVar[DataType]
    DT_FLOAT4_E1M2: _ClassVar[DataType]
    DT_HIFLOAT4: _ClassVar[DataType]
DT_UNDEFINED: DataType
DT_FLOAT: DataType
DT_FLOAT16: DataType
DT_INT8: DataType
DT_UINT8: DataType
DT_INT16: DataType
DT_UINT16: DataType
DT_INT32: DataType
DT_INT64: DataType
DT_UINT32: DataType
DT_UINT64: DataType
DT_BOOL: DataType
DT_DOUBLE: DataType
DT_STRING: DataType
DT_DUAL_SUB_INT8: DataType
DT_DUAL_SUB_UINT8: DataType
DT_COMPLEX64: DataType
DT_COMPLEX128: DataType
DT_QINT8: DataType
DT_QINT16: DataType
DT_QINT32: DataType
DT_QUINT8: DataType
DT_QUINT16: DataType
DT_RESOURCE: DataType
DT_STRING_REF: DataType
DT_DUAL: DataType
DT_VARIANT: DataType
DT_BF16: DataType
DT_INT4: DataType
DT_UINT1: DataType
DT_INT2: DataType
DT_UINT2: DataType
DT_COMPLEX32: DataType
DT_HIFLOAT8: DataType
DT_FLOAT8_E5M2: DataType
DT_FLOAT8_E4M3FN: DataType
DT_FLOAT8_E8M0: DataType
DT_FLOAT6_E3M2: DataType
DT_FLOAT6_E2M3: DataType
DT_FLOAT4_E2M1: DataType
DT_FLOAT4_E1M2: DataType
DT_HIFLOAT4: DataType

class AttrDef(_message.Message):
    __slots__ = ("s", "i", "f", "b", "bt", "list", "func", "td", "t", "g", "list_list_int", "dt", "list_list_float", "expression")
    class ListValue(_message.Message):
        __slots__ = ("s", "i", "f", "b", "bt", "td", "t", "g", "na", "dt", "val_type")
        class ListValueType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            VT_LIST_NONE: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_STRING: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_INT: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_FLOAT: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_BOOL: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_BYTES: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_TENSOR_DESC: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_TENSOR: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_GRAPH: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_NAMED_ATTRS: _ClassVar[AttrDef.ListValue.ListValueType]
            VT_LIST_DATA_TYPE: _ClassVar[AttrDef.ListValue.ListValueType]
        VT_LIST_NONE: AttrDef.ListValue.ListValueType
        VT_LIST_STRING: AttrDef.ListValue.ListValueType
        VT_LIST_INT: AttrDef.ListValue.ListValueType
        VT_LIST_FLOAT: AttrDef.ListValue.ListValueType
        VT_LIST_BOOL: AttrDef.ListValue.ListValueType
        VT_LIST_BYTES: AttrDef.ListValue.ListValueType
        VT_LIST_TENSOR_DESC: AttrDef.ListValue.ListValueType
        VT_LIST_TENSOR: AttrDef.ListValue.ListValueType
        VT_LIST_GRAPH: AttrDef.ListValue.ListValueType
        VT_LIST_NAMED_ATTRS: AttrDef.ListValue.ListValueType
        VT_LIST_DATA_TYPE: AttrDef.ListValue.ListValueType
        S_FIELD_NUMBER: _ClassVar[int]
        I_FIELD_NUMBER: _ClassVar[int]
        F_FIELD_NUMBER: _ClassVar[int]
        B_FIELD_NUMBER: _ClassVar[int]
        BT_FIELD_NUMBER: _ClassVar[int]
        TD_FIELD_NUMBER: _ClassVar[int]
        T_FIELD_NUMBER: _ClassVar[int]
        G_FIELD_NUMBER: _ClassVar[int]
        NA_FIELD_NUMBER: _ClassVar[int]
        DT_FIELD_NUMBER: _ClassVar[int]
        VAL_TYPE_FIELD_NUMBER: _ClassVar[int]
        s: _containers.RepeatedScalarFieldContainer[bytes]
        i: _containers.RepeatedScalarFieldContainer[int]
        f: _containers.RepeatedScalarFieldContainer[float]
        b: _containers.RepeatedScalarFieldContainer[bool]
        bt: _containers.RepeatedScalarFieldContainer[bytes]
        td: _containers.RepeatedCompositeFieldContainer[TensorDescriptor]
        t: _containers.RepeatedCompositeFieldContainer[TensorDef]
        g: _containers.RepeatedCompositeFieldContainer[GraphDef]
        na: _containers.RepeatedCompositeFieldContainer[NamedAttrs]
        dt: _containers.RepeatedScalarFieldContainer[int]
        val_type: AttrDef.ListValue.ListValueType
        def __init__(self, s: _Optional[_Iterable[bytes]] = ..., i: _Optional[_Iterable[int]] = ..., f: _Optional[_Iterable[float]] = ..., b: _Optional[_Iterable[bool]] = ..., bt: _Optional[_Iterable[bytes]] = ..., td: _Optional[_Iterable[_Union[TensorDescriptor, _Mapping]]] = ..., t: _Optional[_Iterable[_Union[TensorDef, _Mapping]]] = ..., g: _Optional[_Iterable[_Union[GraphDef, _Mapping]]] = ..., na: _Optional[_Iterable[_Union[NamedAttrs, _Mapping]]] = ..., dt: _Optional[_Iterable[int]] = ..., val_type: _Optional[_Union[AttrDef.ListValue.ListValueType, str]] = ...) -> None: ...
    class ListListInt(_message.Message):
        __slots__ = ("list_list_i",)
        class ListInt(_message.Message):
            __slots__ = ("list_i",)
            LIST_I_FIELD_NUMBER: _ClassVar[int]
            list_i: _containers.RepeatedScalarFieldContainer[int]
            def __init__(self, list_i: _Optional[_Iterable[int]] = ...) -> None: ...
        LIST_LIST_I_FIELD_NUMBER: _ClassVar[int]
        list_list_i: _containers.RepeatedCompositeFieldContainer[AttrDef.ListListInt.ListInt]
        def __init__(self, list_list_i: _Optional[_Iterable[_Union[AttrDef.ListListInt.ListInt, _Mapping]]] = ...) -> None: ...
    class ListListFloat(_message.Message):
        __slots__ = ("list_list_f",)
        class ListFloat(_message.Message):
            __slots__ = ("list_f",)
            LIST_F_FIELD_NUMBER: _ClassVar[int]
            list_f: _containers.RepeatedScalarFieldContainer[float]
            def __init__(self, list_f: _Optional[_Iterable[float]] = ...) -> None: ...
        LIST_LIST_F_FIELD_NUMBER: _ClassVar[int]
        list_list_f: _containers.RepeatedCompositeFieldContainer[AttrDef.ListListFloat.ListFloat]
        def __init__(self, list_list_f: _Optional[_Iterable[_Union[AttrDef.ListListFloat.ListFloat, _Mapping]]] = ...) -> None: ...
    S_FIELD_NUMBER: _ClassVar[int]
    I_FIELD_NUMBER: _ClassVar[int]
    F_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    BT_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    FUNC_FIELD_NUMBER: _ClassVar[int]
    TD_FIELD_NUMBER: _ClassVar[int]
    T_FIELD_NUMBER: _ClassVar[int]
    G_FIELD_NUMBER: _ClassVar[int]
    LIST_LIST_INT_FIELD_NUMBER: _ClassVar[int]
    DT_FIELD_NUMBER: _ClassVar[int]
    LIST_LIST_FLOAT_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    s: bytes
    i: int
    f: float
    b: bool
    bt: bytes
    list: AttrDef.ListValue
    func: NamedAttrs
    td: TensorDescriptor
    t: TensorDef
    g: GraphDef
    list_list_int: AttrDef.ListListInt
    dt: int
    list_list_float: AttrDef.ListListFloat
    expression: bytes
    def __init__(self, s: _Optional[bytes] = ..., i: _Optional[int] = ..., f: _Optional[float] = ..., b: _Optional[bool] = ..., bt: _Optional[bytes] = ..., list: _Optional[_Union[AttrDef.ListValue, _Mapping]] = ..., func: _Optional[_Union[NamedAttrs, _Mapping]] = ..., td: _Optional[_Union[TensorDescriptor, _Mapping]] = ..., t: _Optional[_Union[TensorDef, _Mapping]] = ..., g: _Optional[_Union[GraphDef, _Mapping]] = ..., list_list_int: _Optional[_Union[AttrDef.ListListInt, _Mapping]] = ..., dt: _Optional[int] = ..., list_list_float: _Optional[_Union[AttrDef.ListListFloat, _Mapping]] = ..., expression: _Optional[bytes] = ...) -> None: ...

class AttributeDef(_message.Message):
    __slots__ = ("s", "i", "f", "b", "bt")
    S_FIELD_NUMBER: _ClassVar[int]
    I_FIELD_NUMBER: _ClassVar[int]
    F_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    BT_FIELD_NUMBER: _ClassVar[int]
    s: bytes
    i: int
    f: float
    b: bool
    bt: bytes
    def __init__(self, s: _Optional[bytes] = ..., i: _Optional[int] = ..., f: _Optional[float] = ..., b: _Optional[bool] = ..., bt: _Optional[bytes] = ...) -> None: ...

class OtherGroupDef(_message.Message):
    __slots__ = ("attr",)
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttributeDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttributeDef, _Mapping]] = ...) -> None: ...
    ATTR_FIELD_NUMBER: _ClassVar[int]
    attr: _containers.MessageMap[str, AttributeDef]
    def __init__(self, attr: _Optional[_Mapping[str, AttributeDef]] = ...) -> None: ...

class TensorDescAttrGroupsDef(_message.Message):
    __slots__ = ("origin_symbol_shape", "symbolic_value")
    ORIGIN_SYMBOL_SHAPE_FIELD_NUMBER: _ClassVar[int]
    SYMBOLIC_VALUE_FIELD_NUMBER: _ClassVar[int]
    origin_symbol_shape: _containers.RepeatedScalarFieldContainer[str]
    symbolic_value: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, origin_symbol_shape: _Optional[_Iterable[str]] = ..., symbolic_value: _Optional[_Iterable[str]] = ...) -> None: ...

class InputSourceDef(_message.Message):
    __slots__ = ("input_data_idx", "dim_idx")
    INPUT_DATA_IDX_FIELD_NUMBER: _ClassVar[int]
    DIM_IDX_FIELD_NUMBER: _ClassVar[int]
    input_data_idx: int
    dim_idx: int
    def __init__(self, input_data_idx: _Optional[int] = ..., dim_idx: _Optional[int] = ...) -> None: ...

class ReplacementDef(_message.Message):
    __slots__ = ("replace_expr", "rank")
    REPLACE_EXPR_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    replace_expr: str
    rank: int
    def __init__(self, replace_expr: _Optional[str] = ..., rank: _Optional[int] = ...) -> None: ...

class SymbolCheckInfoDef(_message.Message):
    __slots__ = ("expr", "file", "line", "dfx")
    EXPR_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    DFX_FIELD_NUMBER: _ClassVar[int]
    expr: str
    file: str
    line: int
    dfx: str
    def __init__(self, expr: _Optional[str] = ..., file: _Optional[str] = ..., line: _Optional[int] = ..., dfx: _Optional[str] = ...) -> None: ...

class ShapeEnvSettingDef(_message.Message):
    __slots__ = ("specialize_zero_one", "dynamic_mode")
    SPECIALIZE_ZERO_ONE_FIELD_NUMBER: _ClassVar[int]
    DYNAMIC_MODE_FIELD_NUMBER: _ClassVar[int]
    specialize_zero_one: bool
    dynamic_mode: int
    def __init__(self, specialize_zero_one: _Optional[bool] = ..., dynamic_mode: _Optional[int] = ...) -> None: ...

class SymbolInfoDef(_message.Message):
    __slots__ = ("symbols",)
    SYMBOLS_FIELD_NUMBER: _ClassVar[int]
    symbols: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, symbols: _Optional[_Iterable[str]] = ...) -> None: ...

class ShapeEnvAttrGroupsDef(_message.Message):
    __slots__ = ("symbol_to_value", "value_to_symbol", "symbol_to_source", "replacements", "symbol_check_infos", "symbol_assert_infos", "shape_setting", "unique_sym_id")
    class SymbolToValueEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class ValueToSymbolEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: SymbolInfoDef
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[SymbolInfoDef, _Mapping]] = ...) -> None: ...
    class SymbolToSourceEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: InputSourceDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[InputSourceDef, _Mapping]] = ...) -> None: ...
    class ReplacementsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ReplacementDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ReplacementDef, _Mapping]] = ...) -> None: ...
    SYMBOL_TO_VALUE_FIELD_NUMBER: _ClassVar[int]
    VALUE_TO_SYMBOL_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_TO_SOURCE_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_CHECK_INFOS_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_ASSERT_INFOS_FIELD_NUMBER: _ClassVar[int]
    SHAPE_SETTING_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_SYM_ID_FIELD_NUMBER: _ClassVar[int]
    symbol_to_value: _containers.ScalarMap[str, int]
    value_to_symbol: _containers.MessageMap[int, SymbolInfoDef]
    symbol_to_source: _containers.MessageMap[str, InputSourceDef]
    replacements: _containers.MessageMap[str, ReplacementDef]
    symbol_check_infos: _containers.RepeatedCompositeFieldContainer[SymbolCheckInfoDef]
    symbol_assert_infos: _containers.RepeatedCompositeFieldContainer[SymbolCheckInfoDef]
    shape_setting: ShapeEnvSettingDef
    unique_sym_id: int
    def __init__(self, symbol_to_value: _Optional[_Mapping[str, int]] = ..., value_to_symbol: _Optional[_Mapping[int, SymbolInfoDef]] = ..., symbol_to_source: _Optional[_Mapping[str, InputSourceDef]] = ..., replacements: _Optional[_Mapping[str, ReplacementDef]] = ..., symbol_check_infos: _Optional[_Iterable[_Union[SymbolCheckInfoDef, _Mapping]]] = ..., symbol_assert_infos: _Optional[_Iterable[_Union[SymbolCheckInfoDef, _Mapping]]] = ..., shape_setting: _Optional[_Union[ShapeEnvSettingDef, _Mapping]] = ..., unique_sym_id: _Optional[int] = ...) -> None: ...

class SchedInfoDef(_message.Message):
    __slots__ = ("exec_order", "axis", "loop_axis", "exec_condition")
    EXEC_ORDER_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    LOOP_AXIS_FIELD_NUMBER: _ClassVar[int]
    EXEC_CONDITION_FIELD_NUMBER: _ClassVar[int]
    exec_order: int
    axis: _containers.RepeatedScalarFieldContainer[int]
    loop_axis: int
    exec_condition: int
    def __init__(self, exec_order: _Optional[int] = ..., axis: _Optional[_Iterable[int]] = ..., loop_axis: _Optional[int] = ..., exec_condition: _Optional[int] = ...) -> None: ...

class ApiInfoDef(_message.Message):
    __slots__ = ("type", "compute_type", "unit")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_TYPE_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    type: int
    compute_type: int
    unit: int
    def __init__(self, type: _Optional[int] = ..., compute_type: _Optional[int] = ..., unit: _Optional[int] = ...) -> None: ...

class MemAttrDef(_message.Message):
    __slots__ = ("tensor_id", "alloc_type", "position", "hardware", "buf_ids", "name", "reuse_id")
    TENSOR_ID_FIELD_NUMBER: _ClassVar[int]
    ALLOC_TYPE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    HARDWARE_FIELD_NUMBER: _ClassVar[int]
    BUF_IDS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REUSE_ID_FIELD_NUMBER: _ClassVar[int]
    tensor_id: int
    alloc_type: int
    position: int
    hardware: int
    buf_ids: _containers.RepeatedScalarFieldContainer[int]
    name: str
    reuse_id: int
    def __init__(self, tensor_id: _Optional[int] = ..., alloc_type: _Optional[int] = ..., position: _Optional[int] = ..., hardware: _Optional[int] = ..., buf_ids: _Optional[_Iterable[int]] = ..., name: _Optional[str] = ..., reuse_id: _Optional[int] = ...) -> None: ...

class MemQueueAttrDef(_message.Message):
    __slots__ = ("id", "depth", "buf_num", "name")
    ID_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    BUF_NUM_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    depth: int
    buf_num: int
    name: str
    def __init__(self, id: _Optional[int] = ..., depth: _Optional[int] = ..., buf_num: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class MemBufAttrDef(_message.Message):
    __slots__ = ("id", "name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class MemOptAttrDef(_message.Message):
    __slots__ = ("reuse_id", "ref_tensor", "merge_scope")
    REUSE_ID_FIELD_NUMBER: _ClassVar[int]
    REF_TENSOR_FIELD_NUMBER: _ClassVar[int]
    MERGE_SCOPE_FIELD_NUMBER: _ClassVar[int]
    reuse_id: int
    ref_tensor: int
    merge_scope: int
    def __init__(self, reuse_id: _Optional[int] = ..., ref_tensor: _Optional[int] = ..., merge_scope: _Optional[int] = ...) -> None: ...

class AxisDef(_message.Message):
    __slots__ = ("id", "name", "axis_type", "bind_block", "size", "align", "split_pair_other_id", "allow_oversize_axis", "allow_unaligned_tail")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    AXIS_TYPE_FIELD_NUMBER: _ClassVar[int]
    BIND_BLOCK_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ALIGN_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    SPLIT_PAIR_OTHER_ID_FIELD_NUMBER: _ClassVar[int]
    ALLOW_OVERSIZE_AXIS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_UNALIGNED_TAIL_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    axis_type: int
    bind_block: bool
    size: str
    align: int
    split_pair_other_id: int
    allow_oversize_axis: bool
    allow_unaligned_tail: bool
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., axis_type: _Optional[int] = ..., bind_block: _Optional[bool] = ..., size: _Optional[str] = ..., align: _Optional[int] = ..., split_pair_other_id: _Optional[int] = ..., allow_oversize_axis: _Optional[bool] = ..., allow_unaligned_tail: _Optional[bool] = ..., **kwargs) -> None: ...

class AscendCIROpAttrGroupsDef(_message.Message):
    __slots__ = ("name", "type")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ...) -> None: ...

class AscTensorAttrGroupsDef(_message.Message):
    __slots__ = ("dtype", "axis_ids", "repeats", "strides", "vectorized_axis", "vectorized_strides", "mem", "que", "buf", "opt")
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    AXIS_IDS_FIELD_NUMBER: _ClassVar[int]
    REPEATS_FIELD_NUMBER: _ClassVar[int]
    STRIDES_FIELD_NUMBER: _ClassVar[int]
    VECTORIZED_AXIS_FIELD_NUMBER: _ClassVar[int]
    VECTORIZED_STRIDES_FIELD_NUMBER: _ClassVar[int]
    MEM_FIELD_NUMBER: _ClassVar[int]
    QUE_FIELD_NUMBER: _ClassVar[int]
    BUF_FIELD_NUMBER: _ClassVar[int]
    OPT_FIELD_NUMBER: _ClassVar[int]
    dtype: int
    axis_ids: _containers.RepeatedScalarFieldContainer[int]
    repeats: _containers.RepeatedScalarFieldContainer[str]
    strides: _containers.RepeatedScalarFieldContainer[str]
    vectorized_axis: _containers.RepeatedScalarFieldContainer[int]
    vectorized_strides: _containers.RepeatedScalarFieldContainer[str]
    mem: MemAttrDef
    que: MemQueueAttrDef
    buf: MemBufAttrDef
    opt: MemOptAttrDef
    def __init__(self, dtype: _Optional[int] = ..., axis_ids: _Optional[_Iterable[int]] = ..., repeats: _Optional[_Iterable[str]] = ..., strides: _Optional[_Iterable[str]] = ..., vectorized_axis: _Optional[_Iterable[int]] = ..., vectorized_strides: _Optional[_Iterable[str]] = ..., mem: _Optional[_Union[MemAttrDef, _Mapping]] = ..., que: _Optional[_Union[MemQueueAttrDef, _Mapping]] = ..., buf: _Optional[_Union[MemBufAttrDef, _Mapping]] = ..., opt: _Optional[_Union[MemOptAttrDef, _Mapping]] = ...) -> None: ...

class AscGraphAttrGroupsDef(_message.Message):
    __slots__ = ("tiling_key", "axis", "type", "size_var")
    TILING_KEY_FIELD_NUMBER: _ClassVar[int]
    AXIS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_VAR_FIELD_NUMBER: _ClassVar[int]
    tiling_key: int
    axis: _containers.RepeatedCompositeFieldContainer[AxisDef]
    type: int
    size_var: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tiling_key: _Optional[int] = ..., axis: _Optional[_Iterable[_Union[AxisDef, _Mapping]]] = ..., type: _Optional[int] = ..., size_var: _Optional[_Iterable[str]] = ...) -> None: ...

class AscIrAttrDef(_message.Message):
    __slots__ = ("attr",)
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    ATTR_FIELD_NUMBER: _ClassVar[int]
    attr: _containers.MessageMap[str, AttrDef]
    def __init__(self, attr: _Optional[_Mapping[str, AttrDef]] = ...) -> None: ...

class TmpBufDescDef(_message.Message):
    __slots__ = ("size", "life_time_axis_id")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    LIFE_TIME_AXIS_ID_FIELD_NUMBER: _ClassVar[int]
    size: str
    life_time_axis_id: int
    def __init__(self, size: _Optional[str] = ..., life_time_axis_id: _Optional[int] = ...) -> None: ...

class TmpBufferGroupDef(_message.Message):
    __slots__ = ("buf_desc", "mem")
    BUF_DESC_FIELD_NUMBER: _ClassVar[int]
    MEM_FIELD_NUMBER: _ClassVar[int]
    buf_desc: TmpBufDescDef
    mem: MemAttrDef
    def __init__(self, buf_desc: _Optional[_Union[TmpBufDescDef, _Mapping]] = ..., mem: _Optional[_Union[MemAttrDef, _Mapping]] = ...) -> None: ...

class AscNodeAttrGroupsDef(_message.Message):
    __slots__ = ("name", "type", "sched", "api", "ir_attr_def", "tmp_buffers")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SCHED_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    IR_ATTR_DEF_FIELD_NUMBER: _ClassVar[int]
    TMP_BUFFERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    sched: SchedInfoDef
    api: ApiInfoDef
    ir_attr_def: AscIrAttrDef
    tmp_buffers: _containers.RepeatedCompositeFieldContainer[TmpBufferGroupDef]
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., sched: _Optional[_Union[SchedInfoDef, _Mapping]] = ..., api: _Optional[_Union[ApiInfoDef, _Mapping]] = ..., ir_attr_def: _Optional[_Union[AscIrAttrDef, _Mapping]] = ..., tmp_buffers: _Optional[_Iterable[_Union[TmpBufferGroupDef, _Mapping]]] = ...) -> None: ...

class AttrGroupDef(_message.Message):
    __slots__ = ("op_attr_group", "tensor_attr_group", "shape_env_attr_group", "asc_graph_attr_group", "asc_node_attr_group", "asc_tensor_attr_group")
    OP_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    TENSOR_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    SHAPE_ENV_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    ASC_GRAPH_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    ASC_NODE_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    ASC_TENSOR_ATTR_GROUP_FIELD_NUMBER: _ClassVar[int]
    op_attr_group: AscendCIROpAttrGroupsDef
    tensor_attr_group: TensorDescAttrGroupsDef
    shape_env_attr_group: ShapeEnvAttrGroupsDef
    asc_graph_attr_group: AscGraphAttrGroupsDef
    asc_node_attr_group: AscNodeAttrGroupsDef
    asc_tensor_attr_group: AscTensorAttrGroupsDef
    def __init__(self, op_attr_group: _Optional[_Union[AscendCIROpAttrGroupsDef, _Mapping]] = ..., tensor_attr_group: _Optional[_Union[TensorDescAttrGroupsDef, _Mapping]] = ..., shape_env_attr_group: _Optional[_Union[ShapeEnvAttrGroupsDef, _Mapping]] = ..., asc_graph_attr_group: _Optional[_Union[AscGraphAttrGroupsDef, _Mapping]] = ..., asc_node_attr_group: _Optional[_Union[AscNodeAttrGroupsDef, _Mapping]] = ..., asc_tensor_attr_group: _Optional[_Union[AscTensorAttrGroupsDef, _Mapping]] = ...) -> None: ...

class AttrGroups(_message.Message):
    __slots__ = ("other_group_def", "attr_group_def")
    OTHER_GROUP_DEF_FIELD_NUMBER: _ClassVar[int]
    ATTR_GROUP_DEF_FIELD_NUMBER: _ClassVar[int]
    other_group_def: OtherGroupDef
    attr_group_def: _containers.RepeatedCompositeFieldContainer[AttrGroupDef]
    def __init__(self, other_group_def: _Optional[_Union[OtherGroupDef, _Mapping]] = ..., attr_group_def: _Optional[_Iterable[_Union[AttrGroupDef, _Mapping]]] = ...) -> None: ...

class NamedAttrs(_message.Message):
    __slots__ = ("name", "attr")
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    ATTR_FIELD_NUMBER: _ClassVar[int]
    name: str
    attr: _containers.MessageMap[str, AttrDef]
    def __init__(self, name: _Optional[str] = ..., attr: _Optional[_Mapping[str, AttrDef]] = ...) -> None: ...

class ShapeDef(_message.Message):
    __slots__ = ("dim",)
    DIM_FIELD_NUMBER: _ClassVar[int]
    dim: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, dim: _Optional[_Iterable[int]] = ...) -> None: ...

class TensorDescriptor(_message.Message):
    __slots__ = ("name", "dtype", "shape", "layout", "has_out_attr", "size", "weight_size", "reuse_input", "output_tensor", "device_type", "input_tensor", "real_dim_cnt", "reuse_input_index", "data_offset", "cmps_size", "cmps_tab", "cmps_tab_offset", "attr", "attr_groups")
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_FIELD_NUMBER: _ClassVar[int]
    HAS_OUT_ATTR_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_SIZE_FIELD_NUMBER: _ClassVar[int]
    REUSE_INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TENSOR_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    INPUT_TENSOR_FIELD_NUMBER: _ClassVar[int]
    REAL_DIM_CNT_FIELD_NUMBER: _ClassVar[int]
    REUSE_INPUT_INDEX_FIELD_NUMBER: _ClassVar[int]
    DATA_OFFSET_FIELD_NUMBER: _ClassVar[int]
    CMPS_SIZE_FIELD_NUMBER: _ClassVar[int]
    CMPS_TAB_FIELD_NUMBER: _ClassVar[int]
    CMPS_TAB_OFFSET_FIELD_NUMBER: _ClassVar[int]
    ATTR_FIELD_NUMBER: _ClassVar[int]
    ATTR_GROUPS_FIELD_NUMBER: _ClassVar[int]
    name: str
    dtype: DataType
    shape: ShapeDef
    layout: str
    has_out_attr: bool
    size: int
    weight_size: int
    reuse_input: bool
    output_tensor: bool
    device_type: str
    input_tensor: bool
    real_dim_cnt: int
    reuse_input_index: int
    data_offset: int
    cmps_size: int
    cmps_tab: str
    cmps_tab_offset: int
    attr: _containers.MessageMap[str, AttrDef]
    attr_groups: AttrGroups
    def __init__(self, name: _Optional[str] = ..., dtype: _Optional[_Union[DataType, str]] = ..., shape: _Optional[_Union[ShapeDef, _Mapping]] = ..., layout: _Optional[str] = ..., has_out_attr: _Optional[bool] = ..., size: _Optional[int] = ..., weight_size: _Optional[int] = ..., reuse_input: _Optional[bool] = ..., output_tensor: _Optional[bool] = ..., device_type: _Optional[str] = ..., input_tensor: _Optional[bool] = ..., real_dim_cnt: _Optional[int] = ..., reuse_input_index: _Optional[int] = ..., data_offset: _Optional[int] = ..., cmps_size: _Optional[int] = ..., cmps_tab: _Optional[str] = ..., cmps_tab_offset: _Optional[int] = ..., attr: _Optional[_Mapping[str, AttrDef]] = ..., attr_groups: _Optional[_Union[AttrGroups, _Mapping]] = ...) -> None: ...

class TensorDef(_message.Message):
    __slots__ = ("desc", "data")
    DESC_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    desc: TensorDescriptor
    data: bytes
    def __init__(self, desc: _Optional[_Union[TensorDescriptor, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class OpDef(_message.Message):
    __slots__ = ("name", "type", "input", "attr", "attr_groups", "has_out_attr", "id", "stream_id", "input_name", "src_name", "src_index", "dst_name", "dst_index", "input_i", "output_i", "workspace", "workspace_bytes", "is_input_const", "input_desc", "output_desc", "subgraph_name")
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ATTR_FIELD_NUMBER: _ClassVar[int]
    ATTR_GROUPS_FIELD_NUMBER: _ClassVar[int]
    HAS_OUT_ATTR_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_NAME_FIELD_NUMBER: _ClassVar[int]
    SRC_NAME_FIELD_NUMBER: _ClassVar[int]
    SRC_INDEX_FIELD_NUMBER: _ClassVar[int]
    DST_NAME_FIELD_NUMBER: _ClassVar[int]
    DST_INDEX_FIELD_NUMBER: _ClassVar[int]
    INPUT_I_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_I_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_BYTES_FIELD_NUMBER: _ClassVar[int]
    IS_INPUT_CONST_FIELD_NUMBER: _ClassVar[int]
    INPUT_DESC_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_DESC_FIELD_NUMBER: _ClassVar[int]
    SUBGRAPH_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    input: _containers.RepeatedScalarFieldContainer[str]
    attr: _containers.MessageMap[str, AttrDef]
    attr_groups: AttrGroups
    has_out_attr: bool
    id: int
    stream_id: int
    input_name: _containers.RepeatedScalarFieldContainer[str]
    src_name: _containers.RepeatedScalarFieldContainer[str]
    src_index: _containers.RepeatedScalarFieldContainer[int]
    dst_name: _containers.RepeatedScalarFieldContainer[str]
    dst_index: _containers.RepeatedScalarFieldContainer[int]
    input_i: _containers.RepeatedScalarFieldContainer[int]
    output_i: _containers.RepeatedScalarFieldContainer[int]
    workspace: _containers.RepeatedScalarFieldContainer[int]
    workspace_bytes: _containers.RepeatedScalarFieldContainer[int]
    is_input_const: _containers.RepeatedScalarFieldContainer[bool]
    input_desc: _containers.RepeatedCompositeFieldContainer[TensorDescriptor]
    output_desc: _containers.RepeatedCompositeFieldContainer[TensorDescriptor]
    subgraph_name: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., input: _Optional[_Iterable[str]] = ..., attr: _Optional[_Mapping[str, AttrDef]] = ..., attr_groups: _Optional[_Union[AttrGroups, _Mapping]] = ..., has_out_attr: _Optional[bool] = ..., id: _Optional[int] = ..., stream_id: _Optional[int] = ..., input_name: _Optional[_Iterable[str]] = ..., src_name: _Optional[_Iterable[str]] = ..., src_index: _Optional[_Iterable[int]] = ..., dst_name: _Optional[_Iterable[str]] = ..., dst_index: _Optional[_Iterable[int]] = ..., input_i: _Optional[_Iterable[int]] = ..., output_i: _Optional[_Iterable[int]] = ..., workspace: _Optional[_Iterable[int]] = ..., workspace_bytes: _Optional[_Iterable[int]] = ..., is_input_const: _Optional[_Iterable[bool]] = ..., input_desc: _Optional[_Iterable[_Union[TensorDescriptor, _Mapping]]] = ..., output_desc: _Optional[_Iterable[_Union[TensorDescriptor, _Mapping]]] = ..., subgraph_name: _Optional[_Iterable[str]] = ...) -> None: ...

class GraphDef(_message.Message):
    __slots__ = ("name", "input", "output", "op", "attr", "attr_groups")
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    ATTR_FIELD_NUMBER: _ClassVar[int]
    ATTR_GROUPS_FIELD_NUMBER: _ClassVar[int]
    name: str
    input: _containers.RepeatedScalarFieldContainer[str]
    output: _containers.RepeatedScalarFieldContainer[str]
    op: _containers.RepeatedCompositeFieldContainer[OpDef]
    attr: _containers.MessageMap[str, AttrDef]
    attr_groups: AttrGroups
    def __init__(self, name: _Optional[str] = ..., input: _Optional[_Iterable[str]] = ..., output: _Optional[_Iterable[str]] = ..., op: _Optional[_Iterable[_Union[OpDef, _Mapping]]] = ..., attr: _Optional[_Mapping[str, AttrDef]] = ..., attr_groups: _Optional[_Union[AttrGroups, _Mapping]] = ...) -> None: ...

class ModelDef(_message.Message):
    __slots__ = ("name", "version", "custom_version", "graph", "attr", "attr_groups")
    class AttrEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AttrDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AttrDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_VERSION_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    ATTR_FIELD_NUMBER: _ClassVar[int]
    ATTR_GROUPS_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    custom_version: str
    graph: _containers.RepeatedCompositeFieldContainer[GraphDef]
    attr: _containers.MessageMap[str, AttrDef]
    attr_groups: AttrGroups
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., custom_version: _Optional[str] = ..., graph: _Optional[_Iterable[_Union[GraphDef, _Mapping]]] = ..., attr: _Optional[_Mapping[str, AttrDef]] = ..., attr_groups: _Optional[_Union[AttrGroups, _Mapping]] = ...) -> None: ...
