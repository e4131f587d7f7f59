// The ONNX backend node tests for the NN, RNN and misc kernel families, one kernel at a time.
//
// Every /usr/share/libonnx-testdata/data/node/test_* whose model is a single node of an op these
// families register is covered: the kernel is created through a registry holding only these
// families, run on each test_data_set_*'s inputs, and compared with the expected outputs at
// rtol 1e-3, atol 1e-5. The test prints the covered / passed totals and every failure with its
// reason, and fails when any covered test fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/onnx/onnx_io.h"
#include "core/onnx/tensor_io.h"
#include "kernels/register.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

namespace fs = std::filesystem;
const char* kNodeTestDir = "/usr/share/libonnx-testdata/data/node";

KernelRegistry& family_registry() {
  static KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    register_nn_kernels(*reg);
    register_rnn_kernels(*reg);
    register_misc_kernels(*reg);
    return reg;
  }();
  return *r;
}

// "" when equal within tolerance, else the first difference.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + " != expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + " != expected " + shape_str(want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.as_double(i), w = want.as_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= 1e-5 + 1e-3 * std::fabs(w))) {
      std::ostringstream os;
      os << "element " << i << ": " << g << " != expected " << w;
      return os.str();
    }
  }
  return "";
}

// Runs one node test directory; "" on success, else the reason.
std::string run_node_test(const fs::path& dir, const Model& model) {
  const Graph& g = *model.graph;
  const Node& node = g.node(g.first());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set";
  // Graph inputs that are not initializers take input_<i>.pb in order.
  std::vector<ValueId> fed;
  for (ValueId v : g.inputs())
    if (!g.value(v).is_initializer()) fed.push_back(v);
  for (const fs::path& set : sets) {
    std::vector<Tensor> feeds;
    for (size_t i = 0; i < fed.size(); ++i) feeds.push_back(read_tensor_file((set / ("input_" + std::to_string(i) + ".pb")).string()));
    std::vector<const Tensor*> inputs;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) { inputs.push_back(nullptr); continue; }
      auto it = std::find(fed.begin(), fed.end(), v);
      if (it != fed.end()) inputs.push_back(&feeds[it - fed.begin()]);
      else if (g.value(v).constant) inputs.push_back(g.value(v).constant.get());
      else return "input '" + g.value(v).name + "' is neither fed nor constant";
    }
    std::vector<Tensor> outs = run_kernel(family_registry(), g, node, model.opset(""), inputs, "reference");
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      auto slot = std::find(node.outputs.begin(), node.outputs.end(), g.outputs()[j]);
      if (slot == node.outputs.end()) return "graph output is not a node output";
      const Tensor want = read_tensor_file((set / ("output_" + std::to_string(j) + ".pb")).string());
      const std::string diff = compare(outs[slot - node.outputs.begin()], want);
      if (!diff.empty()) return set.filename().string() + " output " + std::to_string(j) + ": " + diff;
    }
  }
  return "";
}

TEST(NnNodeTests, FamiliesMatchOnnxBackendData) {
  if (!fs::exists(kNodeTestDir)) GTEST_FAIL() << kNodeTestDir << " is missing";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeTestDir))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int covered = 0, passed = 0;
  std::vector<std::string> failures;
  for (const fs::path& dir : dirs) {
    std::unique_ptr<Model> model;
    try {
      model = load_model((dir / "model.onnx").string());
    } catch (const Error&) {
      continue;  // models the importer rejects are the conformance runner's business
    }
    const Graph& g = *model->graph;
    if (g.num_nodes() != 1) continue;
    const Node& node = g.node(g.first());
    if (!family_registry().has(node.op)) continue;
    // Random generators' values are not comparable between runtimes (ONNX's own tests say so);
    // tests/kernels/random_ops_test.cpp checks their seeding and distributions, the conformance
    // runner their type, shape and range.
    static const std::set<std::string> kRandom = {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal",
                                                  "RandomNormalLike", "Multinomial"};
    if (node.op.domain().empty() && kRandom.count(std::string(node.op.name()))) continue;
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
  std::cout << "node tests for the NN/RNN/misc families: " << passed << " / " << covered << " passed\n";
  for (const std::string& f : failures) std::cout << "  FAIL " << f << "\n";
  EXPECT_GE(covered, 148);  // every single-node test of these families in the installed data
  EXPECT_TRUE(failures.empty()) << failures.size() << " covered node tests failed";
}

}  // namespace
}  // namespace fusor::test
