// The ONNX backend node tests for the elementwise, reduction and tensor kernel families.
//
// Every /usr/share/libonnx-testdata/data/node/test_* whose nodes all use ops these families
// register is covered (single-node tests and the multi-node "_expanded" ones): nodes run in graph
// order through a registry holding only these families, on each test_data_set_*'s inputs, and
// the graph outputs are compared with output_*.pb at rtol 1e-3, atol 1e-5 (exactly for ints,
// bools and strings). Prints the totals and every failure with its reason; fails when any covered
// test fails. Tests using another op are out of scope here (the conformance runner covers them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "core/onnx/onnx_io.h"
#include "core/onnx/tensor_io.h"
#include "kernels/common/half.h"
#include "kernels/register.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

namespace fs = std::filesystem;
const char* kNodeTestDir = "/usr/share/libonnx-testdata/data/node";

KernelRegistry& family_registry() {
  static KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    register_elementwise_kernels(*reg);
    register_reduction_kernels(*reg);
    register_tensor_kernels(*reg);
    return reg;
  }();
  return *r;
}

double element(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::Float16) return half_to_float(t.data<uint16_t>()[i]);
  if (t.dtype() == DataType::BFloat16) return bfloat16_to_float(t.data<uint16_t>()[i]);
  return t.as_double(i);
}

// "" when equal within tolerance, else the first difference.
std::string compare(const Tensor& got, const Tensor& want) {
  if (!got.defined()) return "output not produced";
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + " != expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + " != expected " + shape_str(want.shape());
  if (want.dtype() == DataType::String) {
    for (int64_t i = 0; i < want.numel(); ++i)
      if (got.string_data()[i] != want.string_data()[i])
        return "element " + std::to_string(i) + ": '" + got.string_data()[i] + "' != expected '" + want.string_data()[i] + "'";
    return "";
  }
  const bool exact = !dtype_is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = element(got, i), w = element(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    const bool ok = exact ? g == w : std::fabs(g - w) <= 1e-5 + 1e-3 * std::fabs(w);
    if (!ok) {
      std::ostringstream os;
      os << "element " << i << ": " << g << " != expected " << w;
      return os.str();
    }
  }
  return "";
}

// ONNX 1.12's test data stores bfloat16/float16 tensors as uint16 in some files while the graph
// declares the half type: read such a file as the declared type (same bytes).
Tensor as_declared(Tensor t, const ValueType& declared) {
  const DataType d = declared.elem;
  if (t.dtype() == DataType::UInt16 && (d == DataType::BFloat16 || d == DataType::Float16))
    return Tensor(d, t.shape(), t.buffer(), t.offset());
  return t;
}

// Tests whose expected outputs cannot be reproduced by any implementation of the node as
// written: data generated with attributes the node does not have. Reported, not hidden.
// (Training-mode Dropout draws numpy's stream for its seed, so its tests run.)
const std::map<std::string, std::string>& not_reproducible() {
  static const std::map<std::string, std::string> m = {
      // The expected values use epsilon=1e-2, which the node does not carry (the schema's
      // default is 1e-6): the data contradicts the model.
      {"test_adam_multiple", "expected data computed with an epsilon the node lacks"},
  };
  return m;
}

// Runs every node of the graph in order; returns "" on success, else the reason.
std::string run_node_test(const fs::path& dir, const Model& model) {
  const Graph& g = *model.graph;
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set";
  std::vector<ValueId> fed;
  for (ValueId v : g.inputs())
    if (!g.value(v).is_initializer()) fed.push_back(v);
  for (const fs::path& set : sets) {
    std::map<ValueId, Tensor> env;
    for (size_t i = 0; i < fed.size(); ++i) {
      fs::path f = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(f)) continue;  // an optional graph input left out
      env[fed[i]] = as_declared(read_tensor_file(f.string()), g.value(fed[i]).type);
    }
    for (NodeId nid : g.order()) {
      const Node& node = g.node(nid);
      std::vector<const Tensor*> inputs;
      for (ValueId v : node.inputs) {
        if (v == kNoValue) { inputs.push_back(nullptr); continue; }
        if (auto it = env.find(v); it != env.end()) inputs.push_back(&it->second);
        else if (g.value(v).constant) inputs.push_back(g.value(v).constant.get());
        else inputs.push_back(nullptr);  // an omitted optional graph input
      }
      std::vector<Tensor> outs = run_kernel(family_registry(), g, node, model.opset(""), inputs, "reference");
      for (size_t k = 0; k < node.outputs.size(); ++k)
        if (node.outputs[k] != kNoValue) env[node.outputs[k]] = outs[k];
    }
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const Tensor want = as_declared(read_tensor_file((set / ("output_" + std::to_string(j) + ".pb")).string()),
                                      g.value(g.outputs()[j]).type);
      auto it = env.find(g.outputs()[j]);
      if (it == env.end()) return "graph output " + std::to_string(j) + " not computed";
      const std::string diff = compare(it->second, want);
      if (!diff.empty()) return set.filename().string() + " output " + std::to_string(j) + ": " + diff;
    }
  }
  return "";
}

TEST(RefNodeTests, ElementwiseReductionTensorFamiliesMatchOnnxBackendData) {
  if (!fs::exists(kNodeTestDir)) GTEST_FAIL() << kNodeTestDir << " is missing";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeTestDir))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  const char* only = std::getenv("FUSOR_NODE_TEST_FILTER");  // substring, for debugging one test
  int covered = 0, passed = 0;
  std::vector<std::string> failures, skipped;
  for (const fs::path& dir : dirs) {
    if (only && dir.filename().string().find(only) == std::string::npos) continue;
    std::unique_ptr<Model> model;
    try {
      model = load_model((dir / "model.onnx").string());
    } catch (const Error&) {
      continue;  // models the importer rejects are the conformance runner's business
    }
    const Graph& g = *model->graph;
    bool all_ours = g.num_nodes() > 0;
    for (NodeId n : g.order()) all_ours = all_ours && family_registry().has(g.node(n).op);
    if (!all_ours) continue;
    bool tensors_only = true;
    for (ValueId v : g.inputs()) tensors_only = tensors_only && g.value(v).type.is_tensor();
    for (ValueId v : g.outputs()) tensors_only = tensors_only && g.value(v).type.is_tensor();
    const std::string name = dir.filename().string();
    if (!tensors_only) {
      skipped.push_back(name + ": sequence/optional values (kernels here take tensors only)");
      continue;
    }
    if (auto nr = not_reproducible().find(name); nr != not_reproducible().end()) {
      skipped.push_back(name + ": " + nr->second);
      continue;
    }
    ++covered;
    std::string why;
    try {
      why = run_node_test(dir, *model);
    } catch (const std::exception& e) {
      why = std::string("threw: ") + e.what();
    }
    if (why.empty()) ++passed;
    else failures.push_back(dir.filename().string() + ": " + why);
  }
  std::cout << "node tests for the elementwise/reduction/tensor families: " << passed << " / " << covered << " passed\n";
  for (const std::string& f : failures) std::cout << "  FAIL " << f << "\n";
  std::cout << "not run (" << skipped.size() << "):\n";
  for (const std::string& f : skipped) std::cout << "  SKIP " << f << "\n";
  if (!only) {
    EXPECT_GT(covered, 400);
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " covered node tests failed";
}

}  // namespace
}  // namespace fusor::test
