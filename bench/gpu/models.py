"""Model definitions shared by the GPU preparation (here: torch 1.13 exports
to ONNX) and the GPU benchmark (there: torch 2.x eager / autocast / compile
on the same architectures).

- ``bert_base(batch, seq)``: a BERT-base-shaped encoder (12 layers, d_model
  768, 12 heads, FFN 3072, GELU), torch.nn.TransformerEncoder, batch first.
- ``resnet50(batch)``: torchvision's ResNet-50 (needs torchvision).
"""

import torch
from torch import nn

BERT = {"layers": 12, "d_model": 768, "heads": 12, "ffn": 3072, "seq": 128}


def bert_base(batch, seq=BERT["seq"]):
    layer = nn.TransformerEncoderLayer(d_model=BERT["d_model"], nhead=BERT["heads"],
                                       dim_feedforward=BERT["ffn"], activation="gelu",
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=BERT["layers"],
                                  enable_nested_tensor=False)
    return model.eval(), torch.randn(batch, seq, BERT["d_model"])


def resnet50(batch):
    import torchvision  # noqa: PLC0415 (optional on the GPU machine)
    return torchvision.models.resnet50().eval(), torch.randn(batch, 3, 224, 224)


MODELS = {"bert_base": bert_base, "resnet50": resnet50}
