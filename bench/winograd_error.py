#!/usr/bin/python3
"""Winograd's fp32 error on real weights and real activations, layer by layer, against a float64
direct convolution; the direct fp32 kernel's error alongside. Not part of CI (needs the exported
models; takes a minute per model).

    bench/winograd_error.py [--fusor BIN] [--seed S] MODEL[:AxBxCxD]...

MODEL is an .onnx path or a name in $FUSOR_MODELS / ~/.cache/fusor/models (resnet18, resnet34,
regnet_y_400mf, densenet121...); :AxBxCxD gives the image input's shape when the model leaves it
open (unset dims are 1 otherwise). For each model:
  1. every 3x3 Conv that winograd.rules could take (constant weights, stride 1, dilation 1,
     group 1, NOTSET padding) has its input exposed; `fusor run --level disabled` runs the model
     once on a seeded standard-normal image to capture those activations;
  2. each such Conv, with the BatchNormalization that follows it if any, becomes a one-layer model
     on its captured input; fusor runs it at `all` (Winograd when the rule fires: the line says
     `wino`) and at `all --disable winograd_conv,winograd_fused_conv,winograd_nchwc_conv` (the direct
     kernel: at `all` the blocked NchwcConv);
  3. both are compared with the same layer computed in float64 by numpy.
Columns: max |y - ref| / max |ref| (the error relative to the layer's output scale) for Winograd
and direct, and their ratio. The last line per model is the worst layer.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = ["winograd_conv", "winograd_fused_conv", "winograd_nchwc_conv"]


def model_path(name):
    if os.path.exists(name):
        return name
    d = os.environ.get("FUSOR_MODELS") or os.path.expanduser("~/.cache/fusor/models")
    p = os.path.join(d, name + ".onnx")
    if not os.path.exists(p):
        sys.exit(f"winograd_error: no model {name} (looked for {p})")
    return p


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def candidates(g):
    inits = {t.name: t for t in g.initializer}
    for n in g.node:  # Constant nodes and Identity of a constant (resnet34's export) count too
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            inits[n.output[0]] = n.attribute[0].t
        elif n.op_type == "Identity" and n.input[0] in inits:
            inits[n.output[0]] = inits[n.input[0]]
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    out = []
    for n in g.node:
        if n.op_type != "Conv" or n.input[1] not in inits:
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        ap = attr(n, "auto_pad", b"NOTSET")
        if (w.ndim != 4 or w.shape[2:] != (3, 3) or list(attr(n, "strides", [1, 1])) != [1, 1]
                or list(attr(n, "dilations", [1, 1])) != [1, 1] or attr(n, "group", 1) != 1
                or ap not in (b"NOTSET", "NOTSET")):
            continue
        b = numpy_helper.to_array(inits[n.input[2]]) if len(n.input) > 2 and n.input[2] else None
        bn = None
        users = consumers.get(n.output[0], [])
        if len(users) == 1 and users[0].op_type == "BatchNormalization" and all(i in inits for i in users[0].input[1:]):
            u = users[0]
            bn = ([numpy_helper.to_array(inits[i]) for i in u.input[1:5]], attr(u, "epsilon", 1e-5))
        out.append((n, w, b, list(attr(n, "pads", [0, 0, 0, 0])), bn))
    return out


def run_fusor(fusor, model_file, inputs, out_dir, extra):
    cmd = [fusor, "run", model_file, "--threads", "1", "--output-dir", out_dir, "--output-format", "npy", "--no-cache"]
    for name, f in inputs.items():
        cmd += ["--input", f"{name}={f}"]
    subprocess.run(cmd + extra, check=True, stdout=subprocess.DEVNULL)


def direct64(x, w, b, pads, bn):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    pt, pl, pb, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh, ow = h + pt + pb - 2, wd + pl + pr - 2
    y = np.zeros((n, w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j], optimize=True)
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    if bn is not None:
        (scale, bias, mean, var), eps = bn
        s = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
        y = (y - mean[None, :, None, None]) * s[None, :, None, None] + bias[None, :, None, None]
    return y


def layer_model(x_shape, w, b, pads, bn):
    inits = [numpy_helper.from_array(w, "W")]
    ins = ["X", "W"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "B"))
        ins.append("B")
    nodes = [helper.make_node("Conv", ins, ["C" if bn else "Y"], pads=pads, kernel_shape=[3, 3])]
    if bn is not None:
        (scale, bias, mean, var), eps = bn
        for name, v in zip(["s", "bb", "m", "v"], [scale, bias, mean, var]):
            inits.append(numpy_helper.from_array(v, name))
        nodes.append(helper.make_node("BatchNormalization", ["C", "s", "bb", "m", "v"], ["Y"], epsilon=eps))
    g = helper.make_graph(nodes, "layer", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def measure(fusor, spec, seed, tmp):
    name, _, shape = spec.partition(":")
    m = onnx.load(model_path(name))
    name = os.path.basename(name).removesuffix(".onnx")
    g = m.graph
    cands = candidates(g)
    # 1. activations
    for i, (n, *_rest) in enumerate(cands):
        g.node.append(helper.make_node("Identity", [n.input[0]], [f"wino_in_{i}"]))
        g.output.append(helper.make_tensor_value_info(f"wino_in_{i}", onnx.TensorProto.FLOAT, None))
    inits = {t.name for t in g.initializer}
    real_inputs = [i for i in g.input if i.name not in inits]
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in real_inputs:
        dims = [int(v) for v in shape.split("x")] if shape else [
            d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
        f = os.path.join(tmp, f"{name}.in.{len(feeds)}.npy")
        np.save(f, rng.standard_normal(dims).astype(np.float32))
        feeds[i.name] = f
    exposed = os.path.join(tmp, f"{name}.exposed.onnx")
    onnx.save(m, exposed)
    act_dir = os.path.join(tmp, f"{name}.acts")
    run_fusor(fusor, exposed, feeds, act_dir, ["--level", "disabled"] + (["--shape", f"{real_inputs[0].name}={shape}"] if shape else []))
    # 2-3. layer by layer
    print(f"{name}: {len(cands)} 3x3 stride-1 convs", flush=True)
    print(f"  {'layer':<44} {'C':>4} {'K':>4} {'HxW':>7}  {'kernel':<6} {'winograd':>9} {'direct':>9} {'ratio':>6}")
    worst = None
    for i, (n, w, b, pads, bn) in enumerate(cands):
        x = np.load(os.path.join(act_dir, f"out.wino_in_{i}.npy"))
        ref = direct64(x, w, b, pads, bn)
        lf = os.path.join(tmp, f"{name}.layer{i}.onnx")
        onnx.save(layer_model(x.shape, w, b, pads, bn), lf)
        xf = os.path.join(tmp, f"{name}.layer{i}.x.npy")
        np.save(xf, x)
        errs = []
        for extra in ([], ["--disable", ",".join(RULES)]):
            d = os.path.join(tmp, f"{name}.layer{i}.{len(errs)}")
            run_fusor(fusor, lf, {"X": xf}, d, ["--level", "all"] + extra)
            y = np.load(os.path.join(d, "out.Y.npy")).astype(np.float64)
            errs.append(float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-30)))
        opt = subprocess.run([fusor, "optimize", lf, "-o", os.path.join(tmp, "o.onnx"), "--json", "--no-cache"],
                             check=True, capture_output=True, text=True).stdout
        kind = "wino" if "WinogradConv" in opt else "direct"
        ratio = errs[0] / errs[1] if errs[1] > 0 else float("inf")
        hw = f"{x.shape[2]}x{x.shape[3]}"
        print(f"  {n.name[-44:]:<44} {w.shape[1]:>4} {w.shape[0]:>4} {hw:>7}  {kind:<6} {errs[0]:9.2e} {errs[1]:9.2e} {ratio:6.1f}", flush=True)
        if kind == "wino" and (worst is None or errs[0] > worst[1]):
            worst = (n.name, errs[0], errs[1])
    if worst:
        print(f"  worst Winograd layer: {worst[0]}: {worst[1]:.2e} (direct {worst[2]:.2e})", flush=True)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--fusor", default=os.path.join(REPO, "build", "bin", "fusor"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models:
            measure(a.fusor, name, a.seed, tmp)


if __name__ == "__main__":
    main()
