#!/usr/bin/python3
"""What the Python layer costs. Not part of CI (shared machines: quote medians, rerun close calls).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_latency.py [--fusor build/bin/fusor]
        [--model ~/.cache/fusor/models/resnet18.onnx] [--threads 1] [--runs 30]

1. Per-call overhead: session.run on a tiny model (y = a + b over float[1, 4]), single-threaded,
   median and min of 20 batches of 2000 calls (wall and process CPU time per call). The C++ API's
   cost on the same model: build/bin/python_overhead_bench (bench/python_overhead_bench.cpp).
2. A real model: median/min latency of session.run (ORT_ENABLE_ALL, --threads) against
   `fusor bench --json` at the same level and threads, alternating twice.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from onnx import TensorProto, helper

import fusor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_add():
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in "aby"]
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "tiny_add", vi[:2], vi[2:])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def per_call():
    so = fusor.SessionOptions()
    so.intra_op_num_threads = 1
    so.use_cache = False
    sess = fusor.InferenceSession(tiny_add(), so)
    feed = {"a": np.ones((1, 4), np.float32), "b": np.full((1, 4), 2, np.float32)}
    for _ in range(2000):
        sess.run(None, feed)
    wall, cpu = [], []
    n = 2000
    for _ in range(20):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            sess.run(None, feed)
        wall.append((time.perf_counter() - t0) / n * 1e6)
        cpu.append((time.process_time() - c0) / n * 1e6)
    print("tiny Add, session.run from Python: median %.2f us (min %.2f) wall, median %.2f us CPU per call"
          % (statistics.median(wall), min(wall), statistics.median(cpu)))


def model_latency(fusor_bin, model, threads, runs):
    so = fusor.SessionOptions()
    so.intra_op_num_threads = threads
    so.add_free_dimension_override_by_name("N", 1)
    sess = fusor.InferenceSession(model, so)
    inp = sess.get_inputs()[0]
    x = np.random.default_rng(0).random([d if isinstance(d, int) else 1 for d in inp.shape], dtype=np.float32)
    py, cli = [], []
    for _ in range(2):
        for _ in range(3):
            sess.run(None, {inp.name: x})
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            sess.run(None, {inp.name: x})
            times.append((time.perf_counter() - t0) * 1e3)
        py.append((statistics.median(times), min(times)))
        r = subprocess.run([fusor_bin, "bench", model, "--json", "--level", "all", "--threads", str(threads),
                            "--runs", str(runs), "--warmup", "3", "--dim", "N=1"], capture_output=True, text=True,
                           check=True)
        j = json.loads(r.stdout[r.stdout.index("{"):])
        cli.append((j["median_ms"], j["min_ms"]))
    best = lambda xs: (min(m for m, _ in xs), min(m for _, m in xs))  # noqa: E731
    (pm, pn), (cm, cn) = best(py), best(cli)
    print("%s, %d thread(s): Python session.run median %.2f ms (min %.2f); fusor bench median %.2f ms (min %.2f); "
          "ratio %.3f" % (os.path.basename(model), threads, pm, pn, cm, cn, pm / cm))


def main(argv):
    fusor_bin = os.path.join(REPO, "build", "bin", "fusor")
    model = os.path.expanduser("~/.cache/fusor/models/resnet18.onnx")
    threads, runs = 1, 30
    i = 0
    while i < len(argv):
        a, v = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if v is None:
            print("python_latency: %s needs a value" % a, file=sys.stderr)
            return 2
        if a == "--fusor":
            fusor_bin = v
        elif a == "--model":
            model = v
        elif a == "--threads":
            threads = int(v)
        elif a == "--runs":
            runs = int(v)
        else:
            print("python_latency: unknown option " + a, file=sys.stderr)
            return 2
        i += 2
    per_call()
    model_latency(fusor_bin, model, threads, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
