// The registered "fast" MatMul, Gemm and Conv kernels: against the registry's "reference"
// kernels on random cases (constant and non-constant weights, every forced ISA), against ONNX's
// backend node test data, and falling back to the reference for non-float types.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/onnx/onnx_io.h"
#include "core/onnx/tensor_io.h"
#include "kernels/cpu_features.h"
#include "tests/kernels/gemm_test_util.h"
#include "tests/kernels/nn_harness.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

namespace fs = std::filesystem;
using testing_gemm::random_vec;
using testing_gemm::runnable_isas;

Tensor rand_tensor(const Shape& s, uint32_t seed) {
  return Tensor::from_vector<float>(s, random_vec(static_cast<size_t>(shape_numel(s)), seed));
}

// Runs op with `impl`; inputs flagged constant become initializers the kernel sees at creation.
Tensor run(const std::string& op, const std::vector<Tensor>& ins, const std::vector<bool>& constant,
           std::vector<Attribute> attrs, std::string_view impl) {
  OneNode one(op, static_cast<int>(ins.size()), 1, std::move(attrs));
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    Value& v = one.graph.value(one.node().inputs[i]);
    v.type = ValueType::tensor(ins[i].dtype(), ins[i].shape());
    if (i < constant.size() && constant[i]) v.constant = std::make_shared<Tensor>(ins[i]);
    ptrs.push_back(&ins[i]);
  }
  return run_kernel(KernelRegistry::global(), one.graph, one.node(), 17, ptrs, impl)[0];
}

::testing::AssertionResult close(const Tensor& got, const Tensor& want, double tol) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.as_double(i), w = want.as_double(i);
    if (!(std::fabs(g - w) <= tol * (1 + std::fabs(w))))
      return ::testing::AssertionFailure() << "element " << i << ": " << g << " vs " << w;
  }
  return ::testing::AssertionSuccess();
}

void compare_impls(const std::string& op, const std::vector<Tensor>& ins, std::vector<Attribute> attrs,
                   const std::string& what) {
  const Tensor want = run(op, ins, {}, attrs, "reference");
  for (Isa isa : runnable_isas()) {
    set_isa_env(isa_name(isa));
    for (bool weights_const : {false, true}) {
      std::vector<bool> constant(ins.size(), false);
      for (size_t i = 1; i < ins.size(); ++i) constant[i] = weights_const;
      const Tensor got = run(op, ins, constant, attrs, "fast");
      EXPECT_TRUE(close(got, want, 1e-4)) << what << " " << isa_name(isa) << (weights_const ? " const" : "");
    }
  }
  set_isa_env(nullptr);
}

TEST(FastKernels, MatMulMatchesReference) {
  compare_impls("MatMul", {rand_tensor({3, 7, 33}, 1), rand_tensor({33, 20}, 2)}, {}, "batched A, 2-D B");
  compare_impls("MatMul", {rand_tensor({2, 1, 5, 9}, 3), rand_tensor({3, 9, 4}, 4)}, {}, "broadcast batches");
  compare_impls("MatMul", {rand_tensor({17}, 5), rand_tensor({17, 40}, 6)}, {}, "1-D A");
  compare_impls("MatMul", {rand_tensor({6, 17}, 7), rand_tensor({17}, 8)}, {}, "1-D B");
  compare_impls("MatMul", {rand_tensor({1, 300}, 9), rand_tensor({300, 70}, 10)}, {}, "M=1");
}

TEST(FastKernels, GemmMatchesReference) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const int64_t M = 9, K = 31, N = 35;
      const Tensor a = rand_tensor(ta ? Shape{K, M} : Shape{M, K}, 11), b = rand_tensor(tb ? Shape{N, K} : Shape{K, N}, 12);
      std::vector<Attribute> attrs = {Attribute::make_int("transA", ta), Attribute::make_int("transB", tb),
                                      Attribute::make_float("alpha", 0.7f), Attribute::make_float("beta", -1.5f)};
      const std::string t = "transA=" + std::to_string(ta) + " transB=" + std::to_string(tb);
      compare_impls("Gemm", {a, b}, attrs, t + " no C");
      for (const Shape& cs : {Shape{N}, Shape{1, N}, Shape{M, 1}, Shape{M, N}, Shape{1}, Shape{}})
        compare_impls("Gemm", {a, b, rand_tensor(cs, 13)}, attrs, t + " C " + shape_str(cs));
    }
}

