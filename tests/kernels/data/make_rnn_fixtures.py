#!/usr/bin/python3
"""Writes torch-computed reference cases for the LSTM/GRU/RNN kernels (tests/kernels/rnn_test.cpp).

torch is an independent implementation: its weights are re-packed into ONNX's layout here (gate
order i,o,f,c for LSTM from torch's i,f,g,o; z,r,h for GRU from torch's r,z,n; GRU uses
linear_before_reset=1, which is torch's formulation) and its outputs become the expected values.
Each case directory holds X, W, R, B, initial_h[, initial_c] and Y, Y_h[, Y_c] as TensorProto .pb.
Run: /usr/bin/python3 tests/kernels/data/make_rnn_fixtures.py
"""
import os

import numpy as np
import torch
from onnx import numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_torch")


def save(case, name, arr):
    d = os.path.join(HERE, case)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), name).SerializeToString())


def reorder(t, order, hidden):
    chunks = [t[i * hidden:(i + 1) * hidden] for i in range(len(order))]
    return torch.cat([chunks[i] for i in order], 0)


def make(case, kind, seq=5, batch=2, inp=3, hidden=4, bidir=True):
    torch.manual_seed({"lstm": 1, "gru": 2, "rnn": 3}[kind])
    mod = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind](inp, hidden, bidirectional=bidir)
    dirs = 2 if bidir else 1
    x = torch.randn(seq, batch, inp)
    h0 = torch.randn(dirs, batch, hidden)
    c0 = torch.randn(dirs, batch, hidden)
    with torch.no_grad():
        if kind == "lstm":
            y, (hn, cn) = mod(x, (h0, c0))
        else:
            y, hn = mod(x, h0)
    # torch gate order -> ONNX gate order
    order = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn": [0]}[kind]
    W, R, B = [], [], []
    for d in range(dirs):
        sfx = "_reverse" if d == 1 else ""
        w = getattr(mod, "weight_ih_l0" + sfx).detach()
        r = getattr(mod, "weight_hh_l0" + sfx).detach()
        bw = getattr(mod, "bias_ih_l0" + sfx).detach()
        br = getattr(mod, "bias_hh_l0" + sfx).detach()
        W.append(reorder(w, order, hidden))
        R.append(reorder(r, order, hidden))
        B.append(torch.cat([reorder(bw, order, hidden), reorder(br, order, hidden)]))
    save(case, "X", x.numpy())
    save(case, "W", torch.stack(W).numpy())
    save(case, "R", torch.stack(R).numpy())
    save(case, "B", torch.stack(B).numpy())
    save(case, "initial_h", h0.numpy())
    # ONNX Y is [seq, num_directions, batch, hidden]; torch's is [seq, batch, dirs * hidden].
    save(case, "Y", y.reshape(seq, batch, dirs, hidden).permute(0, 2, 1, 3).numpy())
    save(case, "Y_h", hn.numpy())
    if kind == "lstm":
        save(case, "initial_c", c0.numpy())
        save(case, "Y_c", cn.numpy())


if __name__ == "__main__":
    make("lstm_bidirectional", "lstm")
    make("gru_bidirectional", "gru")
    make("rnn_bidirectional", "rnn")
