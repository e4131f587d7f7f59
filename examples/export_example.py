#!/usr/bin/python3
"""Exports the bundled example model: torchvision's SqueezeNet 1.1 with random weights.

Run with Debian's python (python3-torch, python3-torchvision, python3-onnx):
    /usr/bin/python3 examples/export_example.py [OUT.onnx]

The weights come from a fixed seed, so the file is reproducible on one torch version. The batch
dimension is the symbolic dim "N", so `fusor ... --dim N=1` matters. Opset 13.
"""
import os
import sys

import onnx
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "models", "squeezenet1_1.onnx")


def main():
    torch.manual_seed(0)
    model = torchvision.models.squeezenet1_1(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    torch.onnx.export(model, x, OUT, opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
    m = onnx.load(OUT)
    onnx.checker.check_model(m)
    print(f"{OUT}: {len(m.graph.node)} nodes, {os.path.getsize(OUT) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
