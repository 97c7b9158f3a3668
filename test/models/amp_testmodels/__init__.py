"""Test-model generators for amp.

- ``export_torch``: torchvision and hand-written PyTorch models exported to ONNX
  (Debian's /usr/bin/python3 with python3-torch; see scripts/deps-torch.txt).
- ``upgrade_opset``: onnx version-converter wrapper for opset >= 18 variants.
- ``build_onnx``: small hand-made models (control flow, shape ops, opset-
  dependent signatures, external data) built with onnx.helper.
"""
