#!/usr/bin/python3
"""A graph-optimization script as ONNX Runtime users write it, run on fusor by changing only the
import line (`import onnxruntime as ort` -> `import fusor as ort`).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/ort_style_optimize.py \
        [MODEL.onnx [OPTIMIZED.onnx]]

Optimizes MODEL at ORT_ENABLE_ALL, saves the result through optimized_model_filepath, prints the
inputs, then opens the saved model with the onnx package and prints its node count and first
nodes next to the original's, and runs the session once on random data.
"""
import sys

import numpy as np
import onnx

import fusor as ort  # was: import onnxruntime as ort

model_path = sys.argv[1] if len(sys.argv) > 1 else "examples/models/squeezenet1_1.onnx"
optimized_path = sys.argv[2] if len(sys.argv) > 2 else "optimized.onnx"

sess_options = ort.SessionOptions()
sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess_options.optimized_model_filepath = optimized_path
session = ort.InferenceSession(model_path, sess_options, providers=["CPUExecutionProvider"])

for inp in session.get_inputs():
    print("input:", inp.name, inp.shape, inp.type)
for out in session.get_outputs():
    print("output:", out.name, out.shape, out.type)

original = onnx.load(model_path)
optimized = onnx.load(optimized_path)
print("original model nodes:", len(original.graph.node))
print("optimized model nodes:", len(optimized.graph.node))
print("first nodes of the optimized model:")
for node in optimized.graph.node[:8]:
    print("  %-24s %-20s %s -> %s" % (node.name, (node.domain + "." if node.domain else "") + node.op_type,
                                      list(node.input), list(node.output)))

dtypes = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}
feed = {}
for inp in session.get_inputs():
    shape = [d if isinstance(d, int) else 1 for d in inp.shape]
    feed[inp.name] = np.random.rand(*shape).astype(dtypes.get(inp.type, np.float32))
result = session.run(None, feed)
print("ran: output", session.get_outputs()[0].name, "shape", result[0].shape)
