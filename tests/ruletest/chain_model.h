// A small test model: x float[2, 8] through a chain of unary ops ("Add" adds a constant 1.0),
// saved as ONNX (opset 17) at `path`.
#pragma once
#include <string>
#include <vector>

#include "core/onnx/onnx_io.h"

namespace fusor::test {

inline void save_chain_model(const std::string& path, const std::vector<std::string>& ops) {
  Model m;
  m.opsets = {{"", 17}};
  Graph& g = *m.graph;
  g.name = "chain";
  ValueId v = g.add_value("x", ValueType::tensor(DataType::Float, {2, 8}));
  g.add_input(v);
  ValueId one = g.add_initializer("one", Tensor::scalar<float>(1.0f));
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string name = i + 1 == ops.size() ? "y" : "v" + std::to_string(i);
    ValueId out = g.add_value(name, ValueType::tensor(DataType::Float, {2, 8}));
    std::vector<ValueId> in = {v};
    if (ops[i] == "Add") in.push_back(one);
    g.add_node(OpType::onnx(ops[i]), in, {out}, {}, name + "_node");
    v = out;
  }
  g.add_output(v);
  save_model(m, path);
}

}  // namespace fusor::test
