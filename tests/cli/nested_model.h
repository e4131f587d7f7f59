// A model whose counts are known by construction, for the inspect/optimize key tests.
//
// top level (5 nodes):  Constant c; MatMul(X, W) -> m; Add(m, c) -> a; If(cond) -> y;
//                       com.example.Scale(y) -> z
// If.then_branch (3):   Constant k; If(cond) -> i [then: Identity(a) / else: Identity(a)]; Add(i, k)
// If.else_branch (1):   Neg(a)
// So: nodes 5, subgraph_nodes 3 + 1 + 1 + 1 = 6, constant_nodes 2, ops
//   {Add 2, Constant 2, If 2, Identity 2, MatMul 1, Neg 1, com.example.Scale 1},
// inputs X float [N,4] and cond bool [] (W is an initializer also listed as an input, so it is not
// a caller input), output z float [N,4], initializers: W float [4,4] (64 bytes) and
// B float [3] (12 bytes, unused): 2 tensors, 76 bytes.
#pragma once
#include "tests/cli/cli_harness.h"

namespace fusor::clitest {

inline onnx::ModelProto nested_model() {
  onnx::ModelProto m = new_model(13);
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", onnx::TensorProto::FLOAT, {"N", "4"});
  add_input(g, "cond", onnx::TensorProto::BOOL, {});
  add_input(g, "W", onnx::TensorProto::FLOAT, {"4", "4"});
  add_float_initializer(g, "W", {4, 4});
  add_float_initializer(g, "B", {3});
  add_constant(g, "c", 1.0f);
  add_node(g, "MatMul", {"X", "W"}, {"m"});
  add_node(g, "Add", {"m", "c"}, {"a"});
  auto* if_node = add_node(g, "If", {"cond"}, {"y"}, "outer_if");

  auto branch = [](const std::string& name) {
    onnx::GraphProto b;
    b.set_name(name);
    return b;
  };
  auto* then_attr = if_node->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto then_g = branch("then");
  add_constant(&then_g, "k", 2.0f);
  auto* inner = add_node(&then_g, "If", {"cond"}, {"i"}, "inner_if");
  {
    auto* t = inner->add_attribute();
    t->set_name("then_branch");
    t->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto it = branch("inner_then");
    add_node(&it, "Identity", {"a"}, {"it_out"});
    add_output(&it, "it_out", onnx::TensorProto::FLOAT, {"N", "4"});
    *t->mutable_g() = it;
    auto* e = inner->add_attribute();
    e->set_name("else_branch");
    e->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto ie = branch("inner_else");
    add_node(&ie, "Identity", {"a"}, {"ie_out"});
    add_output(&ie, "ie_out", onnx::TensorProto::FLOAT, {"N", "4"});
    *e->mutable_g() = ie;
  }
  add_node(&then_g, "Add", {"i", "k"}, {"then_out"});
  add_output(&then_g, "then_out", onnx::TensorProto::FLOAT, {"N", "4"});
  *then_attr->mutable_g() = then_g;

  auto* else_attr = if_node->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto else_g = branch("else");
  add_node(&else_g, "Neg", {"a"}, {"else_out"});
  add_output(&else_g, "else_out", onnx::TensorProto::FLOAT, {"N", "4"});
  *else_attr->mutable_g() = else_g;

  add_node(g, "Scale", {"y"}, {"z"}, "scale", "com.example");
  add_output(g, "z", onnx::TensorProto::FLOAT, {"N", "4"});
  return m;
}

}  // namespace fusor::clitest
