"""One line of a GE log: its kind, the prefixes other loggers add, repeats' key, names and Status numbers.
Lines quoted from real logs name their source; the others are GE's message templates filled in."""

from __future__ import annotations

import pytest

from ge_core.debugging.ge_codes import explain_status
from ge_core.debugging.ge_log_lines import classify, key_of, names_in, statuses_in, unwrap


@pytest.mark.parametrize(("raw", "text"), [
    ("(Worker pid=17096) (Worker_DP0_TP5_EP5 pid=17096) ERROR 03-25 06:14:02 [multiproc_executor.py:880] E39999: x",
     "E39999: x"),  # vllm-project/vllm-ascend#7676's worker prefixes
    ("sglang-server  | 185 ->             inst.data_move_pad(", "185 ->             inst.data_move_pad("),
    ("ERROR 06-03 14:54:23 engine.py:400] [ERROR] 2025-06-03-14:54:23 ERR00100 PTA call acl api failed.",
     "[ERROR] 2025-06-03-14:54:23 ERR00100 PTA call acl api failed."),  # vllm-ascend#1047's older logger
    ("\x1b[31m[ERROR] GE(1,python):2024-01-01-00:00:00.000.000 [a.cc:1]1 F: boom\x1b[0m\r",
     "[ERROR] GE(1,python):2024-01-01-00:00:00.000.000 [a.cc:1]1 F: boom"),
])
def test_other_loggers_prefixes_colours_and_carriage_returns_are_dropped(raw: str, text: str) -> None:
    assert unwrap(raw) == text


def test_a_tbe_python_error_gives_its_code_and_message() -> None:
    # MindSpore's CANN error guide (CC BY 4.0), "E80000: StridedSliceGradD Illegal Input Value"
    raw = ("RuntimeError: ({'errCode': 'E80000', 'op_name': 'strided_slice_grad_d', 'param_name': 'strides[0]', "
           "'excepted_value': '1', 'real_value': '2'}, 'In op[strided_slice_grad_d], the parameter[strides[0]] "
           "should be , but actually is [2].')")
    line = classify(raw)
    assert (line.kind, line.code) == ("headline", "E80000")
    assert line.message == "In op[strided_slice_grad_d], the parameter[strides[0]] should be , but actually is [2]."
    assert names_in(raw).ops == ["strided_slice_grad_d"]


@pytest.mark.parametrize(("text", "ops", "types", "kernels"), [
    ("No parser is registered for Op [conv1, optype [FooBar]].", ["conv1"], ["FooBar"], []),  # E19010's template
    ("Call InferShapeAndType for node:conv1(Conv2D) failed", ["conv1"], ["Conv2D"], []),
    ("OP[conv1] 0th input has incorrect shape[: 1,3], it should be[: 1,4].", ["conv1"], [], []),  # EZ0001's
    ("kernel te_fusion_op_0a1b2c3d4e5f60718293a4b5_1 failed", [], [], ["te_fusion_op_0a1b2c3d4e5f60718293a4b5_1"]),
    ("fault kernel_name=GetNext, fault op_name=, extend_info=.", [], [], ["GetNext"]),  # an empty op_name is none
    ('"Type": "Transpose", "kernel_name": "Transpose_4779120815397556904_6"', [], ["Transpose"],
     ["Transpose_4779120815397556904_6"]),
])
def test_names_a_message_mentions(text: str, ops: list[str], types: list[str], kernels: list[str]) -> None:
    names = names_in(text)
    assert (names.ops, names.op_types, names.kernels) == (ops, types, kernels)


def test_the_failed_status_in_every_spelling_and_other_numbers_left_out() -> None:
    failed = explain_status(-1)
    assert failed is not None
    for text in ("ret:4294967295", "ret:-1", "ret = 0xFFFFFFFF", "ErrorNo: 4294967295(failed)", "return ret: -1"):
        assert statuses_in(text) == [failed.value], text
    assert statuses_in("ret: 507011") == [] and statuses_in("retCode=0x91") == []


def test_repeats_differ_only_in_numbers_tags_and_punctuation() -> None:
    assert key_of("[SubGraphOpt][Compile] subgraph 10 optimize failed.") == key_of("subgraph 3 optimize failed")
    assert key_of("ErrorNo: 1343266818(Graph manager add graph failed.) [COMP][DEFAULT][Add][Graph] fail, graph "
                  "id: 2") == key_of("fail, graph id: 3")
    assert key_of("Call OptimizeFusedGraph failed, ret:4294967295") == key_of("Call OptimizeFusedGraph failed, ret:-1")
    assert key_of("compile failed") != key_of("build failed")


def test_a_frame_keeps_where_it_was_said_even_when_its_tail_is_cut() -> None:
    whole = classify("        build graph failed, ret:-1[FUNC:BuildModelWithGraphId][FILE:ge_generator.cc][LINE:1622]")
    assert (whole.kind, whole.where, whole.indented) == ("frame", "ge_generator.cc:1622 BuildModelWithGraphId", True)
    cut = classify("       AIV Kernel happen error, retCode=0x31.[FUNC:GetError][FILE:stream.cc][LIN")
    assert (cut.kind, cut.where) == ("frame", "stream.cc:? GetError")
    assert cut.message == "AIV Kernel happen error, retCode=0x31."
