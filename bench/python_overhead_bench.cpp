// Per-call cost of fusor::Session::run on a tiny model (y = a + b over float[1, 4]): the C++
// baseline for the Python binding's session.run overhead (bench/python_latency.py measures the
// Python side on the same model). Single-threaded session, inputs borrowed, outputs dropped.
//   build/bin/python_overhead_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <vector>

#include "fusor/fusor.h"

namespace {

std::string tiny_add_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("tiny_add");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Add");
  n->set_name("add");
  n->add_input("a");
  n->add_input("b");
  n->add_output("y");
  for (const char* name : {"a", "b", "y"}) {
    onnx::ValueInfoProto* v = std::string(name) == "y" ? g->add_output() : g->add_input();
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  }
  return m.SerializeAsString();
}

void BM_SessionRunTinyAdd(benchmark::State& state) {
  fusor::SessionOptions opts;
  opts.threads = 1;
  opts.use_cache = false;
  fusor::Session s = fusor::Session::from_bytes(tiny_add_model(), opts);
  std::vector<float> a(4, 1.0f), b(4, 2.0f);
  std::vector<fusor::NamedTensor> feed = {
      {"a", fusor::HostTensor::borrow(fusor::ElementType::Float, {1, 4}, a.data(), a.size() * sizeof(float))},
      {"b", fusor::HostTensor::borrow(fusor::ElementType::Float, {1, 4}, b.data(), b.size() * sizeof(float))}};
  for (auto _ : state) {
    std::vector<fusor::HostTensor> out = s.run(feed);
    benchmark::DoNotOptimize(out[0].data());
  }
}
BENCHMARK(BM_SessionRunTinyAdd);

}  // namespace

BENCHMARK_MAIN();