TEST(FastKernels, ConvMatchesReference) {
  using A = Attribute;
  compare_impls("Conv", {rand_tensor({2, 3, 9, 10}, 20), rand_tensor({8, 3, 3, 3}, 21), rand_tensor({8}, 22)},
                {A::make_ints("pads", {1, 0, 0, 1}), A::make_ints("strides", {2, 1})}, "3x3 asym pads");
  compare_impls("Conv", {rand_tensor({1, 8, 7, 7}, 23), rand_tensor({12, 8, 1, 1}, 24)}, {}, "pointwise");
  compare_impls("Conv", {rand_tensor({1, 6, 11, 9}, 25), rand_tensor({6, 1, 3, 3}, 26), rand_tensor({6}, 27)},
                {A::make_int("group", 6), A::make_ints("pads", {1, 1, 1, 1}), A::make_ints("strides", {2, 2})},
                "depthwise s2");
  compare_impls("Conv", {rand_tensor({1, 6, 8, 8}, 28), rand_tensor({4, 3, 3, 3}, 29)},
                {A::make_int("group", 2), A::make_ints("dilations", {2, 2}), A::make_string("auto_pad", "SAME_UPPER")},
                "groups dilation SAME_UPPER");
  compare_impls("Conv", {rand_tensor({2, 4, 20}, 30), rand_tensor({5, 4, 3}, 31)}, {A::make_ints("pads", {2, 1})}, "1-D");
  compare_impls("Conv", {rand_tensor({1, 2, 4, 4, 4}, 32), rand_tensor({3, 2, 2, 2, 2}, 33)}, {}, "3-D falls back");
}

TEST(FastKernels, NonFloatFallsBackToReference) {
  const Tensor a = Tensor::from_vector<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector<double>({3, 1}, {1, 1, 1});
  const Tensor y = run("MatMul", {a, b}, {false, true}, {}, "fast");
  ASSERT_EQ(y.dtype(), DataType::Double);
  EXPECT_EQ(y.as_double(0), 6.0);
  EXPECT_EQ(y.as_double(1), 15.0);
}

TEST(FastKernels, FastIsTheDefaultChoice) {
  for (const char* op : {"MatMul", "Gemm", "Conv"}) {
    const KernelRegistry::Entry* e = KernelRegistry::global().find(OpType::onnx(op), 17);
    ASSERT_TRUE(e) << op;
    if (!std::getenv("FUSOR_KERNELS")) {
      EXPECT_EQ(e->impl, "fast") << op;
    }
  }
}

// ONNX backend node tests of Conv / Gemm / MatMul through the fast kernels.
TEST(FastKernels, OnnxNodeTests) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(root)) GTEST_FAIL() << root << " is missing";
  int covered = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_conv", 0) && name.rfind("test_gemm", 0) && name.rfind("test_matmul", 0) &&
        name.rfind("test_basic_conv", 0))
      continue;
    std::unique_ptr<Model> model = load_model((e.path() / "model.onnx").string());
    const Graph& g = *model->graph;
    ASSERT_EQ(g.num_nodes(), 1u) << name;
    const Node& node = g.node(g.first());
    const std::string& op = node.op.name();
    if (!node.op.domain().empty() || (op != "Conv" && op != "Gemm" && op != "MatMul")) continue;
    std::vector<Tensor> feeds;
    std::vector<const Tensor*> inputs;
    int fed = 0;
    const fs::path set = e.path() / "test_data_set_0";
    feeds.reserve(node.inputs.size());
    for (ValueId v : node.inputs) {
      if (v == kNoValue) { inputs.push_back(nullptr); continue; }
      if (g.value(v).constant) { inputs.push_back(g.value(v).constant.get()); continue; }
      feeds.push_back(read_tensor_file((set / ("input_" + std::to_string(fed++) + ".pb")).string()));
      inputs.push_back(&feeds.back());
    }
    const Tensor want = read_tensor_file((set / "output_0.pb").string());
    for (Isa isa : runnable_isas()) {
      set_isa_env(isa_name(isa));
      const std::vector<Tensor> got = run_kernel(KernelRegistry::global(), g, node, model->opset(""), inputs, "fast");
      EXPECT_TRUE(close(got[0], want, 1e-4)) << name << " " << isa_name(isa);
    }
    set_isa_env(nullptr);
    ++covered;
  }
  EXPECT_GE(covered, 20);
}

}  // namespace
}  // namespace fusor::test
