"""Exporters behind ``sample_models/export_real_models.py`` (the entry point; run that, not these modules).

* ``config`` -- output folder, seeds, tolerances, opsets, head gains.
* ``paddle_ocr`` -- randomise, ``paddle.jit.save`` and paddle2onnx the OCR models of ``paddle_det``
  (DBNet-like detector) and ``paddle_rec`` (CRNN/SVTR-like recogniser), built from ``paddle_blocks``.
* ``torch_bert`` -- a small transformers ``BertModel`` (or the plain-torch mirror in ``torch_bert_mirror``)
  through the TorchScript and dynamo exporters.
* ``verify`` -- onnxruntime runs compared with the framework's own outputs.
* ``provenance`` -- ``exported/README.md`` and ``exported/provenance.json``.

torch, transformers, paddle and paddle2onnx are imported only by the module exporting with them.
"""
