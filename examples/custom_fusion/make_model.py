#!/usr/bin/python3
"""Writes the example's tiny model: three written-out hard sigmoids on one input.

  keras:  Clip(Add(Mul(x, 0.2), 0.5), 0, 1)          -> hard_sigmoid_written applies
  torch:  Clip(Add(0.5, Mul(1/6, x)), 0, 1)          -> applies too (Mul and Add commute)
  relu6:  Clip(Add(Mul(x, 0.25), 0.5), 0, 6)         -> a near miss: the upper bound is 6, not 1

Usage: make_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def scalar(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def main(out_path):
    inits = [scalar("k_keras", 0.2), scalar("k_torch", 1.0 / 6.0), scalar("k_quarter", 0.25),
             scalar("half", 0.5), scalar("zero", 0.0), scalar("one", 1.0), scalar("six", 6.0)]
    nodes = [
        helper.make_node("Mul", ["x", "k_keras"], ["keras_mul"], name="keras_mul"),
        helper.make_node("Add", ["keras_mul", "half"], ["keras_add"], name="keras_add"),
        helper.make_node("Clip", ["keras_add", "zero", "one"], ["keras"], name="keras_clip"),
        helper.make_node("Mul", ["k_torch", "x"], ["torch_mul"], name="torch_mul"),
        helper.make_node("Add", ["half", "torch_mul"], ["torch_add"], name="torch_add"),
        helper.make_node("Clip", ["torch_add", "zero", "one"], ["torch"], name="torch_clip"),
        helper.make_node("Mul", ["x", "k_quarter"], ["relu6_mul"], name="relu6_mul"),
        helper.make_node("Add", ["relu6_mul", "half"], ["relu6_add"], name="relu6_add"),
        helper.make_node("Clip", ["relu6_add", "zero", "six"], ["relu6"], name="relu6_clip"),
    ]
    shape = [1, 3, 8, 8]
    graph = helper.make_graph(
        nodes, "hard_sigmoids",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("keras", "torch", "relu6")],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="custom_fusion")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
