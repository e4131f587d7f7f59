#!/usr/bin/python3
"""fusor's Python run() against ONNX Runtime (onnxruntime-node, CPU) on the same inputs. Not part
of CI (it needs node and onnxruntime-node: /work/shared/tools/ort-peer).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_vs_ort.py [--level all] [--rtol 1e-4] [MODEL...]

MODEL: an .onnx path or a name from bench/compare_ort.py (resnet18, mobilenet_v2, transformer,
if_lstm); default: examples/models/squeezenet1_1.onnx and the four. For each model ORT runs once on
its seeded random inputs and dumps inputs and outputs (ort_peer.js --dump); the same inputs go
through fusor.InferenceSession.run (ORT's level names, the same free-dimension values), and every
output is compared with numpy.allclose(rtol, atol). Exit 1 when any output differs.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort  # noqa: E402  (model names, ORT's location)

import fusor  # noqa: E402

LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
          "layout": "ORT_ENABLE_LAYOUT", "all": "ORT_ENABLE_ALL"}


def sanitize(name):
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in name)


def compare(name, path, level, rtol, atol):
    dims = compare_ort.dims_for(name, {"dims": []})
    work = tempfile.mkdtemp(prefix="fusor-pyort-")
    cmd = ["node", os.path.join(compare_ort.PEER, "ort_peer.js"), path, "--no-save", "--level", level, "--threads", "1",
           "--repeat", "1", "--warmup", "0", "--dump", work] + dims
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ORT_PEER_DIR=compare_ort.ORT_DIR))
    if r.returncode != 0:
        print("%-16s ORT failed: %s" % (name, r.stderr.strip()[-500:]))
        return False
    so = fusor.SessionOptions()
    so.graph_optimization_level = getattr(fusor.GraphOptimizationLevel, LEVELS[level])
    so.intra_op_num_threads = 1
    for flag, value in zip(dims[::2], dims[1::2]):
        if flag == "--dim":
            k, v = value.split("=")
            so.add_free_dimension_override_by_name(k, int(v))
        else:
            k, v = value.split("=")
            so.add_shape_override(k, [int(x) for x in v.split("x")])
    sess = fusor.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(os.path.join(work, "in.%s.npy" % sanitize(i.name))) for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    got = sess.run(names, feed)
    ok = True
    lines = []
    for n, g in zip(names, got):
        want = np.load(os.path.join(work, "out.%s.npy" % sanitize(n)))
        if g.shape != want.shape:
            ok = False
            lines.append("    %s: shape %s, ORT %s" % (n, g.shape, want.shape))
            continue
        diff = np.abs(g.astype(np.float64) - want.astype(np.float64))
        rel = diff / np.maximum(np.abs(want.astype(np.float64)), 1e-12)
        close = np.allclose(g, want, rtol=rtol, atol=atol)
        ok = ok and close
        lines.append("    %s %s: max abs %.3g, max rel %.3g%s" % (n, list(g.shape), diff.max() if diff.size else 0,
                                                                rel.max() if rel.size else 0, "" if close else "  MISMATCH"))
    print("%-16s %s (level %s, rtol %g, atol %g)" % (name, "OK  " if ok else "FAIL", level, rtol, atol))
    for line in lines:
        print(line)
    return ok


def main(argv):
    level, rtol, atol, models = "all", 1e-4, 1e-5, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a in ("--level", "--rtol", "--atol"):
            if i + 1 >= len(argv):
                compare_ort.die(a + " needs a value")
            v = argv[i + 1]
            if a == "--level":
                if v not in LEVELS:
                    compare_ort.die("unknown level " + v)
                level = v
            elif a == "--rtol":
                rtol = float(v)
            else:
                atol = float(v)
            i += 2
            continue
        models.append(a)
        i += 1
    if not models:
        models = [os.path.join(compare_ort.REPO, "examples", "models", "squeezenet1_1.onnx")] + compare_ort.KNOWN
    compare_ort.ensure_ort()
    ok = True
    for m in models:
        name = os.path.splitext(os.path.basename(m))[0]
        ok = compare(name, compare_ort.resolve(m), level, rtol, atol) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
