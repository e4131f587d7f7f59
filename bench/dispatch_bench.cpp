// Per-node dispatch cost of the executor: a chain of N tiny Adds (h = h + b over float[1, 16], b a
// graph input so no rewrite can fold the chain), run at level disabled. The counter ns_per_node
// is the run time divided by N; with N = 1000 the per-call cost (input checks, output copy) is
// under a nanosecond per node. The ONNX Runtime figure for the same model:
//   build/bin/dispatch_bench --write-model /tmp/add_chain.onnx 1000
//   /usr/bin/python3 bench/compare_ort.py --level disabled --threads 1,2 --dim N=1 /tmp/add_chain.onnx
// (divide both medians by 1000). Timings only through /work/tools/quietrun.
//   build/bin/dispatch_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fusor/fusor.h"

namespace {

constexpr int kWidth = 16;

std::string add_chain_model(int n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("add_chain");
  auto value = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(kWidth);
  };
  value(g->add_input(), "x");
  value(g->add_input(), "b");
  // std::string operands: add_input(const char*) trips a GCC 12 -Wrestrict false positive.
  const std::string bias = "b", last = "y";
  std::string cur = "x";
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto* node = g->add_node();
    node->set_op_type("Add");
    node->set_name("add" + std::to_string(i));
    node->add_input(cur);
    node->add_input(bias);
    cur = i + 1 == n ? last : "h" + std::to_string(i);
    node->add_output(cur);
  }
  value(g->add_output(), "y");
  return m.SerializeAsString();
}

void BM_AddChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  fusor::SessionOptions opts;
  opts.threads = static_cast<int>(state.range(1));
  opts.level = fusor::OptimizationLevel::Disabled;
  opts.use_cache = false;
  fusor::Session s = fusor::Session::from_bytes(add_chain_model(n), opts);
  std::vector<float> x(kWidth, 1.0f), b(kWidth, 0.5f);
  std::vector<fusor::NamedTensor> feed = {
      {"x", fusor::HostTensor::borrow(fusor::ElementType::Float, {1, kWidth}, x.data(), x.size() * sizeof(float))},
      {"b", fusor::HostTensor::borrow(fusor::ElementType::Float, {1, kWidth}, b.data(), b.size() * sizeof(float))}};
  for (auto _ : state) {
    std::vector<fusor::HostTensor> out = s.run(feed);
    benchmark::DoNotOptimize(out[0].data());
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AddChain)->ArgNames({"nodes", "threads"})->Args({1000, 1})->Args({1000, 2})->Args({100, 1});

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-model") == 0) {
    std::ofstream(argv[2], std::ios::binary) << add_chain_model(std::atoi(argv[3]));
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
