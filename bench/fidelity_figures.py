"""Published device-side inference figures of ATC-compiled models on Ascend parts, each with its source.

Every row is fp16 as ATC compiles by default (no --precision_mode on the README's atc line, no AMCT INT8
quantisation) and says whether the README's model took AIPP (--insert_op_conf: image preprocessing on the
AI Core, in front of the first conv) and --enable_small_channel (the first conv on 4 channels instead of 16):
we simulate neither, so those rows carry a little work we do not. The fps are the READMEs' own:

- ModelZoo (gitee.com/ascend/ModelZoo-PyTorch, mirrored at github.com/Ascend/ModelZoo-PyTorch; paths and the
  commit that last changed each README), 310P3: `ais_bench` pure inference (--loop) or its dataset run, one
  chip of an Atlas 300I Pro. Ascend 310: the CANN 5.0.1 `benchmark` tool's "Interface throughputRate" on one
  chip (its READMEs multiply it by 4 for a four-chip Atlas 300 card, "310*4"; we divide that back).
- Batch 1 is a latency: one request at a time. A larger batch is pipelined throughput (the runtime overlaps
  copies, launches and batches), so batch / fps is what a batch costs in steady state, not its latency.
"""

from __future__ import annotations

from dataclasses import dataclass

MODELZOO = "Ascend/ModelZoo-PyTorch"


@dataclass(frozen=True)
class Figure:
    model: str  # a key of fidelity_models.BUILDERS
    chip: str  # the part as the README names it
    profile: str  # our profile for that part
    batch: int
    fps: float
    source: str  # repository path @ commit
    aipp: bool = False
    small_channel: bool = False
    note: str = ""

    @property
    def latency_us(self) -> float:
        """What one batch costs on the device: batch / fps."""
        return self.batch / self.fps * 1e6

    @property
    def key(self) -> str:
        return f"{self.model} {self.chip} bs{self.batch}"


def _zoo(path: str, commit: str) -> str:
    return f"{MODELZOO}:ACL_PyTorch/{path} @{commit}"


_R50 = _zoo("built-in/cv/Resnet50_mlperf/README.md", "6aca6e286")
_BERT512 = _zoo("built-in/nlp/Bert_Base_Uncased_for_Pytorch/ReadMe.md", "3e5d084d6")
_BERT_HF = _zoo("built-in/nlp/Bert_Uncased_Huggingface/README.md", "844460905")
_GELU = "atc --optypelist_for_implmode=Gelu --op_select_implmode=high_performance"

FIGURES: tuple[Figure, ...] = (
    # ---- Ascend 310P3 (Atlas 300I Pro), batch 1 -------------------------------------------------------------
    Figure("resnet50", "310P3", "ascend310p", 1, 1503.92, _R50,
           note="MLPerf ResNet-50 v1.5; the fp16 README (a later one reports 4089 fps for an AMCT INT8 model)"),
    Figure("bert_base_seq512", "310P3", "ascend310p", 1, 177.81, _BERT512, note=f"BERT-base uncased, SQuAD; {_GELU}"),
    Figure("bert_base_seq128", "310P3", "ascend310p", 1, 484.39, _BERT_HF, note=f"ais_bench --loop 50; {_GELU}"),
    Figure("bert_base_seq384", "310P3", "ascend310p", 1, 224.96, _BERT_HF, note=f"ais_bench --loop 50; {_GELU}"),
    Figure("resnet18", "310P3", "ascend310p", 1, 2864.96, _zoo("built-in/cv/Resnet18_for_PyTorch/README.md",
                                                               "3c2cbb83c"), aipp=True, small_channel=True),
    Figure("resnet101", "310P3", "ascend310p", 1, 971.86, _zoo("built-in/cv/Resnet101_Pytorch_Infer/README.md",
                                                               "8988159f6"), aipp=True, small_channel=True),
    Figure("wide_resnet50_2", "310P3", "ascend310p", 1, 748.088,
           _zoo("built-in/cv/Wide_ResNet50_2_for_Pytorch/README.md", "8673c23a9")),
    Figure("densenet121", "310P3", "ascend310p", 1, 1087.52,
           _zoo("built-in/cv/Densenet121_Pytorch_Infer/ReadMe.md", "b3324a6dc"),
           note="simulated: onnx's light DenseNet-121"),
    Figure("googlenet", "310P3", "ascend310p", 1, 1923.5063, _zoo("contrib/cv/classfication/GoogleNet/ReadMe.md",
                                                                  "f562176ae"),
           note="simulated: onnx's light GoogLeNet (BVLC, with LRN; torchvision's has BatchNorm)"),
    Figure("vgg16", "310P3", "ascend310p", 1, 465.54, _zoo("contrib/cv/classfication/VGG16/README.md", "fb7276ee1")),
    Figure("vgg19", "310P3", "ascend310p", 1, 419.18, _zoo("contrib/cv/classfication/VGG19/README.md", "949ee5a1d")),
    Figure("mobilenet_v1", "310P3", "ascend310p", 1, 4076.18,
           _zoo("contrib/cv/classfication/MobileNet-v1/README.md", "949ee5a1d")),
    Figure("squeezenet1_1", "310P3", "ascend310p", 1, 4849.7,
           _zoo("contrib/cv/classfication/Squeezenet1_1/README.md", "3025cbe7e"), aipp=True, small_channel=True),
    # ---- Ascend 310 (one chip of an Atlas 300), batch 1 ------------------------------------------------------
    Figure("resnet18", "310", "ascend310", 1, 787.709, _zoo("contrib/cv/classfication/ResNet18/README.md", "c9d3d30bc"),
           note="benchmark tool, Interface throughputRate of one chip"),
    Figure("resnet101", "310", "ascend310", 1, 247.898,
           _zoo("contrib/cv/classfication/ResNet101/README.md", "c9d3d30bc"),
           note="benchmark tool, Interface throughputRate of one chip"),
    Figure("vgg16", "310", "ascend310", 1, 460.68 / 4, _zoo("contrib/cv/classfication/VGG16/README.md", "fb7276ee1"),
           note="README's 310*4 column (a 4-chip card) / 4"),
    Figure("vgg19", "310", "ascend310", 1, 415.96 / 4, _zoo("contrib/cv/classfication/VGG19/README.md", "949ee5a1d"),
           note="README's 310*4 column (a 4-chip card) / 4"),
    Figure("mobilenet_v1", "310", "ascend310", 1, 4550.44 / 4,
           _zoo("contrib/cv/classfication/MobileNet-v1/README.md", "949ee5a1d"),
           note="README's 310*4 column (a 4-chip card) / 4"),
    # ---- larger batches: pipelined throughput, not latency -----------------------------------------------------
    Figure("resnet50", "310P3", "ascend310p", 8, 3714.24, _R50),
    Figure("bert_base_seq512", "310P3", "ascend310p", 4, 221.81, _BERT512, note=_GELU),
    Figure("resnet18", "310", "ascend310", 16, 1509.64, _zoo("contrib/cv/classfication/ResNet18/README.md",
                                                              "c9d3d30bc"),
           note="benchmark tool, Interface throughputRate of one chip"),
)
