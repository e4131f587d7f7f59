#!/usr/bin/python3
"""Exports the larger test and benchmark models with Debian's torch, once per machine.

    /usr/bin/python3 scripts/make_test_models.py [NAME...]     (default: all)

Models go to $FUSOR_MODELS, or ~/.cache/fusor/models; a model already there is skipped. Weights
are random with a fixed seed (the models are for graph structure, numerics and timing, not
accuracy). Opset 13, batch dim symbolic ("N") unless a model says otherwise.

  resnet18        torchvision resnet18, BatchNormalization kept (not folded into Conv)
  mobilenet_v2    torchvision mobilenet_v2, BatchNormalization kept
  convnext_tiny   torchvision convnext_tiny (~110 MB): the load/save benchmark
  transformer     a 2-layer nn.TransformerEncoder, batch and sequence dims symbolic
  if_lstm         an LSTM followed by an If on the sign of the sum of its output
"""
import os
import sys

import onnx
import torch
import torchvision

OPSET = 13


def cache_dir():
    d = os.environ.get("FUSOR_MODELS") or os.path.join(os.path.expanduser("~"), ".cache", "fusor", "models")
    os.makedirs(d, exist_ok=True)
    return d


def export(model, args, path, input_names, output_names, dynamic_axes, keep_batchnorm=False):
    model.eval()
    kw = {}
    if keep_batchnorm:
        # TrainingMode.EVAL runs the eval peephole pass, which folds BatchNormalization into the
        # preceding Conv. PRESERVE with a model in eval mode skips that pass and still exports
        # inference-mode BatchNormalization; no constant folding keeps the graph as written.
        kw = dict(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    tmp = path + ".tmp"
    torch.onnx.export(model, args, tmp, opset_version=OPSET, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, **kw)
    onnx.checker.check_model(tmp)
    os.replace(tmp, path)


def image_model(ctor, keep_batchnorm):
    def make(path):
        torch.manual_seed(0)
        m = ctor(weights=None)
        export(m, torch.randn(1, 3, 224, 224), path, ["input"], ["logits"],
               {"input": {0: "N"}, "logits": {0: "N"}}, keep_batchnorm)
    return make


def transformer(path):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    export(enc, torch.randn(2, 16, 64), path, ["tokens"], ["encoded"],
           {"tokens": {0: "N", 1: "S"}, "encoded": {0: "N", 1: "S"}})


class IfLstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size=8, hidden_size=16, batch_first=True)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        y = self.head(y)
        if y.sum() > 0:
            return torch.relu(y)
        return -y


def if_lstm(path):
    torch.manual_seed(0)
    m = torch.jit.script(IfLstm().eval())
    export(m, (torch.randn(2, 5, 8),), path, ["x"], ["y"], {"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}})


MODELS = {
    "resnet18": image_model(torchvision.models.resnet18, keep_batchnorm=True),
    "mobilenet_v2": image_model(torchvision.models.mobilenet_v2, keep_batchnorm=True),
    "convnext_tiny": image_model(torchvision.models.convnext_tiny, keep_batchnorm=False),
    "transformer": transformer,
    "if_lstm": if_lstm,
}


def main():
    names = sys.argv[1:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    d = cache_dir()
    for name in names:
        path = os.path.join(d, name + ".onnx")
        if os.path.exists(path):
            print(f"{path}: present")
            continue
        MODELS[name](path)
        m = onnx.load(path, load_external_data=False)
        ops = sorted({n.op_type for n in m.graph.node})
        print(f"{path}: {len(m.graph.node)} nodes, {os.path.getsize(path) / 1e6:.1f} MB ({', '.join(ops)})")


if __name__ == "__main__":
    main()
