"""torch.compile(model, backend=ge_core.torch_backend()): outputs equal eager, and torch_stats() shows the
first call compiling, warm calls not, a new shape recompiling (with Dynamo's reason), graph breaks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import ge_core  # noqa: E402
from tests.torch.compare import RTOL, assert_close, eager  # noqa: E402
from tests.torch.models import cnn, mlp  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    ge_core.torch_stats(reset=True)
    yield
    torch._dynamo.reset()


def _call(compiled: nn.Module, *inputs: torch.Tensor) -> list[torch.Tensor]:
    with torch.no_grad():
        result = compiled(*inputs)
    return [result] if isinstance(result, torch.Tensor) else list(result)


def test_first_call_compiles_warm_calls_do_not_and_a_new_shape_recompiles() -> None:
    module, (x,) = mlp()
    compiled = torch.compile(module, backend=ge_core.torch_backend())
    for _ in range(3):
        assert_close([t.numpy() for t in _call(compiled, x)], eager(module, [x]))
    stats = ge_core.torch_stats()
    assert len(stats.compiles) == 1 and stats.compiles[0].trigger == "first call"
    assert [c.compiled for c in stats.calls] == [True, False, False]

    bigger = torch.randn(9, 8)
    assert_close([t.numpy() for t in _call(compiled, bigger)], eager(module, [bigger]))
    assert len(stats.compiles) == 2
    recompile = stats.recompiles[0]
    assert "size mismatch at index 0" in recompile.trigger and "expected 4, actual 9" in recompile.trigger
    assert recompile.dynamic  # Dynamo marked the batch dim dynamic: one GE compile for every batch size
    another = torch.randn(13, 8)
    assert_close([t.numpy() for t in _call(compiled, another)], eager(module, [another]))
    assert len(stats.compiles) == 2 and stats.calls[-1].compiled is False
    assert "2 compile(s)" in stats.summary() and "dynamic compile" in stats.summary()


def test_a_cnn_with_batchnorm_runs_like_eager() -> None:
    module, (x,) = cnn()
    compiled = torch.compile(module, backend=ge_core.torch_backend(ge_core.CompileConfig(opt_level="O3")))
    assert_close([t.numpy() for t in _call(compiled, x)], eager(module, [x]))
    assert ge_core.torch_stats().compiles[0].kernels > 0


class Broken(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(4, 4), nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.first(x))
        torch._dynamo.graph_break()
        return self.second(y)


def test_a_graph_break_gives_two_graphs_and_its_reason_is_recorded() -> None:
    torch.manual_seed(0)
    module = Broken().eval()
    x = torch.randn(3, 4)
    compiled = torch.compile(module, backend=ge_core.torch_backend())
    assert_close([t.numpy() for t in _call(compiled, x)], eager(module, [x]))
    stats = ge_core.torch_stats()
    assert stats.graphs == 2 and len(stats.compiles) == 2
    assert len(stats.graph_breaks) == 1 and "graph_break" in stats.graph_breaks[0]


def test_on_the_npu_simulator_each_call_reports_its_simulated_latency() -> None:
    module, (x,) = mlp()
    exact = ge_core.CompileConfig(precision_mode="force_fp32")  # eager's numbers (ATC's default fp16 rounds)
    compiled = torch.compile(module, backend=ge_core.torch_backend(exact, simulate=True))
    _call(compiled, x)
    result = _call(compiled, x)
    assert_close([t.numpy() for t in result], eager(module, [x]))
    latencies = [c.simulated_us for c in ge_core.torch_stats().calls]
    assert len(latencies) == 2 and all(us is not None and us > 0 for us in latencies)
    assert latencies[0] == pytest.approx(latencies[1], rel=RTOL)  # the same graph, the same schedule


def test_the_compile_cache_serves_a_second_backend(tmp_path: object) -> None:
    module, (x,) = mlp()
    cache = ge_core.CompileCache(tmp_path)
    for _ in range(2):
        torch._dynamo.reset()
        compiled = torch.compile(module, backend=ge_core.torch_backend(cache=cache))
        _call(compiled, x)
    hits = [c.cache_hit for c in ge_core.torch_stats().compiles]
    assert hits == [False, True]


def test_weights_are_constants_and_changing_one_compiles_again() -> None:
    module, (x,) = cnn()
    compiled = torch.compile(module, backend=ge_core.torch_backend())
    _call(compiled, x)
    graph = ge_core.torch_stats().compiles[0]
    assert graph.input_shapes == ((2, 3, 12, 12),)  # the weights are not inputs
    with torch.no_grad():
        module.stem[0].weight.mul_(0.5)
    assert_close([t.numpy() for t in _call(compiled, x)], eager(module, [x]))
    stats = ge_core.torch_stats()
    assert len(stats.compiles) == 2 and "a weight changed" in stats.compiles[1].trigger


def test_a_frame_dynamo_runs_eagerly_is_recorded_and_allow_rnn_brings_the_lstm_to_ge() -> None:
    from tests.torch.models import lstm_tagger

    module, (ids,) = lstm_tagger()
    _call(torch.compile(module, backend=ge_core.torch_backend()), ids)
    stats = ge_core.torch_stats(reset=True)
    assert stats.compiles == [] and len(stats.eager_frames) == 1
    assert "LSTM" in stats.eager_frames[0] and "allow_rnn=True" in stats.eager_frames[0]

    torch._dynamo.reset()
    with torch._dynamo.config.patch(allow_rnn=True):
        compiled = torch.compile(module, backend=ge_core.torch_backend())
        assert_close([t.numpy() for t in _call(compiled, ids)], eager(module, [ids]))
    stats = ge_core.torch_stats()
    assert len(stats.compiles) == 1 and stats.compiles[0].kernels <= 6  # the LSTM is one kernel, not unrolled


class Inverse(nn.Module):
    """torch.linalg.inv: Dynamo captures it, GE has no row for its ATen op (issue 40, friction 10)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.inv(x @ x.transpose(-1, -2) + torch.eye(4)).relu()


def test_a_graph_the_backend_cannot_take_runs_eagerly_and_says_why() -> None:
    module, x = Inverse(), torch.randn(2, 4, 4)
    compiled = torch.compile(module, backend=ge_core.torch_backend())
    for _ in range(2):  # the second call goes straight to eager: no second attempt
        assert torch.allclose(compiled(x), module(x))
    stats = ge_core.torch_stats()
    assert stats.compiles == [] and len(stats.calls) == 2 and len(stats.fallbacks) == 1
    assert "runs eagerly: UnsupportedOpError" in stats.fallbacks[0] and "linalg_inv" in stats.fallbacks[0]
    assert "fell back to eager" in stats.summary()
