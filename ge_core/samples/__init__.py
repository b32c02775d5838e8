"""The bundled samples: small hand-built models, broken ones for debugging demos, onnx's real light
architectures served with seeded random weights and calibrated BatchNorm statistics, and exported models."""

from ge_core.samples.calibrate import calibrate_batch_norms
from ge_core.samples.ge_dumps import dump_file_name, dump_source
from ge_core.samples.registry import (
    DEFAULT_SAMPLE,
    Sample,
    ge_dump_samples,
    get_sample,
    light_model,
    list_samples,
    randomize_weights,
    sample_bytes,
)

__all__ = ["DEFAULT_SAMPLE", "Sample", "calibrate_batch_norms", "dump_file_name", "dump_source", "ge_dump_samples",
           "get_sample", "light_model", "list_samples", "randomize_weights", "sample_bytes"]
