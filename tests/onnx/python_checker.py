"""Round trip checked by Python's onnx: every libonnx-testdata model that passes onnx.checker is
loaded and saved by fusor (onnx_roundtrip_tool), then the saved model must pass
onnx.checker.check_model and match the original in opsets, inputs, outputs, initializers
(bit-exact, via numpy_helper) and nodes (with attribute values). A sample is also saved with
external data and checked through its path.

usage: python_checker.py TOOL [TESTDATA_DIR]
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        arr = numpy_helper.to_array(v)
        return ("tensor", arr.dtype.str, arr.shape, arr.tobytes() if arr.dtype != object else list(arr.flat))
    if isinstance(v, onnx.GraphProto):
        return ("graph", graph_signature(v))
    if isinstance(v, list) and v and isinstance(v[0], onnx.TensorProto):
        return [attr_value(helper.make_attribute("t", t)) for t in v]
    if isinstance(v, list) and v and isinstance(v[0], onnx.GraphProto):
        return [graph_signature(g) for g in v]
    if isinstance(v, float):
        return np.float32(v).tobytes()
    if isinstance(v, list) and v and isinstance(v[0], float):
        return np.array(v, dtype=np.float32).tobytes()
    return v


def init_signature(t):
    arr = numpy_helper.to_array(t)
    return (t.name, arr.dtype.str, arr.shape, arr.tobytes() if arr.dtype != object else list(arr.flat))


def graph_signature(g):
    nodes = [(n.op_type, n.name, "" if n.domain == "ai.onnx" else n.domain, list(n.input), list(n.output),
              [(a.name, attr_value(a)) for a in n.attribute]) for n in g.node]
    inits = sorted(init_signature(t) for t in g.initializer)
    return (nodes, inits, [i.name for i in g.input], [o.name for o in g.output])


def model_signature(m):
    return ([(o.domain, o.version) for o in m.opset_import], m.ir_version, graph_signature(m.graph))


def main():
    tool = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
    paths = sorted(glob.glob(os.path.join(root, "*", "*", "model.onnx")))
    valid = []
    for p in paths:
        try:
            onnx.checker.check_model(onnx.load(p))
            valid.append(p)
        except Exception:
            pass
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        outs = [os.path.join(tmp, "m%d.onnx" % i) for i in range(len(valid))]
        args = [tool]
        for p, o in zip(valid, outs):
            args += [p, o]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("tool: " + r.stdout + r.stderr)
        ok = 0
        for p, o in zip(valid, outs):
            try:
                saved = onnx.load(o)
                onnx.checker.check_model(saved)
                if model_signature(saved) != model_signature(onnx.load(p)):
                    raise RuntimeError("differs from the original")
                ok += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append("%s: %s" % (p, str(e).splitlines()[0] if str(e) else type(e).__name__))
        # External data: a sample of models with initializers, checked through their paths.
        sample = [p for p in valid if onnx.load(p).graph.initializer][:20]
        ext_dir = os.path.join(tmp, "ext")
        os.makedirs(ext_dir)
        ext_ok = 0
        for i, p in enumerate(sample):
            o = os.path.join(ext_dir, "e%d.onnx" % i)
            r = subprocess.run([tool, "--external", p, o], capture_output=True, text=True)
            try:
                if r.returncode != 0:
                    raise RuntimeError(r.stdout.strip())
                onnx.checker.check_model(o)
                if model_signature(onnx.load(o)) != model_signature(onnx.load(p)):
                    raise RuntimeError("differs from the original")
                ext_ok += 1
            except Exception as e:  # noqa: BLE001
                failures.append("external %s: %s" % (p, str(e).splitlines()[0] if str(e) else type(e).__name__))
    print("models: %d, checker-valid: %d, saved models passing onnx.checker and matching: %d, "
          "external-data sample: %d/%d" % (len(paths), len(valid), ok, ext_ok, len(sample)))
    for f in failures:
        print("FAIL", f)
    return 1 if failures or not valid else 0


if __name__ == "__main__":
    sys.exit(main())
