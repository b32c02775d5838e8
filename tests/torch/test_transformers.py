"""A transformers BERT and GPT-2 built from small configs with seeded random weights (nothing downloaded),
through from_torch and through torch.compile, compared with eager (logits)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")  # optional: pip install transformers

import ge_core  # noqa: E402
from tests.torch.compare import assert_close, eager, run_graph  # noqa: E402


def bert() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=32, num_labels=3)
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0  # padding: the attention mask matters
    return transformers.BertForSequenceClassification(config).eval(), (ids, mask)


def gpt2() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(1)
    config = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=32,
                                     bos_token_id=0, eos_token_id=0, use_cache=False)
    return transformers.GPT2LMHeadModel(config).eval(), (torch.randint(0, 100, (2, 8)),)


@pytest.mark.parametrize("build", [bert, gpt2], ids=["bert", "gpt2"])
def test_logits_match_eager(build: object) -> None:
    module, inputs = build()  # type: ignore[operator]
    graph = ge_core.from_torch(module, inputs)
    assert any(n.op_type == "Attention" for n in graph.nodes)
    assert any(n.name.startswith("/bert/encoder/layer.1/") or n.name.startswith("/transformer/h.1/")
               for n in graph.nodes)
    assert_close(run_graph(graph, inputs), eager(module, inputs))


def test_bert_through_torch_compile() -> None:
    torch._dynamo.reset()
    ge_core.torch_stats(reset=True)
    module, inputs = bert()
    compiled = torch.compile(module, backend=ge_core.torch_backend())
    with torch.no_grad():
        for _ in range(2):
            logits = compiled(*inputs).logits
    assert_close([logits.numpy()], eager(module, inputs))
    stats = ge_core.torch_stats()
    assert len(stats.compiles) == stats.graphs >= 1 and stats.calls[-1].compiled is False
    torch._dynamo.reset()


def test_a_gpt2_returning_its_kv_cache_is_refused_with_use_cache_false_as_the_fix() -> None:
    """Issue 40, friction 10: a raw RuntimeError ("Found DynamicCache in output") before."""
    torch.manual_seed(1)
    config = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=1, n_head=4, n_positions=32,
                                     bos_token_id=0, eos_token_id=0)  # use_cache defaults to True
    module = transformers.GPT2LMHeadModel(config).eval()
    with pytest.raises(ge_core.GEError, match=r"returns a DynamicCache.*use_cache=False"):
        ge_core.from_torch(module, (torch.randint(0, 100, (1, 8)),))


def test_a_vit_whose_dropout_probability_export_refuses_runs_eagerly_through_the_backend() -> None:
    """Issue 40, friction 10: with dynamic=True Dynamo passes the (eval-mode) dropout probability as a tensor,
    torch.export refuses the data-dependent check on it, and the backend's ExportError broke the model."""
    torch.manual_seed(0)
    config = transformers.ViTConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                                    image_size=32, patch_size=8, hidden_dropout_prob=0.1,
                                    attention_probs_dropout_prob=0.1)
    module = transformers.ViTForImageClassification(config).eval()
    torch._dynamo.reset()
    ge_core.torch_stats(reset=True)
    compiled = torch.compile(module, backend=ge_core.torch_backend(), dynamic=True)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(compiled(x).logits, module(x).logits, atol=1e-5)
    stats = ge_core.torch_stats(reset=True)
    torch._dynamo.reset()
    assert stats.fallbacks and all("runs eagerly: ExportError" in f for f in stats.fallbacks)
