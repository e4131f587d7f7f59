#!/usr/bin/env python3
"""Writes a synthetic chain model of N nodes for the optimizer scaling benchmarks: unary and binary
float ops of a rank-1 tensor, in a fixed pseudo-random order, with a few no-ops (Identity, Add 0)
the basic rules remove. usage: /usr/bin/python3 gen_model.py N OUT.onnx"""
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

UNARY = ["Relu", "Sigmoid", "Neg", "Abs", "Tanh", "Exp", "Sin", "Cos", "Softsign", "Erf", "Identity"]
BINARY = ["Add", "Mul", "Sub"]


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(7)
    nodes, inits = [], []
    v = "x"
    for i in range(n):
        o = f"v{i}"
        if rnd.random() < 0.35:
            op = rnd.choice(BINARY)
            c = f"c{i}"
            inits.append(numpy_helper.from_array(np.array(rnd.choice([0.0, 2.0, 0.5, 3.0]), np.float32), c))
            nodes.append(helper.make_node(op, [v, c], [o], name=f"n{i}"))
        else:
            nodes.append(helper.make_node(rnd.choice(UNARY), [v], [o], name=f"n{i}"))
        v = o
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(v, TensorProto.FLOAT, [4])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out)


if __name__ == "__main__":
    main()
