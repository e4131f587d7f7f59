#!/usr/bin/env python3
"""Dynamically quantized models in the form ONNX Runtime's quantize_dynamic writes, without ORT.

QOperator format, quantize_dynamic's defaults: every MatMul whose weight (input 1) is a 2-D float
initializer gets an int8 weight, symmetric (zero point 0, range [-127, 127]) with one scale for the
tensor (--per-channel: one per column), and its input is quantized at run time to uint8 by
DynamicQuantizeLinear (once per tensor, shared by the MatMuls that read it):

    x_quantized, x_scale, x_zero_point = DynamicQuantizeLinear(x)          node x_QuantizeLinear
    y_output_quantized = MatMulInteger(x_quantized, W_quantized, x_zero_point, W_zero_point)
    y_output_quantized_cast_output = Cast<to = FLOAT>(y_output_quantized)
    y_scales_mul = Mul(x_scale, W_scale)
    y = Mul(y_output_quantized_cast_output, y_scales_mul)

Every Conv whose weight is a float initializer (and bias, if any) is quantized the same way, per
tensor or (--per-channel) per output channel (the weight's axis 0), into ConvInteger:

    y_output_quantized = ConvInteger(x_quantized, W_quantized, x_zero_point, W_zero_point)  (Conv's attributes)
    y_output_quantized_cast_output = Cast<to = FLOAT>(y_output_quantized)
    y_scales_mul = Mul(x_scale, W_scale)          W_scale: [] per tensor, [C_out, 1, 1] per channel
    y = Mul(y_output_quantized_cast_output, y_scales_mul)
    y = Add(y, Reshape(B, [1, -1, 1, 1]))          when the Conv has a bias

int8 weights, as for MatMul (quantize_dynamic's default weight type); --conv-uint8 writes them as
uint8 with zero point 128 (the same values moved by 128: ORT's older default, and its faster
ConvInteger path: 32 against 130 ms for resnet18 at 1 thread, ORT 1.30). ORT's quantize_dynamic is usually
run on a model whose BatchNormalizations are folded into the Convs before it (its pre-processing
step): that is done here too, for a BatchNormalization with constant parameters that is the only
reader of a Conv's output.

(written from a reading of ORT's quantization package, onnxruntime/python/tools/quantization:
onnx_quantizer.py, operators/matmul.py and operators/conv.py; the format is theirs, the code is
ours). No calibration is needed, so symbolic dimensions stay symbolic.

Usage: make_dynamic_models.py MODEL... [-o DIR] [--per-channel] [--conv-uint8] [--force]
  MODEL is a path to an .onnx file or the name of a model in $FUSOR_MODELS (default
  ~/.cache/fusor/models, made by scripts/make_test_models.py when missing). The result is written
  to DIR (default $FUSOR_DYN_MODELS or ~/.cache/fusor/dyn) under the same file name; an existing
  file is kept unless --force.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg):
    sys.exit("make_dynamic_models: " + msg)


def quantize_weight(w, per_channel, axis=1):
    """int8 symmetric: scale = max |w| / 127 per tensor or per channel (along axis: a MatMul's
    columns, a Conv's output channels), zero point 0. The scale has w's rank when per channel."""
    other = tuple(a for a in range(w.ndim) if a != axis % w.ndim)
    amax = np.abs(w).max(axis=other, keepdims=True) if per_channel else np.array(np.abs(w).max())
    scale = (amax / 127.0).astype(np.float32)
    scale = np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale


def fold_batchnorms(model):
    """Conv -> BatchNormalization (constant parameters, the Conv's only reader) into one Conv with a
    bias; Identity nodes of initializers become initializers first. Returns the number folded."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []
    for node in g.node:
        if node.op_type == "Identity" and node.input[0] in inits:
            t = onnx.TensorProto()
            t.CopyFrom(inits[node.input[0]])
            t.name = node.output[0]
            inits[t.name] = t
            g.initializer.append(t)
        else:
            nodes.append(node)
    readers = {}
    for node in nodes:
        for i in node.input:
            readers[i] = readers.get(i, 0) + 1
    for o in g.output:
        readers[o.name] = readers.get(o.name, 0) + 1
    producer = {o: node for node in nodes for o in node.output}
    arr = lambda name: numpy_helper.to_array(inits[name]).astype(np.float32)
    out, folded = [], 0
    for node in nodes:
        conv = producer.get(node.input[0]) if node.op_type == "BatchNormalization" else None
        if (conv is None or conv.op_type != "Conv" or readers.get(node.input[0]) != 1 or len(node.output) != 1 or
                not all(n in inits for n in list(node.input[1:5]) + list(conv.input[1:]))):
            out.append(node)
            continue
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (arr(n) for n in node.input[1:5])
        w = arr(conv.input[1])
        b = arr(conv.input[2]) if len(conv.input) > 2 else np.zeros(w.shape[0], np.float32)
        k = gamma / np.sqrt(var + eps)
        wname, bname = conv.output[0] + "_folded_W", conv.output[0] + "_folded_B"
        g.initializer.extend([numpy_helper.from_array((w * k.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32), wname),
                              numpy_helper.from_array(((b - mean) * k + beta).astype(np.float32), bname)])
        inits[wname] = g.initializer[-2]
        inits[bname] = g.initializer[-1]
        del conv.input[1:]
        conv.input.extend([wname, bname])
        conv.output[0] = node.output[0]
        folded += 1
    del g.node[:]
    g.node.extend(out)
    return folded


def quantize_dynamic(model, per_channel=False, conv_uint8=False):
    fold_batchnorms(model)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    used = {n for node in g.node for n in list(node.input) + list(node.output)} | set(inits)
    used |= {v.name for v in g.input} | {v.name for v in g.output}

    def fresh(name):
        out, k = name, 1
        while out in used:
            out, k = "%s_%d" % (name, k), k + 1
        used.add(out)
        return out

    quantized = {}  # input name -> (q, scale, zero point) of its DynamicQuantizeLinear
    new_nodes, new_inits, count = [], [], 0
    for node in g.node:
        conv = node.op_type == "Conv" and all(n in inits for n in node.input[1:])
        w = inits.get(node.input[1]) if (node.op_type == "MatMul" and len(node.input) == 2) or conv else None
        if w is None or w.data_type != TensorProto.FLOAT or len(w.dims) != (len(w.dims) if conv else 2):
            new_nodes.append(node)
            continue
        x, y = node.input[0], node.output[0]
        if x not in quantized:
            q, s, z = fresh(x + "_quantized"), fresh(x + "_scale"), fresh(x + "_zero_point")
            new_nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [q, s, z], name=fresh(x + "_QuantizeLinear")))
            quantized[x] = (q, s, z)
        q, s, z = quantized[x]
        if conv:
            new_nodes += quantize_conv(node, inits, per_channel, conv_uint8, q, s, z, fresh, new_inits)
            count += 1
            continue
        wq, ws = quantize_weight(numpy_helper.to_array(w).astype(np.float32), per_channel)
        wq_name, ws_name, wz_name = fresh(w.name + "_quantized"), fresh(w.name + "_scale"), fresh(w.name + "_zero_point")
        new_inits += [numpy_helper.from_array(wq, wq_name), numpy_helper.from_array(ws, ws_name),
                      numpy_helper.from_array(np.zeros(ws.shape, np.int8), wz_name)]
        mi, cast, mul = fresh(y + "_output_quantized"), fresh(y + "_output_quantized_cast_output"), fresh(y + "_scales_mul")
        base = node.name or y
        new_nodes += [
            helper.make_node("MatMulInteger", [q, wq_name, z, wz_name], [mi], name=fresh(base + "_quant")),
            helper.make_node("Cast", [mi], [cast], to=TensorProto.FLOAT, name=fresh(base + "_quant_cast")),
            helper.make_node("Mul", [s, ws_name], [mul], name=fresh(base + "_quant_scales_mul")),
            helper.make_node("Mul", [cast, mul], [y], name=fresh(base + "_quant_output_scale_mul")),
        ]
        count += 1
    # Weights no other node reads are dropped (the quantized copies replace them).
    still = {n for node in new_nodes for n in node.input}
    keep = [t for t in g.initializer if t.name in still]
    del g.node[:]
    g.node.extend(new_nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    # DynamicQuantizeLinear needs opset 11; MatMulInteger 10.
    for op in model.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 11:
            op.version = 11
    return count


def quantize_conv(node, inits, per_channel, uint8, q, s, z, fresh, new_inits):
    """The nodes of one quantized Conv (int8 weight, or uint8 with zero point 128: see the header)."""
    w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
    wq, ws = quantize_weight(w, per_channel, axis=0)
    wz = np.array(0, np.int8)
    if uint8:
        wq, wz = (wq.astype(np.int32) + 128).astype(np.uint8), np.array(128, np.uint8)
    # Per channel: [C_out, 1, ...] broadcasting over the conv output's (N, C_out, spatial...).
    ws = ws.reshape((-1,) + (1,) * (w.ndim - 2)) if per_channel else ws
    y, wname = node.output[0], node.input[1]
    wq_name, ws_name, wz_name = fresh(wname + "_quantized"), fresh(wname + "_scale"), fresh(wname + "_zero_point")
    new_inits += [numpy_helper.from_array(wq, wq_name), numpy_helper.from_array(ws, ws_name),
                  numpy_helper.from_array(wz, wz_name)]
    bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
    scaled = fresh(y + "_output_scaled") if bias else y
    ci, cast, mul = fresh(y + "_output_quantized"), fresh(y + "_output_quantized_cast_output"), fresh(y + "_scales_mul")
    base = node.name or y
    nodes = [
        helper.make_node("ConvInteger", [q, wq_name, z, wz_name], [ci], name=fresh(base + "_quant"),
                         **{a.name: helper.get_attribute_value(a) for a in node.attribute}),
        helper.make_node("Cast", [ci], [cast], to=TensorProto.FLOAT, name=fresh(base + "_quant_cast")),
        helper.make_node("Mul", [s, ws_name], [mul], name=fresh(base + "_quant_scales_mul")),
        helper.make_node("Mul", [cast, mul], [scaled], name=fresh(base + "_quant_output_scale_mul")),
    ]
    if bias:
        shape, reshaped = fresh(bias + "_reshape_shape"), fresh(bias + "_reshape_output")
        new_inits.append(numpy_helper.from_array(np.array([1, -1] + [1] * (w.ndim - 2), np.int64), shape))
        nodes += [helper.make_node("Reshape", [bias, shape], [reshaped], name=fresh(base + "_bias_reshape")),
                  helper.make_node("Add", [scaled, reshaped], [y], name=fresh(base + "_bias_add"))]
    return nodes


def model_source(name):
    if os.path.exists(name):
        return name
    d = os.environ.get("FUSOR_MODELS") or os.path.expanduser("~/.cache/fusor/models")
    p = os.path.join(d, name + ".onnx")
    if not os.path.exists(p):
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "make_test_models.py"), name], check=True)
    if not os.path.exists(p):
        die("no model %s (looked for %s)" % (name, p))
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--conv-uint8", action="store_true")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    out = args.out or os.environ.get("FUSOR_DYN_MODELS") or os.path.expanduser("~/.cache/fusor/dyn")
    os.makedirs(out, exist_ok=True)
    for name in args.models:
        src = model_source(name)
        dst = os.path.join(out, os.path.basename(src))
        if os.path.abspath(dst) == os.path.abspath(src):
            die("%s: the output would overwrite the input; give -o" % src)
        if os.path.exists(dst) and not args.force:
            print("%s: exists (--force to remake)" % dst)
            continue
        model = onnx.load(src)
        n = quantize_dynamic(model, args.per_channel, args.conv_uint8)
        if n == 0:
            die("%s: no MatMul or Conv with a float initializer weight to quantize" % src)
        onnx.checker.check_model(model)
        tmp = dst + ".tmp"
        onnx.save(model, tmp)
        os.replace(tmp, dst)
        print("%s: %d MatMuls and Convs quantized, %.1f MB (from %.1f MB)" % (dst, n, os.path.getsize(dst) / 1e6,
                                                                  os.path.getsize(src) / 1e6))


if __name__ == "__main__":
    main()
