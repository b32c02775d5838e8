"""The GE log reader on real excerpts (tests/debugging/ge_logs; each names its source in its header): the chain
in order with the first cause on top, each message once, codes explained, op and kernel names found; and the
same chain through CRLF, colours, interleaved INFO lines, truncation, and bounds on size."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ge_core.debugging import ge_log
from ge_core.debugging.ge_log import (
    GELog,
    chain_frame,
    example_ge_log,
    parse_ge_log_text,
    read_ge_log_file,
    read_ge_log_stream,
)
from ge_core.errors import ModelError, ResourceLimitError

LOGS = Path(__file__).parent / "ge_logs"
EXAMPLE = ge_log.EXAMPLE  # the Debug page's example, an excerpt like the others
FIXTURES = [*sorted(LOGS.glob("*.log")), EXAMPLE]


def read(name: str) -> GELog:
    return read_ge_log_file(EXAMPLE if name == EXAMPLE.name else LOGS / name)


def chain(log: GELog) -> list[str]:
    return [e.message for e in log.errors]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_fixture_names_its_source_and_stays_small(path: Path) -> None:
    lines = path.read_text().splitlines()
    header = [line for line in lines[:6] if line.startswith("# ")]
    assert lines[0].startswith("# source: ") and any("https://" in line for line in header)
    assert path.stat().st_size < 8_000
    assert read_ge_log_file(path).errors  # and each reports errors


def test_atc_console_chain_starts_with_the_first_cause_and_keeps_the_headline_code() -> None:
    log = read(EXAMPLE.name)
    messages = chain(log)
    assert messages[0].startswith("Failed to assemble op args with op[")  # TraceBack: innermost first
    assert messages[-2:] == ["build graph failed, graph id:0, ret:4294967295", "GenerateOfflineModel execute f"]
    compile_op = next(e for e in log.errors if e.code == "E20001")
    assert compile_op.message.startswith("Failed to compile Op [/model/layers.30/")  # the TraceBack's place
    assert compile_op.count == 2  # the headline and its TraceBack line, said once
    assert compile_op.ge_cause == "The operator has an invalid argument."
    assert compile_op.ge_solution.startswith("For a custom operator")
    assert compile_op.names.op_types == ["StridedSliceD"]
    assert "/model/layers.4/self_attn/Slice_ascend_mbatch_batch_5" in compile_op.names.ops
    build = log.errors[-2]
    assert [str(s) for s in build.status_explanations] == ["4294967295 (-1, 0xFFFFFFFF) = FAILED: failed"]
    assert build.where == "ge_generator.cc:1622 BuildModelWithGraphId"
    assert [e.line for e in log.errors] == sorted(e.line for e in log.errors)


def test_a_wrapped_torch_npu_log_has_its_coded_cause_on_top_and_the_kernel_named() -> None:
    log = read("torch_npu_e40024_vllm.log")
    first = log.first_cause
    assert first is not None and first.code == "E40024" and first.explanation is not None
    assert first.explanation.plain.startswith("The op compiler failed to call")
    assert first.message.startswith("Failed call Python Func/Meathod [get_binfile_sha256_hash_from_c]")
    assert not any(m.startswith("ERROR 03-04") for m in chain(log))  # vLLM's prefix is gone
    kernel = "te_repeatinterleave_700ef95624df2241182af76e48e66bc5d93a192227847ea739c9ae8cf29a9d43_1"
    assert log.names.kernels == [kernel]
    assert chain(log)[-1] == "subgraph 0 optimize failed"


def test_a_plog_chain_is_in_log_order_with_the_op_its_type_and_its_kernel() -> None:
    log = read("plog_paddle_slice.log")
    assert [e.module for e in log.errors][:2] == ["TEFUSION", "TEFUSION"] and log.errors[-1].module == "GE"
    assert log.errors[0].message == "Failed to compile node [name Slice, type Slice]. Detailed compilation info is:"
    assert log.errors[0].where == "fusion_op.cc:5504 PrintOp"
    assert log.names.ops == ["Slice"] and log.names.op_types == ["Slice"]
    assert log.names.kernels == ["te_slice_5f4f1d52f6e62efc74c12a4ffa41595dd5a9b5460aeb500b8d2fae52518fea68_1"]
    fe = next(e for e in log.errors if e.module == "FE")
    assert fe.message.startswith("[SubGraphOpt][Compile][ProcFailedCompTask]")  # FE's quotes dropped


def test_repeats_for_another_graph_are_counted_once_and_statuses_decoded() -> None:
    log = read("plog_paddle_lite_add_graph.log")
    assert [e.count for e in log.errors] == [2, 2, 1, 1, 1]  # graph 3 repeats graph 2's two messages
    exists = log.errors[3]
    assert [s.desc for s in exists.status_explanations] == ["Graph ID already exist."]
    assert [s.name for s in log.errors[4].status_explanations] == ["FAILED"]


def test_event_lines_between_errors_are_read_past() -> None:
    log = read("plog_paddle_lite_build_graph.log")
    assert len(log.errors) == 3 and log.other_lines >= 4
    assert log.errors[0].status_explanations[0].name == "GE_GENERATOR_GRAPH_MANAGER_BUILD_GRAPH_FAILED"
    assert log.errors[-1].message == "OpN" and log.errors[-1].module == "TBE"  # the cut last line still counts


def test_a_summary_repeating_plog_lines_merges_into_them() -> None:
    log = read("mindspore_ee9999_task.log")
    assert log.first_cause is not None and log.first_cause.message.startswith("Task exception!")
    task = next(e for e in log.errors if e.code == "EE9999")
    assert task.message.startswith("Task execute failed, base info") and task.count == 3 and task.module == "RUNTIME"
    assert log.codes == ["EE9999"]


def test_a_bare_inner_error_lends_its_code_to_the_message_after_it() -> None:
    log = read("mindspore_ez9999_aicore.log")
    coded = next(e for e in log.errors if e.code == "EZ9999")
    assert coded.message == "The device(3), core list[0-0], error code is:"
    assert log.names.kernels == ["add_13570952190744021808_0__kernel0"] and log.names.ops == ["Default/Add-op8"]
    assert not any("File \"try.py\"" in m for m in chain(log))  # the Python traceback is not GE's
    assert chain(log)[-1] == "rtStreamSynchronize execute failed, reason=[the model stream execute failed]"


def test_a_multi_line_headline_keeps_its_python_stack() -> None:
    log = read("torchair_e40021_multiline.log")
    (error,) = log.errors
    assert error.code == "E40021" and error.message.startswith("Failed to compile Op [QuantBatchMatmulV3]")
    assert any("__clang_cce_runtime_wrapper.h' file not found" in d for d in error.details)
    assert error.ge_solution.startswith("See the host log") and error.names.op_types == ["QuantBatchMatmulV3"]


def test_the_titled_form_of_a_code_and_a_device_error() -> None:
    omni = read("vllm_omni_e40021_titled.log")
    assert omni.codes == ["E40021"] and omni.names.ops == ["trans_Cast_2"]
    device = read("ptoas_ez9999_device.log")
    assert device.first_cause is not None and device.first_cause.code == "EZ9999"
    assert device.first_cause.message.startswith("The error from device(chipId:2")
    assert chain(device)[-1] == "AIV Kernel happen error, retCode=0x31."  # the cut [FUNC][FILE][LIN tail dropped


def summary(log: GELog) -> list[tuple[str, str, int]]:
    return [(e.code, e.message, e.count) for e in log.errors]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_crlf_colours_and_interleaved_info_lines_change_nothing(path: Path) -> None:
    text = path.read_text()
    plain = summary(parse_ge_log_text(text))
    crlf = text.replace("\n", "\r\n")
    coloured = "\n".join(f"\x1b[31m{line}\x1b[0m" if line.startswith("[ERROR]") else line
                         for line in text.split("\n"))
    info = ("[INFO] GE(39944,demo):2021-11-18-01:09:39.549.688 [graph_manager.cc:919]39944 PreRun:PreRun start: "
            "graph node size 342, session id 1, graph id 1")
    noisy = "\n".join(f"{line}\n{info}" if line.startswith("[") else line for line in text.split("\n"))
    for variant in (crlf, coloured, noisy):
        assert summary(parse_ge_log_text(variant)) == plain


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_a_log_cut_anywhere_still_reads(path: Path) -> None:
    data = path.read_bytes()
    for cut in range(0, len(data), 97):
        parse_ge_log_text(data[:cut])


class EndlessLog(io.RawIOBase):
    """A log of `lines` lines, produced as it is read: ten million lines never sit in memory here either."""

    def __init__(self, lines: int) -> None:
        self.left = lines
        self.line = b"[INFO] GE(1,python):2024-01-01-00:00:00.000.000 [graph.cc:1]1 Run: step\n"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.left <= 0:
            return 0
        count = min(len(buffer) // len(self.line), self.left) or 1
        chunk = (self.line * count)[: len(buffer)]
        buffer[: len(chunk)] = chunk
        self.left -= count
        return len(chunk)


def test_ten_million_lines_are_read_up_to_the_cap_and_said_so() -> None:
    log = read_ge_log_stream(io.BufferedReader(EndlessLog(10_000_000)), "huge.log", max_lines=20_000)
    assert log.truncated and log.lines_read == 20_000 and not log.errors


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "plog-1.log"
    big.write_bytes(b"x" * 2048)
    monkeypatch.setattr(ge_log, "MAX_FILE_BYTES", 1024)
    with pytest.raises(ResourceLimitError, match=r"plog-1\.log"):
        read_ge_log_file(big)


def test_binary_data_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "model.om"
    path.write_bytes(b"IMOD\n\x00\x01\x02\x00")
    with pytest.raises(ModelError, match=r"'model.om' line 2 holds binary data"):
        read_ge_log_file(path)


def test_an_endless_line_is_cut_not_held() -> None:
    line = b"E40021: Failed to compile Op [x]. " + b"y" * (5 * ge_log.MAX_LINE_CHARS) + b"\nnext\n"
    log = parse_ge_log_text(line)
    assert log.lines_read == 2 and log.errors[0].code == "E40021"
    assert len(log.errors[0].message) < ge_log.MAX_LINE_CHARS


def test_pasted_text_without_any_error_gives_an_empty_chain() -> None:
    log = parse_ge_log_text("hello\nworld\n")
    assert log.errors == () and log.first_cause is None and log.other_lines == 2


def test_the_chain_as_a_table_and_the_packaged_example() -> None:
    name, text = example_ge_log()
    log = parse_ge_log_text(text, name)
    frame = chain_frame(log)
    assert list(frame.columns) == ge_log.CHAIN_COLUMNS and len(frame) == len(log.errors)
    compile_op = frame[frame["code"] == "E20001"].iloc[0]
    assert compile_op["op_types"] == "StridedSliceD" and compile_op["times"] == 2
    assert frame.iloc[-2]["status"] == "FAILED (-1)"


def test_a_headline_followed_by_endless_other_output_lets_go_of_it() -> None:
    text = "RuntimeError: E40021: Failed to compile Op [x].\n" + "training step\n" * 500
    text += "    build graph failed, graph id:3, ret:4294967295\n"
    log = parse_ge_log_text(text)
    assert len(log.errors[0].details) == ge_log.MAX_DETAILS
    assert log.errors[-1].message == "build graph failed, graph id:3, ret:4294967295"
