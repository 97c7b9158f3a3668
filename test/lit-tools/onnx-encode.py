#!/usr/bin/env python3
"""Encodes a textual ONNX model for lit tests.

`onnx-encode.py IN OUT` reads IN written either in the ONNX textual syntax
(`.onnxtxt`, parsed by onnx.parser) or in protobuf text format
(`.textproto`, for deliberately invalid models), and writes the binary
ModelProto to OUT. Lines starting with `//` or `#` (lit RUN/CHECK lines)
are ignored.
"""

import sys

import onnx
import onnx.parser
from google.protobuf import text_format


def main() -> int:
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        lines = [l for l in f if not l.lstrip().startswith(("//", "#"))]
    text = "".join(lines)
    if src.endswith(".textproto"):
        model = text_format.Parse(text, onnx.ModelProto())
    else:
        model = onnx.parser.parse_model(text)
    with open(dst, "wb") as f:
        f.write(model.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main())
