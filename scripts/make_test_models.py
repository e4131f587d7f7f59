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

The broad benchmark set (bench/broad.py), BatchNormalization folded as a normal export does:
  resnet34, mobilenet_v3_large, efficientnet_b0, regnet_y_400mf, shufflenet_v2, densenet121,
  squeezenet1_1 (copied from examples/models), vit_tiny (torchvision VisionTransformer, 12 layers,
  3 heads of 64), bert_like (an HF-BERT-style encoder: separate Q/K/V projections, head split by
  Reshape+Transpose, additive padding mask, erf GELU, post-LayerNorm; dims N, S), gpt_like (a
  GPT-2-style decoder: one QKV projection split three ways, causal mask by Where, tanh GELU,
  pre-LayerNorm; dims N, S), lstm_voice (2-layer LSTM over 40 features, sigmoid head; dims N, T),
  gru_voice (GRU, same shape), vad_if (a Silero-VAD-like model: an If on the sample rate picks one of
  two encoders, Conv1d + 2-layer LSTM + head, whose LSTM weights the exporter slices and concatenates
  inside the branch from outer-scope constants; inputs x[N,512], sr, h/c[2,N,64])
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


def vit_tiny(path):
    torch.manual_seed(0)
    m = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                                             hidden_dim=192, mlp_dim=768)
    # torchvision starts the classifier at zero (fine-tuning practice), which makes every logit 0
    # whatever the encoder computes: an agreement check against ORT would then test nothing.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    torch.nn.init.normal_(m.heads.head.bias, std=0.02)
    export(m, torch.randn(1, 3, 224, 224), path, ["input"], ["logits"], {"input": {0: "N"}, "logits": {0: "N"}})


class BertLayer(torch.nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v = torch.nn.Linear(d, d), torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.o = torch.nn.Linear(d, d)
        self.ln1, self.ln2 = torch.nn.LayerNorm(d, eps=1e-12), torch.nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def heads(self, x):
        n, s, _ = x.shape
        return x.view(n, s, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        n, s, d = x.shape
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.dh ** 0.5) + mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(n, s, d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class BertLike(torch.nn.Module):
    def __init__(self, vocab=8000, d=384, heads=6, ff=1536, layers=4, max_pos=512):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(vocab, d), torch.nn.Embedding(max_pos, d)
        self.ln = torch.nn.LayerNorm(d, eps=1e-12)
        self.layers = torch.nn.ModuleList([BertLayer(d, heads, ff) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = self.ln(self.tok(input_ids) + self.pos(torch.arange(s).unsqueeze(0)))
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


def bert_like(path):
    torch.manual_seed(0)
    ids = torch.randint(0, 8000, (1, 128))
    export(BertLike(), (ids, torch.ones(1, 128, dtype=torch.int64)), path, ["input_ids", "attention_mask"],
           ["hidden"], {"input_ids": {0: "N", 1: "S"}, "attention_mask": {0: "N", 1: "S"}, "hidden": {0: "N", 1: "S"}})


class GptBlock(torch.nn.Module):
    def __init__(self, d, heads, max_pos):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos)).view(1, 1, max_pos, max_pos))

    def forward(self, x):
        n, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = [t.view(n, s, self.h, self.dh).transpose(1, 2) for t in (q, k, v)]
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / self.dh ** 0.5)
        att = att.masked_fill(self.bias[:, :, :s, :s] == 0, float("-inf"))
        y = torch.matmul(torch.softmax(att, dim=-1), v).transpose(1, 2).contiguous().view(n, s, d)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptLike(torch.nn.Module):
    def __init__(self, vocab=8000, d=256, heads=4, layers=4, max_pos=512):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(vocab, d), torch.nn.Embedding(max_pos, d)
        self.blocks = torch.nn.ModuleList([GptBlock(d, heads, max_pos) for _ in range(layers)])
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos(torch.arange(s).unsqueeze(0))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def gpt_like(path):
    torch.manual_seed(0)
    export(GptLike(), (torch.randint(0, 8000, (1, 128)),), path, ["input_ids"], ["logits"],
           {"input_ids": {0: "N", 1: "S"}, "logits": {0: "N", 1: "S"}})


class Voice(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=40, hidden_size=64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 1)

    def forward(self, x):
        y, _ = self.rnn(x)
        return torch.sigmoid(self.head(y))


def voice(cell):
    def make(path):
        torch.manual_seed(0)
        export(Voice(cell), (torch.randn(1, 32, 40),), path, ["feats"], ["prob"],
               {"feats": {0: "N", 1: "T"}, "prob": {0: "N", 1: "T"}})
    return make


class VadEncoder(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 32, k, stride=k // 2)
        self.lstm = torch.nn.LSTM(32, 64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 1)

    def forward(self, x, h, c):
        y = torch.relu(self.conv(x.unsqueeze(1))).transpose(1, 2)
        y, (h2, c2) = self.lstm(y, (h, c))
        return torch.sigmoid(self.head(y[:, -1])), h2, c2


class VadIf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e16 = VadEncoder(16)
        self.e8 = VadEncoder(8)

    def forward(self, x, sr, h, c):
        if bool(sr == 16000):
            return self.e16(x, h, c)
        return self.e8(x, h, c)


def vad_if(path):
    torch.manual_seed(0)
    m = torch.jit.script(VadIf().eval())
    args = (torch.randn(1, 512), torch.tensor(16000), torch.zeros(2, 1, 64), torch.zeros(2, 1, 64))
    export(m, args, path, ["x", "sr", "h", "c"], ["prob", "hn", "cn"],
           {"x": {0: "N"}, "h": {1: "N"}, "c": {1: "N"}, "prob": {0: "N"}, "hn": {1: "N"}, "cn": {1: "N"}})


def squeezenet1_1(path):
    import shutil
    shutil.copyfile(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "examples", "models", "squeezenet1_1.onnx"), path)


MODELS = {
    "resnet18": image_model(torchvision.models.resnet18, keep_batchnorm=True),
    "mobilenet_v2": image_model(torchvision.models.mobilenet_v2, keep_batchnorm=True),
    "convnext_tiny": image_model(torchvision.models.convnext_tiny, keep_batchnorm=False),
    "transformer": transformer,
    "if_lstm": if_lstm,
    "resnet34": image_model(torchvision.models.resnet34, keep_batchnorm=False),
    "mobilenet_v3_large": image_model(torchvision.models.mobilenet_v3_large, keep_batchnorm=False),
    "efficientnet_b0": image_model(torchvision.models.efficientnet_b0, keep_batchnorm=False),
    "regnet_y_400mf": image_model(torchvision.models.regnet_y_400mf, keep_batchnorm=False),
    "shufflenet_v2": image_model(torchvision.models.shufflenet_v2_x1_0, keep_batchnorm=False),
    "densenet121": image_model(torchvision.models.densenet121, keep_batchnorm=False),
    "squeezenet1_1": squeezenet1_1,
    "vit_tiny": vit_tiny,
    "bert_like": bert_like,
    "gpt_like": gpt_like,
    "lstm_voice": voice(torch.nn.LSTM),
    "gru_voice": voice(torch.nn.GRU),
    "vad_if": vad_if,
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
