// A model that would run for days (a Loop of 10^12 iterations): what cancellation is tested on.
#pragma once
#include <onnx/onnx_pb.h>

#include "tests/cli/cli_harness.h"

namespace fusor::clitest {

// y = Loop(M = 10^12, cond = true) over a body that adds 1 to a float carried through: it would
// run for days.
inline onnx::ModelProto endless_loop() {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"1"});
  auto* trip = g->add_initializer();
  trip->set_name("M");
  trip->set_data_type(onnx::TensorProto::INT64);
  trip->add_int64_data(1000000000000LL);
  auto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  auto* loop = add_node(g, "Loop", {"M", "cond", "x"}, {"y"}, "forever");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  add_input(body, "i", onnx::TensorProto::INT64, {});
  add_input(body, "c_in", onnx::TensorProto::BOOL, {});
  add_input(body, "v_in", onnx::TensorProto::FLOAT, {"1"});
  add_node(body, "Identity", {"c_in"}, {"c_out"});
  add_constant(body, "one", 1.0f);
  add_node(body, "Add", {"v_in", "one"}, {"v_out"});
  add_output(body, "c_out", onnx::TensorProto::BOOL, {});
  add_output(body, "v_out", onnx::TensorProto::FLOAT, {"1"});
  add_output(g, "y", onnx::TensorProto::FLOAT, {"1"});
  return m;
}

}  // namespace fusor::clitest
