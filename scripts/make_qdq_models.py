#!/usr/bin/python3
"""Makes int8 QDQ versions of fp32 models, in the form ONNX Runtime's quantize_static writes
(scripts/qdq_quantize.py says exactly what that is), calibrated on seeded random inputs.

    /usr/bin/python3 scripts/make_qdq_models.py [options] NAME|MODEL.onnx...

NAME is a model of scripts/make_test_models.py (resnet18, mobilenet_v2, bert_like, ...); the
result is $FUSOR_QDQ_MODELS (default ~/.cache/fusor/qdq)/NAME.onnx, with --reduce-range
$FUSOR_QDQ7_MODELS (default ~/.cache/fusor/qdq7)/NAME.onnx, or -o for one MODEL.
An existing result is kept unless --force.

Steps, as a quantize_static user does them:
  1. pre-processing (ORT's quant_pre_process runs ORT's basic-level optimizer): `fusor optimize
     --level basic` with the shape flags: BatchNormalization folded into Conv, Identity removed,
     shape computations folded, Constant nodes turned into initializers;
  2. calibration (MinMax): the model with a ReduceMin and a ReduceMax output per tensor to
     quantize runs on --samples seeded random inputs (`fusor run --level disabled`); each
     tensor's range is the min of the minimums and the max of the maximums;
  3. quantization: Q/DQ nodes and int8/int32 initializers (qdq_quantize.quantize).

Options:
  -o OUT              output path (one MODEL only)
  --dim NAME=V, --shape IN=AxB   shape flags for pre-processing and calibration (default per known
                      model: N=1, and S=128 for bert_like/gpt_like)
  --samples K         calibration inputs (default 8); --seed S (default 1)
  --range LO,HI       float inputs uniform in [LO, HI) (default -1,1, as ort_peer.js)
  --int-range LO,HI   integer inputs uniform in [LO, HI] (default 0,10, as ort_peer.js)
  --value IN=V        fill input IN with V (default for bert_like: attention_mask=1)
  --op-types A,B      the ops to quantize (default: quantize_static's set; qdq_quantize.DEFAULT_OPS)
  --reduce-range      7-bit weights ([-64, 64]), as quantize_static(reduce_range=True): what ORT
                      advises for machines without VNNI, where fusor then multiplies them with
                      vpmaddubsw (docs/quantization.md)
  --fusor BIN         (default build/bin/fusor under the repo)
  --force             remake an existing output
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qdq_quantize as qq  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"bert_like": ["--dim", "N=1", "--dim", "S=128"], "gpt_like": ["--dim", "N=1", "--dim", "S=128"]}
VALUES = {"bert_like": ["attention_mask=1"]}
NP_TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
            onnx.TensorProto.BOOL: np.bool_, onnx.TensorProto.DOUBLE: np.float64}


def die(msg):
    sys.exit("make_qdq_models: " + msg)


def models_dir():
    return os.environ.get("FUSOR_MODELS") or os.path.expanduser("~/.cache/fusor/models")


def out_dir(reduce_range):
    if reduce_range:
        d = os.environ.get("FUSOR_QDQ7_MODELS") or os.path.expanduser("~/.cache/fusor/qdq7")
    else:
        d = os.environ.get("FUSOR_QDQ_MODELS") or os.path.expanduser("~/.cache/fusor/qdq")
    os.makedirs(d, exist_ok=True)
    return d


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        die("%s failed (%d):\n%s" % (" ".join(cmd[:3]), p.returncode, p.stderr[-3000:]))
    return p.stdout


def random_inputs(model, rng, frange, irange, values):
    out = {}
    inits = {t.name for t in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        if any(s <= 0 for s in shape):
            die("input %s has a symbolic shape after pre-processing; give --dim/--shape" % vi.name)
        dt = NP_TYPES.get(tt.elem_type)
        if dt is None:
            die("input %s: unsupported element type %d" % (vi.name, tt.elem_type))
        if vi.name in values:
            out[vi.name] = np.full(shape, values[vi.name], dtype=dt)
        elif dt in (np.float32, np.float64):
            out[vi.name] = rng.uniform(frange[0], frange[1], size=shape).astype(dt)
        elif dt == np.bool_:
            out[vi.name] = rng.integers(0, 2, size=shape).astype(dt)
        else:
            out[vi.name] = rng.integers(irange[0], irange[1] + 1, size=shape).astype(dt)
    return out


def make(src, dst, shape_flags, args, values):
    fusor = args.fusor
    with tempfile.TemporaryDirectory(prefix="fusor-qdq-") as tmp:
        pre = os.path.join(tmp, "pre.onnx")
        run([fusor, "optimize", src, "-o", pre, "--level", "basic", "--no-cache"] + shape_flags)
        model = onnx.load(pre)
        other = sorted({n.domain + "." + n.op_type for n in model.graph.node if n.domain not in ("", "ai.onnx")})
        if other:
            die("pre-processing left non-ONNX ops: " + ", ".join(other))
        qq.constants_to_initializers(model)
        op_types = set(args.op_types.split(",")) if args.op_types else qq.DEFAULT_OPS
        names = qq.tensors_to_calibrate(model, op_types)
        aug = qq.augment_for_calibration(model, names)
        aug_path = os.path.join(tmp, "calib.onnx")
        onnx.save(aug, aug_path)
        rng = np.random.default_rng(args.seed)
        lo = {t: np.inf for t in names}
        hi = {t: -np.inf for t in names}
        for k in range(args.samples):
            feeds = random_inputs(model, rng, args.range, args.int_range, values)
            flags = []
            for name, arr in feeds.items():
                p = os.path.join(tmp, "in_%d_%s.npy" % (k, len(flags)))
                np.save(p, arr)
                flags += ["--input", "%s=%s" % (name, p)]
            od = os.path.join(tmp, "out%d" % k)
            run([fusor, "run", aug_path, "--level", "disabled", "--no-cache", "--output-dir", od,
                 "--output-format", "npy"] + flags)
            for i, t in enumerate(names):
                lo[t] = min(lo[t], float(np.load(os.path.join(od, "out.calib_%d_ReduceMin.npy" % i))))
                hi[t] = max(hi[t], float(np.load(os.path.join(od, "out.calib_%d_ReduceMax.npy" % i))))
        ranges = {t: (lo[t], hi[t]) for t in names}
        qq.adjust_ranges(model, ranges, op_types)
        qq.quantize(model, ranges, op_types, args.reduce_range)
        onnx.checker.check_model(model)
        tmp_out = dst + ".tmp"
        onnx.save(model, tmp_out)
        os.replace(tmp_out, dst)
    ops = {}
    for n in model.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print("%s: %d nodes, %.1f MB (from %.1f MB): %s" % (dst, len(model.graph.node), os.path.getsize(dst) / 1e6,
                                                      os.path.getsize(src) / 1e6,
                                                      ", ".join("%s %d" % kv for kv in sorted(ops.items()))))


def pair(text, kind):
    a, b = text.split(",")
    return kind(a), kind(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--range", type=lambda s: pair(s, float), default=(-1.0, 1.0))
    ap.add_argument("--int-range", type=lambda s: pair(s, int), default=(0, 10))
    ap.add_argument("--value", action="append", default=[])
    ap.add_argument("--op-types")
    ap.add_argument("--fusor", default=os.path.join(REPO, "build", "bin", "fusor"))
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--reduce-range", action="store_true")
    args = ap.parse_args()
    if args.out and len(args.models) != 1:
        die("-o takes one model")
    if not os.access(args.fusor, os.X_OK):
        die("no fusor binary at %s (build it, or give --fusor)" % args.fusor)
    for m in args.models:
        name = os.path.splitext(os.path.basename(m))[0]
        src = m if m.endswith(".onnx") else os.path.join(models_dir(), m + ".onnx")
        if not os.path.exists(src):
            die("no model %s (scripts/make_test_models.py %s makes it)" % (src, name))
        dst = args.out or os.path.join(out_dir(args.reduce_range), name + ".onnx")
        if os.path.exists(dst) and not args.force:
            print("%s: present" % dst)
            continue
        shape_flags = []
        for d in args.dim:
            shape_flags += ["--dim", d]
        for s in args.shape:
            shape_flags += ["--shape", s]
        if not shape_flags:
            shape_flags = SHAPES.get(name, ["--dim", "N=1"])
        values = {}
        for v in (args.value or VALUES.get(name, [])):
            k, x = v.split("=", 1)
            values[k] = float(x)
        make(src, dst, shape_flags, args, values)


if __name__ == "__main__":
    main()
